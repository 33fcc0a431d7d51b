//! `strata bench` end to end on a small database: it exits 0 and prints the comparison table
//! with every engine. No timing is asserted (the machine is shared and noisy).

use std::process::Command;

fn strata() -> Command {
    Command::new(env!("CARGO_BIN_EXE_strata"))
}

/// Runs `strata bench` with `args` in a fresh directory; returns stdout, failing the test with
/// stderr on a non-zero exit.
fn bench(args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let db = dir.path().join("db");
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
    stdout
        .lines()
        .skip_while(|l| !l.starts_with("benchmark"))
        .skip(2)
        .take_while(|l| !l.trim().is_empty() && !l.starts_with("vs strata"))
        .collect()
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
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
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
    let value_files = std::fs::read_dir(db.join("strata"))
        .unwrap_or_else(|e| panic!("read db dir: {e}"))
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".vlog"))
        .count();
    assert!(value_files > 0, "no value file written\n{stdout}");
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
fn sweep_prints_table_one_with_medians_of_interleaved_rounds() {
    let stdout = bench(&[
        "--sweep",
        "paper",
        "--num",
        "1000",
        "--engines",
        "strata,leveldb",
        "--repeat",
        "1",
        "--no_settle",
    ]);
    assert!(
        stdout.contains("reads run 3 rounds, engines taking turns"),
        "at least three rounds whatever --repeat says:\n{stdout}"
    );
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
