//! Replaying write-ahead logs: the rules open (`db/open.rs`) and a read-only handle's refresh
//! (`db/read_only.rs`) share.
//!
//! - [`LogBatches`] reads the write batches of one log, from its start or from where an earlier
//!   read of it stopped. Damage the log reader skips is noted in the info log, or fails the
//!   replay under `paranoid_checks`; a record that does not decode as a batch (or runs past the
//!   largest sequence number) is skipped the same way; a read error always fails, since the
//!   unread rest of the log may hold acknowledged writes. A log cut short — a crash in the
//!   middle of a write, or a writer still appending — ends at its last whole record. After a
//!   gap (zeros followed by data: `log/reader.rs`) or damage, the log goes on only while the
//!   batches continue the sequence numbers exactly (`db/log_continuity.rs`); the first that
//!   does not ends it, noted in the info log and, for a gap, reported as damage (so fatal
//!   under `paranoid_checks`). A gap that the batches after it continue is no damage, except
//!   before a log's first batch: replayed, but reported as damage (see `db/log_continuity.rs`).
//!   A read does not end past a gap or damage that only unusable records follow: a later read
//!   going on from where it ended (a read-only handle's) must still see the gap or damage and
//!   demand that the next batch continue exactly.
//! - [`Sequences`] checks that each log continues the sequence numbers where the tables and the
//!   logs before it end (see `db/wal.rs`): a log whose first write starts past that point lost
//!   its predecessor's tail to a power loss, or, beside a live writer, was read before the end
//!   of its predecessor was; it and every later log are then left out, keeping a prefix of the
//!   writes.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use super::log_continuity::{gap_before_first_batch, Continuity, Jump};
use super::write::{check_logged_batch, insert_into_memtable};
use super::InfoLog;
use crate::env::Env;
use crate::error::{Error, Result};
use crate::extension::Extensions;
use crate::filename::{parse_own_file_name, FileType};
use crate::log::{LogReader, Reporter};
use crate::memtable::MemTable;
use crate::write_batch::WriteBatch;

/// The numbers of the logs in `names` (a directory listing) that recovery replays: from
/// `log_number` on, and `prev_log_number` (which older LevelDBs could leave); sorted.
pub(crate) fn live_logs(names: &[String], log_number: u64, prev_log_number: u64) -> Vec<u64> {
    let mut logs: Vec<u64> = names
        .iter()
        .filter_map(|name| match parse_own_file_name(name) {
            Some((number, FileType::Log)) if number >= log_number || number == prev_log_number => {
                Some(number)
            }
            _ => None,
        })
        .collect();
    logs.sort_unstable();
    logs
}

/// What a [`LogReader`] reported while reading one log.
#[derive(Default)]
struct Damage {
    /// The first corruption (fatal under `paranoid_checks`).
    first: Option<Error>,
    /// A read error: always fatal.
    read_error: Option<Error>,
    /// One line per drop, for the info log.
    dropped: Vec<String>,
    /// Set for a read beside a live writer ([`LogBatches::beside_writer`]): corruption is
    /// held here instead of being dropped and noted, and ends the read.
    withhold: bool,
    /// The first corruption withheld since [`LogBatches::next`] last looked.
    withheld: Option<Error>,
}

/// Collects log corruption (noted always, fatal under `paranoid_checks`) and read errors.
struct LogReporter {
    file: String,
    damage: Arc<Mutex<Damage>>,
}

impl Reporter for LogReporter {
    fn corruption(&mut self, bytes: u64, reason: &Error) {
        let reason = reason.clone().in_file(&self.file);
        let mut damage = self.damage.lock();
        if !reason.is_corruption() {
            damage.read_error.get_or_insert(reason);
            return;
        }
        if damage.withhold {
            damage.withheld.get_or_insert(reason);
            return;
        }
        damage
            .dropped
            .push(format!("dropping {bytes} bytes: {reason}"));
        damage.first.get_or_insert(reason);
    }
}

