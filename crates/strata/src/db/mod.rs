//! The database: open and recovery, write path, read path, snapshots, properties, repair.
//!
//! Data flows one way: a write is grouped with concurrent writes (`write`), appended to the
//! write-ahead log and applied to the memtable; a full memtable becomes immutable and a
//! background thread flushes it to a table (`flush`), then background threads compact tables
//! down the levels (`background` chooses the jobs, `compaction_job` runs one). Reads (`read`) consult the memtable, the immutable memtable and
//! the current version's tables, newest first.
//!
//! Locking: one mutex guards [`DbState`]. It is never held over file I/O except for short
//! metadata operations (creating a new log when the memtable is switched). The write-ahead log
//! writer has its own mutex, held only by the current write-group leader, taken after the state
//! mutex. Version edits take turns (`DbInner::edit_turn`, taken before the state mutex;
//! `edits`). Readers without a
//! snapshot take no lock at all: they load the published [`SuperVersion`] and sequence number
//! (`published`) and read immutable data.

mod background;
mod checkpoint;
mod compaction_job;
mod destroy;
mod edits;
mod flush;
mod info_log;
mod iterator;
mod log_closer;
pub(crate) mod log_continuity;
mod log_replay;
mod manual_compaction;
mod obsolete_files;
mod open;
mod panics;
mod properties;
mod published;
mod read;
mod read_only;
mod repair;
mod sync_rejoin;
mod table_build;
mod value_files;
mod value_gc;
mod wal;
mod write;
mod write_pace;
mod write_stalls;

/// How `check` judges a logged batch, as recovery does.
#[cfg(feature = "tools")]
pub(crate) use write::check_logged_batch;

use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, OnceLock, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

use crate::compaction::running::Running;
use crate::env::{Env, FileLock};
use crate::error::{Error, Result};
use crate::memtable::MemTable;
use crate::options::{Options, ReadOptions, WriteOptions};
use crate::range_del::Fragments;
use crate::snapshot::{Snapshot, SnapshotList};
use crate::util::internal_key::InternalKeyComparator;
use crate::version::edit::VersionEdit;
use crate::version::table_cache::TableCache;
use crate::version::version::Version;
use crate::version::version_set::VersionSet;
use crate::version::NUM_LEVELS;
use crate::vlog::reader::ValueFiles;
use crate::vlog::Lane;
use crate::write_batch::WriteBatch;

use published::Published;

pub use iterator::{Cursor, DbIterator, KeyIterator};

pub(crate) use info_log::InfoLog;
use value_files::ValueLane;

/// Most deletions [`DB::clear_range`] writes in one batch.
pub const CLEAR_RANGE_BATCH: usize = 1000;

/// A level's number and the range tombstones of its tables, merged.
pub(crate) type LevelTombstones = (usize, Arc<Fragments>);

/// What a reader needs to see a consistent state: both memtables and the table layout.
/// Replaced (never changed) whenever one of them changes.
pub(crate) struct SuperVersion {
    pub(crate) mem: Arc<MemTable>,
    pub(crate) imm: Option<Arc<MemTable>>,
    pub(crate) version: Arc<Version>,
    /// The range tombstones of the tables of `version`, merged per level (level 0's tables
    /// together), for the levels that have any: built by the first iterator that needs them
    /// (`db/read.rs`).
    pub(crate) table_tombstones: OnceLock<Arc<[LevelTombstones]>>,
    /// The last sequence number when this view was made: every write up to it is in the view,
    /// whole. A read of the view without a snapshot reads at least at it
    /// (`db/published.rs`): compactions in its tables may have dropped versions older than
    /// it that a read at an older sequence number would need.
    pub(crate) sequence: u64,
}

impl SuperVersion {
    /// The memtables, newest first.
    pub(crate) fn memtables(&self) -> impl Iterator<Item = &Arc<MemTable>> {
        std::iter::once(&self.mem).chain(self.imm.as_ref())
    }
}

/// Per-level compaction statistics for `leveldb.stats`.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct LevelStats {
    pub(crate) micros: u64,
    pub(crate) bytes_read: u64,
    pub(crate) bytes_written: u64,
}

