//! Read-only handles (`DB::open_read_only`): a database another process — Strata or LevelDB —
//! may be writing, opened without its `LOCK` and without writing a byte, and brought up to the
//! writer's latest state by `DB::refresh`.
//!
//! What a handle sees: the tables the manifest lists, plus the live write-ahead logs replayed
//! into private memtables (one per log) up to their last whole record, under the recovery rules
//! of open (`db/log_replay.rs`). That is a prefix of the writer's writes, as a crash at that
//! moment would have left. Its files are reached through a [`ReadOnlyEnv`], which refuses every
//! change, and writes are refused above it (`DbInner::refuse_if_read_only`).
//!
//! A refresh reads only what is new: the manifest's edits appended since
//! (`version/follow.rs`), the records appended to the logs it read before (from where it
//! stopped), and new logs. A log the manifest retires has reached the tables; its memtable is
//! dropped. The new state is published in one step under the state mutex: reads and iterators
//! begun before keep the state they began with (their `SuperVersion`), and so do snapshots,
//! which pin theirs (`snapshot.rs`).
//!
//! Races with the writer, and why each is harmless:
//! - **Deleted tables.** Every table of a version the handle reads is *pinned* (opened, and kept
//!   open, by the `ReadOnlyEnv`) before the version is published, and stays pinned while any
//!   version that needs it lives: an open file or mapping outlives its unlink. A table deleted
//!   between reading the manifest and pinning it was retired by an edit appended before the
//!   deletion: the refresh reads the manifest again and starts over. Only a table still missing
//!   while the manifest did not move is an error (a corruption naming it, as at open).
//! - **Deleted logs.** Likewise deleted only after an edit retires them: a live log found
//!   missing starts the refresh over; one missing while the manifest did not move is handled as
//!   open handles it (its writes are lost; fatal under `paranoid_checks`).
//! - **A log being appended to.** Its last record may be half-written: the handle stops at the
//!   last whole record and the next refresh goes on from there. A record read while it is
//!   being copied may look damaged (zeros, then the records after it; or its header before
//!   all of its payload, a checksum mismatch): in the newest log, the handle reads again from
//!   the last whole record a few times (about 100 ms in all) before it takes that for damage.
//! - **A new log begun before the old one's tail was read.** The new log's first write does not
//!   continue the sequence numbers read so far: it is left out, with every later log, until a
//!   refresh has read the old log's tail. Its writes were made after the old log's last one, so
//!   a refresh still sees every write acknowledged before it began.
//! - **A new manifest.** `CURRENT` names it once it is whole; the follower reads it from its
//!   start (`version/follow.rs`).
//!
//! Cost: a handle holds the records of every live log in memory (about the writer's write
//! buffer per log, plus a key filter of 1/32 of the handle's own write buffer per log) and one
//! open file per table of every version in use (mapped while the process maps fewer than 1000
//! files), whatever `max_open_files` says.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::checkpoint::{self, Capture};
use super::log_replay::{live_logs, LogBatches, Sequences};
use super::open::{new_inner, sanitize};
use super::DbInner;
use crate::env::{Env, RandomAccessFile, ReadOnlyEnv};
use crate::error::{Error, Result};
use crate::filename::{
    current_file_name, log_file_name, parse_file_name, sst_table_file_name, table_file_name,
    FileType,
};
use crate::iter::InternalIterator;
use crate::memtable::MemTable;
use crate::options::Options;
use crate::util::internal_key::{parse_internal_key, InternalKeyComparator};
use crate::version::follow::ManifestFollower;
use crate::version::version::Version;
use crate::version::version_set::VersionSet;

/// Most times one refresh starts over because the writer moved on under it.
const MAX_ATTEMPTS: usize = 100;

/// How long a read of the live log waits before reading again after a jump, doubled each
/// time, and how many times it reads again before calling the jump damage (about 100 ms in
/// all: a writer copies a record in microseconds, but may lose its core for a while).
const JUMP_RETRY_DELAY: Duration = Duration::from_micros(100);
const JUMP_RETRIES: u32 = 10;