/// A batch read back from a log.
pub(crate) struct LoggedBatch {
    pub(crate) batch: WriteBatch,
    /// File offset of the record holding it.
    pub(crate) offset: u64,
    /// File offset just past that record: where a later read of the log goes on.
    pub(crate) end: u64,
    /// The record is the log's first and nothing before it was dropped: its sequence number
    /// shows where the log starts.
    pub(crate) starts_log: bool,
}

/// How a log's replay ended.
pub(crate) struct LogEnd {
    /// File offset just past the last whole record read (`from` if none was), or before the
    /// gap or damage that only unusable records followed.
    pub(crate) clean_end: u64,
    /// Damage was skipped.
    pub(crate) damaged: bool,
}

/// The write batches of one log, in order; see the module documentation.
pub(crate) struct LogBatches {
    path: PathBuf,
    number: u64,
    reader: LogReader,
    scratch: Vec<u8>,
    damage: Arc<Mutex<Damage>>,
    paranoid_checks: bool,
    /// The format extensions the manifest records: a batch using another is damage.
    recorded: Extensions,
    /// No record has been returned yet, and the read started at the log's start.
    at_start: bool,
    from: u64,
    continuity: Continuity,
    /// Damage reports seen so far (new ones mean something was skipped).
    reports_seen: usize,
    /// Set when a batch broke the continuity after a gap or damage, or (beside a writer) at
    /// damage: the file offset where the log ended for this read (past the last batch
    /// returned).
    ended_at: Option<u64>,
    /// The damage that jump or that damage is, reported by [`LogBatches::finish`] unless
    /// excused first.
    jump: Option<Error>,
    /// Set while a gap or damage is followed by unusable records only: the file offset
    /// before that gap or damage, past which the read does not end (a later read going on
    /// past the unusable records would no longer know that its first batch must continue
    /// the ones before the gap exactly).
    unresolved: Option<u64>,
}

impl LogBatches {
    /// Opens log `number` at `path`, to read the records that start at or after file offset
    /// `from` (0: the whole log; otherwise where an earlier read's whole records ended).
    /// `recorded`: the format extensions the manifest records (see `check_logged_batch`).
    /// `expected`: the sequence number the first batch read is due to start at, if known.
    pub(crate) fn open(
        env: &dyn Env,
        path: &Path,
        number: u64,
        from: u64,
        paranoid_checks: bool,
        recorded: Extensions,
        expected: Option<u64>,
    ) -> Result<LogBatches> {
        let file = env.new_sequential_file(path)?;
        let damage = Arc::new(Mutex::new(Damage::default()));
        let reporter = LogReporter {
            file: path.display().to_string(),
            damage: Arc::clone(&damage),
        };
        Ok(LogBatches {
            path: path.to_path_buf(),
            number,
            reader: LogReader::new(file, Some(Box::new(reporter)), true, from).write_ahead_log(),
            scratch: Vec::new(),
            damage,
            paranoid_checks,
            recorded,
            at_start: from == 0,
            from,
            continuity: Continuity::new(expected),
            reports_seen: 0,
            ended_at: None,
            jump: None,
            unresolved: None,
        })
    }

    /// This read for a reader beside a live writer (a read-only handle reading the newest
    /// log, `db/read_only.rs`): damage the log reader finds may be a record the writer is
    /// still copying (the kernel copies a `read` in no promised order, so the header may be
    /// seen before all of the payload: a checksum mismatch). It ends the read, before the
    /// record it spoils, as a jump does: [`LogBatches::excuse_jump`] lets the caller read
    /// again from there, and [`LogBatches::finish`] reports it otherwise.
    pub(crate) fn beside_writer(self) -> LogBatches {
        self.damage.lock().withhold = true;
        self
    }

