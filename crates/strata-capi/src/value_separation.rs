//! Strata's extensions to the C API for value separation, declared in `include/strata/c.h`:
//! `strata_options_set_value_separation` (values at or above a size kept in value files beside
//! the tree, an extension LevelDB then refuses), `strata_head` (whether a key exists and its
//! value's length, from the tree alone), and `strata_create_key_iterator` with
//! `strata_iter_value_length` (keys and value lengths, from the tree alone). Same handles and
//! conventions as `leveldb/c.h` (see the crate documentation).

use std::ffi::c_char;

use engine::{ReadOptions, ValueSeparation};

use crate::boundary::{bytes, guarded, live, null_argument, with_errptr};
use crate::db::{create_iterator, leveldb_t, read_options};
use crate::iterator::{leveldb_iterator_t, Cursor};
use crate::options::{leveldb_options_t, leveldb_readoptions_t};

/// Keeps values of at least `min_value_size` bytes in value files (0: off, the default),
/// compressed as table blocks are (applied at open: `db::open_options`).
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_value_separation(
    opt: *mut leveldb_options_t,
    min_value_size: usize,
) {
    // SAFETY: per the crate contract `opt` is NULL or a live handle.
    unsafe {
        crate::options::update(opt, |o| {
            o.rep.value_separation =
                (min_value_size > 0).then(|| ValueSeparation::new(min_value_size));
        });
    }
}

/// 1 and the value's length in `*vallen` when `key` has a value, 0 when it has none or on
/// failure (`*errptr` set); never reads a value file.
#[no_mangle]
pub unsafe extern "C" fn strata_head(
    db: *mut leveldb_t,
    options: *const leveldb_readoptions_t,
    key: *const c_char,
    keylen: usize,
    vallen: *mut u64,
    errptr: *mut *mut c_char,
) -> u8 {
    // SAFETY: per the crate contract the handles are NULL or live, `key` valid for `keylen`
    // bytes, `vallen` NULL or writable, and `errptr` NULL or writable.
    unsafe {
        with_errptr(errptr, 0, || {
            let db = live(db, "database")?;
            let key = bytes(key, keylen, "key")?;
            if vallen.is_null() {
                return Err(null_argument("vallen"));
            }
            let default = ReadOptions::default();
            let length = db.rep.head_opt(read_options(options, &default), key)?;
            *vallen = length.unwrap_or(0);
            Ok(u8::from(length.is_some()))
        })
    }
}

/// A new, unpositioned iterator over `db`'s keys (at the snapshot of `options`, or now):
/// every `leveldb_iter_*` call works on it, `leveldb_iter_value` is empty and
/// `strata_iter_value_length` gives the value's length; no value file is read. NULL when `db`
/// is NULL.
#[no_mangle]
pub unsafe extern "C" fn strata_create_key_iterator(
    db: *mut leveldb_t,
    options: *const leveldb_readoptions_t,
) -> *mut leveldb_iterator_t {
    // SAFETY: per the crate contract the handles are NULL or live.
    unsafe { create_iterator(db, options, |db, o| Cursor::Keys(db.iter_keys_opt(o))) }
}

/// The length of the value at the position of `it` (any iterator); 0 when not valid or NULL.
#[no_mangle]
pub unsafe extern "C" fn strata_iter_value_length(it: *const leveldb_iterator_t) -> u64 {
    // SAFETY: per the crate contract `it` is NULL or a live handle.
    let Some(it) = (unsafe { it.as_ref() }) else {
        return 0;
    };
    guarded(0, || it.rep.value_len())
}
