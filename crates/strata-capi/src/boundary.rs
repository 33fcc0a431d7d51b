//! Crossing the C boundary: catching panics, reporting errors through `errptr`, reading C
//! arguments and handing `malloc`'d buffers back.
//!
//! Everything here that touches a raw pointer is an `unsafe fn` whose precondition is the
//! crate's safety contract (see the crate docs) for that one pointer.

use std::any::Any;
use std::ffi::{c_char, CStr, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::ptr;

use engine::Error;

/// What a function body returns: a value, or the error to report through `errptr`.
pub(crate) type Outcome<T> = Result<T, Error>;

/// LevelDB's status text for `error`: `"<Kind>: <message>"`, with LevelDB's names for the
/// kinds, so C callers that look at the prefix keep working.
pub(crate) fn status_message(error: &Error) -> String {
    match error {
        Error::Corruption(c) => format!("Corruption: {c}"),
        Error::InvalidArgument(m) => format!("Invalid argument: {m}"),
        Error::Io { context, source } => format!("IO error: {context}: {source}"),
        Error::NotSupported(m) => format!("Not implemented: {m}"),
        other => format!("IO error: {other}"),
    }
}

/// The error reported for a NULL where a live object or buffer is required.
pub(crate) fn null_argument(what: &str) -> Error {
    Error::InvalidArgument(format!("{what} is NULL"))
}

/// The text of a panic payload (`panic!` with a literal or a formatted message).
fn panic_text(payload: &(dyn Any + Send)) -> &str {
    if let Some(text) = payload.downcast_ref::<&str>() {
        text
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text
    } else {
        "unknown panic"
    }
}

/// Copies `bytes` into a fresh `malloc` block. The block has at least one byte, so an empty
/// result is still distinguishable from NULL (which `leveldb_get` uses for "not found").
/// Returns NULL only when `malloc` fails.
pub(crate) fn malloc_bytes(bytes: &[u8]) -> *mut c_char {
    // SAFETY: `malloc` with a non-zero size returns NULL or a block of that many bytes.
    let block = unsafe { libc::malloc(bytes.len().max(1)) }.cast::<u8>();
    if !block.is_null() {
        // SAFETY: `block` holds at least `bytes.len()` bytes and is fresh, so it cannot overlap
        // `bytes`.
        unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), block, bytes.len()) };
    }
    block.cast()
}

/// A value handed to the caller: a fresh `malloc` copy, or an out-of-memory error (NULL alone
/// would read as "not found").
pub(crate) fn malloc_value(value: &[u8]) -> Outcome<*mut c_char> {
    let copy = malloc_bytes(value);
    if copy.is_null() {
        return Err(Error::io(
            format!("copying a value of {} bytes out", value.len()),
            std::io::Error::from(std::io::ErrorKind::OutOfMemory),
        ));
    }
    Ok(copy)
}

/// Frees the `malloc`'d blocks of `blocks` and sets each to NULL.
pub(crate) fn free_all(blocks: &mut [*mut c_char]) {
    for block in blocks {
        // SAFETY: each block is NULL or came from `malloc` and was not handed out.
        unsafe { libc::free(block.cast()) };
        *block = ptr::null_mut();
    }
}

/// Copies `text` into a fresh `malloc`'d NUL-terminated string; an interior NUL (never
/// produced by Strata's messages) is replaced by `?` so the whole text stays readable.
pub(crate) fn malloc_cstring(text: &str) -> *mut c_char {
    let mut bytes: Vec<u8> = text
        .bytes()
        .map(|b| if b == 0 { b'?' } else { b })
        .collect();
    bytes.push(0);
    malloc_bytes(&bytes)
}

/// Stores `message` in `*errptr` the way LevelDB does: a message already there is freed and
/// replaced. A NULL `errptr` drops the message.
///
/// # Safety
/// `errptr` is NULL or points to a writable `char*` that is NULL or a `malloc`'d block.
pub(crate) unsafe fn set_error(errptr: *mut *mut c_char, message: &str) {
    if errptr.is_null() {
        return;
    }
    // SAFETY: by the precondition `*errptr` is readable and writable, and holds NULL or a
    // block `malloc` gave out, which `free` accepts.
    unsafe {
        libc::free((*errptr).cast());
        *errptr = malloc_cstring(message);
    }
}

/// Runs `body`; an error or a panic is stored in `*errptr` and `fallback` returned instead.
///
/// # Safety
/// As [`set_error`] for `errptr`.
pub(crate) unsafe fn with_errptr<T>(
    errptr: *mut *mut c_char,
    fallback: T,
    body: impl FnOnce() -> Outcome<T>,
) -> T {
    let message = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(value)) => return value,
        Ok(Err(error)) => status_message(&error),
        Err(payload) => format!("IO error: internal error: {}", panic_text(payload.as_ref())),
    };
    // SAFETY: forwarded precondition.
    unsafe { set_error(errptr, &message) };
    fallback
}

/// Runs `body` for a function that has no error channel: a panic (already printed by the
/// panic hook) gives `fallback`.
pub(crate) fn guarded<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