    /// The next batch, or `None` at the end of the log.
    pub(crate) fn next(&mut self, info_log: &InfoLog) -> Result<Option<LoggedBatch>> {
        loop {
            if self.ended_at.is_some() {
                return Ok(None);
            }
            let before = self.reader.end_of_last_record().max(self.from);
            let record = self
                .reader
                .read_record(&mut self.scratch)
                .map(<[u8]>::to_vec);
            if let Some(e) = self.damage.lock().withheld.take() {
                self.jump = Some(e);
                self.ended_at = Some(self.unresolved.unwrap_or(before));
                return Ok(None);
            }
            let Some(contents) = record else {
                return Ok(None);
            };
            let offset = self.reader.last_record_offset();
            let end = self.reader.end_of_last_record();
            let gap = self.reader.take_gap();
            let reports = self.damage.lock().dropped.len();
            if gap.is_some() || std::mem::replace(&mut self.reports_seen, reports) != reports {
                self.continuity.skipped();
            }
            let starts_log = std::mem::replace(&mut self.at_start, false) && reports == 0;
            if self.paranoid_checks {
                if let Some(e) = self.damage.lock().first.take() {
                    return Err(e);
                }
            }
            let decoded = WriteBatch::from_contents(contents)
                .and_then(|batch| check_logged_batch(&batch, self.recorded).map(|_| batch));
            let batch = match decoded {
                Ok(batch) => batch,
                // A whole record (its checksum held): no gap in the log, just a batch that
                // cannot be used; the batches after it are taken as they come.
                Err(e) => {
                    self.skip_record(info_log, e, offset)?;
                    if self.continuity.skip_pending() {
                        self.unresolved.get_or_insert(before);
                    }
                    continue;
                }
            };
            if let Err(jump) = self.continuity.follow(&batch) {
                self.end_at_jump(gap, offset, &jump);
                self.ended_at = Some(self.unresolved.unwrap_or(before));
                return Ok(None);
            }
            self.unresolved = None;
            if let (true, Some((at, bytes))) = (starts_log, gap) {
                let reason = gap_before_first_batch(bytes, batch.sequence());
                let e = Error::corruption_at(at, reason).in_file(self.path.display());
                let mut damage = self.damage.lock();
                damage.dropped.push(e.to_string());
                damage.first.get_or_insert(e);
            }
            return Ok(Some(LoggedBatch {
                batch,
                offset,
                end,
                starts_log,
            }));
        }
    }

    /// Ends the log before the record at `offset`, whose batch does not continue the ones
    /// before a gap or damage: damage (at the gap, if there is one), reported by `finish`.
    fn end_at_jump(&mut self, gap: Option<(u64, u64)>, offset: u64, jump: &Jump) {
        let (at, reason) = jump.ending(gap, offset);
        let e = Error::corruption_at(at, format!("{reason}: the log ends here"))
            .in_file(self.path.display());
        self.jump = Some(e);
    }

    /// Whether the read ended at a jump (or, [`LogBatches::beside_writer`], at damage), which
    /// `finish` then does not report: for a reader beside a live writer, which may have seen a
    /// record still being copied (zeros, or part of its payload) and the records after it, and
    /// will read the log again from where this read ended.
    pub(crate) fn excuse_jump(&mut self) -> bool {
        self.jump.take().is_some()
    }

    /// Applies a batch read from this log to `mem`; one that cannot be applied is skipped as
    /// a damaged record is.
    pub(crate) fn apply(
        &self,
        logged: &LoggedBatch,
        mem: &MemTable,
        info_log: &InfoLog,
    ) -> Result<bool> {
        match insert_into_memtable(&logged.batch, mem) {
            Ok(()) => Ok(true),
            Err(e) => self.skip_record(info_log, e, logged.offset).map(|()| false),
        }
    }

