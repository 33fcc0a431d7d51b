//! Strata's extensions to the C API for batched reads, range deletes and expiring keys,
//! declared in `include/strata/c.h`: `strata_get_many`, `strata_delete_range`,
//! `strata_clear_range`, `strata_put_with_ttl`, their write-batch forms, and the options that
//! enable the format extensions. Same handles and conventions as `leveldb/c.h` (see the crate
//! documentation).

use std::ffi::c_char;
use std::ptr;
use std::time::Duration;

use engine::{ReadOptions, WriteBatch};

use crate::boundary::{bytes, free_all, live, malloc_value, null_argument, with_errptr, Outcome};
use crate::db::{leveldb_t, read_options, write_options};
use crate::options::{leveldb_options_t, leveldb_readoptions_t, leveldb_writeoptions_t};
use crate::write_batch::leveldb_writebatch_t;

/// Enables range deletes (an extension LevelDB then refuses; see `strata/c.h`).
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_range_deletes(opt: *mut leveldb_options_t, v: u8) {
    // SAFETY: per the crate contract `opt` is NULL or a live handle.
    unsafe { crate::options::update(opt, |o| o.rep.range_deletes = v != 0) }
}

/// Enables expiring keys (an extension LevelDB then refuses; see `strata/c.h`).
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_expiring_keys(opt: *mut leveldb_options_t, v: u8) {
    // SAFETY: per the crate contract `opt` is NULL or a live handle.
    unsafe { crate::options::update(opt, |o| o.rep.expiring_keys = v != 0) }
}

/// Looks `num_keys` keys up at one moment: `values[i]` gets a `malloc`'d copy of key i's value
/// (length in `vallens[i]`) or NULL when it is absent. On failure every `values[i]` is NULL.
#[no_mangle]
pub unsafe extern "C" fn strata_get_many(
    db: *mut leveldb_t,
    options: *const leveldb_readoptions_t,
    num_keys: usize,
    keys: *const *const c_char,
    keylens: *const usize,
    values: *mut *mut c_char,
    vallens: *mut usize,
    errptr: *mut *mut c_char,
) {
    if num_keys == 0 {
        return;
    }
    // SAFETY: per the crate contract the handles are NULL or live, `keys` and `keylens` valid
    // for `num_keys` entries (each key for its length), `values` and `vallens` writable for
    // `num_keys` entries, and `errptr` NULL or writable.
    unsafe {
        if values.is_null() || vallens.is_null() {
            with_errptr(errptr, (), || Err(null_argument("values or vallens")));
            return;
        }
        let values = std::slice::from_raw_parts_mut(values, num_keys);
        let vallens = std::slice::from_raw_parts_mut(vallens, num_keys);
        values.fill(ptr::null_mut());
        vallens.fill(0);
        with_errptr(errptr, (), || {
            let db = live(db, "database")?;
            if keys.is_null() || keylens.is_null() {
                return Err(null_argument("keys or keylens"));
            }
            let pointers = std::slice::from_raw_parts(keys, num_keys);
            let lengths = std::slice::from_raw_parts(keylens, num_keys);
            let keys = pointers
                .iter()
                .zip(lengths)
                .map(|(&key, &len)| bytes(key, len, "key"))
                .collect::<Result<Vec<&[u8]>, _>>()?;
            let default = ReadOptions::default();
            let found = db
                .rep
                .get_many_opt(read_options(options, &default), &keys)?;
            for (i, value) in found.iter().enumerate() {
                let Some(value) = value else { continue };
                match malloc_value(value) {
                    Ok(copy) => {
                        values[i] = copy;
                        vallens[i] = value.len();
                    }
                    Err(e) => {
                        free_all(values);
                        vallens.fill(0);
                        return Err(e);
                    }
                }
            }
            Ok(())
        })
    }
}

