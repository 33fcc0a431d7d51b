//! `leveldb_options_t`, `leveldb_readoptions_t`, `leveldb_writeoptions_t` and their setters.
//!
//! An options object owns a copy of Strata's options; setters that take another object
//! (comparator, filter policy, cache, env, snapshot) share it by reference count, so the object
//! stays alive as long as these options or a database opened with them need it. Sizes are
//! clipped when set to the ranges LevelDB clips them to at open.

use std::ffi::c_int;
use std::sync::Arc;

use engine::{BytewiseComparator, CompressionType, Options, PosixEnv, ReadOptions, WriteOptions};

use crate::boundary::{drop_handle, guarded, into_handle};
use crate::comparator::leveldb_comparator_t;
use crate::db::leveldb_snapshot_t;
use crate::env::{leveldb_cache_t, leveldb_env_t, leveldb_logger_t};
use crate::filter_policy::leveldb_filterpolicy_t;

/// `leveldb_options_t`: how a database is opened. Not synchronized: set it up on one thread.
pub struct leveldb_options_t {
    pub(crate) rep: Options,
}

/// `leveldb_readoptions_t`: options for reads and iterators.
pub struct leveldb_readoptions_t {
    pub(crate) rep: ReadOptions,
}

/// `leveldb_writeoptions_t`: options for writes.
pub struct leveldb_writeoptions_t {
    pub(crate) rep: WriteOptions,
}

/// LevelDB's `leveldb_no_compression`. Part of the ABI: never change.
const NO_COMPRESSION: c_int = 0;
/// LevelDB's `leveldb_snappy_compression`. Part of the ABI: never change.
const SNAPPY_COMPRESSION: c_int = 1;

/// Applies `set` to the options behind `opt` (NULL is ignored), never unwinding into C.
///
/// # Safety
/// `opt` is NULL or a live options object not used by another thread meanwhile.
pub(crate) unsafe fn update<T>(opt: *mut T, set: impl FnOnce(&mut T)) {
    // SAFETY: forwarded precondition.
    if let Some(opt) = unsafe { opt.as_mut() } {
        guarded((), || set(opt));
    }
}

/// `value` clipped to `[low, high]`, treating a negative C `int` as below the range.
fn clip(value: i128, low: usize, high: usize) -> usize {
    usize::try_from(value.clamp(low as i128, high as i128)).unwrap_or(low)
}

