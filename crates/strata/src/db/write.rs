//! The write path: group commit, the write-ahead log and the memtable switch.
//!
//! Writers queue up in `DbState::writers`. The writer at the front is the leader: it makes room
//! (maybe switching the memtable and waiting for the background worker), merges the batches of
//! the writers behind it into one group, and with the state mutex released appends the group as
//! one log record (one `fsync` for every `sync` writer in it) and applies it to the memtable.
//! Then it wakes the writers it committed and hands leadership to the next in line.
//!
//! A write is acknowledged only after its record reached the operating system (and the disk,
//! for `sync`). If a log write or sync fails the error is kept as the background error: the log
//! may hold a partial record, so no later write can be trusted to land after it.
//!
//! Switching to a new log syncs nothing: the old log's tail may reach the disk later than the
//! new log's writes, or never; `db/wal.rs` says how a power loss then still leaves a prefix of
//! the acknowledged writes and every synced one.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Condvar, Mutex, MutexGuard};

use super::{DbInner, DbState};
use crate::db::filename::log_file_name;
use crate::error::{Error, Result};
use crate::log::LogWriter;
use crate::memtable::MemTable;
use crate::options::WriteOptions;
use crate::util::internal_key::{ValueType, MAX_SEQUENCE};
use crate::version::version_set::{L0_SLOWDOWN_WRITES_TRIGGER, L0_STOP_WRITES_TRIGGER};
use crate::write_batch::{BatchOp, WriteBatch};

/// A batch group never grows past this many bytes.
const MAX_GROUP_BYTES: usize = 1 << 20;
/// A small leading batch only takes followers up to this much more, so it is not delayed much.
const SMALL_BATCH_BYTES: usize = 128 << 10;

/// One queued write.
pub(crate) struct Writer {
    /// `None` asks only for room: forces a memtable switch (used by `compact_range`).
    batch: Mutex<Option<WriteBatch>>,
    sync: bool,
    /// Set by the leader that committed this writer.
    outcome: Mutex<Option<Result<()>>>,
    wake: Condvar,
}

/// Commits `batch` (or, for `None`, forces the current memtable to be flushed).
pub(crate) fn write(
    db: &Arc<DbInner>,
    options: &WriteOptions,
    batch: Option<WriteBatch>,
) -> Result<()> {
    if let Some(b) = &batch {
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
    }
    let force = batch.is_none();
    let writer = Arc::new(Writer {
        batch: Mutex::new(batch),
        sync: options.sync,
        outcome: Mutex::new(None),
        wake: Condvar::new(),
    });
    let mut state = db.state.lock();
    state.writers.push_back(Arc::clone(&writer));
    loop {
        if let Some(outcome) = writer.outcome.lock().take() {
            return outcome;
        }
        if state
            .writers
            .front()
            .is_some_and(|w| Arc::ptr_eq(w, &writer))
        {
            break;
        }
        writer.wake.wait(&mut state);
    }

    // This writer leads the next group.
    let mut result = make_room_for_write(db, &mut state, force);
    let mut last_writer = Arc::clone(&writer);
    if result.is_ok() && !force {
        let (group, last) = build_group(&state);
        last_writer = last;
        let mut group = group;
        // The group takes the next `count` sequence numbers (none for an empty group).
        group.set_sequence(state.versions.last_sequence + 1);
        let sequence = state.versions.last_sequence + u64::from(group.count());
        if sequence > MAX_SEQUENCE {
            // Nothing was written: the database stays usable for reads and smaller writes.
            result = Err(Error::NotSupported(format!(
                "sequence numbers exhausted: last sequence {}, {} more needed",
                state.versions.last_sequence,
                group.count()
            )));
        } else {
            let mem = Arc::clone(&state.mem);
            let sync = writer.sync.then_some(state.versions.log_number);
            let outcome = MutexGuard::unlocked(&mut state, || commit_group(db, &group, &mem, sync));
            if let Err(e) = &outcome {
                // The log may now end in a partial record: refuse every later write.
                state.bg_error.get_or_insert_with(|| e.clone());
                db.bg_done.notify_all();
            }
            result = outcome;
            if result.is_ok() {
                state.versions.last_sequence = sequence;
            }
        }
    }

    // Wake every writer of the group, then the next leader.
    while let Some(front) = state.writers.pop_front() {
        let is_last = Arc::ptr_eq(&front, &last_writer);
        if !Arc::ptr_eq(&front, &writer) {
            *front.outcome.lock() = Some(result.clone());
            front.wake.notify_one();
        }
        if is_last {
            break;
        }
    }
    if let Some(next) = state.writers.front() {
        next.wake.notify_one();
    }
    result
}

