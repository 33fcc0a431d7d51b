//! `leveldb_t` and `leveldb_snapshot_t`: opening, reading, writing, snapshots, introspection,
//! compaction, and destroying or repairing a database directory.
//!
//! Thread safety: every function taking a `leveldb_t` may be called from many threads at once,
//! except `leveldb_close`, which must be the last call on it.

use std::ffi::{c_char, c_int};
use std::path::Path;
use std::ptr;

use engine::{Options, Range, ReadOptions, Snapshot, WriteOptions, DB};

use crate::boundary::{
    bytes, c_str, drop_handle, guarded, into_handle, live, malloc_cstring, malloc_value, path,
    with_errptr,
};
use crate::iterator::{leveldb_iterator_t, Cursor};
use crate::options::{leveldb_options_t, leveldb_readoptions_t, leveldb_writeoptions_t};
use crate::write_batch::leveldb_writebatch_t;

/// `leveldb_t`: an open database.
pub struct leveldb_t {
    pub(crate) rep: DB,
}

/// `leveldb_snapshot_t`: a pinned, consistent view of a database.
pub struct leveldb_snapshot_t {
    pub(crate) rep: Snapshot,
}

/// The options behind `opt`, or the defaults for NULL. Separated values are compressed as the
/// tables' blocks are (`leveldb_options_set_compression`, whichever was set last).
///
/// # Safety
/// `opt` is NULL or a live options handle.
unsafe fn open_options(opt: *const leveldb_options_t) -> Options {
    // SAFETY: forwarded precondition.
    let mut options = unsafe { opt.as_ref() }.map_or_else(Options::default, |o| o.rep.clone());
    options.value_separation = options
        .value_separation
        .map(|separation| separation.with_compression(options.compression));
    options
}

/// The read options behind `opt`, or the defaults for NULL.
///
/// # Safety
/// `opt` is NULL or a live read-options handle.
pub(crate) unsafe fn read_options(
    opt: *const leveldb_readoptions_t,
    default: &ReadOptions,
) -> &ReadOptions {
    // SAFETY: forwarded precondition.
    unsafe { opt.as_ref() }.map_or(default, |o| &o.rep)
}

/// The write options behind `opt`, or the defaults for NULL.
///
/// # Safety
/// `opt` is NULL or a live write-options handle.
pub(crate) unsafe fn write_options(opt: *const leveldb_writeoptions_t) -> WriteOptions {
    // SAFETY: forwarded precondition.
    unsafe { opt.as_ref() }.map_or_else(WriteOptions::default, |o| o.rep)
}

/// Opens the database in directory `name` with `open`; NULL (and `*errptr` set) on failure.
///
/// # Safety
/// `options` is NULL or live, `name` NUL-terminated and `errptr` NULL or writable.
pub(crate) unsafe fn open_with(
    options: *const leveldb_options_t,
    name: *const c_char,
    errptr: *mut *mut c_char,
    open: fn(&Path, Options) -> engine::Result<DB>,
) -> *mut leveldb_t {
    // SAFETY: forwarded preconditions.
    unsafe {
        with_errptr(errptr, ptr::null_mut(), || {
            let db = open(path(name)?, open_options(options))?;
            Ok(into_handle(leveldb_t { rep: db }))
        })
    }
}

/// Opens the database in directory `name`; NULL (and `*errptr` set) on failure.
#[no_mangle]
pub unsafe extern "C" fn leveldb_open(
    options: *const leveldb_options_t,
    name: *const c_char,
    errptr: *mut *mut c_char,
) -> *mut leveldb_t {
    // SAFETY: per the crate contract `options` is NULL or live, `name` NUL-terminated and
    // `errptr` NULL or writable.
    unsafe {
        open_with(options, name, errptr, |path, options| {
            DB::open(path, options)
        })
    }
}

