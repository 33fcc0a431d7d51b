//! Deleting the files no version, pending output or live log needs any more, after flushes and
//! compactions.
//!
//! One pass at a time: a thread that finds a pass running asks it to run once more
//! (`DbState::obsolete_files`) and goes on at once, so no background thread waits for another's
//! deletions, and no file is listed for deletion by two passes. What is live is decided from one
//! listing of the directory taken under the state mutex: a file created later is not listed, and
//! every file a flush or compaction is writing is a pending output from before its creation.

use std::collections::HashSet;
use std::sync::atomic::Ordering;

use parking_lot::MutexGuard;

use super::{value_files, DbInner, DbState};
use crate::error::Error;
use crate::filename::{parse_own_file_name, FileType};

/// Whether a pass of [`delete_obsolete_files`] runs, and whether it must run again.
#[derive(Debug, Default)]
pub(crate) struct Passes {
    running: bool,
    again: bool,
    /// Passes begun and ended (a pass asked to run again counts once per run).
    begun: u64,
    ended: u64,
    /// A caller of [`pass_and_wait`] waits for a background thread to run a pass.
    asked: bool,
}

impl Passes {
    /// Whether a caller asked for a pass, which the background thread taking it runs.
    pub(crate) fn take_asked(&mut self) -> bool {
        std::mem::take(&mut self.asked)
    }

    /// Whether a pass runs (it will redo garbage collection's plan, `db/value_gc.rs`).
    pub(crate) fn running(&self) -> bool {
        self.running
    }
}

/// Deletes every file in the directory that no live version, pending output or live log
/// needs, stopping early when a memtable flush is waiting (the next call, after it, goes on),
/// and the value files nothing reaches (`value_files::delete_unreferenced`, whose failure
/// becomes the background error). Skipped after a background error: the manifest's state is
/// then uncertain. When another thread's pass is running, it runs once more instead.
pub(crate) fn delete_obsolete_files(db: &DbInner, state: &mut MutexGuard<'_, DbState>) {
    if state.obsolete_files.running {
        state.obsolete_files.again = true;
        return;
    }
    state.obsolete_files.running = true;
    loop {
        state.obsolete_files.again = false;
        state.obsolete_files.begun += 1;
        one_pass(db, state);
        state.obsolete_files.ended += 1;
        db.bg_done.notify_all();
        if !state.obsolete_files.again {
            break;
        }
    }
    state.obsolete_files.running = false;
}

/// Waits (on `bg_done`) until the deletions asked for before the call are done: when a pass
/// runs, until the next one has run (the one such a request was left to). Stops waiting at a
/// background error (no pass deletes anything after one; and a pass that panicked, which made
/// it, stays marked as running) or when the database closes.
pub(crate) fn wait_for_deletions(db: &DbInner, state: &mut MutexGuard<'_, DbState>) {
    let covering = state.obsolete_files.begun + 1;
    wait_until(db, state, |passes| {
        !passes.running || passes.ended >= covering
    });
}

/// Has a background thread delete the files released before the call, and waits until a pass
/// that began after the call has ended (`DB::compact_range`'s last step). The caller's thread
/// runs no pass: a panic in one becomes the background error, as in any background job, and
/// writes going on meanwhile (each flush asking for one more pass) keep that thread busy, not
/// the caller. Stops waiting at a background error or when the database closes.
pub(crate) fn pass_and_wait(db: &DbInner, state: &mut MutexGuard<'_, DbState>) {
    let covering = state.obsolete_files.begun + 1;
    state.obsolete_files.asked = true;
    db.bg_work.notify_all();
    wait_until(db, state, |passes| passes.ended >= covering);
}

/// Waits on `bg_done` until `done` holds of the passes, a background error is recorded or the
/// database closes.
fn wait_until(db: &DbInner, state: &mut MutexGuard<'_, DbState>, done: impl Fn(&Passes) -> bool) {
    while !done(&state.obsolete_files)
        && state.bg_error.is_none()
        && !db.shutting_down.load(Ordering::Acquire)
    {
        db.bg_done.wait(state);
    }
}

fn one_pass(db: &DbInner, state: &mut MutexGuard<'_, DbState>) {
    if state.bg_error.is_some() {
        return;
    }
    let mut live: HashSet<u64> = state.versions.live_files();
    live.extend(state.pending_outputs.iter().copied());
    // A failed listing deletes no table or log; the value files are still looked at (they list
    // the directory themselves): no flush or compaction may follow to redo their plan.
    let names = db.env.children(&db.dir).unwrap_or_else(|e| {
        db.info_log.log(format_args!("listing the directory: {e}"));
        Vec::new()
    });
    let log_number = state.versions.log_number;
    let prev_log_number = state.versions.prev_log_number;
    let manifest_number = state.versions.manifest_file_number;
    let mut doomed = Vec::new();
    for name in names {
        let Some((number, kind)) = parse_own_file_name(&name) else {
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
