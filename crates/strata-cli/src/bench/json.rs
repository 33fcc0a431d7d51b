//! `--json FILE`: the suite's results as a JSON array, one object per workload and engine.
//!
//! ```json
//! [{"engine": "strata", "engine_version": "Strata 0.1.0", "benchmark": "readrandom",
//!   "occurrence": 2, "micros_per_op": 1.93, "micros_per_op_min": 1.90,
//!   "micros_per_op_max": 2.10, "mb_per_s": null, "ops": 1000000, "found": 632000,
//!   "ratio_to_strata": null, "num": 1000000, "value_size": 100, "threads": 1,
//!   "repeats": [{"micros_per_op": 1.93, "mb_per_s": null, "ops": 1000000,
//!                "seconds": 1.93, "found": 632000, "p50_us": null, "p99_us": null}, ...]}]
//! ```
//! `micros_per_op` and `mb_per_s` are medians over the repeats; `occurrence` tells apart a
//! workload listed more than once.

use std::path::Path;

use serde::Serialize;

use super::config::Config;
use super::engine::BenchResult;
use super::report::ratio_to_strata;
use super::stats::RunResult;
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
