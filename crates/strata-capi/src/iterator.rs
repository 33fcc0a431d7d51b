//! `leveldb_iterator_t`: a cursor over a database, forward and backward: over its entries
//! (`leveldb_create_iterator`), or over its keys and the lengths of their values
//! (`strata_create_key_iterator`, in `value_separation`), which reads no value file and whose
//! `leveldb_iter_value` is empty (`strata_iter_value_length` gives the length).
//!
//! Not synchronized: use one iterator from one thread at a time (different iterators over the
//! same database may be used from different threads). The pointers `leveldb_iter_key` and
//! `leveldb_iter_value` return stay valid until the iterator is moved or destroyed.

use std::ffi::c_char;

use engine::{DbIterator, KeyIterator};

use crate::boundary::{bytes, drop_handle, guarded, set_error, status_message};

/// `leveldb_iterator_t`.
pub struct leveldb_iterator_t {
    pub(crate) rep: Cursor,
}

/// The engine iterator behind a `leveldb_iterator_t`.
pub(crate) enum Cursor {
    /// Keys and values.
    Entries(DbIterator),
    /// Keys and the lengths of their values.
    Keys(KeyIterator),
}

/// The positioning of whichever engine iterator it holds.
impl std::ops::Deref for Cursor {
    type Target = dyn engine::Cursor;

    fn deref(&self) -> &Self::Target {
        match self {
            Cursor::Entries(i) => i,
            Cursor::Keys(i) => i,
        }
    }
}

impl std::ops::DerefMut for Cursor {
    fn deref_mut(&mut self) -> &mut Self::Target {
        match self {
            Cursor::Entries(i) => i,
            Cursor::Keys(i) => i,
        }
    }
}

impl Cursor {
    /// The value; empty for a key iterator.
    fn value(&self) -> &[u8] {
        match self {
            Cursor::Entries(i) => i.value(),
            Cursor::Keys(_) => &[],
        }
    }

    /// The value's length (0 when not valid).
    pub(crate) fn value_len(&self) -> u64 {
        match self {
            Cursor::Entries(i) => i.value().len() as u64,
            Cursor::Keys(i) => i.value_len(),
        }
    }
}

/// Runs `step` on the iterator behind `it` (NULL is ignored), never unwinding into C.
///
/// # Safety
/// `it` is NULL or a live iterator not used by another thread meanwhile.
unsafe fn step(it: *mut leveldb_iterator_t, step: impl FnOnce(&mut Cursor)) {
    // SAFETY: forwarded precondition.
    if let Some(it) = unsafe { it.as_mut() } {
        guarded((), || step(&mut it.rep));
    }
}

/// Returns `data` to C as a pointer and stores its length in `*len` (when not NULL).
///
/// # Safety
/// `len` is NULL or writable.
unsafe fn hand_out(data: &[u8], len: *mut usize) -> *const c_char {
    // SAFETY: forwarded precondition.
    if let Some(len) = unsafe { len.as_mut() } {
        *len = data.len();
    }
    data.as_ptr().cast()
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_iter_destroy(it: *mut leveldb_iterator_t) {
    // SAFETY: per the crate contract `it` is NULL or a live handle released only here.
    guarded((), || unsafe { drop_handle(it) })
}

/// 1 when positioned at an entry.
#[no_mangle]
pub unsafe extern "C" fn leveldb_iter_valid(it: *const leveldb_iterator_t) -> u8 {
    // SAFETY: per the crate contract `it` is NULL or a live handle.
    let Some(it) = (unsafe { it.as_ref() }) else {
        return 0;
    };
    guarded(0, || u8::from(it.rep.valid()))
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_iter_seek_to_first(it: *mut leveldb_iterator_t) {
    // SAFETY: per the crate contract `it` is NULL or a live handle.
    unsafe { step(it, |i| i.seek_to_first()) }
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_iter_seek_to_last(it: *mut leveldb_iterator_t) {
    // SAFETY: per the crate contract `it` is NULL or a live handle.
    unsafe { step(it, |i| i.seek_to_last()) }
}

/// Positions at the first key `>= k`.
#[no_mangle]
pub unsafe extern "C" fn leveldb_iter_seek(
    it: *mut leveldb_iterator_t,
    k: *const c_char,
    klen: usize,
) {
    // SAFETY: per the crate contract `it` is NULL or a live handle and `k` is valid for `klen`
    // bytes.
    unsafe {
        if let Ok(target) = bytes(k, klen, "key") {
            step(it, |i| i.seek(target));
        }
    }
}

/// Moves to the next entry (does nothing when not valid).
#[no_mangle]
pub unsafe extern "C" fn leveldb_iter_next(it: *mut leveldb_iterator_t) {
    // SAFETY: per the crate contract `it` is NULL or a live handle.
    unsafe { step(it, |i| i.next()) }
}

/// Moves to the previous entry (does nothing when not valid).
#[no_mangle]
pub unsafe extern "C" fn leveldb_iter_prev(it: *mut leveldb_iterator_t) {
    // SAFETY: per the crate contract `it` is NULL or a live handle.
    unsafe { step(it, |i| i.prev()) }
}

/// The current key (empty when not valid); valid until the iterator moves.
#[no_mangle]
pub unsafe extern "C" fn leveldb_iter_key(
    it: *const leveldb_iterator_t,
    klen: *mut usize,
) -> *const c_char {
    // SAFETY: per the crate contract `it` is NULL or a live handle and `klen` NULL or
    // writable; the key borrows the iterator, which the caller keeps unmoved while using it.
    unsafe {
        match it.as_ref() {
            Some(it) => guarded(hand_out(&[], klen), || hand_out(it.rep.key(), klen)),
            None => hand_out(&[], klen),
        }
    }
}

/// The current value (empty when not valid, and for a key iterator); valid until the iterator
/// moves.
#[no_mangle]
pub unsafe extern "C" fn leveldb_iter_value(
    it: *const leveldb_iterator_t,
    vlen: *mut usize,
) -> *const c_char {
    // SAFETY: as for `leveldb_iter_key`.
    unsafe {
        match it.as_ref() {
            Some(it) => guarded(hand_out(&[], vlen), || hand_out(it.rep.value(), vlen)),
            None => hand_out(&[], vlen),
        }
    }
}

/// Stores the error the iterator met, if any, in `*errptr`.
#[no_mangle]
pub unsafe extern "C" fn leveldb_iter_get_error(
    it: *const leveldb_iterator_t,
    errptr: *mut *mut c_char,
) {
    // SAFETY: per the crate contract `it` is NULL or a live handle and `errptr` NULL or a
    // writable `char*` holding NULL or a malloc'd message.
    unsafe {
        if let Some(it) = it.as_ref() {
            let failure = guarded(None, || it.rep.status().err().map(|e| status_message(&e)));
            if let Some(message) = failure {
                set_error(errptr, &message);
            }
        }
    }
}
