//! `--sweep paper`: the configuration study of the paper in `shared/seeds/003_*` ("Client
//! Implementation and Performance Analysis of LevelDB", Table I), run on each engine side by
//! side, with latency percentiles instead of the paper's single timings.
//!
//! Columns are (write buffer, block size) pairs: the paper's three, 4 MB/4 KB, 2 MB/1 KB and
//! 512 B/512 B (`paper`), or all nine combinations (`paper-full`); each with Snappy and with no
//! compression. LevelDB and Strata raise a write buffer below 64 KiB to 64 KiB and a block
//! below 1 KiB to 1 KiB, so the 512 B settings really run as 64 KiB and 1 KiB; the headers
//! say so (RocksDB, if asked for, keeps 512 B blocks but also raises the write buffer).
//!
//! For each column, compression and engine, on a new database with a bloom filter
//! (`--bloom_bits`, default 10, as the paper's client sets one):
//! 1. **PUT**: `num` keys in a shuffled order, then `num / 10` random keys again (the paper's
//!    second file of duplicate keys), each a timed `put`. Reports the total time, puts per
//!    second and per-put percentiles. The engine then settles and is closed.
//! 2. **GET from new SSTable**: reopened (block and table caches cold, memtable empty), one
//!    `get` each of 1000 keys spread evenly over the key space (so, at 1M entries, each in a
//!    different block): every read loads its block, and the first read of a table opens it.
//! 3. **GET from cache**: the same 1000 keys again; their blocks are now in the block cache.
//! 4. **GET missing, bloom**: 1000 absent keys, each between two sampled keys (in blocks not
//!    cached): the filters answer most of them.
//! 5. **GET missing, no bloom**: reopened without a filter policy (the filters on disk are
//!    ignored), the sampled keys read once untimed to warm the same blocks as before, then the
//!    same absent keys: each overlapping table's block must be searched.
//! 6. **GET from memtable**: a few keys (a quarter of the write buffer's worth, at most
//!    1000) written after the reopen, so they sit in the otherwise empty memtable, read
//!    10000 times round-robin.
//!
//! The OS page cache is not dropped (that would disturb the whole machine), so "cold" means
//! cold in the engine's caches: reads of files come from memory through the kernel. To keep
//! it so, each opening of a read round reads the database's files once before its timed
//! reads ([`warm_page_cache`]). A machine that pages out idle file pages (this project's VM
//! runs DAMON's `pageout` scheme, which took table pages idle for a second or two) otherwise
//! turned some of a round's reads into disk reads of milliseconds, for either engine: in one
//! `--sweep paper --repeat 1` here without it, a cell's 5 rounds read 196 KiB to 2.3 MiB from
//! the disk in Strata's process and 32-300 KiB in LevelDB's (counted from before each
//! opening); with it, nothing during the timed reads in any cell. The lines printed after each
//! build's reads say how much each engine's process read from the disk during its timed
//! reads (`read_bytes` of `/proc/self/io`).
//!
//! Timing: each cell's databases are built `--repeat` times (default once; `--repeat 3` for a
//! verdict on a row), the engines' builds one after the other. Each build's reads (2-6) run
//! [`ROUNDS`] times, the engines taking turns (the first engine changes every round), each
//! round on a fresh open. A GET cell shows the median over every round of every build of the
//! rounds' p50 and of their p99, a PUT cell the median over the builds. Both are needed: one
//! round's 1000 reads take a few milliseconds, and a round disturbed by the machine or by a
//! compaction the reads themselves set off (LevelDB's seek compaction, which both engines do)
//! moves a cell by a third; and two builds of the same engine end in different shapes (when
//! background compactions ran against the puts decides how many tables each level holds), so
//! cells of one build move as much between builds. Each build prints its tables per level
//! after the PUT and after its reads. Each call is timed on its own, but for the memtable reads,
//! which take well under a microsecond: they are timed in batches of [`MEMTABLE_BATCH`] calls,
//! each call counted as the batch's mean. The header reports what one reading of the clock
//! costs.

use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use super::config::{BenchOptions, Compression, Config, EngineKind, Sweep};
use super::engine::{files_per_level, not_compiled_in, BenchResult, Engine};
use super::keys::{KeyBuf, ValuePool, KEY_SIZE};
use super::memory::proc_field;
use super::process::EngineProcess;
use super::progress::{Progress, ProgressRun};
use super::report::size;
use super::settle::wait_idle;
use super::stats::new_histogram;

