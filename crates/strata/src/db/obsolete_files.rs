//! Deleting the files no version, pending output or live log needs any more, after flushes and
//! compactions.
//!
//! One pass at a time: a thread that finds a pass running asks it to run once more
//! (`DbState::obsolete_files`) and goes on at once, so no background thread waits for another's
//! deletions, and no file is listed for deletion by two passes. What is live is decided from one
//! listing of the directory taken under the state mutex: a file created later is not listed, and
//! every file a flush or compaction is writing is a pending output from before its creation.
//!
//! The pass decides, and redoes garbage collection's plan (`value_files::delete_unreferenced`);
//! its thread removes the files it chose after the pass has ended, so writes waiting for that
//! plan (`db/value_gc.rs`, "Keeping up") do not wait for the removals as well: removing a value
//! file of a few megabytes took 5-6 ms here (ext4 mounted with `discard`), 38 of them in one
//! 8 KiB `leveledmix`. Files being removed are [`Removals`]: a pass that runs meanwhile leaves
//! them alone, and [`wait_for_deletions`] waits for them. A file chosen is never needed again
//! (numbers are never reused, and only new value files are appended to), so removing it later
//! than it was chosen changes nothing but when its space comes back; a crash before it leaves
//! an obsolete file the next open's pass removes.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

use parking_lot::{Mutex, MutexGuard};

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
    /// Whether a thread removes the files of an ended pass ([`Removals`]).
    removing: bool,
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

/// The numbers of the files a thread is removing after its pass ended (see the module
/// documentation); kept apart from the state mutex, since value files are listed without it.
#[derive(Debug, Default)]
pub(crate) struct Removals(Mutex<HashSet<u64>>);

impl Removals {
    /// Whether file `number` is being removed.
    pub(crate) fn contains(&self, number: u64) -> bool {
        self.0.lock().contains(&number)
    }
}

/// A file a pass chose to remove.
pub(crate) struct Doomed {
    pub(crate) number: u64,
    pub(crate) kind: FileType,
    pub(crate) path: PathBuf,
}

/// Deletes every file in the directory that no live version, pending output or live log
/// needs, stopping early when a memtable flush is waiting (a later pass, after it, goes on),
/// and the value files nothing reaches (`value_files::delete_unreferenced`, whose failure
/// becomes the background error). The files are removed once the pass has ended (see the
/// module documentation). Skipped after a background error: the manifest's state is then
/// uncertain. When another thread's pass is running, it runs once more instead.
pub(crate) fn delete_obsolete_files(db: &DbInner, state: &mut MutexGuard<'_, DbState>) {
    if state.obsolete_files.running {
        state.obsolete_files.again = true;
        return;
    }
    state.obsolete_files.running = true;
    let mut doomed = Vec::new();
    let mut passes = 0;
    loop {
        state.obsolete_files.again = false;
        state.obsolete_files.begun += 1;
        passes += 1;
        doomed.extend(one_pass(db, state));
        if !state.obsolete_files.again {
            break;
        }
    }
    state.obsolete_files.running = false;
    state.obsolete_files.removing = !doomed.is_empty();
    db.bg_done.notify_all();
    if !doomed.is_empty() {
        MutexGuard::unlocked(state, || remove(db, doomed));
        state.obsolete_files.removing = false;
    }
    state.obsolete_files.ended += passes;
    db.bg_done.notify_all();
}

/// Removes the `doomed` files (marked in `DbInner::removals` by the pass), stopping early when
/// a memtable flush is waiting: writers may be waiting for it, and removing a file can take
/// milliseconds. The rest stay obsolete, for a later pass.
fn remove(db: &DbInner, doomed: Vec<Doomed>) {
    for file in &doomed {
        if db.has_imm.load(Ordering::Acquire) {
            break;
        }
        if file.kind == FileType::Table {
            db.table_cache.evict(file.number);
        }
        let name = file.path.display();
        match db.env.remove_file(&file.path) {
            Ok(()) => db.info_log.log(format_args!("deleted {name}")),
            // Listed by this pass just as another thread removed it.
            Err(_) if !db.env.file_exists(&file.path) => {}
            Err(e) => db.info_log.log(format_args!("deleting {name}: {e}")),
        }
    }
    let mut removals = db.removals.0.lock();
    for file in &doomed {
        removals.remove(&file.number);
    }
}

/// Waits (on `bg_done`) until the deletions asked for before the call are done: when a pass
/// runs, until the next one has run (the one such a request was left to). Stops waiting at a
/// background error (no pass deletes anything after one; and a pass that panicked, which made
/// it, stays marked as running) or when the database closes.
pub(crate) fn wait_for_deletions(db: &DbInner, state: &mut MutexGuard<'_, DbState>) {
    let covering = state.obsolete_files.begun + 1;
    wait_until(db, state, |passes| {
        (!passes.running && !passes.removing) || passes.ended >= covering
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

/// One pass: the files to remove, marked in `DbInner::removals` (a file another thread is
/// removing is left to it).
fn one_pass(db: &DbInner, state: &mut MutexGuard<'_, DbState>) -> Vec<Doomed> {
    if state.bg_error.is_some() {
        return Vec::new();
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
        if !keep && !db.removals.contains(number) {
            doomed.push(Doomed {
                number,
                kind,
                path: db.dir.join(name),
            });
        }
    }
    let accounted = MutexGuard::unlocked(state, || {
        let accounted = value_files::delete_unreferenced(db, &mut doomed);
        db.removals
            .0
            .lock()
            .extend(doomed.iter().map(|file| file.number));
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
    doomed
}
