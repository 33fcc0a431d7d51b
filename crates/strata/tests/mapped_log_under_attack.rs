//! The memory-mapped write-ahead log (`src/env/posix/mapped_log.rs`) under attack, from a
//! review of it: what thousands of log switches leave open, a log that cannot grow, what a
//! process killed part-way through a record leaves for `strata check`, what a read-only
//! handle reads beside a live writer, which thread closes retired logs.
//! (The kills at every step, opened by Strata and LevelDB, are
//! `crates/leveldb-peer/tests/crashed_mapped_log.rs`.)

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use strata::testing::{
    mapped_log_writes_stopped, refuse_mapped_log_reservation, stop_mapped_log_writes_after, EnvOp,
    HookEnv,
};
use strata::tools::check_db;
use strata::{Options, DB};
use support::wal::paranoid_read_only_open_beside_a_writer;

fn key(i: u64) -> Vec<u8> {
    format!("key{i:07}").into_bytes()
}

/// Values of many sizes: small ones, ones that span a 32 KiB log block, ones that end near a
/// block's end.
fn value(i: u64) -> Vec<u8> {
    let len = match i % 5 {
        1 => 33_000,
        3 => 32_700,
        _ => 50 + (i * 37 % 400) as usize,
    };
    (0..len).map(|j| (i as usize * 13 + j) as u8).collect()
}

fn create() -> Options {
    Options {
        create_if_missing: true,
        ..Options::default()
    }
}

/// Entries of `/proc/self/fd` and lines of `/proc/self/maps` that name a write-ahead log (a
/// `.log` file) under `dir`, deleted or not.
fn logs_open_under(dir: &Path) -> (usize, usize) {
    let dir = dir.to_string_lossy().into_owned();
    let is_log = |name: &str| name.starts_with(&dir) && name.contains(".log");
    let fds = fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| fs::read_link(e.ok()?.path()).ok())
        .filter(|target| is_log(&target.to_string_lossy()))
        .count();
    let maps = fs::read_to_string("/proc/self/maps")
        .unwrap()
        .lines()
        .filter_map(|line| line.split_once('/').map(|(_, path)| format!("/{path}")))
        .filter(|path| is_log(path))
        .count();
    (fds, maps)
}

fn highest_log_number(dir: &Path) -> u64 {
    fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".log")?.parse::<u64>().ok()
        })
        .max()
        .unwrap_or(0)
}

/// Every memtable switch starts a new mapped log: a thousand of them leave at most two logs
/// open (one descriptor and one mapped window each) once the closer thread has caught up, and
/// none once the database is closed.
#[test]
fn a_thousand_log_switches_leave_no_descriptor_or_mapping_behind() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("db");
    let db = DB::open(
        &dir,
        Options {
            write_buffer_size: 16 << 10,
            ..create()
        },
    )
    .unwrap();
    let mut i = 0;
    while highest_log_number(&dir) < 1_000 {
        db.put(&key(i % 500), &[i as u8; 2_000]).unwrap();
        i += 1;
        assert!(
            i < 200_000,
            "the log did not switch: {}",
            highest_log_number(&dir)
        );
    }
    // The live log, and the one before it while its memtable is being flushed — once the
    // thread closing retired logs (`db/log_closer.rs`) has caught up with the switches.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let (fds, maps) = loop {
        let (fds, maps) = logs_open_under(&dir);
        if (fds <= 2 && maps <= 2) || std::time::Instant::now() > deadline {
            break (fds, maps);
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    assert!(
        fds <= 2 && maps <= 2,
        "after {i} writes and 1000 log switches: {fds} descriptors and {maps} mappings of logs"
    );
    drop(db);
    assert_eq!(logs_open_under(&dir), (0, 0), "closed, yet logs still open");
}

/// Set in the child process of the test below to the directory it writes to.
const FULL_CHILD_DIR: &str = "STRATA_MAPPED_LOG_FULL_CHILD_DIR";

/// A log that cannot grow (here a file size limit, `RLIMIT_FSIZE`, which refuses the
/// `ftruncate` that grows the mapped log; a full disk refuses the reservation before it, which
/// `env/posix/mapped_log/tests.rs` simulates) fails the write with a typed error — never a
/// `SIGBUS` from a store into a mapped page past the file's end — and later writes fail too (a
/// background error), with nothing acknowledged lost.
#[test]
fn a_log_that_cannot_grow_fails_the_write_without_a_sigbus() {
    log_that_cannot_grow(
        "a_log_that_cannot_grow_fails_the_write_without_a_sigbus",
        None,
    );
}

