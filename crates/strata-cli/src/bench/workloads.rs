//! The db_bench workloads, generic over the [`Engine`], each timed per thread.
//!
//! Semantics are db_bench's (LevelDB 1.23), per thread:
//! - writes (`fill*`, `overwrite`) put `num` entries (`num / 1000` for `fillsync` and
//!   `fill100K`) one per write batch; sequential keys `0, 1, ...` or random keys uniform in
//!   `0..num`; each op moves `16 + value_size` bytes;
//! - `deleteseq` / `deleterandom` delete `num` keys, one per batch;
//! - `readrandom` / `readmissing` / `readhot` do `reads` point lookups of uniform keys in
//!   `0..num` (`readhot`: the first 1%; `readmissing`: each key with a `.` appended);
//! - `readseq` / `readreverse` walk one iterator over up to `reads` entries, each op moving
//!   the entry's key and value bytes;
//! - `seekrandom` opens an iterator per op, seeks to a uniform key and checks it is there;
//! - `compact` compacts the whole range once (one op).
//!
//! Strata's additions (issue 16), in the same spirit:
//! - `multireadrandom` reads `reads` uniform keys in batches of [`MULTIGET_KEYS`]; an op is a
//!   key, so its micros/op compare with `readrandom`'s;
//! - `deleterange` deletes `0..num` in [`DELETE_RANGES`] contiguous ranges, one op each (one
//!   thread: the ranges are the whole key space);
//! - `scandeleted` does [`SCAN_SEEKS`] seeks to uniform keys, each walking up to
//!   [`SCAN_LENGTH`] entries (an op is a seek and its walk).
//!
//! And for values beside the tree (issue 14):
//! - `headrandom` is `readrandom` with [`Engine::head`] instead of `get`;
//! - `leveledmix` is Leveled's read/update mix, in `leveled_mix`.
//!
//! Each thread draws from its own generator seeded with `seed + thread index`, so every engine
//! sees exactly the same keys in the same order.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::config::{Benchmark, Config};
use super::engine::{BenchResult, Cursor, Engine};
use super::keys::{KeyBuf, ValuePool, KEY_SIZE};
use super::leveled_mix;
use super::progress::Progress;
use super::stats::{RunResult, ThreadStats};

/// Value size of `fill100K`.
const LARGE_VALUE: usize = 100_000;

/// Keys per batched lookup of `multireadrandom`.
pub const MULTIGET_KEYS: usize = 100;
/// Ranges `deleterange` cuts the key space into.
pub const DELETE_RANGES: u64 = 100;
/// Seeks of `scandeleted`, and the entries each walks at most.
pub const SCAN_SEEKS: u64 = 100;
pub const SCAN_LENGTH: u64 = 100;

/// One workload's parameters, shared read-only by its threads.
#[derive(Debug)]
pub struct Workload<'a> {
    pub bench: Benchmark,
    pub num: u64,
    pub reads: u64,
    pub value_size: usize,
    pub threads: usize,
    pub histogram: bool,
    pub seed: u64,
    pub values: &'a ValuePool,
}

/// What a point read asks for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Probe {
    /// The value of a key that may be present.
    Get,
    /// The value of a key never written.
    Missing,
    /// Whether a key is present and its value's length (`head`).
    Head,
}

/// Key order of a write or delete loop.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Order {
    Sequential,
    Random,
}

