//! Background work: flushing the immutable memtable, compactions (automatic and requested by
//! `compact_range`), and deleting files no version uses any more.
//!
//! One worker thread runs every job, so at most one version edit is in flight at a time (the
//! version set relies on it). The worker sleeps on `bg_work` until there is something to do:
//! an immutable memtable (always first: writers may be waiting on it), a manual compaction, or
//! a version that wants compaction. After a job it wakes everyone waiting on `bg_done`.
//! A large compaction's merge is spread over scoped threads inside its job (see
//! `compaction_job`); they end before the job does, so jobs and edits stay one at a time.
//! A failed job records the background error and stops further work; writes then fail with
//! that error instead of piling up in memory. A panicking job (a bug) is caught and recorded
//! the same way, so nobody waits forever for it. A failed manifest write records it at once:
//! the edit may be durable or not, so from then on no file is deleted as obsolete (the next
//! open, reading the manifest, knows which files are live).

use std::any::Any;
use std::collections::HashSet;
use std::io;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::MutexGuard;

use super::table_build::build_table;
use super::{value_files, value_gc, DbInner, DbState, LevelStats, ManualCompaction};
use crate::compaction::picker::{self, needs_compaction, pick_level_for_memtable_output};
use crate::compaction::Compaction;
use crate::error::{Error, Result};
use crate::filename::{parse_file_name, FileType};
use crate::memtable::MemTable;
use crate::options::WriteOptions;
use crate::util::internal_key::user_key;
use crate::version::edit::VersionEdit;
use crate::version::version::Version;
use crate::version::NUM_LEVELS;

/// Starts the worker thread of `db`.
pub(crate) fn spawn_worker(db: Arc<DbInner>) -> Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("strata-bg".into())
        .spawn(move || worker_loop(&db))
        .map_err(|e| Error::io("starting the background thread", e))
}

fn has_work(db: &DbInner, state: &DbState) -> bool {
    state.bg_error.is_none()
        && (state.imm.is_some()
            || (state.compactions_suspended == 0
                && (state.manual.as_ref().is_some_and(|m| !m.done)
                    || !state.value_gc.tables.is_empty()
                    || state.value_gc_stale(&db.snapshots)
                    || needs_compaction(state.versions.current()))))
        && !db.shutting_down.load(Ordering::Acquire)
}

fn worker_loop(db: &Arc<DbInner>) {
    let mut state = db.state.lock();
    loop {
        while !has_work(db, &state) {
            if db.shutting_down.load(Ordering::Acquire) {
                return;
            }
            db.bg_work.wait(&mut state);
        }
        state.bg_busy = true;
        if let Err(e) = panics_as_errors("background work", || background_job(db, &mut state)) {
            if !db.shutting_down.load(Ordering::Acquire) {
                db.info_log.log(format_args!("background error: {e}"));
                state.bg_error.get_or_insert(e);
            }
        }
        state.bg_busy = false;
        db.bg_done.notify_all();
    }
}

/// Runs `job`, turning a panic in it into the error [`panic_error`] describes.
pub(crate) fn panics_as_errors<T>(what: &str, job: impl FnOnce() -> Result<T>) -> Result<T> {
    panic::catch_unwind(AssertUnwindSafe(job))
        .unwrap_or_else(|payload| Err(panic_error(what, &*payload)))
}

/// The error a panic in `what` leaves (a user callback such as a comparator that panics, or a
/// bug): as a background error, writes, flushes and compactions then fail with it instead of
/// waiting forever for work that will not be done.
pub(crate) fn panic_error(what: &str, payload: &(dyn Any + Send)) -> Error {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned());
    Error::io(
        format!("{what} panicked (in a user callback such as the comparator, or a bug in Strata)"),
        io::Error::other(message),
    )
}

