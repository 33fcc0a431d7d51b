//! The write path: group commit, the write-ahead log and the memtable switch.
//!
//! One writer at a time leads (`DbState::leading`); writers arriving meanwhile queue up in
//! `DbState::writers` with a copy of their batch. The leader makes room (maybe switching the
//! memtable and waiting for the background threads), takes the batches of the writers queued
//! behind it into its group (a synced group first waits a moment, with the state mutex
//! released, for the writers of the previous synced group to queue again, and takes them in as
//! they come: `db/sync_rejoin.rs`), and with the state mutex released appends the group as one
//! log record (one `fsync` for every `sync` writer in it) and applies it to the memtable. Then it
//! wakes the writers it committed and hands leadership to the next in line. A writer that
//! finds no leader leads at once, with its own batch by reference: the uncontended write
//! allocates nothing and takes each lock once. A queued writer first watches for its outcome
//! (or its promotion) a moment with the mutex released (`util/spin.rs`) and blocks on its
//! condition variable only after that: a group commit takes microseconds, waking a blocked
//! thread tens of them, which made writer threads wait on each other's wake-ups.
//!
//! A write is acknowledged only after its record reached the operating system (and the disk,
//! for `sync`). If a log write or sync fails the error is kept as the background error: the log
//! may hold a partial record, so no later write can be trusted to land after it.
//!
//! Switching to a new log syncs nothing: the old log's tail may reach the disk later than the
//! new log's writes, or never; `db/wal.rs` says how a power loss then still leaves a prefix of
//! the acknowledged writes and every synced one.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, ThreadId};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, MutexGuard};

use super::panics::panics_as_errors;
use super::write_stalls::Stall;
use super::{value_files, DbInner, DbState};
use crate::error::{Error, Result};
use crate::extension::{Extension, Extensions};
use crate::filename::log_file_name;
use crate::log::LogWriter;
use crate::memtable::MemTable;
use crate::options::WriteOptions;
use crate::util::entry::encode_expiring;
use crate::util::internal_key::{ValueType, MAX_SEQUENCE};
use crate::util::spin::spin_until;
use crate::version::policy::{L0_SLOWDOWN_WRITES_TRIGGER, L0_STOP_WRITES_TRIGGER};
use crate::vlog::{Lane, ValuePointer};
use crate::write_batch::{BatchOp, WriteBatch, HEADER_SIZE};

/// A batch group never grows past this many bytes.
const MAX_GROUP_BYTES: usize = 1 << 20;
/// A small leading batch only takes followers up to this much more (see [`Followers::new`]).
const SMALL_BATCH_BYTES: usize = 128 << 10;
/// Longest a queued writer watches for its outcome before it blocks (`util/spin.rs`).
const QUEUED_WRITER_SPIN: Duration = Duration::from_micros(100);

/// A writer queued behind the leader.
pub(crate) struct Writer {
    /// A copy of the writer's batch, taken by the leader that commits it; `None` asks only
    /// for room: forces a memtable switch (used by `compact_range`).
    batch: Mutex<Option<WriteBatch>>,
    sync: bool,
    /// The writing thread (`db/sync_rejoin.rs`).
    thread: ThreadId,
    /// Set by the leader that committed this writer.
    outcome: Mutex<Option<Result<()>>>,
    /// Set when this writer was made the leader.
    promoted: Mutex<bool>,
    /// Set after `outcome` or `promoted`, for the writer to watch without the state mutex.
    signalled: AtomicBool,
    wake: Condvar,
}

impl Writer {
    /// Wakes the writer after its `outcome` or `promoted` was set (with the state mutex held,
    /// so a writer about to wait cannot miss it).
    fn signal(&self) {
        self.signalled.store(true, Ordering::Release);
        self.wake.notify_one();
    }
}

/// Whether a write may wait: for the writer leading a group, for room in the memtable (a
/// slowdown, a flush) or for a sync.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wait {
    Allowed,
    /// `DB::try_write`: such a write fails with `Error::WouldBlock` having written nothing.
    Refused,
}

