//! `check`, value-file side (format extension `value-separation`, docs/design.md section
//! 4.4): every record of every value file, and every value pointer of the live tables and logs
//! against the record it names.
//!
//! A pointer resolves when its value file exists and holds, at the pointer's offset, a whole
//! record whose crc holds and is the pointer's, with the entry's key and value length, and
//! for a compressed value (format extension `value-compression`) a Snappy stream that
//! decompresses to the pointer's length — what a read checks (`vlog/reader.rs`). One that does not is a problem of the table or log holding
//! it, naming the key and the pointer. Damage in a value file is a problem when a live pointer
//! names a record it touches, and a note otherwise (garbage no reader can reach, as in an
//! obsolete table); a torn last record is what a crash during an append leaves: a note unless
//! a pointer names it. A value file no live pointer names is a note too.
//!
//! The pointers are matched against the records as each file is walked, in offset order; a
//! pointer that names no record the walk found whole (after damage that misplaced the walk)
//! is read on its own, as a read would.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use super::{unreadable, CheckReport, FileProblems};
use crate::error::Error;
use crate::options::Options;
use crate::tools::value_walk::{for_each_value_record, ValueItem};
use crate::vlog::reader::ValueFiles;
use crate::vlog::ValuePointer;

/// A value pointer met in a live table or log.
pub(super) struct PointerRef {
    /// The table or log holding it.
    source: Arc<str>,
    /// Where in it: the data block, or the log record.
    at: Option<u64>,
    /// The entry's user key.
    key: Vec<u8>,
    pointer: ValuePointer,
    /// The walk of its value file met the record it names.
    met: bool,
}

impl PointerRef {
    /// The bytes of its value file the pointer names.
    fn record(&self) -> Range<u64> {
        let start = self.pointer.offset;
        start..start.saturating_add(self.pointer.record_size(self.key.len()))
    }

    /// Reports that the pointer does not resolve, for `reason`.
    fn dangling(&self, reason: &str, report: &mut CheckReport) {
        let p = &self.pointer;
        let mut problems = FileProblems::new(&*self.source);
        let consequence = if self.source.ends_with(".log") {
            "recovery ends the log there"
        } else {
            "reads of it fail"
        };
        problems.add(
            self.at,
            format!(
                "key '{}' points to {:06}.vlog at {} ({}, crc {:#010x}): {reason}; \
                 {consequence}",
                self.key.escape_ascii(),
                p.file,
                p.offset,
                p.length_shown(),
                p.crc
            ),
        );
        problems.into_report(report);
    }
}

/// The value pointers of the live tables and logs, gathered while they are checked.
#[derive(Default)]
pub(super) struct Pointers {
    /// By value file number.
    by_file: BTreeMap<u64, Vec<PointerRef>>,
}

impl Pointers {
    /// Notes the pointer `raw` of the entry of `key`, found in `source` at `at`. One that does
    /// not parse is returned as the problem to report there.
    pub(super) fn add(
        &mut self,
        source: &Arc<str>,
        at: Option<u64>,
        key: &[u8],
        raw: &[u8],
    ) -> std::result::Result<(), String> {
        let Some(pointer) = ValuePointer::decode(raw) else {
            return Err(unreadable(&ValuePointer::malformed(key, raw)));
        };
        self.by_file
            .entry(pointer.file)
            .or_default()
            .push(PointerRef {
                source: Arc::clone(source),
                at,
                key: key.to_vec(),
                pointer,
                met: false,
            });
        Ok(())
    }
}

