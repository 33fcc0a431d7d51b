//! `strata get | put | delete | scan`.
//!
//! Keys and values on the command line are in escaped form (`\xNN` for any byte, `\\` for a
//! backslash; what `scan` prints), or hex with `--hex`, which also switches the output to hex.

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use strata::{WriteBatch, WriteOptions};
use strata_tools::{scan as scan_range, ScanOptions};

use super::{io_error, open_db, parse_bytes, show, CommandResult, RangeArgs, ReadMode, NEGATIVE};

/// Print the value of KEY (escaped, hex, or raw bytes); exit 1 if the key is absent.
#[derive(Args)]
pub struct GetArgs {
    /// The database directory.
    db: PathBuf,
    /// The key (escaped form, or hex with --hex).
    key: String,
    /// Read the key as hex and print the value as hex.
    #[arg(long)]
    hex: bool,
    /// Write the value's bytes exactly as stored, with no newline.
    #[arg(long, conflicts_with = "hex")]
    raw: bool,
    #[command(flatten)]
    mode: ReadMode,
}

pub fn get(args: GetArgs) -> CommandResult {
    let key = parse_bytes(&args.key, args.hex)?;
    let db = args.mode.open(&args.db)?;
    let Some(value) = db.get(&key)? else {
        eprintln!("strata: '{}' not found", show(args.hex).bytes(&key));
        return Ok(ExitCode::from(NEGATIVE));
    };
    let mut out = std::io::stdout().lock();
    let written = if args.raw {
        out.write_all(&value)
    } else {
        writeln!(out, "{}", show(args.hex).bytes(&value))
    };
    written
        .and_then(|()| out.flush())
        .map_err(io_error("writing the value"))?;
    Ok(ExitCode::SUCCESS)
}

/// Set KEY to VALUE; the database is created if missing.
#[derive(Args)]
pub struct PutArgs {
    /// The database directory.
    db: PathBuf,
    /// The key (escaped form, or hex with --hex).
    key: String,
    /// The value (escaped form, or hex with --hex).
    value: String,
    /// Read the key and value as hex.
    #[arg(long)]
    hex: bool,
    /// Sync the log before returning (survives power loss).
    #[arg(long)]
    sync: bool,
}

pub fn put(args: PutArgs) -> CommandResult {
    let key = parse_bytes(&args.key, args.hex)?;
    let value = parse_bytes(&args.value, args.hex)?;
    let db = open_db(&args.db, true, None)?;
    db.put_opt(&WriteOptions { sync: args.sync }, &key, &value)?;
    Ok(ExitCode::SUCCESS)
}

/// Remove each KEY (absent keys are not an error), all in one atomic batch.
#[derive(Args)]
pub struct DeleteArgs {
    /// The database directory.
    db: PathBuf,
    /// The keys (escaped form, or hex with --hex).
    #[arg(required = true)]
    keys: Vec<String>,
    /// Read the keys as hex.
    #[arg(long)]
    hex: bool,
    /// Sync the log before returning (survives power loss).
    #[arg(long)]
    sync: bool,
}

pub fn delete(args: DeleteArgs) -> CommandResult {
    let mut batch = WriteBatch::new();
    for key in &args.keys {
        batch.delete(&parse_bytes(key, args.hex)?);
    }
    let db = open_db(&args.db, false, None)?;
    db.write_opt(&WriteOptions { sync: args.sync }, &batch)?;
    Ok(ExitCode::SUCCESS)
}

/// Print the pairs of a key range in order, one `key<TAB>value` a line (escaped, so tabs and
/// newlines inside keys and values show as \t and \n).
#[derive(Args)]
pub struct ScanArgs {
    /// The database directory.
    db: PathBuf,
    #[command(flatten)]
    range: RangeArgs,
    /// From the last key down.
    #[arg(long)]
    reverse: bool,
    /// Print at most this many pairs.
    #[arg(long)]
    limit: Option<u64>,
    /// Print keys only.
    #[arg(long)]
    keys_only: bool,
    /// Read range keys as hex and print keys and values as hex.
    #[arg(long)]
    hex: bool,
    #[command(flatten)]
    mode: ReadMode,
}

pub fn scan(args: ScanArgs) -> CommandResult {
    let options = ScanOptions {
        range: args.range.parse(|t| parse_bytes(t, args.hex))?,
        reverse: args.reverse,
        limit: args.limit,
        fill_cache: false,
    };
    let db = args.mode.open(&args.db)?;
    let show = show(args.hex);
    let mut out = BufWriter::new(std::io::stdout().lock());
    let write_error = io_error("writing the scan");
    scan_range(&db, &options, |key, value| {
        let line = if args.keys_only {
            writeln!(out, "{}", show.bytes(key))
        } else {
            writeln!(out, "{}\t{}", show.bytes(key), show.bytes(value))
        };
        line.map_err(&write_error)
    })?;
    out.flush().map_err(&write_error)?;
    Ok(ExitCode::SUCCESS)
}