#[no_mangle]
pub extern "C" fn leveldb_options_create() -> *mut leveldb_options_t {
    guarded(std::ptr::null_mut(), || {
        into_handle(leveldb_options_t {
            rep: Options::default(),
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_options_destroy(opt: *mut leveldb_options_t) {
    // SAFETY: per the crate contract `opt` is NULL or a live handle released only here.
    guarded((), || unsafe { drop_handle(opt) })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_options_set_comparator(
    opt: *mut leveldb_options_t,
    cmp: *mut leveldb_comparator_t,
) {
    // SAFETY: per the crate contract `opt` and `cmp` are NULL or live handles.
    unsafe {
        update(opt, |o| {
            o.rep.comparator = match cmp.as_ref() {
                Some(cmp) => Arc::clone(&cmp.rep),
                None => BytewiseComparator::shared(),
            }
        })
    }
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_options_set_filter_policy(
    opt: *mut leveldb_options_t,
    policy: *mut leveldb_filterpolicy_t,
) {
    // SAFETY: per the crate contract `opt` and `policy` are NULL or live handles.
    unsafe {
        update(opt, |o| {
            o.rep.filter_policy = policy.as_ref().map(|p| Arc::clone(&p.rep))
        })
    }
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_options_set_create_if_missing(opt: *mut leveldb_options_t, v: u8) {
    // SAFETY: per the crate contract `opt` is NULL or a live handle.
    unsafe { update(opt, |o| o.rep.create_if_missing = v != 0) }
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_options_set_error_if_exists(opt: *mut leveldb_options_t, v: u8) {
    // SAFETY: per the crate contract `opt` is NULL or a live handle.
    unsafe { update(opt, |o| o.rep.error_if_exists = v != 0) }
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_options_set_paranoid_checks(opt: *mut leveldb_options_t, v: u8) {
    // SAFETY: per the crate contract `opt` is NULL or a live handle.
    unsafe { update(opt, |o| o.rep.paranoid_checks = v != 0) }
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_options_set_env(
    opt: *mut leveldb_options_t,
    env: *mut leveldb_env_t,
) {
    // SAFETY: per the crate contract `opt` and `env` are NULL or live handles.
    unsafe {
        update(opt, |o| {
            o.rep.env = match env.as_ref() {
                Some(env) => Arc::clone(&env.rep),
                None => Arc::new(PosixEnv::new()),
            }
        })
    }
}

/// Accepted and ignored: Strata writes its own `LOG` file in the database directory.
#[no_mangle]
pub extern "C" fn leveldb_options_set_info_log(
    _opt: *mut leveldb_options_t,
    _logger: *mut leveldb_logger_t,
) {
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_options_set_write_buffer_size(
    opt: *mut leveldb_options_t,
    size: usize,
) {
    // SAFETY: per the crate contract `opt` is NULL or a live handle.
    unsafe {
        update(opt, |o| {
            o.rep.write_buffer_size = clip(size as i128, 64 << 10, 1 << 30)
        })
    }
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_options_set_max_open_files(opt: *mut leveldb_options_t, n: c_int) {
    // SAFETY: per the crate contract `opt` is NULL or a live handle.
    unsafe {
        update(opt, |o| {
            o.rep.max_open_files = clip(n.into(), 64 + 10, 50_000)
        })
    }
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_options_set_cache(
    opt: *mut leveldb_options_t,
    cache: *mut leveldb_cache_t,
) {
    // SAFETY: per the crate contract `opt` and `cache` are NULL or live handles.
    unsafe {
        update(opt, |o| {
            o.rep.block_cache = cache.as_ref().map(|c| Arc::clone(&c.rep))
        })
    }
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_options_set_block_size(opt: *mut leveldb_options_t, size: usize) {
    // SAFETY: per the crate contract `opt` is NULL or a live handle.
    unsafe {
        update(opt, |o| {
            o.rep.block_size = clip(size as i128, 1 << 10, 4 << 20)
        })
    }
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_options_set_block_restart_interval(
    opt: *mut leveldb_options_t,
    n: c_int,
) {
    // SAFETY: per the crate contract `opt` is NULL or a live handle.
    unsafe {
        update(opt, |o| {
            o.rep.block_restart_interval = clip(n.into(), 1, 1 << 20)
        })
    }
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_options_set_max_file_size(
    opt: *mut leveldb_options_t,
    size: usize,
) {
    // SAFETY: per the crate contract `opt` is NULL or a live handle.
    unsafe {
        update(opt, |o| {
            o.rep.max_file_size = clip(size as i128, 1 << 20, 1 << 30)
        })
    }
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_options_set_compression(opt: *mut leveldb_options_t, t: c_int) {
    // SAFETY: per the crate contract `opt` is NULL or a live handle.
    unsafe {
        update(opt, |o| match t {
            NO_COMPRESSION => o.rep.compression = CompressionType::None,
            SNAPPY_COMPRESSION => o.rep.compression = CompressionType::Snappy,
            _ => {} // unknown: keep the current setting
        })
    }
}

#[no_mangle]
pub extern "C" fn leveldb_readoptions_create() -> *mut leveldb_readoptions_t {
    guarded(std::ptr::null_mut(), || {
        into_handle(leveldb_readoptions_t {
            rep: ReadOptions::default(),
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_readoptions_destroy(opt: *mut leveldb_readoptions_t) {
    // SAFETY: per the crate contract `opt` is NULL or a live handle released only here.
    guarded((), || unsafe { drop_handle(opt) })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_readoptions_set_verify_checksums(
    opt: *mut leveldb_readoptions_t,
    v: u8,
) {
    // SAFETY: per the crate contract `opt` is NULL or a live handle.
    unsafe { update(opt, |o| o.rep.verify_checksums = v != 0) }
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_readoptions_set_fill_cache(
    opt: *mut leveldb_readoptions_t,
    v: u8,
) {
    // SAFETY: per the crate contract `opt` is NULL or a live handle.
    unsafe { update(opt, |o| o.rep.fill_cache = v != 0) }
}

/// Reads made with these options see `snap` (NULL: the latest state). The options keep the
/// snapshot pinned until they are destroyed or given another one.
#[no_mangle]
pub unsafe extern "C" fn leveldb_readoptions_set_snapshot(
    opt: *mut leveldb_readoptions_t,
    snap: *const leveldb_snapshot_t,
) {
    // SAFETY: per the crate contract `opt` and `snap` are NULL or live handles.
    unsafe {
        update(opt, |o| {
            o.rep.snapshot = snap.as_ref().map(|s| s.rep.clone())
        })
    }
}

#[no_mangle]
pub extern "C" fn leveldb_writeoptions_create() -> *mut leveldb_writeoptions_t {
    guarded(std::ptr::null_mut(), || {
        into_handle(leveldb_writeoptions_t {
            rep: WriteOptions::default(),
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_writeoptions_destroy(opt: *mut leveldb_writeoptions_t) {
    // SAFETY: per the crate contract `opt` is NULL or a live handle released only here.
    guarded((), || unsafe { drop_handle(opt) })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_writeoptions_set_sync(opt: *mut leveldb_writeoptions_t, v: u8) {
    // SAFETY: per the crate contract `opt` is NULL or a live handle.
    unsafe { update(opt, |o| o.rep.sync = v != 0) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_clipped_to_leveldbs_ranges() {
        let opt = leveldb_options_create();
        // SAFETY: `opt` is a live handle made above and destroyed once at the end.
        unsafe {
            leveldb_options_set_write_buffer_size(opt, 1);
            leveldb_options_set_max_open_files(opt, -5);
            leveldb_options_set_block_size(opt, usize::MAX);
            leveldb_options_set_block_restart_interval(opt, 0);
            leveldb_options_set_max_file_size(opt, 3 << 20);
            leveldb_options_set_compression(opt, NO_COMPRESSION);
            leveldb_options_set_compression(opt, 7);
            let o = &(*opt).rep;
            assert_eq!(o.write_buffer_size, 64 << 10);
            assert_eq!(o.max_open_files, 74);
            assert_eq!(o.block_size, 4 << 20);
            assert_eq!(o.block_restart_interval, 1);
            assert_eq!(o.max_file_size, 3 << 20);
            assert_eq!(o.compression, CompressionType::None);
            leveldb_options_destroy(opt);
        }
    }
}