impl<'a> Workload<'a> {
    /// The workload at position `pos` of `cfg`'s list: every engine, and the live-key model,
    /// run exactly this (its seed follows from the position).
    pub fn at(cfg: &Config, bench: Benchmark, pos: usize, values: &'a ValuePool) -> Workload<'a> {
        Workload {
            bench,
            num: cfg.num,
            reads: cfg.reads(),
            value_size: cfg.value_size,
            threads: cfg.threads,
            histogram: cfg.histogram || bench.always_timed(),
            seed: 1000 + 1000 * pos as u64,
            values,
        }
    }

    /// Threads this workload runs on.
    pub fn thread_count(&self) -> usize {
        if self.bench.threaded() {
            self.threads.max(1)
        } else {
            1
        }
    }

    /// Operations one thread will do (for the progress bar); `None` if unknown.
    pub fn ops_per_thread(&self) -> Option<u64> {
        match self.bench {
            Benchmark::Fillseq
            | Benchmark::Fillrandom
            | Benchmark::Overwrite
            | Benchmark::Deleteseq
            | Benchmark::Deleterandom => Some(self.num),
            Benchmark::Fillsync | Benchmark::Fill100K => Some(self.num / 1000),
            Benchmark::Readrandom
            | Benchmark::Readmissing
            | Benchmark::Readhot
            | Benchmark::Headrandom
            | Benchmark::Seekrandom
            | Benchmark::Multireadrandom
            | Benchmark::Leveledmix => Some(self.reads),
            Benchmark::Deleterange => Some(DELETE_RANGES.min(self.num.max(1))),
            Benchmark::Scandeleted => Some(SCAN_SEEKS),
            Benchmark::Readseq | Benchmark::Readreverse => Some(self.reads.min(self.num)),
            Benchmark::Compact | Benchmark::Stats => None,
        }
    }

    /// Value size this workload writes.
    pub fn write_value_size(&self) -> usize {
        if self.bench == Benchmark::Fill100K {
            LARGE_VALUE
        } else {
            self.value_size
        }
    }

    fn reports_found(&self) -> bool {
        matches!(
            self.bench,
            Benchmark::Readrandom
                | Benchmark::Readmissing
                | Benchmark::Readhot
                | Benchmark::Headrandom
                | Benchmark::Seekrandom
                | Benchmark::Multireadrandom
        )
    }
}

/// Value size whose pool every workload's values fit in.
pub fn largest_value(value_size: usize) -> usize {
    value_size.max(LARGE_VALUE)
}

/// Runs `w` on `engine` with `w.thread_count()` threads and merges their counters.
pub fn run<E: Engine>(engine: &E, w: &Workload<'_>, progress: &Progress) -> BenchResult<RunResult> {
    let threads = w.thread_count();
    // Seed 000's stall test: sorted writes; issue 13 asks the same of random ones.
    let trace = matches!(w.bench, Benchmark::Fillseq | Benchmark::Fillrandom);
    let outcomes: Vec<BenchResult<ThreadStats>> = if threads == 1 {
        vec![run_thread(engine, w, 0, trace, progress.clone())]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|tid| {
                    let progress = progress.clone();
                    scope.spawn(move || run_thread(engine, w, tid, trace && tid == 0, progress))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err("a benchmark thread panicked".to_owned()))
                })
                .collect()
        })
    };
    let stats = outcomes.into_iter().collect::<BenchResult<Vec<_>>>()?;
    Ok(RunResult::merge(stats, w.reports_found()))
}

fn run_thread<E: Engine>(
    engine: &E,
    w: &Workload<'_>,
    tid: usize,
    trace: bool,
    progress: Progress,
) -> BenchResult<ThreadStats> {
    let mut rng = SmallRng::seed_from_u64(w.seed.wrapping_add(tid as u64));
    let mut stats = ThreadStats::start(w.histogram, trace, progress);
    let n = w.ops_per_thread().unwrap_or(0);
    match w.bench {
        Benchmark::Fillseq => write(engine, w, &mut rng, &mut stats, Order::Sequential, n, false)?,
        Benchmark::Fillrandom | Benchmark::Overwrite | Benchmark::Fill100K => {
            write(engine, w, &mut rng, &mut stats, Order::Random, n, false)?
        }
        Benchmark::Fillsync => write(engine, w, &mut rng, &mut stats, Order::Random, n, true)?,
        Benchmark::Deleteseq => delete(engine, w, &mut rng, &mut stats, Order::Sequential)?,
        Benchmark::Deleterandom => delete(engine, w, &mut rng, &mut stats, Order::Random)?,
        Benchmark::Readrandom => read_random(engine, &mut rng, &mut stats, n, w.num, Probe::Get)?,
        Benchmark::Readmissing => {
            read_random(engine, &mut rng, &mut stats, n, w.num, Probe::Missing)?
        }
        Benchmark::Readhot => {
            let range = w.num.div_ceil(100).max(1);
            read_random(engine, &mut rng, &mut stats, n, range, Probe::Get)?
        }
        Benchmark::Headrandom => read_random(engine, &mut rng, &mut stats, n, w.num, Probe::Head)?,
        Benchmark::Leveledmix => leveled_mix::run(engine, w, &mut rng, &mut stats, n)?,
        Benchmark::Readseq => scan(engine, &mut stats, n, true)?,
        Benchmark::Readreverse => scan(engine, &mut stats, n, false)?,
        Benchmark::Seekrandom => seek_random(engine, &mut rng, &mut stats, n, w.num)?,
        Benchmark::Multireadrandom => multi_read_random(engine, &mut rng, &mut stats, n, w.num)?,
        Benchmark::Deleterange => delete_ranges(engine, &mut stats, n, w.num)?,
        Benchmark::Scandeleted => scan_deleted(engine, &mut rng, &mut stats, n, w.num)?,
        Benchmark::Compact => {
            engine.compact()?;
            stats.op(0);
        }
        Benchmark::Stats => {}
    }
    stats.finish();
    Ok(stats)
}

fn pick(order: Order, rng: &mut SmallRng, i: u64, num: u64) -> u64 {
    match order {
        Order::Sequential => i,
        Order::Random => rng.gen_range(0..num.max(1)),
    }
}

