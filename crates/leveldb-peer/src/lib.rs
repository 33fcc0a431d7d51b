//! Real LevelDB 1.23 — the system's `libleveldb` — behind a small safe Rust API.
//!
//! **A test and benchmark peer only.** Strata's interop tests use it to write databases that
//! Strata must read and to read databases Strata wrote; the benchmark runs it side by side with
//! Strata. It is not part of Strata and nothing in Strata depends on it.
//!
//! Contracts:
//! - Every error LevelDB reports (its `char** errptr` messages) comes back as `Err(String)`; the
//!   C string is freed. Nothing returned by LevelDB leaks.
//! - [`LevelDb`] is `Send + Sync` (LevelDB's `DB` is thread-safe); iterators and snapshots
//!   borrow it, so it cannot close under them.
//! - [`LevelDbIter::key`] / [`LevelDbIter::value`] borrow LevelDB's buffers without copying.
//! - [`fixtures`] builds LevelDB-written databases from a seeded spec and returns the expected
//!   contents.
//!
//! [`ffi`] holds the raw C declarations (`leveldb/c.h`); every `unsafe` call lives in this crate.

mod batch;
mod db;
mod error;
pub mod ffi;
pub mod fixtures;
mod iter;
mod options;

#[cfg(test)]
mod tests;

use std::path::Path;

pub use batch::LevelDbBatch;
pub use db::{LevelDb, LevelDbSnapshot};
pub use iter::LevelDbIter;
pub use options::LevelDbOptions;

use error::{path_to_cstring, ErrSlot};
use options::NativeOptions;

/// Deletes the database in `path` (its files, then the directory if it is left empty).
/// Succeeds if there is no database there.
pub fn destroy(path: impl AsRef<Path>) -> Result<(), String> {
    let options = NativeOptions::new(&LevelDbOptions::default())?;
    let name = path_to_cstring(path.as_ref())?;
    let mut err = ErrSlot::new();
    // SAFETY: `options` and `name` are live for the call; `err` is a null slot.
    unsafe { ffi::leveldb_destroy_db(options.as_ptr(), name.as_ptr(), err.as_out()) };
    err.check()
}

/// Runs LevelDB's repairer on `path` with default options: rebuilds the manifest from the
/// table and log files that survive, salvaging as much data as it can.
pub fn repair(path: impl AsRef<Path>) -> Result<(), String> {
    let options = NativeOptions::new(&LevelDbOptions::default())?;
    let name = path_to_cstring(path.as_ref())?;
    let mut err = ErrSlot::new();
    // SAFETY: `options` and `name` are live for the call; `err` is a null slot.
    unsafe { ffi::leveldb_repair_db(options.as_ptr(), name.as_ptr(), err.as_out()) };
    err.check()
}

/// The linked library's `(major, minor)` version, `(1, 23)` for the peer we test against.
pub fn version() -> (i32, i32) {
    // SAFETY: pure functions returning constants.
    unsafe { (ffi::leveldb_major_version(), ffi::leveldb_minor_version()) }
}
