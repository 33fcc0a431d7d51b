//! What one `strata bench` invocation runs: workloads, engines, sizes and engine options.
//!
//! Flag names and defaults follow LevelDB's `db_bench`, so a command line written for it reads
//! the same here. The CLI fills a [`Config`]; everything below it only reads one.

use std::path::PathBuf;

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

/// A storage engine the benchmark can drive.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, ValueEnum, Serialize, Deserialize,
)]
pub enum EngineKind {
    /// Strata, this project.
    Strata,
    /// LevelDB 1.23 through the system's `libleveldb` (cargo feature `leveldb`).
    Leveldb,
    /// Current RocksDB compiled by the `rocksdb` crate (cargo feature `rocksdb`), every value
    /// in its tables.
    Rocksdb,
    /// The same RocksDB with its integrated BlobDB: values of at least `--value_separation`
    /// bytes in blob files (`enable_blob_files`, `min_blob_size`, blob GC on).
    #[value(name = "rocksdb-blob")]
    RocksdbBlob,
}

impl EngineKind {
    /// The name used in flags, tables, JSON and directory names.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Strata => "strata",
            EngineKind::Leveldb => "leveldb",
            EngineKind::Rocksdb => "rocksdb",
            EngineKind::RocksdbBlob => "rocksdb-blob",
        }
    }

    /// Whether this binary was built with the engine (Strata always is).
    pub fn compiled_in(self) -> bool {
        match self {
            EngineKind::Strata => true,
            EngineKind::Leveldb => cfg!(feature = "leveldb"),
            EngineKind::Rocksdb | EngineKind::RocksdbBlob => cfg!(feature = "rocksdb"),
        }
    }

    /// Whether this engine is RocksDB (with or without BlobDB).
    pub fn is_rocksdb(self) -> bool {
        matches!(self, EngineKind::Rocksdb | EngineKind::RocksdbBlob)
    }

    /// The options this engine opens with: `options`, less value separation for the engines
    /// that keep every value in their tables (`rocksdb`; LevelDB has no such option).
    pub fn options(self, options: &BenchOptions) -> BenchOptions {
        let separates = matches!(self, EngineKind::Strata | EngineKind::RocksdbBlob);
        BenchOptions {
            value_separation: options.value_separation.filter(|_| separates),
            ..options.clone()
        }
    }
}

/// A db_bench workload, under db_bench's own name and meaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, ValueEnum, Serialize, Deserialize)]
pub enum Benchmark {
    /// Write `num` values in sequential key order into a new database.
    Fillseq,
    /// Write `num / 1000` values in random key order, each write synced, into a new database.
    Fillsync,
    /// Write `num` values in random key order into a new database.
    Fillrandom,
    /// Overwrite `num` values in random key order in the existing database.
    Overwrite,
    /// Read `reads` random keys (of `0..num`) with point lookups.
    Readrandom,
    /// Read `reads` keys that are absent (each a present key plus a `.` suffix).
    Readmissing,
    /// Read `reads` random keys from the first 1% of the key space.
    Readhot,
    /// `reads` times: ask whether a random key (of `0..num`) exists and how long its value
    /// is, without its value: Strata's `DB::head`, which answers from the tree and reads no
    /// value file; a `get` on the peers, which have no such call.
    Headrandom,
    /// Read `reads` random keys (of `0..num`) in batched lookups of 100 keys (Strata's
    /// `get_many`, RocksDB's `MultiGet`; 100 point lookups on LevelDB, which has none).
    Multireadrandom,
    /// Scan forward over (up to) `reads` entries with one iterator.
    Readseq,
    /// Scan backward over (up to) `reads` entries with one iterator.
    Readreverse,
    /// `reads` times: open an iterator, seek to a random key, check it is there.
    Seekrandom,
    /// Delete `num` keys in sequential order.
    Deleteseq,
    /// Delete `num` keys in random order.
    Deleterandom,
    /// Delete every key of `0..num` in 100 contiguous ranges, one range per op (a range
    /// delete on Strata, with `Options::range_deletes`, and RocksDB; key by key on LevelDB).
    Deleterange,
    /// 100 times: seek to a random key and walk up to 100 entries. Run after `deleterange`
    /// (and again after `compact`), it times what a scan pays for deleted keys.
    Scandeleted,
    /// Leveled's volume-test mix on the existing database: `reads` ops, five gets for every
    /// update (a put of a new `value_size` value), keys Pareto-skewed over `0..num` (80% of
    /// the ops on the lowest 20% of the keys); latency percentiles always recorded.
    Leveledmix,
    /// Write `num / 1000` values of 100 KB in random key order into a new database.
    #[value(name = "fill100K")]
    Fill100K,
    /// Compact the whole key range down the levels.
    Compact,
    /// Print each engine's statistics (`leveldb.stats` or `rocksdb.stats`); not timed.
    Stats,
}

