//! Native objects handed to Java as `long` handles.
//!
//! A handle is `Arc::into_raw` of the native object, stored in a `final long` field of the Java
//! object that owns it. The contract Java keeps (see `NativeObject.java`):
//!
//! - a handle is passed only to the native methods of its own kind (a database handle to
//!   `StrataDB`'s, an iterator handle to `StrataIterator`'s, ...);
//! - it is passed only while its Java owner is reachable: from an instance native method of
//!   the owner (the JNI frame holds `this`), or with `Reference.reachabilityFence` on the owner
//!   after the call;
//! - it is released exactly once, by the owner's `java.lang.ref.Cleaner` action, which runs
//!   only once the owner is unreachable, so no call can be using it.
//!
//! `close()` never releases a handle: it empties the native object (closes the engine database,
//! drops the engine iterator, ...), which is what frees files, threads and memory; the small
//! shell left behind answers every later call with a "closed" error instead of touching freed
//! memory.

use std::sync::Arc;

use jni::sys::jlong;
use jni::EnvUnowned;

use crate::errors::{run, Error};

/// Hands `object` to Java.
pub(crate) fn into_handle<T>(object: Arc<T>) -> jlong {
    Arc::into_raw(object) as jlong
}

/// The object behind `handle`.
///
/// # Safety
/// `handle` is 0 or was made by [`into_handle`] for a `T` and has not been [`release`]d; the
/// handle contract above guarantees both for handles coming from Java.
pub(crate) unsafe fn borrow<'a, T>(handle: jlong) -> Result<&'a T, Error> {
    let pointer = handle as *const T;
    // SAFETY: by the caller's contract a non-null handle points to a live `T` in an `Arc` that
    // stays alive at least as long as the Java call that passed it.
    unsafe { pointer.as_ref() }.ok_or_else(|| Error::Misuse("null native handle".to_owned()))
}

/// A new strong reference to the object behind `handle`.
///
/// # Safety
/// As for [`borrow`].
pub(crate) unsafe fn share<T>(handle: jlong) -> Result<Arc<T>, Error> {
    // SAFETY: as for `borrow`; the count is raised before the new `Arc` is made, so the one
    // Java holds stays valid.
    unsafe {
        borrow::<T>(handle)?;
        Arc::increment_strong_count(handle as *const T);
        Ok(Arc::from_raw(handle as *const T))
    }
}

/// Drops Java's reference to the object behind `handle` (0 is ignored).
///
/// # Safety
/// As for [`borrow`], and `handle` is never used again.
pub(crate) unsafe fn release<T>(handle: jlong) {
    if handle != 0 {
        // SAFETY: by the caller's contract this is the one reference `into_handle` gave away.
        drop(unsafe { Arc::from_raw(handle as *const T) });
    }
}

/// The body of every class's static `dispose` native method, which its Cleaner calls once the
/// owner is unreachable.
pub(crate) fn dispose<T>(env: &mut EnvUnowned<'_>, handle: jlong) {
    run(env, |_| {
        // SAFETY: the Cleaner calls it once, after which nothing can use the handle.
        unsafe { release::<T>(handle) };
        Ok(())
    })
}
