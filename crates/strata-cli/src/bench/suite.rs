//! The db_bench suite across engines: interleaved per workload, repeated, settled.
//!
//! Order: for each repeat, for each workload, for each engine. Each engine runs in a process
//! of its own (see `process`), started before the first workload and closed after the last;
//! it keeps its database in `<db>/<engine>` open across workloads, so reads run on what the
//! fills left, as in db_bench; a `fill*` workload closes, destroys and reopens that engine's
//! database first. The harness asks one process at a time, so only one engine works at a
//! time, exactly as when the engines shared one process. After each run the engine settles
//! (see `settle`) before the next engine starts; then the harness takes the run's disk
//! figures (`disk`), with the live bytes of the workload's model (`live`). Each engine's
//! peak memory comes with its process's close (`memory`).

use std::path::Path;
use std::time::Duration;

use super::config::{Benchmark, Config, EngineKind};
use super::disk::DiskUse;
use super::engine::BenchResult;
use super::keys::ValuePool;
use super::live::Live;
use super::memory::PeakMemory;
use super::process::EngineProcess;
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

    /// The median of `figure` over the runs that have it; `None` if none has.
    pub fn median_of(&self, figure: impl Fn(&RunResult) -> Option<f64>) -> Option<f64> {
        let values: Vec<f64> = self.runs.iter().filter_map(figure).collect();
        (!values.is_empty()).then(|| median(&values))
    }

    pub fn median_mb(&self) -> Option<f64> {
        self.median_of(|r| r.mb_per_s)
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

/// One engine of a suite run.
#[derive(Debug, Clone)]
pub struct EngineRun {
    pub kind: EngineKind,
    /// Name and version, as the engine reports them.
    pub version: String,
    /// Peak memory of the engine's process over the whole suite.
    pub memory: PeakMemory,
}

impl EngineRun {
    /// An engine whose process just started (its memory is known at close).
    pub fn started(kind: EngineKind, version: impl Into<String>) -> EngineRun {
        EngineRun {
            kind,
            version: version.into(),
            memory: PeakMemory::default(),
        }
    }
}

/// What a suite run produced.
#[derive(Debug, Clone)]
pub struct SuiteResults {
    /// Each engine, in run order.
    pub engines: Vec<EngineRun>,
    /// One series per (workload position, engine), in workload then engine order.
    pub series: Vec<Series>,
}

/// Runs the suite described by `cfg` and prints a db_bench-style line per run as it goes.
pub fn run(cfg: &Config) -> BenchResult<SuiteResults> {
    let values = ValuePool::new(VALUE_SEED, workloads::largest_value(cfg.value_size));
    let mut processes = Vec::new();
    let mut engines = Vec::new();
    for &kind in &cfg.engines {
        let (process, version) = EngineProcess::start(kind, cfg)?;
        processes.push(process);
        engines.push(EngineRun::started(kind, version));
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

    let mut live = Live::new(cfg.use_existing_db);
    for round in 0..cfg.repeat {
        if cfg.repeat > 1 {
            println!("-- repeat {}/{}", round + 1, cfg.repeat);
        }
        for (pos, &bench) in cfg.benchmarks.iter().enumerate() {
            if bench == Benchmark::Stats {
                for process in &mut processes {
                    let (text, levels) = process.stats()?;
                    report::print_stats(process.kind(), text.as_deref(), levels.as_deref());
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
            live.apply(&Workload::at(cfg, bench, pos, &values))?;
            for (ei, process) in processes.iter_mut().enumerate() {
                let dir = cfg.db.join(process.kind().name());
                let before = process.io();
                let mut result = process.run(pos, bench, occurrences[pos])?;
                if cfg.settle {
                    settle_engine(process.kind(), &dir, cfg);
                }
                result.disk = Some(DiskUse::between(before, process.io(), &dir, live.bytes()));
                report::print_run(&label(bench, occurrences[pos]), process.kind(), &result);
                series[pos * cfg.engines.len() + ei].runs.push(result);
            }
        }
    }
    for (engine, process) in engines.iter_mut().zip(processes) {
        engine.memory = process.close()?;
    }
    series.retain(|s| !s.runs.is_empty());
    Ok(SuiteResults { engines, series })
}

fn settle_engine(kind: EngineKind, dir: &Path, cfg: &Config) {
    let progress = ProgressRun::start(cfg.progress, None, format!("{} settling", kind.name()));
    let (waited, gave_up) = settle::wait_idle(dir, SETTLE_LIMIT);
    progress.finish();
    if gave_up {
        println!(
            "   note: {} was still busy after {:.0} s; the next run may overlap its compactions",
            kind.name(),
            waited.as_secs_f64()
        );
    }
}
