//! What the suite prints: a db_bench-style header, one line per run as it finishes, and the
//! comparison table at the end.
//!
//! The table gives, per workload and engine, the median µs/op over the repeats with its
//! min–max, the median MB/s, and the ratio to Strata: the engine's median µs/op divided by
//! Strata's, so a value above 1 means Strata is faster by that factor. A second table gives
//! per workload and engine the latency percentiles (where every op was timed: `--histogram`,
//! `leveledmix`), write and space amplification and the directory's size (see `disk`),
//! medians over the repeats; a third each engine's peak memory (see `memory`).

use std::fmt::Write as _;

use super::config::{Config, EngineKind};
use super::keys::KEY_SIZE;
use super::memory::PeakMemory;
use super::stats::{Latency, RunResult, TraceSummary, STALL_FACTOR, TRACE_BATCH};
use super::suite::{EngineRun, Series, SuiteResults};

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

/// Bytes in MiB with one decimal.
fn mib(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / 1048576.0)
}

/// An optional figure with `decimals` decimals, `-` when absent.
fn figure(value: Option<f64>, decimals: usize) -> String {
    value.map_or("-".to_owned(), |v| format!("{v:.decimals$}"))
}

/// The header: engines, sizes, options (db_bench prints the same facts).
pub fn print_header(cfg: &Config, engines: &[EngineRun]) {
    let names: Vec<&str> = engines.iter().map(|e| e.version.as_str()).collect();
    println!("strata bench: {}", names.join(", "));
    if engines.len() == 1
        && engines
            .first()
            .is_some_and(|e| e.kind == EngineKind::Strata)
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
         compactions merged on up to {} thread(s) (not LevelDB), {} compaction(s) at once with \
         flushes apart (not LevelDB)",
        size(o.write_buffer_size),
        size(o.block_size),
        size(o.max_file_size),
        size(o.cache_size),
        o.bloom_bits
            .map_or("off".to_owned(), |b| format!("{b} bits/key")),
        o.compression.name(),
        o.subcompactions,
        o.background_jobs
    );
    if let Some(size) = o.value_separation {
        println!(
            "Separated:  values of {} and more beside the tree, compressed: {} (Strata's value \
             files, rocksdb-blob's BlobDB; LevelDB and rocksdb keep them in their tables)",
            self::size(size),
            o.compression.name()
        );
    }
    if engines.iter().any(|e| e.kind.is_rocksdb()) {
        println!(
            "RocksDB:    {}",
            if o.rocksdb_mmap_reads {
                "tables read through mmap (allow_mmap_reads, as LevelDB and Strata; \
                 --rocksdb_mmap_reads false: a pread per block)"
            } else {
                "a pread per block read (allow_mmap_reads off, RocksDB's default)"
            }
        );
    }
    println!(
        "Measured:   each engine in its own process: its peak RSS; bytes it wrote per byte put \
         (/proc/<pid>/io write_bytes, settling included); its directory's size per live byte"
    );
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
pub fn print_run(label: &str, engine: EngineKind, r: &RunResult) {
    let mut line = format!(
        "{label:<16} {:<12}: {:>11.3} micros/op;",
        engine.name(),
        r.micros_per_op
    );
    if let Some(mb) = r.mb_per_s {
        let _ = write!(line, " {mb:>7.1} MB/s");
    }
    if let Some(found) = r.found {
        let _ = write!(line, " ({found} of {} found)", r.ops);
    }
    let amplifications: Vec<String> = [
        ("write amp", r.write_amplification()),
        ("space amp", r.space_amplification()),
    ]
    .into_iter()
    .filter_map(|(name, v)| Some(format!("{name} {:.2}", v?)))
    .collect();
    if !amplifications.is_empty() {
        let separator = if line.ends_with(';') { "" } else { ";" };
        let _ = write!(line, "{separator} {}", amplifications.join(", "));
    }
    println!("{line}");
    if let Some(t) = r.trace_summary() {
        println!("{}", trace_line(&t));
    }
    if let Some(l) = &r.latency {
        println!("{}", latency_line(l));
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

/// A run's latency percentiles, in µs.
pub fn latency_line(l: &Latency) -> String {
    format!(
        "    latency µs: mean {:.3}  p50 {:.3}  p75 {:.3}  p99 {:.3}  p99.9 {:.3}  max {:.3}  (n={})",
        l.mean_us, l.p50_us, l.p75_us, l.p99_us, l.p999_us, l.max_us, l.count
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
    let has_strata = results.engines.iter().any(|e| e.kind == EngineKind::Strata);
    let mut out = String::new();
    let spread_head = if repeat > 1 { "(min–max)" } else { "" };
    let _ = writeln!(
        out,
        "{:<16} {:<12} {:>11} {:<21} {:>8} {:>10}",
        "benchmark",
        "engine",
        "µs/op",
        spread_head,
        "MB/s",
        if has_strata { "vs strata" } else { "" }
    );
    let _ = writeln!(out, "{}", "-".repeat(83));
    for (name, s) in rows(results) {
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
            "{name:<16} {:<12} {:>11} {spread:<21} {mb:>8} {ratio:>10}",
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
    out.push('\n');
    footprint_table(&mut out, results);
    out.push('\n');
    memory_table(&mut out, &results.engines);
    out
}

/// The series with the workload's label on the first row of each workload, blank after.
fn rows(results: &SuiteResults) -> impl Iterator<Item = (String, &Series)> {
    let mut last_pos = None;
    results.series.iter().map(move |s| {
        let name = if last_pos == Some(s.pos) {
            String::new()
        } else {
            s.label()
        };
        last_pos = Some(s.pos);
        (name, s)
    })
}

/// Latency percentiles, amplifications and directory sizes, medians over the repeats.
fn footprint_table(out: &mut String, results: &SuiteResults) {
    let _ = writeln!(
        out,
        "{:<16} {:<12} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "benchmark", "engine", "p50 µs", "p99 µs", "p99.9 µs", "write amp", "space amp", "disk MiB"
    );
    let _ = writeln!(out, "{}", "-".repeat(89));
    for (name, s) in rows(results) {
        let latency = |q: fn(&Latency) -> f64| s.median_of(|r| r.latency.as_ref().map(q));
        let us = |q| latency(q).map_or("-".to_owned(), micros);
        let disk = s.median_of(|r| r.disk.map(|d| d.dir_bytes as f64));
        let _ = writeln!(
            out,
            "{name:<16} {:<12} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
            s.engine.name(),
            us(|l| l.p50_us),
            us(|l| l.p99_us),
            us(|l| l.p999_us),
            figure(s.median_of(RunResult::write_amplification), 2),
            figure(s.median_of(RunResult::space_amplification), 2),
            figure(disk.map(|b| b / 1048576.0), 1),
        );
    }
    let _ = writeln!(
        out,
        "write amp = bytes the engine's process wrote / bytes of keys and values put; \
         space amp = directory size / live keys and values"
    );
}

/// Each engine's peak memory over the suite.
fn memory_table(out: &mut String, engines: &[EngineRun]) {
    let _ = writeln!(
        out,
        "{:<16} {:>13} {:>18}",
        "engine", "peak RSS MiB", "peak anon RSS MiB"
    );
    let _ = writeln!(out, "{}", "-".repeat(49));
    for e in engines {
        let PeakMemory { rss, anon_rss } = e.memory;
        let _ = writeln!(
            out,
            "{:<16} {:>13} {:>18}",
            e.kind.name(),
            rss.map_or("-".to_owned(), mib),
            anon_rss.map_or("-".to_owned(), mib),
        );
    }
    let _ = writeln!(
        out,
        "peak RSS = every resident page, mapped table files' included; peak anon RSS = heap, \
         caches and memtables alone (sampled every 100 ms)"
    );
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
    use super::super::disk::DiskUse;
    use super::super::stats::sample_run;
    use super::*;

    fn run(micros: f64) -> RunResult {
        RunResult {
            mb_per_s: Some(10.0),
            ..sample_run(micros)
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
                EngineRun::started(EngineKind::Strata, "Strata"),
                EngineRun::started(EngineKind::Leveldb, "LevelDB"),
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
    fn second_table_has_percentiles_amplifications_and_sizes_third_peak_memory() {
        let measured = RunResult {
            user_bytes_written: 1000,
            latency: Some(Latency {
                mean_us: 2.0,
                p50_us: 1.5,
                p75_us: 2.0,
                p99_us: 40.0,
                p999_us: 900.0,
                max_us: 1000.0,
                count: 100,
            }),
            disk: Some(DiskUse {
                written: Some(3000),
                read: Some(0),
                dir_bytes: 3 << 20,
                live_bytes: Some(2 << 20),
            }),
            ..sample_run(2.0)
        };
        let mut strata = EngineRun::started(EngineKind::Strata, "Strata");
        strata.memory = PeakMemory {
            rss: Some(50 << 20),
            anon_rss: Some(20 << 20),
        };
        let results = SuiteResults {
            engines: vec![
                strata,
                EngineRun::started(EngineKind::RocksdbBlob, "RocksDB"),
            ],
            series: vec![
                Series {
                    runs: vec![measured],
                    ..series(EngineKind::Strata, &[])
                },
                series(EngineKind::RocksdbBlob, &[3.0]),
            ],
        };
        let t = table(&results, 1);
        let row = |engine: &str, after: &str| {
            t.lines()
                .skip_while(|l| !l.contains(after))
                .find(|l| l.contains(engine))
                .unwrap_or_else(|| panic!("no {engine} row after {after}:\n{t}"))
                .split_whitespace()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            row("strata", "write amp"),
            ["fillseq", "strata", "1.500", "40.00", "900.0", "3.00", "1.50", "3.0"]
        );
        assert_eq!(
            row("rocksdb-blob", "write amp"),
            ["rocksdb-blob", "-", "-", "-", "-", "-", "-"]
        );
        assert_eq!(row("strata", "peak RSS"), ["strata", "50.0", "20.0"]);
        assert_eq!(row("rocksdb-blob", "peak RSS"), ["rocksdb-blob", "-", "-"]);
    }

    #[test]
    fn sizes_read_naturally() {
        assert_eq!(size(4 << 20), "4 MiB");
        assert_eq!(size(4096), "4 KiB");
        assert_eq!(size(512), "512 B");
        assert_eq!(size(1536), "1536 B");
    }
}