impl LevelStats {
    pub(crate) fn add(&mut self, other: &LevelStats) {
        // Saturating: byte counts derive from file sizes a damaged manifest may inflate.
        self.micros = self.micros.saturating_add(other.micros);
        self.bytes_read = self.bytes_read.saturating_add(other.bytes_read);
        self.bytes_written = self.bytes_written.saturating_add(other.bytes_written);
    }
}

/// A `compact_range` request handed to the background threads.
pub(crate) struct ManualCompaction {
    pub(crate) level: usize,
    pub(crate) begin: Option<Vec<u8>>,
    pub(crate) end: Option<Vec<u8>>,
    /// For a compaction of `level` into itself: the files of the level still to rewrite.
    pub(crate) in_place: Option<HashSet<u64>>,
    pub(crate) done: bool,
    /// A step is in flight: the next is picked from the version it leaves.
    pub(crate) running: bool,
}

/// Everything guarded by the DB mutex.
pub(crate) struct DbState {
    /// The memtable taking writes.
    pub(crate) mem: Arc<MemTable>,
    /// The memtable being flushed, if any.
    pub(crate) imm: Option<Arc<MemTable>>,
    pub(crate) versions: VersionSet,
    /// Number of the write-ahead log that `mem` is backed by.
    pub(crate) log_file_number: u64,
    /// The sequence number of that log's first write: every write before it is in older logs
    /// or in tables (see `db/wal.rs`).
    pub(crate) log_first_sequence: u64,
    /// The first background failure; once set, every write fails with it.
    pub(crate) bg_error: Option<Error>,
    pub(crate) manual: Option<ManualCompaction>,
    /// Table numbers being written by background work, protected from deletion.
    pub(crate) pending_outputs: HashSet<u64>,
    pub(crate) stats: [LevelStats; NUM_LEVELS],
    /// Whether a writer is leading a write group (see `db/write.rs`).
    pub(crate) leading: bool,
    /// A write switched the memtable and has not yet woken the flush thread for it
    /// (`write::announce_flush`).
    pub(crate) flush_unannounced: bool,
    /// Writers queued behind the leader, in arrival order.
    pub(crate) writers: VecDeque<Arc<write::Writer>>,
    /// Whom the next synced write group waits for (`db/sync_rejoin.rs`).
    pub(crate) sync_rejoin: sync_rejoin::SyncRejoin,
    /// How far writes are behind the pace level 0 allows (`db/write_pace.rs`).
    pub(crate) write_pace: write_pace::WritePace,
    /// The current super version and last sequence number, as reads load them without this
    /// mutex; changed only with it held (shared with [`DbInner::published`]).
    pub(crate) published: Arc<Published>,
    /// Every super version made, as long as something holds it (value-file deletion looks
    /// at them all: `db/value_files.rs`).
    pub(crate) super_versions: Vec<Weak<SuperVersion>>,
    /// The background threads that have looked for work once (`background::spawn_workers`
    /// returns when all have).
    pub(crate) workers_started: usize,
    /// Jobs of the background threads other than flushes running (compactions, and redone
    /// garbage-collection plans): [`DB::suspend_compactions`] waits for none.
    pub(crate) compaction_jobs: usize,
    /// How many [`DB::suspend_compactions`] calls are not yet resumed; while above zero the
    /// background threads only flush memtables.
    pub(crate) compactions_suspended: u32,
    /// Compactions with a compaction filter running (merging or installing); see
    /// `compaction_job::run`.
    pub(crate) filtering_compactions: usize,
    /// The compactions in flight, and the flush whose edit is being written
    /// (`compaction/running.rs`).
    pub(crate) compactions: Running,
    /// Passes deleting obsolete files (`db/obsolete_files.rs`).
    pub(crate) obsolete_files: obsolete_files::Passes,
    /// The value files being garbage collected, and the tables to rewrite for it
    /// (`db/value_gc.rs`).
    pub(crate) value_gc: value_gc::Collection,
}

impl DbState {
    /// Rebuilds the reader view after `mem`, `imm` or the current version changed.
    /// Publishes `versions.last_sequence` too (recovery and a read-only handle's refresh set
    /// it before they rebuild the view).
    pub(crate) fn refresh_super_version(&mut self) {
        let view = Arc::new(SuperVersion {
            mem: Arc::clone(&self.mem),
            imm: self.imm.clone(),
            version: Arc::clone(self.versions.current()),
            table_tombstones: OnceLock::new(),
            sequence: self.versions.last_sequence,
        });
        self.super_versions.retain(|view| view.strong_count() > 0);
        self.super_versions.push(Arc::downgrade(&view));
        self.published.set_view(view);
        self.publish_last_sequence();
    }

