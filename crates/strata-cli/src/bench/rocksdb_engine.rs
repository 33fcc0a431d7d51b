//! Current RocksDB behind the [`Engine`] trait, through the `rocksdb` crate, which compiles
//! RocksDB from source in release mode (Debian's `librocksdb` has assertions on and would
//! flatter Strata). Built only with the `rocksdb` feature.
//!
//! RocksDB is configured to behave like LevelDB wherever it has the knob, and otherwise left at
//! its defaults; no RocksDB-only feature is turned on, except BlobDB for the engine kind
//! `rocksdb-blob` (the same engine and options otherwise, so one run compares RocksDB with and
//! without it). The mapping:
//!
//! | LevelDB (and Strata)                  | RocksDB                                                  |
//! |---------------------------------------|----------------------------------------------------------|
//! | `write_buffer_size`                   | `write_buffer_size` (same), `max_write_buffer_number` 2 (LevelDB's memtable + immutable one) |
//! | `block_size`, restart interval 16     | `block_size` (same), `block_restart_interval` 16          |
//! | `max_file_size`                       | `target_file_size_base` (same), multiplier 1              |
//! | LRU block cache of `cache_size`       | `LRUCache` of `cache_size` (RocksDB's default is 32 MiB)  |
//! | index/filter blocks held by the table | `cache_index_and_filter_blocks` false (the default)       |
//! | bloom filter, `bloom_bits` per key    | full-filter bloom, `bloom_bits` per key (*differs*, below) |
//! | Snappy or none                        | Snappy or none, for every level incl. the bottommost      |
//! | CRC32C block checksums                | `checksum` CRC32c (RocksDB's default is XXH3)             |
//! | L0 triggers 4 / 8 / 12                | `level0_file_num_compaction_trigger` 4, `..._slowdown_...` 8, `..._stop_...` 12 |
//! | level sizes 10 MiB x 10^(L-1)         | `max_bytes_for_level_base` 10 MiB, multiplier 10, `level_compaction_dynamic_level_bytes` false (RocksDB's default is true) |
//! | 7 levels                              | `num_levels` 7                                            |
//! | one background thread (Strata: a flush thread and `--background_jobs` compaction threads, default 2) | `max_background_jobs` `--background_jobs` + 1 (one flush and that many compaction threads; *differs* from LevelDB, below) |
//! | Strata: `max_subcompactions` (`--subcompactions`, default 2) | `max_subcompactions`, the same |
//! | `max_open_files` 1000                 | `max_open_files` 1000 (RocksDB's default is unlimited)    |
//! | Strata: `value_separation` (`--value_separation N`) | `rocksdb-blob` only: integrated BlobDB, `enable_blob_files`, `min_blob_size` N, `enable_blob_gc` (its default age cutoff 0.25), blobs compressed as `--compression` says (`blob_compression_type`) |
//! | `paranoid_checks` false               | `paranoid_checks` false (RocksDB's default is true)       |
//! | tables read through `mmap`            | `allow_mmap_reads` true (LevelDB 1.23 maps up to 1000 tables on 64-bit); `--rocksdb_mmap_reads false` gives RocksDB's default, a `pread` per block read |
//! | reads: no checksum check, fill cache  | `verify_checksums` false (RocksDB's default is true), `fill_cache` true |
//!
//! Where RocksDB cannot match LevelDB:
//! - **Background threads.** LevelDB runs flushes and compactions on one thread. RocksDB keeps
//!   at least one flush and one compaction thread whatever `max_background_jobs` says, so a
//!   memtable flush never waits behind a compaction. Architectural; cannot be turned off.
//!   Strata does the same with `--background_jobs` 2 or more (its default); with 1 it runs as
//!   LevelDB, and RocksDB then gets 2 (what it ran with at 1).
//! - **Bloom filter.** LevelDB keeps one filter per 2 KiB of data; RocksDB (format 5+) keeps
//!   one cache-local filter per table. Same bits per key, different layout; the old
//!   per-block filter is no longer offered.
//! - **Write stalls.** LevelDB sleeps 1 ms per write once L0 reaches 8 files; RocksDB instead
//!   throttles to `delayed_write_rate`. Same trigger, different brake.
//! - **Compaction picking.** RocksDB picks files by `kMinOverlappingRatio`, LevelDB
//!   round-robin; RocksDB's current algorithm is part of what "current RocksDB" means.
//! - **Concurrent memtable writes** (on by default) only matter with `--threads` > 1 on writes.
//!
//! Costs the crate's API imposes, noted for fairness:
//! - `get` uses the pinned API: no copy of the value at all (Strata copies once, LevelDB's C
//!   API twice); `get_many` is the batched `MultiGet` (`batched_multi_get_cf_opt`, pinned
//!   values, keys not pre-sorted), RocksDB's fastest form of it.
//! - `delete_range` is a write batch holding one `DeleteRange`.
//! - `DB::write` takes the batch by value, so each write builds a new batch (a C++ allocation),
//!   as for Strata; LevelDB reuses one.
//! - An iterator takes its `ReadOptions` by value, so each cursor allocates one (seekrandom
//!   opens a cursor per seek: one extra C++ allocation per op).