/// Keys sampled for the table, cache and missing-key reads.
const SAMPLES: u64 = 1000;
/// Reads of the memtable test.
const MEMTABLE_READS: u64 = 10_000;
/// Memtable reads timed together (one call is far below the clock's resolution for a
/// percentile to mean anything).
const MEMTABLE_BATCH: u64 = 16;
/// Rounds of the reads on each database built.
const ROUNDS: usize = 5;
/// Longest wait for an engine to settle.
const SETTLE_LIMIT: Duration = Duration::from_secs(600);

/// One column of the table: a (write buffer, block size) pair as requested.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    pub write_buffer: usize,
    pub block_size: usize,
}

impl Column {
    /// The write buffer LevelDB and Strata actually use (raised to 64 KiB, at most 1 GiB).
    pub fn effective_write_buffer(self) -> usize {
        self.write_buffer.clamp(64 << 10, 1 << 30)
    }

    /// The block size LevelDB and Strata actually use (raised to 1 KiB, at most 4 MiB).
    pub fn effective_block_size(self) -> usize {
        self.block_size.clamp(1 << 10, 4 << 20)
    }

    fn header(self) -> String {
        let part = |asked: usize, used: usize| {
            if asked == used {
                size(asked)
            } else {
                format!("{}→{}", size(asked), size(used))
            }
        };
        format!(
            "WB {} / BS {}",
            part(self.write_buffer, self.effective_write_buffer()),
            part(self.block_size, self.effective_block_size())
        )
    }
}

/// The columns of `sweep`.
pub fn columns(sweep: Sweep) -> Vec<Column> {
    let buffers = [4 << 20, 2 << 20, 512];
    let blocks = [4 << 10, 1 << 10, 512];
    match sweep {
        Sweep::Paper => buffers
            .iter()
            .zip(blocks.iter())
            .map(|(&write_buffer, &block_size)| Column {
                write_buffer,
                block_size,
            })
            .collect(),
        Sweep::PaperFull => buffers
            .iter()
            .flat_map(|&write_buffer| {
                blocks.iter().map(move |&block_size| Column {
                    write_buffer,
                    block_size,
                })
            })
            .collect(),
    }
}

/// The rows of Table I.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Test {
    Put,
    GetMemtable,
    GetNewTable,
    GetCache,
    GetMissingBloom,
    GetMissingNoBloom,
}

impl Test {
    const ALL: [Test; 6] = [
        Test::Put,
        Test::GetMemtable,
        Test::GetNewTable,
        Test::GetCache,
        Test::GetMissingBloom,
        Test::GetMissingNoBloom,
    ];

    fn id(self) -> &'static str {
        match self {
            Test::Put => "put",
            Test::GetMemtable => "get_memtable",
            Test::GetNewTable => "get_new_table",
            Test::GetCache => "get_cache",
            Test::GetMissingBloom => "get_missing_bloom",
            Test::GetMissingNoBloom => "get_missing_no_bloom",
        }
    }
}

/// One measured cell: the median over its rounds.
#[derive(Debug, Clone)]
pub struct Cell {
    pub column: usize,
    pub compression: Compression,
    pub engine: EngineKind,
    pub test: Test,
    /// Median of the rounds' p50 and p99, in µs.
    pub p50_us: f64,
    pub p99_us: f64,
    /// Median of the rounds' mean latency, in µs.
    pub mean_us: f64,
    /// Operations a round.
    pub ops: u64,
    /// Median wall time of a round.
    pub seconds: f64,
    /// Rounds measured: of the reads, every build's; of the PUT, one per build.
    pub rounds: usize,
    /// Reads that found their key (for GETs), in the first round.
    pub found: Option<u64>,
}

impl Cell {
    /// The median of `runs`, each a round of the same test.
    fn from_runs(
        column: usize,
        compression: Compression,
        engine: EngineKind,
        test: Test,
        runs: &[Measured],
    ) -> Cell {
        let us = |f: &dyn Fn(&Measured) -> f64| median(runs.iter().map(f).collect());
        Cell {
            column,
            compression,
            engine,
            test,
            p50_us: us(&|m| m.p50_ns as f64 / 1000.0),
            p99_us: us(&|m| m.p99_ns as f64 / 1000.0),
            mean_us: us(&|m| m.mean_ns / 1000.0),
            ops: runs.first().map_or(0, |m| m.ops),
            seconds: us(&|m| m.seconds),
            rounds: runs.len(),
            found: runs.first().and_then(|m| m.found),
        }
    }
}

