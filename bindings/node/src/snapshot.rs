//! Explicit snapshots (`db.snapshot()`), and the implicit one every read takes: a read pins the
//! database's state on the JavaScript thread, when it is called, so it sees exactly the writes
//! that had finished by then, however late the thread pool runs it.

use std::sync::Arc;

use napi_derive::napi;

use crate::errors::{Code, Failure, Outcome};
use crate::handle::Handle;

/// A snapshot of one database, open until `close()` (or until its database closes, which
/// abstract-level does first).
#[napi]
pub struct Snapshot {
    handle: Arc<Handle>,
    pinned: Option<strata::Snapshot>,
}

#[napi]
impl Snapshot {
    /// Releases the snapshot. Idempotent.
    #[napi]
    pub fn close(&mut self) {
        self.pinned = None;
    }
}

impl Snapshot {
    /// A new snapshot of `handle`'s database as of now.
    pub(crate) fn take(handle: &Arc<Handle>) -> Outcome<Snapshot> {
        Ok(Snapshot {
            handle: Arc::clone(handle),
            pinned: Some(handle.read_now(|db| Ok(db.snapshot()))?),
        })
    }
}

/// The snapshot a read of `handle` runs at: `explicit` when given (it must be open and of this
/// database), else a new one taken now.
pub(crate) fn pin(handle: &Arc<Handle>, explicit: Option<&Snapshot>) -> Outcome<strata::Snapshot> {
    let Some(snapshot) = explicit else {
        return handle.read_now(|db| Ok(db.snapshot()));
    };
    if !Arc::ptr_eq(&snapshot.handle, handle) {
        return Err(Failure::new(
            Code::SnapshotNotOpen,
            "The snapshot belongs to another database (or to this one before it was reopened)",
        ));
    }
    snapshot
        .pinned
        .clone()
        .ok_or_else(|| Failure::new(Code::SnapshotNotOpen, "Snapshot is not open"))
}