use std::path::Path;

use rocksdb::{
    BlockBasedOptions, Cache, ChecksumType, ColumnFamilyDescriptor, DBCompressionType,
    DBRawIterator, Options, ReadOptions, WriteBatch, WriteOptions, DB, DEFAULT_COLUMN_FAMILY_NAME,
};

use super::config::{BenchOptions, Compression};
use super::engine::{BenchResult, Cursor, Engine};

/// An open RocksDB database.
pub struct RocksDbEngine {
    db: DB,
    read: ReadOptions,
    writes: [WriteOptions; 2],
    /// Name, version and, with BlobDB, its threshold.
    version: String,
}

fn error(what: &str, e: rocksdb::Error) -> String {
    format!("rocksdb: {what}: {e}")
}

fn to_c_int(what: &str, n: usize) -> BenchResult<i32> {
    i32::try_from(n).map_err(|_| format!("rocksdb: {what} = {n} does not fit a C int"))
}

/// Read options matching LevelDB's defaults.
fn read_options() -> ReadOptions {
    let mut read = ReadOptions::default();
    read.set_verify_checksums(false);
    read.fill_cache(true);
    read
}

fn write_options(sync: bool) -> WriteOptions {
    let mut write = WriteOptions::default();
    write.set_sync(sync);
    write
}

/// The options described in the module doc.
fn options(o: &BenchOptions) -> BenchResult<Options> {
    let compression = match o.compression {
        Compression::Snappy => DBCompressionType::Snappy,
        Compression::None => DBCompressionType::None,
    };

    let mut table = BlockBasedOptions::default();
    table.set_block_size(o.block_size);
    table.set_block_restart_interval(16);
    table.set_block_cache(&Cache::new_lru_cache(o.cache_size));
    table.set_cache_index_and_filter_blocks(false);
    table.set_checksum_type(ChecksumType::CRC32c);
    if let Some(bits) = o.bloom_bits {
        table.set_bloom_filter(f64::from(bits), false);
    }

    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_paranoid_checks(false);
    opts.set_block_based_table_factory(&table);
    opts.set_write_buffer_size(o.write_buffer_size);
    opts.set_max_write_buffer_number(2);
    opts.set_min_write_buffer_number_to_merge(1);
    opts.set_target_file_size_base(o.max_file_size as u64);
    opts.set_target_file_size_multiplier(1);
    opts.set_compression_type(compression);
    opts.set_bottommost_compression_type(compression);
    opts.set_level_zero_file_num_compaction_trigger(4);
    opts.set_level_zero_slowdown_writes_trigger(8);
    opts.set_level_zero_stop_writes_trigger(12);
    opts.set_num_levels(7);
    opts.set_max_bytes_for_level_base(10 << 20);
    opts.set_max_bytes_for_level_multiplier(10.0);
    opts.set_level_compaction_dynamic_level_bytes(false);
    // Its flush thread and `background_jobs` compaction threads, as Strata runs.
    let jobs = o.background_jobs.saturating_add(1);
    opts.set_max_background_jobs(to_c_int("background_jobs", jobs)?);
    opts.set_max_subcompactions(u32::try_from(o.subcompactions).unwrap_or(u32::MAX));
    opts.set_max_open_files(to_c_int("max_open_files", o.max_open_files)?);
    opts.set_allow_mmap_reads(o.rocksdb_mmap_reads);
    if let Some(size) = o.value_separation {
        opts.set_enable_blob_files(true);
        opts.set_min_blob_size(size as u64);
        opts.set_enable_blob_gc(true);
        // Compressed as the tables' blocks are, as Strata's value files are.
        opts.set_blob_compression_type(compression);
    }
    Ok(opts)
}

/// RocksDB's version as it records it in the `OPTIONS-*` file of `dir`.
fn version_in(dir: &Path) -> Option<String> {
    let entries = std::fs::read_dir(dir).ok()?;
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().starts_with("OPTIONS-") {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).ok()?;
        let line = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("rocksdb_version="))?;
        return Some(line.trim().to_owned());
    }
    None
}

