//! The `strata` command-line tool: a thin shell over library code. It parses flags and
//! dispatches; the work lives in the modules it calls.

mod bench;
mod commands;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::builder::BoolishValueParser;
use clap::{Args, Parser, Subcommand};

use bench::{BenchOptions, Benchmark, Compression, Config, EngineKind, Sweep};

#[derive(Parser)]
#[command(
    name = "strata",
    version,
    about = "Strata: an LSM key-value store with LevelDB's format"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    #[command(flatten)]
    Tool(commands::ToolCommand),
    /// Run db_bench's workloads on Strata and its peers (LevelDB, RocksDB) side by side.
    Bench(Box<BenchArgs>),
    /// One engine's process of `strata bench`, driven by it over stdin/stdout (internal).
    #[command(name = bench::WORKER_COMMAND, hide = true)]
    BenchWorker,
}

/// Flags of `strata bench`, under db_bench's names (underscores; dashed spellings work too).
#[derive(Args)]
struct BenchArgs {
    /// Comma-separated workloads, run in order (names may repeat). Default: db_bench's suite
    /// (fillseq,fillsync,fillrandom,overwrite,readrandom,readrandom,readseq,readreverse,
    /// compact,readrandom,readseq,readreverse) plus seekrandom and fill100K.
    ///
    /// Every run reports, beside µs/op and MB/s: write amplification (bytes the engine's
    /// process wrote, from /proc/<pid>/io write_bytes including settling, per byte of keys
    /// and values put), space amplification (the engine's directory size per byte of live
    /// keys and values) and, where every op was timed (--histogram; always for leveledmix),
    /// p50/p99/p99.9 latency. Each engine runs in its own process; its peak RSS is reported.
    #[arg(long, value_delimiter = ',', verbatim_doc_comment)]
    benchmarks: Option<Vec<Benchmark>>,

    /// Comma-separated engines, each run in a process of its own. Default: every engine
    /// compiled in, rocksdb-blob only with --value_separation (the sweep: strata,leveldb).
    #[arg(long, value_delimiter = ',')]
    engines: Option<Vec<EngineKind>>,

    /// Number of key/value pairs.
    #[arg(long, default_value_t = 1_000_000)]
    num: u64,

    /// Reads per read workload; negative means --num.
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    reads: i64,

    /// Bytes per value.
    #[arg(long = "value_size", alias = "value-size", default_value_t = 100)]
    value_size: usize,

    /// Threads per workload (db_bench runs every workload but compact/stats on all of them).
    #[arg(long, default_value_t = 1)]
    threads: usize,

    /// Bytes of block cache, per engine.
    #[arg(long = "cache_size", alias = "cache-size", default_value_t = 8 << 20)]
    cache_size: usize,

    /// Bloom filter bits per key; negative for no filter.
    #[arg(long = "bloom_bits", alias = "bloom-bits", default_value_t = -1, allow_negative_numbers = true)]
    bloom_bits: i64,

    /// Block compression.
    #[arg(long, value_enum, default_value_t = Compression::Snappy)]
    compression: Compression,

    /// Memtable bytes before a flush.
    #[arg(long = "write_buffer_size", alias = "write-buffer-size", default_value_t = 4 << 20)]
    write_buffer_size: usize,

    /// Uncompressed bytes per data block.
    #[arg(long = "block_size", alias = "block-size", default_value_t = 4 << 10)]
    block_size: usize,

    /// Target bytes per table file.
    #[arg(long = "max_file_size", alias = "max-file-size", default_value_t = 2 << 20)]
    max_file_size: usize,

    /// Most threads one compaction is merged on (Strata's `max_subcompactions`, RocksDB's
    /// `max_subcompactions`; LevelDB always merges on its one background thread).
    #[arg(long, default_value_t = 2)]
    subcompactions: usize,

