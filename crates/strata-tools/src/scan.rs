//! `scan` and `export`: walking a key range of an open database, and writing it as JSON Lines
//! that [`load_json`](crate::load_json) reads back byte for byte.
//!
//! Export writes one `{"key": ..., "value": ...}` object a line, keys in order, strings in the
//! chosen [`Encoding`]. With `utf8`, a key or value that is not UTF-8 stops the export with an
//! error naming it (use `hex` or `base64` for binary data: those round-trip anything).

use std::io::Write;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::text::Encoding;
use strata::{Error, ReadOptions, Result, DB};

/// A range of keys: at or after `start`, before `end`, and beginning with `prefix`; every part
/// optional. `prefix` (and combining it with `start`/`end`) assumes the bytewise order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyRange {
    /// Lowest key (inclusive).
    pub start: Option<Vec<u8>>,
    /// Key past the range (exclusive).
    pub end: Option<Vec<u8>>,
    /// Only keys that begin with these bytes.
    pub prefix: Option<Vec<u8>>,
}

impl KeyRange {
    /// The range as an inclusive lower and an exclusive upper bound.
    pub fn bounds(&self) -> (Option<Vec<u8>>, Option<Vec<u8>>) {
        let mut lower = self.start.clone();
        let mut upper = self.end.clone();
        if let Some(prefix) = &self.prefix {
            if lower.as_ref().is_none_or(|l| l < prefix) {
                lower = Some(prefix.clone());
            }
            if let Some(past) = prefix_successor(prefix) {
                if upper.as_ref().is_none_or(|u| *u > past) {
                    upper = Some(past);
                }
            }
        }
        (lower, upper)
    }

    /// Read options that confine an iterator to the range.
    pub fn read_options(&self) -> ReadOptions {
        let (lower_bound, upper_bound) = self.bounds();
        ReadOptions {
            lower_bound,
            upper_bound,
            ..ReadOptions::default()
        }
    }
}

/// The smallest key above every key beginning with `prefix`; `None` when there is none (the
/// prefix is empty or all `0xff`).
fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let last = prefix.iter().rposition(|&b| b != 0xff)?;
    let mut past = prefix.get(..=last)?.to_vec();
    if let Some(byte) = past.last_mut() {
        *byte += 1;
    }
    Some(past)
}

/// What [`scan`] walks.
#[derive(Debug, Clone, Default)]
pub struct ScanOptions {
    /// The keys to visit.
    pub range: KeyRange,
    /// Visit from the last key down.
    pub reverse: bool,
    /// Stop after this many pairs.
    pub limit: Option<u64>,
    /// Keep the blocks read in the block cache (off for bulk walks).
    pub fill_cache: bool,
}

/// Hands every pair in the range to `f`, in key order (or reverse), as of one consistent view
/// of the database. Returns the number of pairs visited; stops at `f`'s first error.
pub fn scan(
    db: &DB,
    options: &ScanOptions,
    mut f: impl FnMut(&[u8], &[u8]) -> Result<()>,
) -> Result<u64> {
    let read = ReadOptions {
        fill_cache: options.fill_cache,
        ..options.range.read_options()
    };
    let mut it = db.iter_opt(&read);
    if options.reverse {
        it.seek_to_last();
    } else {
        it.seek_to_first();
    }
    let mut count = 0;
    while it.valid() && options.limit.is_none_or(|limit| count < limit) {
        f(it.key(), it.value())?;
        count += 1;
        if options.reverse {
            it.prev();
        } else {
            it.next();
        }
    }
    it.status()?;
    Ok(count)
}

/// What [`export_json`] writes.
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    /// The keys to export.
    pub range: KeyRange,
    /// Encoding of keys and values in the JSON strings.
    pub encoding: Encoding,
}

/// What an export did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExportSummary {
    /// Pairs written.
    pub pairs: u64,
    /// Bytes of keys and values exported.
    pub bytes: u64,
    /// Time taken.
    pub elapsed: Duration,
}

#[derive(Serialize)]
struct Record<'a> {
    key: &'a str,
    value: &'a str,
}

/// Writes every pair in the range to `out` as JSON Lines (see the module documentation).
pub fn export_json(db: &DB, options: &ExportOptions, out: &mut dyn Write) -> Result<ExportSummary> {
    let start = Instant::now();
    let mut summary = ExportSummary::default();
    let (mut key_text, mut value_text) = (String::new(), String::new());
    let write_error = |e: std::io::Error| Error::io("writing the export", e);
    let scan_options = ScanOptions {
        range: options.range.clone(),
        ..ScanOptions::default()
    };
    scan(db, &scan_options, |key, value| {
        key_text.clear();
        value_text.clear();
        options.encoding.encode_into(key, &mut key_text)?;
        options.encoding.encode_into(value, &mut value_text)?;
        let record = Record {
            key: &key_text,
            value: &value_text,
        };
        serde_json::to_writer(&mut *out, &record)
            .map_err(|e| write_error(std::io::Error::other(e)))?;
        out.write_all(b"\n").map_err(write_error)?;
        summary.pairs += 1;
        summary.bytes += (key.len() + value.len()) as u64;
        Ok(())
    })?;
    out.flush().map_err(write_error)?;
    summary.elapsed = start.elapsed();
    Ok(summary)
}

/// Every property the database reports, as `(name, value)` in a fixed order: the file count
/// of each level (as many as the database has), then `leveldb.stats`, `leveldb.sstables` and
/// `leveldb.approximate-memory-usage`.
pub fn properties(db: &DB) -> Vec<(String, String)> {
    let levels = (0..).map_while(|level| {
        let name = format!("leveldb.num-files-at-level{level}");
        db.property(&name).map(|value| (name, value))
    });
    let others = [
        "leveldb.stats",
        "leveldb.sstables",
        "leveldb.approximate-memory-usage",
    ]
    .into_iter()
    .filter_map(|name| db.property(name).map(|value| (name.to_owned(), value)));
    levels.chain(others).collect()
}

#[cfg(test)]
mod tests;