/// Closes the database: waits for background work, releases the `LOCK`. NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn leveldb_close(db: *mut leveldb_t) {
    // SAFETY: per the crate contract `db` is NULL or a live handle released only here.
    guarded((), || unsafe { drop_handle(db) })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_put(
    db: *mut leveldb_t,
    options: *const leveldb_writeoptions_t,
    key: *const c_char,
    keylen: usize,
    val: *const c_char,
    vallen: usize,
    errptr: *mut *mut c_char,
) {
    // SAFETY: per the crate contract the handles are NULL or live, the byte ranges valid for
    // their lengths and `errptr` NULL or writable.
    unsafe {
        with_errptr(errptr, (), || {
            let db = live(db, "database")?;
            let key = bytes(key, keylen, "key")?;
            let val = bytes(val, vallen, "value")?;
            db.rep.put_opt(&write_options(options), key, val)
        })
    }
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_delete(
    db: *mut leveldb_t,
    options: *const leveldb_writeoptions_t,
    key: *const c_char,
    keylen: usize,
    errptr: *mut *mut c_char,
) {
    // SAFETY: as for `leveldb_put`.
    unsafe {
        with_errptr(errptr, (), || {
            let db = live(db, "database")?;
            let key = bytes(key, keylen, "key")?;
            db.rep.delete_opt(&write_options(options), key)
        })
    }
}

/// Applies the batch atomically. The batch is left as it was, ready for reuse.
#[no_mangle]
pub unsafe extern "C" fn leveldb_write(
    db: *mut leveldb_t,
    options: *const leveldb_writeoptions_t,
    batch: *mut leveldb_writebatch_t,
    errptr: *mut *mut c_char,
) {
    // SAFETY: per the crate contract the handles are NULL or live (the batch not used by
    // another thread meanwhile) and `errptr` NULL or writable.
    unsafe {
        with_errptr(errptr, (), || {
            let db = live(db, "database")?;
            let batch = live(batch.cast_const(), "write batch")?;
            db.rep.write_opt(&write_options(options), &batch.rep)
        })
    }
}

/// The value of `key` in a `malloc`'d buffer of `*vallen` bytes (not NUL-terminated), or NULL
/// with `*vallen` = 0 when the key is absent (not an error) or on error (`*errptr` set).
#[no_mangle]
pub unsafe extern "C" fn leveldb_get(
    db: *mut leveldb_t,
    options: *const leveldb_readoptions_t,
    key: *const c_char,
    keylen: usize,
    vallen: *mut usize,
    errptr: *mut *mut c_char,
) -> *mut c_char {
    // SAFETY: per the crate contract the handles are NULL or live, `key` valid for `keylen`
    // bytes, `vallen` NULL or writable and `errptr` NULL or writable.
    unsafe {
        if let Some(vallen) = vallen.as_mut() {
            *vallen = 0;
        }
        with_errptr(errptr, ptr::null_mut(), || {
            let db = live(db, "database")?;
            let key = bytes(key, keylen, "key")?;
            let default = ReadOptions::default();
            // The value is lent, and copied once: into the caller's `malloc`ed buffer.
            let lent = db
                .rep
                .get_with(read_options(options, &default), key, |value| {
                    malloc_value(value).map(|copy| (copy, value.len()))
                })?;
            let Some((copy, len)) = lent.transpose()? else {
                return Ok(ptr::null_mut());
            };
            if let Some(vallen) = vallen.as_mut() {
                *vallen = len;
            }
            Ok(copy)
        })
    }
}

/// A new, unpositioned iterator; NULL when `db` is NULL.
#[no_mangle]
pub unsafe extern "C" fn leveldb_create_iterator(
    db: *mut leveldb_t,
    options: *const leveldb_readoptions_t,
) -> *mut leveldb_iterator_t {
    // SAFETY: per the crate contract the handles are NULL or live.
    unsafe { create_iterator(db, options, |db, o| Cursor::Entries(db.iter_opt(o))) }
}

/// A new iterator over `db` whose engine iterator `make` makes with the read options behind
/// `options`; NULL when `db` is NULL.
///
/// # Safety
/// `db` and `options` are NULL or live handles.
pub(crate) unsafe fn create_iterator(
    db: *mut leveldb_t,
    options: *const leveldb_readoptions_t,
    make: impl FnOnce(&DB, &ReadOptions) -> Cursor,
) -> *mut leveldb_iterator_t {
    // SAFETY: forwarded preconditions.
    unsafe {
        let Some(db) = db.as_ref() else {
            return ptr::null_mut();
        };
        let default = ReadOptions::default();
        let options = read_options(options, &default);
        guarded(ptr::null_mut(), || {
            into_handle(leveldb_iterator_t {
                rep: make(&db.rep, options),
            })
        })
    }
}

/// A snapshot of the current state; release it with `leveldb_release_snapshot`.
#[no_mangle]
pub unsafe extern "C" fn leveldb_create_snapshot(db: *mut leveldb_t) -> *const leveldb_snapshot_t {
    // SAFETY: per the crate contract `db` is NULL or a live handle.
    let Some(db) = (unsafe { db.as_ref() }) else {
        return ptr::null();
    };
    guarded(ptr::null(), || {
        into_handle(leveldb_snapshot_t {
            rep: db.rep.snapshot(),
        })
        .cast_const()
    })
}

/// Releases the snapshot (read options that still name it keep it pinned until they change).
#[no_mangle]
pub unsafe extern "C" fn leveldb_release_snapshot(
    _db: *mut leveldb_t,
    snapshot: *const leveldb_snapshot_t,
) {
    // SAFETY: per the crate contract `snapshot` is NULL or a live handle from
    // `leveldb_create_snapshot` (which handed out a `*mut` as `*const`), released only here.
    guarded((), || unsafe { drop_handle(snapshot.cast_mut()) })
}

/// The value of a property as a `malloc`'d NUL-terminated string, or NULL when unknown.
#[no_mangle]
pub unsafe extern "C" fn leveldb_property_value(
    db: *mut leveldb_t,
    propname: *const c_char,
) -> *mut c_char {
    // SAFETY: per the crate contract `db` is NULL or live and `propname` NUL-terminated.
    unsafe {
        let (Some(db), Ok(name)) = (db.as_ref(), c_str(propname, "property name")) else {
            return ptr::null_mut();
        };
        guarded(ptr::null_mut(), || {
            let Ok(name) = std::str::from_utf8(name) else {
                return ptr::null_mut();
            };
            db.rep
                .property(name)
                .map_or(ptr::null_mut(), |value| malloc_cstring(&value))
        })
    }
}

/// Stores in `sizes[i]` the approximate file-system bytes used by keys in
/// `[range_start_key[i], range_limit_key[i])`, for `i < num_ranges`.
#[no_mangle]
pub unsafe extern "C" fn leveldb_approximate_sizes(
    db: *mut leveldb_t,
    num_ranges: c_int,
    range_start_key: *const *const c_char,
    range_start_key_len: *const usize,
    range_limit_key: *const *const c_char,
    range_limit_key_len: *const usize,
    sizes: *mut u64,
) {
    let count = usize::try_from(num_ranges).unwrap_or(0);
    let arrays = [
        range_start_key.cast::<u8>(),
        range_start_key_len.cast(),
        range_limit_key.cast(),
        range_limit_key_len.cast(),
        sizes.cast_const().cast(),
    ];
    if count == 0 || arrays.iter().any(|a| a.is_null()) {
        return;
    }
    // SAFETY: per the crate contract `db` is NULL or live, each of the five arrays (checked
    // non-NULL above) holds `num_ranges` elements, `sizes` is writable, and every key pointer
    // is valid for its length.
    unsafe {
        let Some(db) = db.as_ref() else {
            return;
        };
        let starts = std::slice::from_raw_parts(range_start_key, count);
        let start_lens = std::slice::from_raw_parts(range_start_key_len, count);
        let limits = std::slice::from_raw_parts(range_limit_key, count);
        let limit_lens = std::slice::from_raw_parts(range_limit_key_len, count);
        let out = std::slice::from_raw_parts_mut(sizes, count);
        out.fill(0);
        let mut ranges = Vec::with_capacity(count);
        for i in 0..count {
            let (Ok(start), Ok(limit)) = (
                bytes(starts[i], start_lens[i], "range start"),
                bytes(limits[i], limit_lens[i], "range limit"),
            ) else {
                return;
            };
            ranges.push(Range { start, limit });
        }
        guarded((), || {
            for (slot, size) in out.iter_mut().zip(db.rep.approximate_sizes(&ranges)) {
                *slot = size;
            }
        });
    }
}

/// Compacts the keys in `[start_key, limit_key]`; a NULL key means "from the first" or "to
/// the last". Waits until the compaction is done. Failures are not reported (there is no
/// `errptr`); they surface in later writes.
#[no_mangle]
pub unsafe extern "C" fn leveldb_compact_range(
    db: *mut leveldb_t,
    start_key: *const c_char,
    start_key_len: usize,
    limit_key: *const c_char,
    limit_key_len: usize,
) {
    // SAFETY: per the crate contract `db` is NULL or live and each non-NULL key is valid for
    // its length.
    unsafe {
        let Some(db) = db.as_ref() else {
            return;
        };
        let start = (!start_key.is_null())
            .then(|| std::slice::from_raw_parts(start_key.cast::<u8>(), start_key_len));
        let limit = (!limit_key.is_null())
            .then(|| std::slice::from_raw_parts(limit_key.cast::<u8>(), limit_key_len));
        guarded((), || {
            let _ = db.rep.compact_range(start, limit);
        });
    }
}

/// Removes every file of the database in directory `name` (and the directory once empty).
#[no_mangle]
pub unsafe extern "C" fn leveldb_destroy_db(
    options: *const leveldb_options_t,
    name: *const c_char,
    errptr: *mut *mut c_char,
) {
    // SAFETY: as for `leveldb_open`.
    unsafe {
        with_errptr(errptr, (), || {
            engine::destroy(path(name)?, &open_options(options))
        })
    }
}

/// Rebuilds the database in directory `name` from whatever can still be read.
#[no_mangle]
pub unsafe extern "C" fn leveldb_repair_db(
    options: *const leveldb_options_t,
    name: *const c_char,
    errptr: *mut *mut c_char,
) {
    // SAFETY: as for `leveldb_open`.
    unsafe {
        with_errptr(errptr, (), || {
            engine::repair(path(name)?, &open_options(options))
        })
    }
}
