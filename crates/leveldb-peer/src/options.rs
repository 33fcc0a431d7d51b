//! Options for opening a LevelDB database, and the C option handles built from them.

use std::ptr::{self, NonNull};

use libc::c_int;

use crate::ffi;

/// How to open a LevelDB database. `Default` is LevelDB 1.23's own defaults (Snappy on, no
/// bloom filter, LevelDB's internal 8 MiB block cache); `None` sizes keep LevelDB's default.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LevelDbOptions {
    /// Create the database if the directory holds none.
    pub create_if_missing: bool,
    /// Fail if a database already exists there.
    pub error_if_exists: bool,
    /// Make LevelDB check aggressively and stop at the first corruption it sees.
    pub paranoid_checks: bool,
    /// Memtable size before it is written to a level-0 table (LevelDB default 4 MiB;
    /// LevelDB raises smaller values to 64 KiB).
    pub write_buffer_size: Option<usize>,
    /// Table files kept open (LevelDB default 1000; at least 74).
    pub max_open_files: Option<usize>,
    /// Uncompressed size of a table data block (LevelDB default 4 KiB).
    pub block_size: Option<usize>,
    /// Keys between restart points in a block (LevelDB default 16).
    pub block_restart_interval: Option<usize>,
    /// Target size of a table file (LevelDB default 2 MiB; LevelDB raises smaller values to
    /// 1 MiB).
    pub max_file_size: Option<usize>,
    /// Snappy-compress blocks (LevelDB default on).
    pub compression: bool,
    /// Use LevelDB's built-in bloom filter with this many bits per key.
    pub bloom_bits: Option<i32>,
    /// Give the database its own LRU block cache of this many bytes.
    pub cache_bytes: Option<usize>,
}

impl Default for LevelDbOptions {
    fn default() -> Self {
        LevelDbOptions {
            create_if_missing: false,
            error_if_exists: false,
            paranoid_checks: false,
            write_buffer_size: None,
            max_open_files: None,
            block_size: None,
            block_restart_interval: None,
            max_file_size: None,
            compression: true,
            bloom_bits: None,
            cache_bytes: None,
        }
    }
}

/// A `leveldb_options_t` together with the cache and filter policy it points at.
///
/// LevelDB keeps raw pointers to the cache and the filter policy for the whole life of a
/// database, so this value must outlive every database opened with it.
pub(crate) struct NativeOptions {
    raw: NonNull<ffi::leveldb_options_t>,
    /// Null when LevelDB should make its own cache.
    cache: *mut ffi::leveldb_cache_t,
    /// Null when no filter policy is set.
    filter: *mut ffi::leveldb_filterpolicy_t,
}

impl NativeOptions {
    /// Builds the C handles for `opts`; fails if a count does not fit LevelDB's `int`.
    pub(crate) fn new(opts: &LevelDbOptions) -> Result<Self, String> {
        let max_open_files = opts
            .max_open_files
            .map(|n| to_c_int("max_open_files", n))
            .transpose()?;
        let restart_interval = opts
            .block_restart_interval
            .map(|n| to_c_int("block_restart_interval", n))
            .transpose()?;

        // SAFETY: `leveldb_options_create` takes no arguments and returns a fresh heap object
        // (C++ `new`, which aborts rather than return null on exhaustion).
        let raw = unsafe { ffi::leveldb_options_create() };
        let raw = NonNull::new(raw).ok_or("leveldb_options_create returned null")?;
        // Owned from here on, so an early return below still destroys every handle.
        let mut native = NativeOptions {
            raw,
            cache: ptr::null_mut(),
            filter: ptr::null_mut(),
        };
        let o = native.raw.as_ptr();

        // SAFETY: `o` is the live options object created above; the setters only store values.
        unsafe {
            ffi::leveldb_options_set_create_if_missing(o, u8::from(opts.create_if_missing));
            ffi::leveldb_options_set_error_if_exists(o, u8::from(opts.error_if_exists));
            ffi::leveldb_options_set_paranoid_checks(o, u8::from(opts.paranoid_checks));
            if let Some(n) = opts.write_buffer_size {
                ffi::leveldb_options_set_write_buffer_size(o, n);
            }
            if let Some(n) = max_open_files {
                ffi::leveldb_options_set_max_open_files(o, n);
            }
            if let Some(n) = opts.block_size {
                ffi::leveldb_options_set_block_size(o, n);
            }
            if let Some(n) = restart_interval {
                ffi::leveldb_options_set_block_restart_interval(o, n);
            }
            if let Some(n) = opts.max_file_size {
                ffi::leveldb_options_set_max_file_size(o, n);
            }
            let kind = if opts.compression {
                ffi::LEVELDB_SNAPPY_COMPRESSION
            } else {
                ffi::LEVELDB_NO_COMPRESSION
            };
            ffi::leveldb_options_set_compression(o, kind);
        }

        if let Some(bits) = opts.bloom_bits {
            // SAFETY: creates a fresh policy object; owned by `native`, destroyed in `drop`
            // after every database using it has closed (see the type's contract).
            native.filter = unsafe { ffi::leveldb_filterpolicy_create_bloom(bits) };
            // SAFETY: `o` and the policy are both live; LevelDB only stores the pointer.
            unsafe { ffi::leveldb_options_set_filter_policy(o, native.filter) };
        }
        if let Some(bytes) = opts.cache_bytes {
            // SAFETY: creates a fresh cache; owned by `native` like the filter policy.
            native.cache = unsafe { ffi::leveldb_cache_create_lru(bytes) };
            // SAFETY: `o` and the cache are both live; LevelDB only stores the pointer.
            unsafe { ffi::leveldb_options_set_cache(o, native.cache) };
        }
        Ok(native)
    }

