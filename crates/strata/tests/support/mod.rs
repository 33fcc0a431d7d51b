//! Helpers shared by the engine's integration tests: each test binary includes this module
//! (`mod support;`) and uses the part it needs. How `tests/` is laid out, and how its files and
//! regression tests are named, is in `tests/README.md`.
//!
//! - [`options`] (here): the options a test opens its database with, over the env it hands
//!   in; every test starts from them and sets only what it is about:
//!   `Options { write_buffer_size: 64 << 10, reuse_logs, ..support::options(&env) }`;
//! - `failing`: an env whose chosen operations on one kind of file fail while a switch is on;
//! - `files`: whole files through an `Env` (read, write, edit in place, list, copy, a
//!   hand-written manifest), and the info log;
//! - `state`: what a database holds (a scan, a checked read of its whole state), which
//!   tables it lists, and a level 0 crowded on purpose;
//! - `history`: a recorded history of writes and the checks that a state is a prefix of it or
//!   a salvage;
//! - `hold`: an env that holds a background job at a table write until the test lets it go;
//! - `race_env`: an env that stages one race with a writer (a hook run once, just before an
//!   open);
//! - `reads`: an env that counts the reads of table files;
//! - `trials`: the seeds of randomized trials, and waiting for background work;
//! - `wal`: hand-made write-ahead logs, and a database holding one.
//!
//! Helpers that set a test up panic when that fails: the test fails loudly.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design
#![allow(dead_code)] // each test binary uses a part

pub mod failing;
pub mod files;
pub mod history;
pub mod hold;
pub mod race_env;
pub mod reads;
pub mod state;
pub mod trials;
pub mod wal;

use std::sync::Arc;

use strata::testing::{FaultEnv, HookEnv};
use strata::{CompactionFilter, Env, FilterDecision, MemEnv, Options, ReadOptions};

/// An env a test hands to a database: a `FaultEnv` or `HookEnv` (by a clone sharing its state),
/// or an `Arc` of any env.
pub trait TestEnv {
    /// The env as `Options::env` takes it, sharing the files (and any fault state) of `self`.
    fn shared(&self) -> Arc<dyn Env>;
}

impl TestEnv for FaultEnv {
    fn shared(&self) -> Arc<dyn Env> {
        Arc::new(self.clone())
    }
}

impl TestEnv for HookEnv {
    fn shared(&self) -> Arc<dyn Env> {
        Arc::new(self.clone())
    }
}

impl<E: Env + 'static> TestEnv for Arc<E> {
    fn shared(&self) -> Arc<dyn Env> {
        self.clone()
    }
}

impl TestEnv for Arc<dyn Env> {
    fn shared(&self) -> Arc<dyn Env> {
        Arc::clone(self)
    }
}

/// Options that create the database if it is missing, over `env`; everything else is
/// `Options::default()`.
pub fn options(env: &impl TestEnv) -> Options {
    Options {
        create_if_missing: true,
        env: env.shared(),
        ..Options::default()
    }
}

/// Read options that answer from memory or fail with `Error::WouldBlock`
/// (`ReadOptions::memory_only`), the rest at their defaults.
pub fn memory_only() -> ReadOptions {
    ReadOptions {
        memory_only: true,
        ..ReadOptions::default()
    }
}

/// `DB::try_write` with default write options, again while it is refused only because the
/// background threads hold the database's state a moment (nothing written); any other answer
/// is returned.
pub fn try_write_past_busy(db: &strata::DB, batch: &strata::WriteBatch) -> strata::Result<()> {
    for _ in 0..100_000 {
        match db.try_write(&strata::WriteOptions::default(), batch) {
            Err(strata::Error::WouldBlock(why)) if why.contains("busy") => std::thread::yield_now(),
            answer => return answer,
        }
    }
    panic!("the state stayed busy");
}

/// A fault-injecting env over a fresh in-memory one.
pub fn fault_env() -> FaultEnv {
    FaultEnv::new(Arc::new(MemEnv::new()))
}

/// A compaction filter that keeps every entry: a database with one has `compact_range` rewrite
/// the deepest level in place too.
pub struct KeepAll;

impl CompactionFilter for KeepAll {
    fn filter(&self, _level: usize, _key: &[u8], _value: &[u8]) -> FilterDecision {
        FilterDecision::Keep
    }
}
