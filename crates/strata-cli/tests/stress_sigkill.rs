//! The real crash test: `strata stress` is killed with SIGKILL at random moments (inside the
//! workload, but also inside opening, recovery and verification), restarted, and killed again;
//! every restart verifies the database against the journal of acknowledged ops, and a final
//! `--verify-only` and `strata check` must pass. And the verifier must catch a violation when
//! there is one. Seeds choose the format extensions: odd ones run range deletes, and those
//! whose second bit is set keep values of 512 bytes or more in value files (`check` then
//! checks every pointer against its value file).
//!
//! Tunable by environment: `STRATA_STRESS_CYCLES` (default 30), `STRATA_STRESS_BUDGET_SECS`
//! (default 60: no new cycle starts after it), `STRATA_STRESS_SEED` (default: random; printed).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant, SystemTime};

fn strata(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run strata")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// SplitMix64, for kill moments and per-cycle settings.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % n
    }
}

/// From a verification report's first line, the number after `label`.
fn figure(report: &str, label: &str) -> Option<u64> {
    let line = report.lines().find(|l| l.starts_with("verified "))?;
    let before = line.split(label).next()?;
    before.rsplit([' ', '(']).next()?.parse().ok()
}

#[test]
fn sigkill_at_random_moments_loses_nothing_acknowledged() {
    let cycles: u32 = env_or("STRATA_STRESS_CYCLES", 30);
    let budget = Duration::from_secs(env_or("STRATA_STRESS_BUDGET_SECS", 60));
    let seed: u64 = env_or(
        "STRATA_STRESS_SEED",
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64,
    );
    // Odd seeds run a workload with range deletes (format extension), on every run of it;
    // the second bit keeps most values in value files (the same).
    let range_deletes = seed % 2 == 1;
    let value_separation = seed & 2 != 0;
    eprintln!(
        "stress_sigkill: STRATA_STRESS_SEED={seed} (range deletes: {range_deletes}, value \
         separation: {value_separation})"
    );
    // Values of 0-2000 bytes, those of 512 or more in value files.
    let separation = ["--value-size", "2000", "--value-separation", "512"];
    let mut rng = Rng(seed);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let db_arg = db.to_str().unwrap();
    let workload_seed = seed.to_string();
    let start = Instant::now();
    let (mut ran, mut verified, mut killed_before_verdict) = (0u32, 0u32, 0u32);
    let mut last_acknowledged = 0;
    while ran < cycles && start.elapsed() < budget {
        let threads = (1 + rng.below(4)).to_string();
        let sync_every = ["0", "1", "3", "16", "64"][rng.below(5) as usize];
        let mut args = vec![
            "stress",
            db_arg,
            "--duration",
            "600",
            "--threads",
            &threads,
            "--sync-every",
            sync_every,
            "--seed",
            &workload_seed,
            "--keys",
            "500",
        ];
        // Small memtables so flushes and compactions are often under way at the kill. Not
        // 64 KiB with value files: garbage collection then asks a flush of nearly every write
        // (a few hundred ops in a run instead of thousands), and cycles overrun the budget.
        let buffer = ["65536", "262144", "1048576"][rng.below(3) as usize];
        let buffer = if value_separation && buffer == "65536" {
            "262144"
        } else {
            buffer
        };
        args.extend(["--write-buffer-size", buffer]);
        if rng.below(3) == 0 {
            args.push("--reuse-logs");
        }
        if rng.below(3) == 0 {
            args.push("--paranoid-checks");
        }
        if range_deletes {
            args.push("--range-deletes");
        }
        if value_separation {
            args.extend(separation);
        }
        // One kill in six lands early: in the open, recovery or verification.
        let delay = if rng.below(6) == 0 {
            rng.below(150)
        } else {
            150 + rng.below(2350)
        };
        let out_path = dir.path().join(format!("cycle-{ran}.out"));
        let err_path = dir.path().join(format!("cycle-{ran}.err"));
        let mut child = Command::new(env!("CARGO_BIN_EXE_strata"))
            .args(&args)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out_path).unwrap())
            .stderr(std::fs::File::create(&err_path).unwrap())
            .spawn()
            .expect("start strata stress");
        std::thread::sleep(Duration::from_millis(delay));
        let exited = child.try_wait().unwrap();
        if exited.is_none() {
            child.kill().unwrap(); // SIGKILL
        }
        let status = child.wait().unwrap();
        let out = std::fs::read_to_string(&out_path).unwrap();
        let err = std::fs::read_to_string(&err_path).unwrap();
        let context = format!(
            "cycle {ran} (seed {seed}) `strata {}` killed after {delay} ms\nstdout:\n{out}\nstderr:\n{err}",
            args.join(" ")
        );
        assert!(
            exited.is_none(),
            "strata stress stopped by itself ({status}): {context}"
        );
        assert!(!out.contains("VIOLATION"), "{context}");
        assert!(err.is_empty(), "{context}");
        match figure(&out, " violations") {
            Some(violations) => {
                assert_eq!(violations, 0, "{context}");
                let acknowledged = figure(&out, " ops acknowledged").unwrap();
                assert!(
                    acknowledged >= last_acknowledged,
                    "acknowledged ops went back from {last_acknowledged}: {context}"
                );
                last_acknowledged = acknowledged;
                verified += 1;
            }
            None => killed_before_verdict += 1,
        }
        ran += 1;
    }

    let mut verify = vec!["stress", db_arg, "--verify-only"];
    if range_deletes {
        verify.push("--range-deletes");
    }
    if value_separation {
        verify.extend(&separation[2..]);
    }
    let output = strata(&verify);
    let report = text(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "final verification (seed {seed}):\n{report}\n{}",
        text(&output.stderr)
    );
    let acknowledged = figure(&report, " ops acknowledged").unwrap();
    let violations = figure(&report, " violations").unwrap();
    assert_eq!(violations, 0);
    let check = strata(&["check", db_arg]);
    assert_eq!(
        check.status.code(),
        Some(0),
        "strata check after the crashes:\n{}{}",
        text(&check.stdout),
        text(&check.stderr)
    );
    assert_eq!(
        text(&check.stdout).contains(" value pointers naming "),
        value_separation,
        "{}",
        text(&check.stdout)
    );
    eprintln!(
        "stress_sigkill: {ran} SIGKILL cycles in {:.1} s ({verified} restarts verified, \
         {killed_before_verdict} killed before their verdict); {acknowledged} ops acknowledged; \
         {violations} violations",
        start.elapsed().as_secs_f64()
    );
    assert!(
        ran >= cycles.min(10),
        "only {ran} cycles ran within {budget:?}"
    );
    assert!(
        verified * 2 >= ran,
        "only {verified} of {ran} restarts reached their verdict"
    );
    assert!(acknowledged > 0, "{report}");
}

