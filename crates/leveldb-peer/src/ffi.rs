//! Raw declarations of the LevelDB 1.23 C API (`leveldb/c.h`) that the peer uses.
//!
//! Conventions of that API, which every caller here must honour:
//! - Every handle is an opaque pointer; a handle is released only by its own `*_destroy`
//!   (or `leveldb_close` / `leveldb_release_snapshot`).
//! - Fallible calls take a trailing `errptr: *mut *mut c_char` that must point at a null pointer
//!   on entry. On failure LevelDB stores a `malloc`ed, NUL-terminated message there, which the
//!   caller frees with [`leveldb_free`]. On success it is left untouched.
//! - Every buffer LevelDB returns (`leveldb_get`, `leveldb_property_value`) is `malloc`ed and is
//!   freed with [`leveldb_free`].
//! - Booleans are `u8` (0 = false). Keys and values are passed as pointer + length.
//! - Pointers returned by `leveldb_iter_key` / `leveldb_iter_value` stay valid only until the
//!   iterator is next moved or destroyed.

use libc::{c_char, c_int, c_void, size_t};

/// Declares zero-sized opaque types for the C handles: not constructible, not `Send`/`Sync` by
/// themselves, only ever seen behind raw pointers.
macro_rules! opaque {
    ($($name:ident),* $(,)?) => {
        $(
            #[repr(C)]
            pub struct $name {
                _private: [u8; 0],
            }
        )*
    };
}

opaque!(
    leveldb_t,
    leveldb_cache_t,
    leveldb_filterpolicy_t,
    leveldb_iterator_t,
    leveldb_options_t,
    leveldb_readoptions_t,
    leveldb_snapshot_t,
    leveldb_writebatch_t,
    leveldb_writeoptions_t,
);

/// Value for [`leveldb_options_set_compression`]: store blocks uncompressed.
pub const LEVELDB_NO_COMPRESSION: c_int = 0;
/// Value for [`leveldb_options_set_compression`]: Snappy-compress blocks.
pub const LEVELDB_SNAPPY_COMPRESSION: c_int = 1;

/// Callback type of [`leveldb_writebatch_iterate`] for a put record.
pub type WriteBatchPutFn = unsafe extern "C" fn(
    state: *mut c_void,
    k: *const c_char,
    klen: size_t,
    v: *const c_char,
    vlen: size_t,
);
/// Callback type of [`leveldb_writebatch_iterate`] for a delete record.
pub type WriteBatchDeleteFn =
    unsafe extern "C" fn(state: *mut c_void, k: *const c_char, klen: size_t);

