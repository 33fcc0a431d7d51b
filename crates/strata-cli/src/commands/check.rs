//! `strata check DB`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use strata::Options;
use strata_tools::check_db;

use super::{CommandResult, NEGATIVE};

/// Verify a database without opening it: CURRENT, every manifest record and the invariants of
/// the version it describes (tables exist with their recorded sizes and key ranges, levels >= 1
/// do not overlap), every block of every live table (checksums, key order, index, filters) and
/// every record of every live log. Prints a summary and each problem with its file and offset;
/// exits 1 if there is any.
#[derive(Args)]
pub struct CheckArgs {
    /// The database directory.
    db: PathBuf,
}

pub fn run(args: CheckArgs) -> CommandResult {
    let report = check_db(&args.db, &Options::default())?;
    println!("{report}");
    Ok(if report.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(NEGATIVE)
    })
}