fn stress_ok(db: &Path, args: &[&str]) -> String {
    let mut all = vec!["stress", db.to_str().unwrap()];
    all.extend_from_slice(args);
    let output = strata(&all);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    text(&output.stdout)
}

#[test]
fn verify_only_names_a_sync_acknowledged_key_deleted_behind_its_back() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let run = stress_ok(
        &db,
        &[
            "--duration",
            "0.5",
            "--threads",
            "2",
            "--sync-every",
            "1",
            "--keys",
            "50",
        ],
    );
    assert!(run.contains("; 0 violations"), "{run}");
    let report = stress_ok(&db, &["--verify-only"]);
    assert!(
        figure(&report, " ops acknowledged").unwrap() > 0,
        "{report}"
    );

    // Every op was written with sync, so whatever key is there was sync-acknowledged. A
    // deletion is a lost write unless the op after the last acknowledged one (the verifier
    // allows for it as possibly in flight) deletes that very key: then the absence fits that
    // op, and the verifier names the hole it leaves at the op's other keys instead, or finds
    // nothing wrong when the op touched no other key. Such a victim is put back and the next
    // key tried.
    let mut candidates = 0;
    let report = loop {
        candidates += 1;
        assert!(candidates <= 5, "every victim was ambiguous");
        let (victim, value) = {
            let store = strata::DB::open(&db, strata::Options::default()).unwrap();
            let mut it = store.iter();
            it.seek_to_first();
            for _ in 1..candidates {
                it.next();
            }
            assert!(it.valid(), "the workload left keys");
            (it.key().to_vec(), it.value().to_vec())
        };
        strata::DB::open(&db, strata::Options::default())
            .unwrap()
            .delete(&victim)
            .unwrap();
        let output = strata(&["stress", db.to_str().unwrap(), "--verify-only"]);
        let report = text(&output.stdout);
        let victim = String::from_utf8(victim).unwrap();
        if report.contains(&format!(
            "VIOLATION thread 0: lost write at key {victim} (op "
        )) {
            assert_eq!(output.status.code(), Some(1), "{report}");
            break report;
        }
        let fits_the_op_in_flight = match output.status.code() {
            Some(1) => report.contains(": hole at key "),
            Some(0) => report.contains("; 0 violations"),
            _ => false,
        };
        assert!(fits_the_op_in_flight, "{report}");
        strata::DB::open(&db, strata::Options::default())
            .unwrap()
            .put(victim.as_bytes(), &value)
            .unwrap();
    };
    assert!(report.contains("sync-acknowledged"), "{report}");
    assert!(report.contains("found absent"), "{report}");
    assert_eq!(figure(&report, " violations"), Some(1), "{report}");

    // A restart verifies first, and refuses to write on a database that broke its promises.
    let output = strata(&["stress", db.to_str().unwrap(), "--duration", "1"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(text(&output.stdout).contains("VIOLATION"));
    assert!(!text(&output.stdout).contains("running"));
}

#[test]
fn stress_refuses_a_database_it_did_not_create() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let put = strata(&["put", db.to_str().unwrap(), "k", "v"]);
    assert_eq!(put.status.code(), Some(0));
    let output = strata(&["stress", db.to_str().unwrap(), "--duration", "1"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("no stress journal"));
    let output = strata(&["stress", db.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2), "--duration is required");
}
