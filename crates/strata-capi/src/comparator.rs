//! `leveldb_comparator_t`: a key order defined by C callbacks.
//!
//! The callbacks are called from any thread, including Strata's background compaction
//! thread, possibly at the same time — as with LevelDB, they must be thread-safe. The name is
//! read once, when the comparator is created, and recorded in the manifest like any
//! comparator's. Key shortening (`find_shortest_separator`, `find_short_successor`) is not
//! offered by the C API and is left out, which is always correct.

use std::cmp::Ordering;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::ptr;
use std::sync::Arc;

use engine::Comparator;

use crate::boundary::{drop_handle, guarded, into_handle};

/// `int (*compare)(void* state, const char* a, size_t alen, const char* b, size_t blen)`.
pub(crate) type CompareFn =
    unsafe extern "C" fn(*mut c_void, *const c_char, usize, *const c_char, usize) -> c_int;
/// `const char* (*name)(void* state)`.
pub(crate) type NameFn = unsafe extern "C" fn(*mut c_void) -> *const c_char;
/// `void (*destructor)(void* state)`.
pub(crate) type DestructorFn = unsafe extern "C" fn(*mut c_void);

/// `leveldb_comparator_t`: the caller's reference to a comparator.
pub struct leveldb_comparator_t {
    pub(crate) rep: Arc<dyn Comparator>,
}

/// A comparator made of C callbacks; runs the C destructor when the last user lets go.
struct CComparator {
    state: *mut c_void,
    destructor: Option<DestructorFn>,
    compare: CompareFn,
    name: String,
}

// SAFETY: the C API requires the callbacks and their `state` to be usable from any thread at
// once (LevelDB calls them from its background thread too); the struct holds nothing else.
unsafe impl Send for CComparator {}
// SAFETY: as for `Send`; every method only reads the fields.
unsafe impl Sync for CComparator {}

impl Comparator for CComparator {
    fn name(&self) -> &str {
        &self.name
    }

    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        // SAFETY: `compare` is the caller's callback for `state`; both slices are valid for
        // their lengths for the duration of the call.
        let order = unsafe {
            (self.compare)(
                self.state,
                a.as_ptr().cast(),
                a.len(),
                b.as_ptr().cast(),
                b.len(),
            )
        };
        order.cmp(&0)
    }
}

impl Drop for CComparator {
    fn drop(&mut self) {
        if let Some(destructor) = self.destructor {
            // SAFETY: the caller's destructor for `state`, run exactly once, after every user
            // of the comparator is gone.
            unsafe { destructor(self.state) }
        }
    }
}

/// Reads a name callback's result; NULL gives the empty name.
///
/// # Safety
/// `name` is the caller's callback for `state`, returning NULL or a NUL-terminated string.
pub(crate) unsafe fn read_name(name: NameFn, state: *mut c_void) -> String {
    // SAFETY: forwarded precondition.
    let text = unsafe { name(state) };
    if text.is_null() {
        return String::new();
    }
    // SAFETY: non-NULL and NUL-terminated by the precondition.
    unsafe { CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned()
}

/// Makes a comparator from callbacks; NULL when `compare` or `name` is NULL.
#[no_mangle]
pub unsafe extern "C" fn leveldb_comparator_create(
    state: *mut c_void,
    destructor: Option<DestructorFn>,
    compare: Option<CompareFn>,
    name: Option<NameFn>,
) -> *mut leveldb_comparator_t {
    let (Some(compare), Some(name)) = (compare, name) else {
        return ptr::null_mut();
    };
    guarded(ptr::null_mut(), || {
        let comparator = CComparator {
            state,
            destructor,
            compare,
            // SAFETY: `name` is the caller's callback for `state` (crate contract).
            name: unsafe { read_name(name, state) },
        };
        into_handle(leveldb_comparator_t {
            rep: Arc::new(comparator),
        })
    })
}

/// Releases the caller's reference; the destructor runs once nothing uses the comparator.
#[no_mangle]
pub unsafe extern "C" fn leveldb_comparator_destroy(cmp: *mut leveldb_comparator_t) {
    // SAFETY: per the crate contract `cmp` is NULL or a live handle released only here.
    guarded((), || unsafe { drop_handle(cmp) })
}
