//! `strata bench` end to end on a small database: it exits 0 and prints the comparison table
//! with every engine. No timing is asserted (the machine is shared and noisy); what the
//! engines did is (amplifications, memory, keys found).
//!
//! The databases go under cargo's target directory rather than the system's temporary one:
//! write amplification needs a file system that accounts written pages, which tmpfs does not.

use std::path::Path;
use std::process::Command;

fn strata() -> Command {
    Command::new(env!("CARGO_BIN_EXE_strata"))
}

/// A fresh directory on the disk cargo builds on.
fn disk_tempdir() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap_or_else(|e| panic!("tempdir: {e}"))
}

/// Runs `strata bench` with `args` in a fresh directory; returns stdout, failing the test with
/// stderr on a non-zero exit.
fn bench(args: &[&str]) -> String {
    let dir = disk_tempdir();
    bench_in(dir.path(), args)
}

/// [`bench`] with the databases under `dir`.
fn bench_in(dir: &Path, args: &[&str]) -> String {
    let db = dir.join("db");
    let out = strata()
        .arg("bench")
        .arg("--db")
        .arg(&db)
        .arg("--no_progress")
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run strata: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "strata bench {args:?} failed ({})\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    stdout
}

/// The rows of the final table (after the header line that starts with `benchmark`).
fn table_rows(stdout: &str) -> Vec<&str> {
    rows_after(stdout, |l| l.starts_with("benchmark"))
}

/// The rows of the table whose header line `is_header` picks, to the first blank or note line.
fn rows_after(stdout: &str, is_header: impl Fn(&str) -> bool) -> Vec<&str> {
    stdout
        .lines()
        .skip_while(|l| !is_header(l))
        .skip(2)
        .take_while(|l| !l.trim().is_empty() && !l.starts_with("vs strata") && !l.contains(" = "))
        .collect()
}

/// The rows of the second table (latency, amplification, size) as (workload, engine,
/// [p50, p99, p99.9, write amp, space amp, disk MiB]), `None` for `-`; a row without its
/// workload's name belongs to the workload above.
fn footprint_rows(stdout: &str) -> Vec<(String, String, Vec<Option<f64>>)> {
    let mut workload = String::new();
    rows_after(stdout, |l| {
        l.contains("write amp") && l.starts_with("benchmark")
    })
    .into_iter()
    .map(|row| {
        let mut cells: Vec<&str> = row.split_whitespace().collect();
        if cells.len() == 8 {
            workload = cells.remove(0).to_owned();
        }
        let engine = cells.remove(0).to_owned();
        let figures = cells.iter().map(|c| c.parse::<f64>().ok()).collect();
        (workload.clone(), engine, figures)
    })
    .collect()
}

/// The third table: each engine's (peak RSS, peak anonymous RSS) in MiB.
fn memory_rows(stdout: &str) -> Vec<(String, f64, f64)> {
    rows_after(stdout, |l| l.contains("peak RSS MiB"))
        .into_iter()
        .map(|row| {
            let cells: Vec<&str> = row.split_whitespace().collect();
            let mib = |i: usize| cells.get(i).and_then(|c| c.parse().ok()).unwrap_or(-1.0);
            (cells[0].to_owned(), mib(1), mib(2))
        })
        .collect()
}

/// How many files in `dir` have names ending in `suffix`.
fn files_ending(dir: &Path, suffix: &str) -> usize {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(suffix))
        .count()
}

/// Runs `strata bench` with `args` and `--json` in a fresh directory; returns stdout and the
/// JSON records.
fn bench_json(args: &[&str]) -> (String, Vec<serde_json::Value>) {
    let dir = disk_tempdir();
    let json = dir.path().join("out/results.json");
    let json_arg = json.to_string_lossy().into_owned();
    let args: Vec<&str> = args.iter().copied().chain(["--json", &json_arg]).collect();
    let stdout = bench_in(dir.path(), &args);
    let records = json_records(&json);
    (stdout, records)
}

/// The JSON records of a run.
fn json_records(path: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read json: {e}"));
    let value: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("json: {e}\n{text}"));
    value
        .as_array()
        .cloned()
        .unwrap_or_else(|| panic!("not an array: {text}"))
}

/// The record of `workload` on `engine`.
fn record<'a>(
    records: &'a [serde_json::Value],
    workload: &str,
    engine: &str,
) -> &'a serde_json::Value {
    records
        .iter()
        .find(|r| r["benchmark"] == workload && r["engine"] == engine)
        .unwrap_or_else(|| panic!("no record of {workload} on {engine}"))
}

