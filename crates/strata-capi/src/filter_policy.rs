//! `leveldb_filterpolicy_t`: a filter policy made of C callbacks, or LevelDB's bloom filter.
//!
//! C callbacks may run on any thread at once and must be thread-safe. `create_filter` returns
//! a `malloc`'d filter, which is copied into the table and then `free`d, as LevelDB does.

use std::ffi::{c_char, c_int, c_void};
use std::ptr;
use std::sync::Arc;

use engine::{BloomFilterPolicy, FilterPolicy};

use crate::boundary::{drop_handle, guarded, into_handle};
use crate::comparator::{read_name, DestructorFn, NameFn};

/// `char* (*create_filter)(void* state, const char* const* keys, const size_t* key_lengths,
/// int num_keys, size_t* filter_length)`.
type CreateFilterFn = unsafe extern "C" fn(
    *mut c_void,
    *const *const c_char,
    *const usize,
    c_int,
    *mut usize,
) -> *mut c_char;
/// `uint8_t (*key_may_match)(void* state, const char* key, size_t length, const char* filter,
/// size_t filter_length)`.
type KeyMayMatchFn =
    unsafe extern "C" fn(*mut c_void, *const c_char, usize, *const c_char, usize) -> u8;

/// `leveldb_filterpolicy_t`: the caller's reference to a filter policy.
pub struct leveldb_filterpolicy_t {
    pub(crate) rep: Arc<dyn FilterPolicy>,
}

/// A filter policy made of C callbacks; runs the C destructor when the last user lets go.
struct CFilterPolicy {
    state: *mut c_void,
    destructor: Option<DestructorFn>,
    create_filter: CreateFilterFn,
    key_may_match: KeyMayMatchFn,
    name: String,
}

// SAFETY: the C API requires the callbacks and their `state` to be usable from any thread at
// once; the struct holds nothing else.
unsafe impl Send for CFilterPolicy {}
// SAFETY: as for `Send`; every method only reads the fields.
unsafe impl Sync for CFilterPolicy {}

impl FilterPolicy for CFilterPolicy {
    fn name(&self) -> &str {
        &self.name
    }

    fn create_filter(&self, keys: &[&[u8]], dst: &mut Vec<u8>) {
        // The C signature counts keys in an `int`; a table block never holds that many.
        let count = keys.len().min(c_int::MAX as usize);
        let starts: Vec<*const c_char> = keys[..count].iter().map(|k| k.as_ptr().cast()).collect();
        let lengths: Vec<usize> = keys[..count].iter().map(|k| k.len()).collect();
        let mut filter_len = 0usize;
        // SAFETY: the caller's callback for `state`; both arrays hold `count` entries and every
        // key pointer is valid for its length during the call.
        let filter = unsafe {
            (self.create_filter)(
                self.state,
                starts.as_ptr(),
                lengths.as_ptr(),
                count as c_int,
                &mut filter_len,
            )
        };
        if filter.is_null() {
            return; // an empty filter: tables then consult no filter for this range
        }
        // SAFETY: the callback returned a `malloc`'d block of `filter_len` bytes, which we own
        // from here: it is read once and freed once.
        unsafe {
            dst.extend_from_slice(std::slice::from_raw_parts(filter.cast::<u8>(), filter_len));
            libc::free(filter.cast());
        }
    }

    fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool {
        // SAFETY: the caller's callback for `state`; both slices are valid during the call.
        let answer = unsafe {
            (self.key_may_match)(
                self.state,
                key.as_ptr().cast(),
                key.len(),
                filter.as_ptr().cast(),
                filter.len(),
            )
        };
        answer != 0
    }
}

impl Drop for CFilterPolicy {
    fn drop(&mut self) {
        if let Some(destructor) = self.destructor {
            // SAFETY: the caller's destructor for `state`, run exactly once, after every user
            // of the policy is gone.
            unsafe { destructor(self.state) }
        }
    }
}

/// Makes a filter policy from callbacks; NULL when a required callback is NULL.
#[no_mangle]
pub unsafe extern "C" fn leveldb_filterpolicy_create(
    state: *mut c_void,
    destructor: Option<DestructorFn>,
    create_filter: Option<CreateFilterFn>,
    key_may_match: Option<KeyMayMatchFn>,
    name: Option<NameFn>,
) -> *mut leveldb_filterpolicy_t {
    let (Some(create_filter), Some(key_may_match), Some(name)) =
        (create_filter, key_may_match, name)
    else {
        return ptr::null_mut();
    };
    guarded(ptr::null_mut(), || {
        let policy = CFilterPolicy {
            state,
            destructor,
            create_filter,
            key_may_match,
            // SAFETY: `name` is the caller's callback for `state` (crate contract).
            name: unsafe { read_name(name, state) },
        };
        into_handle(leveldb_filterpolicy_t {
            rep: Arc::new(policy),
        })
    })
}

/// Releases the caller's reference; the destructor runs once nothing uses the policy.
#[no_mangle]
pub unsafe extern "C" fn leveldb_filterpolicy_destroy(policy: *mut leveldb_filterpolicy_t) {
    // SAFETY: per the crate contract `policy` is NULL or a live handle released only here.
    guarded((), || unsafe { drop_handle(policy) })
}

/// LevelDB's built-in bloom filter (`leveldb.BuiltinBloomFilter2`), about `bits_per_key` bits
/// per key; tables written with it are read by LevelDB's bloom filter and the other way round.
#[no_mangle]
pub extern "C" fn leveldb_filterpolicy_create_bloom(
    bits_per_key: c_int,
) -> *mut leveldb_filterpolicy_t {
    guarded(ptr::null_mut(), || {
        let bits = usize::try_from(bits_per_key).unwrap_or(0);
        into_handle(leveldb_filterpolicy_t {
            rep: Arc::new(BloomFilterPolicy::new(bits)),
        })
    })
}
