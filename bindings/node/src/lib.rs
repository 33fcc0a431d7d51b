//! The native half of the `strata-kv` npm package: Strata's engine exposed to Node.js through
//! Node-API (napi-rs). The JavaScript half (`lib/`) wraps these classes in `StrataLevel`, an
//! `abstract-level` database; nothing here is meant to be called by users directly, but nothing
//! here may crash the process whatever it is called with either.
//!
//! Threading: every call that can touch the disk runs as an async task on libuv's thread pool
//! and returns a promise; the JavaScript thread only copies arguments in and results out, takes
//! implicit snapshots (so a read sees exactly the writes finished before it was called) and
//! builds write batches. The synchronous exceptions are `getSync`, `getProperty` and the
//! iterator's `seek` (which only records its target).
//!
//! Errors carry abstract-level's codes (`LEVEL_CORRUPTION`, `LEVEL_LOCKED`, ...; see
//! [`errors`]).

mod batch;
mod bytes;
mod database;
mod errors;
mod handle;
mod iterator;
mod job;
mod options;
mod range;
mod snapshot;