#[cfg(feature = "leveldb")]
#[test]
fn bench_runs_strata_and_leveldb_side_by_side() {
    let stdout = bench(&[
        "--num",
        "10000",
        "--engines",
        "strata,leveldb",
        "--benchmarks",
        "fillseq,readrandom,readseq",
    ]);
    let rows = table_rows(&stdout);
    assert_eq!(rows.len(), 6, "3 workloads x 2 engines:\n{stdout}");
    for workload in ["fillseq", "readrandom", "readseq"] {
        assert!(
            rows.iter().any(|r| r.starts_with(workload)),
            "{workload}:\n{stdout}"
        );
    }
    let strata_rows = rows.iter().filter(|r| r.contains(" strata ")).count();
    let leveldb_rows = rows.iter().filter(|r| r.contains(" leveldb ")).count();
    assert_eq!((strata_rows, leveldb_rows), (3, 3), "\n{stdout}");
    assert!(
        stdout.contains("vs strata"),
        "ratio column missing:\n{stdout}"
    );
    // Every key written by fillseq is found by readrandom, on both engines.
    assert_eq!(
        stdout.matches("(10000 of 10000 found)").count(),
        2,
        "\n{stdout}"
    );
}

#[cfg(feature = "leveldb")]
#[test]
fn batched_reads_and_range_deletes_run_on_both_engines() {
    let stdout = bench(&[
        "--num",
        "10000",
        "--engines",
        "strata,leveldb",
        "--benchmarks",
        "fillseq,multireadrandom,deleterange,scandeleted,readseq",
    ]);
    let rows = table_rows(&stdout);
    assert_eq!(rows.len(), 10, "5 workloads x 2 engines:\n{stdout}");
    // get_many finds every key fillseq wrote, on both engines (LevelDB's are single gets).
    assert_eq!(
        stdout.matches("(10000 of 10000 found)").count(),
        2,
        "\n{stdout}"
    );
    // After deleterange nothing is left to scan: the scans move no bytes on either engine.
    for line in stdout
        .lines()
        .filter(|l| l.starts_with("scandeleted") || l.starts_with("readseq"))
        .filter(|l| l.contains("micros/op"))
    {
        assert!(
            !line.contains("MB/s") || line.contains(" 0.0 MB/s"),
            "{line}\n{stdout}"
        );
    }
}