/// Checks every value file of `dir` (`files`: by number) and every pointer in `pointers`.
pub(super) fn check(
    dir: &Path,
    options: &Options,
    files: &BTreeMap<u64, String>,
    pointers: Pointers,
    report: &mut CheckReport,
) {
    let mut by_file = pointers.by_file;
    let numbers: BTreeSet<u64> = files.keys().chain(by_file.keys()).copied().collect();
    let reader = ValueFiles::new(Arc::clone(&options.env), dir);
    for number in numbers {
        let mut pointers = by_file.remove(&number).unwrap_or_default();
        report.value_pointers += pointers.len() as u64;
        let Some(name) = files.get(&number) else {
            for p in &pointers {
                p.dangling("the value file is missing", report);
            }
            continue;
        };
        if pointers.is_empty() {
            report.notes.push(format!(
                "{name}: no live table or log points into it (garbage the database deletes)"
            ));
        }
        pointers.sort_by_key(|p| p.pointer.offset);
        // The records live pointers name, by offset, with their sizes.
        let mut named = BTreeMap::new();
        check_file(
            dir,
            name,
            options,
            Some((&mut pointers, &mut named)),
            report,
        );
        // Pointers the walk met no whole record for are read as a read would.
        for p in pointers.iter().filter(|p| !p.met) {
            match reader.read(&p.key, &p.pointer.encode()) {
                Ok(_) => {
                    named.insert(p.pointer.offset, p.record().end - p.record().start);
                }
                Err(e) => p.dangling(&unreadable(&e), report),
            }
        }
        report.value_bytes_named += named.values().sum::<u64>();
    }
}

/// Checks the records of value file `name` in `dir`. With `live` (the live pointers into it,
/// sorted by offset, and the map of the records they name to fill), matches each pointer
/// with the record at its offset, and damage no pointer reaches is a note; without, every
/// damage is a problem.
pub(super) fn check_file(
    dir: &Path,
    name: &str,
    options: &Options,
    mut live: Option<(&mut [PointerRef], &mut BTreeMap<u64, u64>)>,
    report: &mut CheckReport,
) {
    let path = dir.join(name);
    let mut problems = FileProblems::new(name);
    // Damage met: where, why, and whether it is a torn last record.
    let mut damage: Vec<(Range<u64>, String, bool)> = Vec::new();
    let mut next = 0;
    let mut records = 0;
    // Where live pointers say records start: the walk resynchronises there after damage.
    let mut starts: Vec<u64> = live
        .as_ref()
        .map(|(pointers, _)| pointers.iter().map(|p| p.pointer.offset).collect())
        .unwrap_or_default();
    starts.dedup();
    let result = for_each_value_record(&*options.env, &path, true, &starts, &mut |item| {
        match item {
            ValueItem::Record {
                offset,
                size,
                record,
            } => {
                records += 1;
                let Some((pointers, named)) = live.as_mut() else {
                    return Ok(());
                };
                while let Some(p) = pointers
                    .get_mut(next)
                    .filter(|p| p.pointer.offset <= offset)
                {
                    next += 1;
                    if p.pointer.offset < offset {
                        continue;
                    }
                    p.met = true;
                    let matched = match p.pointer.mismatch(&p.key, &record) {
                        Some(reason) => Err(reason),
                        None => p.pointer.value_of(record.value.to_vec()).map(drop),
                    };
                    match matched {
                        Err(reason) => p.dangling(&reason, report),
                        Ok(()) => {
                            named.insert(offset, size);
                        }
                    }
                }
            }
            ValueItem::Damage { error, bytes } => {
                let Error::Corruption(c) = error else {
                    return Err(error);
                };
                let at = c.offset.unwrap_or(0);
                damage.push((at..at.saturating_add(bytes), c.reason, false));
            }
            ValueItem::Tail { offset, bytes } => damage.push((
                offset..offset + bytes,
                format!(
                    "the last {bytes} bytes are not a complete record (an append cut short by a \
                     crash, or damage)"
                ),
                true,
            )),
        }
        Ok(())
    });
    if let Err(e) = result {
        problems.add(None, unreadable(&e));
    }
    for (range, reason, torn) in damage {
        let reached = match &live {
            None => !torn,
            Some((pointers, _)) => pointers.iter().any(|p| {
                let named = p.record();
                named.start < range.end && range.start < named.end
            }),
        };
        if reached {
            problems.add(Some(range.start), reason);
        } else {
            let unnamed = match live {
                Some(_) => format!(" ({} bytes no live pointer names)", range.end - range.start),
                None => String::new(),
            };
            report.notes.push(format!(
                "{name} at offset {}: {reason}{unnamed}",
                range.start
            ));
        }
    }
    report.value_files += 1;
    report.value_records += records;
    report.value_file_bytes += options.env.file_size(&path).unwrap_or(0);
    problems.into_report(report);
}
