//! `check`: verifies a database directory without opening it (nothing is written, no lock is
//! taken), and lists every problem with the file and the offset where it was found.
//!
//! What is verified:
//! - `CURRENT` names an existing manifest, followed by a newline.
//! - Every manifest record: its checksum, that it decodes as a version edit, and that the edits
//!   fit together (a file is not added twice or deleted when absent; the log number, next file
//!   number and last sequence are recorded; the comparator is the one given in the options).
//! - The live version: every table exists with the recorded size; below the next file number;
//!   at levels >= 1, tables do not overlap; each table's first and last keys are the recorded
//!   smallest and largest keys.
//! - Every live table, block by block: checksums, block structure, internal keys that parse and
//!   strictly increase, index separators that bound their blocks, sequence numbers not above the
//!   manifest's last sequence, and — for bloom filters or the options' filter policy — a filter
//!   that matches every key of its block.
//! - Every live log: record checksums and framing, that each record is a valid write batch, and
//!   that batches follow each other without a gap in sequence numbers; the log the manifest's
//!   log number names exists.
//! - Format extensions: no live table or log holds data of an extension the manifest's marker
//!   does not record (expiring values, range tombstones, value pointers, compressed ones):
//!   recovery refuses such a log record as damage, and a reader that knows only what the
//!   marker says would misread such a table.
//! - Value files (format extension `value-separation`; `value_files.rs`): every record's
//!   checksum, and that every value pointer of a live table or log names a whole record of an
//!   existing value file with the entry's key and value length; the value files' total size
//!   against the record bytes the pointers name. A directory without value files or pointers
//!   is checked, and reported, as before the extension existed.
//!
//! "Live" means named by the manifest (tables) or not older than its log number (logs). When the
//! manifest cannot be read, every table and log in the directory is checked instead. Files that
//! are not live are mentioned as notes; damage in them does not count as a problem.

mod manifest;
mod table;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod value_file_tests;
mod value_files;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use crate::db::check_logged_batch;
use crate::db::log_continuity::{gap_before_first_batch, Continuity};
use crate::error::{Error, Result};
use crate::extension::Extensions;
use crate::filename::{parse_file_name, FileType};
use crate::options::Options;
use crate::tools::records::{describe_in_record, for_each_record, LogItem};
use crate::util::internal_key::InternalKeyComparator;
use crate::write_batch::{BatchOp, WriteBatch};
use value_files::Pointers;

/// Problems listed per file before the rest are only counted.
const MAX_PROBLEMS_PER_FILE: usize = 20;

/// One thing found wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The file's name within the database directory.
    pub file: String,
    /// Byte offset in the file, when the problem has one.
    pub offset: Option<u64>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.offset {
            Some(offset) => write!(f, "{} at offset {offset}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

/// What [`check_db`] looked at and found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// The manifest `CURRENT` names, when there is one.
    pub manifest: Option<String>,
    /// Manifest records read.
    pub manifest_records: u64,
    /// Table files verified.
    pub tables: u64,
    /// Data blocks verified.
    pub blocks: u64,
    /// Table entries verified.
    pub entries: u64,
    /// Log files verified.
    pub logs: u64,
    /// Log records (write batches) verified.
    pub log_records: u64,
    /// Value files verified (format extension `value-separation`).
    pub value_files: u64,
    /// Value-file records verified.
    pub value_records: u64,
    /// Bytes of the value files verified.
    pub value_file_bytes: u64,
    /// Value pointers of live tables and logs checked against their value files.
    pub value_pointers: u64,
    /// Bytes of the value-file records those pointers name (each record once): what the
    /// database can still read; the rest of `value_file_bytes` is garbage.
    pub value_bytes_named: u64,
    /// Everything wrong, in the order found.
    pub problems: Vec<Problem>,
    /// Things worth knowing that are not wrong (e.g. obsolete files left behind).
    pub notes: Vec<String>,
}

impl CheckReport {
    /// True when no problem was found.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

impl fmt::Display for CheckReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural = |n: u64| if n == 1 { "" } else { "s" };
        // Not a database: one value file checked alone.
        let database = self.manifest.is_some() || self.tables > 0 || self.logs > 0;
        if database || self.value_files == 0 {
            match &self.manifest {
                Some(name) => write!(
                    f,
                    "checked {name} ({} record{})",
                    self.manifest_records,
                    plural(self.manifest_records)
                )?,
                None => write!(f, "checked no manifest")?,
            }
            writeln!(
                f,
                ", {} table{} ({} blocks, {} entries), {} log{} ({} records)",
                self.tables,
                plural(self.tables),
                self.blocks,
                self.entries,
                self.logs,
                plural(self.logs),
                self.log_records
            )?;
        }
        if self.value_files > 0 || self.value_pointers > 0 {
            write!(
                f,
                "{} value file{} ({} records, {} bytes)",
                self.value_files,
                plural(self.value_files),
                self.value_records,
                self.value_file_bytes
            )?;
            if database {
                let named = self.value_bytes_named;
                write!(
                    f,
                    ", {} value pointer{} naming {named} bytes of them (space amplification {})",
                    self.value_pointers,
                    plural(self.value_pointers),
                    match named {
                        0 => "-".to_owned(),
                        _ => format!("{:.2}x", self.value_file_bytes as f64 / named as f64),
                    }
                )?;
            }
            writeln!(f)?;
        }
        for note in &self.notes {
            writeln!(f, "note: {note}")?;
        }
        match self.problems.len() {
            0 => write!(f, "no problems found"),
            n => {
                write!(f, "{n} problem{} found:", plural(n as u64))?;
                for problem in &self.problems {
                    write!(f, "\n  {problem}")?;
                }
                Ok(())
            }
        }
    }
}