#[test]
fn value_separation_keeps_large_values_in_value_files_and_reads_them_back() {
    let dir = disk_tempdir();
    let db = dir.path().join("db");
    let out = strata()
        .args([
            "bench",
            "--no_progress",
            "--engines",
            "strata",
            "--num",
            "2000",
        ])
        .args(["--value_size", "8192", "--value_separation", "4096"])
        .args(["--benchmarks", "fillseq,readrandom", "--db"])
        .arg(&db)
        .output()
        .unwrap_or_else(|e| panic!("cannot run strata: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("Separated:  values of 4 KiB and more"),
        "\n{stdout}"
    );
    assert!(stdout.contains("(2000 of 2000 found)"), "\n{stdout}");
    let value_files = files_ending(&db.join("strata"), ".vlog");
    assert!(value_files > 0, "no value file written\n{stdout}");
}

#[test]
fn every_run_reports_amplification_latency_and_the_engines_peak_memory() {
    let (stdout, records) = bench_json(&[
        "--num",
        "2000",
        "--engines",
        "strata",
        "--value_size",
        "4096",
        "--value_separation",
        "2048",
        // Uncompressed, every byte put reaches the disk at least once (checked below).
        "--compression",
        "none",
        "--benchmarks",
        "fillrandom,overwrite,readrandom,headrandom,leveledmix",
    ]);
    assert!(
        stdout.contains("Measured:   each engine in its own process"),
        "\n{stdout}"
    );
    let rows = footprint_rows(&stdout);
    assert_eq!(rows.len(), 5, "one row per workload:\n{stdout}");
    let figures = |workload: &str| {
        rows.iter()
            .find(|(w, _, _)| w == workload)
            .map(|(_, _, f)| f.clone())
            .unwrap_or_else(|| panic!("no {workload} row:\n{stdout}"))
    };
    // [p50, p99, p99.9, write amp, space amp, disk MiB]
    for workload in ["fillrandom", "overwrite", "leveledmix"] {
        let f = figures(workload);
        let write_amp = f[3].unwrap_or_else(|| panic!("{workload}: no write amp\n{stdout}"));
        // Every byte put reaches the log at least: nothing written below 1.
        assert!(
            (1.0..50.0).contains(&write_amp),
            "{workload}: {write_amp}\n{stdout}"
        );
        let space_amp = f[4].unwrap_or_else(|| panic!("{workload}: no space amp\n{stdout}"));
        assert!(
            (0.2..20.0).contains(&space_amp),
            "{workload}: {space_amp}\n{stdout}"
        );
        assert!(f[5].is_some_and(|mib| mib > 0.0), "{workload}\n{stdout}");
    }
    // Reads put nothing: no write amplification; only the mix timed every op.
    assert_eq!(figures("readrandom")[3], None, "\n{stdout}");
    assert_eq!(figures("fillrandom")[..3], [None, None, None], "\n{stdout}");
    let mix = figures("leveledmix");
    let (p50, p99, p999) = (
        mix[0].unwrap_or(-1.0),
        mix[1].unwrap_or(-1.0),
        mix[2].unwrap_or(-1.0),
    );
    assert!(0.0 < p50 && p50 <= p99 && p99 <= p999, "{mix:?}\n{stdout}");

    let memory = memory_rows(&stdout);
    assert_eq!(memory.len(), 1, "\n{stdout}");
    let (engine, rss, anon) = &memory[0];
    assert_eq!(engine, "strata");
    // The process holds at least its 1 MiB value pool; anonymous memory is part of the RSS.
    assert!(
        *rss >= 1.0 && *anon >= 1.0 && anon <= rss,
        "{memory:?}\n{stdout}"
    );

    assert_eq!(records.len(), 5);
    let fill = record(&records, "fillrandom", "strata");
    assert!(
        fill["write_amplification"]
            .as_f64()
            .is_some_and(|w| w >= 1.0),
        "{fill}"
    );
    assert!(
        fill["peak_rss_bytes"].as_u64().is_some_and(|b| b > 1 << 20),
        "{fill}"
    );
    assert_eq!(fill["value_separation"], 2048);
    let repeat = &fill["repeats"][0];
    assert_eq!(repeat["user_bytes_written"], 2000 * (16 + 4096));
    assert!(repeat["disk_write_bytes"]
        .as_u64()
        .is_some_and(|b| b >= 2000 * 4112));
    let mix = record(&records, "leveledmix", "strata");
    assert!(mix["p999_us"].as_f64() >= mix["p50_us"].as_f64(), "{mix}");
    assert!(record(&records, "headrandom", "strata")["found"].as_u64() > Some(0));
}

#[cfg(feature = "leveldb")]
#[test]
fn head_finds_what_leveldb_gets_find_and_both_engines_report_memory() {
    let stdout = bench(&[
        "--num",
        "3000",
        "--engines",
        "strata,leveldb",
        "--value_size",
        "16384",
        "--value_separation",
        "4096",
        "--benchmarks",
        "fillrandom,headrandom",
    ]);
    let found: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("headrandom") && l.contains("micros/op"))
        .filter_map(|l| l.split('(').nth(1)?.split(" of ").next())
        .collect();
    assert_eq!(found.len(), 2, "\n{stdout}");
    // The same keys on the same data: Strata's head and LevelDB's get agree.
    assert_eq!(found[0], found[1], "\n{stdout}");
    assert!(
        stdout.contains("LevelDB and rocksdb keep them in their tables"),
        "\n{stdout}"
    );
    let memory = memory_rows(&stdout);
    let engines: Vec<&str> = memory.iter().map(|(e, _, _)| e.as_str()).collect();
    assert_eq!(engines, ["strata", "leveldb"], "\n{stdout}");
    for (engine, rss, anon) in &memory {
        assert!(
            *rss > 1.0 && anon <= rss,
            "{engine}: {rss} {anon}\n{stdout}"
        );
    }
}

#[cfg(feature = "rocksdb")]
#[test]
fn rocksdb_runs_with_and_without_blobdb_in_one_run() {
    let dir = disk_tempdir();
    let stdout = bench_in(
        dir.path(),
        &[
            "--num",
            "2000",
            "--engines",
            "strata,rocksdb,rocksdb-blob",
            "--value_size",
            "8192",
            "--value_separation",
            "4096",
            "--rocksdb_mmap_reads",
            "false",
            "--benchmarks",
            "fillrandom,compact,leveledmix",
        ],
    );
    assert!(
        stdout.contains("with BlobDB (min_blob_size 4096)"),
        "\n{stdout}"
    );
    assert!(stdout.contains("a pread per block read"), "\n{stdout}");
    let blob_files = |engine: &str| files_ending(&dir.path().join("db").join(engine), ".blob");
    assert_eq!(blob_files("rocksdb"), 0, "\n{stdout}");
    assert!(blob_files("rocksdb-blob") > 0, "\n{stdout}");
    let rows = footprint_rows(&stdout);
    for engine in ["strata", "rocksdb", "rocksdb-blob"] {
        assert!(
            rows.iter().any(|(w, e, f)| w == "leveledmix"
                && e == engine
                && f[3].is_some_and(|a| a >= 1.0)),
            "{engine}:\n{stdout}"
        );
    }
    assert_eq!(memory_rows(&stdout).len(), 3, "\n{stdout}");
}

