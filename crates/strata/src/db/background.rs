//! Background work: flushing the immutable memtable, compactions (automatic, `compact_range`'s
//! steps, value-file garbage collection's), and deleting files no version uses any more.
//!
//! Threads (`Options::max_background_jobs`, `N`):
//! - `N = 1`: one thread runs every job, one at a time, as LevelDB does: a flush first (writers
//!   may be waiting for it), then a compaction, which flushes a memtable that fills meanwhile in
//!   the middle of its merge (`db/compaction_job.rs`).
//! - `N >= 2`: one thread flushes memtables and does nothing else, so a flush never waits
//!   behind a compaction (RocksDB's high-priority pool, Pebble's flush loop); `N` threads run
//!   compactions, as many at once as there are that do not meet (`compaction/running.rs`):
//!   level 0 into level 1 beside a compaction of deeper levels, or of other key ranges.
//!
//! A large compaction's merge is also spread over scoped threads inside its job
//! (`Options::max_subcompactions`); they end before the job does.
//!
//! Compaction threads lower their CPU priority when they start (`Env::lower_thread_priority`;
//! their sub-compaction threads inherit it), so that with fewer cores than busy threads a
//! compaction, not a write, waits for the processor. Flushing threads keep the application's
//! priority: a full memtable makes writers wait for its flush, and a long time slice
//! (`Env::set_thread_time_slice`, `FLUSH_TIME_SLICE`), so a writer that wakes while it runs
//! may take the processor from it at once.
//!
//! A compaction thread takes, in this order: the next step of a `compact_range`, a redone
//! garbage-collection plan, the next rewrite garbage collection asks for, then an automatic
//! compaction (`compaction/picker.rs`); before the last, when no write is in progress and a
//! collection plan waits for the memtable's flush, it switches the memtable
//! (`write::switch_memtable_for_collection`: once writes stop, nothing else would). A step or
//! a rewrite that would meet a compaction in flight waits for it, and holds its files back
//! from the picks after it, so it is not kept waiting for ever. A compaction is entered in `DbState::compactions` before the state mutex
//! that picked it is released, and leaves it once its edit is installed or given up; edits are
//! applied one at a time (`db/edits.rs`).
//!
//! Threads sleep on `bg_work` until there is something to do; whoever makes work (a full
//! memtable, a `compact_range`, a finished job, a seek-triggered compaction, a resume) signals
//! it under the state mutex. After a job a thread wakes everyone waiting on `bg_done`.
//! A failed job records the background error and stops further work; writes then fail with
//! that error instead of piling up in memory. A panicking job (a bug, or a user callback) is
//! caught and recorded the same way, so nobody waits forever for it; what it had in flight
//! stays there, which no longer matters: no job starts after a background error.
//!
//! Locks: the state mutex is held to choose a job and released around its I/O; the edit turn
//! is taken before the state mutex (`db/edits.rs`).

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::MutexGuard;

use super::edits::apply_edit;
use super::flush::compact_memtable;
use super::obsolete_files::{delete_obsolete_files, wait_for_deletions};
use super::panics::panics_as_errors;
use super::value_gc::{self, Replan};
use super::{write, DbInner, DbState};
use crate::compaction::picker::{self, can_start};
use crate::compaction::running::InFlightId;
use crate::compaction::Compaction;
use crate::error::{Error, Result};
use crate::util::internal_key::user_key;

/// What a background thread does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Flushes and compactions, the only background thread (`max_background_jobs = 1`).
    All,
    /// Flushes only.
    Flush,
    /// Compactions only.
    Compact,
}

impl Role {
    fn flushes(self) -> bool {
        self != Role::Compact
    }

    fn compacts(self) -> bool {
        self != Role::Flush
    }

    fn thread_name(self) -> &'static str {
        match self {
            Role::All => "strata-bg",
            Role::Flush => "strata-bg-flush",
            Role::Compact => "strata-bg-compact",
        }
    }
}

