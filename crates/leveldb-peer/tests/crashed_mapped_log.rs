//! A process killed while Strata writes its memory-mapped write-ahead log
//! (`crates/strata/src/env/posix/mapped_log.rs`) leaves a directory that Strata and LevelDB 1.23
//! both open with `paranoid_checks`, holding a prefix of the writes with every acknowledged one.
//!
//! - At every step: the log writer stops at each step of its writes in turn (reserving a
//!   block, copying a payload — cut part-way —, publishing a header, each page of a `pwrite`;
//!   `strata::testing::stop_mapped_log_writes_after`), and the directory is copied as a kill
//!   there would leave it.
//! - Real kills: this test binary, run again as a child process, writes until it is killed with
//!   `SIGKILL` at a random moment.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use leveldb_peer::{LevelDb, LevelDbOptions};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use strata::testing::{mapped_log_writes_stopped, stop_mapped_log_writes_after};
use strata::{Options, ReadOptions, DB};

mod support;

fn key(i: u64) -> Vec<u8> {
    format!("key{i:07}").into_bytes()
}

/// Mostly small values, with some that span log blocks and one too large for the log writer
/// to stage whole.
fn value(i: u64) -> Vec<u8> {
    let len = match i % 7 {
        _ if i == 20 => 300_000,
        3 => 40_000,
        5 => 5_000,
        _ => 100 + (i % 50) as usize,
    };
    (0..len).map(|j| (i as usize * 31 + j * 7) as u8).collect()
}

/// Copies `dir`'s files except `LOCK` (held by this process) to a new directory under `root`.
fn copy_without_lock(dir: &Path, root: &Path, name: &str) -> PathBuf {
    let copy = root.join(name);
    fs::create_dir(&copy).unwrap();
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        if entry.file_name() != "LOCK" {
            fs::copy(entry.path(), copy.join(entry.file_name())).unwrap();
        }
    }
    copy
}

/// How many writes each engine finds in the crashed directory `dir` (copied once per engine),
/// opened with paranoid checks: the writes found must be exactly the first ones, unchanged.
fn writes_found(dir: &Path, root: &Path) -> [u64; 2] {
    let strata_copy = copy_without_lock(dir, root, "strata");
    let leveldb_copy = copy_without_lock(dir, root, "leveldb");
    let db = DB::open(
        &strata_copy,
        Options {
            paranoid_checks: true,
            ..Options::default()
        },
    )
    .unwrap_or_else(|e| panic!("Strata's paranoid open of {}: {e}", dir.display()));
    let keys = support::scan(&db, &ReadOptions::default()).len() as u64;
    let strata = prefix_len(|i| db.get(&key(i)).unwrap(), keys);
    drop(db);
    let ldb = LevelDb::open(
        &leveldb_copy,
        &LevelDbOptions {
            paranoid_checks: true,
            ..LevelDbOptions::default()
        },
    )
    .unwrap_or_else(|e| panic!("LevelDB's paranoid open of {}: {e}", dir.display()));
    let mut keys = 0;
    let mut it = ldb.iter();
    it.seek_to_first();
    while it.valid() {
        keys += 1;
        it.next();
    }
    let leveldb = prefix_len(|i| ldb.get(&key(i)).unwrap(), keys);
    drop(it);
    drop(ldb);
    fs::remove_dir_all(strata_copy).unwrap();
    fs::remove_dir_all(leveldb_copy).unwrap();
    [strata, leveldb]
}

/// Checks that the `keys` keys a database holds are `key(0)..key(keys)` with their values, read
/// through `get`; returns `keys`.
fn prefix_len(get: impl Fn(u64) -> Option<Vec<u8>>, keys: u64) -> u64 {
    for i in 0..keys {
        assert!(
            get(i) == Some(value(i)),
            "write {i} of a prefix of {keys} missing or wrong"
        );
    }
    assert_eq!(get(keys), None);
    keys
}

#[test]
fn a_kill_at_every_step_of_the_log_leaves_a_directory_both_engines_open_paranoid() {
    const WRITES: u64 = 40;
    let root = tempfile::tempdir().unwrap();
    for steps in 0u64.. {
        let dir = root.path().join(format!("db{steps}"));
        let db = DB::open(
            &dir,
            Options {
                create_if_missing: true,
                ..Options::default()
            },
        )
        .unwrap();
        stop_mapped_log_writes_after(Some(steps));
        let mut completed = 0;
        for i in 0..WRITES {
            db.put(&key(i), &value(i)).unwrap();
            if mapped_log_writes_stopped() {
                break;
            }
            completed += 1;
        }
        let killed = mapped_log_writes_stopped();
        let crashed = copy_without_lock(&dir, root.path(), "crashed");
        drop(db);
        stop_mapped_log_writes_after(None);
        if !killed {
            assert!(
                steps > 100,
                "only {steps} steps: the crash points are not counted"
            );
            return;
        }
        for found in writes_found(&crashed, root.path()) {
            assert!(
                found == completed || found == completed + 1,
                "step {steps}: {found} writes found, {completed} made before the kill"
            );
        }
        fs::remove_dir_all(&crashed).unwrap();
        fs::remove_dir_all(&dir).unwrap();
    }
}

/// Set in the child process to the directory it writes to.
const CHILD_DIR: &str = "STRATA_MAPPED_LOG_CHILD_DIR";
const ROUNDS: u64 = 12;

#[test]
fn a_process_killed_while_writing_leaves_a_directory_both_engines_open_paranoid() {
    if let Some(dir) = std::env::var_os(CHILD_DIR) {
        // The child: writes, acknowledging each write on stdout, until it is killed.
        let db = DB::open(
            Path::new(&dir),
            Options {
                create_if_missing: true,
                ..Options::default()
            },
        )
        .unwrap();
        let mut out = std::io::stdout().lock();
        for i in 0..1_000_000 {
            db.put(&key(i), &value(i)).unwrap();
            writeln!(out, "ack {i}").unwrap();
            out.flush().unwrap();
        }
        panic!("the child was not killed");
    }

    let root = tempfile::tempdir().unwrap();
    let mut rng = StdRng::seed_from_u64(13);
    for round in 0..ROUNDS {
        let dir = root.path().join(format!("db{round}"));
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "a_process_killed_while_writing_leaves_a_directory_both_engines_open_paranoid",
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_DIR, &dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let kill_after = rng.gen_range(1..3_000u64);
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut acknowledged = None;
        for line in lines.by_ref() {
            if let Some(i) = line.unwrap().strip_prefix("ack ") {
                acknowledged = Some(i.parse::<u64>().unwrap());
                if acknowledged >= Some(kill_after) {
                    break;
                }
            }
        }
        child.kill().unwrap();
        // Acknowledgements written before the kill.
        for line in lines {
            if let Some(i) = line.unwrap().strip_prefix("ack ") {
                acknowledged = Some(i.parse::<u64>().unwrap());
            }
        }
        child.wait().unwrap();
        let acknowledged = acknowledged.expect("the child acknowledged no write") + 1;
        for found in writes_found(&dir, root.path()) {
            assert!(
                found >= acknowledged,
                "round {round}: {found} writes found, {acknowledged} acknowledged"
            );
        }
        println!("round {round}: killed after {acknowledged} acknowledged writes");
    }
}
