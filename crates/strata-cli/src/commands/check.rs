//! `strata check DB`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use strata::Options;
use strata_tools::{check_db, check_value_file, detect_file_kind, FileKind};

use super::{CommandResult, NEGATIVE};

/// Verify a database without opening it: CURRENT, every manifest record and the invariants of
/// the version it describes (tables exist with their recorded sizes and key ranges, levels >= 1
/// do not overlap), every block of every live table (checksums, key order, index, filters) and
/// every record of every live log; with value files (NNNNNN.vlog), every record of each and
/// every value pointer of the live tables and logs against the record it names, and the
/// value files' bytes against those the pointers name. Given a value file instead of a
/// directory, checks its records alone. Prints a summary and each problem with its file and
/// offset; exits 1 if there is any.
#[derive(Args)]
pub struct CheckArgs {
    /// The database directory, or one value file.
    db: PathBuf,
}

pub fn run(args: CheckArgs) -> CommandResult {
    let options = Options::default();
    let report = if args.db.is_file() {
        match detect_file_kind(&*options.env, &args.db)? {
            FileKind::ValueFile => check_value_file(&args.db, &options)?,
            kind => {
                return Err(strata::Error::InvalidArgument(format!(
                    "{} is a {kind} file: check takes a database directory or a value file \
                     (strata dump reads any file)",
                    args.db.display()
                )))
            }
        }
    } else {
        check_db(&args.db, &options)?
    };
    println!("{report}");
    Ok(if report.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(NEGATIVE)
    })
}
