//! `--json FILE`: the suite's results as a JSON array, one object per workload and engine.
//!
//! ```json
//! [{"engine": "strata", "engine_version": "Strata 0.1.0", "benchmark": "readrandom",
//!   "occurrence": 2, "micros_per_op": 1.93, "micros_per_op_min": 1.90,
//!   "micros_per_op_max": 2.10, "mb_per_s": null, "ops": 1000000, "found": 632000,
//!   "ratio_to_strata": null, "num": 1000000, "value_size": 100, "threads": 1,
//!   "repeats": [{"micros_per_op": 1.93, "mb_per_s": null, "ops": 1000000,
//!                "seconds": 1.93, "found": 632000, "p50_us": null, "p99_us": null,
//!                "trace": null}, ...]}]
//! ```
//! `trace` is set for `fillseq` and `fillrandom`: `{"median_us", "max_us", "stalls",
//! "batches"}` over batches of 1000 writes, `stalls` counting those over 10× the median.
//! `micros_per_op` and `mb_per_s` are medians over the repeats; `occurrence` tells apart a
//! workload listed more than once.

use std::path::Path;

use serde::Serialize;

use super::config::Config;
use super::engine::BenchResult;
use super::report::ratio_to_strata;
use super::stats::{RunResult, TraceSummary};
use super::suite::SuiteResults;

#[derive(Serialize)]
struct Record<'a> {
    engine: &'a str,
    engine_version: &'a str,
    benchmark: &'a str,
    occurrence: usize,
    micros_per_op: f64,
    micros_per_op_min: f64,
    micros_per_op_max: f64,
    mb_per_s: Option<f64>,
    ops: u64,
    found: Option<u64>,
    ratio_to_strata: Option<f64>,
    num: u64,
    value_size: usize,
    threads: usize,
    repeats: Vec<Repeat>,
}

#[derive(Serialize)]
struct Repeat {
    micros_per_op: f64,
    mb_per_s: Option<f64>,
    ops: u64,
    seconds: f64,
    found: Option<u64>,
    p50_us: Option<f64>,
    p99_us: Option<f64>,
    trace: Option<TraceSummary>,
}

impl Repeat {
    fn of(r: &RunResult) -> Repeat {
        let q = |q: f64| {
            r.histogram
                .as_ref()
                .map(|h| h.value_at_quantile(q) as f64 / 1000.0)
        };
        Repeat {
            micros_per_op: r.micros_per_op,
            mb_per_s: r.mb_per_s,
            ops: r.ops,
            seconds: r.seconds,
            found: r.found,
            p50_us: q(0.5),
            p99_us: q(0.99),
            trace: r.trace_summary(),
        }
    }
}

/// The JSON text for `results`.
pub fn to_json(cfg: &Config, results: &SuiteResults) -> BenchResult<String> {
    let records: Vec<Record<'_>> = results
        .series
        .iter()
        .map(|s| {
            let (lo, hi) = s.spread_micros();
            let version = results
                .engines
                .iter()
                .find(|(k, _)| *k == s.engine)
                .map_or("", |(_, v)| v.as_str());
            let median = s.median_run();
            Record {
                engine: s.engine.name(),
                engine_version: version,
                benchmark: s.bench.name(),
                occurrence: s.occurrence,
                micros_per_op: s.median_micros(),
                micros_per_op_min: lo,
                micros_per_op_max: hi,
                mb_per_s: s.median_mb(),
                ops: median.map_or(0, |r| r.ops),
                found: median.and_then(|r| r.found),
                ratio_to_strata: ratio_to_strata(results, s),
                num: cfg.num,
                value_size: cfg.value_size,
                threads: cfg.threads,
                repeats: s.runs.iter().map(Repeat::of).collect(),
            }
        })
        .collect();
    serde_json::to_string_pretty(&records).map_err(|e| format!("json: {e}"))
}

/// Writes `text` to `path`.
pub fn write(path: &Path, text: &str) -> BenchResult<()> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::super::config::{BenchOptions, Benchmark, EngineKind};
    use super::super::suite::Series;
    use super::*;

    fn run(micros: f64) -> RunResult {
        RunResult {
            ops: 10,
            micros_per_op: micros,
            mb_per_s: None,
            seconds: 0.5,
            found: Some(7),
            histogram: None,
            trace: None,
        }
    }

    #[test]
    fn records_carry_engine_benchmark_medians_and_every_repeat() {
        let cfg = Config {
            benchmarks: vec![Benchmark::Readrandom],
            engines: vec![EngineKind::Strata, EngineKind::Leveldb],
            num: 10,
            reads: None,
            value_size: 100,
            threads: 1,
            options: BenchOptions::default(),
            db: "/tmp/x".into(),
            use_existing_db: false,
            histogram: false,
            repeat: 3,
            settle: true,
            json: None,
            plot: None,
            sweep: None,
            progress: false,
        };
        let series = |engine, runs: &[f64]| Series {
            pos: 0,
            bench: Benchmark::Readrandom,
            occurrence: 1,
            engine,
            runs: runs.iter().map(|&m| run(m)).collect(),
        };
        let results = SuiteResults {
            engines: vec![
                (EngineKind::Strata, "Strata 0.1.0".into()),
                (EngineKind::Leveldb, "LevelDB 1.23".into()),
            ],
            series: vec![
                series(EngineKind::Strata, &[1.0, 3.0, 2.0]),
                series(EngineKind::Leveldb, &[4.0, 5.0, 6.0]),
            ],
        };
        let text = to_json(&cfg, &results).unwrap_or_else(|e| panic!("{e}"));
        let value: serde_json::Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
        let records = value.as_array().unwrap_or_else(|| panic!("not an array"));
        assert_eq!(records.len(), 2);
        let leveldb = &records[1];
        assert_eq!(leveldb["engine"], "leveldb");
        assert_eq!(leveldb["benchmark"], "readrandom");
        assert_eq!(leveldb["micros_per_op"], 5.0);
        assert_eq!(leveldb["ratio_to_strata"], 2.5);
        assert_eq!(leveldb["ops"], 10);
        assert!(leveldb["mb_per_s"].is_null());
        assert_eq!(leveldb["repeats"].as_array().map(Vec::len), Some(3));
        assert_eq!(records[0]["micros_per_op_min"], 1.0);
        assert!(records[0]["ratio_to_strata"].is_null());
    }
}
