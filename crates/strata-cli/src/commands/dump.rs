//! `strata dump FILE`.

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use strata_tools::{dump_file, DumpFormat, DumpOptions, FileKind};

use super::{show, CommandResult, NEGATIVE};

/// Print every record of a database file in readable lines: a write-ahead log's batches (with
/// sequence numbers and ops), a table's entries (internal keys decoded as 'user' @ seq : type)
/// after its footer, metaindex, filter and index, a manifest's version edits, CURRENT, or a
/// value file's records (offset, key, value length, crc). Value pointers in tables and logs
/// are shown decoded (value file, offset, length, crc).
///
/// The kind is recognised by name (NNNNNN.log, NNNNNN.ldb/.sst, MANIFEST-NNNNNN, CURRENT,
/// NNNNNN.vlog) or else by contents. Damage is printed where it is met ("corruption at offset N: ...") and the
/// dump goes on; the exit code is then 1.
#[derive(Args)]
pub struct DumpArgs {
    /// The file to dump.
    file: PathBuf,
    /// Print one JSON object a line instead of text.
    #[arg(long)]
    json: bool,
    /// Show keys and values as hex instead of escaped ASCII.
    #[arg(long)]
    hex: bool,
    /// Read the file as this kind instead of recognising it: log, table, manifest, current or
    /// vlog.
    #[arg(long, value_parser = parse_kind)]
    kind: Option<FileKind>,
    /// Do not verify checksums (shows what damaged blocks and records hold).
    #[arg(long)]
    no_verify: bool,
}

fn parse_kind(text: &str) -> Result<FileKind, String> {
    text.parse().map_err(|e: strata::Error| e.to_string())
}

pub fn run(args: DumpArgs) -> CommandResult {
    let options = DumpOptions {
        format: if args.json {
            DumpFormat::Json
        } else {
            DumpFormat::Text
        },
        show: show(args.hex),
        verify_checksums: !args.no_verify,
        kind: args.kind,
        ..DumpOptions::default()
    };
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let summary = dump_file(&args.file, &options, &mut out)?;
    out.flush().map_err(super::io_error("writing the dump"))?;
    if summary.problems > 0 {
        eprintln!(
            "strata: {} damaged part{} in {}",
            summary.problems,
            if summary.problems == 1 { "" } else { "s" },
            args.file.display()
        );
        return Ok(ExitCode::from(NEGATIVE));
    }
    Ok(ExitCode::SUCCESS)
}