impl Benchmark {
    /// db_bench's name for the workload.
    pub fn name(self) -> &'static str {
        match self {
            Benchmark::Fillseq => "fillseq",
            Benchmark::Fillsync => "fillsync",
            Benchmark::Fillrandom => "fillrandom",
            Benchmark::Overwrite => "overwrite",
            Benchmark::Readrandom => "readrandom",
            Benchmark::Readmissing => "readmissing",
            Benchmark::Readhot => "readhot",
            Benchmark::Headrandom => "headrandom",
            Benchmark::Multireadrandom => "multireadrandom",
            Benchmark::Readseq => "readseq",
            Benchmark::Readreverse => "readreverse",
            Benchmark::Seekrandom => "seekrandom",
            Benchmark::Deleteseq => "deleteseq",
            Benchmark::Deleterandom => "deleterandom",
            Benchmark::Deleterange => "deleterange",
            Benchmark::Scandeleted => "scandeleted",
            Benchmark::Leveledmix => "leveledmix",
            Benchmark::Fill100K => "fill100K",
            Benchmark::Compact => "compact",
            Benchmark::Stats => "stats",
        }
    }

    /// Whether the workload starts from an empty database (db_bench's `fresh_db`).
    pub fn fresh_db(self) -> bool {
        matches!(
            self,
            Benchmark::Fillseq | Benchmark::Fillsync | Benchmark::Fillrandom | Benchmark::Fill100K
        )
    }

    /// Whether the workload changes what the database holds (its live keys and values).
    pub fn writes(self) -> bool {
        matches!(
            self,
            Benchmark::Fillseq
                | Benchmark::Fillsync
                | Benchmark::Fillrandom
                | Benchmark::Overwrite
                | Benchmark::Deleteseq
                | Benchmark::Deleterandom
                | Benchmark::Deleterange
                | Benchmark::Leveledmix
                | Benchmark::Fill100K
        )
    }

    /// Whether every op's latency is recorded even without `--histogram` (the mix exists to
    /// show tail latency).
    pub fn always_timed(self) -> bool {
        self == Benchmark::Leveledmix
    }

    /// Whether `--threads` applies. db_bench runs every workload on `--threads` threads except
    /// the whole-database ones (`compact`, `stats`, and here `deleterange`).
    pub fn threaded(self) -> bool {
        !matches!(
            self,
            Benchmark::Compact | Benchmark::Stats | Benchmark::Deleterange
        )
    }
}

/// db_bench's default suite, without its non-database micro-benchmarks (crc32c, snappy) and
/// with `seekrandom` added after the second round of reads (the performance targets
/// name it). Repeated names are deliberate, as in db_bench: the second `readrandom` runs on a
/// warmer cache, the third after `compact`.
pub const DEFAULT_SUITE: &[Benchmark] = &[
    Benchmark::Fillseq,
    Benchmark::Fillsync,
    Benchmark::Fillrandom,
    Benchmark::Overwrite,
    Benchmark::Readrandom,
    Benchmark::Readrandom,
    Benchmark::Readseq,
    Benchmark::Readreverse,
    Benchmark::Compact,
    Benchmark::Readrandom,
    Benchmark::Readseq,
    Benchmark::Readreverse,
    Benchmark::Seekrandom,
    Benchmark::Fill100K,
];

/// Block compression, as the engines share it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
pub enum Compression {
    /// Snappy (LevelDB's default).
    Snappy,
    /// Blocks stored as they are.
    None,
}

impl Compression {
    pub fn name(self) -> &'static str {
        match self {
            Compression::Snappy => "snappy",
            Compression::None => "none",
        }
    }
}

