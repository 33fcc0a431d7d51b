//! `leveldb_writebatch_t`: an atomic group of puts and deletes, and its C-callback iteration.

use std::ffi::{c_char, c_void};
use std::ptr;

use engine::{WriteBatch, WriteBatchHandler};

use crate::boundary::{bytes, drop_handle, guarded, into_handle};

/// `leveldb_writebatch_t`. Not synchronized: use one batch from one thread at a time.
pub struct leveldb_writebatch_t {
    pub(crate) rep: WriteBatch,
}

/// `void (*put)(void* state, const char* k, size_t klen, const char* v, size_t vlen)`.
type PutFn = unsafe extern "C" fn(*mut c_void, *const c_char, usize, *const c_char, usize);
/// `void (*deleted)(void* state, const char* k, size_t klen)`.
type DeletedFn = unsafe extern "C" fn(*mut c_void, *const c_char, usize);

/// Hands each update of a batch to the caller's callbacks.
struct CallbackHandler {
    state: *mut c_void,
    put: Option<PutFn>,
    deleted: Option<DeletedFn>,
}

impl WriteBatchHandler for CallbackHandler {
    fn put(&mut self, key: &[u8], value: &[u8]) {
        if let Some(put) = self.put {
            // SAFETY: the caller's callback for `state`; both slices are valid during the call.
            unsafe {
                put(
                    self.state,
                    key.as_ptr().cast(),
                    key.len(),
                    value.as_ptr().cast(),
                    value.len(),
                )
            }
        }
    }

    fn delete(&mut self, key: &[u8]) {
        if let Some(deleted) = self.deleted {
            // SAFETY: the caller's callback for `state`; the key is valid during the call.
            unsafe { deleted(self.state, key.as_ptr().cast(), key.len()) }
        }
    }

    // LevelDB's callbacks have no place for Strata's extension records (`strata/c.h`): they
    // are skipped, and the updates after them still reported.
    fn delete_range(&mut self, _start: &[u8], _end: &[u8]) -> engine::Result<()> {
        Ok(())
    }

    fn put_with_ttl(
        &mut self,
        _key: &[u8],
        _value: &[u8],
        _ttl: std::time::Duration,
    ) -> engine::Result<()> {
        Ok(())
    }
}

/// Runs `change` on the batch behind `b` (NULL is ignored), never unwinding into C.
///
/// # Safety
/// `b` is NULL or a live batch not used by another thread meanwhile.
pub(crate) unsafe fn update(b: *mut leveldb_writebatch_t, change: impl FnOnce(&mut WriteBatch)) {
    // SAFETY: forwarded precondition.
    if let Some(b) = unsafe { b.as_mut() } {
        guarded((), || change(&mut b.rep));
    }
}

#[no_mangle]
pub extern "C" fn leveldb_writebatch_create() -> *mut leveldb_writebatch_t {
    guarded(ptr::null_mut(), || {
        into_handle(leveldb_writebatch_t {
            rep: WriteBatch::new(),
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_writebatch_destroy(b: *mut leveldb_writebatch_t) {
    // SAFETY: per the crate contract `b` is NULL or a live handle released only here.
    guarded((), || unsafe { drop_handle(b) })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_writebatch_clear(b: *mut leveldb_writebatch_t) {
    // SAFETY: per the crate contract `b` is NULL or a live handle.
    unsafe { update(b, WriteBatch::clear) }
}

/// Adds a put of `key` to `val`. A NULL pointer with a non-zero length adds nothing.
#[no_mangle]
pub unsafe extern "C" fn leveldb_writebatch_put(
    b: *mut leveldb_writebatch_t,
    key: *const c_char,
    klen: usize,
    val: *const c_char,
    vlen: usize,
) {
    // SAFETY: per the crate contract `b` is NULL or a live handle and the byte ranges are
    // valid for their lengths.
    unsafe {
        if let (Ok(key), Ok(val)) = (bytes(key, klen, "key"), bytes(val, vlen, "value")) {
            update(b, |batch| batch.put(key, val));
        }
    }
}

/// Adds a deletion of `key`. A NULL pointer with a non-zero length adds nothing.
#[no_mangle]
pub unsafe extern "C" fn leveldb_writebatch_delete(
    b: *mut leveldb_writebatch_t,
    key: *const c_char,
    klen: usize,
) {
    // SAFETY: per the crate contract `b` is NULL or a live handle and the key is valid for
    // `klen` bytes.
    unsafe {
        if let Ok(key) = bytes(key, klen, "key") {
            update(b, |batch| batch.delete(key));
        }
    }
}

/// Calls `put` or `deleted` for each update, in the order they were added. A NULL callback
/// skips the updates of its kind.
#[no_mangle]
pub unsafe extern "C" fn leveldb_writebatch_iterate(
    b: *const leveldb_writebatch_t,
    state: *mut c_void,
    put: Option<PutFn>,
    deleted: Option<DeletedFn>,
) {
    // SAFETY: per the crate contract `b` is NULL or a live handle.
    let Some(b) = (unsafe { b.as_ref() }) else {
        return;
    };
    let mut handler = CallbackHandler {
        state,
        put,
        deleted,
    };
    // A batch built through this API always decodes; there is no error channel anyway.
    guarded((), || {
        let _ = b.rep.iterate(&mut handler);
    });
}

/// Adds every update of `source` after those of `destination`.
#[no_mangle]
pub unsafe extern "C" fn leveldb_writebatch_append(
    destination: *mut leveldb_writebatch_t,
    source: *const leveldb_writebatch_t,
) {
    if ptr::eq(destination, source) {
        // Appending a batch to itself: copy first, as the two handles alias.
        // SAFETY: per the crate contract `source` is NULL or a live handle.
        if let Some(copy) = unsafe { source.as_ref() }.map(|s| s.rep.clone()) {
            // SAFETY: as above, for `destination`.
            unsafe { update(destination, |d| d.append(&copy)) }
        }
        return;
    }
    // SAFETY: per the crate contract both are NULL or live handles, and distinct here.
    unsafe {
        if let Some(source) = source.as_ref() {
            update(destination, |d| d.append(&source.rep));
        }
    }
}