    /// Skips a record that could not be used: fails under `paranoid_checks`, notes it otherwise.
    fn skip_record(&self, info_log: &InfoLog, e: Error, offset: u64) -> Result<()> {
        let e = e.offset_by(offset).in_file(self.path.display());
        if self.paranoid_checks {
            return Err(e);
        }
        info_log.log(format_args!("ignoring log record: {e}"));
        Ok(())
    }

    /// Ends the read: fails on a read error, and on damage under `paranoid_checks`; notes what
    /// was dropped.
    pub(crate) fn finish(self, info_log: &InfoLog) -> Result<LogEnd> {
        let clean_end = self
            .ended_at
            .or(self.unresolved)
            .unwrap_or_else(|| self.reader.end_of_last_record().max(self.from));
        drop(self.reader);
        let mut damage = self.damage.lock();
        if let Some(e) = damage.read_error.take() {
            return Err(e);
        }
        if let Some(e) = self.jump {
            damage.dropped.push(format!("ending the log: {e}"));
            damage.first.get_or_insert(e);
        }
        for line in &damage.dropped {
            info_log.log(format_args!("log #{}: {line}", self.number));
        }
        let damaged = match damage.first.take() {
            Some(e) if self.paranoid_checks => return Err(e),
            Some(_) => true,
            None => false,
        };
        Ok(LogEnd { clean_end, damaged })
    }
}

/// The sequence numbers replayed so far, checked log by log; see the module documentation.
pub(crate) struct Sequences {
    /// The largest sequence number replayed.
    pub(crate) max_sequence: u64,
    /// The sequence number with which the next log must start to continue the tables and the
    /// logs before it.
    next_sequence: u64,
    /// Whether the next log must start there; not when the log before it is missing, which
    /// lost its writes to damage (reported apart), not to a power loss.
    check_start: bool,
    /// Whether the log being read must start there.
    checking: bool,
    /// Set when a log started past `next_sequence`: that log and every later one are skipped.
    pub(crate) gap: bool,
}

impl Sequences {
    /// Checking starts after `last_sequence`, the last sequence the manifest records (and any
    /// sequence replayed before). `check_first` is false when the first log to replay follows
    /// a missing one.
    pub(crate) fn new(last_sequence: u64, check_first: bool) -> Sequences {
        Sequences {
            max_sequence: 0,
            next_sequence: last_sequence + 1,
            check_start: check_first,
            checking: check_first,
            gap: false,
        }
    }

    /// Starts the next log; returns the sequence number its first write is expected to have.
    pub(crate) fn start_log(&mut self) -> u64 {
        self.checking = std::mem::replace(&mut self.check_start, true);
        self.next_sequence
    }

    /// The sequence number the log being started must start at, when it is checked.
    pub(crate) fn expected_start(&self) -> Option<u64> {
        self.checking.then_some(self.next_sequence)
    }

    /// Whether `logged` (from log `number`) continues the writes before it. When it does not,
    /// the writes between were lost or are not written yet: [`Sequences::gap`] is set and the
    /// rest of this log and the later logs must be skipped.
    pub(crate) fn admit(&mut self, logged: &LoggedBatch, number: u64, info_log: &InfoLog) -> bool {
        let sequence = logged.batch.sequence();
        if !logged.starts_log || sequence <= self.next_sequence {
            return true;
        }
        if !self.checking {
            // The writes before this log went with the missing one: go on from here.
            self.next_sequence = sequence;
            return true;
        }
        info_log.log(format_args!(
            "log #{number} starts at sequence {sequence} but the writes before it end at {}: \
             the writes between are missing; leaving out this log and later ones",
            self.next_sequence - 1
        ));
        self.gap = true;
        false
    }

    /// Records that `batch` was replayed.
    pub(crate) fn replayed(&mut self, batch: &WriteBatch) {
        let next = batch.sequence() + u64::from(batch.count());
        self.next_sequence = self.next_sequence.max(next);
        if batch.count() > 0 {
            self.max_sequence = self.max_sequence.max(next - 1);
        }
    }
}
