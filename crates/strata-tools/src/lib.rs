//! The maintenance tools of Strata: the library side of the `strata` command-line tool (the
//! binary only parses flags and prints). They work on LevelDB-written directories as well as
//! Strata's, since the two share one format.
//!
//! Built on the engine's public API:
//! - [`load_json`]: key/value pairs from a JSON object or JSON Lines, in write batches.
//! - [`scan`], [`export_json`], [`properties`]: walking a key range ([`KeyRange`]) of an open
//!   database, writing it as JSON Lines that `load_json` reads back exactly, and its properties.
//! - [`StressSession`], [`verify_stress_db`]: a crash test that runs a workload against a real
//!   directory, recording what was acknowledged, and verifies after every (killed) run that the
//!   database kept it all, with no hole and nothing never written.
//! - [`Encoding`], [`unescape`], [`from_hex`], [`to_hex`]: how keys and values are read from
//!   people and written in JSON.
//!
//! Re-exported from the engine's `tools` feature, which reads files below the public API:
//! [`dump_file`], [`check_db`], [`check_value_file`], [`detect_file_kind`],
//! [`with_recorded_extensions`] (the options that open a database with the format extensions
//! it records) and [`Show`], how bytes are shown.

mod load;
mod scan;
mod stress;
mod text;

pub use load::{load_json, InputFormat, LoadOptions, LoadSummary};
pub use scan::{
    export_json, properties, scan, ExportOptions, ExportSummary, KeyRange, ScanOptions,
};
pub use strata::tools::{
    check_db, check_value_file, detect_file_kind, dump_file, with_recorded_extensions, CheckReport,
    DumpFormat, DumpOptions, DumpSummary, FileKind, Problem, Show, Shown,
};
pub use stress::{
    journal_path, verify_stress_db, CrashModel, KeyState, RunSummary, StressOptions, StressSession,
    ThreadVerdict, VerifyReport, Violation, ViolationKind, DEFAULT_KEYS_PER_THREAD,
    DEFAULT_VALUE_SIZE,
};
pub use text::{from_hex, to_hex, unescape, Encoding};