/// The median of `values` (the mean of the middle two for an even count); 0 for none.
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => values[n / 2],
        _ => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// What one reading of the monotonic clock costs: the median gap between back-to-back
/// readings.
fn clock_cost() -> Duration {
    let mut gaps: Vec<Duration> = (0..10_001)
        .map(|_| {
            let a = Instant::now();
            Instant::now().duration_since(a)
        })
        .collect();
    gaps.sort_unstable();
    gaps[gaps.len() / 2]
}

/// The outcome of a sweep.
#[derive(Debug, Clone)]
pub struct SweepResults {
    pub columns: Vec<Column>,
    pub engines: Vec<EngineKind>,
    pub num: u64,
    pub value_size: usize,
    pub cells: Vec<Cell>,
}

/// Runs the sweep over `engines` and prints Table I.
pub fn run(cfg: &Config, sweep: Sweep, engines: &[EngineKind]) -> BenchResult<SweepResults> {
    let cols = columns(sweep);
    let bloom_bits = cfg.options.bloom_bits.unwrap_or(10);
    println!(
        "strata bench --sweep: the paper's Table I on {} ({} entries + {} duplicates, \
         {}-byte values, bloom {} bits/key, block cache {})",
        engines
            .iter()
            .map(|e| e.name())
            .collect::<Vec<_>>()
            .join(", "),
        cfg.num,
        cfg.num / 10,
        cfg.value_size,
        bloom_bits,
        size(cfg.options.cache_size)
    );
    if cfg!(debug_assertions) {
        println!("WARNING: built without optimizations; timings are not meaningful");
    }
    let builds = cfg.repeat;
    println!(
        "Timing: one clock reading costs {} ns; each database built {builds} time(s), the reads \
         of each build run {ROUNDS} rounds, engines taking turns; memtable reads timed in \
         batches of {MEMTABLE_BATCH}",
        clock_cost().as_nanos()
    );
    let mut processes = engines
        .iter()
        .map(|&engine| EngineProcess::spawn(engine))
        .collect::<BenchResult<Vec<_>>>()?;
    let mut cells = Vec::new();
    for (ci, &column) in cols.iter().enumerate() {
        for compression in [Compression::Snappy, Compression::None] {
            let jobs: Vec<SweepJob> = engines
                .iter()
                .map(|&engine| SweepJob {
                    dir: cfg.db.join(format!("sweep-{}", engine.name())),
                    engine,
                    options: BenchOptions {
                        write_buffer_size: column.write_buffer,
                        block_size: column.block_size,
                        bloom_bits: Some(bloom_bits),
                        compression,
                        ..engine.options(&cfg.options)
                    },
                    num: cfg.num,
                    value_size: cfg.value_size,
                    memtable_keys: memtable_keys(column, cfg.value_size),
                    progress: cfg.progress,
                    settle: cfg.settle,
                    label: format!(
                        "{} {} {}",
                        column.header(),
                        compression.name(),
                        engine.name()
                    ),
                })
                .collect();
            let mut runs: Vec<Vec<(Test, Measured)>> = vec![Vec::new(); jobs.len()];
            for build in 0..builds {
                for (e, p) in jobs.iter().enumerate() {
                    let Round {
                        measured, shape, ..
                    } = processes[e].sweep(SweepStep::Build(p.clone()))?;
                    let seconds = measured.first().map_or(0.0, |(_, put)| put.seconds);
                    println!(
                        "  done: {}: build {}/{builds}: PUT {seconds:.2} s; tables per level: {}",
                        p.label,
                        build + 1,
                        shape_text(shape.as_deref())
                    );
                    runs[e].extend(measured);
                }
                let mut shapes = vec![None; jobs.len()];
                let mut disk_reads = vec![Some(0); jobs.len()];
                for round in 0..ROUNDS {
                    for turn in 0..jobs.len() {
                        let e = (round + turn) % jobs.len();
                        let p = &jobs[e];
                        let Round {
                            measured,
                            shape,
                            disk_read,
                        } = processes[e].sweep(SweepStep::Reads(p.clone()))?;
                        shapes[e] = shape;
                        disk_reads[e] = disk_reads[e].zip(disk_read).map(|(a, b)| a + b);
                        for (test, m) in measured {
                            if let Some(problem) = wrong_answers(test, &m, p) {
                                println!("  WARNING: {}: {}: {problem}", p.label, test.id());
                            }
                            runs[e].push((test, m));
                        }
                    }
                }
                for ((p, shape), disk_read) in jobs.iter().zip(shapes).zip(disk_reads) {
                    let disk = disk_read.map_or_else(
                        || "not known".to_owned(),
                        |bytes| format!("{} KiB", bytes / 1024),
                    );
                    println!(
                        "  done: {}: build {}/{builds}: reads; tables per level after them: {}; \
                         read from disk in its {ROUNDS} rounds: {disk}",
                        p.label,
                        build + 1,
                        shape_text(shape.as_deref())
                    );
                }
            }
            for (p, engine_runs) in jobs.iter().zip(runs) {
                for test in Test::ALL {
                    let of_test: Vec<Measured> = engine_runs
                        .iter()
                        .filter(|(t, _)| *t == test)
                        .map(|(_, m)| m.clone())
                        .collect();
                    cells.push(Cell::from_runs(ci, compression, p.engine, test, &of_test));
                }
            }
        }
    }
    for process in processes {
        process.close()?;
    }
    let results = SweepResults {
        columns: cols,
        engines: engines.to_vec(),
        num: cfg.num,
        value_size: cfg.value_size,
        cells,
    };
    print!("{}", table(&results));
    Ok(results)
}