/// Collects problems for one file, keeping the first [`MAX_PROBLEMS_PER_FILE`].
pub(super) struct FileProblems {
    file: String,
    problems: Vec<Problem>,
    dropped: usize,
}

impl FileProblems {
    pub(super) fn new(file: impl Into<String>) -> FileProblems {
        FileProblems {
            file: file.into(),
            problems: Vec::new(),
            dropped: 0,
        }
    }

    pub(super) fn add(&mut self, offset: Option<u64>, message: impl Into<String>) {
        if self.problems.len() < MAX_PROBLEMS_PER_FILE {
            self.problems.push(Problem {
                file: self.file.clone(),
                offset,
                message: message.into(),
            });
        } else {
            self.dropped += 1;
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.problems.is_empty()
    }

    fn into_report(self, report: &mut CheckReport) {
        report.problems.extend(self.problems);
        if self.dropped > 0 {
            report.problems.push(Problem {
                file: self.file,
                offset: None,
                message: format!("{} more problems not listed", self.dropped),
            });
        }
    }
}

/// Verifies the database in directory `path` (see the module documentation), reading through
/// `options.env` and ordering keys by `options.comparator`. `Err` only when the directory
/// cannot be listed; everything wrong inside it is in the report.
pub fn check_db(path: &Path, options: &Options) -> Result<CheckReport> {
    let files = DirFiles::list(path, options)?;
    let mut report = CheckReport::default();
    let icmp = InternalKeyComparator::new(options.comparator.clone());
    let live = manifest::check(path, options, &files, &mut report);
    let mut pointers = Pointers::default();

    for (number, name) in &files.tables {
        match &live {
            Some(state) => match state.table(*number) {
                Some((level, meta)) => {
                    let expect = table::Expected {
                        level,
                        meta,
                        last_sequence: state.last_sequence,
                        extensions: state.extensions(),
                    };
                    let expect = Some(expect);
                    table::check(
                        path,
                        name,
                        options,
                        &icmp,
                        expect,
                        &mut pointers,
                        &mut report,
                    );
                }
                None => report.notes.push(format!(
                    "{name} is not in the manifest (obsolete; removed at the next open)"
                )),
            },
            None => table::check(path, name, options, &icmp, None, &mut pointers, &mut report),
        }
    }
    for (number, name) in &files.logs {
        if live.as_ref().is_none_or(|s| s.log_is_live(*number)) {
            let recorded = live.as_ref().map(manifest::LiveState::extensions);
            check_log(path, name, options, recorded, &mut pointers, &mut report);
        } else {
            report.notes.push(format!(
                "{name} is older than the manifest's log number (obsolete)"
            ));
        }
    }
    value_files::check(path, options, &files.value_files, pointers, &mut report);
    Ok(report)
}

/// Verifies the one value file at `path` (format extension `value-separation`): every
/// record's checksum and framing; a torn last record is a note. `Err` only when the file
/// cannot be found.
pub fn check_value_file(path: &Path, options: &Options) -> Result<CheckReport> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| Error::InvalidArgument(format!("{}: not a file name", path.display())))?;
    options.env.file_size(path)?;
    let dir = crate::env::parent_dir(path);
    let mut report = CheckReport::default();
    value_files::check_file(&dir, name, options, None, &mut report);
    Ok(report)
}

/// The database files of a directory, by kind.
pub(super) struct DirFiles {
    /// Tables by number (the `.ldb` name when both `.ldb` and `.sst` exist, as the engine reads).
    pub(super) tables: BTreeMap<u64, String>,
    /// Logs by number.
    pub(super) logs: BTreeMap<u64, String>,
    /// Value files by number.
    pub(super) value_files: BTreeMap<u64, String>,
    /// Manifest names.
    pub(super) manifests: BTreeSet<String>,
    /// `CURRENT` exists.
    pub(super) current: bool,
}

impl DirFiles {
    fn list(dir: &Path, options: &Options) -> Result<DirFiles> {
        let mut files = DirFiles {
            tables: BTreeMap::new(),
            logs: BTreeMap::new(),
            value_files: BTreeMap::new(),
            manifests: BTreeSet::new(),
            current: false,
        };
        for name in options.env.children(dir)? {
            match parse_file_name(&name) {
                Some((number, FileType::Table)) => {
                    let slot = files.tables.entry(number).or_insert_with(|| name.clone());
                    if name.ends_with(".ldb") {
                        *slot = name;
                    }
                }
                Some((number, FileType::Log)) => {
                    files.logs.insert(number, name);
                }
                Some((number, FileType::ValueFile)) => {
                    files.value_files.insert(number, name);
                }
                Some((_, FileType::Descriptor)) => {
                    files.manifests.insert(name);
                }
                Some((_, FileType::Current)) => files.current = true,
                _ => {}
            }
        }
        Ok(files)
    }
}

