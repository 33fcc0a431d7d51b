//! The db_bench suite across engines: interleaved per workload, repeated, settled.
//!
//! Order: for each repeat, for each workload, for each engine. Every engine keeps its own
//! database in `<db>/<engine>` open across workloads, so reads run on what the fills left, as
//! in db_bench; a `fill*` workload closes, destroys and reopens that engine's database first.
//! After each run the engine settles (see `settle`) before the next engine starts.

use std::path::PathBuf;
use std::time::Duration;

use super::config::{Benchmark, Config, EngineKind};
use super::engine::{with_engine, BenchResult, OpenEngine};
use super::keys::ValuePool;
use super::progress::ProgressRun;
use super::report;
use super::settle;
use super::stats::{median, spread, RunResult};
use super::workloads::{self, Workload};

/// Seed of the value pool (db_bench seeds its generator with 301).
pub const VALUE_SEED: u64 = 301;
/// Longest wait for an engine to settle before giving up (and saying so).
const SETTLE_LIMIT: Duration = Duration::from_secs(300);

/// All runs of one workload position on one engine.
#[derive(Debug, Clone)]
pub struct Series {
    /// Position in `--benchmarks`.
    pub pos: usize,
    pub bench: Benchmark,
    /// 1 for the first occurrence of this workload in the list, 2 for the second, ...
    pub occurrence: usize,
    pub engine: EngineKind,
    /// One result per repeat.
    pub runs: Vec<RunResult>,
}

impl Series {
    /// The workload's name, with the occurrence when it repeats (`readrandom (2)`).
    pub fn label(&self) -> String {
        label(self.bench, self.occurrence)
    }

    pub fn micros(&self) -> Vec<f64> {
        self.runs.iter().map(|r| r.micros_per_op).collect()
    }

    pub fn median_micros(&self) -> f64 {
        median(&self.micros())
    }

    pub fn spread_micros(&self) -> (f64, f64) {
        spread(&self.micros())
    }

    pub fn median_mb(&self) -> Option<f64> {
        let mbs: Vec<f64> = self.runs.iter().filter_map(|r| r.mb_per_s).collect();
        (!mbs.is_empty()).then(|| median(&mbs))
    }

    /// The run whose µs/op is closest to the median (its trace and histogram are shown).
    pub fn median_run(&self) -> Option<&RunResult> {
        let m = self.median_micros();
        self.runs.iter().min_by(|a, b| {
            (a.micros_per_op - m)
                .abs()
                .total_cmp(&(b.micros_per_op - m).abs())
        })
    }
}

/// A workload's display name.
pub fn label(bench: Benchmark, occurrence: usize) -> String {
    if occurrence <= 1 {
        bench.name().to_owned()
    } else {
        format!("{} ({occurrence})", bench.name())
    }
}

/// What a suite run produced.
#[derive(Debug, Clone)]
pub struct SuiteResults {
    /// Each engine with its version string, in run order.
    pub engines: Vec<(EngineKind, String)>,
    /// One series per (workload position, engine), in workload then engine order.
    pub series: Vec<Series>,
}

struct Slot {
    kind: EngineKind,
    dir: PathBuf,
    open: Option<OpenEngine>,
}

impl Slot {
    fn engine(&mut self, cfg: &Config) -> BenchResult<&OpenEngine> {
        if self.open.is_none() {
            self.open = Some(OpenEngine::open(self.kind, &self.dir, &cfg.options)?);
        }
        self.open
            .as_ref()
            .ok_or_else(|| format!("{}: database not open", self.kind.name()))
    }
}