fn write<E: Engine>(
    engine: &E,
    w: &Workload<'_>,
    rng: &mut SmallRng,
    stats: &mut ThreadStats,
    order: Order,
    n: u64,
    sync: bool,
) -> BenchResult<()> {
    let value_size = w.write_value_size();
    let mut values = w.values.cursor();
    let mut key = KeyBuf::new();
    let mut batch = E::new_batch();
    for i in 0..n {
        let k = pick(order, rng, i, w.num);
        E::batch_put(&mut batch, key.key(k), values.next_value(value_size));
        engine.write(&mut batch, sync)?;
        stats.op(KEY_SIZE + value_size);
        stats.wrote(KEY_SIZE + value_size);
    }
    Ok(())
}

fn delete<E: Engine>(
    engine: &E,
    w: &Workload<'_>,
    rng: &mut SmallRng,
    stats: &mut ThreadStats,
    order: Order,
) -> BenchResult<()> {
    let mut key = KeyBuf::new();
    let mut batch = E::new_batch();
    for i in 0..w.num {
        let k = pick(order, rng, i, w.num);
        E::batch_delete(&mut batch, key.key(k));
        engine.write(&mut batch, false)?;
        stats.op(0);
    }
    Ok(())
}

fn read_random<E: Engine>(
    engine: &E,
    rng: &mut SmallRng,
    stats: &mut ThreadStats,
    reads: u64,
    range: u64,
    probe: Probe,
) -> BenchResult<()> {
    let mut key = KeyBuf::new();
    for _ in 0..reads {
        let k = rng.gen_range(0..range.max(1));
        let found = match probe {
            Probe::Get => engine.get(key.key(k))?,
            Probe::Missing => engine.get(key.missing(k))?,
            Probe::Head => engine.head(key.key(k))?,
        };
        if found.is_some() {
            stats.found();
        }
        stats.op(0);
    }
    Ok(())
}

fn scan<E: Engine>(
    engine: &E,
    stats: &mut ThreadStats,
    limit: u64,
    forward: bool,
) -> BenchResult<()> {
    let mut cursor = engine.cursor();
    if forward {
        cursor.seek_to_first();
    } else {
        cursor.seek_to_last();
    }
    let mut i = 0;
    while i < limit && cursor.valid() {
        stats.op(cursor.key().len() + cursor.value().len());
        if forward {
            cursor.next();
        } else {
            cursor.prev();
        }
        i += 1;
    }
    cursor.status()
}

fn multi_read_random<E: Engine>(
    engine: &E,
    rng: &mut SmallRng,
    stats: &mut ThreadStats,
    reads: u64,
    num: u64,
) -> BenchResult<()> {
    let mut buffers: Vec<KeyBuf> = (0..MULTIGET_KEYS).map(|_| KeyBuf::new()).collect();
    let mut left = reads;
    while left > 0 {
        let batch = usize::try_from(left).map_or(MULTIGET_KEYS, |l| l.min(MULTIGET_KEYS));
        let keys: Vec<&[u8]> = buffers[..batch]
            .iter_mut()
            .map(|buf| buf.key(rng.gen_range(0..num.max(1))))
            .collect();
        let found = engine.get_many(&keys)?;
        for i in 0..batch {
            if i < found {
                stats.found();
            }
            stats.op(0);
        }
        left -= batch as u64;
    }
    Ok(())
}

fn delete_ranges<E: Engine>(
    engine: &E,
    stats: &mut ThreadStats,
    ranges: u64,
    num: u64,
) -> BenchResult<()> {
    let width = num.div_ceil(ranges.max(1));
    let (mut start, mut end) = (KeyBuf::new(), KeyBuf::new());
    for i in 0..ranges {
        engine.delete_range(start.key(i * width), end.key((i + 1) * width))?;
        stats.op(0);
    }
    Ok(())
}

fn scan_deleted<E: Engine>(
    engine: &E,
    rng: &mut SmallRng,
    stats: &mut ThreadStats,
    seeks: u64,
    num: u64,
) -> BenchResult<()> {
    let mut key = KeyBuf::new();
    for _ in 0..seeks {
        let mut cursor = engine.cursor();
        cursor.seek(key.key(rng.gen_range(0..num.max(1))));
        let mut bytes = 0;
        let mut walked = 0;
        while walked < SCAN_LENGTH && cursor.valid() {
            bytes += cursor.key().len() + cursor.value().len();
            cursor.next();
            walked += 1;
        }
        cursor.status()?;
        stats.op(bytes);
    }
    Ok(())
}

fn seek_random<E: Engine>(
    engine: &E,
    rng: &mut SmallRng,
    stats: &mut ThreadStats,
    reads: u64,
    num: u64,
) -> BenchResult<()> {
    let mut key = KeyBuf::new();
    for _ in 0..reads {
        let target = key.key(rng.gen_range(0..num.max(1)));
        let mut cursor = engine.cursor();
        cursor.seek(target);
        if cursor.valid() && cursor.key() == target {
            stats.found();
        }
        cursor.status()?;
        stats.op(0);
    }
    Ok(())
}