/// Whether `batch`, at file offset `offset` of a log, takes the sequence numbers right after
/// the batch before it; where it does not after a gap (`gap`: its offset and length) or
/// damage, recovery ends the log there. A gap before the log's first batch (`first`) is
/// damage whatever follows it (see `db/log_continuity.rs`).
fn check_sequence(
    continuity: &mut Continuity,
    batch: &WriteBatch,
    gap: Option<(u64, u64)>,
    (offset, first): (u64, bool),
    problems: &mut FileProblems,
) {
    let sequence = batch.sequence();
    if let (true, Some((at, bytes))) = (first, gap) {
        problems.add(Some(at), gap_before_first_batch(bytes, sequence));
        *continuity = Continuity::new(sequence.checked_add(u64::from(batch.count())));
        return;
    }
    let expected = continuity.expected();
    match continuity.follow(batch) {
        Err(jump) => {
            let (at, reason) = jump.ending(gap, offset);
            problems.add(Some(at), format!("{reason}: recovery ends the log there"));
            // Checking goes on from this batch.
            *continuity = Continuity::new(sequence.checked_add(u64::from(batch.count())));
        }
        Ok(()) => match expected {
            Some(next) if sequence < next => problems.add(
                Some(offset),
                format!("batch sequence {sequence} goes back in time"),
            ),
            Some(next) if sequence > next => problems.add(
                Some(offset),
                format!(
                    "batches with sequence numbers {next}..{sequence} are missing before this one"
                ),
            ),
            _ => {}
        },
    }
}

/// Verifies every record of a log file and that each is a write batch using no format
/// extension but those the manifest records (`recorded`, when it could be read: recovery
/// refuses such a batch as damage); notes its value pointers in `pointers`.
fn check_log(
    dir: &Path,
    name: &str,
    options: &Options,
    recorded: Option<Extensions>,
    pointers: &mut Pointers,
    report: &mut CheckReport,
) {
    let mut problems = FileProblems::new(name);
    let source: Arc<str> = Arc::from(name);
    let mut records = 0;
    // Whether each batch continues the ones before, as recovery judges it.
    let mut continuity = Continuity::new(None);
    // The gap just before the record being read, if any.
    let mut gap = None;
    // No batch has been read yet.
    let mut before_first_batch = true;
    let mut tail = None;
    let result = for_each_record(&*options.env, &dir.join(name), true, true, &mut |item| {
        match item {
            LogItem::Gap { offset, bytes } => {
                continuity.skipped();
                gap = Some((offset, bytes));
            }
            LogItem::Damage {
                offset,
                bytes,
                reason,
            } => {
                problems.add(offset, format!("{reason} ({bytes} bytes dropped)"));
                continuity.skipped();
            }
            LogItem::Tail { offset, bytes } => tail = Some((offset, bytes)),
            LogItem::Record { offset, data } => {
                records += 1;
                match WriteBatch::from_contents(data.to_vec()) {
                    Ok(batch) => {
                        for op in batch.iter() {
                            match op {
                                Ok(BatchOp::PutSeparated { key, pointer }) => {
                                    if let Err(reason) =
                                        pointers.add(&source, Some(offset), key, pointer)
                                    {
                                        problems.add(Some(offset), reason);
                                    }
                                }
                                Ok(_) => {}
                                Err(e) => {
                                    problems.add(
                                        Some(offset),
                                        format!("bad write batch: {}", describe_in_record(&e)),
                                    );
                                    break;
                                }
                            }
                        }
                        if let Some(recorded) = recorded {
                            if let Err(e) = check_logged_batch(&batch, recorded) {
                                problems.add(Some(offset), describe_in_record(&e));
                            }
                        }
                        let gap = gap.take();
                        let first = std::mem::take(&mut before_first_batch);
                        let at = (offset, first);
                        check_sequence(&mut continuity, &batch, gap, at, &mut problems);
                    }
                    Err(e) => {
                        problems.add(
                            Some(offset),
                            format!("record is not a write batch: {}", describe_in_record(&e)),
                        );
                        gap = None;
                    }
                }
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        problems.add(None, unreadable(&e));
    }
    if let Some((offset, bytes)) = tail {
        // What a crash in the middle of a write leaves; recovery drops it the same way.
        report.notes.push(format!(
            "{name}: the last {bytes} bytes, from offset {offset}, are not a complete record \
             (a write cut short by a crash, or damage)"
        ));
    }
    report.logs += 1;
    report.log_records += records;
    problems.into_report(report);
}

/// How an error that stopped a file from being read is listed.
pub(super) fn unreadable(error: &Error) -> String {
    match error {
        Error::Corruption(c) => c.reason.clone(),
        other => format!("cannot be read: {other}"),
    }
}