/// The time slice of a thread that flushes (`Env::set_thread_time_slice`): long, where the
/// default is a few milliseconds. Linux's scheduler (EEVDF, 6.6 on) runs the thread whose
/// virtual deadline, a slice past the start of its turn, comes first, and from 6.12 a waking
/// thread with a shorter slice than the running one's may take the processor at once: with a
/// long slice the flush gives way to a writer that wakes, instead of keeping the processor
/// until its turn ends. In 10M sorted writes in batches of 1000 through the Node binding here
/// (two cores, Linux 6.18; the loop of `bindings/node/bench/sorted-write.js`, Strata alone),
/// it left 4-11 batches over 10x the median (5 runs), where the default slices left 17-54
/// (21 runs). A 1 ms slice for the compaction threads besides, tried with it, changed nothing
/// measurable (4-13 in 11 runs); alone it left 14-24 (4 runs), and 1 ms for both threads
/// 6-27 (18 runs). In `strata bench --num 10000000 --benchmarks fillseq,fillrandom`,
/// `fillseq` left 0-2 of 10,000 batches over 10x (15 runs with it) against 2-27 (8 runs
/// without); `fillrandom` varied from hour to hour as much with it as without (2-27 in 15
/// runs against 3-18 in 11).
const FLUSH_TIME_SLICE: Duration = Duration::from_millis(20);

/// Starts the background threads of `db` (see the module documentation) and returns once each
/// has looked for work once: asleep, or running a job it found. Until then a thread takes the
/// state mutex when the scheduler gets to it, which for a compaction thread at its low priority
/// on a busy machine may be well after the open, and a write that must not wait
/// (`DB::try_write`) would find the state busy for no work at all. If a thread cannot be
/// started, those already started are stopped.
pub(crate) fn spawn_workers(db: &Arc<DbInner>) -> Result<Vec<JoinHandle<()>>> {
    let jobs = db.options.max_background_jobs.max(1);
    let roles: Vec<Role> = if jobs == 1 {
        vec![Role::All]
    } else {
        std::iter::once(Role::Flush)
            .chain(std::iter::repeat_n(Role::Compact, jobs))
            .collect()
    };
    let mut workers = Vec::with_capacity(roles.len());
    for role in roles {
        let worker_db = Arc::clone(db);
        let spawned = std::thread::Builder::new()
            .name(role.thread_name().into())
            .spawn(move || worker_loop(&worker_db, role));
        match spawned {
            Ok(worker) => workers.push(worker),
            Err(e) => {
                stop_workers(db, workers);
                return Err(Error::io("starting a background thread", e));
            }
        }
    }
    let mut state = db.state.lock();
    while state.workers_started < workers.len() {
        db.bg_done.wait(&mut state);
    }
    Ok(workers)
}

/// Stops the background threads of `db` and waits for them: their jobs end early (the
/// database is closing).
pub(crate) fn stop_workers(db: &DbInner, workers: Vec<JoinHandle<()>>) {
    db.shutting_down.store(true, Ordering::Release);
    {
        let _state = db.state.lock();
        db.bg_work.notify_all();
        db.bg_done.notify_all();
    }
    for worker in workers {
        let _ = worker.join();
    }
}

/// Whether compactions flush the immutable memtable in the middle of their merge: when no
/// thread of its own flushes it.
pub(crate) fn merges_flush(db: &DbInner) -> bool {
    db.options.max_background_jobs <= 1
}

/// One unit of background work.
enum Job {
    /// Flush the immutable memtable.
    Flush,
    /// Redo garbage collection's plan (`db/value_gc.rs`), deleting what it frees; one at a
    /// time (`value_gc::Replan`).
    Replan,
    /// Delete obsolete files for a caller waiting for a pass (`obsolete_files::pass_and_wait`).
    DeleteObsolete,
    /// Run a compaction, already entered as in flight.
    Compact {
        c: Box<Compaction>,
        id: InFlightId,
        kind: Kind,
    },
}

/// Who asked for a compaction.
enum Kind {
    /// The picker (size or seeks): a single file with little below it is moved, not rewritten.
    Auto,
    /// A step of `compact_range`; the next step starts after `resume` (a user key), or is
    /// picked afresh when it compacts in place (new files are not among those to rewrite).
    Manual {
        in_place: bool,
        resume: Option<Vec<u8>>,
    },
    /// Garbage collection of value files.
    Collect,
}

/// How often an idle compaction thread of a database with value separation looks for
/// released readers, and whether writes stopped with the value files past their bound
/// (`worker_loop`).
const AT_REST_POLL: Duration = Duration::from_millis(100);

/// The count of bytes appended to value files, and since when it is unchanged: writes
/// stopped once it is for [`AT_REST_POLL`].
struct Quiet {
    appended: u64,
    since: Instant,
}

impl Quiet {
    /// Whether `appended` is the count seen [`AT_REST_POLL`] ago or longer.
    fn for_a_poll(&mut self, appended: u64) -> bool {
        if appended != self.appended {
            self.appended = appended;
            self.since = Instant::now();
            return false;
        }
        self.since.elapsed() >= AT_REST_POLL
    }
}

