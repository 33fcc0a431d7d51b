//! Compactions asked for through the API: `DB::compact_range`, and suspending and resuming
//! compactions.
//!
//! `compact_range` hands the background threads one [`ManualCompaction`] at a time (a level and
//! a key range) and waits until they have compacted it step by step (`db/background.rs`: one
//! step in flight at a time, each picked from the version the previous one left). A step that
//! would meet a compaction in flight waits for it, and holds its files back from other picks
//! meanwhile.

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::flush::flush_memtable;
use super::obsolete_files::pass_and_wait;
use super::{DbInner, ManualCompaction};
use crate::error::{Error, Result};
use crate::version::NUM_LEVELS;

/// `DB::compact_range`: flushes the memtable, then compacts each level that overlaps the range
/// into the next, down to the deepest level holding data in it. When compactions reclaim more
/// than shadowed entries, that deepest level is then rewritten in place: every file of it in
/// the range when expired values or the compaction filter's decisions may be waiting there
/// (`compaction/filter.rs`), the files holding range tombstones otherwise — a tombstone and the
/// entries it deletes that a snapshot kept together are dropped once no snapshot needs them,
/// which no compaction into a deeper level could do at the last level. It returns after a pass
/// deleting the files no version needs any more.
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
    // The call returns with nothing obsolete on disk: not only each step's inputs (the step
    // waits for them) but also what was released meanwhile, such as the tables of a version
    // an iterator held. The flush's own pass may still be running (its waiters are woken
    // before it deletes): this waits for a pass begun after it.
    pass_and_wait(db, &mut db.state.lock());
    Ok(())
}

/// See [`DB::suspend_compactions`](super::DB::suspend_compactions).
pub(crate) fn suspend_compactions(db: &DbInner) {
    let mut state = db.state.lock();
    state.compactions_suspended = state.compactions_suspended.saturating_add(1);
    while state.compaction_jobs > 0 {
        db.bg_done.wait(&mut state);
    }
}

/// See [`DB::resume_compactions`](super::DB::resume_compactions).
pub(crate) fn resume_compactions(db: &DbInner) {
    let mut state = db.state.lock();
    state.compactions_suspended = state.compactions_suspended.saturating_sub(1);
    db.bg_work.notify_all();
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
        running: false,
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