    pub(crate) fn as_ptr(&self) -> *const ffi::leveldb_options_t {
        self.raw.as_ptr()
    }
}

impl Drop for NativeOptions {
    fn drop(&mut self) {
        // SAFETY: each handle was created in `new`, is owned only by `self` and is destroyed
        // once. The options object goes first since it points at the other two.
        unsafe {
            ffi::leveldb_options_destroy(self.raw.as_ptr());
            if !self.filter.is_null() {
                ffi::leveldb_filterpolicy_destroy(self.filter);
            }
            if !self.cache.is_null() {
                ffi::leveldb_cache_destroy(self.cache);
            }
        }
    }
}

// SAFETY: the handles are plain heap objects with no thread affinity; after construction
// LevelDB only reads the options, and its cache and bloom policy are themselves thread-safe.
unsafe impl Send for NativeOptions {}
// SAFETY: as above; no method mutates through `&self`.
unsafe impl Sync for NativeOptions {}

fn to_c_int(what: &str, n: usize) -> Result<c_int, String> {
    c_int::try_from(n).map_err(|_| format!("{what} = {n} does not fit a C int"))
}

/// `leveldb_readoptions_t` owned by Rust.
pub(crate) struct ReadOpts(NonNull<ffi::leveldb_readoptions_t>);

impl ReadOpts {
    /// Read options over the latest state.
    pub(crate) fn new(fill_cache: bool, verify_checksums: bool) -> Self {
        // SAFETY: returns a fresh heap object (C++ `new`).
        let raw = unsafe { ffi::leveldb_readoptions_create() };
        let Some(raw) = NonNull::new(raw) else {
            panic!("leveldb_readoptions_create returned null");
        };
        // SAFETY: `raw` is live; the setters only store the flags.
        unsafe {
            ffi::leveldb_readoptions_set_fill_cache(raw.as_ptr(), u8::from(fill_cache));
            ffi::leveldb_readoptions_set_verify_checksums(raw.as_ptr(), u8::from(verify_checksums));
        }
        ReadOpts(raw)
    }

    /// Default read flags, reading as of `snapshot`.
    ///
    /// # Safety
    /// `snapshot` is a live snapshot that stays unreleased for as long as these options are used.
    pub(crate) unsafe fn with_snapshot(snapshot: *const ffi::leveldb_snapshot_t) -> Self {
        let opts = ReadOpts::new(true, false);
        // SAFETY: `opts` is live; LevelDB stores the pointer, which the caller keeps valid.
        unsafe { ffi::leveldb_readoptions_set_snapshot(opts.0.as_ptr(), snapshot) };
        opts
    }

    pub(crate) fn as_ptr(&self) -> *const ffi::leveldb_readoptions_t {
        self.0.as_ptr()
    }
}

impl Drop for ReadOpts {
    fn drop(&mut self) {
        // SAFETY: created in `new`, owned only by `self`, destroyed once.
        unsafe { ffi::leveldb_readoptions_destroy(self.0.as_ptr()) };
    }
}

/// `leveldb_writeoptions_t` owned by Rust.
pub(crate) struct WriteOpts(NonNull<ffi::leveldb_writeoptions_t>);

impl WriteOpts {
    pub(crate) fn new(sync: bool) -> Self {
        // SAFETY: returns a fresh heap object (C++ `new`).
        let raw = unsafe { ffi::leveldb_writeoptions_create() };
        let Some(raw) = NonNull::new(raw) else {
            panic!("leveldb_writeoptions_create returned null");
        };
        // SAFETY: `raw` is live; the setter only stores the flag.
        unsafe { ffi::leveldb_writeoptions_set_sync(raw.as_ptr(), u8::from(sync)) };
        WriteOpts(raw)
    }

    pub(crate) fn as_ptr(&self) -> *const ffi::leveldb_writeoptions_t {
        self.0.as_ptr()
    }
}

impl Drop for WriteOpts {
    fn drop(&mut self) {
        // SAFETY: created in `new`, owned only by `self`, destroyed once.
        unsafe { ffi::leveldb_writeoptions_destroy(self.0.as_ptr()) };
    }
}

// SAFETY: read and write options are plain structs of flags (and a snapshot pointer) that
// LevelDB only reads; they have no thread affinity and are never mutated after `new`.
unsafe impl Send for ReadOpts {}
// SAFETY: as above.
unsafe impl Sync for ReadOpts {}
// SAFETY: as for `ReadOpts`.
unsafe impl Send for WriteOpts {}
// SAFETY: as for `ReadOpts`.
unsafe impl Sync for WriteOpts {}
