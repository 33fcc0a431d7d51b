//! LevelDB 1.23's C API over Strata: the 68 functions declared in `include/leveldb/c.h`, with
//! the names, types and semantics C programs and bindings written for LevelDB expect. Built as
//! `libstrata.so` (SONAME `libstrata.so.0`, set in `build.rs`) and `libstrata.a`; `make install-c`
//! installs them with their versioned names, and also as `libleveldb.*`.
//! Strata's extensions are the `strata_*` functions of `include/strata/c.h`, on the same
//! handles: read-only handles and checkpoints (`extensions.rs`); batched reads, range deletes
//! and expiring keys (`range_ops.rs`).
//!
//! # Conventions (LevelDB's)
//!
//! - Every object is an opaque pointer made by a `*_create`/`leveldb_open` function and freed by
//!   its `*_destroy`/`leveldb_close` function.
//! - Byte strings are a pointer and a length; they may hold any byte, NUL included.
//! - Functions that can fail take `char** errptr`. On failure `*errptr` receives a `malloc`'d
//!   NUL-terminated message of the form `"<Kind>: <text>"` (`Corruption`, `Invalid argument`,
//!   `IO error`, `Not implemented`, as LevelDB words its statuses); a message already stored
//!   there is freed first. On success `*errptr` is left untouched, so callers set it to NULL
//!   before the call and free it with `leveldb_free`.
//! - Booleans are `uint8_t`, 0 false and anything else true.
//! - Strings returned to the caller (`leveldb_get`, `leveldb_property_value`,
//!   `leveldb_env_get_test_directory`, error messages) are `malloc`'d: free them with
//!   `leveldb_free` (or `free`).
//!
//! # Safety contract
//!
//! Every exported function is `unsafe`: it trusts the caller, exactly as LevelDB's C API does,
//! to pass pointers that are NULL or were returned by this library and not yet destroyed,
//! byte pointers valid for reads of the given length, NUL-terminated strings where a `const
//! char*` name is expected, and a writable `errptr` (or NULL). The contract is the same for
//! every exported function, so it is stated here once rather than in a `# Safety` section on each.
//!
//! Within that contract the library is defensive where LevelDB would crash: a NULL handle or a
//! NULL byte pointer with a non-zero length fails with `Invalid argument` (or does nothing,
//! for functions without `errptr`); NULL read/write/open options mean the defaults; NULL
//! comparator, filter policy, cache or env in an options setter mean "none"/the default.
//! No Rust panic crosses into C: each function catches it and reports it through `errptr`
//! (as `IO error: internal error: ...`), or returns its neutral value when it has no `errptr`.
//!
//! # Differences from LevelDB, all permitted by its documentation
//!
//! - `leveldb_options_set_info_log` is accepted and ignored: Strata always writes its own
//!   `LOG` file in the database directory (and the C API offers no way to create a logger).
//! - Comparators and filter policies are reference counted: `*_destroy` releases the caller's
//!   reference, and the C `destructor` runs once no options object or open database uses the
//!   object any more (LevelDB runs it at once and requires the caller to have closed every
//!   database using it first; for a caller that follows that rule the two are the same).
//! - Snapshots, caches and envs are likewise kept alive by what uses them, so destroying one
//!   too early is not undefined behaviour here.
//! - Out-of-range option values are clipped when set, to the ranges LevelDB clips them to at
//!   open; an unknown compression number leaves the setting unchanged.

#![allow(clippy::missing_safety_doc)] // one shared contract, stated above
#![allow(non_camel_case_types)] // the handle types carry their C names from c.h

mod boundary;
mod comparator;
mod db;
mod env;
mod extensions;
mod filter_policy;
mod iterator;
mod options;
mod range_ops;
mod value_separation;
mod write_batch;

pub use comparator::leveldb_comparator_t;
pub use db::{leveldb_snapshot_t, leveldb_t};
pub use env::{leveldb_cache_t, leveldb_env_t, leveldb_logger_t};
pub use filter_policy::leveldb_filterpolicy_t;
pub use iterator::leveldb_iterator_t;
pub use options::{leveldb_options_t, leveldb_readoptions_t, leveldb_writeoptions_t};
pub use write_batch::leveldb_writebatch_t;

use std::ffi::{c_int, c_void};

/// The LevelDB release whose C API this library implements: major number.
const MAJOR_VERSION: c_int = 1;
/// The LevelDB release whose C API this library implements: minor number.
const MINOR_VERSION: c_int = 23;

/// Frees a block this library returned (a value, a property, a path or an error message).
#[no_mangle]
pub unsafe extern "C" fn leveldb_free(ptr: *mut c_void) {
    // SAFETY: per the crate contract `ptr` is NULL or a `malloc`'d block this library handed
    // out and the caller has not freed; `free(NULL)` is a no-op.
    unsafe { libc::free(ptr) }
}

/// The major version of the LevelDB C API implemented (1).
#[no_mangle]
pub extern "C" fn leveldb_major_version() -> c_int {
    MAJOR_VERSION
}

/// The minor version of the LevelDB C API implemented (23).
#[no_mangle]
pub extern "C" fn leveldb_minor_version() -> c_int {
    MINOR_VERSION
}