/// Says what is wrong if a GET test found keys it should not have, or missed keys it should
/// have found: the sweep doubles as a correctness check of the engines.
fn wrong_answers(test: Test, m: &Measured, p: &SweepJob) -> Option<String> {
    let found = m.found?;
    let expected = match test {
        Test::Put => return None,
        Test::GetMissingBloom | Test::GetMissingNoBloom => 0,
        Test::GetNewTable | Test::GetCache => SAMPLES.min(p.num),
        Test::GetMemtable => MEMTABLE_READS,
    };
    (found != expected).then(|| format!("found {found} keys, expected {expected}"))
}

/// Keys for the memtable test: a quarter of the effective write buffer's worth (an entry
/// costs its key, value and about 30 bytes of memtable overhead), 1 to 1000.
fn memtable_keys(column: Column, value_size: usize) -> u64 {
    let entry = (KEY_SIZE + value_size + 30) as u64;
    (column.effective_write_buffer() as u64 / 4 / entry).clamp(1, 1000)
}

/// One engine's database of one cell (column and compression): what its process builds and
/// reads.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepJob {
    dir: PathBuf,
    engine: EngineKind,
    options: BenchOptions,
    num: u64,
    value_size: usize,
    memtable_keys: u64,
    progress: bool,
    /// Wait for background work to end before timing (`--no_settle` turns it off).
    settle: bool,
    label: String,
}

/// What the harness asks an engine's process (`worker`) to do for the sweep: each engine runs
/// in a process of its own, as in the suite (`process`), so no engine's reads run on a heap
/// or in mappings another engine left behind.
#[derive(Debug, Serialize, Deserialize)]
pub enum SweepStep {
    /// The PUT test, on a new database: its [`Round`] holds the PUT's measurement.
    Build(SweepJob),
    /// One round of the GET tests on the database built.
    Reads(SweepJob),
}

impl SweepStep {
    /// The job the step is for.
    pub fn job(&self) -> &SweepJob {
        match self {
            SweepStep::Build(job) | SweepStep::Reads(job) => job,
        }
    }
}

impl SweepJob {
    /// The values the job writes are at most this long.
    pub fn value_size(&self) -> usize {
        self.value_size
    }
}

/// Runs `step` in this process (an engine's worker), writing values from `values` (a pool
/// made from `suite::VALUE_SEED` for the job's value size, kept across the steps).
pub fn serve_step(step: SweepStep, values: &ValuePool) -> BenchResult<Round> {
    let p = Params {
        job: step.job(),
        values,
    };
    match step {
        SweepStep::Build(_) => build_kind(&p).map(|(put, shape)| Round {
            measured: vec![(Test::Put, put)],
            shape,
            disk_read: None,
        }),
        SweepStep::Reads(_) => read_kind(&p),
    }
}

/// A job with the values it writes.
struct Params<'a> {
    job: &'a SweepJob,
    values: &'a ValuePool,
}

impl Deref for Params<'_> {
    type Target = SweepJob;

    fn deref(&self) -> &SweepJob {
        self.job
    }
}

