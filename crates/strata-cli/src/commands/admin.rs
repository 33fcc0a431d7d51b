//! `strata stats | compact | checkpoint | repair | destroy`.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Args;
use strata::Options;
use strata_tools::{properties, unescape};

use super::{open_db, CommandResult, ReadMode, NEGATIVE};

/// Print every property of a database: files at each level, the compaction stats table, the
/// tables of each level and the approximate memory in use.
#[derive(Args)]
pub struct StatsArgs {
    /// The database directory.
    db: PathBuf,
    /// Print only this property (e.g. leveldb.num-files-at-level0); exit 1 if unknown.
    #[arg(long)]
    property: Option<String>,
    #[command(flatten)]
    mode: ReadMode,
}

pub fn stats(args: StatsArgs) -> CommandResult {
    let db = args.mode.open(&args.db)?;
    if let Some(name) = &args.property {
        return Ok(match db.property(name) {
            Some(value) => {
                println!("{}", value.trim_end());
                ExitCode::SUCCESS
            }
            None => {
                eprintln!("strata: unknown property {name:?}");
                ExitCode::from(NEGATIVE)
            }
        });
    }
    for (name, value) in properties(&db) {
        let value = value.trim_end();
        if value.contains('\n') {
            println!("{name}:\n{value}");
        } else {
            println!("{name}: {value}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Compact the keys in [--start, --end] (default: all) down to the deepest level that holds
/// data, dropping overwritten and deleted entries. Range keys are given escaped.
#[derive(Args)]
pub struct CompactArgs {
    /// The database directory.
    db: PathBuf,
    /// First key of the range (inclusive).
    #[arg(long)]
    start: Option<String>,
    /// Last key of the range (inclusive).
    #[arg(long)]
    end: Option<String>,
}

pub fn compact(args: CompactArgs) -> CommandResult {
    let start = args.start.as_deref().map(unescape).transpose()?;
    let end = args.end.as_deref().map(unescape).transpose()?;
    let db = open_db(&args.db, false, None)?;
    let began = Instant::now();
    db.compact_range(start.as_deref(), end.as_deref())?;
    let files: Vec<String> = properties(&db)
        .into_iter()
        .filter(|(name, _)| name.starts_with("leveldb.num-files-at-level"))
        .map(|(_, count)| count)
        .collect();
    println!(
        "compacted in {:.3} s; files per level: {}",
        began.elapsed().as_secs_f64(),
        files.join(" ")
    );
    Ok(ExitCode::SUCCESS)
}

/// Copy the database into DIR (which must not exist) as it is at this moment: hard links to
/// its tables (copies across file systems), a fresh manifest and its logs so far, all synced.
/// Strata and LevelDB open the copy with exactly that moment's data; a crash during the
/// command leaves DIR absent or complete. With --read-only, the database may be open in
/// another process, writing: the copy holds what a read-only open sees.
#[derive(Args)]
pub struct CheckpointArgs {
    /// The database directory.
    db: PathBuf,
    /// Where the copy goes (a directory that does not exist yet).
    dir: PathBuf,
    #[command(flatten)]
    mode: ReadMode,
}

pub fn checkpoint(args: CheckpointArgs) -> CommandResult {
    let db = args.mode.open(&args.db)?;
    let began = Instant::now();
    db.checkpoint(&args.dir)?;
    let tables: usize = properties(&db)
        .into_iter()
        .filter(|(name, _)| name.starts_with("leveldb.num-files-at-level"))
        .filter_map(|(_, count)| count.parse::<usize>().ok())
        .sum();
    println!(
        "checkpoint of {} in {} ({tables} tables) in {:.3} s",
        args.db.display(),
        args.dir.display(),
        began.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

/// Rebuild the manifest of a database that cannot be opened, from every table and log that
/// can still be read. Data in damaged parts is lost; the database's LOG file says what.
#[derive(Args)]
pub struct RepairArgs {
    /// The database directory.
    db: PathBuf,
}

pub fn repair(args: RepairArgs) -> CommandResult {
    strata::repair(&args.db, &Options::default())?;
    println!(
        "repaired {}; see {} for what was recovered",
        args.db.display(),
        args.db.join("LOG").display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Delete a database: every file of it, and the directory if that leaves it empty. Asks for
/// confirmation on the terminal unless --yes; without a terminal, --yes is required.
#[derive(Args)]
pub struct DestroyArgs {
    /// The database directory.
    db: PathBuf,
    /// Do not ask.
    #[arg(long, short)]
    yes: bool,
}

pub fn destroy(args: DestroyArgs) -> CommandResult {
    if !args.db.is_dir() {
        return Err(strata::Error::InvalidArgument(format!(
            "{} is not a directory",
            args.db.display()
        )));
    }
    if !args.yes {
        let stdin = std::io::stdin();
        if !stdin.is_terminal() {
            return Err(strata::Error::InvalidArgument(
                "refusing to destroy without confirmation: standard input is not a terminal \
                 (pass --yes)"
                    .to_owned(),
            ));
        }
        eprint!(
            "Delete the database in {} and all its files? [y/N] ",
            args.db.display()
        );
        let _ = std::io::stderr().flush();
        let mut answer = String::new();
        // An unreadable answer is a no.
        let _ = stdin.lock().read_line(&mut answer);
        if !matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes") {
            eprintln!("strata: not destroyed");
            return Ok(ExitCode::from(NEGATIVE));
        }
    }
    strata::destroy(&args.db, &Options::default())?;
    if args.db.exists() {
        println!(
            "destroyed the database in {}; the directory stays: it holds other files (such as \
             lost/, where repair keeps what it set aside)",
            args.db.display()
        );
    } else {
        println!("destroyed {}", args.db.display());
    }
    Ok(ExitCode::SUCCESS)
}