/// The same for a log appended with `write` (a file system without `fallocate`: the fallback
/// of `mapped_log.rs`).
#[test]
fn a_log_written_with_write_that_cannot_grow_fails_the_write() {
    log_that_cannot_grow(
        "a_log_written_with_write_that_cannot_grow_fails_the_write",
        Some(libc::EOPNOTSUPP),
    );
}

/// Runs test `test` in a child process that writes under a file size limit (its logs probing
/// `fallocate` meet `refused`, if given), and checks what it reports and leaves.
fn log_that_cannot_grow(test: &str, refused: Option<i32>) {
    if let Some(dir) = std::env::var_os(FULL_CHILD_DIR) {
        // The child: writes until a write fails, under a 256 KiB file size limit.
        refuse_mapped_log_reservation(refused);
        let db = DB::open(
            Path::new(&dir),
            Options {
                write_buffer_size: 64 << 20,
                ..create()
            },
        )
        .unwrap();
        let limit = libc::rlimit {
            rlim_cur: 256 << 10,
            rlim_max: libc::RLIM_INFINITY,
        };
        // SAFETY: plain system calls on integers and a valid struct; SIGXFSZ ignored so that
        // growing past the limit is an error (EFBIG), not a kill.
        unsafe {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &limit), 0);
        }
        for i in 0..10_000 {
            if let Err(e) = db.put(&key(i), &value(i)) {
                println!("acknowledged {i}");
                println!("error {e}");
                println!(
                    "then {:?}",
                    db.put(b"after", b"x").err().map(|e| e.to_string())
                );
                return;
            }
        }
        panic!("no write failed under the file size limit");
    }
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("db");
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(FULL_CHILD_DIR, &dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the child died ({:?}): {stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let line = |prefix: &str| {
        stdout
            .lines()
            .find_map(|l| Some(l.split_once(prefix)?.1))
            .unwrap_or_else(|| panic!("no {prefix:?} in {stdout}"))
            .to_string()
    };
    let acknowledged: u64 = line("acknowledged ").parse().unwrap();
    let error = line("error ");
    assert!(acknowledged > 0, "{stdout}");
    assert!(
        error.contains(".log"),
        "the error does not name the log: {error}"
    );
    assert!(
        line("then ").starts_with("Some("),
        "a write after the failure was acknowledged"
    );
    let db = DB::open(&dir, Options::default()).unwrap();
    for i in 0..acknowledged {
        assert!(db.get(&key(i)).unwrap() == Some(value(i)), "write {i} lost");
    }
}

fn copy_without_lock(dir: &Path, to: &Path) {
    fs::create_dir(to).unwrap();
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        if entry.file_name() != "LOCK" {
            fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

/// A process killed at any step of a log write leaves a directory that recovery opens
/// cleanly (paranoid) — and `strata check`, which reads the same logs, must not call it
/// damaged either: a torn tail left by a kill is no corruption.
#[test]
fn check_finds_no_damage_in_a_directory_killed_at_any_step_of_a_log_write() {
    const WRITES: u64 = 12;
    let root = tempfile::tempdir().unwrap();
    for steps in 0u64.. {
        let dir = root.path().join(format!("db{steps}"));
        let db = DB::open(&dir, create()).unwrap();
        stop_mapped_log_writes_after(Some(steps));
        for i in 0..WRITES {
            db.put(&key(i), &value(i)).unwrap();
            if mapped_log_writes_stopped() {
                break;
            }
        }
        let killed = mapped_log_writes_stopped();
        let crashed = root.path().join(format!("crashed{steps}"));
        copy_without_lock(&dir, &crashed);
        drop(db);
        stop_mapped_log_writes_after(None);
        if !killed {
            // Every budget below this one stopped the writes: that many kill points.
            assert!(steps > 20, "only {steps} kill points: none counted");
            return;
        }
        let report = check_db(&crashed, &Options::default()).unwrap();
        assert!(
            report.problems.is_empty(),
            "killed after {steps} steps of the log: check reports {:?}",
            report.problems
        );
        drop(
            DB::open(
                &crashed,
                Options {
                    paranoid_checks: true,
                    ..Options::default()
                },
            )
            .unwrap(),
        );
        fs::remove_dir_all(&crashed).unwrap();
        fs::remove_dir_all(&dir).unwrap();
    }
}

/// A read-only handle reads the live log a block at a time. A mapped log ends in zeros up to
/// its block's end, so the reader can read that block (records, then zeros) before the writer
/// appends a record that spills into the next block, and then read that block: zeros followed
/// by a record, which the write-ahead log reader takes for damage, so a paranoid read-only open
/// beside a live writer fails (and a lenient one ends the log there). A log written with
/// `write` ends at its last record: the reader's short read ends the log there, cleanly.
#[test]
fn paranoid_read_only_open_succeeds_while_the_writer_crosses_a_block() {
    let root = tempfile::tempdir().unwrap();
    let dir: PathBuf = root.path().join("db");
    let db = Arc::new(DB::open(&dir, create()).unwrap());
    db.put(&key(0), &value(0)).unwrap();
    let writer = db.clone();
    let reader = paranoid_read_only_open_beside_a_writer(
        &dir,
        |path| path.extension().is_some_and(|e| e == "log"),
        // The reader has read the log's first block: the writer goes on meanwhile.
        move || writer.put(&key(1), &[7u8; 40_000]).unwrap(),
    );
    let reader = reader.unwrap_or_else(|e| panic!("read-only open beside the writer: {e}"));
    assert!(reader.get(&key(0)).unwrap() == Some(value(0)));
}

/// Where the file system cannot reserve space for stores into a map (no `fallocate`, or
/// copy-on-write: `mapped_log.rs`, "Where a store could fail"), the log is appended with
/// `write`: it never ends in reserved zeros while open, and a process killed with it open
/// leaves every write for a paranoid open. The same check on a mapped log sees its zero tail,
/// so the check can tell the two apart.
#[test]
fn a_file_system_without_fallocate_gets_a_log_written_with_write() {
    const EOPNOTSUPP: i32 = 95;
    let root = tempfile::tempdir().unwrap();
    let ends_in_zeros = |dir: &Path| {
        let log = dir.join(format!("{:06}.log", highest_log_number(dir)));
        let bytes = fs::read(log).unwrap();
        bytes.last() == Some(&0)
    };
    for refused in [false, true] {
        let dir = root.path().join(format!("db-{refused}"));
        refuse_mapped_log_reservation(refused.then_some(EOPNOTSUPP));
        let db = DB::open(&dir, create()).unwrap();
        refuse_mapped_log_reservation(None);
        let mut zero_tails = 0;
        for i in 0..40u64 {
            let len = if i % 7 == 3 { 40_000 } else { 100 };
            db.put(&key(i), &vec![0xAB; len]).unwrap();
            zero_tails += usize::from(ends_in_zeros(&dir));
        }
        if !refused {
            // Not after a record that ran past its block: that part is appended with `pwrite`.
            assert!(
                zero_tails > 20,
                "the mapped log showed a zero tail {zero_tails} times"
            );
            continue;
        }
        assert_eq!(zero_tails, 0, "a log written with write ended in zeros");
        let crashed = root.path().join("crashed");
        copy_without_lock(&dir, &crashed);
        drop(db);
        let db = DB::open(
            &crashed,
            Options {
                paranoid_checks: true,
                ..Options::default()
            },
        )
        .unwrap();
        for i in 0..40u64 {
            assert!(db.get(&key(i)).unwrap().is_some(), "write {i} lost");
        }
    }
}

/// Closing a retired log can wait for the kernel's writeback of its pages (`db/log_closer.rs`):
/// with every such close held up 50 ms, no writing thread ever closes a log (the closer thread
/// does), across several databases written at once in one process; and dropping each database
/// waits for its closer, leaving no log of it open.
#[test]
fn retired_logs_are_closed_off_every_writing_thread_of_several_databases() {
    const DATABASES: usize = 4;
    let root = tempfile::tempdir().unwrap();
    let writers = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let closed_by_writer = Arc::new(AtomicU64::new(0));
    let closed = Arc::new(AtomicU64::new(0));
    let env = {
        let (writers, closed_by_writer, closed) =
            (writers.clone(), closed_by_writer.clone(), closed.clone());
        HookEnv::new(Options::default().env, move |call| {
            if call.op == EnvOp::Close && call.path.extension().is_some_and(|e| e == "log") {
                if writers.lock().contains(&std::thread::current().id()) {
                    closed_by_writer.fetch_add(1, Ordering::SeqCst);
                }
                closed.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            Ok(())
        })
    };
    let env: Arc<dyn strata::Env> = Arc::new(env);
    let threads: Vec<_> = (0..DATABASES)
        .map(|d| {
            let (env, writers, dir) = (
                env.clone(),
                writers.clone(),
                root.path().join(format!("db{d}")),
            );
            std::thread::spawn(move || {
                let db = DB::open(
                    &dir,
                    Options {
                        write_buffer_size: 16 << 10,
                        env,
                        ..create()
                    },
                )
                .unwrap();
                writers.lock().push(std::thread::current().id());
                let mut i = 0;
                while highest_log_number(&dir) < 40 {
                    db.put(&key(i % 100), &[i as u8; 1_000]).unwrap();
                    i += 1;
                }
                writers
                    .lock()
                    .retain(|id| *id != std::thread::current().id());
                drop(db);
                assert_eq!(logs_open_under(&dir), (0, 0), "db{d} closed, yet logs open");
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    assert!(
        closed.load(Ordering::SeqCst) >= 20,
        "too few logs closed to tell"
    );
    assert_eq!(
        closed_by_writer.load(Ordering::SeqCst),
        0,
        "retired logs closed on a writing thread"
    );
}

/// The race of `log_continuity_after_gaps.rs::a_reader_overtaken_by_the_writer_in_the_middle_of_a_block_is_not_damage`
/// as it happens: a writer appending records of which every third spans a log block, and
/// paranoid read-only handles opened and refreshed beside it for three seconds. A handle that
/// reads a block while a record in it is being copied, then the next block after the writer
/// went on, takes the writer's progress for a jump after a gap and fails with corruption
/// (seen: 1 of 229 opens and 11 of 4,424 refreshes in 8 s; with the log written by `write`,
/// none). Nothing may fail.
#[test]
fn paranoid_read_only_handles_beside_a_busy_writer_never_fail() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("db");
    let db = Arc::new(DB::open(&dir, create()).unwrap());
    db.put(&key(0), &value(0)).unwrap();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (db, stop) = (db.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut i = 1;
            while !stop.load(Ordering::Relaxed) {
                let len = if i % 3 == 0 {
                    33_000
                } else {
                    100 + (i % 500) as usize
                };
                db.put(&key(i), &vec![i as u8; len]).unwrap();
                i += 1;
            }
        })
    };
    let paranoid = || Options {
        paranoid_checks: true,
        ..Options::default()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    let mut failures = Vec::new();
    let mut attempts = 0;
    while std::time::Instant::now() < deadline {
        attempts += 1;
        match DB::open_read_only(&dir, paranoid()) {
            Ok(reader) => {
                for _ in 0..20 {
                    attempts += 1;
                    if let Err(e) = reader.refresh() {
                        failures.push(e.to_string());
                    }
                }
            }
            Err(e) => failures.push(e.to_string()),
        }
    }
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {attempts} read-only opens and refreshes failed, first: {}",
        failures.len(),
        failures[0]
    );
}

/// The thread that closes retired logs runs at the lowest priority, nice 19
/// (`Env::lowest_thread_priority`), keeping its policy: the last close of a deleted log
/// frees its blocks, which on a file system mounted with `discard` kept preempting the writer;
/// and under `SCHED_IDLE` it was starved while writes kept the processors busy, the logs it had
/// to close staying open.
#[cfg(target_os = "linux")]
#[test]
fn retired_logs_are_closed_at_the_lowest_priority() {
    // The calling thread's nice value and scheduling policy: fields 19 and 41 of its `stat`,
    // the 17th and the 39th after the name.
    fn policy() -> (i64, i64) {
        let stat = fs::read_to_string("/proc/thread-self/stat").unwrap();
        let (_, after_name) = stat.rsplit_once(')').unwrap();
        let fields: Vec<&str> = after_name.split_whitespace().collect();
        (fields[16].parse().unwrap(), fields[38].parse().unwrap())
    }
    let dir = tempfile::tempdir().unwrap();
    let policies = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let env = {
        let policies = policies.clone();
        HookEnv::new(Options::default().env, move |call| {
            if call.op == EnvOp::Close && call.path.extension().is_some_and(|e| e == "log") {
                policies
                    .lock()
                    .push((std::thread::current().id(), policy()));
            }
            Ok(())
        })
    };
    let db = DB::open(
        dir.path(),
        Options {
            write_buffer_size: 16 << 10,
            env: Arc::new(env),
            ..create()
        },
    )
    .unwrap();
    let writer_policy = policy();
    let mut i = 0;
    while highest_log_number(dir.path()) < 30 {
        db.put(&key(i % 100), &[i as u8; 1_000]).unwrap();
        i += 1;
    }
    drop(db);
    // Dropping the database closes the logs still live on the dropping thread; the retired
    // ones are the closer's.
    let this = std::thread::current().id();
    let retired: Vec<(i64, i64)> = policies
        .lock()
        .iter()
        .filter(|(thread, _)| *thread != this)
        .map(|&(_, policy)| policy)
        .collect();
    assert!(retired.len() >= 10, "too few logs closed to tell");
    assert!(
        retired.iter().all(|&p| p == (19, writer_policy.1)),
        "retired logs closed at (nice, policy) {retired:?}, the writer's policy {}",
        writer_policy.1
    );
    assert_eq!(policy(), writer_policy, "the writer's priority changed");
    assert_ne!(
        writer_policy.0, 19,
        "the tests run at nice 19: nothing to tell"
    );
}