/// Appends the group to the log and applies it to the memtable; `sync` (the manifest's log
/// number) makes the log durable first, with every log before it that is still needed. Runs
/// without the state mutex, by the group leader only.
fn commit_group(db: &DbInner, group: &WriteBatch, mem: &MemTable, sync: Option<u64>) -> Result<()> {
    {
        let mut wal = db.wal.lock();
        wal.append(group.contents())?;
        if let Some(min_live_log) = sync {
            wal.sync(&*db.env, &db.dir, min_live_log)?;
        }
    }
    insert_into_memtable(group, mem)
}

/// Checks a batch read back from a log before any of it is applied: every record decodes,
/// the count matches, and its sequence numbers fit the internal-key format. Offsets in the
/// error are within the batch.
pub(crate) fn check_logged_batch(batch: &WriteBatch) -> Result<()> {
    for op in batch.iter() {
        op?;
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
    Ok(())
}

/// Applies a batch whose sequence number is set to `mem`.
pub(crate) fn insert_into_memtable(batch: &WriteBatch, mem: &MemTable) -> Result<()> {
    let mut writer = mem.writer();
    for (sequence, op) in (batch.sequence()..).zip(batch.iter()) {
        match op? {
            BatchOp::Put { key, value } => writer.add(sequence, ValueType::Value, key, value),
            BatchOp::Delete { key } => writer.add(sequence, ValueType::Deletion, key, &[]),
        }
    }
    Ok(())
}

/// Merges the leader's batch with those of the writers queued behind it. Returns the group
/// and its last writer. A `sync` write is never added to a group led by a non-`sync` one, and
/// a flush request (no batch) ends the group.
fn build_group(state: &DbState) -> (WriteBatch, Arc<Writer>) {
    let mut writers = state.writers.iter();
    let leader = writers.next().map(Arc::clone);
    let Some(leader) = leader else {
        return (WriteBatch::new(), Arc::new(Writer::flush_marker()));
    };
    let mut group = leader.batch.lock().take().unwrap_or_default();
    let mut size = group.contents().len();
    let max_size = if size <= SMALL_BATCH_BYTES {
        size + SMALL_BATCH_BYTES
    } else {
        MAX_GROUP_BYTES
    };
    let mut last = Arc::clone(&leader);
    for writer in writers {
        if writer.sync && !leader.sync {
            break;
        }
        let mut slot = writer.batch.lock();
        let Some(batch) = slot.as_ref() else {
            break;
        };
        size += batch.contents().len();
        if size > max_size {
            break;
        }
        if let Some(batch) = slot.take() {
            group.append(&batch);
        }
        drop(slot);
        last = Arc::clone(writer);
    }
    (group, last)
}

impl Writer {
    fn flush_marker() -> Writer {
        Writer {
            batch: Mutex::new(None),
            sync: false,
            outcome: Mutex::new(None),
            wake: Condvar::new(),
        }
    }
}

/// Makes sure the memtable can take a write: slows writers down while level 0 is crowded,
/// waits while it is full, and switches to a new memtable and log when the current one is full
/// (or when `force` asks for it). Called by the group leader with the state mutex held.
fn make_room_for_write(
    db: &Arc<DbInner>,
    state: &mut MutexGuard<'_, DbState>,
    mut force: bool,
) -> Result<()> {
    let mut allow_delay = !force;
    loop {
        if let Some(e) = &state.bg_error {
            return Err(e.clone());
        }
        if db.shutting_down.load(Ordering::Acquire) {
            return Err(Error::InvalidArgument("database is closing".into()));
        }
        let level0 = state.versions.current().num_files(0);
        if allow_delay && level0 >= L0_SLOWDOWN_WRITES_TRIGGER {
            // Hand the background worker some of this thread's time instead of stalling
            // writes for seconds at the stop trigger later.
            MutexGuard::unlocked(state, || std::thread::sleep(Duration::from_millis(1)));
            allow_delay = false;
        } else if !force && state.mem.approximate_memory_usage() <= db.options.write_buffer_size {
            return Ok(());
        } else if state.imm.is_some() {
            db.info_log
                .log(format_args!("current memtable full; waiting for flush"));
            db.bg_done.wait(state);
        } else if level0 >= L0_STOP_WRITES_TRIGGER {
            db.info_log
                .log(format_args!("too many L0 files ({level0}); waiting"));
            db.bg_done.wait(state);
        } else {
            switch_memtable(db, state)?;
            force = false;
        }
    }
}

/// Starts a new log and memtable; the old memtable becomes immutable for the worker to flush.
fn switch_memtable(db: &Arc<DbInner>, state: &mut MutexGuard<'_, DbState>) -> Result<()> {
    let number = state.versions.new_file_number();
    let path = log_file_name(&db.dir, number);
    let file = match db.env.new_writable_file(&path) {
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
    let new_mem = Arc::new(MemTable::new(db.icmp.clone()));
    let old_mem = std::mem::replace(&mut state.mem, new_mem);
    state.imm = Some(old_mem);
    db.has_imm.store(true, Ordering::Release);
    state.refresh_super_version();
    db.bg_work.notify_all();
    Ok(())
}
