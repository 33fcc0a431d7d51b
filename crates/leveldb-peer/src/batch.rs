//! [`LevelDbBatch`]: an atomic group of puts and deletes, applied by `LevelDb::write`.

use std::ptr::NonNull;

use libc::c_char;

use crate::ffi;

/// A LevelDB `WriteBatch`: puts and deletes applied atomically and in order by
/// [`LevelDb::write`](crate::LevelDb::write).
///
/// `Send` but not `Sync`: LevelDB stamps the sequence number into the batch while writing it,
/// so one batch must not be written from two threads at once.
pub struct LevelDbBatch {
    raw: NonNull<ffi::leveldb_writebatch_t>,
}

impl LevelDbBatch {
    /// An empty batch.
    pub fn new() -> Self {
        // SAFETY: returns a fresh heap object (C++ `new`).
        let raw = unsafe { ffi::leveldb_writebatch_create() };
        let Some(raw) = NonNull::new(raw) else {
            panic!("leveldb_writebatch_create returned null");
        };
        LevelDbBatch { raw }
    }

    /// Adds "set `key` to `value`".
    pub fn put(&mut self, key: &[u8], value: &[u8]) {
        // SAFETY: `raw` is live and exclusively borrowed; LevelDB copies both slices, which are
        // valid for their lengths during the call.
        unsafe {
            ffi::leveldb_writebatch_put(
                self.raw.as_ptr(),
                key.as_ptr().cast::<c_char>(),
                key.len(),
                value.as_ptr().cast::<c_char>(),
                value.len(),
            );
        }
    }

    /// Adds "delete `key`".
    pub fn delete(&mut self, key: &[u8]) {
        // SAFETY: `raw` is live and exclusively borrowed; LevelDB copies the key.
        unsafe {
            ffi::leveldb_writebatch_delete(
                self.raw.as_ptr(),
                key.as_ptr().cast::<c_char>(),
                key.len(),
            )
        };
    }

    /// Removes every operation, keeping the allocation for reuse.
    pub fn clear(&mut self) {
        // SAFETY: `raw` is live and exclusively borrowed.
        unsafe { ffi::leveldb_writebatch_clear(self.raw.as_ptr()) };
    }

    /// The C handle, for `leveldb_write`. LevelDB mutates the batch's header through it, which
    /// is why the type is not `Sync`.
    pub(crate) fn as_ptr(&self) -> *mut ffi::leveldb_writebatch_t {
        self.raw.as_ptr()
    }
}

impl Default for LevelDbBatch {
    fn default() -> Self {
        LevelDbBatch::new()
    }
}

impl Drop for LevelDbBatch {
    fn drop(&mut self) {
        // SAFETY: created in `new`, owned only by `self`, destroyed once.
        unsafe { ffi::leveldb_writebatch_destroy(self.raw.as_ptr()) };
    }
}

// SAFETY: a write batch is a plain heap buffer with no thread affinity; moving its ownership to
// another thread is fine. (Deliberately not `Sync`, see the type's doc.)
unsafe impl Send for LevelDbBatch {}