fn worker_loop(db: &Arc<DbInner>, role: Role) {
    if role.flushes() {
        db.env.set_thread_time_slice(FLUSH_TIME_SLICE);
    }
    if role == Role::Compact {
        // Its sub-compaction threads inherit the priority. Flushes keep the writers' own:
        // writers wait for them when the memtable is full.
        db.env.lower_thread_priority();
    }
    let mut quiet = Quiet {
        appended: db.value_bytes_appended.load(Ordering::Acquire),
        since: Instant::now(),
    };
    let mut state = db.state.lock();
    state.workers_started += 1;
    db.bg_done.notify_all();
    loop {
        if db.shutting_down.load(Ordering::Acquire) {
            return;
        }
        let Some(job) = next_job(db, &mut state, role) else {
            if role.compacts() && db.options.value_separation.is_some() {
                // Once writes stop, nothing else looks: a reader releasing an older state
                // tells nobody (value files only it reached stay: a database rested at 6x
                // after a scan ended), and no flush or compaction redoes the plan. Writes
                // that do not fill the memtable wake no thread, so this one looks by itself.
                db.bg_work.wait_for(&mut state, AT_REST_POLL);
                state.note_released_readers();
                let appended = db.value_bytes_appended.load(Ordering::Acquire);
                if quiet.for_a_poll(appended) && state.value_gc.redo_at_rest(appended) {
                    state.value_gc.redone_at_rest = true;
                    state.value_gc.sweep = true;
                }
            } else {
                db.bg_work.wait(&mut state);
            }
            continue;
        };
        let compaction = !matches!(job, Job::Flush);
        state.compaction_jobs += usize::from(compaction);
        if let Err(e) = panics_as_errors("background work", || run(db, &mut state, job)) {
            record_error(db, &mut state, e);
        }
        state.compaction_jobs -= usize::from(compaction);
        db.bg_done.notify_all();
        // Another thread's pick may have waited for this job.
        db.bg_work.notify_all();
    }
}

/// Makes `e`, the failure of a background job, the background error (unless the database is
/// closing, which fails jobs on purpose, or an earlier error is recorded).
fn record_error(db: &DbInner, state: &mut DbState, e: Error) {
    if state.bg_error.is_none() && !db.shutting_down.load(Ordering::Acquire) {
        db.info_log.log(format_args!("background error: {e}"));
        state.bg_error = Some(e);
    }
}

/// The next job for a thread of `role`, if there is one it may start now.
fn next_job(db: &DbInner, state: &mut MutexGuard<'_, DbState>, role: Role) -> Option<Job> {
    if state.bg_error.is_some() {
        return None;
    }
    if role.flushes() && state.imm.is_some() {
        return Some(Job::Flush);
    }
    if role.compacts() && state.obsolete_files.take_asked() {
        return Some(Job::DeleteObsolete);
    }
    if !role.compacts() || state.compactions_suspended > 0 {
        return None;
    }
    let mut held = HashSet::new();
    if let Some(job) = manual_step(db, state, &mut held) {
        return Some(job);
    }
    // Garbage collection first: the space bound holds only while it keeps up.
    if !state.value_gc.replan.running && state.value_gc_stale(&db.snapshots) {
        let smallest = state.smallest_snapshot(&db.snapshots);
        let gc = &mut state.value_gc;
        gc.replan = Replan {
            running: true,
            writes_wait: gc.snapshot_released(|| smallest) || gc.over_bound,
        };
        // Done once, even if planning fails.
        gc.replan_at = None;
        gc.sweep = false;
        return Some(Job::Replan);
    }
    if let Some(c) = value_gc::pick_compaction(state) {
        if can_start(&c, &state.compactions, &held) {
            return Some(start(state, c, Kind::Collect));
        }
        held.extend(c.inputs.iter().flatten().map(|f| f.number()));
    }
    if write::switch_memtable_for_collection(db, state) && role.flushes() {
        return Some(Job::Flush);
    }
    let c = picker::pick_compaction(&state.versions, &state.compactions, &mut held)?;
    Some(start(state, c, Kind::Auto))
}

