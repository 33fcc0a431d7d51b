//! Strata: an embedded, ordered key-value store — a log-structured merge tree that reads and
//! writes the on-disk format of LevelDB 1.23.
//!
//! This file is the public face of the crate: it re-exports the API and nothing else.

#![deny(unsafe_op_in_unsafe_fn)]

mod cache;
mod compaction;
mod db;
mod env;
mod error;
mod iter;
mod log;
mod memtable;
mod options;
mod table;
mod util;
mod version;
mod write_batch;

#[cfg(feature = "testing")]
pub mod testing;

pub use cache::BlockCache;
pub use db::{destroy, repair, DbIterator, Range, Snapshot, DB};
pub use env::{Env, FileLock, MemEnv, PosixEnv, RandomAccessFile, SequentialFile, WritableFile};
pub use error::{Corruption, Error, Result};
pub use options::{CompressionType, Options, ReadOptions, WriteOptions};
pub use util::bloom::{BloomFilterPolicy, FilterPolicy};
pub use util::comparator::{BytewiseComparator, Comparator};
pub use write_batch::{BatchOp, WriteBatch, WriteBatchHandler};