    /// The current super version.
    pub(crate) fn super_version(&self) -> Arc<SuperVersion> {
        self.published.view()
    }

    /// Makes the writes up to `versions.last_sequence` visible to reads without a snapshot;
    /// called once they are in the current memtable.
    pub(crate) fn publish_last_sequence(&self) {
        self.published
            .set_last_sequence(self.versions.last_sequence);
    }

    /// With value separation, notes a super version no reader holds any more: value files
    /// only it reached can be deleted, so garbage collection looks again (`db/value_gc.rs`)
    /// when the last pass found files older states reach
    /// (`value_gc::Collection::older_states_hold`). Returns whether one was released.
    pub(crate) fn note_released_readers(&mut self) -> bool {
        let before = self.super_versions.len();
        self.super_versions.retain(|view| view.strong_count() > 0);
        let released = self.super_versions.len() < before;
        self.value_gc.sweep |= released && self.value_gc.older_states_hold;
        released
    }

    /// Every super version still held (by the state, an iterator, a read or a snapshot).
    pub(crate) fn live_super_versions(&self) -> Vec<Arc<SuperVersion>> {
        self.super_versions
            .iter()
            .filter_map(Weak::upgrade)
            .collect()
    }

    /// Records in `edit` that only the current log is needed: the logs before it hold nothing
    /// the tables lack, and the tables hold every write before the current log's first (the
    /// sequence recovery checks the logs against; see `db/wal.rs`).
    pub(crate) fn retire_older_logs(&self, edit: &mut VersionEdit) {
        edit.prev_log_number = Some(0);
        edit.log_number = Some(self.log_file_number);
        edit.last_sequence = Some(self.log_first_sequence - 1);
    }

    /// Whether garbage collection's plan must be redone before more writes (a snapshot it
    /// counted was released; `db/value_gc.rs`).
    pub(crate) fn value_gc_stale(&self, snapshots: &SnapshotList) -> bool {
        self.value_gc.stale(self.smallest_snapshot(snapshots))
    }

    /// Oldest sequence number any reader may still need.
    pub(crate) fn smallest_snapshot(&self, snapshots: &SnapshotList) -> u64 {
        snapshots.oldest().unwrap_or(self.versions.last_sequence)
    }
}

/// The shared core of an open database.
pub(crate) struct DbInner {
    pub(crate) dir: PathBuf,
    pub(crate) options: Arc<Options>,
    pub(crate) icmp: InternalKeyComparator,
    pub(crate) env: Arc<dyn Env>,
    pub(crate) table_cache: Arc<TableCache>,
    pub(crate) state: Mutex<DbState>,
    /// What reads without a snapshot load instead of taking the state mutex (`db/published.rs`).
    pub(crate) published: Arc<Published>,
    /// Live snapshots; pinned under the state mutex (see `snapshot.rs`).
    pub(crate) snapshots: Arc<SnapshotList>,
    /// Signalled when background work finishes a step (waiting writers and `compact_range`).
    pub(crate) bg_done: Condvar,
    /// Signalled when there may be background work to do.
    pub(crate) bg_work: Condvar,
    /// Held by the thread applying a version edit, from before it prepares the edit to after
    /// it installs it: one edit at a time (`db/edits.rs`). Taken before the state mutex.
    pub(crate) edit_turn: Mutex<()>,
    /// The write-ahead logs; used only by the leader of the current write group.
    pub(crate) wal: Mutex<wal::Wal>,
    pub(crate) shutting_down: AtomicBool,
    /// Mirrors `state.imm.is_some()` so compactions can check it without the mutex.
    pub(crate) has_imm: AtomicBool,
    pub(crate) info_log: InfoLog,
    pub(crate) lock: Mutex<Option<Box<dyn FileLock>>>,
    /// What a read-only handle follows of the writer's files (`db/read_only.rs`); `None` for a
    /// handle that writes. Locked by one refresh at a time.
    pub(crate) read_only: Option<Mutex<read_only::Follower>>,
    /// The value files, read by pointer (format extension `value-separation`).
    pub(crate) value_files: Arc<ValueFiles>,
    /// The value files each table points into (see `db/value_files.rs`).
    pub(crate) table_value_refs: value_files::TableRefs,
    /// Time writes waited for room, by cause (`strata.write-stalls`).
    pub(crate) write_stalls: write_stalls::WriteStalls,
    /// The value files appended to, one per lane (`vlog::Lane`; index `lane as usize`): see
    /// `db/value_files.rs`.
    pub(crate) value_lanes: [ValueLane; 2],
    /// The memtable is also full once the value records its pointers name
    /// (`MemTable::separated_bytes`) pass this: a sixteenth of the live value bytes (at least
    /// 256 KiB), so superseded values waiting in memtables stay a small share of the value
    /// files (`db/value_gc.rs`).
    pub(crate) mem_separated_limit: AtomicU64,
    /// Bytes appended to value files since the open (added to under the appending lane's
    /// writer lock), for writes to read under the state mutex: what was added since garbage
    /// collection's plan (`value_gc::Collection::outgrown`).
    pub(crate) value_bytes_appended: AtomicU64,
    /// Record bytes garbage collection relocated since the database opened.
    pub(crate) relocated_bytes: AtomicU64,
}

