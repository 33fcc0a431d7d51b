//! The memory-mapped write-ahead log with value separation on, from its third review: a
//! process killed (`SIGKILL`, or stopped at every step of a log write) while logging value
//! pointers — the first record of a new log included, with and without `reuse_logs` — leaves
//! a directory that a paranoid open and `strata check` both take as undamaged, holding every
//! acknowledged write and a prefix of the writes; and paranoid read-only handles beside a
//! writer that switches logs every few writes (values kept in the tree: read-only handles
//! refuse a database that separates values) never fail and always see a growing prefix.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use strata::testing::{mapped_log_writes_stopped, stop_mapped_log_writes_after};
use strata::tools::check_db;
use strata::{Options, ValueSeparation, DB};

fn key(i: u64) -> Vec<u8> {
    format!("key{i:07}").into_bytes()
}

/// Values of many sizes: ones of about a log block (33,000 and 32,700 bytes), separated into
/// value files so that their log records hold a pointer; and ones kept in the tree, up to
/// 12 KiB, whose log records often span a 32 KiB log block.
fn value(i: u64) -> Vec<u8> {
    let len = match i % 6 {
        1 => 33_000,
        3 => 2_000 + (i % 7) as usize * 1_600,
        5 => 32_700,
        _ => 20 + (i * 37 % 700) as usize,
    };
    (0..len).map(|j| (i as usize * 13 + j) as u8).collect()
}

/// Value separation at 16 KiB and a small memtable, so logs switch every few writes and many
/// writes are the first record of a log.
fn options(reuse_logs: bool) -> Options {
    Options {
        create_if_missing: true,
        write_buffer_size: 96 << 10,
        reuse_logs,
        value_separation: Some(ValueSeparation::new(16 << 10)),
        ..Options::default()
    }
}

fn paranoid(reuse_logs: bool) -> Options {
    Options {
        paranoid_checks: true,
        ..options(reuse_logs)
    }
}

fn copy_without_lock(dir: &Path, to: &Path) {
    fs::create_dir(to).unwrap();
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        if entry.file_name() != "LOCK" && entry.file_type().unwrap().is_file() {
            fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

/// The highest numbered log in `dir` (how many logs the writers went through).
fn newest_log(dir: &Path) -> u64 {
    fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".log")?.parse::<u64>().ok()
        })
        .max()
        .unwrap_or(0)
}

/// The number of writes `db` holds, checking that they are a prefix (key 0 up to some key,
/// none missing, none after) and that every value reads back whole.
fn prefix_held(db: &DB, what: &str) -> u64 {
    prefix_from(db, 0, what)
}

/// [`prefix_held`] for a database known to hold the first `from` writes: checks the writes
/// from there on, and that the last of those before is still there.
fn prefix_from(db: &DB, from: u64, what: &str) -> u64 {
    if let Some(last) = from.checked_sub(1) {
        assert!(
            db.get(&key(last)).unwrap() == Some(value(last)),
            "{what}: write {last}, seen before, is gone"
        );
    }
    let mut it = db.iter();
    it.seek(&key(from));
    let mut n = from;
    while it.valid() {
        assert!(
            it.key() == key(n).as_slice(),
            "{what}: expected {:?}, found {:?} (not a prefix of the writes)",
            String::from_utf8_lossy(&key(n)),
            String::from_utf8_lossy(it.key())
        );
        assert!(
            it.value() == value(n).as_slice(),
            "{what}: write {n} damaged"
        );
        n += 1;
        it.next();
    }
    n
}

/// Checks a copy of `dir` with `strata check` and repairs it, then opens `dir` paranoid: none
/// may find damage, every write below `acknowledged` must be there, the writes form a prefix,
/// and the repaired copy holds the same writes.
fn assert_undamaged(root: &Path, dir: &Path, reuse_logs: bool, acknowledged: u64, what: &str) {
    let copy = root.join("checked");
    let _ = fs::remove_dir_all(&copy);
    copy_without_lock(dir, &copy);
    let report = check_db(&copy, &Options::default()).unwrap();
    assert!(
        report.problems.is_empty(),
        "{what}: strata check reports {:?}",
        report.problems
    );
    // Repair, which reads the logs as recovery does but salvages past gaps, keeps them too.
    strata::repair(&copy, &options(reuse_logs)).unwrap();
    let repaired = DB::open(&copy, paranoid(reuse_logs))
        .unwrap_or_else(|e| panic!("{what}: paranoid open after repair failed: {e}"));
    let kept = prefix_held(&repaired, &format!("{what}, repaired"));
    drop(repaired);
    let db = DB::open(dir, paranoid(reuse_logs))
        .unwrap_or_else(|e| panic!("{what}: paranoid open failed: {e}"));
    let held = prefix_held(&db, what);
    assert!(
        held >= acknowledged && kept == held,
        "{what}: {held} writes kept ({kept} by repair), {acknowledged} acknowledged"
    );
    fs::remove_dir_all(&copy).unwrap();
}

