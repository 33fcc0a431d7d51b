//! Strata's extensions to the C API, declared in `include/strata/c.h`: read-only handles
//! (`strata_open_read_only`, `strata_refresh`, `strata_is_read_only`) and checkpoints
//! (`strata_checkpoint`). They take and give the same `leveldb_t` handles as `leveldb/c.h` and
//! keep its conventions (see the crate documentation).

use std::ffi::c_char;

use engine::DB;

use crate::boundary::{guarded, live, path, with_errptr};
use crate::db::{leveldb_t, open_with};
use crate::options::leveldb_options_t;

/// Opens the database in directory `name` read-only, beside the process that may be writing
/// it; NULL (and `*errptr` set) on failure.
#[no_mangle]
pub unsafe extern "C" fn strata_open_read_only(
    options: *const leveldb_options_t,
    name: *const c_char,
    errptr: *mut *mut c_char,
) -> *mut leveldb_t {
    // SAFETY: per the crate contract `options` is NULL or live, `name` NUL-terminated and
    // `errptr` NULL or writable.
    unsafe {
        open_with(options, name, errptr, |path, options| {
            DB::open_read_only(path, options)
        })
    }
}

/// Moves a read-only handle to the writer's latest state; nothing to do on one that writes.
#[no_mangle]
pub unsafe extern "C" fn strata_refresh(db: *mut leveldb_t, errptr: *mut *mut c_char) {
    // SAFETY: per the crate contract `db` is NULL or live and `errptr` NULL or writable.
    unsafe { with_errptr(errptr, (), || live(db, "database")?.rep.refresh()) }
}

/// 1 for a handle from `strata_open_read_only`; 0 otherwise and for NULL.
#[no_mangle]
pub unsafe extern "C" fn strata_is_read_only(db: *const leveldb_t) -> u8 {
    // SAFETY: per the crate contract `db` is NULL or live.
    guarded(0, || {
        unsafe { db.as_ref() }.map_or(0, |db| u8::from(db.rep.is_read_only()))
    })
}

/// Writes a checkpoint of `db` into the directory `dir`, which must not exist.
#[no_mangle]
pub unsafe extern "C" fn strata_checkpoint(
    db: *mut leveldb_t,
    dir: *const c_char,
    errptr: *mut *mut c_char,
) {
    // SAFETY: per the crate contract `db` is NULL or live, `dir` NUL-terminated and `errptr`
    // NULL or writable.
    unsafe {
        with_errptr(errptr, (), || {
            let db = live(db, "database")?;
            db.rep.checkpoint(path(dir)?)
        })
    }
}