    /// Most compactions running at once, with memtables flushed on a thread of their own
    /// (Strata's `max_background_jobs`; RocksDB's `max_background_jobs` is one more, for its
    /// flush thread; LevelDB runs flushes and compactions on its one background thread). 1
    /// runs Strata on one thread, as LevelDB.
    #[arg(
        long = "background_jobs",
        alias = "background-jobs",
        default_value_t = 2
    )]
    background_jobs: usize,

    /// Keep values of at least this many bytes beside the tree: Strata's value separation,
    /// and engine rocksdb-blob's integrated BlobDB with the same `min_blob_size` (LevelDB and
    /// engine rocksdb keep every value in their tables); 0: off.
    #[arg(
        long = "value_separation",
        alias = "value-separation",
        default_value_t = 0
    )]
    value_separation: usize,

    /// RocksDB reads its tables through mmap (`allow_mmap_reads`, as LevelDB and Strata map
    /// theirs); false: a pread per block, RocksDB's default.
    #[arg(long = "rocksdb_mmap_reads", alias = "rocksdb-mmap-reads", num_args = 0..=1,
          default_missing_value = "true", default_value = "true",
          value_parser = BoolishValueParser::new())]
    rocksdb_mmap_reads: bool,

    /// Parent directory of the databases (each engine uses <db>/<engine>).
    #[arg(long)]
    db: Option<PathBuf>,

    /// Use the databases already in --db; fill workloads are skipped.
    #[arg(long = "use_existing_db", alias = "use-existing-db", num_args = 0..=1,
          default_missing_value = "true", default_value = "false",
          value_parser = BoolishValueParser::new())]
    use_existing_db: bool,

    /// Time every op: latency percentiles after each run and in the tables.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", default_value = "false",
          value_parser = BoolishValueParser::new())]
    histogram: bool,

    /// Run the whole suite this many times; report medians and min–max. With --sweep: build
    /// each cell's databases this many times and report medians over all of them.
    #[arg(long, default_value_t = 1)]
    repeat: usize,

    /// Write the results as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,

    /// Write SVG charts into DIR.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,

    /// Run a configuration study instead of the workloads.
    #[arg(long, value_enum)]
    sweep: Option<Sweep>,

    /// Do not wait for an engine's compactions between runs (db_bench's timing).
    #[arg(long = "no_settle", alias = "no-settle")]
    no_settle: bool,

    /// Never show a progress bar.
    #[arg(long = "no_progress", alias = "no-progress")]
    no_progress: bool,
}

impl BenchArgs {
    fn into_config(self) -> Config {
        let defaults = BenchOptions::default();
        let benchmarks = self
            .benchmarks
            .unwrap_or_else(|| bench::config::DEFAULT_SUITE.to_vec());
        let range_deletes = benchmarks.contains(&Benchmark::Deleterange);
        Config {
            benchmarks,
            engines: self.engines.unwrap_or_else(|| {
                bench::default_engines(self.sweep.is_some(), self.value_separation > 0)
            }),
            num: self.num,
            reads: u64::try_from(self.reads).ok(),
            value_size: self.value_size,
            threads: self.threads,
            options: BenchOptions {
                write_buffer_size: self.write_buffer_size,
                block_size: self.block_size,
                max_file_size: self.max_file_size,
                subcompactions: self.subcompactions,
                background_jobs: self.background_jobs,
                cache_size: self.cache_size,
                bloom_bits: u32::try_from(self.bloom_bits).ok(),
                compression: self.compression,
                range_deletes,
                value_separation: (self.value_separation > 0).then_some(self.value_separation),
                rocksdb_mmap_reads: self.rocksdb_mmap_reads,
                ..defaults
            },
            db: self
                .db
                .unwrap_or_else(|| std::env::temp_dir().join("strata-bench")),
            use_existing_db: self.use_existing_db,
            histogram: self.histogram,
            repeat: self.repeat,
            settle: !self.no_settle,
            json: self.json,
            plot: self.plot,
            sweep: self.sweep,
            progress: !self.no_progress,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Tool(command) => return commands::run(command),
        Command::Bench(args) => bench::run(&args.into_config()),
        Command::BenchWorker => bench::serve_worker(),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("strata: {message}");
            ExitCode::FAILURE
        }
    }
}
