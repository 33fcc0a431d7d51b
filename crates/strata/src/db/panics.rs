//! Panics in work that others wait for (a write group, background work, a compaction's key
//! range) become errors, so nobody waits forever for work that will not be done.

use std::any::Any;
use std::io;
use std::panic::{self, AssertUnwindSafe};

use crate::error::{Error, Result};

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
