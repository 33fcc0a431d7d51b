//! `leveldb_cache_t` (the LRU block cache), `leveldb_env_t` (the POSIX environment) and
//! `leveldb_logger_t` (declared by the C API, never made by it).

use std::ffi::c_char;
use std::path::PathBuf;
use std::ptr;
use std::sync::Arc;

use engine::{BlockCache, Env, PosixEnv};

use crate::boundary::{drop_handle, guarded, into_handle, malloc_bytes};

/// `leveldb_cache_t`: a block cache that several databases may share.
pub struct leveldb_cache_t {
    pub(crate) rep: Arc<BlockCache>,
}

/// `leveldb_env_t`: the file system and clock a database uses.
pub struct leveldb_env_t {
    pub(crate) rep: Arc<dyn Env>,
}

/// `leveldb_logger_t`: only ever passed as NULL, since the C API has no function that makes
/// one; see `leveldb_options_set_info_log`.
pub struct leveldb_logger_t {
    _private: (),
}

/// An LRU cache holding up to `capacity` bytes of uncompressed blocks.
#[no_mangle]
pub extern "C" fn leveldb_cache_create_lru(capacity: usize) -> *mut leveldb_cache_t {
    guarded(ptr::null_mut(), || {
        into_handle(leveldb_cache_t {
            rep: BlockCache::new(capacity),
        })
    })
}

/// Releases the caller's reference; databases using the cache keep it until they close.
#[no_mangle]
pub unsafe extern "C" fn leveldb_cache_destroy(cache: *mut leveldb_cache_t) {
    // SAFETY: per the crate contract `cache` is NULL or a live handle released only here.
    guarded((), || unsafe { drop_handle(cache) })
}

/// The POSIX environment. Every one shares the process-wide table of held `LOCK`s, so a
/// database cannot be opened twice in one process whichever env each open uses.
#[no_mangle]
pub extern "C" fn leveldb_create_default_env() -> *mut leveldb_env_t {
    guarded(ptr::null_mut(), || {
        into_handle(leveldb_env_t {
            rep: Arc::new(PosixEnv::new()),
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn leveldb_env_destroy(env: *mut leveldb_env_t) {
    // SAFETY: per the crate contract `env` is NULL or a live handle released only here.
    guarded((), || unsafe { drop_handle(env) })
}

/// A directory for tests, as LevelDB's POSIX env picks it: `$TEST_TMPDIR` when set and not
/// empty, else `/tmp/leveldbtest-<effective uid>`; it is created if missing. Returns a
/// `malloc`'d NUL-terminated path (free with `leveldb_free`), or NULL when it cannot be made.
#[no_mangle]
pub extern "C" fn leveldb_env_get_test_directory(_env: *mut leveldb_env_t) -> *mut c_char {
    guarded(ptr::null_mut(), || {
        let dir = match std::env::var_os("TEST_TMPDIR") {
            Some(dir) if !dir.is_empty() => PathBuf::from(dir),
            // SAFETY: `geteuid` has no preconditions and cannot fail.
            _ => PathBuf::from(format!("/tmp/leveldbtest-{}", unsafe { libc::geteuid() })),
        };
        if std::fs::create_dir_all(&dir).is_err() {
            return ptr::null_mut();
        }
        let mut bytes = std::os::unix::ffi::OsStrExt::as_bytes(dir.as_os_str()).to_vec();
        if bytes.contains(&0) {
            return ptr::null_mut();
        }
        bytes.push(0);
        malloc_bytes(&bytes)
    })
}
