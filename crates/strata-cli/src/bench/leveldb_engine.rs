//! LevelDB 1.23 behind the [`Engine`] trait, through the `leveldb-peer` crate (the system's
//! `libleveldb`, C API). Built only with the `leveldb` feature.
//!
//! Option mapping is one to one: LevelDB is the reference the other engines are configured
//! against. Each database gets its own LRU block cache of `cache_size` (db_bench without
//! `--cache_size` lets LevelDB make an internal 8 MiB one; the default here is the same size,
//! made explicit so all engines get exactly the same). LevelDB raises a write buffer below
//! 64 KiB to 64 KiB, a block size below 1 KiB to 1 KiB and a table size below 1 MiB to 1 MiB.
//!
//! Costs the C API imposes, noted for fairness:
//! - `leveldb_get` returns a `malloc`ed copy of the value (the C++ `Get` already copied it into
//!   a `std::string`), and `LevelDb::get` copies that into a `Vec`: LevelDB pays two
//!   allocations and copies per hit where db_bench's C++ pays one (Strata pays one, RocksDB's
//!   pinned get none). At 100-byte values this is tens of nanoseconds against microseconds.
//! - Every call crosses the C API (an `extern "C"` call plus a `Slice` construction); the
//!   iterator's `key`/`value` borrow LevelDB's buffers without copying.
//! - Writes reuse one batch, cleared after each write, exactly as db_bench does.

use std::path::Path;

use leveldb_peer::{LevelDb, LevelDbBatch, LevelDbIter, LevelDbOptions};

use super::config::{BenchOptions, Compression};
use super::engine::{BenchResult, Cursor, Engine};

/// An open LevelDB database.
pub struct LevelDbEngine {
    db: LevelDb,
}

fn error(what: &str, e: String) -> String {
    format!("leveldb: {what}: {e}")
}

impl Engine for LevelDbEngine {
    type Batch = LevelDbBatch;
    type Cursor<'a> = LevelDbIter<'a>;

    fn open(dir: &Path, o: &BenchOptions) -> BenchResult<Self> {
        let options = LevelDbOptions {
            create_if_missing: true,
            write_buffer_size: Some(o.write_buffer_size),
            max_open_files: Some(o.max_open_files),
            block_size: Some(o.block_size),
            block_restart_interval: Some(16),
            max_file_size: Some(o.max_file_size),
            compression: o.compression == Compression::Snappy,
            bloom_bits: o.bloom_bits.map(|b| i32::try_from(b).unwrap_or(i32::MAX)),
            cache_bytes: Some(o.cache_size),
            ..LevelDbOptions::default()
        };
        let db = LevelDb::open(dir, &options).map_err(|e| error("open", e))?;
        Ok(LevelDbEngine { db })
    }

    fn destroy(dir: &Path) -> BenchResult<()> {
        leveldb_peer::destroy(dir).map_err(|e| error("destroy", e))
    }

    fn version(&self) -> String {
        let (major, minor) = leveldb_peer::version();
        format!("LevelDB {major}.{minor}")
    }

    fn put(&self, key: &[u8], value: &[u8], sync: bool) -> BenchResult<()> {
        self.db.put(key, value, sync).map_err(|e| error("put", e))
    }

    fn new_batch() -> LevelDbBatch {
        LevelDbBatch::new()
    }

    fn batch_put(batch: &mut LevelDbBatch, key: &[u8], value: &[u8]) {
        batch.put(key, value);
    }

    fn batch_delete(batch: &mut LevelDbBatch, key: &[u8]) {
        batch.delete(key);
    }

    fn write(&self, batch: &mut LevelDbBatch, sync: bool) -> BenchResult<()> {
        let result = self.db.write(batch, sync).map_err(|e| error("write", e));
        batch.clear();
        result
    }

    fn get(&self, key: &[u8]) -> BenchResult<Option<usize>> {
        // Two copies, see the module doc.
        self.db
            .get(key)
            .map(|v| v.map(|v| v.len()))
            .map_err(|e| error("get", e))
    }

    fn cursor(&self) -> LevelDbIter<'_> {
        self.db.iter()
    }

    fn compact(&self) -> BenchResult<()> {
        self.db.compact_range(None, None);
        Ok(())
    }

    fn property(&self, name: &str) -> Option<String> {
        self.db.property(name)
    }

    fn stats(&self) -> Option<String> {
        self.db.property("leveldb.stats")
    }
}

impl Cursor for LevelDbIter<'_> {
    fn valid(&self) -> bool {
        LevelDbIter::valid(self)
    }
    fn seek_to_first(&mut self) {
        LevelDbIter::seek_to_first(self)
    }
    fn seek_to_last(&mut self) {
        LevelDbIter::seek_to_last(self)
    }
    fn seek(&mut self, target: &[u8]) {
        LevelDbIter::seek(self, target)
    }
    fn next(&mut self) {
        LevelDbIter::next(self)
    }
    fn prev(&mut self) {
        LevelDbIter::prev(self)
    }
    fn key(&self) -> &[u8] {
        LevelDbIter::key(self)
    }
    fn value(&self) -> &[u8] {
        LevelDbIter::value(self)
    }
    fn status(&self) -> BenchResult<()> {
        LevelDbIter::status(self).map_err(|e| error("iterator", e))
    }
}