/// Runs the suite described by `cfg` and prints a db_bench-style line per run as it goes.
pub fn run(cfg: &Config) -> BenchResult<SuiteResults> {
    let values = ValuePool::new(VALUE_SEED, workloads::largest_value(cfg.value_size));
    let mut slots: Vec<Slot> = cfg
        .engines
        .iter()
        .map(|&kind| Slot {
            kind,
            dir: cfg.db.join(kind.name()),
            open: None,
        })
        .collect();
    let mut engines = Vec::new();
    for slot in &mut slots {
        if !cfg.use_existing_db {
            OpenEngine::destroy(slot.kind, &slot.dir)?;
        }
        let version = slot.engine(cfg)?.version();
        engines.push((slot.kind, version));
    }
    report::print_header(cfg, &engines);

    let mut occurrences = Vec::new();
    let mut series = Vec::new();
    for (pos, &bench) in cfg.benchmarks.iter().enumerate() {
        let occurrence = cfg.benchmarks[..=pos]
            .iter()
            .filter(|&&b| b == bench)
            .count();
        occurrences.push(occurrence);
        for &engine in &cfg.engines {
            series.push(Series {
                pos,
                bench,
                occurrence,
                engine,
                runs: Vec::new(),
            });
        }
    }

    for round in 0..cfg.repeat {
        if cfg.repeat > 1 {
            println!("-- repeat {}/{}", round + 1, cfg.repeat);
        }
        for (pos, &bench) in cfg.benchmarks.iter().enumerate() {
            if bench == Benchmark::Stats {
                for slot in &mut slots {
                    let engine = slot.engine(cfg)?;
                    let (text, levels) = with_engine!(engine, e => (
                        super::engine::Engine::stats(e),
                        super::engine::files_per_level(e),
                    ));
                    report::print_stats(slot.kind, text.as_deref(), levels.as_deref());
                }
                continue;
            }
            if bench.fresh_db() && cfg.use_existing_db {
                if round == 0 {
                    println!(
                        "{:<16} : skipped (--use_existing_db keeps the databases)",
                        bench.name()
                    );
                }
                continue;
            }
            for (ei, slot) in slots.iter_mut().enumerate() {
                let result = run_one(cfg, slot, bench, pos, occurrences[pos], &values)?;
                report::print_run(
                    &label(bench, occurrences[pos]),
                    slot.kind,
                    &result,
                    cfg.histogram,
                );
                if cfg.settle {
                    settle_engine(slot, cfg);
                }
                series[pos * cfg.engines.len() + ei].runs.push(result);
            }
        }
    }
    series.retain(|s| !s.runs.is_empty());
    Ok(SuiteResults { engines, series })
}

fn run_one(
    cfg: &Config,
    slot: &mut Slot,
    bench: Benchmark,
    pos: usize,
    occurrence: usize,
    values: &ValuePool,
) -> BenchResult<RunResult> {
    if bench.fresh_db() {
        // Close before destroying: engines hold a lock on their directory.
        slot.open = None;
        OpenEngine::destroy(slot.kind, &slot.dir)?;
    }
    let kind = slot.kind;
    let engine = slot.engine(cfg)?;
    let w = Workload {
        bench,
        num: cfg.num,
        reads: cfg.reads(),
        value_size: cfg.value_size,
        threads: cfg.threads,
        histogram: cfg.histogram,
        seed: 1000 + 1000 * pos as u64,
        values,
    };
    let total = w.ops_per_thread().map(|n| n * w.thread_count() as u64);
    let progress = ProgressRun::start(
        cfg.progress,
        total,
        format!("{} on {}", label(bench, occurrence), kind.name()),
    );
    let result = with_engine!(engine, e => workloads::run(e, &w, &progress.handle()));
    progress.finish();
    result
}

fn settle_engine(slot: &Slot, cfg: &Config) {
    let progress = ProgressRun::start(cfg.progress, None, format!("{} settling", slot.kind.name()));
    let (waited, gave_up) = settle::wait_idle(&slot.dir, SETTLE_LIMIT);
    progress.finish();
    if gave_up {
        println!(
            "   note: {} was still busy after {:.0} s; the next run may overlap its compactions",
            slot.kind.name(),
            waited.as_secs_f64()
        );
    }
}
