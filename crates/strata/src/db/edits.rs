//! Applying version edits while background threads run side by side: one edit at a time.
//!
//! The version set applies an edit in three steps — prepare under the state mutex, write the
//! manifest without it, install under it (`version/version_set.rs`) — and relies on one edit
//! being in flight at a time, each built on the version the previous one installed. Flushes
//! and compactions finish on several threads, so each first takes the *edit turn*
//! (`DbInner::edit_turn`, a mutex held from before the prepare to after the install; RocksDB
//! queues its manifest writers the same way). A thread holding the turn may decide what its
//! edit says knowing no other edit will land first: a flush chooses its table's level then
//! (`db/flush.rs`).
//!
//! Lock order: the edit turn before the state mutex. A thread holding the state mutex that
//! finds the turn taken releases the state mutex while it waits (the edit in flight needs it to
//! install), so the state may change across [`take_turn`].

use parking_lot::MutexGuard;

use super::{DbInner, DbState};
use crate::error::Result;
use crate::version::edit::VersionEdit;

/// The right to apply one version edit; see the module documentation.
pub(crate) struct EditTurn<'a> {
    _held: MutexGuard<'a, ()>,
}

/// Takes the edit turn, waiting (without the state mutex) while another edit is in flight.
pub(crate) fn take_turn<'a>(db: &'a DbInner, state: &mut MutexGuard<'_, DbState>) -> EditTurn<'a> {
    let held = match db.edit_turn.try_lock() {
        Some(held) => held,
        None => MutexGuard::unlocked(state, || db.edit_turn.lock()),
    };
    EditTurn { _held: held }
}

/// Applies `edit`: takes the edit turn, then see [`EditTurn::apply`].
pub(crate) fn apply_edit(
    db: &DbInner,
    state: &mut MutexGuard<'_, DbState>,
    edit: &mut VersionEdit,
) -> Result<()> {
    take_turn(db, state).apply(state, edit)
}

impl EditTurn<'_> {
    /// Applies `edit` to the version set: prepare under the mutex, write the manifest without
    /// it, install under it again, and refresh the readers' view. A failed manifest write
    /// records the background error at once: the edit may be durable or not, so from then on
    /// no file is deleted as obsolete (the next open, reading the manifest, knows which files
    /// are live). After a background error no edit is applied: a job that was running when
    /// another failed fails with that error.
    pub(crate) fn apply(
        self,
        state: &mut MutexGuard<'_, DbState>,
        edit: &mut VersionEdit,
    ) -> Result<()> {
        if let Some(e) = &state.bg_error {
            return Err(e.clone());
        }
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
                // Whether the edit is durable is unknown: the manifest on disk may name files
                // the current version does not, so no file may be deleted as obsolete from now
                // on.
                state.bg_error.get_or_insert_with(|| e.clone());
                Err(e)
            }
        }
    }
}
