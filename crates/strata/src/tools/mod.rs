//! Inspection and maintenance tools: the library side of the `strata` command-line tool (the
//! binary only parses flags and prints). Everything here works on LevelDB-written directories
//! as well as Strata's, since they share one format.
//!
//! - [`dump_file`]: every record of a log, manifest, table or `CURRENT` file, as readable
//!   lines or JSON Lines ([`DumpOptions`]).
//! - [`check_db`]: verifies every checksum and invariant of a database directory
//!   ([`CheckReport`]).
//! - [`load_json`]: key/value pairs from a JSON object or JSON Lines, in write batches.
//! - [`scan`], [`export_json`], [`properties`]: walking a key range ([`KeyRange`]) of an open
//!   database, writing it as JSON Lines that `load_json` reads back exactly, and its properties.
//! - [`StressSession`], [`verify_stress_db`]: a crash test that runs a workload against a real
//!   directory, recording what was acknowledged, and verifies after every (killed) run that the
//!   database kept it all, with no hole and nothing never written.
//! - [`Show`], [`Encoding`], [`unescape`], [`from_hex`], [`to_hex`]: how keys and values are
//!   shown to people and written in JSON.

mod check;
mod dump;
mod kind;
mod load;
mod records;
mod scan;
mod stress;
mod table_walk;
#[cfg(test)]
mod test_db;
mod text;

pub use check::{check_db, CheckReport, Problem};
pub use dump::{dump_file, DumpFormat, DumpOptions, DumpSummary};
pub use kind::{detect_file_kind, FileKind};
pub use load::{load_json, InputFormat, LoadOptions, LoadSummary};
pub use scan::{
    export_json, properties, scan, ExportOptions, ExportSummary, KeyRange, ScanOptions,
};
pub use stress::{
    journal_path, verify_stress_db, CrashModel, KeyState, RunSummary, StressOptions, StressSession,
    ThreadVerdict, VerifyReport, Violation, ViolationKind, DEFAULT_KEYS_PER_THREAD,
    DEFAULT_VALUE_SIZE,
};
pub use text::{from_hex, to_hex, unescape, Encoding, Show, Shown};