/// The next step of the `compact_range` waiting, if it can start now. A step that cannot
/// holds its files back in `held`; when nothing is left to compact, the request is done.
fn manual_step(
    db: &DbInner,
    state: &mut MutexGuard<'_, DbState>,
    held: &mut HashSet<u64>,
) -> Option<Job> {
    let st = &mut **state;
    let manual = st.manual.as_ref().filter(|m| !m.done && !m.running)?;
    let (level, begin, end) = (manual.level, manual.begin.as_deref(), manual.end.as_deref());
    let compaction = match &manual.in_place {
        Some(files) => picker::compact_range_in_place(
            st.versions.current(),
            st.versions.options.max_file_size,
            level,
            (begin, end),
            files,
        ),
        None => picker::compact_range(&st.versions, &st.compactions, level, begin, end),
    };
    let in_place = manual.in_place.is_some();
    let Some(c) = compaction else {
        mark_manual_done(st, None);
        db.bg_done.notify_all();
        return None;
    };
    if !can_start(&c, &st.compactions, held) {
        held.extend(c.inputs.iter().flatten().map(|f| f.number()));
        return None;
    }
    // Compacting into the next level empties the range up to the last input's key: the
    // next step starts there. Compacting in place leaves new files, which the next step
    // skips: they are not among the files to rewrite.
    let resume = c.inputs[0]
        .last()
        .map(|f| user_key(&f.meta.largest).to_vec());
    if let Some(manual) = st.manual.as_mut() {
        manual.running = true;
    }
    Some(start(st, c, Kind::Manual { in_place, resume }))
}

/// Enters `c` as in flight and moves the compact pointers it moves.
fn start(state: &mut DbState, c: Compaction, kind: Kind) -> Job {
    state.versions.record_compact_pointers(&c.edit);
    let id = state.compactions.start(&c);
    Job::Compact {
        c: Box::new(c),
        id,
        kind,
    }
}

/// Advances a manual compaction: done when nothing was left, else resume after `resume`.
fn mark_manual_done(state: &mut DbState, resume: Option<Vec<u8>>) {
    if let Some(manual) = state.manual.as_mut() {
        match resume {
            Some(key) => manual.begin = Some(key),
            None => manual.done = true,
        }
    }
}

fn run(db: &Arc<DbInner>, state: &mut MutexGuard<'_, DbState>, job: Job) -> Result<()> {
    match job {
        Job::Flush => compact_memtable(db, state),
        Job::Replan => {
            // A pass running now may have begun before the release: the job waits for the
            // one after it (which redoes the plan), and writes waiting for it wait with it.
            delete_obsolete_files(db, state);
            wait_for_deletions(db, state);
            state.value_gc.replan = Replan::default();
            Ok(())
        }
        Job::DeleteObsolete => {
            delete_obsolete_files(db, state);
            Ok(())
        }
        Job::Compact { c, id, kind } => run_compaction(db, state, *c, id, kind),
    }
}

fn run_compaction(
    db: &Arc<DbInner>,
    state: &mut MutexGuard<'_, DbState>,
    mut c: Compaction,
    id: InFlightId,
    kind: Kind,
) -> Result<()> {
    let result = if matches!(kind, Kind::Auto) && c.is_trivial_move() {
        move_file(db, state, &mut c)
    } else {
        super::compaction_job::run(db, state, &mut c)
    };
    if let Err(e) = &result {
        // Before its inputs are free again: no other thread may pick them up meanwhile.
        record_error(db, state, e.clone());
    }
    state.compactions.finish(id);
    // Release the input version first: while it lives, its files (the inputs) count as live.
    drop(c);
    // Picks that waited for this compaction may start while this thread deletes files.
    db.bg_work.notify_all();
    // After a failed manifest write this deletes nothing: `apply_edit` recorded the background
    // error, so files the edit may have named stay.
    delete_obsolete_files(db, state);
    if let Kind::Manual { in_place, resume } = kind {
        // A step of `compact_range` ends after the deletions (or the pass it left them to),
        // so the call returns with the inputs gone.
        wait_for_deletions(db, state);
        if let Some(manual) = state.manual.as_mut() {
            manual.running = false;
        }
        match &result {
            Ok(()) if in_place => {}
            Ok(()) => mark_manual_done(state, resume),
            Err(_) => mark_manual_done(state, None),
        }
    }
    result
}

/// Moves the single input of `c` down a level without rewriting it.
fn move_file(db: &DbInner, state: &mut MutexGuard<'_, DbState>, c: &mut Compaction) -> Result<()> {
    let Some(file) = c.inputs[0].first().cloned() else {
        return Ok(());
    };
    c.edit.delete_file(c.level, file.number());
    c.edit.new_files.push((c.level + 1, file.meta.clone()));
    apply_edit(db, state, &mut c.edit)?;
    db.info_log.log(format_args!(
        "moved #{} to level-{} {} bytes: {}",
        file.number(),
        c.level + 1,
        file.meta.file_size,
        state.versions.level_summary()
    ));
    Ok(())
}