/// What a read-only handle has read of the writer's files. Used by one refresh at a time
/// (`DbInner::read_only` is its mutex).
pub(crate) struct Follower {
    manifest: ManifestFollower,
    /// The live logs read so far, oldest first, each with its records.
    logs: Vec<FollowedLog>,
    env: Arc<ReadOnlyEnv>,
    /// The largest sequence number replayed from any log.
    max_replayed: u64,
    /// The memtable reads use while no live log has records.
    empty: Arc<MemTable>,
    /// The last version whose tables were all pinned: a refresh that finds the manifest
    /// unchanged skips pinning them again.
    pinned: Option<Arc<Version>>,
    /// The older logs' records in one memtable, when more than two logs are live.
    merged: Option<Merged>,
}

/// Several logs' records in one memtable, with the logs (number, end) it was built from.
type Merged = (Vec<(u64, u64)>, Arc<MemTable>);

/// One live log: where its whole records end, the memtable they were replayed into, and the
/// file, held open so a checkpoint can copy those records after the writer deleted it.
struct FollowedLog {
    number: u64,
    end: u64,
    /// The sequence number the batch at `end` is due to start at: where the last batch read
    /// from this log ends. A read going on from `end` takes a batch after a gap or damage only
    /// if it starts there, as one read of the whole log would.
    next: Option<u64>,
    mem: Arc<MemTable>,
    file: Arc<dyn RandomAccessFile>,
}

/// Which log [`Follower::read_log`] reads, and how.
#[derive(Clone, Copy)]
struct LogRead {
    number: u64,
    /// The newest log: a writer may be appending to it.
    live: bool,
    /// A file found missing is missing for good (see the module documentation).
    settled: bool,
}

/// Why an attempt to catch up did not finish.
enum Attempt {
    /// The writer deleted a file the attempt needed: read the manifest again.
    Retry(Error),
    Failed(Error),
}

impl From<Error> for Attempt {
    fn from(e: Error) -> Attempt {
        Attempt::Failed(e)
    }
}