/// The database and the bounds of a range call.
///
/// # Safety
/// As the crate contract: `db` NULL or live, the byte ranges valid for their lengths.
unsafe fn range_call<'a>(
    db: *mut leveldb_t,
    start: *const c_char,
    startlen: usize,
    end: *const c_char,
    endlen: usize,
) -> Outcome<(&'a leveldb_t, &'a [u8], &'a [u8])> {
    // SAFETY: forwarded precondition.
    unsafe {
        Ok((
            live(db, "database")?,
            bytes(start, startlen, "start")?,
            bytes(end, endlen, "end")?,
        ))
    }
}

/// Deletes every key in `[start, end)` with one record (range deletes must be enabled).
#[no_mangle]
pub unsafe extern "C" fn strata_delete_range(
    db: *mut leveldb_t,
    options: *const leveldb_writeoptions_t,
    start: *const c_char,
    startlen: usize,
    end: *const c_char,
    endlen: usize,
    errptr: *mut *mut c_char,
) {
    // SAFETY: per the crate contract the handles are NULL or live, the byte ranges valid for
    // their lengths and `errptr` NULL or writable.
    unsafe {
        with_errptr(errptr, (), || {
            let (db, start, end) = range_call(db, start, startlen, end, endlen)?;
            db.rep.delete_range_opt(&write_options(options), start, end)
        })
    }
}

/// Deletes the keys of `[start, end)` one by one, in bounded batches, on any database;
/// returns how many it deleted (0 on failure, where some may have been deleted).
#[no_mangle]
pub unsafe extern "C" fn strata_clear_range(
    db: *mut leveldb_t,
    options: *const leveldb_writeoptions_t,
    start: *const c_char,
    startlen: usize,
    end: *const c_char,
    endlen: usize,
    errptr: *mut *mut c_char,
) -> u64 {
    // SAFETY: as `strata_delete_range`.
    unsafe {
        with_errptr(errptr, 0, || {
            let (db, start, end) = range_call(db, start, startlen, end, endlen)?;
            db.rep.clear_range_opt(&write_options(options), start, end)
        })
    }
}

/// Sets `key` to `val` for `ttl_millis` milliseconds (expiring keys must be enabled).
#[no_mangle]
pub unsafe extern "C" fn strata_put_with_ttl(
    db: *mut leveldb_t,
    options: *const leveldb_writeoptions_t,
    key: *const c_char,
    keylen: usize,
    val: *const c_char,
    vallen: usize,
    ttl_millis: u64,
    errptr: *mut *mut c_char,
) {
    // SAFETY: as `strata_delete_range`.
    unsafe {
        with_errptr(errptr, (), || {
            let db = live(db, "database")?;
            let key = bytes(key, keylen, "key")?;
            let val = bytes(val, vallen, "value")?;
            let ttl = Duration::from_millis(ttl_millis);
            db.rep
                .put_with_ttl_opt(&write_options(options), key, val, ttl)
        })
    }
}

/// Adds a range delete of `[start, end)` to the batch (checked when the batch is written).
#[no_mangle]
pub unsafe extern "C" fn strata_writebatch_delete_range(
    b: *mut leveldb_writebatch_t,
    start: *const c_char,
    startlen: usize,
    end: *const c_char,
    endlen: usize,
) {
    // SAFETY: per the crate contract `b` is NULL or live and the byte ranges valid.
    unsafe {
        if let (Ok(start), Ok(end)) = (bytes(start, startlen, "start"), bytes(end, endlen, "end")) {
            crate::write_batch::update(b, |batch: &mut WriteBatch| batch.delete_range(start, end));
        }
    }
}

/// Adds a put of `key` that expires `ttl_millis` milliseconds after the batch is written.
#[no_mangle]
pub unsafe extern "C" fn strata_writebatch_put_with_ttl(
    b: *mut leveldb_writebatch_t,
    key: *const c_char,
    klen: usize,
    val: *const c_char,
    vlen: usize,
    ttl_millis: u64,
) {
    // SAFETY: per the crate contract `b` is NULL or live and the byte ranges valid.
    unsafe {
        if let (Ok(key), Ok(val)) = (bytes(key, klen, "key"), bytes(val, vlen, "value")) {
            crate::write_batch::update(b, |batch: &mut WriteBatch| {
                batch.put_with_ttl(key, val, Duration::from_millis(ttl_millis))
            });
        }
    }
}