/// One unit of background work, chosen in priority order.
fn background_job(db: &Arc<DbInner>, state: &mut MutexGuard<'_, DbState>) -> Result<()> {
    if state.imm.is_some() {
        return compact_memtable(db, state);
    }
    if let Some(manual) = state.manual.as_ref().filter(|m| !m.done) {
        let (level, begin, end) = (manual.level, manual.begin.clone(), manual.end.clone());
        let (begin, end) = (begin.as_deref(), end.as_deref());
        let st = &mut **state;
        let in_place = st.manual.as_ref().and_then(|m| m.in_place.as_ref());
        let compaction = match in_place {
            Some(files) => picker::compact_range_in_place(
                st.versions.current(),
                st.versions.options.max_file_size,
                level,
                (begin, end),
                files,
            ),
            None => picker::compact_range(&mut st.versions, level, begin, end),
        };
        let in_place = in_place.is_some();
        let Some(c) = compaction else {
            mark_manual_done(state, None);
            return Ok(());
        };
        // Compacting into the next level empties the range up to the last input's key: the
        // next step starts there. Compacting in place leaves new files, which the next step
        // skips: they are not among the files to rewrite.
        let resume = c.inputs[0]
            .last()
            .map(|f| user_key(&f.meta.largest).to_vec());
        let result = run_compaction(db, state, c, true);
        match &result {
            Ok(()) if in_place => {}
            Ok(()) => mark_manual_done(state, resume),
            Err(_) => mark_manual_done(state, None),
        }
        return result;
    }
    // Garbage collection first: the space bound holds only while it keeps up.
    if state.value_gc_stale(&db.snapshots) {
        // Done once, even if planning fails.
        state.value_gc.replan_at = None;
        state.value_gc.sweep = false;
        delete_obsolete_files(db, state);
        return Ok(());
    }
    if let Some(c) = value_gc::pick_compaction(state) {
        return run_compaction(db, state, c, true);
    }
    match picker::pick_compaction(&mut state.versions) {
        Some(c) => run_compaction(db, state, c, false),
        None => Ok(()),
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

fn run_compaction(
    db: &Arc<DbInner>,
    state: &mut MutexGuard<'_, DbState>,
    mut c: Compaction,
    manual: bool,
) -> Result<()> {
    if !manual && c.is_trivial_move() {
        let Some(file) = c.inputs[0].first().cloned() else {
            return Ok(());
        };
        c.edit.delete_file(c.level, file.number());
        c.edit.new_files.push((c.level + 1, file.meta.clone()));
        apply_edit(state, &mut c.edit)?;
        db.info_log.log(format_args!(
            "moved #{} to level-{} {} bytes: {}",
            file.number(),
            c.level + 1,
            file.meta.file_size,
            state.versions.level_summary()
        ));
        return Ok(());
    }
    let result = super::compaction_job::run(db, state, &mut c);
    // Release the input version first: while it lives, its files (the inputs) count as live.
    drop(c);
    // After a failed manifest write this deletes nothing: `apply_edit` recorded the background
    // error, so files the edit may have named stay.
    delete_obsolete_files(db, state);
    result
}

/// Applies `edit` to the version set: prepare under the mutex, write the manifest without it,
/// install under it again, and refresh the readers' view.
pub(crate) fn apply_edit(
    state: &mut MutexGuard<'_, DbState>,
    edit: &mut VersionEdit,
) -> Result<()> {
    let mut write = state.versions.prepare(edit)?;
    let result = MutexGuard::unlocked(state, || write.write());
    match result {
        Ok(()) => {
            state.versions.install(write, edit);
            state.refresh_super_version();
            Ok(())
        }
        Err(e) => {
            // The record may be partially written: later edits go to a fresh manifest.
            state.versions.abandon(write, false);
            // Whether the edit is durable is unknown: the manifest on disk may name files the
            // current version does not, so no file may be deleted as obsolete from now on.
            state.bg_error.get_or_insert_with(|| e.clone());
            Err(e)
        }
    }
}

/// Flushes the immutable memtable to a table and drops the logs it no longer needs.
pub(crate) fn compact_memtable(
    db: &Arc<DbInner>,
    state: &mut MutexGuard<'_, DbState>,
) -> Result<()> {
    let Some(imm) = state.imm.clone() else {
        return Ok(());
    };
    let base = Arc::clone(state.versions.current());
    let mut edit = VersionEdit::default();
    write_level0_table(db, state, &imm, &mut edit, Some(&base))?;
    if db.shutting_down.load(Ordering::Acquire) {
        return Err(Error::InvalidArgument(
            "database closed during memtable flush".into(),
        ));
    }
    state.retire_older_logs(&mut edit);
    apply_edit(state, &mut edit)?;
    state.imm = None;
    db.has_imm.store(false, Ordering::Release);
    state.refresh_super_version();
    // Writers waiting for room need not wait for the deletions too.
    db.bg_done.notify_all();
    delete_obsolete_files(db, state);
    Ok(())
}

/// Writes `mem` to a new table and records it in `edit`, at level 0 or, when `base` is given
/// and the table overlaps nothing, deeper (but above the output level of a compaction being
/// merged whose key range it meets).
pub(crate) fn write_level0_table(
    db: &DbInner,
    state: &mut MutexGuard<'_, DbState>,
    mem: &Arc<MemTable>,
    edit: &mut VersionEdit,
    base: Option<&Version>,
) -> Result<()> {
    let start = db.env.now_micros();
    let number = state.versions.new_file_number();
    state.pending_outputs.insert(number);
    db.info_log
        .log(format_args!("level-0 table #{number}: started"));
    let options = db.options.table_options();
    let result = MutexGuard::unlocked(state, || {
        // The values the memtable's pointers name become durable before the table does.
        value_files::sync(db)?;
        let mut iter = mem.iter();
        build_table(
            &db.dir,
            &*db.env,
            &options,
            &db.table_cache,
            &mut iter,
            mem.range_tombstones().as_deref(),
            number,
        )
    });
    state.pending_outputs.remove(&number);
    let meta = result?;
    db.info_log.log(format_args!(
        "level-0 table #{number}: {} bytes",
        meta.file_size
    ));
    let mut level = 0;
    if meta.file_size > 0 {
        if let Some(base) = base {
            let (smallest, largest) = (user_key(&meta.smallest), user_key(&meta.largest));
            level = pick_level_for_memtable_output(
                base,
                smallest,
                largest,
                db.options.max_file_size as u64,
            );
            // A flush during a compaction's merge stays above its output level where their
            // ranges meet: the outputs will span the gaps between the inputs, so a table put
            // in such a gap would overlap them (`base` does not know the outputs yet).
            if let Some(running) = &state.compacting {
                let icmp = base.icmp();
                if icmp.compare_user(smallest, &running.largest) != std::cmp::Ordering::Greater
                    && icmp.compare_user(largest, &running.smallest) != std::cmp::Ordering::Less
                {
                    level = level.min(running.output_level - 1);
                }
            }
        }
        let bytes = meta.file_size;
        edit.new_files.push((level, meta));
        state.stats[level].add(&LevelStats {
            micros: db.env.now_micros().saturating_sub(start),
            bytes_read: 0,
            bytes_written: bytes,
        });
    }
    Ok(())
}

/// Deletes every file in the directory that no live version, pending output or live log
/// needs, stopping early when a memtable flush is waiting (the next call, after it, goes on),
/// and the value files nothing reaches (`value_files::delete_unreferenced`, whose failure
/// becomes the background error). Skipped after a background error: the manifest's state is
/// then uncertain.
pub(crate) fn delete_obsolete_files(db: &DbInner, state: &mut MutexGuard<'_, DbState>) {
    if state.bg_error.is_some() {
        return;
    }
    let mut live: HashSet<u64> = state.versions.live_files();
    live.extend(state.pending_outputs.iter().copied());
    let Ok(names) = db.env.children(&db.dir) else {
        return;
    };
    let log_number = state.versions.log_number;
    let prev_log_number = state.versions.prev_log_number;
    let manifest_number = state.versions.manifest_file_number;
    let mut doomed = Vec::new();
    for name in names {
        let Some((number, kind)) = parse_file_name(&name) else {
            continue;
        };
        let keep = match kind {
            FileType::Log => number >= log_number || number == prev_log_number,
            FileType::Descriptor => number >= manifest_number,
            FileType::Table | FileType::Temp => live.contains(&number),
            // Value files go by their own rule, below.
            FileType::Current | FileType::DbLock | FileType::InfoLog | FileType::ValueFile => true,
        };
        if !keep {
            doomed.push((name, number, kind));
        }
    }
    let accounted = MutexGuard::unlocked(state, || {
        let accounted = value_files::delete_unreferenced(db);
        for (name, number, kind) in doomed {
            if db.has_imm.load(Ordering::Acquire) {
                // Writers may be waiting for that flush, and removing a file can take
                // milliseconds: the rest stay obsolete and go after the flush.
                break;
            }
            if kind == FileType::Table {
                db.table_cache.evict(number);
            }
            match db.env.remove_file(&db.dir.join(&name)) {
                Ok(()) => db.info_log.log(format_args!("deleted {name}")),
                Err(e) => db.info_log.log(format_args!("deleting {name}: {e}")),
            }
        }
        accounted
    });
    // The value files' accounting read what a compaction reads: an I/O failure stops writes
    // as a compaction's does (an open fails with it). Damage in a table it reads stops only
    // the collection (it deleted nothing, and the next pass tries again): a damaged block
    // costs its own keys, not the database (docs/guarantees.md); `strata check` names it.
    match accounted {
        Err(Error::Corruption(_)) | Ok(()) => {}
        Err(e) => {
            state.bg_error.get_or_insert(e);
            db.bg_done.notify_all();
        }
    }
}

/// `DB::compact_range`: flushes the memtable, then compacts each level that overlaps the range
/// into the next, down to the deepest level holding data in it. When compactions reclaim more
/// than shadowed entries, that deepest level is then rewritten in place: every file of it in
/// the range when expired values or the compaction filter's decisions may be waiting there
/// (`compaction/filter.rs`), the files holding range tombstones otherwise — a tombstone and the
/// entries it deletes that a snapshot kept together are dropped once no snapshot needs them,
/// which no compaction into a deeper level could do at the last level.
pub(crate) fn compact_range(
    db: &Arc<DbInner>,
    begin: Option<&[u8]>,
    end: Option<&[u8]>,
) -> Result<()> {
    db.refuse_if_read_only("compact_range")?;
    // First: the flush may put the memtable's table below level 0 (at most level 2).
    flush_memtable(db)?;
    let max_level = {
        let state = db.state.lock();
        let version = state.versions.current();
        (1..NUM_LEVELS)
            .filter(|&l| version.overlap_in_level(l, begin, end))
            .max()
            .unwrap_or(1)
    };
    for level in 0..max_level {
        run_manual_compaction(db, level, begin, end, None)?;
    }
    let rewrites = db.options.expiring_keys || db.options.compaction_filter.is_some();
    if rewrites || db.options.range_deletes {
        let files = db
            .state
            .lock()
            .versions
            .current()
            .overlapping_inputs(max_level, begin, end);
        let mut doomed = HashSet::new();
        for f in files {
            if rewrites
                || db
                    .table_cache
                    .find_table(f.number(), f.meta.file_size)?
                    .range_tombstones()
                    .is_some()
            {
                doomed.insert(f.number());
            }
        }
        if !doomed.is_empty() {
            run_manual_compaction(db, max_level, begin, end, Some(doomed))?;
        }
    }
    Ok(())
}

/// See [`DB::suspend_compactions`](super::DB::suspend_compactions).
pub(crate) fn suspend_compactions(db: &DbInner) {
    let mut state = db.state.lock();
    state.compactions_suspended = state.compactions_suspended.saturating_add(1);
    while state.bg_busy {
        db.bg_done.wait(&mut state);
    }
}

/// See [`DB::resume_compactions`](super::DB::resume_compactions).
pub(crate) fn resume_compactions(db: &DbInner) {
    let mut state = db.state.lock();
    state.compactions_suspended = state.compactions_suspended.saturating_sub(1);
    db.bg_work.notify_all();
}

/// Forces the memtable to a table and waits until it is written.
pub(crate) fn flush_memtable(db: &Arc<DbInner>) -> Result<()> {
    super::write::write(db, &WriteOptions::default(), None)?;
    let mut state = db.state.lock();
    while state.imm.is_some() && state.bg_error.is_none() {
        db.bg_done.wait(&mut state);
    }
    match &state.bg_error {
        Some(e) => Err(e.clone()),
        None => Ok(()),
    }
}

fn run_manual_compaction(
    db: &Arc<DbInner>,
    level: usize,
    begin: Option<&[u8]>,
    end: Option<&[u8]>,
    in_place: Option<HashSet<u64>>,
) -> Result<()> {
    let mut state = db.state.lock();
    // One manual compaction at a time.
    while state.manual.is_some() {
        db.bg_done.wait(&mut state);
    }
    state.manual = Some(ManualCompaction {
        level,
        begin: begin.map(<[u8]>::to_vec),
        end: end.map(<[u8]>::to_vec),
        in_place,
        done: false,
    });
    db.bg_work.notify_all();
    loop {
        if let Some(e) = &state.bg_error {
            let e = e.clone();
            state.manual = None;
            db.bg_done.notify_all();
            return Err(e);
        }
        if db.shutting_down.load(Ordering::Acquire) {
            state.manual = None;
            return Err(Error::InvalidArgument("database is closing".into()));
        }
        if state.manual.as_ref().is_some_and(|m| m.done) {
            state.manual = None;
            db.bg_done.notify_all();
            return Ok(());
        }
        db.bg_done.wait(&mut state);
    }
}