fn is_not_found(e: &Error) -> bool {
    matches!(e, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
}

/// Opens the database in `dir` read-only; see `DB::open_read_only`.
pub(crate) fn open(dir: &Path, options: Options) -> Result<Arc<DbInner>> {
    if options.value_separation.is_some() {
        // A writer in another process deletes value files without knowing this handle's
        // readers (tables are pinned open; value files are opened as values are read).
        return Err(Error::NotSupported(
            "read-only handles of a database with Options::value_separation are not supported \
             yet: the writer may delete value files they still need"
                .into(),
        ));
    }
    let options = Arc::new(sanitize(options));
    let env = Arc::new(ReadOnlyEnv::new(Arc::clone(&options.env)));
    // A `CURRENT` that cannot be reached (a directory this user may not enter) is that error,
    // not a missing database.
    match env.file_size(&current_file_name(dir)) {
        Err(e) if is_not_found(&e) => {
            return Err(Error::InvalidArgument(format!(
                "{}: does not exist (a read-only open does not create it)",
                dir.display()
            )))
        }
        Err(e) => return Err(e),
        Ok(_) => {}
    }
    let icmp = InternalKeyComparator::new(Arc::clone(&options.comparator));
    let as_env: Arc<dyn Env> = Arc::clone(&env) as _;
    let manifest = ManifestFollower::open(
        Arc::clone(&as_env),
        dir,
        &icmp,
        options.extensions(),
        options.paranoid_checks,
    )?;
    let torn = manifest.damaged_tail().map(Error::to_string);
    let follower = Follower {
        manifest,
        logs: Vec::new(),
        env,
        max_replayed: 0,
        empty: Arc::new(MemTable::new(icmp.clone())),
        pinned: None,
        merged: None,
    };
    let db = new_inner(dir, options, as_env, Some(follower));
    if let Some(torn) = torn {
        db.info_log.log(format_args!(
            "skipped a torn edit at the manifest's end: {torn}"
        ));
    }
    refresh(&db)?;
    db.info_log.log(format_args!(
        "opened read-only: last sequence {}",
        db.state.lock().versions.last_sequence
    ));
    Ok(db)
}

/// Catches a read-only handle up with the writer; see `DB::refresh`. Nothing to do for a
/// handle that writes.
pub(crate) fn refresh(db: &DbInner) -> Result<()> {
    let Some(follower) = &db.read_only else {
        return Ok(());
    };
    let mut follower = follower.lock();
    let mut failed_at = None;
    for _ in 0..MAX_ATTEMPTS {
        follower.manifest.refresh()?;
        let position = follower.manifest.position();
        // A file still missing while the manifest did not move is missing for good.
        let settled = failed_at == Some(position);
        match follower.catch_up(db, settled) {
            Ok(()) => return Ok(()),
            Err(Attempt::Retry(_)) if !settled => failed_at = Some(position),
            Err(Attempt::Retry(e) | Attempt::Failed(e)) => return Err(e),
        }
    }
    Err(Error::Io {
        context: format!(
            "refreshing {}: the writer kept deleting files before they could be opened",
            db.dir.display()
        ),
        source: Arc::new(std::io::Error::from(std::io::ErrorKind::TimedOut)),
    })
}

impl Follower {
    /// Pins the manifest's tables, reads the live logs' new records and publishes the result.
    /// `settled`: a file found missing is missing for good (see the module documentation).
    fn catch_up(&mut self, db: &DbInner, settled: bool) -> std::result::Result<(), Attempt> {
        let version = Arc::clone(self.manifest.version());
        let pinned = self
            .pinned
            .as_ref()
            .is_some_and(|p| Arc::ptr_eq(p, &version));
        for file in version.files.iter().flatten().filter(|_| !pinned) {
            match self.pin_table(&db.dir, file.number()) {
                Ok(()) => {}
                Err(e) if is_not_found(&e) => {
                    let table = table_file_name(&db.dir, file.number());
                    return Err(self.gone(settled, || {
                        format!(
                            "table {} listed in the manifest is missing",
                            table.display()
                        )
                    }));
                }
                Err(e) => return Err(e.into()),
            }
        }
        self.read_logs(db, settled)?;
        self.publish(db);
        self.pinned = Some(version);
        Ok(())
    }

    /// A file the manifest needs is missing: a retry while the writer may have deleted it
    /// after an edit not read yet, else the corruption `what` describes.
    fn gone(&self, settled: bool, what: impl FnOnce() -> String) -> Attempt {
        let e = Error::corruption(what()).in_file(self.manifest.manifest_path().display());
        if settled {
            Attempt::Failed(e)
        } else {
            Attempt::Retry(e)
        }
    }

    /// Pins table `number` (`.ldb`, or LevelDB's older `.sst`).
    fn pin_table(&self, dir: &Path, number: u64) -> Result<()> {
        let ldb = table_file_name(dir, number);
        let sst = sst_table_file_name(dir, number);
        if self.env.is_pinned(&ldb) || self.env.is_pinned(&sst) {
            return Ok(());
        }
        self.env
            .pin(&ldb)
            .or_else(|e| self.env.pin(&sst).map_err(|_| e))
    }

    /// Reads the live logs' records past where the last refresh stopped.
    fn read_logs(&mut self, db: &DbInner, settled: bool) -> std::result::Result<(), Attempt> {
        let log_number = self.manifest.log_number();
        let prev_log = self.manifest.prev_log_number();
        let live = |number: u64| number >= log_number || number == prev_log;
        let on_disk = live_logs(&db.env.children(&db.dir)?, log_number, prev_log);
        // Logs the manifest retired are in its tables now.
        self.logs.retain(|log| live(log.number));

        let first_missing = log_number > 0 && !on_disk.contains(&log_number);
        if first_missing {
            let gone = self.gone(settled, || {
                format!(
                    "{}, the log the manifest names, is missing: the writes it held are lost",
                    log_file_name(&db.dir, log_number).display()
                )
            });
            match gone {
                Attempt::Failed(e) if !db.options.paranoid_checks => {
                    db.info_log.log(format_args!("{e}"))
                }
                other => return Err(other),
            }
        }
        let start = self.manifest.last_sequence().max(self.max_replayed);
        let mut sequences = Sequences::new(start, !first_missing);
        let mut result = Ok(());
        let newest = on_disk.last().copied();
        for number in on_disk {
            sequences.start_log();
            let read = LogRead {
                number,
                live: Some(number) == newest,
                settled,
            };
            result = self.read_log(db, read, &mut sequences);
            if result.is_err() || sequences.gap {
                break;
            }
        }
        // Also when a log failed: the records replayed before it are in their memtables, and
        // their logs' ends moved past them, so no later refresh replays them again. Left
        // uncounted, they would stay hidden, and the next log would seem to start past a gap.
        self.max_replayed = self.max_replayed.max(sequences.max_sequence);
        result
    }

    /// Reads a log from where the last refresh stopped (its start, if never read). The newest
    /// log may be the one a writer is appending to: a jump found in it (a record still being
    /// copied, read as zeros, then the records the writer appended after it) or damage (its
    /// header read before all of its payload) is read again a few times before it counts as
    /// damage. A jump in an older log, which the writer finished, is damage at once.
    fn read_log(
        &mut self,
        db: &DbInner,
        read: LogRead,
        sequences: &mut Sequences,
    ) -> std::result::Result<(), Attempt> {
        let mut delay = JUMP_RETRY_DELAY;
        for _ in 0..JUMP_RETRIES {
            if !self.read_log_once(db, read, sequences, read.live)? {
                return Ok(());
            }
            std::thread::sleep(delay);
            delay *= 2;
        }
        self.read_log_once(db, read, sequences, false).map(|_| ())
    }

    /// One read of [`Follower::read_log`]; with `excuse_jump`, a read that ends at a jump or
    /// at damage (`LogBatches::beside_writer`) reports nothing and returns `true`: read again
    /// from where it ended.
    fn read_log_once(
        &mut self,
        db: &DbInner,
        LogRead {
            number, settled, ..
        }: LogRead,
        sequences: &mut Sequences,
        excuse_jump: bool,
    ) -> std::result::Result<bool, Attempt> {
        let index = self.logs.iter().position(|log| log.number == number);
        let (from, expected) = match index {
            Some(i) => (self.logs[i].end, self.logs[i].next),
            None => (0, sequences.expected_start()),
        };
        let path = log_file_name(&db.dir, number);
        let opened = LogBatches::open(
            &*db.env,
            &path,
            number,
            from,
            db.options.paranoid_checks,
            self.manifest.extensions(),
            expected,
        );
        let mut batches = match opened {
            Ok(batches) if excuse_jump => batches.beside_writer(),
            Ok(batches) => batches,
            // Deleted since the directory was listed: the manifest has moved on.
            Err(e) if is_not_found(&e) && !settled => return Err(Attempt::Retry(e)),
            Err(e) if is_not_found(&e) => return Ok(false),
            Err(e) => return Err(e.into()),
        };
        let mut index = index;
        while let Some(logged) = batches.next(&db.info_log)? {
            if !sequences.admit(&logged, number, &db.info_log) {
                // Left out for now (a new log, so nothing of it is kept).
                return Ok(false);
            }
            let i = match index {
                Some(i) => i,
                None => {
                    let Some(file) = open_log(db, &path, settled)? else {
                        return Ok(false);
                    };
                    let at = self.logs.partition_point(|log| log.number < number);
                    self.logs.insert(
                        at,
                        FollowedLog {
                            number,
                            end: 0,
                            next: None,
                            mem: db.new_memtable(),
                            file,
                        },
                    );
                    *index.insert(at)
                }
            };
            let log = &mut self.logs[i];
            // Records past the published last sequence stay invisible until `publish`.
            if batches.apply(&logged, &log.mem, &db.info_log)? {
                sequences.replayed(&logged.batch);
            }
            log.end = logged.end;
            log.next = logged
                .batch
                .sequence()
                .checked_add(u64::from(logged.batch.count()));
        }
        let again = excuse_jump && batches.excuse_jump();
        let end = batches.finish(&db.info_log)?;
        if let Some(i) = index {
            let log = &mut self.logs[i];
            log.end = end.clean_end;
            if log.end > from {
                // Opened again now that its new records are read: a mapping taken before
                // ends where the file ended then, and a checkpoint must copy those records
                // from it even after the writer deleted the log.
                if let Some(file) = open_log(db, &path, settled)? {
                    log.file = file;
                }
            }
        }
        Ok(again)
    }

    /// Makes the version read and the logs' records what reads see, and unpins the tables no
    /// version in use needs any more.
    fn publish(&mut self, db: &DbInner) {
        let (mem, imm) = self.memtables(&db.icmp);
        let last_sequence = self.manifest.last_sequence().max(self.max_replayed);
        let live = {
            let mut state = db.state.lock();
            state.versions.adopt(&self.manifest);
            state.versions.last_sequence = state.versions.last_sequence.max(last_sequence);
            state.mem = mem;
            state.imm = imm;
            state.refresh_super_version();
            state.versions.live_files()
        };
        self.env.retain(|path| {
            let number = path
                .file_name()
                .and_then(|name| parse_file_name(&name.to_string_lossy()));
            match number {
                Some((number, FileType::Table)) if !live.contains(&number) => {
                    db.table_cache.evict(number);
                    false
                }
                _ => true,
            }
        });
    }

    /// What a checkpoint of this handle copies: the published version and the live logs up to
    /// where they were read. `versions` is the state the handle published (under its mutex).
    pub(super) fn capture(&self, versions: &VersionSet) -> Capture {
        Capture {
            edit: checkpoint::counters(versions),
            version: Arc::clone(versions.current()),
            logs: self
                .logs
                .iter()
                .map(|log| (log.number, log.end, Arc::clone(&log.file)))
                .collect(),
        }
    }

    /// The memtables reads consult: the newest log's, and the older logs' (merged into one
    /// when there are several, which only a writer that crashed with many logs leaves).
    fn memtables(
        &mut self,
        icmp: &InternalKeyComparator,
    ) -> (Arc<MemTable>, Option<Arc<MemTable>>) {
        let Some((newest, older)) = self.logs.split_last() else {
            return (Arc::clone(&self.empty), None);
        };
        if older.len() < 2 {
            self.merged = None;
        }
        let imm = match older {
            [] => None,
            [one] => Some(Arc::clone(&one.mem)),
            several => {
                let key: Vec<(u64, u64)> = several.iter().map(|l| (l.number, l.end)).collect();
                let merged = match &self.merged {
                    Some((built_from, mem)) if *built_from == key => Arc::clone(mem),
                    _ => {
                        let mem = Arc::new(merge(icmp, several.iter().map(|log| &log.mem)));
                        self.merged = Some((key, Arc::clone(&mem)));
                        mem
                    }
                };
                Some(merged)
            }
        };
        (Arc::clone(&newest.mem), imm)
    }
}

/// Opens the log at `path` to keep it; `None` if it is missing for good (`settled`), a retry
/// if the writer may have deleted it after an edit not read yet.
fn open_log(
    db: &DbInner,
    path: &Path,
    settled: bool,
) -> std::result::Result<Option<Arc<dyn RandomAccessFile>>, Attempt> {
    match db.env.new_held_random_access_file(path) {
        Ok(file) => Ok(Some(file)),
        Err(e) if is_not_found(&e) && !settled => Err(Attempt::Retry(e)),
        Err(e) if is_not_found(&e) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// One memtable holding every entry and range tombstone of `mems`.
fn merge<'a>(
    icmp: &InternalKeyComparator,
    mems: impl Iterator<Item = &'a Arc<MemTable>>,
) -> MemTable {
    let merged = MemTable::new(icmp.clone());
    let mut writer = merged.writer();
    for mem in mems {
        let mut iter = mem.iter();
        iter.seek_to_first();
        while iter.valid() {
            if let Some(key) = parse_internal_key(iter.key()) {
                writer.add(key.sequence, key.value_type, key.user_key, iter.value());
            }
            iter.next();
        }
        for tombstone in mem.range_tombstones().iter().flat_map(|t| t.tombstones()) {
            writer.add_range_deletion(tombstone.sequence, &tombstone.start, &tombstone.end);
        }
    }
    drop(writer);
    merged
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::comparator::BytewiseComparator;
    use crate::util::internal_key::ValueType;

    #[test]
    fn merging_older_logs_keeps_their_range_deletions() {
        let icmp = InternalKeyComparator::new(BytewiseComparator::shared());
        let older = Arc::new(MemTable::new(icmp.clone()));
        older.writer().add(1, ValueType::Value, b"b", b"1");
        older.writer().add_range_deletion(2, b"a", b"c");
        let newer = Arc::new(MemTable::new(icmp.clone()));
        newer.writer().add(3, ValueType::Value, b"x", b"3");
        newer.writer().add_range_deletion(4, b"w", b"y");
        let merged = merge(&icmp, [&older, &newer].into_iter());
        assert_eq!(merged.get(b"b", 9).map(|e| e.value), Some(&b"1"[..]));
        let tombstones = merged
            .range_tombstones()
            .expect("the logs' range deletions");
        assert_eq!(tombstones.newest_covering(b"b", 9), Some(2));
        assert_eq!(tombstones.newest_covering(b"x", 9), Some(4));
        assert_eq!(tombstones.newest_covering(b"x", 3), None);
        assert_eq!(merged.len(), 4);
    }
}