/// Regression: RocksDB's destroy fails to lock a directory whose parent does not exist, which
/// stopped `--engines rocksdb` alone on a new `--db` before its first run.
#[cfg(feature = "rocksdb")]
#[test]
fn rocksdb_alone_starts_in_a_db_directory_that_does_not_exist_yet() {
    let dir = disk_tempdir();
    let stdout = bench_in(
        &dir.path().join("not/yet"),
        &[
            "--engines",
            "rocksdb",
            "--num",
            "100",
            "--benchmarks",
            "fillseq",
        ],
    );
    assert_eq!(table_rows(&stdout).len(), 1, "\n{stdout}");
}

#[test]
fn rocksdb_blob_without_a_threshold_is_refused() {
    let out = strata()
        .args(["bench", "--engines", "strata,rocksdb-blob", "--num", "10"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run strata: {e}"));
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("`rocksdb-blob` needs --value_separation"),
        "{stderr}"
    );
}

#[cfg(not(feature = "leveldb"))]
#[test]
fn bench_without_peers_runs_strata_alone_and_says_so() {
    let stdout = bench(&[
        "--num",
        "10000",
        "--benchmarks",
        "fillseq,readrandom,readseq",
    ]);
    assert!(stdout.contains("Strata alone"), "\n{stdout}");
    assert_eq!(table_rows(&stdout).len(), 3, "\n{stdout}");
}

#[cfg(not(feature = "leveldb"))]
#[test]
fn asking_for_a_peer_that_is_not_built_in_fails_clearly() {
    let out = strata()
        .args(["bench", "--engines", "strata,leveldb", "--num", "10"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run strata: {e}"));
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("`leveldb` is not compiled into this binary")
            && stderr.contains("--features leveldb"),
        "{stderr}"
    );
}

#[test]
fn unknown_workload_is_rejected_with_the_valid_names() {
    let out = strata()
        .args(["bench", "--benchmarks", "fillsequential"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run strata: {e}"));
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("fillseq") && stderr.contains("fill100K"),
        "{stderr}"
    );
}

#[cfg(feature = "leveldb")]
#[test]
fn sweep_prints_table_one_with_medians_of_interleaved_rounds_of_each_build() {
    let (stdout, records) = bench_json(&[
        "--sweep",
        "paper",
        "--num",
        "1000",
        "--engines",
        "strata,leveldb",
        "--repeat",
        "2",
        "--no_settle",
    ]);
    assert!(
        stdout.contains("each database built 2 time(s), the reads of each build run 5 rounds"),
        "{stdout}"
    );
    for build in ["build 1/2", "build 2/2"] {
        let shapes: Vec<&str> = stdout
            .lines()
            .filter(|l| l.contains(build) && l.contains("tables per level"))
            .collect();
        // Each of the three columns, with and without compression, per engine: after the
        // PUT and after the reads; both engines say their shape.
        assert_eq!(shapes.len(), 3 * 2 * 2 * 2, "{build}:\n{stdout}");
        assert!(
            shapes.iter().all(|l| !l.ends_with("unknown")),
            "{build}:\n{stdout}"
        );
    }
    // A PUT cell is the median of the builds, a GET cell of every round of every build.
    assert_eq!(
        records.len(),
        3 * 2 * 2 * 6,
        "a cell per test:\n{records:?}"
    );
    for record in &records {
        let expected = if record["benchmark"] == "sweep/put" {
            2
        } else {
            2 * 5
        };
        assert_eq!(record["rounds"], expected, "{record}");
    }
    assert!(stdout.contains("one clock reading costs"), "{stdout}");
    assert!(!stdout.contains("WARNING: WB"), "wrong answers:\n{stdout}");
    for row in ["GET from cache", "GET missing (bloom)", "GET from MemTable"] {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(row))
            .unwrap_or_else(|| panic!("no row {row}:\n{stdout}"));
        assert_eq!(
            line.matches(" / ").count(),
            3,
            "a p50 / p99 per column: {line}"
        );
    }
}