/// One round of the reads on one engine (or its PUT): each test's measurement, the tables per
/// level after them, and the bytes the engine's process read from the disk during the reads
/// (`None` for a PUT, or where `/proc/self/io` does not tell).
#[derive(Debug, Serialize, Deserialize)]
pub struct Round {
    measured: Vec<(Test, Measured)>,
    shape: Option<String>,
    disk_read: Option<u64>,
}

/// What one test measured in one round: the percentiles a cell takes the median of.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Measured {
    p50_ns: u64,
    p99_ns: u64,
    mean_ns: f64,
    min_ns: u64,
    ops: u64,
    seconds: f64,
    found: Option<u64>,
}

impl Measured {
    fn of(hist: &Histogram<u64>, seconds: f64, found: Option<u64>) -> Measured {
        Measured {
            p50_ns: hist.value_at_quantile(0.5),
            p99_ns: hist.value_at_quantile(0.99),
            mean_ns: hist.mean(),
            min_ns: hist.min(),
            ops: hist.len(),
            seconds,
            found,
        }
    }
}

/// Tables per level as [`files_per_level`] gives them: `none` for an empty tree, `unknown` when
/// the engine does not say.
fn shape_text(shape: Option<&str>) -> &str {
    match shape {
        Some("") => "none",
        Some(shape) => shape,
        None => "unknown",
    }
}

fn build_kind(p: &Params<'_>) -> BenchResult<(Measured, Option<String>)> {
    match p.engine {
        EngineKind::Strata => build::<super::strata_engine::StrataEngine>(p),
        #[cfg(feature = "leveldb")]
        EngineKind::Leveldb => build::<super::leveldb_engine::LevelDbEngine>(p),
        #[cfg(feature = "rocksdb")]
        EngineKind::Rocksdb => build::<super::rocksdb_engine::RocksDbEngine>(p),
        #[allow(unreachable_patterns)]
        other => Err(not_compiled_in(other)),
    }
}

fn read_kind(p: &Params<'_>) -> BenchResult<Round> {
    match p.engine {
        EngineKind::Strata => reads::<super::strata_engine::StrataEngine>(p),
        #[cfg(feature = "leveldb")]
        EngineKind::Leveldb => reads::<super::leveldb_engine::LevelDbEngine>(p),
        #[cfg(feature = "rocksdb")]
        EngineKind::Rocksdb => reads::<super::rocksdb_engine::RocksDbEngine>(p),
        #[allow(unreachable_patterns)]
        other => Err(not_compiled_in(other)),
    }
}

fn settle(p: &Params<'_>) {
    if !p.settle {
        return;
    }
    let (dir, progress, what) = (&p.dir, p.progress, &p.label);
    let bar = ProgressRun::start(progress, None, format!("{what}: settling"));
    let (_, gave_up) = wait_idle(dir, SETTLE_LIMIT);
    bar.finish();
    if gave_up {
        println!("  note: {what} still busy after {SETTLE_LIMIT:?}; going on");
    }
}

/// Times `op` on each item, into a histogram of per-call latencies: each call on its own, or
/// `batch` calls together, each counted as the batch's mean.
fn timed<T>(
    items: impl Iterator<Item = T>,
    batch: u64,
    progress: &Progress,
    mut op: impl FnMut(T) -> BenchResult<bool>,
) -> BenchResult<Measured> {
    let mut hist = new_histogram();
    let mut found = 0;
    let start = Instant::now();
    let mut last = start;
    let mut in_batch = 0u64;
    let mut done = 0u64;
    let mut record = |now: Instant, last: Instant, calls: u64| {
        let nanos = u64::try_from(now.duration_since(last).as_nanos()).unwrap_or(u64::MAX);
        let _ = hist.record_n((nanos / calls).max(1), calls);
    };
    for item in items {
        if op(item)? {
            found += 1;
        }
        in_batch += 1;
        if in_batch == batch {
            let now = Instant::now();
            record(now, last, in_batch);
            last = now;
            in_batch = 0;
        }
        done += 1;
        if done % 1024 == 0 {
            progress.inc(1024);
        }
    }
    if in_batch > 0 {
        record(Instant::now(), last, in_batch);
    }
    Ok(Measured::of(
        &hist,
        start.elapsed().as_secs_f64(),
        Some(found),
    ))
}

