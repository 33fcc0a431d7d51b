//! `StrataSnapshot`'s native side: a pinned view of one database, released by `close()`.

use std::sync::Arc;

use jni::objects::{JClass, JObject};
use jni::sys::jlong;
use jni::{jni_mangle, EnvUnowned};
use parking_lot::Mutex;

use crate::database::Database;
use crate::errors::{run, Error};
use crate::handle;

/// What a Java snapshot's handle points to.
pub(crate) struct SnapshotHandle {
    database: Arc<Database>,
    /// `None` once closed.
    snapshot: Mutex<Option<strata::Snapshot>>,
}

impl SnapshotHandle {
    pub(crate) fn new(database: Arc<Database>, snapshot: strata::Snapshot) -> SnapshotHandle {
        SnapshotHandle {
            database,
            snapshot: Mutex::new(Some(snapshot)),
        }
    }
}

/// The engine snapshot behind `handle` (0: none), for a read of `database`. Fails for a closed
/// snapshot and for one taken from another database (its sequence number would mean nothing
/// there).
///
/// # Safety
/// `handle` is 0 or comes from a `StrataSnapshot` kept reachable during the call (the handle
/// contract in `handle`).
#[inline]
pub(crate) unsafe fn for_read(
    handle: jlong,
    database: &Database,
) -> Result<Option<strata::Snapshot>, Error> {
    if handle == 0 {
        return Ok(None);
    }
    // SAFETY: the caller's contract.
    let this = unsafe { handle::borrow::<SnapshotHandle>(handle) }?;
    if !std::ptr::eq(Arc::as_ptr(&this.database), database) {
        return Err(Error::Misuse(
            "the snapshot belongs to another database".to_owned(),
        ));
    }
    let snapshot = this.snapshot.lock();
    snapshot
        .clone()
        .ok_or_else(|| Error::closed("snapshot"))
        .map(Some)
}

#[jni_mangle("io.github.stratakv.StrataSnapshot")]
pub fn close<'local>(mut env: EnvUnowned<'local>, _this: JObject<'local>, handle: jlong) {
    run(&mut env, |_| {
        // SAFETY: `handle` comes from this `StrataSnapshot` (the handle contract in `handle`).
        let this = unsafe { handle::borrow::<SnapshotHandle>(handle) }?;
        let released = this.snapshot.lock().take();
        drop(released);
        Ok(())
    })
}

#[jni_mangle("io.github.stratakv.StrataSnapshot")]
pub fn dispose<'local>(mut env: EnvUnowned<'local>, _class: JClass<'local>, handle: jlong) {
    handle::dispose::<SnapshotHandle>(&mut env, handle)
}
