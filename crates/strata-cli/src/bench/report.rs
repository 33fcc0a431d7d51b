//! What the suite prints: a db_bench-style header, one line per run as it finishes, and the
//! comparison table at the end.
//!
//! The table gives, per workload and engine, the median µs/op over the repeats with its
//! min–max, the median MB/s, and the ratio to Strata: the engine's median µs/op divided by
//! Strata's, so a value above 1 means Strata is faster by that factor.

use std::fmt::Write as _;

use hdrhistogram::Histogram;

use super::config::{Config, EngineKind};
use super::keys::KEY_SIZE;
use super::stats::{RunResult, TraceSummary, STALL_FACTOR, TRACE_BATCH};
use super::suite::{Series, SuiteResults};

/// Bytes as a short human size (`4 MiB`, `512 B`).
pub fn size(bytes: usize) -> String {
    if bytes >= 1 << 20 && bytes % (1 << 20) == 0 {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes % (1 << 10) == 0 {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{bytes} B")
    }
}

/// µs with about four significant digits: `0.412`, `12.35`, `842.1`, `37351`.
pub fn micros(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.3}")
    } else if v < 100.0 {
        format!("{v:.2}")
    } else if v < 10_000.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

/// The header: engines, sizes, options (db_bench prints the same facts).
pub fn print_header(cfg: &Config, engines: &[(EngineKind, String)]) {
    let names: Vec<&str> = engines.iter().map(|(_, v)| v.as_str()).collect();
    println!("strata bench: {}", names.join(", "));
    if engines.len() == 1
        && engines
            .first()
            .is_some_and(|(k, _)| *k == EngineKind::Strata)
    {
        if cfg!(any(feature = "leveldb", feature = "rocksdb")) {
            println!("Strata alone (no peer requested with --engines).");
        } else {
            println!(
                "Strata alone: this binary has no peer engine (build with \
                 `--features leveldb,rocksdb`, as `make bench` does)."
            );
        }
    }
    if cfg!(debug_assertions) {
        println!("WARNING: built without optimizations; timings are not meaningful");
    }
    let raw = (KEY_SIZE + cfg.value_size) as f64 * cfg.num as f64 / 1048576.0;
    let file = (KEY_SIZE as f64 + cfg.value_size as f64 * 0.5) * cfg.num as f64 / 1048576.0;
    println!("Keys:       {KEY_SIZE} bytes each");
    println!(
        "Values:     {} bytes each ({} bytes after compression)",
        cfg.value_size,
        cfg.value_size / 2
    );
    println!("Entries:    {}", cfg.num);
    println!("RawSize:    {raw:.1} MB (estimated)");
    println!("FileSize:   {file:.1} MB (estimated)");
    let o = &cfg.options;
    println!(
        "Options:    write buffer {}, block {}, table {}, block cache {}, bloom {}, {}, \
         compactions merged on up to {} thread(s) (not LevelDB)",
        size(o.write_buffer_size),
        size(o.block_size),
        size(o.max_file_size),
        size(o.cache_size),
        o.bloom_bits
            .map_or("off".to_owned(), |b| format!("{b} bits/key")),
        o.compression.name(),
        o.subcompactions
    );
    if let Some(size) = o.value_separation {
        println!(
            "Separated:  values of {} and more beside the tree (Strata's value files, RocksDB's BlobDB; \
             LevelDB keeps them in its tables)",
            self::size(size)
        );
    }
    println!(
        "Runs:       {} repeat(s), {} thread(s), {}",
        cfg.repeat,
        cfg.threads,
        if cfg.settle {
            "engines settle between runs (untimed)"
        } else {
            "back to back (--no_settle)"
        }
    );
    println!("Databases:  {}/<engine>", cfg.db.display());
    println!("------------------------------------------------");
}

/// One db_bench-style line for a finished run, plus its histogram when asked.
pub fn print_run(label: &str, engine: EngineKind, r: &RunResult, histogram: bool) {
    let mut line = format!(
        "{label:<16} {:<8}: {:>11.3} micros/op;",
        engine.name(),
        r.micros_per_op
    );
    if let Some(mb) = r.mb_per_s {
        let _ = write!(line, " {mb:>7.1} MB/s");
    }
    if let Some(found) = r.found {
        let _ = write!(line, " ({found} of {} found)", r.ops);
    }
    println!("{line}");
    if let Some(t) = r.trace_summary() {
        println!("{}", trace_line(&t));
    }
    if histogram {
        if let Some(h) = &r.histogram {
            println!("{}", histogram_line(h));
        }
    }
}

/// The stall test's line: how the slowest batch of 1000 ops compares with the median one.
pub fn trace_line(t: &TraceSummary) -> String {
    format!(
        "    batches of {TRACE_BATCH}: median {:.3} µs/op, max {:.3} ({:.1}x the median), {} of {} over {STALL_FACTOR}x",
        t.median_us,
        t.max_us,
        t.max_us / t.median_us.max(f64::MIN_POSITIVE),
        t.stalls,
        t.batches
    )
}