/// The object behind a handle, or `Invalid argument` when it is NULL.
///
/// # Safety
/// `handle` is NULL or points to a live `T` that nobody mutates during `'a`.
pub(crate) unsafe fn live<'a, T>(handle: *const T, what: &str) -> Outcome<&'a T> {
    // SAFETY: forwarded precondition.
    unsafe { handle.as_ref() }.ok_or_else(|| null_argument(what))
}

/// The byte string `data[..len]`. NULL with length 0 is the empty string; NULL with a
/// non-zero length is `Invalid argument`.
///
/// # Safety
/// `data` is NULL or valid for reads of `len` bytes that stay unchanged during `'a`.
pub(crate) unsafe fn bytes<'a>(data: *const c_char, len: usize, what: &str) -> Outcome<&'a [u8]> {
    if data.is_null() {
        return if len == 0 {
            Ok(&[])
        } else {
            Err(null_argument(what))
        };
    }
    // SAFETY: `data` is non-NULL and valid for `len` bytes by the precondition.
    Ok(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) })
}

/// A NUL-terminated argument as bytes (without the NUL).
///
/// # Safety
/// `text` is NULL or a NUL-terminated string that stays unchanged during `'a`.
pub(crate) unsafe fn c_str<'a>(text: *const c_char, what: &str) -> Outcome<&'a [u8]> {
    if text.is_null() {
        return Err(null_argument(what));
    }
    // SAFETY: non-NULL and NUL-terminated by the precondition.
    Ok(unsafe { CStr::from_ptr(text) }.to_bytes())
}

/// A NUL-terminated path argument; any bytes are allowed, as on POSIX.
///
/// # Safety
/// As [`c_str`].
pub(crate) unsafe fn path<'a>(name: *const c_char) -> Outcome<&'a Path> {
    // SAFETY: forwarded precondition.
    let bytes = unsafe { c_str(name, "database name") }?;
    Ok(Path::new(OsStr::from_bytes(bytes)))
}

/// Moves `value` to the heap and hands its address to C.
pub(crate) fn into_handle<T>(value: T) -> *mut T {
    Box::into_raw(Box::new(value))
}

/// Takes back and drops a handle made by [`into_handle`]; NULL is ignored.
///
/// # Safety
/// `handle` is NULL or came from [`into_handle`] and is not used again.
pub(crate) unsafe fn drop_handle<T>(handle: *mut T) {
    if !handle.is_null() {
        // SAFETY: by the precondition this is the `Box` made by `into_handle`, released once.
        drop(unsafe { Box::from_raw(handle) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads and frees a message this module stored.
    fn take(errptr: &mut *mut c_char) -> String {
        assert!(!errptr.is_null());
        // SAFETY: `*errptr` was made by `malloc_cstring`, NUL-terminated; freed once here.
        let text = unsafe { CStr::from_ptr(*errptr) }
            .to_string_lossy()
            .into_owned();
        // SAFETY: as above.
        unsafe { libc::free((*errptr).cast()) };
        *errptr = ptr::null_mut();
        text
    }

    #[test]
    fn errors_are_reported_with_leveldb_kind_names() {
        let mut err: *mut c_char = ptr::null_mut();
        // SAFETY: `err` is a local NULL `char*`.
        let got = unsafe {
            with_errptr(&mut err, 7, || {
                Err(Error::InvalidArgument("bad name".into()))
            })
        };
        assert_eq!(got, 7);
        assert_eq!(take(&mut err), "Invalid argument: bad name");
    }

    #[test]
    fn a_later_error_replaces_the_earlier_message() {
        let mut err: *mut c_char = ptr::null_mut();
        // SAFETY: `err` is a local `char*`, NULL or malloc'd by `set_error`.
        unsafe {
            set_error(&mut err, "first");
            set_error(&mut err, "second");
        }
        assert_eq!(take(&mut err), "second");
    }

    #[test]
    fn success_leaves_errptr_untouched() {
        let mut err: *mut c_char = ptr::null_mut();
        // SAFETY: `err` is a local NULL `char*`.
        let got = unsafe { with_errptr(&mut err, 0, || Ok(5)) };
        assert_eq!(got, 5);
        assert!(err.is_null());
    }

    #[test]
    fn a_panic_becomes_an_error_message() {
        let mut err: *mut c_char = ptr::null_mut();
        // SAFETY: `err` is a local NULL `char*`.
        let got = unsafe { with_errptr(&mut err, -1, || panic!("boom {}", 42)) };
        assert_eq!(got, -1);
        assert_eq!(take(&mut err), "IO error: internal error: boom 42");
        assert_eq!(guarded(3, || panic!("quiet")), 3);
    }

    #[test]
    fn null_bytes_are_empty_only_when_the_length_is_zero() {
        // SAFETY: NULL pointers, never dereferenced.
        unsafe {
            assert_eq!(bytes(ptr::null(), 0, "key").ok(), Some(&[][..]));
            assert!(bytes(ptr::null(), 3, "key").is_err());
            assert!(c_str(ptr::null(), "name").is_err());
        }
    }

    #[test]
    fn empty_buffers_are_not_null_and_messages_lose_interior_nuls() {
        let block = malloc_bytes(b"");
        assert!(!block.is_null());
        // SAFETY: `block` came from malloc and is freed once.
        unsafe { libc::free(block.cast()) };
        let mut err = malloc_cstring("a\0b");
        assert_eq!(take(&mut err), "a?b");
    }
}
