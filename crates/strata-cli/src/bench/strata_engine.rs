//! Strata behind the [`Engine`] trait.
//!
//! Option mapping is one to one (Strata's options are LevelDB's): write buffer, block size,
//! table size, Snappy or none, a bloom filter of `bloom_bits`, its own LRU block cache of
//! `cache_size`, `max_open_files`. Like LevelDB, Strata raises a write buffer below 64 KiB to
//! 64 KiB and a block size below 1 KiB to 1 KiB. `subcompactions` is `max_subcompactions`:
//! LevelDB has no such knob (one thread merges every compaction); RocksDB gets the same value.
//! `background_jobs` is `max_background_jobs` (compactions at once, flushes on a thread of
//! their own); RocksDB gets one job more, for its flush thread.
//!
//! Costs the API imposes, noted for fairness:
//! - `DB::get` returns an owned `Vec<u8>`: one allocation and copy per hit (LevelDB's C++
//!   `Get` also copies into a `std::string`; its C API adds a second copy, see the LevelDB
//!   adapter; RocksDB's pinned get copies nothing).
//! - `get_many` returns owned values, one allocation and copy per hit (RocksDB's batched
//!   `MultiGet` pins them).
//! - `deleterange` opens the database with `Options::range_deletes` (a format extension);
//!   every other workload runs without it, in LevelDB's format.
//! - `--value_separation N` opens it with `Options::value_separation` (values of N bytes and
//!   more in value files; a format extension), compressed as `--compression` says (with
//!   Snappy, format extension `value-compression`), and `rocksdb-blob` with BlobDB at the same
//!   size and blob compression.
//! - `headrandom` calls `DB::head`, which answers from the tree (no value-file read); the
//!   peers have no such call and do a `get`.
//! - `DB::write` takes the batch by reference, so the harness clears and reuses one batch, as
//!   db_bench does and as LevelDB's C API allows. The RocksDB crate's `write` takes the batch
//!   by value, so its harness starts a fresh batch per write (see the RocksDB adapter).

use std::path::Path;
use std::sync::Arc;

use strata::{
    BlockCache, BloomFilterPolicy, CompressionType, DbIterator, FilterPolicy, Options, ReadOptions,
    ValueSeparation, WriteBatch, WriteOptions, DB,
};

use super::config::{BenchOptions, Compression};
use super::engine::{BenchResult, Cursor, Engine};

/// An open Strata database.
pub struct StrataEngine {
    db: DB,
    read: ReadOptions,
    writes: [WriteOptions; 2],
}

impl StrataEngine {
    fn write_options(&self, sync: bool) -> &WriteOptions {
        &self.writes[usize::from(sync)]
    }
}

fn error(what: &str, e: strata::Error) -> String {
    format!("strata: {what}: {e}")
}

impl Engine for StrataEngine {
    type Batch = WriteBatch;
    type Cursor<'a> = DbIterator;

    fn open(dir: &Path, o: &BenchOptions) -> BenchResult<Self> {
        let compression = match o.compression {
            Compression::Snappy => CompressionType::Snappy,
            Compression::None => CompressionType::None,
        };
        let options = Options {
            create_if_missing: true,
            write_buffer_size: o.write_buffer_size,
            block_size: o.block_size,
            max_file_size: o.max_file_size,
            max_open_files: o.max_open_files,
            max_subcompactions: o.subcompactions,
            max_background_jobs: o.background_jobs,
            block_cache: Some(BlockCache::new(o.cache_size)),
            compression,
            filter_policy: o.bloom_bits.map(|bits| {
                Arc::new(BloomFilterPolicy::new(bits as usize)) as Arc<dyn FilterPolicy>
            }),
            range_deletes: o.range_deletes,
            value_separation: o
                .value_separation
                .map(|size| ValueSeparation::new(size).with_compression(compression)),
            ..Options::default()
        };
        let db = DB::open(dir, options).map_err(|e| error("open", e))?;
        Ok(StrataEngine {
            db,
            read: ReadOptions::default(),
            writes: [WriteOptions { sync: false }, WriteOptions { sync: true }],
        })
    }

