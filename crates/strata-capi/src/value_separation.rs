//! Strata's extensions to the C API for value separation, declared in `include/strata/c.h`:
//! `strata_options_set_value_separation` (values at or above a size kept in value files beside
//! the tree, an extension LevelDB then refuses) and `strata_head` (whether a key exists and its
//! value's length, from the tree alone). Same handles and conventions as `leveldb/c.h` (see
//! the crate documentation).

use std::ffi::c_char;

use engine::{ReadOptions, ValueSeparation};

use crate::boundary::{bytes, live, null_argument, with_errptr};
use crate::db::{leveldb_t, read_options};
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
