//! `dump`: every record of a log, manifest, table, `CURRENT` or value file, in readable lines
//! or as JSON Lines.
//!
//! Text output, by kind (keys and values escaped, or hex with [`Show::Hex`]):
//!
//! ```text
//! log       offset 0: batch sequence 7, 2 ops
//!             put 'k' @ 7 => 'v'
//!             del 'k2' @ 8
//!           1 records, 0 damaged parts
//! manifest  offset 0: VersionEdit { ... }          (one field a line, as VersionEdit prints)
//!           1 records, 0 damaged parts
//! table     footer: metaindex at 1234 (31 bytes), index at 1270 (40 bytes)
//!           meta 'filter.leveldb.BuiltinBloomFilter2' => block at 1100 (129 bytes)
//!           filter 'leveldb.BuiltinBloomFilter2': 129 bytes, 1 filters, base_lg 11
//!           index 'k\xff' @ 72057594037927935 : 1 => block at 0 (1091 bytes)
//!           data block 0 at 0 (1091 bytes stored, snappy, 4056 bytes)
//!             'k' @ 7 : 1 => 'v'
//!           1 data blocks, 120 entries
//! current   MANIFEST-000005
//! vlog      offset 0: 'k' => 5000 value bytes (5007 bytes, crc 0x1a2b3c4d ok)
//!           1 records, 0 damaged parts
//! ```
//!
//! A separated value's pointer (value type 4 in a table, tag 5 in a log) is shown decoded,
//! `=> pointer to 000012.vlog at 345 (5000 value bytes, crc 0x1a2b3c4d)`, or in JSON as
//! `"pointer": {"file", "offset", "length", "crc"}` in place of `"value"`; one that does not
//! parse is shown raw and counted as damage.
//!
//! Damage never stops a dump: each damaged part is printed where it was met as
//! `corruption at offset N: reason`, counted in [`DumpSummary::problems`], and the dump goes on
//! with what follows. In JSON every line is one object with a `"type"` field (`batch`, `edit`,
//! `footer`, `meta`, `filter`, `index`, `block`, `entry`, `current`, `record`, `summary`,
//! `corruption`).

mod manifest;
mod table;
mod value_file;
mod wal;

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use serde::Serialize;

use super::kind::{detect_file_kind, FileKind};
use super::records::{for_each_record, LogItem};
use super::text::{Show, Shown};
use crate::env::{read_file_to_vec, Env, PosixEnv};
use crate::error::{Error, Result};
use crate::util::internal_key::{parse_internal_key, ValueType};
use crate::vlog::ValuePointer;

/// Output form of a dump.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DumpFormat {
    /// Readable lines.
    #[default]
    Text,
    /// One JSON object a line.
    Json,
}

/// How [`dump_file`] reads and prints.
#[derive(Debug, Clone)]
pub struct DumpOptions {
    /// Readable lines or JSON Lines.
    pub format: DumpFormat,
    /// How keys and values are shown (escaped ASCII or hex).
    pub show: Show,
    /// Verify record and block checksums (a mismatch is reported and the part skipped).
    pub verify_checksums: bool,
    /// The file's kind; `None` recognises it by name or contents.
    pub kind: Option<FileKind>,
    /// The file system the file is read through.
    pub env: Arc<dyn Env>,
}

impl Default for DumpOptions {
    fn default() -> DumpOptions {
        DumpOptions {
            format: DumpFormat::Text,
            show: Show::Escaped,
            verify_checksums: true,
            kind: None,
            env: Arc::new(PosixEnv::new()),
        }
    }
}

/// What a dump went through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DumpSummary {
    /// The kind the file was read as.
    pub kind: Option<FileKind>,
    /// Records (log, manifest) or entries (table) printed.
    pub records: u64,
    /// Damaged parts reported (and skipped).
    pub problems: u64,
}

