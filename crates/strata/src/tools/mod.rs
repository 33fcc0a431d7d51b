//! Inspection tools that read a database's files below the public API (feature `tools`, off
//! by default): what the `strata` command-line tool and the `strata-tools` crate build on.
//! Everything here works on LevelDB-written directories as well as Strata's, since they share
//! one format. The tools that need only the public API (load, scan, export, stress) live in
//! `crates/strata-tools`.
//!
//! - [`dump_file`]: every record of a log, manifest, table, `CURRENT` or value file, as
//!   readable lines or JSON Lines ([`DumpOptions`]).
//! - [`check_db`]: verifies every checksum and invariant of a database directory, value files
//!   and the pointers into them included ([`CheckReport`]); [`check_value_file`]: one value
//!   file.
//! - [`detect_file_kind`]: what a file of a database directory is, by name or contents.
//! - [`with_recorded_extensions`]: the options that open a database with the format
//!   extensions it records, read from its manifest.
//! - [`Show`], [`Shown`]: how keys and values are shown to people (escaped ASCII or hex).

mod check;
mod dump;
mod kind;
mod recorded;
mod records;
mod table_walk;
#[cfg(test)]
mod test_db;
mod text;
mod value_walk;

pub use check::{check_db, check_value_file, CheckReport, Problem};
pub use dump::{dump_file, DumpFormat, DumpOptions, DumpSummary};
pub use kind::{detect_file_kind, FileKind};
pub use recorded::with_recorded_extensions;
pub use text::{Show, Shown};