/// Set in the child process of the test below: the directory it writes to, whether it reuses
/// logs, and the first write it makes.
const CHILD_DIR: &str = "STRATA_REVIEW3_CHILD_DIR";
const CHILD_REUSE: &str = "STRATA_REVIEW3_CHILD_REUSE";
const CHILD_FROM: &str = "STRATA_REVIEW3_CHILD_FROM";

/// A writer killed with `SIGKILL` at random moments (in its logs' first records among them,
/// since its logs switch every few writes), reopened and killed again, with and without
/// `reuse_logs`: each time `strata check` reports nothing, a paranoid open succeeds, and every
/// acknowledged write (value files and log records alike) is there. A kill is not damage.
/// Rounds per mode: `STRATA_REVIEW3_KILLS` (default 12).
#[test]
fn writers_killed_at_random_while_separating_values_leave_no_damage() {
    const TEST: &str = "writers_killed_at_random_while_separating_values_leave_no_damage";
    if let Some(dir) = std::env::var_os(CHILD_DIR) {
        let reuse_logs = std::env::var_os(CHILD_REUSE).is_some();
        let from: u64 = std::env::var(CHILD_FROM).unwrap().parse().unwrap();
        let db = DB::open(Path::new(&dir), options(reuse_logs)).unwrap();
        let mut out = std::io::stdout().lock();
        writeln!(out, "child open").unwrap();
        out.flush().unwrap();
        for i in from.. {
            db.put(&key(i), &value(i)).unwrap();
            writeln!(out, "ack {i}").unwrap();
            out.flush().unwrap();
        }
        unreachable!();
    }
    let rounds: u64 = std::env::var("STRATA_REVIEW3_KILLS")
        .ok()
        .map_or(12, |v| v.parse().unwrap());
    let seed: u64 = rand::random();
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let root = tempfile::tempdir().unwrap();
    for reuse_logs in [false, true] {
        let dir = root.path().join(format!("db-{reuse_logs}"));
        let mut next = 0u64;
        for round in 0..rounds {
            let what = format!("seed {seed}, reuse_logs {reuse_logs}, kill {round}");
            let mut command = std::process::Command::new(std::env::current_exe().unwrap());
            command
                .args([TEST, "--exact", "--nocapture", "--test-threads=1"])
                .env(CHILD_DIR, &dir)
                .env(CHILD_FROM, next.to_string())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::null());
            if reuse_logs {
                command.env(CHILD_REUSE, "1");
            }
            let mut child = command.spawn().unwrap();
            let acked = Arc::new(AtomicU64::new(next));
            let opened = Arc::new(AtomicBool::new(false));
            let lines = {
                let (acked, opened) = (acked.clone(), opened.clone());
                let stdout = child.stdout.take().unwrap();
                std::thread::spawn(move || {
                    for line in BufReader::new(stdout).lines() {
                        let Ok(line) = line else { break };
                        // The first line follows libtest's "test ... " without a line break.
                        if line.ends_with("child open") {
                            opened.store(true, Ordering::SeqCst);
                        } else if let Some(i) = line.strip_prefix("ack ") {
                            acked.store(i.parse::<u64>().unwrap() + 1, Ordering::SeqCst);
                        }
                    }
                })
            };
            let deadline = Instant::now() + Duration::from_secs(60);
            while !opened.load(Ordering::SeqCst) {
                assert!(Instant::now() < deadline, "{what}: the child never opened");
                if let Some(status) = child.try_wait().unwrap() {
                    panic!("{what}: the child exited at open: {status}");
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            std::thread::sleep(Duration::from_micros(rng.gen_range(0..150_000)));
            child.kill().unwrap();
            child.wait().unwrap();
            lines.join().unwrap();
            let acknowledged = acked.load(Ordering::SeqCst);
            assert_undamaged(root.path(), &dir, reuse_logs, acknowledged, &what);
            let db = DB::open(&dir, options(reuse_logs)).unwrap();
            next = prefix_held(&db, &what);
        }
        assert!(
            next > rounds,
            "reuse_logs {reuse_logs}: only {next} writes in {rounds} rounds"
        );
        println!(
            "reuse_logs {reuse_logs}: {rounds} kills, {next} writes, newest log {}",
            newest_log(&dir)
        );
    }
}

/// The same, deterministic: a writer stopped at every step of its mapped log's writes (as a
/// kill leaves it: `stop_mapped_log_writes_after`) from the first record of a new database's
/// log on, with value pointers in the records, with and without `reuse_logs` (a reused log is
/// appended with `write`, not through a map, so what is tested with it is the recovery of the
/// killed mapped log and the writes after it). `strata check` and a paranoid open find no
/// damage and every write acknowledged before the stop; a write after that recovery survives
/// the next paranoid open.
#[test]
fn a_kill_at_any_step_of_a_logs_first_records_with_separated_values_is_no_damage() {
    // Enough for records to cross a 32 KiB log block.
    const WRITES: u64 = 30;
    let root = tempfile::tempdir().unwrap();
    for reuse_logs in [false, true] {
        // Large enough that no log switch happens after the stop (the copy must be coherent).
        let options = Options {
            write_buffer_size: 8 << 20,
            ..options(reuse_logs)
        };
        for steps in 1u64.. {
            let what = format!("reuse_logs {reuse_logs}, stopped after {steps} steps");
            let dir = root.path().join(format!("db-{reuse_logs}-{steps}"));
            let db = DB::open(&dir, options.clone()).unwrap();
            stop_mapped_log_writes_after(Some(steps));
            let mut acknowledged = 0;
            for i in 0..WRITES {
                db.put(&key(i), &value(i)).unwrap();
                if mapped_log_writes_stopped() {
                    break;
                }
                acknowledged = i + 1;
            }
            let killed = mapped_log_writes_stopped();
            let crashed = root.path().join(format!("crashed-{reuse_logs}-{steps}"));
            copy_without_lock(&dir, &crashed);
            drop(db);
            stop_mapped_log_writes_after(None);
            if !killed {
                assert!(steps >= 2 * WRITES, "{what}: only {steps} kill points");
                println!("reuse_logs {reuse_logs}: {steps} kill points");
                break;
            }
            assert_undamaged(root.path(), &crashed, reuse_logs, acknowledged, &what);
            let db = DB::open(&crashed, options.clone()).unwrap();
            let held = prefix_held(&db, &what);
            db.put(&key(held), &value(held)).unwrap();
            drop(db);
            assert_undamaged(root.path(), &crashed, reuse_logs, held + 1, &what);
            fs::remove_dir_all(&crashed).unwrap();
            fs::remove_dir_all(&dir).unwrap();
        }
    }
}

/// Paranoid read-only handles opened and refreshed beside a writer that switches logs every few
/// writes (without value separation: read-only handles refuse a database that separates values) (so a handle often meets a log the writer has just started,
/// its first record still being copied): no open or refresh fails, and each sees a prefix of
/// the writes that never shrinks — a read excused as the writer's progress leaves no batch
/// missed or out of order. Seconds: `STRATA_REVIEW3_FOLLOW_SECS` (default 4).
#[test]
fn paranoid_followers_of_a_writer_switching_logs_see_a_growing_prefix() {
    let secs: u64 = std::env::var("STRATA_REVIEW3_FOLLOW_SECS")
        .ok()
        .map_or(4, |v| v.parse().unwrap());
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("db");
    let writer_options = Options {
        value_separation: None,
        ..options(false)
    };
    let db = Arc::new(DB::open(&dir, writer_options).unwrap());
    db.put(&key(0), &value(0)).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (db, stop) = (db.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut i = 1;
            while !stop.load(Ordering::Relaxed) {
                db.put(&key(i), &value(i)).unwrap();
                i += 1;
            }
            i
        })
    };
    let follower_options = || Options {
        paranoid_checks: true,
        ..Options::default()
    };
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut failures = Vec::new();
    let mut attempts = 0u64;
    while Instant::now() < deadline {
        attempts += 1;
        let reader = match DB::open_read_only(&dir, follower_options()) {
            Ok(reader) => reader,
            Err(e) => {
                failures.push(format!("open: {e}"));
                continue;
            }
        };
        let mut seen = prefix_held(&reader, "read-only open");
        for _ in 0..50 {
            attempts += 1;
            if let Err(e) = reader.refresh() {
                failures.push(format!("refresh: {e}"));
                continue;
            }
            seen = prefix_from(&reader, seen, "refresh");
        }
    }
    stop.store(true, Ordering::Relaxed);
    let written = writer.join().unwrap();
    assert!(written > 200, "the writer made only {written} writes");
    assert!(
        failures.is_empty(),
        "{} of {attempts} paranoid read-only opens and refreshes failed ({written} writes), \
         first: {}",
        failures.len(),
        failures[0]
    );
    println!(
        "{attempts} opens and refreshes beside {written} writes, newest log {}",
        newest_log(&dir)
    );
}
