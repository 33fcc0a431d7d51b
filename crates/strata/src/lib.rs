//! Strata: an embedded, ordered key-value store — a log-structured merge tree that reads and
//! writes the on-disk format of LevelDB 1.23.
//!
//! This file is the public face of the crate: it re-exports the API and nothing else.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod compaction;
mod db;
mod env;
mod error;
mod extension;
mod filename;
mod iter;
mod log;
mod memtable;
mod options;
mod range_del;
mod snapshot;
mod table;
#[cfg(feature = "tools")]
pub mod tools;
mod util;
mod version;
mod vlog;
mod write_batch;

#[cfg(feature = "testing")]
pub mod testing;

/// The README's Rust example, compiled and run as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeExamples;

pub use compaction::filter::{CompactionFilter, FilterDecision};
pub use db::{destroy, repair, Cursor, DbIterator, KeyIterator, Range, CLEAR_RANGE_BATCH, DB};
pub use env::{
    Env, FileLock, Logger, MemEnv, PosixEnv, RandomAccessFile, SequentialFile, WritableFile,
};
pub use error::{Corruption, Error, Result};
pub use options::{Options, ReadOptions, ValueSeparation, WriteOptions};
pub use snapshot::Snapshot;
pub use table::block_cache::BlockCache;
pub use table::format::CompressionType;
pub use util::bloom::{BloomFilterPolicy, FilterPolicy};
pub use util::comparator::{BytewiseComparator, Comparator};
pub use version::get_many::GET_MANY_KEYS_PER_THREAD;
pub use write_batch::{BatchOp, WriteBatch, WriteBatchHandler};