/// Prints every record of the file at `path` to `out`. Damage in the file is printed and
/// counted, not returned; `Err` means the file could not be read at all (or `out` failed).
pub fn dump_file(path: &Path, options: &DumpOptions, out: &mut dyn Write) -> Result<DumpSummary> {
    let env = &*options.env;
    let kind = match options.kind {
        Some(kind) => kind,
        None => detect_file_kind(env, path)?,
    };
    let mut printer = Printer {
        out,
        json: options.format == DumpFormat::Json,
        show: options.show,
        summary: DumpSummary {
            kind: Some(kind),
            ..DumpSummary::default()
        },
    };
    match kind {
        FileKind::Log => {
            wal::dump(env, path, options.verify_checksums, &mut printer)?;
            printer.records_summary()?;
        }
        FileKind::Manifest => {
            manifest::dump(env, path, options.verify_checksums, &mut printer)?;
            printer.records_summary()?;
        }
        FileKind::Table => table::dump(env, path, options.verify_checksums, &mut printer)?,
        FileKind::Current => dump_current(env, path, &mut printer)?,
        FileKind::ValueFile => {
            value_file::dump(env, path, options.verify_checksums, &mut printer)?;
            printer.records_summary()?;
        }
    }
    printer.out.flush().map_err(write_error)?;
    Ok(printer.summary)
}

fn dump_current(env: &dyn Env, path: &Path, p: &mut Printer<'_>) -> Result<()> {
    let contents = read_file_to_vec(env, path)?;
    let name = contents.strip_suffix(b"\n");
    let name = match name {
        Some(name) if name.starts_with(b"MANIFEST-") && !name.contains(&b'\n') => name,
        _ => {
            p.problem(
                Some(0),
                "CURRENT does not hold a manifest name and a newline",
            )?;
            &contents[..]
        }
    };
    p.summary.records += 1;
    if p.json {
        p.json(&serde_json::json!({
            "type": "current",
            "manifest": p.show.bytes(name).to_string(),
        }))
    } else {
        p.line(format_args!("{}", p.show.bytes(name)))
    }
}

/// Prints one whole record of a log-format file, given its offset.
pub(super) type RecordPrinter<'r> = dyn FnMut(&mut Printer<'_>, u64, &[u8]) -> Result<()> + 'r;

/// Walks a log-format file (write-ahead log or manifest): damage and an incomplete last record
/// become problems, a write-ahead log's gaps are shown, and each whole record is counted and
/// handed to `record` with its offset.
pub(super) fn dump_records(
    env: &dyn Env,
    path: &Path,
    verify: bool,
    write_ahead_log: bool,
    p: &mut Printer<'_>,
    record: &mut RecordPrinter<'_>,
) -> Result<()> {
    for_each_record(env, path, verify, write_ahead_log, &mut |item| match item {
        LogItem::Gap { offset, bytes } => p.gap(offset, bytes),
        LogItem::Damage {
            offset,
            bytes,
            reason,
        } => p.problem(offset, &format!("{reason} ({bytes} bytes dropped)")),
        LogItem::Tail { offset, bytes } => p.problem(Some(offset), &tail_reason(bytes)),
        LogItem::Record { offset, data } => {
            p.summary.records += 1;
            record(p, offset, data)
        }
    })
}

/// How an incomplete last record is described.
pub(super) fn tail_reason(bytes: u64) -> String {
    format!("the last {bytes} bytes are not a complete record (a write cut short, or damage)")
}

fn write_error(e: std::io::Error) -> Error {
    Error::io("writing the dump", e)
}

/// Where a dump's lines go, in the chosen form.
pub(super) struct Printer<'a> {
    out: &'a mut dyn Write,
    pub(super) json: bool,
    pub(super) show: Show,
    pub(super) summary: DumpSummary,
}