/// Commits `batch` (or, for `None`, forces the current memtable to be flushed).
pub(crate) fn write(
    db: &Arc<DbInner>,
    options: &WriteOptions,
    batch: Option<&WriteBatch>,
) -> Result<()> {
    write_waiting(db, options, batch, Wait::Allowed)
}

/// Commits `batch` now on the calling thread, or fails with `Error::WouldBlock` having written
/// nothing when that would mean waiting (see [`Wait`]); a database separating values always
/// does (the values would go to a value file first).
pub(crate) fn try_write(
    db: &Arc<DbInner>,
    options: &WriteOptions,
    batch: &WriteBatch,
) -> Result<()> {
    db.refuse_if_read_only("write")?;
    if options.sync {
        return Err(would_block("a sync write waits for the disk"));
    }
    if db.options.value_separation.is_some() {
        return Err(would_block(
            "with value separation, values are written to a value file first",
        ));
    }
    write_waiting(db, options, Some(batch), Wait::Refused)
}

fn would_block(why: &str) -> Error {
    Error::WouldBlock(why.to_owned())
}

fn write_waiting(
    db: &Arc<DbInner>,
    options: &WriteOptions,
    batch: Option<&WriteBatch>,
    wait: Wait,
) -> Result<()> {
    db.refuse_if_read_only(if batch.is_some() { "write" } else { "flush" })?;
    if let Some(b) = batch {
        if b.is_oversized() {
            return Err(Error::InvalidArgument(
                "write batch holds a key or value of 4 GiB or more".into(),
            ));
        }
        if b.contents().len() > u32::MAX as usize {
            return Err(Error::InvalidArgument(
                "write batch larger than 4 GiB".into(),
            ));
        }
        check_extension_records(db, b)?;
    }
    // Puts with a time to live get their expiry time now, before they are logged.
    let resolved = match batch {
        Some(b) => b.with_expiry_times(|| db.env.now_micros())?,
        None => None,
    };
    let batch = resolved.as_ref().or(batch);
    // Large values go to a value file now, before their pointers can reach the log.
    let separated = match batch {
        Some(b) => value_files::separate(db, b)?,
        None => None,
    };
    let batch = separated.as_ref().map(|(b, _)| b).or(batch);
    // The state mutex is held over file I/O at times (creating a log at a memtable switch, a
    // checkpoint opening logs): a write that must not wait does not wait for it either.
    let mut state = match wait {
        Wait::Allowed => db.state.lock(),
        Wait::Refused => db
            .state
            .try_lock()
            .ok_or_else(|| would_block("the database state is busy"))?,
    };
    if state.leading && wait == Wait::Refused {
        return Err(would_block("another write is in progress"));
    }
    if state.leading {
        let writer = Arc::new(Writer {
            batch: Mutex::new(batch.cloned()),
            sync: options.sync,
            thread: thread::current().id(),
            outcome: Mutex::new(None),
            promoted: Mutex::new(false),
            signalled: AtomicBool::new(false),
            wake: Condvar::new(),
        });
        state.writers.push_back(Arc::clone(&writer));
        MutexGuard::unlocked(&mut state, || {
            spin_until(QUEUED_WRITER_SPIN, || {
                writer.signalled.load(Ordering::Acquire)
            })
        });
        loop {
            if let Some(outcome) = writer.outcome.lock().take() {
                return outcome;
            }
            if *writer.promoted.lock() {
                break;
            }
            writer.wake.wait(&mut state);
        }
    }
    state.leading = true;
    let result = lead(db, &mut state, batch, options.sync, wait);
    // Hand leadership to the next writer in line, if any.
    match state.writers.pop_front() {
        Some(next) => {
            *next.promoted.lock() = true;
            next.signal();
        }
        None => {
            state.leading = false;
            // A collection plan made during this write may want the memtable flushed, which a
            // background thread does while no write is in progress: it may have looked while
            // this one was (`switch_memtable_for_collection`), and no write may follow.
            if state.value_gc.flush_wanted() {
                db.bg_work.notify_all();
            }
        }
    }
    result
}

