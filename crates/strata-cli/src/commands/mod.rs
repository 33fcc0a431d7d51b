//! The inspection and maintenance commands: `dump`, `check`, `load`, `export`, `get`, `put`,
//! `delete`, `scan`, `stats`, `compact`, `checkpoint`, `repair`, `destroy`, `stress`. Each
//! parses its flags, calls `strata_tools` (or the `DB` API) and prints; no storage logic lives
//! here. The commands that only read (`get`, `scan`, `export`, `stats`, `checkpoint`) take
//! `--read-only`: they then open the database beside the process that may hold it.
//!
//! Exit codes: 0 success; 1 a negative answer (a key not found, problems found by `check` or
//! `dump`); 2 an error (bad arguments, a database that cannot be opened, I/O failure).

mod admin;
mod check;
mod dump;
mod kv;
mod stress;
mod transfer;

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use strata::{Options, ValueSeparation, DB};
use strata_tools::{from_hex, unescape, with_recorded_extensions, KeyRange, Show};

/// Exit code of a negative answer.
const NEGATIVE: u8 = 1;
/// Exit code of an error.
const ERROR: u8 = 2;

/// The tool subcommands, flattened into the `strata` command.
#[derive(Subcommand)]
pub enum ToolCommand {
    /// Print every record of a .log, .ldb/.sst, MANIFEST-*, CURRENT or .vlog file.
    Dump(dump::DumpArgs),
    /// Verify every checksum and manifest invariant of a database (or one value file); exit 1
    /// if anything is wrong.
    Check(check::CheckArgs),
    /// Bulk-load key/value pairs from JSON object or JSON Lines files.
    Load(transfer::LoadArgs),
    /// Write key/value pairs as JSON Lines (the form `load` reads).
    Export(transfer::ExportArgs),
    /// Print the value of a key; exit 1 if it is absent.
    Get(kv::GetArgs),
    /// Set a key to a value (creates the database if missing).
    Put(kv::PutArgs),
    /// Remove keys.
    Delete(kv::DeleteArgs),
    /// Print the pairs of a key range, one `key<TAB>value` a line.
    Scan(kv::ScanArgs),
    /// Print the database's properties (files per level, compaction stats, tables, memory).
    Stats(admin::StatsArgs),
    /// Compact a key range (default: everything) down the levels.
    Compact(admin::CompactArgs),
    /// Copy the database as it is now into a new directory, while it may be written.
    Checkpoint(admin::CheckpointArgs),
    /// Rebuild a database that cannot be opened from whatever can still be read.
    Repair(admin::RepairArgs),
    /// Delete a database and all its files (asks first unless --yes).
    Destroy(admin::DestroyArgs),
    /// Crash test: run a workload recording what was acknowledged, verifying the database
    /// against that record first; exit 1 on any lost write, hole or value never written.
    Stress(stress::StressArgs),
}

/// Runs one tool command and reports its outcome as an exit code (errors on stderr).
pub fn run(command: ToolCommand) -> ExitCode {
    let result = match command {
        ToolCommand::Dump(args) => dump::run(args),
        ToolCommand::Check(args) => check::run(args),
        ToolCommand::Load(args) => transfer::load(args),
        ToolCommand::Export(args) => transfer::export(args),
        ToolCommand::Get(args) => kv::get(args),
        ToolCommand::Put(args) => kv::put(args),
        ToolCommand::Delete(args) => kv::delete(args),
        ToolCommand::Scan(args) => kv::scan(args),
        ToolCommand::Stats(args) => admin::stats(args),
        ToolCommand::Compact(args) => admin::compact(args),
        ToolCommand::Checkpoint(args) => admin::checkpoint(args),
        ToolCommand::Repair(args) => admin::repair(args),
        ToolCommand::Destroy(args) => admin::destroy(args),
        ToolCommand::Stress(args) => stress::run(args),
    };
    match result {
        Ok(code) => code,
        // Output cut short by a closed pipe (`strata scan db | head`) is not a failure.
        Err(strata::Error::Io { source, .. })
            if source.kind() == std::io::ErrorKind::BrokenPipe =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("strata: {e}");
            ExitCode::from(ERROR)
        }
    }
}

type CommandResult = strata::Result<ExitCode>;

/// How a command that only reads opens the database.
#[derive(Args)]
pub struct ReadMode {
    /// Open the database read-only: no LOCK taken and nothing written, so it works while
    /// another process (Strata or LevelDB) has the database open and writes to it, and on a
    /// read-only directory. Shows the state at open: the tables and the live logs.
    #[arg(long)]
    read_only: bool,
}

impl ReadMode {
    /// Opens the database in `path` with default options and the format extensions it
    /// records, read-only if asked.
    fn open(&self, path: &Path) -> strata::Result<DB> {
        if self.read_only {
            DB::open_read_only(path, with_recorded_extensions(path, Options::default()))
        } else {
            open_db(path, false, None)
        }
    }
}

/// The key range `scan` and `export` take.
#[derive(Args)]
pub struct RangeArgs {
    /// First key (inclusive).
    #[arg(long)]
    start: Option<String>,
    /// Key to stop before (exclusive).
    #[arg(long)]
    end: Option<String>,
    /// Only keys beginning with this prefix.
    #[arg(long)]
    prefix: Option<String>,
}

impl RangeArgs {
    /// The range, each given key turned into bytes by `parse`.
    fn parse(&self, parse: impl Fn(&str) -> strata::Result<Vec<u8>>) -> strata::Result<KeyRange> {
        let key = |text: &Option<String>| text.as_deref().map(&parse).transpose();
        Ok(KeyRange {
            start: key(&self.start)?,
            end: key(&self.end)?,
            prefix: key(&self.prefix)?,
        })
    }
}

/// Opens the database in `path` with default options (LevelDB's), optionally creating it,
/// with the format extensions it records turned on (so a database with range deletes,
/// expiring keys or value files opens, and one without stays LevelDB's format), and with
/// values of `value_separation` bytes or more kept in value files when given (which records
/// that extension).
fn open_db(path: &Path, create: bool, value_separation: Option<usize>) -> strata::Result<DB> {
    let options = Options {
        create_if_missing: create,
        value_separation: value_separation.map(ValueSeparation::new),
        ..Options::default()
    };
    DB::open(path, with_recorded_extensions(path, options))
}

/// A key or value from the command line: escaped form (`\xNN` for any byte), or hex.
fn parse_bytes(text: &str, hex: bool) -> strata::Result<Vec<u8>> {
    if hex {
        from_hex(text)
    } else {
        unescape(text)
    }
}

fn show(hex: bool) -> Show {
    if hex {
        Show::Hex
    } else {
        Show::Escaped
    }
}

fn io_error(what: &str) -> impl Fn(std::io::Error) -> strata::Error + '_ {
    move |e| strata::Error::Io {
        context: what.to_owned(),
        source: std::sync::Arc::new(e),
    }
}

/// A progress bar on stderr counting `total` bytes (a spinner when unknown); hidden when
/// stderr is not a terminal.
fn progress_bar(total: Option<u64>) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    match total {
        Some(total) => {
            let bar = ProgressBar::new(total);
            if let Ok(style) = ProgressStyle::with_template(
                "{bar:30} {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} eta {eta} {msg}",
            ) {
                bar.set_style(style);
            }
            bar
        }
        None => ProgressBar::new_spinner(),
    }
}