impl Printer<'_> {
    pub(super) fn line(&mut self, args: std::fmt::Arguments<'_>) -> Result<()> {
        self.out.write_fmt(args).map_err(write_error)?;
        self.out.write_all(b"\n").map_err(write_error)
    }

    pub(super) fn json<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        serde_json::to_writer(&mut self.out, value)
            .map_err(|e| write_error(std::io::Error::other(e)))?;
        self.out.write_all(b"\n").map_err(write_error)
    }

    /// Reports damage at `offset`, in text or JSON.
    pub(super) fn problem(&mut self, offset: Option<u64>, reason: &str) -> Result<()> {
        self.summary.problems += 1;
        if self.json {
            self.json(&serde_json::json!({
                "type": "corruption",
                "offset": offset,
                "reason": reason,
            }))
        } else {
            match offset {
                Some(offset) => self.line(format_args!("corruption at offset {offset}: {reason}")),
                None => self.line(format_args!("corruption: {reason}")),
            }
        }
    }

    /// Shows a write-ahead log's gap (`tools/records.rs`): no damage in itself — `strata
    /// check` says whether the records after it continue the writes.
    pub(super) fn gap(&mut self, offset: u64, bytes: u64) -> Result<()> {
        if self.json {
            self.json(&serde_json::json!({ "type": "gap", "offset": offset, "bytes": bytes }))
        } else {
            self.line(format_args!(
                "gap at offset {offset}: {bytes} bytes of zeros and an unfinished write skipped"
            ))
        }
    }

    /// The closing line of a log or manifest dump.
    fn records_summary(&mut self) -> Result<()> {
        let DumpSummary {
            records, problems, ..
        } = self.summary;
        if self.json {
            self.json(&serde_json::json!({
                "type": "summary",
                "records": records,
                "problems": problems,
            }))
        } else {
            self.line(format_args!("{records} records, {problems} damaged parts"))
        }
    }

    pub(super) fn bytes<'b>(&self, bytes: &'b [u8]) -> Shown<'b> {
        self.show.bytes(bytes)
    }
}

/// An internal key for JSON: its parts, or the raw bytes when it does not parse.
#[derive(Serialize)]
#[serde(untagged)]
pub(super) enum KeyJson<'a> {
    Parsed {
        user_key: Shown<'a>,
        sequence: u64,
        value_type: &'static str,
    },
    Bad {
        bad_internal_key: Shown<'a>,
    },
}

impl<'a> KeyJson<'a> {
    pub(super) fn new(key: &'a [u8], show: Show) -> KeyJson<'a> {
        match parse_internal_key(key) {
            Some(parsed) => KeyJson::Parsed {
                user_key: show.bytes(parsed.user_key),
                sequence: parsed.sequence,
                value_type: value_type_name(parsed.value_type),
            },
            None => KeyJson::Bad {
                bad_internal_key: show.bytes(key),
            },
        }
    }
}

pub(super) fn value_type_name(t: ValueType) -> &'static str {
    match t {
        ValueType::Value => "put",
        ValueType::Deletion => "del",
        ValueType::ExpiringValue => "put-expiring",
        ValueType::RangeDeletion => "del-range",
        ValueType::ValuePointer => "put-pointer",
    }
}

/// A value pointer, shown decoded: as text `pointer to 000012.vlog at 345 (5000 value bytes,
/// crc 0x1a2b3c4d)` (`5000 value bytes, 2600 stored` for a compressed value), as JSON
/// `{"file", "offset", "length", "crc"}` and `"stored"` for a compressed value.
#[derive(Debug, Clone, Copy)]
pub(super) struct PointerShown(pub(super) ValuePointer);

impl std::fmt::Display for PointerShown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let p = &self.0;
        write!(
            f,
            "pointer to {:06}.vlog at {} ({}, crc {:#010x})",
            p.file,
            p.offset,
            p.length_shown(),
            p.crc
        )
    }
}

impl Serialize for PointerShown {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let p = &self.0;
        let mut fields =
            serializer.serialize_struct("Pointer", 4 + usize::from(p.stored.is_some()))?;
        fields.serialize_field("file", &p.file)?;
        fields.serialize_field("offset", &p.offset)?;
        fields.serialize_field("length", &p.length)?;
        fields.serialize_field("crc", &p.crc)?;
        if let Some(stored) = p.stored {
            fields.serialize_field("stored", &stored)?;
        }
        fields.end()
    }
}

/// Why the pointer `raw` of the entry of `key` is not shown decoded: it does not parse.
pub(super) fn bad_pointer(key: &[u8], raw: &[u8]) -> String {
    match ValuePointer::malformed(key, raw) {
        Error::Corruption(c) => c.reason,
        other => other.to_string(),
    }
}

/// An internal key as text: `'user' @ sequence : type`, as LevelDB prints one.
pub(super) struct KeyText<'a>(pub(super) &'a [u8], pub(super) Show);

impl std::fmt::Display for KeyText<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match parse_internal_key(self.0) {
            Some(key) => write!(
                f,
                "'{}' @ {} : {}",
                self.1.bytes(key.user_key),
                key.sequence,
                key.value_type as u8
            ),
            None => write!(f, "(bad internal key) '{}'", self.1.bytes(self.0)),
        }
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod value_file_tests;