/// The PUT test: a new database filled with shuffled keys, then duplicates; settled and
/// closed. Also returns its tables per level once settled: the reads' costs follow that shape.
fn build<E: Engine>(p: &Params<'_>) -> BenchResult<(Measured, Option<String>)> {
    let dir = &p.dir;
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    E::destroy(dir)?;
    let mut key = KeyBuf::new();
    let mut rng = SmallRng::seed_from_u64(3);
    let mut order: Vec<u64> = (0..p.num).collect();
    order.shuffle(&mut rng);
    let dups: Vec<u64> = (0..p.num / 10).map(|_| rng.gen_range(0..p.num)).collect();
    let db = E::open(dir, &p.options)?;
    let bar = ProgressRun::start(
        p.progress,
        Some(p.num + p.num / 10),
        format!("{}: PUT", p.label),
    );
    let mut values = p.values.cursor();
    let put = timed(order.iter().chain(dups.iter()), 1, &bar.handle(), |&k| {
        db.put(key.key(k), values.next_value(p.value_size), false)?;
        Ok(true)
    });
    bar.finish();
    settle(p);
    let put = put?;
    Ok((Measured { found: None, ..put }, files_per_level(&db)))
}

/// One round of the GET tests (2-6) on the database `build` made; it is opened afresh, so
/// its caches start cold. Also gives its tables per level after the round: reads move tables
/// down (seek compactions), so later rounds may search fewer levels.
fn reads<E: Engine>(p: &Params<'_>) -> BenchResult<Round> {
    let dir = &p.dir;
    let mut key = KeyBuf::new();
    let mut out = Vec::new();
    let stride = (p.num / SAMPLES).max(1);
    let samples: Vec<u64> = (0..SAMPLES.min(p.num)).map(|i| i * stride).collect();
    let hidden = Progress::hidden();

    // 2-4: reopened with the bloom filter, caches cold.
    let read_first = {
        let db = E::open(dir, &p.options)?;
        settle(p);
        warm_page_cache(dir);
        let first = disk_read_bytes();
        let table = timed(samples.iter(), 1, &hidden, |&k| {
            Ok(db.get(key.key(k))?.is_some())
        })?;
        let cache = timed(samples.iter(), 1, &hidden, |&k| {
            Ok(db.get(key.key(k))?.is_some())
        })?;
        let missing = timed(samples.iter(), 1, &hidden, |&k| {
            Ok(db.get(key.missing(k + stride / 2))?.is_some())
        })?;
        out.push((Test::GetNewTable, table));
        out.push((Test::GetCache, cache));
        out.push((Test::GetMissingBloom, missing));
        read_since(first)
    };

    // 5-6: reopened without a filter policy.
    {
        let no_bloom = BenchOptions {
            bloom_bits: None,
            ..p.options.clone()
        };
        let db = E::open(dir, &no_bloom)?;
        settle(p);
        warm_page_cache(dir);
        let second = disk_read_bytes();
        for &k in &samples {
            db.get(key.key(k))?;
        }
        let missing = timed(samples.iter(), 1, &hidden, |&k| {
            Ok(db.get(key.missing(k + stride / 2))?.is_some())
        })?;
        out.push((Test::GetMissingNoBloom, missing));

        let mut values = p.values.cursor();
        for j in 0..p.memtable_keys {
            db.put(key.key(p.num + j), values.next_value(p.value_size), false)?;
        }
        let fresh = p.memtable_keys;
        let memtable = timed(0..MEMTABLE_READS, MEMTABLE_BATCH, &hidden, |i| {
            Ok(db.get(key.key(p.num + i % fresh))?.is_some())
        })?;
        out.push((Test::GetMemtable, memtable));
        Ok(Round {
            measured: out,
            shape: files_per_level(&db),
            disk_read: read_first
                .zip(read_since(second))
                .map(|(first, second)| first + second),
        })
    }
}

/// Reads every file in `dir` once, so that the round's reads find its pages in the page cache
/// (see the module documentation). Best effort: a file that cannot be read is left alone.
fn warm_page_cache(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if let Ok(mut file) = std::fs::File::open(entry.path()) {
            let _ = std::io::copy(&mut file, &mut std::io::sink());
        }
    }
}

/// The bytes this process has caused to be read from storage (`read_bytes` of
/// `/proc/self/io`); `None` where that file does not tell.
fn disk_read_bytes() -> Option<u64> {
    read_bytes_of(&std::fs::read_to_string("/proc/self/io").ok()?)
}