/// Commits the leader's `batch` with those of the writers queued behind it, and tells them the
/// outcome. Called with the state mutex held; releases it while writing.
fn lead(
    db: &Arc<DbInner>,
    state: &mut MutexGuard<'_, DbState>,
    batch: Option<&WriteBatch>,
    sync: bool,
    wait: Wait,
) -> Result<()> {
    let force = batch.is_none();
    let mut result = match wait {
        Wait::Allowed => make_room_for_write(db, state, force),
        Wait::Refused => room_without_waiting(db, state),
    };
    let mut followers = Vec::new();
    if let (Ok(()), Some(batch)) = (&result, batch) {
        let mut group = Followers::new(batch);
        let front_blocked = group.take(state, sync);
        // A synced group's leader, for `db/sync_rejoin.rs`.
        let leader = sync.then(|| thread::current().id());
        if sync {
            // A synced commit waits for the disk (and maybe for more writers), not the
            // processor: the flush need not wait for it.
            announce_flush(db, state);
        }
        let waited = match leader {
            Some(me) if !front_blocked => rejoin(state, &mut group, me),
            _ => None,
        };
        let count = group.count;
        followers = group.taken;
        let sequence = state.versions.last_sequence + 1;
        let last = state.versions.last_sequence + count;
        // `MAX_SEQUENCE` is left to table bounds after range tombstones (`range_del::end_bound`).
        let range_deletes = std::iter::once(batch)
            .chain(followers.iter().map(|(_, b)| b))
            .any(|b| b.extensions().contains(Extension::RangeDeletes));
        if last > MAX_SEQUENCE || (range_deletes && last == MAX_SEQUENCE) {
            // Nothing was written: the database stays usable for reads and smaller writes.
            result = Err(Error::NotSupported(format!(
                "sequence numbers exhausted: last sequence {}, {count} more needed",
                state.versions.last_sequence
            )));
        } else {
            let group = Group {
                leader: batch,
                followers: &followers,
                sequence,
                count,
            };
            let mem = Arc::clone(&state.mem);
            let sync = sync.then_some(state.versions.log_number);
            // A panic (a comparator's, during the memtable insert) must not leave `leading`
            // set with followers waiting: it fails the group like a failed log write.
            // Synced commits are timed (the clock is not read for the others).
            let timed = leader.map(|me| (me, Instant::now()));
            result = MutexGuard::unlocked(state, || {
                panics_as_errors("a write", || commit_group(db, &group, &mem, sync))
            });
            match &result {
                Ok(()) => {
                    if let Some((me, start)) = timed {
                        let threads = followers
                            .iter()
                            .filter(|(writer, _)| writer.sync)
                            .map(|(writer, _)| writer.thread);
                        state.sync_rejoin.record(
                            std::iter::once(me).chain(threads),
                            start.elapsed(),
                            waited,
                        );
                    }
                    state.versions.last_sequence = last;
                    state.publish_last_sequence();
                    let level0 = state.versions.current().num_files(0);
                    let bytes = group.batches().map(|b| b.contents().len()).sum();
                    state.write_pace.charge(level0, bytes, Instant::now);
                }
                Err(e) => {
                    // The log may now end in a partial record: refuse every later write.
                    state.bg_error.get_or_insert_with(|| e.clone());
                    db.bg_done.notify_all();
                }
            }
        }
    }
    announce_flush(db, state);
    for (writer, _) in followers {
        *writer.outcome.lock() = Some(result.clone());
        writer.signal();
    }
    result
}

/// The batches one log record commits: the leader's, then its followers', numbered from
/// `sequence` on.
struct Group<'a> {
    leader: &'a WriteBatch,
    followers: &'a [(Arc<Writer>, WriteBatch)],
    sequence: u64,
    /// Updates in all the batches.
    count: u64,
}

impl Group<'_> {
    fn batches(&self) -> impl Iterator<Item = &WriteBatch> {
        std::iter::once(self.leader).chain(self.followers.iter().map(|(_, batch)| batch))
    }

    /// The log record: one batch header (`count` fits 32 bits: `Followers::take` sees to it)
    /// and every batch's records.
    fn encode(&self, out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(&self.sequence.to_le_bytes());
        out.extend_from_slice(&(self.count as u32).to_le_bytes());
        for batch in self.batches() {
            out.extend_from_slice(batch.records());
        }
    }
}

