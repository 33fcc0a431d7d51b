//! `--json FILE`: the suite's results as a JSON array, one object per workload and engine.
//!
//! ```json
//! [{"engine": "strata", "engine_version": "Strata 0.1.0", "benchmark": "readrandom",
//!   "occurrence": 2, "micros_per_op": 1.93, "micros_per_op_min": 1.90,
//!   "micros_per_op_max": 2.10, "mb_per_s": null, "ops": 1000000, "found": 632000,
//!   "ratio_to_strata": null, "p50_us": null, "p99_us": null, "p999_us": null,
//!   "write_amplification": null, "space_amplification": 0.61, "dir_bytes": 70254592,
//!   "peak_rss_bytes": 48234496, "peak_anon_rss_bytes": 20123648,
//!   "num": 1000000, "value_size": 100, "threads": 1, "value_separation": null,
//!   "rocksdb_mmap_reads": true,
//!   "repeats": [{"micros_per_op": 1.93, "mb_per_s": null, "ops": 1000000,
//!                "seconds": 1.93, "found": 632000, "p50_us": null, "p99_us": null,
//!                "p999_us": null, "trace": null, "user_bytes_written": 0,
//!                "disk_write_bytes": null, "disk_read_bytes": 0, "dir_bytes": 70254592,
//!                "live_bytes": 115998112, "write_amplification": null,
//!                "space_amplification": 0.61}, ...]}]
//! ```
//! `trace` is set for `fillseq` and `fillrandom`: `{"median_us", "max_us", "stalls",
//! "batches"}` over batches of 1000 writes, `stalls` counting those over 10× the median.
//! `micros_per_op`, `mb_per_s`, the percentiles (where every op was timed), the
//! amplifications and `dir_bytes` are medians over the repeats; `occurrence` tells apart a
//! workload listed more than once. The byte counts of a repeat are those of the `disk`
//! module (`disk_write_bytes` null where the file system does not account them);
//! `peak_*_rss_bytes` are the engine's process's, over the whole run (the same in each of
//! its records; see `memory`).

use std::path::Path;

use serde::Serialize;

use super::config::Config;
use super::engine::BenchResult;
use super::report::ratio_to_strata;
use super::stats::{Latency, RunResult, TraceSummary};
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
    p50_us: Option<f64>,
    p99_us: Option<f64>,
    p999_us: Option<f64>,
    write_amplification: Option<f64>,
    space_amplification: Option<f64>,
    dir_bytes: Option<u64>,
    peak_rss_bytes: Option<u64>,
    peak_anon_rss_bytes: Option<u64>,
    num: u64,
    value_size: usize,
    threads: usize,
    value_separation: Option<usize>,
    rocksdb_mmap_reads: bool,
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
    p999_us: Option<f64>,
    trace: Option<TraceSummary>,
    user_bytes_written: u64,
    disk_write_bytes: Option<u64>,
    disk_read_bytes: Option<u64>,
    dir_bytes: Option<u64>,
    live_bytes: Option<u64>,
    write_amplification: Option<f64>,
    space_amplification: Option<f64>,
}

impl Repeat {
    fn of(r: &RunResult) -> Repeat {
        let q = |q: fn(&Latency) -> f64| r.latency.as_ref().map(q);
        Repeat {
            micros_per_op: r.micros_per_op,
            mb_per_s: r.mb_per_s,
            ops: r.ops,
            seconds: r.seconds,
            found: r.found,
            p50_us: q(|l| l.p50_us),
            p99_us: q(|l| l.p99_us),
            p999_us: q(|l| l.p999_us),
            trace: r.trace_summary(),
            user_bytes_written: r.user_bytes_written,
            disk_write_bytes: r.disk.and_then(|d| d.written),
            disk_read_bytes: r.disk.and_then(|d| d.read),
            dir_bytes: r.disk.map(|d| d.dir_bytes),
            live_bytes: r.disk.and_then(|d| d.live_bytes),
            write_amplification: r.write_amplification(),
            space_amplification: r.space_amplification(),
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
            let engine = results.engines.iter().find(|e| e.kind == s.engine);
            let memory = engine.map(|e| e.memory).unwrap_or_default();
            let latency = |q: fn(&Latency) -> f64| s.median_of(|r| r.latency.as_ref().map(q));
            let median = s.median_run();
            Record {
                engine: s.engine.name(),
                engine_version: engine.map_or("", |e| e.version.as_str()),
                benchmark: s.bench.name(),
                occurrence: s.occurrence,
                micros_per_op: s.median_micros(),
                micros_per_op_min: lo,
                micros_per_op_max: hi,
                mb_per_s: s.median_mb(),
                ops: median.map_or(0, |r| r.ops),
                found: median.and_then(|r| r.found),
                ratio_to_strata: ratio_to_strata(results, s),
                p50_us: latency(|l| l.p50_us),
                p99_us: latency(|l| l.p99_us),
                p999_us: latency(|l| l.p999_us),
                write_amplification: s.median_of(RunResult::write_amplification),
                space_amplification: s.median_of(RunResult::space_amplification),
                dir_bytes: s
                    .median_of(|r| r.disk.map(|d| d.dir_bytes as f64))
                    .map(|b| b as u64),
                peak_rss_bytes: memory.rss,
                peak_anon_rss_bytes: memory.anon_rss,
                num: cfg.num,
                value_size: cfg.value_size,
                threads: cfg.threads,
                value_separation: s.engine.options(&cfg.options).value_separation,
                rocksdb_mmap_reads: cfg.options.rocksdb_mmap_reads,
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
    use super::super::memory::PeakMemory;
    use super::super::stats::sample_run;
    use super::super::suite::{EngineRun, Series};
    use super::*;

    fn run(micros: f64) -> RunResult {
        RunResult {
            ops: 10,
            seconds: 0.5,
            found: Some(7),
            ..sample_run(micros)
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
        let mut strata = EngineRun::started(EngineKind::Strata, "Strata 0.1.0");
        strata.memory = PeakMemory {
            rss: Some(40 << 20),
            anon_rss: None,
        };
        let results = SuiteResults {
            engines: vec![
                strata,
                EngineRun::started(EngineKind::Leveldb, "LevelDB 1.23"),
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
        assert_eq!(records[0]["peak_rss_bytes"], 40 << 20);
        assert!(leveldb["peak_rss_bytes"].is_null());
        for field in [
            "p999_us",
            "write_amplification",
            "space_amplification",
            "dir_bytes",
            "peak_anon_rss_bytes",
            "value_separation",
        ] {
            assert!(leveldb[field].is_null(), "{field}: {leveldb}");
        }
        assert_eq!(leveldb["rocksdb_mmap_reads"], true);
        assert_eq!(leveldb["repeats"][0]["user_bytes_written"], 0);
    }
}