/// The `read_bytes` field of a `/proc/<pid>/io` text.
fn read_bytes_of(io: &str) -> Option<u64> {
    proc_field(io, "read_bytes")?.parse().ok()
}

/// What this process read from storage since it had read `before` (`disk_read_bytes`).
fn read_since(before: Option<u64>) -> Option<u64> {
    Some(disk_read_bytes()?.saturating_sub(before?))
}

/// Narrowest column of the table.
const CELL: usize = 20;

/// How a row of Table I shows its cells.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shown {
    /// Total seconds and operations per second.
    Throughput,
    /// p50 / p99 in µs.
    Percentiles,
}

/// The rows of Table I in order: (title, test, how shown).
const ROWS: [(&str, Test, Shown); 7] = [
    ("PUT total (s, ops/s)", Test::Put, Shown::Throughput),
    ("PUT latency", Test::Put, Shown::Percentiles),
    ("GET from MemTable", Test::GetMemtable, Shown::Percentiles),
    (
        "GET from new SSTable",
        Test::GetNewTable,
        Shown::Percentiles,
    ),
    ("GET from cache", Test::GetCache, Shown::Percentiles),
    (
        "GET missing (bloom)",
        Test::GetMissingBloom,
        Shown::Percentiles,
    ),
    (
        "GET missing (no bloom)",
        Test::GetMissingNoBloom,
        Shown::Percentiles,
    ),
];

fn cell_text(cell: Option<&Cell>, shown: Shown) -> String {
    match (cell, shown) {
        (None, _) => "-".to_owned(),
        (Some(x), Shown::Throughput) => {
            let per_second = x.ops as f64 / x.seconds.max(1e-9);
            format!("{:.2} s, {:.0}k/s", x.seconds, per_second / 1000.0)
        }
        (Some(x), Shown::Percentiles) => format!("{:.2} / {:.2}", x.p50_us, x.p99_us),
    }
}

/// Table I: a row per test, compression and engine; a column per configuration, three
/// columns to a block. Latencies are p50 / p99 in µs.
pub fn table(r: &SweepResults) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    for chunk_start in (0..r.columns.len()).step_by(3) {
        let chunk: Vec<(usize, usize)> = (chunk_start..(chunk_start + 3).min(r.columns.len()))
            .map(|c| (c, r.columns[c].header().chars().count().max(CELL)))
            .collect();
        let _ = writeln!(out);
        let mut head = format!("{:<24} {:<7} {:<8}", "Test", "Compr.", "Engine");
        for &(c, width) in &chunk {
            let _ = write!(head, " | {:<width$}", r.columns[c].header());
        }
        let _ = writeln!(out, "{}", head.trim_end());
        let _ = writeln!(out, "{}", "-".repeat(head.chars().count()));
        for (title, test, shown) in ROWS {
            let mut first = true;
            for compression in [Compression::Snappy, Compression::None] {
                let mut first_engine = true;
                for &engine in &r.engines {
                    let name = if first { title } else { "" };
                    let comp = if first_engine { compression.name() } else { "" };
                    first = false;
                    first_engine = false;
                    let mut line = format!("{name:<24} {comp:<7} {:<8}", engine.name());
                    for &(c, width) in &chunk {
                        let cell = r.cells.iter().find(|x| {
                            x.column == c
                                && x.compression == compression
                                && x.engine == engine
                                && x.test == test
                        });
                        let _ = write!(line, " | {:<width$}", cell_text(cell, shown));
                    }
                    let _ = writeln!(out, "{}", line.trim_end());
                }
            }
        }
    }
    let _ = writeln!(
        out,
        "Latencies: p50 / p99 in µs (GETs: medians over the rounds of every build; PUT: over \
         the builds). PUT: {} keys in shuffled order then {} duplicates, {}-byte values. WB = \
         write buffer, BS = block size (asked→used).",
        r.num,
        r.num / 10,
        r.value_size
    );
    out
}

/// One JSON object per cell (the sweep's own shape; see `--json`).
#[derive(Serialize)]
struct JsonCell<'a> {
    engine: &'a str,
    benchmark: String,
    write_buffer_size: usize,
    effective_write_buffer_size: usize,
    block_size: usize,
    effective_block_size: usize,
    compression: &'a str,
    ops: u64,
    micros_per_op: f64,
    p50_us: f64,
    p99_us: f64,
    seconds: f64,
    rounds: usize,
    found: Option<u64>,
}

