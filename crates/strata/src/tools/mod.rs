//! Inspection and maintenance tools: the library side of the `strata` command-line tool (the
//! binary only parses flags and prints). Everything here works on LevelDB-written directories
//! as well as Strata's, since they share one format.
//!
//! - [`dump_file`]: every record of a log, manifest, table or `CURRENT` file, as readable
//!   lines or JSON Lines ([`DumpOptions`]).
//! - [`check_db`]: verifies every checksum and invariant of a database directory
//!   ([`CheckReport`]).
//! - [`Show`], [`Encoding`], [`unescape`], [`from_hex`], [`to_hex`]: how keys and values are
//!   shown to people and written in JSON.

mod check;
mod dump;
mod kind;
mod records;
mod table_walk;
#[cfg(test)]
mod test_db;
mod text;

pub use check::{check_db, CheckReport, Problem};
pub use dump::{dump_file, DumpFormat, DumpOptions, DumpSummary};
pub use kind::{detect_file_kind, FileKind};
pub use text::{from_hex, to_hex, unescape, Encoding, Show, Shown};
