//! [`LevelDbIter`]: a cursor over a LevelDB database or snapshot.

use std::marker::PhantomData;
use std::ptr::NonNull;

use libc::{c_char, size_t};

use crate::error::ErrSlot;
use crate::ffi;

/// A LevelDB iterator, positioned by `seek*` and moved by `next` / `prev`.
///
/// Borrows the database (or snapshot) it reads, so it cannot outlive it. `key()` and `value()`
/// borrow straight from LevelDB's buffers: no copy, valid until the iterator next moves, which
/// the borrow checker enforces since moving takes `&mut self`.
///
/// LevelDB only `assert`s (compiled out in Debian's build) that `key`, `value`, `next` and
/// `prev` are called on a valid iterator; this wrapper checks and panics instead.
///
/// `Send` (an iterator may move to another thread), not `Sync`.
pub struct LevelDbIter<'a> {
    raw: NonNull<ffi::leveldb_iterator_t>,
    /// Mirror of `leveldb_iter_valid`, refreshed after every move.
    valid: bool,
    _source: PhantomData<&'a ()>,
}

impl LevelDbIter<'_> {
    /// Wraps a fresh iterator (unpositioned, so not valid).
    ///
    /// # Safety
    /// `raw` is a live iterator owned by no one else, whose database (and snapshot, if any)
    /// stays open for the lifetime the caller assigns.
    pub(crate) unsafe fn from_raw(raw: NonNull<ffi::leveldb_iterator_t>) -> Self {
        LevelDbIter {
            raw,
            valid: false,
            _source: PhantomData,
        }
    }

    /// Whether the iterator is positioned at an entry.
    pub fn valid(&self) -> bool {
        self.valid
    }

    /// Moves to the first entry (if any).
    pub fn seek_to_first(&mut self) {
        // SAFETY: `raw` is live and exclusively borrowed.
        unsafe { ffi::leveldb_iter_seek_to_first(self.raw.as_ptr()) };
        self.refresh();
    }

    /// Moves to the last entry (if any).
    pub fn seek_to_last(&mut self) {
        // SAFETY: `raw` is live and exclusively borrowed.
        unsafe { ffi::leveldb_iter_seek_to_last(self.raw.as_ptr()) };
        self.refresh();
    }

    /// Moves to the first entry whose key is at or after `target`.
    pub fn seek(&mut self, target: &[u8]) {
        // SAFETY: `raw` is live and exclusively borrowed; `target` is valid for its length
        // during the call and LevelDB does not keep it.
        unsafe {
            ffi::leveldb_iter_seek(
                self.raw.as_ptr(),
                target.as_ptr().cast::<c_char>(),
                target.len(),
            )
        };
        self.refresh();
    }

    /// Moves to the next entry. Panics if the iterator is not valid.
    pub fn next(&mut self) {
        self.assert_valid("next");
        // SAFETY: `raw` is live, exclusively borrowed and valid (checked above).
        unsafe { ffi::leveldb_iter_next(self.raw.as_ptr()) };
        self.refresh();
    }

    /// Moves to the previous entry. Panics if the iterator is not valid.
    pub fn prev(&mut self) {
        self.assert_valid("prev");
        // SAFETY: `raw` is live, exclusively borrowed and valid (checked above).
        unsafe { ffi::leveldb_iter_prev(self.raw.as_ptr()) };
        self.refresh();
    }

    /// The current key, borrowed from LevelDB. Panics if the iterator is not valid.
    pub fn key(&self) -> &[u8] {
        self.assert_valid("key");
        let mut len: size_t = 0;
        // SAFETY: `raw` is live and valid (checked above); LevelDB writes the length and
        // returns a pointer into its own buffer.
        let data = unsafe { ffi::leveldb_iter_key(self.raw.as_ptr(), &mut len) };
        // SAFETY: `data` points at `len` bytes that stay put until the iterator moves or is
        // destroyed, both of which need `&mut self` / ownership, excluded by this borrow.
        unsafe { borrowed_slice(data, len) }
    }

    /// The current value, borrowed from LevelDB. Panics if the iterator is not valid.
    pub fn value(&self) -> &[u8] {
        self.assert_valid("value");
        let mut len: size_t = 0;
        // SAFETY: as in `key`.
        let data = unsafe { ffi::leveldb_iter_value(self.raw.as_ptr(), &mut len) };
        // SAFETY: as in `key`.
        unsafe { borrowed_slice(data, len) }
    }

    /// The first error the iterator met (corruption, I/O), or `Ok(())`.
    pub fn status(&self) -> Result<(), String> {
        let mut err = ErrSlot::new();
        // SAFETY: `raw` is live; `err` is a null slot as LevelDB requires.
        unsafe { ffi::leveldb_iter_get_error(self.raw.as_ptr(), err.as_out()) };
        err.check()
    }

    fn refresh(&mut self) {
        // SAFETY: `raw` is live.
        self.valid = unsafe { ffi::leveldb_iter_valid(self.raw.as_ptr()) } != 0;
    }

    fn assert_valid(&self, what: &str) {
        assert!(
            self.valid,
            "LevelDbIter::{what} called on an iterator that is not valid"
        );
    }
}

/// # Safety
/// `data` is null only if `len` is 0; otherwise it points at `len` readable bytes that outlive
/// the returned borrow.
unsafe fn borrowed_slice<'s>(data: *const c_char, len: size_t) -> &'s [u8] {
    if data.is_null() || len == 0 {
        return &[];
    }
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) }
}

impl Drop for LevelDbIter<'_> {
    fn drop(&mut self) {
        // SAFETY: owned only by `self` and destroyed once, while its database is still open
        // (guaranteed by the borrow `'a`).
        unsafe { ffi::leveldb_iter_destroy(self.raw.as_ptr()) };
    }
}

// SAFETY: a LevelDB iterator has no thread affinity; it only must not be used from two threads
// at once, which `!Sync` and `&mut self` moves rule out.
unsafe impl Send for LevelDbIter<'_> {}