impl DbInner {
    /// The writer of value files of `lane`, and its condition variable.
    pub(crate) fn value_lane(&self, lane: Lane) -> &ValueLane {
        &self.value_lanes[lane as usize]
    }

    /// A memtable to fill and read from: with a key filter sized for the write buffer
    /// (`MemTable::for_buffer`).
    pub(crate) fn new_memtable(&self) -> Arc<MemTable> {
        Arc::new(MemTable::for_buffer(
            self.icmp.clone(),
            self.options.write_buffer_size,
        ))
    }

    /// Fails with `NotSupported` on a read-only handle: `what` would change the database.
    pub(crate) fn refuse_if_read_only(&self, what: &str) -> Result<()> {
        match self.read_only {
            Some(_) => Err(Error::NotSupported(format!(
                "{what}: {} is open read-only",
                self.dir.display()
            ))),
            None => Ok(()),
        }
    }
}

/// An open database.
///
/// Thread safety: `DB` is `Send + Sync`; share it by reference or in an `Arc`. Concurrent
/// writers are grouped into one log write; readers never block writers.
///
/// A handle from [`DB::open_read_only`] reads a database another process may be writing; its
/// write calls fail with [`Error::NotSupported`] and [`DB::refresh`] brings it up to date.
pub struct DB {
    inner: Arc<DbInner>,
    /// The background threads (none for a read-only handle).
    workers: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for DB {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DB")
            .field("path", &self.inner.dir)
            .finish_non_exhaustive()
    }
}

/// A key range for [`DB::approximate_sizes`]: `start` inclusive, `limit` exclusive.
#[derive(Debug, Clone)]
pub struct Range<'a> {
    /// The first user key of the range.
    pub start: &'a [u8],
    /// The user key just past the range.
    pub limit: &'a [u8],
}

impl DB {
    /// Opens (or with `create_if_missing`, creates) the database in directory `path`.
    pub fn open(path: impl AsRef<Path>, options: Options) -> Result<DB> {
        let inner = open::open(path.as_ref(), options)?;
        let workers = background::spawn_workers(&inner)?;
        Ok(DB { inner, workers })
    }

    /// Opens the database in directory `path` to read it, beside the process (Strata or
    /// LevelDB) that may be writing it: without taking its `LOCK` and without writing a byte
    /// to the directory, so it also works on a read-only file system or directory and while
    /// another process holds the database open.
    ///
    /// The handle sees the tables the manifest lists and the live write-ahead logs up to their
    /// last whole record — a consistent prefix of the writer's writes — and stays at that
    /// state until [`DB::refresh`]. Files the writer deletes meanwhile never break a read or
    /// an open iterator. Every write call (`put`, `delete`, `write`, `compact_range`) fails
    /// with [`Error::NotSupported`]. `create_if_missing` and `error_if_exists` do not apply: a
    /// database that does not exist is an [`Error::InvalidArgument`].
    pub fn open_read_only(path: impl AsRef<Path>, options: Options) -> Result<DB> {
        Ok(DB {
            inner: read_only::open(path.as_ref(), options)?,
            workers: Vec::new(),
        })
    }

