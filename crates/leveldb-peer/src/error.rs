//! Ownership of the C strings and buffers that cross the LevelDB C API.
//!
//! LevelDB reports failure by storing a `malloc`ed message in a `char**` slot and returns values
//! and properties in `malloc`ed buffers; both must go back through `leveldb_free`. The guards here
//! free them on every path, so no message or buffer leaks when a conversion fails half-way.

use std::ffi::{CStr, CString};
use std::path::Path;
use std::ptr;

use libc::{c_char, c_void};

use crate::ffi;

/// The `char** errptr` slot of one fallible call. Starts null, as LevelDB requires; frees
/// whatever message LevelDB left in it when dropped.
pub(crate) struct ErrSlot(*mut c_char);

impl ErrSlot {
    pub(crate) fn new() -> Self {
        ErrSlot(ptr::null_mut())
    }

    /// The pointer to pass as the C call's `errptr` argument.
    pub(crate) fn as_out(&mut self) -> *mut *mut c_char {
        &mut self.0
    }

    /// `Err(message)` if the call stored one, else `Ok(())`.
    pub(crate) fn check(&self) -> Result<(), String> {
        if self.0.is_null() {
            return Ok(());
        }
        // SAFETY: a non-null slot holds the NUL-terminated message LevelDB `malloc`ed; it stays
        // alive until `drop` frees it, after this borrow ends.
        let message = unsafe { CStr::from_ptr(self.0) };
        Err(message.to_string_lossy().into_owned())
    }
}

impl Drop for ErrSlot {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: the message was `malloc`ed by LevelDB and is freed exactly once, here.
            unsafe { ffi::leveldb_free(self.0.cast::<c_void>()) };
        }
    }
}

/// A buffer LevelDB `malloc`ed and handed to us (a value, a property string). Freed on drop.
pub(crate) struct MallocBuf {
    ptr: *mut c_char,
    len: usize,
}

impl MallocBuf {
    /// Takes ownership of `ptr` (which may be null, meaning "nothing returned").
    ///
    /// # Safety
    /// `ptr` is null or a LevelDB `malloc`ed buffer of at least `len` readable bytes that no one
    /// else frees.
    pub(crate) unsafe fn from_raw(ptr: *mut c_char, len: usize) -> Self {
        MallocBuf { ptr, len }
    }

    pub(crate) fn is_null(&self) -> bool {
        self.ptr.is_null()
    }

    pub(crate) fn as_bytes(&self) -> &[u8] {
        if self.ptr.is_null() || self.len == 0 {
            return &[];
        }
        // SAFETY: `from_raw`'s contract: `len` readable bytes at a non-null `ptr`, owned by us
        // and alive until `drop`, which cannot run while this borrow of `self` lives.
        unsafe { std::slice::from_raw_parts(self.ptr.cast::<u8>(), self.len) }
    }
}

impl Drop for MallocBuf {
    fn drop(&mut self) {
        if !self.ptr.is_null() {
            // SAFETY: the buffer was `malloc`ed by LevelDB and is freed exactly once, here.
            unsafe { ffi::leveldb_free(self.ptr.cast::<c_void>()) };
        }
    }
}

/// A path as the NUL-terminated string LevelDB takes; fails on an interior NUL byte.
pub(crate) fn path_to_cstring(path: &Path) -> Result<CString, String> {
    use std::os::unix::ffi::OsStrExt;
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| format!("path contains a NUL byte: {}", path.display()))
}