/// The sweep's cells as a JSON array.
pub fn to_json(r: &SweepResults) -> BenchResult<String> {
    let cells: Vec<JsonCell<'_>> = r
        .cells
        .iter()
        .map(|c| {
            let column = r.columns.get(c.column).copied().unwrap_or(Column {
                write_buffer: 0,
                block_size: 0,
            });
            JsonCell {
                engine: c.engine.name(),
                benchmark: format!("sweep/{}", c.test.id()),
                write_buffer_size: column.write_buffer,
                effective_write_buffer_size: column.effective_write_buffer(),
                block_size: column.block_size,
                effective_block_size: column.effective_block_size(),
                compression: c.compression.name(),
                ops: c.ops,
                micros_per_op: c.mean_us,
                p50_us: c.p50_us,
                p99_us: c.p99_us,
                seconds: c.seconds,
                rounds: c.rounds,
                found: c.found,
            }
        })
        .collect();
    serde_json::to_string_pretty(&cells).map_err(|e| format!("json: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_columns_pair_buffer_and_block_like_table_one() {
        let cols = columns(Sweep::Paper);
        assert_eq!(cols.len(), 3);
        assert_eq!(
            (cols[0].write_buffer, cols[0].block_size),
            (4 << 20, 4 << 10)
        );
        assert_eq!((cols[2].write_buffer, cols[2].block_size), (512, 512));
        assert_eq!(columns(Sweep::PaperFull).len(), 9);
    }

    #[test]
    fn tiny_settings_report_what_the_engines_use() {
        let tiny = Column {
            write_buffer: 512,
            block_size: 512,
        };
        assert_eq!(tiny.effective_write_buffer(), 64 << 10);
        assert_eq!(tiny.effective_block_size(), 1 << 10);
        assert_eq!(tiny.header(), "WB 512 B→64 KiB / BS 512 B→1 KiB");
        let default = Column {
            write_buffer: 4 << 20,
            block_size: 4 << 10,
        };
        assert_eq!(default.header(), "WB 4 MiB / BS 4 KiB");
    }

    #[test]
    fn disk_reads_are_the_read_bytes_field_of_proc_io() {
        let io = "rchar: 3774\nwchar: 0\nsyscr: 9\nsyscw: 0\nread_bytes: 40960\n\
                  write_bytes: 0\ncancelled_write_bytes: 0\n";
        assert_eq!(read_bytes_of(io), Some(40960));
        assert_eq!(read_bytes_of("rchar: 3774\n"), None);
        if cfg!(target_os = "linux") {
            assert!(disk_read_bytes().is_some());
        }
    }

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(median(vec![]), 0.0);
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 2.5);
    }

    #[test]
    fn batched_timing_counts_every_call_at_the_batch_mean() {
        let hidden = Progress::hidden();
        let m = timed(0..100u64, 16, &hidden, |i| Ok(i % 2 == 0)).unwrap();
        assert_eq!(m.ops, 100, "six batches of 16 and one of 4");
        assert_eq!(m.found, Some(50));
        let slow = timed(0..3u64, 1, &hidden, |_| {
            std::thread::sleep(Duration::from_millis(2));
            Ok(true)
        })
        .unwrap();
        assert_eq!(slow.ops, 3);
        assert!(slow.min_ns >= 2_000_000, "{}", slow.min_ns);
    }

    #[test]
    fn a_cell_is_the_median_of_its_rounds() {
        let round = |micros: u64| {
            let mut hist = new_histogram();
            hist.record_n(micros * 1000, 10).unwrap();
            Measured::of(&hist, micros as f64, Some(10))
        };
        let runs = [round(5), round(1), round(3)];
        let cell = Cell::from_runs(
            0,
            Compression::None,
            EngineKind::Strata,
            Test::GetCache,
            &runs,
        );
        assert!((cell.p50_us - 3.0).abs() < 0.01, "{}", cell.p50_us);
        assert_eq!((cell.rounds, cell.ops, cell.seconds), (3, 10, 3.0));
    }

    #[test]
    fn memtable_keys_fit_a_quarter_of_the_buffer() {
        let tiny = Column {
            write_buffer: 512,
            block_size: 512,
        };
        let k = memtable_keys(tiny, 100);
        assert!(k * 146 <= (64 << 10) / 4 && k > 50, "{k}");
        let big = Column {
            write_buffer: 4 << 20,
            block_size: 4 << 10,
        };
        assert_eq!(memtable_keys(big, 100), 1000);
    }
}