extern "C" {
    // Database.
    pub fn leveldb_open(
        options: *const leveldb_options_t,
        name: *const c_char,
        errptr: *mut *mut c_char,
    ) -> *mut leveldb_t;
    pub fn leveldb_close(db: *mut leveldb_t);
    pub fn leveldb_put(
        db: *mut leveldb_t,
        options: *const leveldb_writeoptions_t,
        key: *const c_char,
        keylen: size_t,
        val: *const c_char,
        vallen: size_t,
        errptr: *mut *mut c_char,
    );
    pub fn leveldb_delete(
        db: *mut leveldb_t,
        options: *const leveldb_writeoptions_t,
        key: *const c_char,
        keylen: size_t,
        errptr: *mut *mut c_char,
    );
    pub fn leveldb_write(
        db: *mut leveldb_t,
        options: *const leveldb_writeoptions_t,
        batch: *mut leveldb_writebatch_t,
        errptr: *mut *mut c_char,
    );
    /// Returns null when the key is absent, else a `malloc`ed buffer of `*vallen` bytes.
    pub fn leveldb_get(
        db: *mut leveldb_t,
        options: *const leveldb_readoptions_t,
        key: *const c_char,
        keylen: size_t,
        vallen: *mut size_t,
        errptr: *mut *mut c_char,
    ) -> *mut c_char;
    pub fn leveldb_create_iterator(
        db: *mut leveldb_t,
        options: *const leveldb_readoptions_t,
    ) -> *mut leveldb_iterator_t;
    pub fn leveldb_create_snapshot(db: *mut leveldb_t) -> *const leveldb_snapshot_t;
    pub fn leveldb_release_snapshot(db: *mut leveldb_t, snapshot: *const leveldb_snapshot_t);
    /// Returns null for an unknown property, else a `malloc`ed NUL-terminated string.
    pub fn leveldb_property_value(db: *mut leveldb_t, propname: *const c_char) -> *mut c_char;
    pub fn leveldb_approximate_sizes(
        db: *mut leveldb_t,
        num_ranges: c_int,
        range_start_key: *const *const c_char,
        range_start_key_len: *const size_t,
        range_limit_key: *const *const c_char,
        range_limit_key_len: *const size_t,
        sizes: *mut u64,
    );
    /// A null `start_key` / `limit_key` means "from the first key" / "to the last key".
    pub fn leveldb_compact_range(
        db: *mut leveldb_t,
        start_key: *const c_char,
        start_key_len: size_t,
        limit_key: *const c_char,
        limit_key_len: size_t,
    );

    // Management.
    pub fn leveldb_destroy_db(
        options: *const leveldb_options_t,
        name: *const c_char,
        errptr: *mut *mut c_char,
    );
    pub fn leveldb_repair_db(
        options: *const leveldb_options_t,
        name: *const c_char,
        errptr: *mut *mut c_char,
    );

    // Iterator.
    pub fn leveldb_iter_destroy(iter: *mut leveldb_iterator_t);
    pub fn leveldb_iter_valid(iter: *const leveldb_iterator_t) -> u8;
    pub fn leveldb_iter_seek_to_first(iter: *mut leveldb_iterator_t);
    pub fn leveldb_iter_seek_to_last(iter: *mut leveldb_iterator_t);
    pub fn leveldb_iter_seek(iter: *mut leveldb_iterator_t, k: *const c_char, klen: size_t);
    /// Requires a valid iterator (LevelDB only `assert`s it).
    pub fn leveldb_iter_next(iter: *mut leveldb_iterator_t);
    /// Requires a valid iterator (LevelDB only `assert`s it).
    pub fn leveldb_iter_prev(iter: *mut leveldb_iterator_t);
    /// Requires a valid iterator (LevelDB only `assert`s it).
    pub fn leveldb_iter_key(iter: *const leveldb_iterator_t, klen: *mut size_t) -> *const c_char;
    /// Requires a valid iterator (LevelDB only `assert`s it).
    pub fn leveldb_iter_value(iter: *const leveldb_iterator_t, vlen: *mut size_t) -> *const c_char;
    pub fn leveldb_iter_get_error(iter: *const leveldb_iterator_t, errptr: *mut *mut c_char);

    // Write batch.
    pub fn leveldb_writebatch_create() -> *mut leveldb_writebatch_t;
    pub fn leveldb_writebatch_destroy(batch: *mut leveldb_writebatch_t);
    pub fn leveldb_writebatch_clear(batch: *mut leveldb_writebatch_t);
    pub fn leveldb_writebatch_put(
        batch: *mut leveldb_writebatch_t,
        key: *const c_char,
        klen: size_t,
        val: *const c_char,
        vlen: size_t,
    );
    pub fn leveldb_writebatch_delete(
        batch: *mut leveldb_writebatch_t,
        key: *const c_char,
        klen: size_t,
    );
    pub fn leveldb_writebatch_iterate(
        batch: *const leveldb_writebatch_t,
        state: *mut c_void,
        put: WriteBatchPutFn,
        deleted: WriteBatchDeleteFn,
    );

    // Options.
    pub fn leveldb_options_create() -> *mut leveldb_options_t;
    pub fn leveldb_options_destroy(options: *mut leveldb_options_t);
    pub fn leveldb_options_set_filter_policy(
        options: *mut leveldb_options_t,
        policy: *mut leveldb_filterpolicy_t,
    );
    pub fn leveldb_options_set_create_if_missing(options: *mut leveldb_options_t, v: u8);
    pub fn leveldb_options_set_error_if_exists(options: *mut leveldb_options_t, v: u8);
    pub fn leveldb_options_set_paranoid_checks(options: *mut leveldb_options_t, v: u8);
    pub fn leveldb_options_set_write_buffer_size(options: *mut leveldb_options_t, size: size_t);
    pub fn leveldb_options_set_max_open_files(options: *mut leveldb_options_t, n: c_int);
    pub fn leveldb_options_set_cache(options: *mut leveldb_options_t, cache: *mut leveldb_cache_t);
    pub fn leveldb_options_set_block_size(options: *mut leveldb_options_t, size: size_t);
    pub fn leveldb_options_set_block_restart_interval(options: *mut leveldb_options_t, n: c_int);
    pub fn leveldb_options_set_max_file_size(options: *mut leveldb_options_t, size: size_t);
    /// `kind` is [`LEVELDB_NO_COMPRESSION`] or [`LEVELDB_SNAPPY_COMPRESSION`].
    pub fn leveldb_options_set_compression(options: *mut leveldb_options_t, kind: c_int);

    // Filter policy.
    pub fn leveldb_filterpolicy_create_bloom(bits_per_key: c_int) -> *mut leveldb_filterpolicy_t;
    pub fn leveldb_filterpolicy_destroy(policy: *mut leveldb_filterpolicy_t);

    // Read options.
    pub fn leveldb_readoptions_create() -> *mut leveldb_readoptions_t;
    pub fn leveldb_readoptions_destroy(options: *mut leveldb_readoptions_t);
    pub fn leveldb_readoptions_set_verify_checksums(options: *mut leveldb_readoptions_t, v: u8);
    pub fn leveldb_readoptions_set_fill_cache(options: *mut leveldb_readoptions_t, v: u8);
    pub fn leveldb_readoptions_set_snapshot(
        options: *mut leveldb_readoptions_t,
        snapshot: *const leveldb_snapshot_t,
    );

    // Write options.
    pub fn leveldb_writeoptions_create() -> *mut leveldb_writeoptions_t;
    pub fn leveldb_writeoptions_destroy(options: *mut leveldb_writeoptions_t);
    pub fn leveldb_writeoptions_set_sync(options: *mut leveldb_writeoptions_t, v: u8);

    // Cache.
    pub fn leveldb_cache_create_lru(capacity: size_t) -> *mut leveldb_cache_t;
    pub fn leveldb_cache_destroy(cache: *mut leveldb_cache_t);

    // Utility.
    /// Frees a buffer or error message that LevelDB `malloc`ed.
    pub fn leveldb_free(ptr: *mut c_void);
    pub fn leveldb_major_version() -> c_int;
    pub fn leveldb_minor_version() -> c_int;
}