/// Appends the group to the log and applies it to the memtable; `sync` (the manifest's log
/// number) makes the log durable first, with every log before it that is still needed. Runs
/// without the state mutex, by the group leader only.
fn commit_group(db: &DbInner, group: &Group<'_>, mem: &MemTable, sync: Option<u64>) -> Result<()> {
    prefetch_adds(group, mem);
    {
        let mut wal = db.wal.lock();
        wal.append_with(|record| group.encode(record))?;
        if let Some(min_live_log) = sync {
            // The values the log's pointers name become durable before the pointers do.
            value_files::sync(db, Lane::Writes)?;
            wal.sync(&*db.env, &db.dir, min_live_log)?;
        }
    }
    let mut sequence = group.sequence;
    for batch in group.batches() {
        insert_batch(batch, sequence, mem)?;
        sequence += u64::from(batch.count());
    }
    Ok(())
}

/// Keys of a group whose memtable adds [`commit_group`] prefetches.
const PREFETCHED_KEYS: usize = 16;

/// Has the memtable load what the inserts of the group's first keys write outside the
/// skiplist (`MemTable::prefetch_add`) while the log record is written: waited for at the
/// insert, a key filter word that missed the caches cost `fillseq` about 5%.
fn prefetch_adds(group: &Group<'_>, mem: &MemTable) {
    if !mem.prefetches_adds() {
        return;
    }
    let ops = group.batches().flat_map(WriteBatch::iter);
    for op in ops.take(PREFETCHED_KEYS) {
        if let Ok(
            BatchOp::Put { key, .. }
            | BatchOp::Delete { key }
            | BatchOp::PutExpiring { key, .. }
            | BatchOp::PutSeparated { key, .. },
        ) = op
        {
            mem.prefetch_add(key);
        }
    }
}