impl Engine for RocksDbEngine {
    type Batch = WriteBatch;
    type Cursor<'a> = DBRawIterator<'a>;

    fn open(dir: &Path, o: &BenchOptions) -> BenchResult<Self> {
        // The default column family named explicitly (with the same options), so that the
        // crate hands out its handle for the batched `MultiGet`.
        let options = options(o)?;
        let default = ColumnFamilyDescriptor::new(DEFAULT_COLUMN_FAMILY_NAME, options.clone());
        let db = DB::open_cf_descriptors(&options, dir, [default]).map_err(|e| error("open", e))?;
        let mut version = match version_in(dir) {
            Some(v) => format!("RocksDB {v}"),
            None => "RocksDB".to_owned(),
        };
        if let Some(size) = o.value_separation {
            version.push_str(&format!(" with BlobDB (min_blob_size {size})"));
        }
        Ok(RocksDbEngine {
            db,
            read: read_options(),
            writes: [write_options(false), write_options(true)],
            version,
        })
    }

    fn destroy(dir: &Path) -> BenchResult<()> {
        DB::destroy(&Options::default(), dir).map_err(|e| error("destroy", e))
    }

    fn version(&self) -> String {
        self.version.clone()
    }

    fn put(&self, key: &[u8], value: &[u8], sync: bool) -> BenchResult<()> {
        self.db
            .put_opt(key, value, &self.writes[usize::from(sync)])
            .map_err(|e| error("put", e))
    }

    fn new_batch() -> WriteBatch {
        WriteBatch::default()
    }

    fn batch_put(batch: &mut WriteBatch, key: &[u8], value: &[u8]) {
        batch.put(key, value);
    }

    fn batch_delete(batch: &mut WriteBatch, key: &[u8]) {
        batch.delete(key);
    }

    fn write(&self, batch: &mut WriteBatch, sync: bool) -> BenchResult<()> {
        // By value: see the module doc.
        let taken = std::mem::take(batch);
        self.db
            .write_opt(taken, &self.writes[usize::from(sync)])
            .map_err(|e| error("write", e))
    }

    fn get(&self, key: &[u8]) -> BenchResult<Option<usize>> {
        self.db
            .get_pinned_opt(key, &self.read)
            .map(|v| v.map(|v| v.len()))
            .map_err(|e| error("get", e))
    }

    fn get_many(&self, keys: &[&[u8]]) -> BenchResult<usize> {
        let cf = self
            .db
            .cf_handle(DEFAULT_COLUMN_FAMILY_NAME)
            .ok_or_else(|| "rocksdb: no default column family".to_owned())?;
        let mut found = 0;
        for value in self
            .db
            .batched_multi_get_cf_opt(cf, keys.iter().copied(), false, &self.read)
        {
            found += usize::from(value.map_err(|e| error("multi_get", e))?.is_some());
        }
        Ok(found)
    }

    fn delete_range(&self, start: &[u8], end: &[u8]) -> BenchResult<()> {
        let mut batch = WriteBatch::default();
        batch.delete_range(start, end);
        self.db
            .write_opt(batch, &self.writes[0])
            .map_err(|e| error("delete_range", e))
    }

    fn cursor(&self) -> DBRawIterator<'_> {
        self.db.raw_iterator_opt(read_options())
    }

    fn compact(&self) -> BenchResult<()> {
        self.db.compact_range(None::<&[u8]>, None::<&[u8]>);
        Ok(())
    }

    fn property(&self, name: &str) -> Option<String> {
        self.db.property_value(name).ok().flatten()
    }

    fn stats(&self) -> Option<String> {
        self.property("rocksdb.stats")
    }
}

impl Cursor for DBRawIterator<'_> {
    fn valid(&self) -> bool {
        DBRawIterator::valid(self)
    }
    fn seek_to_first(&mut self) {
        DBRawIterator::seek_to_first(self)
    }
    fn seek_to_last(&mut self) {
        DBRawIterator::seek_to_last(self)
    }
    fn seek(&mut self, target: &[u8]) {
        DBRawIterator::seek(self, target)
    }
    fn next(&mut self) {
        DBRawIterator::next(self)
    }
    fn prev(&mut self) {
        DBRawIterator::prev(self)
    }
    fn key(&self) -> &[u8] {
        DBRawIterator::key(self).unwrap_or_default()
    }
    fn value(&self) -> &[u8] {
        DBRawIterator::value(self).unwrap_or_default()
    }
    fn status(&self) -> BenchResult<()> {
        DBRawIterator::status(self).map_err(|e| error("iterator", e))
    }
}