    fn destroy(dir: &Path) -> BenchResult<()> {
        strata::destroy(dir, &Options::default()).map_err(|e| error("destroy", e))
    }

    fn version(&self) -> String {
        format!("Strata {}", env!("CARGO_PKG_VERSION"))
    }

    fn put(&self, key: &[u8], value: &[u8], sync: bool) -> BenchResult<()> {
        self.db
            .put_opt(self.write_options(sync), key, value)
            .map_err(|e| error("put", e))
    }

    fn new_batch() -> WriteBatch {
        WriteBatch::new()
    }

    fn batch_put(batch: &mut WriteBatch, key: &[u8], value: &[u8]) {
        batch.put(key, value);
    }

    fn batch_delete(batch: &mut WriteBatch, key: &[u8]) {
        batch.delete(key);
    }

    fn write(&self, batch: &mut WriteBatch, sync: bool) -> BenchResult<()> {
        let result = self
            .db
            .write_opt(self.write_options(sync), batch)
            .map_err(|e| error("write", e));
        batch.clear();
        result
    }

    fn get(&self, key: &[u8]) -> BenchResult<Option<usize>> {
        self.db
            .get_opt(&self.read, key)
            .map(|v| v.map(|v| v.len()))
            .map_err(|e| error("get", e))
    }

    fn head(&self, key: &[u8]) -> BenchResult<Option<usize>> {
        let length = self
            .db
            .head_opt(&self.read, key)
            .map_err(|e| error("head", e))?;
        Ok(length.map(|l| usize::try_from(l).unwrap_or(usize::MAX)))
    }

    fn get_many(&self, keys: &[&[u8]]) -> BenchResult<usize> {
        let values = self
            .db
            .get_many_opt(&self.read, keys)
            .map_err(|e| error("get_many", e))?;
        Ok(values.iter().filter(|v| v.is_some()).count())
    }

    fn delete_range(&self, start: &[u8], end: &[u8]) -> BenchResult<()> {
        self.db
            .delete_range_opt(self.write_options(false), start, end)
            .map_err(|e| error("delete_range", e))
    }

    fn cursor(&self) -> DbIterator {
        self.db.iter_opt(&self.read)
    }

    fn compact(&self) -> BenchResult<()> {
        self.db
            .compact_range(None, None)
            .map_err(|e| error("compact_range", e))
    }

    fn property(&self, name: &str) -> Option<String> {
        self.db.property(name)
    }

    /// LevelDB's stats, the time writes were held back (`strata.write-stalls`), then the
    /// value files' totals when values are separated.
    fn stats(&self) -> Option<String> {
        let mut stats = self.db.property("leveldb.stats")?;
        if let Some(stalls) = self.db.property("strata.write-stalls") {
            let causes: Vec<&str> = stalls.lines().collect();
            stats.push_str(&format!("write stalls (waits µs): {}\n", causes.join(", ")));
        }
        let value_files = ["total-bytes", "live-bytes", "relocated-bytes"].map(|what| {
            let name = format!("strata.value-files.{what}");
            (what, self.db.property(&name).unwrap_or_default())
        });
        if value_files[0].1.parse::<u64>().is_ok_and(|total| total > 0) {
            stats.push_str("value files:");
            for (what, bytes) in value_files {
                stats.push_str(&format!(" {what} {bytes}"));
            }
            stats.push('\n');
        }
        Some(stats)
    }
}

impl Cursor for DbIterator {
    fn valid(&self) -> bool {
        DbIterator::valid(self)
    }
    fn seek_to_first(&mut self) {
        DbIterator::seek_to_first(self)
    }
    fn seek_to_last(&mut self) {
        DbIterator::seek_to_last(self)
    }
    fn seek(&mut self, target: &[u8]) {
        DbIterator::seek(self, target)
    }
    fn next(&mut self) {
        DbIterator::next(self)
    }
    fn prev(&mut self) {
        DbIterator::prev(self)
    }
    fn key(&self) -> &[u8] {
        DbIterator::key(self)
    }
    fn value(&self) -> &[u8] {
        DbIterator::value(self)
    }
    fn status(&self) -> BenchResult<()> {
        DbIterator::status(self).map_err(|e| error("iterator", e))
    }
}