    /// Moves a read-only handle to the writer's latest state, reading only what is new: the
    /// manifest's new edits and the logs' new records. Every write the writer acknowledged
    /// before the call began is visible after it returns. Iterators and snapshots taken
    /// before keep reading the state they were made in. On a handle that writes, there is
    /// nothing to catch up with: `Ok(())`. On failure the handle keeps its previous state.
    pub fn refresh(&self) -> Result<()> {
        read_only::refresh(&self.inner)
    }

    /// Whether this handle was opened with [`DB::open_read_only`].
    pub fn is_read_only(&self) -> bool {
        self.inner.read_only.is_some()
    }

    /// Sets `key` to `value`.
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        self.put_opt(&WriteOptions::default(), key, value)
    }

    /// Sets `key` to `value` with explicit write options.
    pub fn put_opt(&self, options: &WriteOptions, key: &[u8], value: &[u8]) -> Result<()> {
        // Tag, two varint lengths (at most 5 bytes each), key and value.
        let mut batch = WriteBatch::with_capacity(11 + key.len() + value.len());
        batch.put(key, value);
        self.write_opt(options, &batch)
    }

    /// Removes `key` (not an error when it is absent).
    pub fn delete(&self, key: &[u8]) -> Result<()> {
        self.delete_opt(&WriteOptions::default(), key)
    }

    /// Removes `key` with explicit write options.
    pub fn delete_opt(&self, options: &WriteOptions, key: &[u8]) -> Result<()> {
        let mut batch = WriteBatch::with_capacity(6 + key.len());
        batch.delete(key);
        self.write_opt(options, &batch)
    }

    /// Deletes every key `k` with `start <= k < end` (in the comparator's order) in one write:
    /// a range tombstone, whose cost does not depend on how many keys it deletes. Reads and
    /// iterators at later sequence numbers no longer see those keys; snapshots taken before
    /// still do. Compactions reclaim the space.
    ///
    /// Range deletes are an extension of LevelDB's format: this fails with `NotSupported`
    /// unless the database was opened with [`Options::range_deletes`] (then LevelDB refuses to
    /// open it); [`DB::clear_range`] works on any database. `InvalidArgument` when `start` is
    /// after `end`; `start == end` deletes nothing.
    pub fn delete_range(&self, start: &[u8], end: &[u8]) -> Result<()> {
        self.delete_range_opt(&WriteOptions::default(), start, end)
    }

    /// [`delete_range`](Self::delete_range) with explicit write options.
    pub fn delete_range_opt(&self, options: &WriteOptions, start: &[u8], end: &[u8]) -> Result<()> {
        let mut batch = WriteBatch::with_capacity(11 + start.len() + end.len());
        batch.delete_range(start, end);
        self.write_opt(options, &batch)
    }

    /// Deletes every key `k` with `start <= k < end` (in the comparator's order) one by one, in
    /// batches of at most [`CLEAR_RANGE_BATCH`] deletions, and returns how many keys it
    /// deleted. Works on any database (the records are LevelDB's own deletions), but costs a
    /// scan and a deletion per key, and is not atomic: each batch is applied on its own (a
    /// failure leaves the keys of earlier batches deleted), and a key written into the range
    /// after the scan passed it survives. [`DB::delete_range`] is the one-record alternative
    /// on a database opened with [`Options::range_deletes`]. `InvalidArgument` when `start` is
    /// after `end`.
    pub fn clear_range(&self, start: &[u8], end: &[u8]) -> Result<u64> {
        self.clear_range_opt(&WriteOptions::default(), start, end)
    }

    /// [`clear_range`](Self::clear_range) with explicit write options (for every batch).
    pub fn clear_range_opt(&self, options: &WriteOptions, start: &[u8], end: &[u8]) -> Result<u64> {
        if self.inner.icmp.compare_user(start, end) == std::cmp::Ordering::Greater {
            return Err(Error::InvalidArgument(format!(
                "clear_range from '{}' to '{}': the start is after the end",
                start.escape_ascii(),
                end.escape_ascii()
            )));
        }
        let mut it = self.iter_opt(&ReadOptions {
            fill_cache: false,
            lower_bound: Some(start.to_vec()),
            upper_bound: Some(end.to_vec()),
            ..ReadOptions::default()
        });
        let mut batch = WriteBatch::new();
        let mut deleted = 0u64;
        it.seek_to_first();
        while it.valid() {
            batch.delete(it.key());
            if batch.len() >= CLEAR_RANGE_BATCH {
                self.write_opt(options, &batch)?;
                deleted += batch.len() as u64;
                batch.clear();
            }
            it.next();
        }
        it.status()?;
        if !batch.is_empty() {
            self.write_opt(options, &batch)?;
            deleted += batch.len() as u64;
        }
        Ok(deleted)
    }

    /// Sets `key` to `value` for `ttl` from now (by the `Env`'s clock): from then on no read,
    /// iterator or `get_many` returns it, and the key reads as deleted. Compactions reclaim the
    /// space of expired values.
    ///
    /// Expiring keys are an extension of LevelDB's format: this fails with `NotSupported`
    /// unless the database was opened with [`Options::expiring_keys`].
    pub fn put_with_ttl(&self, key: &[u8], value: &[u8], ttl: Duration) -> Result<()> {
        self.put_with_ttl_opt(&WriteOptions::default(), key, value, ttl)
    }

    /// [`put_with_ttl`](Self::put_with_ttl) with explicit write options.
    pub fn put_with_ttl_opt(
        &self,
        options: &WriteOptions,
        key: &[u8],
        value: &[u8],
        ttl: Duration,
    ) -> Result<()> {
        let mut batch = WriteBatch::with_capacity(19 + key.len() + value.len());
        batch.put_with_ttl(key, value, ttl);
        self.write_opt(options, &batch)
    }

    /// Applies every update in `batch` atomically. The batch is left as it was, so it can be
    /// cleared and reused.
    pub fn write(&self, batch: &WriteBatch) -> Result<()> {
        self.write_opt(&WriteOptions::default(), batch)
    }

    /// Applies every update in `batch` atomically, with explicit write options.
    pub fn write_opt(&self, options: &WriteOptions, batch: &WriteBatch) -> Result<()> {
        write::write(&self.inner, options, Some(batch))
    }

    /// [`write_opt`](Self::write_opt), but only if it can be done at once on the calling
    /// thread, without waiting for another thread or the disk: the database's state free (it
    /// is held a moment by background work, and over the creation of a new log), no other
    /// write in progress, level 0 below the slowdown trigger, no flush to wait for, and not
    /// `sync`. A full memtable whose predecessor is flushed already is switched here, as
    /// `write_opt` would: the new log is created on the calling thread with the database's
    /// state held (the file's creation, a probe of its file system, its sizing and mapping;
    /// no sync), and the first switch starts the thread that closes retired logs. Otherwise
    /// [`Error::WouldBlock`], having written nothing; `write_opt` then does the write,
    /// waiting as it must. On a database with [`Options::value_separation`] it always is
    /// `WouldBlock` (values go to a value file first). For callers that must not block, such
    /// as an event loop, which write at once when they can and hand only the rest to a
    /// thread.
    pub fn try_write(&self, options: &WriteOptions, batch: &WriteBatch) -> Result<()> {
        write::try_write(&self.inner, options, batch)
    }

    /// The value of `key`, or `None` when it is absent.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.get_opt(&ReadOptions::default(), key)
    }

    /// The value of `key` with explicit read options (snapshot, checksums, caching).
    pub fn get_opt(&self, options: &ReadOptions, key: &[u8]) -> Result<Option<Vec<u8>>> {
        read::get(&self.inner, options, key)
    }

    /// [`DB::get_opt`], with the value lent to `read` (`None` when absent, `read` not called)
    /// instead of returned: a value in a memtable is not copied, so a caller that copies it
    /// somewhere of its own (a binding's buffer, a reused `Vec`) copies it once and
    /// allocates nothing. `read` runs while the read holds the state it found the value in,
    /// which that state's memory and value files wait for: keep it short, and do not write to
    /// the database from it (a write waiting for garbage collection could wait for files this
    /// read keeps).
    pub fn get_with<R>(
        &self,
        options: &ReadOptions,
        key: &[u8],
        read: impl FnOnce(&[u8]) -> R,
    ) -> Result<Option<R>> {
        read::get_with(&self.inner, options, key, read)
    }

    /// The values of `keys` (`None` for each one absent), in the order given: what a `get` of
    /// each would return, all read at one moment (one view of the database, one clock
    /// reading for expiring keys). Faster than one `get` per key: the keys are looked up
    /// sorted, each distinct key once, the tables level by level, and keys that fall in the
    /// same table block read it once; idle threads may take runs of a large batch
    /// (`ReadOptions::get_many_parallel`). A read error fails the whole call.
    pub fn get_many<K: AsRef<[u8]>>(&self, keys: &[K]) -> Result<Vec<Option<Vec<u8>>>> {
        self.get_many_opt(&ReadOptions::default(), keys)
    }

    /// [`DB::get_many`] with explicit read options (snapshot, checksums, caching, threads).
    pub fn get_many_opt<K: AsRef<[u8]>>(
        &self,
        options: &ReadOptions,
        keys: &[K],
    ) -> Result<Vec<Option<Vec<u8>>>> {
        read::get_many(&self.inner, options, keys)
    }

    /// Whether `key` has a value: what `get(key)?.is_some()` says, without copying the value.
    pub fn contains(&self, key: &[u8]) -> Result<bool> {
        self.contains_opt(&ReadOptions::default(), key)
    }

    /// [`DB::contains`] with explicit read options (snapshot, checksums, caching).
    pub fn contains_opt(&self, options: &ReadOptions, key: &[u8]) -> Result<bool> {
        read::contains(&self.inner, options, key)
    }

    /// For each of `keys`, whether it has a value: what [`DB::get_many`] says, read the same
    /// way at one moment, without copying any value.
    pub fn contains_many<K: AsRef<[u8]>>(&self, keys: &[K]) -> Result<Vec<bool>> {
        self.contains_many_opt(&ReadOptions::default(), keys)
    }

    /// [`DB::contains_many`] with explicit read options (snapshot, checksums, caching).
    pub fn contains_many_opt<K: AsRef<[u8]>>(
        &self,
        options: &ReadOptions,
        keys: &[K],
    ) -> Result<Vec<bool>> {
        read::contains_many(&self.inner, options, keys)
    }

    /// An iterator over the whole database (unpositioned: call a `seek*` first).
    pub fn iter(&self) -> DbIterator {
        self.iter_opt(&ReadOptions::default())
    }

    /// An iterator with explicit read options (snapshot, bounds, checksums, caching).
    pub fn iter_opt(&self, options: &ReadOptions) -> DbIterator {
        read::new_iterator(&self.inner, options, true)
    }

    /// An iterator over the keys and their values' lengths that never reads a value kept in
    /// a value file ([`Options::value_separation`]): a scan of keys reads the tree alone.
    pub fn iter_keys(&self) -> KeyIterator {
        self.iter_keys_opt(&ReadOptions::default())
    }

    /// [`DB::iter_keys`] with explicit read options (snapshot, bounds, checksums, caching).
    pub fn iter_keys_opt(&self, options: &ReadOptions) -> KeyIterator {
        KeyIterator::new(read::new_iterator(&self.inner, options, false))
    }

    /// Whether `key` has a value, and its length in bytes (`None` when absent), answered
    /// from the tree alone: a value kept in a value file ([`Options::value_separation`]) is
    /// not read, so this costs what a `get` of a small value does.
    pub fn head(&self, key: &[u8]) -> Result<Option<u64>> {
        self.head_opt(&ReadOptions::default(), key)
    }

    /// [`DB::head`] with explicit read options (snapshot, checksums, caching).
    pub fn head_opt(&self, options: &ReadOptions, key: &[u8]) -> Result<Option<u64>> {
        read::head(&self.inner, options, key)
    }

    /// A consistent point-in-time view; released when dropped.
    pub fn snapshot(&self) -> Snapshot {
        let state = self.inner.state.lock();
        // A read-only handle's writer compacts without knowing this process's snapshots, and
        // a compaction filter running now may change entries this snapshot sees: the snapshot
        // keeps the tables and memtables it was taken on.
        if self.inner.read_only.is_some() || state.filtering_compactions > 0 {
            let view: Arc<dyn std::any::Any + Send + Sync> = state.super_version() as _;
            return self
                .inner
                .snapshots
                .pin_with_view(state.versions.last_sequence, view);
        }
        self.inner.snapshots.pin(state.versions.last_sequence)
    }

    /// The value of a property (`leveldb.num-files-at-level<N>`, `leveldb.stats`,
    /// `leveldb.sstables`, `leveldb.approximate-memory-usage`; Strata's `strata.write-stalls`,
    /// a line `<cause> <waits> <microseconds>` for each of `level0-slowdown`, `level0-stop`,
    /// `memtable-full` and `value-files`, counted since the open; and the value files'
    /// `strata.value-files.*`), or `None` for unknown names.
    pub fn property(&self, name: &str) -> Option<String> {
        properties::property(&self.inner, name)
    }

    /// Approximate file-system bytes used by each range.
    pub fn approximate_sizes(&self, ranges: &[Range<'_>]) -> Vec<u64> {
        properties::approximate_sizes(&self.inner, ranges)
    }

    /// Compacts the user keys in `[begin, end]` (`None` = unbounded) down to the deepest level
    /// that has data, dropping overwritten and deleted entries no snapshot needs. That deepest
    /// level is then rewritten where it is when compactions can reclaim more there: with
    /// expiring keys or a compaction filter (expired values, what the filter drops), and with
    /// range deletes its tables holding range tombstones (the tombstone and the entries it
    /// deletes, once no snapshot needs them). Before it returns, the files no version needs any
    /// more are deleted: the replaced tables, and those of iterators dropped meanwhile (writes
    /// waiting for a memtable flush may cut that pass short; the rest go after the flush).
    pub fn compact_range(&self, begin: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
        manual_compaction::compact_range(&self.inner, begin, end)
    }

    /// Stops background compactions (automatic and `compact_range`'s) until
    /// [`resume_compactions`](Self::resume_compactions), waiting for those running to end.
    /// Memtables are still flushed, so writes go on until level 0 reaches its stop trigger;
    /// then they wait for the resume, and so does `compact_range`. Calls nest: compactions
    /// resume when every suspension is resumed.
    pub fn suspend_compactions(&self) {
        manual_compaction::suspend_compactions(&self.inner);
    }

    /// Ends one [`suspend_compactions`](Self::suspend_compactions); a resume without a
    /// suspension does nothing.
    pub fn resume_compactions(&self) {
        manual_compaction::resume_compactions(&self.inner);
    }

    /// Makes an openable copy of the database in directory `dir` (which must not exist) as
    /// it is now, while writes go on: hard links to the tables (copies across file systems), a
    /// fresh manifest, and the live logs' records so far, all synced. Strata and LevelDB 1.23
    /// open it with exactly the data of that moment. A crash or power loss during the call
    /// leaves `dir` absent or complete. On a read-only handle, the copy is of the state the
    /// handle sees.
    pub fn checkpoint(&self, dir: impl AsRef<Path>) -> Result<()> {
        checkpoint::checkpoint(&self.inner, dir.as_ref())
    }

    /// The directory the database lives in.
    pub fn path(&self) -> &Path {
        &self.inner.dir
    }
}

impl Drop for DB {
    fn drop(&mut self) {
        background::stop_workers(&self.inner, std::mem::take(&mut self.workers));
        self.inner.wal.lock().close();
        value_files::write_out(&self.inner);
        if let Some(lock) = self.inner.lock.lock().take() {
            let _ = self.inner.env.unlock_file(lock);
        }
        self.inner.info_log.log(format_args!("closed"));
    }
}

/// Removes every file of the database in `path`, and the directory if it ends up empty.
pub fn destroy(path: impl AsRef<Path>, options: &Options) -> Result<()> {
    destroy::destroy(path.as_ref(), options)
}

/// Rebuilds the database in `path` from whatever tables and logs can still be read: use it
/// when a database cannot be opened. Some data may be lost; what was lost is in the LOG.
pub fn repair(path: impl AsRef<Path>, options: &Options) -> Result<()> {
    repair::repair(path.as_ref(), options)
}
