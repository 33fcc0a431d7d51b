//! `strata load DB FILE...` and `strata export DB`.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Args;
use strata::WriteOptions;
use strata_tools::{
    export_json, load_json, unescape, Encoding, ExportOptions, InputFormat, LoadOptions,
};

use super::{io_error, open_db, progress_bar, CommandResult, RangeArgs, ReadMode};

fn parse_encoding(text: &str) -> Result<Encoding, String> {
    text.parse().map_err(|e: strata::Error| e.to_string())
}

fn parse_format(text: &str) -> Result<InputFormat, String> {
    text.parse().map_err(|e: strata::Error| e.to_string())
}

/// Bulk-load key/value pairs into a database (created if missing), in batched writes.
///
/// Each FILE ("-" for standard input) is either one JSON object of pairs
/// ({"key": "value", ...}; duplicate keys are allowed and the last one wins) or JSON Lines
/// ({"key": ..., "value": ...} per line), told apart by the first object unless --format says.
/// Prints the pairs, bytes and seconds taken; a progress bar shows on a terminal. A database
/// with value files (or range deletes, expiring keys) is opened with that extension on.
#[derive(Args)]
pub struct LoadArgs {
    /// The database directory.
    db: PathBuf,
    /// JSON files to load, in order.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// How keys and values are written in the JSON strings: utf8, hex or base64.
    #[arg(long, default_value = "utf8", value_parser = parse_encoding)]
    encoding: Encoding,
    /// Input shape: auto, object or lines.
    #[arg(long, default_value = "auto", value_parser = parse_format)]
    format: InputFormat,
    /// Pairs per write batch.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    batch: u64,
    /// Sync the log after every batch (survives power loss, much slower).
    #[arg(long)]
    sync: bool,
    /// Keep values of N bytes or more in value files beside the tree (format extension
    /// value-separation: recorded in the database, which LevelDB then refuses; default for a
    /// database that records it: 4096).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    value_separation: Option<u64>,
}

pub fn load(args: LoadArgs) -> CommandResult {
    let separation = args
        .value_separation
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    let db = open_db(&args.db, true, separation)?;
    let options = LoadOptions {
        encoding: args.encoding,
        format: args.format,
        batch_size: usize::try_from(args.batch).unwrap_or(usize::MAX),
        ..LoadOptions::default()
    };
    let write_options = WriteOptions { sync: args.sync };
    let total: Option<u64> = args
        .files
        .iter()
        .map(|f| std::fs::metadata(f).ok().map(|m| m.len()))
        .sum();
    let bar = progress_bar(total);
    let start = Instant::now();
    let (mut pairs, mut bytes) = (0u64, 0u64);
    for file in &args.files {
        let input: Box<dyn Read> = if file.as_os_str() == "-" {
            Box::new(std::io::stdin().lock())
        } else {
            let opened =
                File::open(file).map_err(io_error(&format!("opening {}", file.display())))?;
            Box::new(opened)
        };
        let mut written = pairs;
        let summary = load_json(bar.wrap_read(input), &options, &mut |batch| {
            written += batch.len() as u64;
            bar.set_message(format!("{written} pairs"));
            db.write_opt(&write_options, batch)
        })
        .map_err(|e| in_file(e, file))?;
        pairs += summary.pairs;
        bytes += summary.bytes;
    }
    bar.finish_and_clear();
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "loaded {pairs} pairs ({bytes} bytes of keys and values) in {seconds:.3} s ({:.0} pairs/s)",
        pairs as f64 / seconds.max(1e-9)
    );
    Ok(ExitCode::SUCCESS)
}

/// Names the input file in a bad-input error.
fn in_file(error: strata::Error, file: &std::path::Path) -> strata::Error {
    match error {
        strata::Error::InvalidArgument(message) => {
            strata::Error::InvalidArgument(format!("{}: {message}", file.display()))
        }
        other => other,
    }
}

/// Write the pairs of a database (or of a key range) as JSON Lines,
/// {"key": ..., "value": ...} one a line in key order, the form `load` reads back exactly.
///
/// With --encoding utf8 (the default) a key or value that is not UTF-8 stops the export; hex
/// and base64 carry any bytes. Range keys are given escaped (\xNN for any byte). Values kept
/// in value files are read from them, as any read does.
#[derive(Args)]
pub struct ExportArgs {
    /// The database directory.
    db: PathBuf,
    #[command(flatten)]
    range: RangeArgs,
    /// How keys and values are written in the JSON strings: utf8, hex or base64.
    #[arg(long, default_value = "utf8", value_parser = parse_encoding)]
    encoding: Encoding,
    /// Write to this file instead of standard output (and print a summary).
    #[arg(long, short)]
    output: Option<PathBuf>,
    #[command(flatten)]
    mode: ReadMode,
}

pub fn export(args: ExportArgs) -> CommandResult {
    let options = ExportOptions {
        range: args.range.parse(unescape)?,
        encoding: args.encoding,
    };
    let db = args.mode.open(&args.db)?;
    match &args.output {
        Some(path) => {
            let file =
                File::create(path).map_err(io_error(&format!("creating {}", path.display())))?;
            let mut out = BufWriter::new(file);
            let summary = export_json(&db, &options, &mut out)?;
            out.into_inner()
                .map_err(|e| io_error("writing the export")(e.into_error()))?
                .sync_all()
                .map_err(io_error("syncing the export"))?;
            println!(
                "exported {} pairs ({} bytes of keys and values) in {:.3} s",
                summary.pairs,
                summary.bytes,
                summary.elapsed.as_secs_f64()
            );
        }
        None => {
            let mut out = BufWriter::new(std::io::stdout().lock());
            export_json(&db, &options, &mut out)?;
            out.flush().map_err(io_error("writing the export"))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