/// Percentiles of a nanosecond histogram, in µs.
pub fn histogram_line(h: &Histogram<u64>) -> String {
    let us = |q: f64| h.value_at_quantile(q) as f64 / 1000.0;
    format!(
        "    latency µs: mean {:.3}  p50 {:.3}  p75 {:.3}  p99 {:.3}  p99.9 {:.3}  max {:.3}  (n={})",
        h.mean() / 1000.0,
        us(0.50),
        us(0.75),
        us(0.99),
        us(0.999),
        h.max() as f64 / 1000.0,
        h.len()
    )
}

/// An engine's statistics text, for the `stats` workload.
pub fn print_stats(engine: EngineKind, text: Option<&str>, levels: Option<&str>) {
    println!("stats of {}:", engine.name());
    if let Some(levels) = levels {
        println!("  table files per level: {levels}");
    }
    match text {
        Some(t) => println!("{t}"),
        None => println!("  (no statistics available)"),
    }
}

/// The comparison table of a finished suite.
pub fn table(results: &SuiteResults, repeat: usize) -> String {
    let has_strata = results
        .engines
        .iter()
        .any(|(k, _)| *k == EngineKind::Strata);
    let mut out = String::new();
    let spread_head = if repeat > 1 { "(min–max)" } else { "" };
    let _ = writeln!(
        out,
        "{:<16} {:<8} {:>11} {:<21} {:>8} {:>10}",
        "benchmark",
        "engine",
        "µs/op",
        spread_head,
        "MB/s",
        if has_strata { "vs strata" } else { "" }
    );
    let _ = writeln!(out, "{}", "-".repeat(79));
    let mut last_pos = None;
    for s in &results.series {
        let name = if last_pos == Some(s.pos) {
            String::new()
        } else {
            s.label()
        };
        last_pos = Some(s.pos);
        let (lo, hi) = s.spread_micros();
        let spread = if repeat > 1 {
            format!("({}–{})", micros(lo), micros(hi))
        } else {
            String::new()
        };
        let mb = s.median_mb().map_or("-".to_owned(), |m| format!("{m:.1}"));
        let ratio = if has_strata {
            ratio_to_strata(results, s).map_or("-".to_owned(), |r| format!("{r:.2}"))
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "{name:<16} {:<8} {:>11} {spread:<21} {mb:>8} {ratio:>10}",
            s.engine.name(),
            micros(s.median_micros()),
        );
    }
    if has_strata {
        let _ = writeln!(
            out,
            "vs strata = engine's median µs/op / Strata's (above 1: Strata is faster)"
        );
    }
    if repeat > 1 {
        let _ = writeln!(out, "medians of {repeat} repeats; (min–max) across them");
    }
    out
}

/// `s`'s median µs/op over Strata's on the same workload position; `None` for Strata itself
/// or when Strata did not run it.
pub fn ratio_to_strata(results: &SuiteResults, s: &Series) -> Option<f64> {
    if s.engine == EngineKind::Strata {
        return None;
    }
    let strata = results
        .series
        .iter()
        .find(|o| o.pos == s.pos && o.engine == EngineKind::Strata)?;
    let base = strata.median_micros();
    (base > 0.0).then(|| s.median_micros() / base)
}

#[cfg(test)]
mod tests {
    use super::super::config::Benchmark;
    use super::*;

    fn run(micros: f64) -> RunResult {
        RunResult {
            ops: 100,
            micros_per_op: micros,
            mb_per_s: Some(10.0),
            seconds: 1.0,
            found: None,
            histogram: None,
            trace: None,
        }
    }

    fn series(engine: EngineKind, micros: &[f64]) -> Series {
        Series {
            pos: 0,
            bench: Benchmark::Fillseq,
            occurrence: 1,
            engine,
            runs: micros.iter().map(|&m| run(m)).collect(),
        }
    }

    #[test]
    fn ratio_is_peer_over_strata_medians() {
        let results = SuiteResults {
            engines: vec![
                (EngineKind::Strata, "Strata".into()),
                (EngineKind::Leveldb, "LevelDB".into()),
            ],
            series: vec![
                series(EngineKind::Strata, &[1.0, 2.0, 9.0]),
                series(EngineKind::Leveldb, &[3.0, 4.0, 5.0]),
            ],
        };
        let leveldb = &results.series[1];
        assert_eq!(ratio_to_strata(&results, leveldb), Some(2.0));
        assert_eq!(ratio_to_strata(&results, &results.series[0]), None);
        let t = table(&results, 3);
        assert!(t.contains("fillseq"));
        assert!(t.contains("strata") && t.contains("leveldb"));
        assert!(t.contains("2.00"));
        assert!(t.contains("(1.000–9.000)"));
        assert_eq!(micros(37350.527), "37351");
        assert_eq!(micros(12.3456), "12.35");
    }

    #[test]
    fn sizes_read_naturally() {
        assert_eq!(size(4 << 20), "4 MiB");
        assert_eq!(size(4096), "4 KiB");
        assert_eq!(size(512), "512 B");
        assert_eq!(size(1536), "1536 B");
    }
}