/// The configuration study to run instead of the db_bench suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
pub enum Sweep {
    /// The paper's Table I (`shared/seeds/003_*`): write buffer and block size paired as its
    /// three columns, 4 MB/4 KB, 2 MB/1 KB, 512 B/512 B, each with Snappy and without.
    Paper,
    /// The full cross product: write buffer {4 MB, 2 MB, 512 B} x block size {4 KB, 1 KB,
    /// 512 B} x compression {snappy, none}.
    PaperFull,
}

/// Engine options every engine receives, mapped to its own knobs (see each engine's module
/// for the mapping and where it cannot match).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BenchOptions {
    /// Memtable size before it is written out as a table.
    pub write_buffer_size: usize,
    /// Uncompressed size of a data block.
    pub block_size: usize,
    /// Target size of a table file.
    pub max_file_size: usize,
    /// Bytes of LRU block cache (each engine gets its own cache of this size).
    pub cache_size: usize,
    /// Bloom filter bits per key; `None` for no filter.
    pub bloom_bits: Option<u32>,
    /// Block compression.
    pub compression: Compression,
    /// Table files kept open.
    pub max_open_files: usize,
    /// Most threads one compaction is merged on.
    pub subcompactions: usize,
    /// Most compactions running at once, memtable flushes on a thread of their own besides
    /// (Strata's `max_background_jobs`; RocksDB gets one more job, its flush thread; LevelDB
    /// runs everything on one thread).
    #[serde(default = "default_background_jobs")]
    pub background_jobs: usize,
    /// Open Strata with `Options::range_deletes` (set when the workloads include
    /// `deleterange`; the other engines need no option for it).
    pub range_deletes: bool,
    /// Keep values of at least this many bytes beside the tree: Strata's value separation and
    /// `rocksdb-blob`'s integrated BlobDB (`enable_blob_files`, `min_blob_size`); LevelDB and
    /// plain `rocksdb` have no such thing (see [`EngineKind::options`]). `None`: every value in
    /// the tree.
    pub value_separation: Option<usize>,
    /// RocksDB reads its tables through `mmap` (`allow_mmap_reads`, as LevelDB and Strata
    /// map theirs) rather than one `pread` per block (RocksDB's default).
    pub rocksdb_mmap_reads: bool,
}

/// Strata's default `max_background_jobs` (also for reports written before the option).
fn default_background_jobs() -> usize {
    2
}

impl Default for BenchOptions {
    /// LevelDB 1.23's defaults (db_bench with no flags), and Strata's two merge threads per
    /// large compaction and two compactions at once.
    fn default() -> Self {
        BenchOptions {
            write_buffer_size: 4 << 20,
            block_size: 4 << 10,
            max_file_size: 2 << 20,
            cache_size: 8 << 20,
            bloom_bits: None,
            compression: Compression::Snappy,
            max_open_files: 1000,
            subcompactions: 2,
            background_jobs: default_background_jobs(),
            range_deletes: false,
            value_separation: None,
            rocksdb_mmap_reads: true,
        }
    }
}

/// One `strata bench` invocation.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Config {
    /// Workloads in order; names may repeat.
    pub benchmarks: Vec<Benchmark>,
    /// Engines, each run on every workload in this order.
    pub engines: Vec<EngineKind>,
    /// Number of entries (`--num`).
    pub num: u64,
    /// Reads per read workload; `None` means `num` (`--reads`, db_bench's -1).
    pub reads: Option<u64>,
    /// Bytes per value.
    pub value_size: usize,
    /// Concurrent threads per workload.
    pub threads: usize,
    /// Engine options.
    pub options: BenchOptions,
    /// Parent directory; each engine gets `<db>/<engine>`.
    pub db: PathBuf,
    /// Keep existing databases: fill workloads are skipped instead of starting over.
    pub use_existing_db: bool,
    /// Print a latency histogram after each run.
    pub histogram: bool,
    /// Runs of the whole suite; medians and min–max are reported.
    pub repeat: usize,
    /// Wait (untimed) for an engine's background compactions to finish after each run.
    pub settle: bool,
    /// Write results as JSON here.
    pub json: Option<PathBuf>,
    /// Write SVG charts into this directory.
    pub plot: Option<PathBuf>,
    /// Run a configuration study instead of the workloads.
    pub sweep: Option<Sweep>,
    /// Show a progress bar (only honoured when stderr is a terminal).
    pub progress: bool,
}

impl Config {
    /// Reads per read workload.
    pub fn reads(&self) -> u64 {
        self.reads.unwrap_or(self.num)
    }
}