/// Refuses a batch whose records need a format extension the database was not opened with
/// (`NotSupported`, naming the option), or that deletes a range whose start is after its end
/// (`InvalidArgument`).
fn check_extension_records(db: &DbInner, batch: &WriteBatch) -> Result<()> {
    let used = batch.extensions();
    if let Some(missing) = used.first_missing_from(db.options.extensions()) {
        return Err(missing.not_enabled());
    }
    if used.contains(Extension::RangeDeletes) {
        for op in batch.iter() {
            if let BatchOp::DeleteRange { start, end } = op? {
                if db.icmp.compare_user(start, end) == std::cmp::Ordering::Greater {
                    return Err(Error::InvalidArgument(format!(
                        "range deletion from '{}' to '{}': the start is after the end",
                        start.escape_ascii(),
                        end.escape_ascii()
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Checks a batch read back from a log before any of it is applied: every record decodes,
/// the count matches, its sequence numbers fit the internal-key format, and it uses no format
/// extension but those in `recorded` (what the manifest records: the marker is written before
/// any extension record, so another one means damage). Offsets in the error are within the
/// batch. Returns the extensions the batch uses.
pub(crate) fn check_logged_batch(batch: &WriteBatch, recorded: Extensions) -> Result<Extensions> {
    let mut used = Extensions::NONE;
    for op in batch.iter() {
        let needed: &[Extension] = match op? {
            BatchOp::Put { .. } | BatchOp::Delete { .. } => continue,
            BatchOp::DeleteRange { .. } => &[Extension::RangeDeletes],
            BatchOp::PutExpiring { .. } => &[Extension::ExpiringKeys],
            BatchOp::PutSeparated { pointer, .. } => ValuePointer::extensions(pointer),
            BatchOp::PutWithTtl { .. } => {
                return Err(Error::corruption_at(
                    0,
                    "write batch holds a put with an unresolved time to live, which is never \
                     logged",
                ))
            }
        };
        for &extension in needed {
            if !recorded.contains(extension) {
                return Err(Error::corruption_at(
                    0,
                    format!(
                        "write batch holds {}, but the manifest does not record the `{}` \
                         format extension",
                        extension.what(),
                        extension.token()
                    ),
                ));
            }
            used.insert(extension);
        }
    }
    let count = u64::from(batch.count());
    if count > 0 {
        let last = batch.sequence().checked_add(count - 1);
        if last.is_none_or(|last| last > MAX_SEQUENCE) {
            return Err(Error::corruption_at(
                0,
                format!(
                    "write batch of {count} updates at sequence {} runs past the largest \
                     sequence number {MAX_SEQUENCE}",
                    batch.sequence()
                ),
            ));
        }
    }
    Ok(used)
}

/// Applies a batch whose sequence number is set to `mem`.
pub(crate) fn insert_into_memtable(batch: &WriteBatch, mem: &MemTable) -> Result<()> {
    insert_batch(batch, batch.sequence(), mem)
}

/// Applies `batch` to `mem`, its updates numbered from `sequence` on.
fn insert_batch(batch: &WriteBatch, sequence: u64, mem: &MemTable) -> Result<()> {
    let mut writer = mem.writer();
    // The stored form of an expiring value, reused across the batch.
    let mut expiring = Vec::new();
    // Record bytes of the values the batch's pointers name.
    let mut separated = 0;
    for (sequence, op) in (sequence..).zip(batch.iter()) {
        match op? {
            BatchOp::Put { key, value } => writer.add(sequence, ValueType::Value, key, value),
            BatchOp::Delete { key } => writer.add(sequence, ValueType::Deletion, key, &[]),
            BatchOp::DeleteRange { start, end } => writer.add_range_deletion(sequence, start, end),
            BatchOp::PutExpiring {
                key,
                value,
                expires_at_micros,
            } => {
                expiring.clear();
                encode_expiring(&mut expiring, expires_at_micros, value);
                writer.add(sequence, ValueType::ExpiringValue, key, &expiring);
            }
            BatchOp::PutSeparated { key, pointer } => {
                // A pointer that does not parse is reported where it is read.
                separated += ValuePointer::decode(pointer).map_or(0, |p| p.record_size(key.len()));
                writer.add(sequence, ValueType::ValuePointer, key, pointer)
            }
            // The write path resolves these and recovery refuses them before a batch gets here.
            BatchOp::PutWithTtl { .. } => {
                return Err(Error::InvalidArgument(
                    "a put with an unresolved time to live reached the memtable".into(),
                ))
            }
        }
    }
    writer.count_separated(separated);
    Ok(())
}

/// The writers a leader takes into its group, from the front of the queue.
struct Followers {
    taken: Vec<(Arc<Writer>, WriteBatch)>,
    /// Updates in the group, the leader's included.
    count: u64,
    /// Bytes of the group's batches.
    size: usize,
    /// What the group may grow to.
    max_size: usize,
}

impl Followers {
    /// A group of `leader`'s batch alone.
    fn new(leader: &WriteBatch) -> Followers {
        let size = leader.contents().len();
        Followers {
            taken: Vec::new(),
            count: u64::from(leader.count()),
            size,
            // A small leading batch only takes followers up to this much more, so it is not
            // delayed much.
            max_size: if size <= SMALL_BATCH_BYTES {
                size + SMALL_BATCH_BYTES
            } else {
                MAX_GROUP_BYTES
            },
        }
    }

    /// Takes the queued writers that fit, in order, stopping at a synced one behind a leader
    /// that does not sync (its sync would delay the group), at one asking for room only, and
    /// at one past the group's size or count; returns whether the queue's front is such a
    /// writer (no later writer can join).
    fn take(&mut self, state: &mut DbState, leader_sync: bool) -> bool {
        while let Some(writer) = state.writers.front() {
            if writer.sync && !leader_sync {
                return true;
            }
            let mut slot = writer.batch.lock();
            let Some(batch) = slot.as_ref() else {
                return true;
            };
            let size = self.size + batch.contents().len() - HEADER_SIZE;
            let count = self.count + u64::from(batch.count());
            if size > self.max_size || count > u64::from(u32::MAX) {
                return true;
            }
            (self.size, self.count) = (size, count);
            let batch = slot.take().unwrap_or_default();
            drop(slot);
            if let Some(writer) = state.writers.pop_front() {
                self.taken.push((writer, batch));
            }
        }
        false
    }
}

/// Before a synced group commits: waits (with the state mutex released) for the threads of
/// the last synced group to queue again, up to the bound `db/sync_rejoin.rs` sets, taking
/// them into `group` as they come (with a write that syncs or not). `None` when there was
/// nobody to wait for; otherwise whether any of them joined. The wait ends early once the
/// queue's front cannot join, or once a background error is set: a writer queued after it
/// must get it from the next leader, as when followers are taken under the mutex that
/// `make_room_for_write` checked it under.
fn rejoin(
    state: &mut MutexGuard<'_, DbState>,
    group: &mut Followers,
    leader: ThreadId,
) -> Option<bool> {
    let (limit, mut missing) = state.sync_rejoin.awaited(leader)?;
    #[cfg(test)]
    {
        state.sync_rejoin.in_wait = true;
    }
    let awaited = missing.len();
    let (start, mut seen, mut stop) = (Instant::now(), 0, false);
    loop {
        for (writer, _) in &group.taken[seen..] {
            missing.retain(|&thread| thread != writer.thread);
        }
        seen = group.taken.len();
        if stop || missing.is_empty() || start.elapsed() >= limit {
            #[cfg(test)]
            {
                state.sync_rejoin.in_wait = false;
            }
            return Some(missing.len() < awaited);
        }
        MutexGuard::unlocked(state, thread::yield_now);
        stop = state.bg_error.is_some() || group.take(state, true);
    }
}

/// Makes sure the memtable can take a write: slows writers down while level 0 is crowded,
/// waits while it is full, and switches to a new memtable and log when the current one is full
/// (or when `force` asks for it). With value separation, also waits for garbage collection
/// while the value files are over their bound (`db/value_gc.rs`, "Keeping up"), and switches
/// the memtable a plan wants flushed. Called by the group leader with the state mutex held.
fn make_room_for_write(
    db: &Arc<DbInner>,
    state: &mut MutexGuard<'_, DbState>,
    mut force: bool,
) -> Result<()> {
    let allow_delay = !force;
    loop {
        if let Some(e) = &state.bg_error {
            return Err(e.clone());
        }
        if db.shutting_down.load(Ordering::Acquire) {
            return Err(Error::InvalidArgument("database is closing".into()));
        }
        let level0 = state.versions.current().num_files(0);
        let pace = allow_delay
            .then(|| state.write_pace.wait(level0, Instant::now))
            .flatten();
        if let Some(pause) = pace {
            // Hand the background threads some of this thread's time instead of stalling
            // writes for seconds at the stop trigger later (`db/write_pace.rs`); then look
            // at everything again.
            announce_flush(db, state);
            let slept = Instant::now();
            MutexGuard::unlocked(state, || std::thread::sleep(pause));
            db.write_stalls
                .record(Stall::Level0Slowdown, slept.elapsed());
        } else if db.options.value_separation.is_some() && state.note_released_readers() {
            // A released reader may leave value files to delete.
            db.bg_work.notify_all();
        } else if ((state.value_gc.sweep && state.value_gc.over_bound)
            || state.value_gc.replan.writes_wait)
            && state.compactions_suspended == 0
        {
            // Over the bound: wait for those files to go before adding more (or for the new
            // plan a released snapshot asked for).
            stall(db, state, Stall::ValueFiles);
        } else if state
            .value_gc
            .snapshot_released(|| state.smallest_snapshot(&db.snapshots))
            && state.compactions_suspended == 0
        {
            // A released snapshot may have left garbage: the background thread replans.
            db.bg_work.notify_all();
            stall(db, state, Stall::ValueFiles);
        } else if !force
            && db.options.value_separation.is_some()
            && state.compactions_suspended == 0
            && state
                .value_gc
                .outgrown(db.value_bytes_appended.load(Ordering::Acquire))
            && (state.imm.is_some() || state.obsolete_files.running() || !state.mem.is_empty())
        {
            // The value files may have grown past the bound since the plan (the passes redoing
            // it lag): wait for the next one, which follows the memtable's flush.
            if state.imm.is_none() && !state.obsolete_files.running() {
                force = true;
            } else {
                stall(db, state, Stall::ValueFiles);
            }
        } else if !force
            && state.compactions_suspended == 0
            && !state.mem.is_empty()
            && state.value_gc.wants_flush()
        {
            force = true; // the memtable holds entries shadowing garbage to collect
        } else if !force
            && state.value_gc.writes_wait(state.obsolete_files.running())
            && state.compactions_suspended == 0
        {
            db.info_log.log(format_args!(
                "value files over their bound; waiting for garbage collection"
            ));
            stall(db, state, Stall::ValueFiles);
        } else if !force && !memtable_full(db, &state.mem) {
            return Ok(());
        } else if state.imm.is_some() {
            db.info_log
                .log(format_args!("current memtable full; waiting for flush"));
            stall(db, state, Stall::MemtableFull);
        } else if level0 >= L0_STOP_WRITES_TRIGGER {
            db.info_log
                .log(format_args!("too many L0 files ({level0}); waiting"));
            stall(db, state, Stall::Level0Stop);
        } else {
            switch_memtable(db, state)?;
            force = false;
        }
    }
}

/// [`make_room_for_write`] for a write that must not wait (`DB::try_write`, on a database
/// without value separation): `Ok` when level 0 is below the slowdown trigger and the
/// memtable has room, or is full with no flush pending and is switched here; else
/// `Error::WouldBlock`. The switch creates the new log on this thread: handing the write to a
/// thread instead cost an event loop several milliseconds at most switches (the JavaScript
/// thread woke late while the new flush took the processor: `bindings/node`).
fn room_without_waiting(db: &DbInner, state: &mut MutexGuard<'_, DbState>) -> Result<()> {
    if let Some(e) = &state.bg_error {
        return Err(e.clone());
    }
    if db.shutting_down.load(Ordering::Acquire) {
        return Err(Error::InvalidArgument("database is closing".into()));
    }
    if state.versions.current().num_files(0) >= L0_SLOWDOWN_WRITES_TRIGGER {
        return Err(would_block("level 0 is crowded; writes are slowed down"));
    }
    if memtable_full(db, &state.mem) {
        if state.imm.is_some() {
            return Err(would_block(
                "the memtable is full and the last one is being flushed",
            ));
        }
        switch_memtable(db, state)?;
    }
    Ok(())
}

/// Whether `mem` is full: its size is over `write_buffer_size`, or the values separated from
/// its pointers are over `DbInner::mem_separated_limit`. Separated values do not count toward
/// `write_buffer_size`: the memtable holds only their pointers, and counting them flushed a
/// 4 MiB memtable every 256 puts of 16 KiB (level 0 compacting without end). Both are counted
/// as entries go in, so a memtable passes either limit by at most the last write group.
fn memtable_full(db: &DbInner, mem: &MemTable) -> bool {
    mem.approximate_memory_usage() > db.options.write_buffer_size
        || mem.separated_bytes() > db.mem_separated_limit.load(Ordering::Relaxed)
}

/// Switches the memtable for garbage collection from a background thread, when no write is
/// in progress: the value files are over their bound and collection waits for the memtable's
/// entries to be flushed (they may shadow the garbage of the files chosen:
/// `value_gc::Collection::wants_flush`, once per plan). Writes do this themselves before they
/// add to the memtable, but once they stop nothing else would, and the files rested above the
/// bound for good (1.8x in `tests/value_separation_gc.rs`). Only while no writer leads: a
/// leader may be appending to the log between its checks and its memtable insert. Returns
/// whether it switched; when the new log cannot be created the plan's flush is asked for
/// again, so the next write or background look tries once more.
pub(super) fn switch_memtable_for_collection(
    db: &DbInner,
    state: &mut MutexGuard<'_, DbState>,
) -> bool {
    if state.leading
        || state.imm.is_some()
        || state.mem.is_empty()
        || db.shutting_down.load(Ordering::Acquire)
        || state.versions.current().num_files(0) >= L0_SLOWDOWN_WRITES_TRIGGER
        || !state.value_gc.wants_flush()
    {
        return false;
    }
    match switch_memtable(db, state) {
        Ok(()) => {
            announce_flush(db, state);
            true
        }
        Err(e) => {
            db.info_log.log(format_args!(
                "value files: switching the memtable to collect them: {e}"
            ));
            state.value_gc.flush_asked = false;
            false
        }
    }
}

/// Waits for background work to signal `bg_done`, having woken the flush thread for a memtable
/// this write switched; the wait is counted against `cause` in `strata.write-stalls`
/// (`db/write_stalls.rs`).
fn stall(db: &DbInner, state: &mut MutexGuard<'_, DbState>, cause: Stall) {
    announce_flush(db, state);
    let started = Instant::now();
    db.bg_done.wait(state);
    db.write_stalls.record(cause, started.elapsed());
}

/// Wakes the flush thread for the memtable a write switched, if not yet done: the write does
/// so once its batch is in (`lead`; before the commit if it is synced, as it then waits for
/// the disk), or before it waits or sleeps. Woken at the switch, the flush (a processor's
/// worth of work for milliseconds) took the processor from the write that began it: on two
/// cores, a thread-pool write in Node.js waited about 3 ms at most switches.
fn announce_flush(db: &DbInner, state: &mut DbState) {
    if std::mem::take(&mut state.flush_unannounced) {
        db.bg_work.notify_all();
    }
}

/// Starts a new log and memtable; the old memtable becomes immutable for a background thread
/// to flush, which [`announce_flush`] wakes.
fn switch_memtable(db: &DbInner, state: &mut MutexGuard<'_, DbState>) -> Result<()> {
    let number = state.versions.new_file_number();
    let path = log_file_name(&db.dir, number);
    let file = match db.env.new_log_file(&path) {
        Ok(file) => file,
        Err(e) => {
            state.versions.reuse_file_number(number);
            return Err(e);
        }
    };
    db.wal
        .lock()
        .start(number, LogWriter::new(file), state.versions.log_number);
    state.log_file_number = number;
    state.log_first_sequence = state.versions.last_sequence + 1;
    let new_mem = db.new_memtable();
    let old_mem = std::mem::replace(&mut state.mem, new_mem);
    state.imm = Some(old_mem);
    db.has_imm.store(true, Ordering::Release);
    state.refresh_super_version();
    state.flush_unannounced = true;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::comparator::BytewiseComparator;
    use crate::util::internal_key::InternalKeyComparator;
    use crate::vlog::record_size;

    #[test]
    fn a_memtable_counts_the_value_records_its_pointers_name_as_they_go_in() {
        let mem = MemTable::new(InternalKeyComparator::new(BytewiseComparator::shared()));
        let pointer = |length| {
            ValuePointer {
                file: 7,
                offset: 0,
                length,
                crc: 0,
                stored: None,
            }
            .encode()
        };
        let mut batch = WriteBatch::new();
        batch.put(b"small", b"inline");
        batch.put_separated(b"k1", &pointer(5000));
        batch.put_separated(b"key2", &pointer(70_000));
        batch.set_sequence(1);
        assert_eq!(mem.separated_bytes(), 0);
        insert_into_memtable(&batch, &mem).unwrap();
        let first = record_size(2, 5000) + record_size(4, 70_000);
        assert_eq!(mem.separated_bytes(), first);
        // Counted per memtable: a batch separated before a switch and inserted after it counts
        // toward the memtable holding its pointers, and a new memtable starts from nothing.
        let mut later = WriteBatch::new();
        later.put_separated(b"k3", &pointer(9000));
        later.set_sequence(4);
        insert_into_memtable(&later, &mem).unwrap();
        assert_eq!(mem.separated_bytes(), first + record_size(2, 9000));
        let next = MemTable::new(InternalKeyComparator::new(BytewiseComparator::shared()));
        assert_eq!(next.separated_bytes(), 0);
    }
}
