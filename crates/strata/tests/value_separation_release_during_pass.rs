//! A reader's release that a pass's plan depends on, noted by another thread while that pass
//! runs (review of 9dcf054).
//!
//! A pass takes its views (the current state and the older ones readers hold) under the state
//! mutex, then works without it, and only at its end notes the readers released meanwhile
//! (`value_files::delete_unreferenced`). But other threads note releases too: an idle
//! compaction thread every 100 ms, and every write (`make_room_for_write`). Since 9dcf054 such a
//! note asks for a new plan only when the plan in place (the *previous* pass's) found files
//! older states reach. When the pass running is the first to see an older state (the install
//! that replaced it came after the previous pass's views), the previous plan says no: the
//! release is noted and forgotten, the running pass ends seeing no release, and its plan keeps
//! the files only that reader reached (undeleted, and excluded from collection) with no pass
//! coming once writes stop.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use strata::testing::{EnvOp, HookEnv};
use strata::{Env, Error, MemEnv, Options, ValueSeparation, DB};

const DIR: &str = "/db";
const BOUND: f64 = 1.5;
const KEYS: u32 = 600;
const LEN: usize = 2000;

fn value(key: u32, version: u32) -> Vec<u8> {
    format!("<{key}:{version}>")
        .bytes()
        .cycle()
        .take(LEN)
        .collect()
}

/// A one-shot gate: `wait` blocks until `open`.
#[derive(Default)]
struct Gate {
    open: Mutex<bool>,
    cv: Condvar,
}

impl Gate {
    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.cv.notify_all();
    }

    fn wait(&self, timeout: Duration) -> bool {
        let guard = self.open.lock().unwrap();
        let (guard, _) = self
            .cv
            .wait_timeout_while(guard, timeout, |open| !*open)
            .unwrap();
        *guard
    }
}

/// Writes every key as version 0, compacts, takes a snapshot (keeping version 0 live), writes
/// version 1 and compacts again: no collection yet. Returns the snapshot, whose release makes
/// version 0 garbage.
fn two_versions_behind_a_snapshot(db: &DB) -> strata::Snapshot {
    for k in 0..KEYS {
        db.put(format!("key{k:05}").as_bytes(), &value(k, 0))
            .unwrap();
    }
    db.compact_range(None, None).unwrap();
    let snapshot = db.snapshot();
    for k in 0..KEYS {
        db.put(format!("key{k:05}").as_bytes(), &value(k, 1))
            .unwrap();
    }
    db.compact_range(None, None).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    snapshot
}

/// Waits, with no further write, until `ready` and the value files hold at most [`BOUND`]
/// times the live bytes (version 1 of every key); fails after 5 s, naming `what` and the
/// files, with the info log's lines about value files.
fn rest_within_bound(mem: &MemEnv, ready: impl Fn() -> bool, what: &str) {
    let live: u64 = (0..KEYS)
        .map(|k| (4 + 1 + 2 + format!("key{k:05}").len() + LEN) as u64)
        .sum();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let files = support::files::value_file_sizes(mem, Path::new(DIR));
        let total: u64 = files.values().sum();
        let ratio = total as f64 / live as f64;
        if ratio <= BOUND && ready() {
            eprintln!("{what}: rested at {ratio:.3}x");
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: {ratio:.3}x 5 s after the last write, with no reader: {files:?}\n{}",
            support::files::info_log(mem, Path::new(DIR))
                .lines()
                .filter(|l| l.contains("value file"))
                .collect::<Vec<_>>()
                .join("\n")
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn released_during_a_pass(background_jobs: usize) {
    let mem = Arc::new(MemEnv::new());
    let stray = PathBuf::from(DIR).join("900000.vlog");
    // Armed: the next table written (garbage collection's rewrite) leaves a stray value file
    // nothing points to, so the pass after that rewrite has one to delete, after it let go of
    // its views; that deletion is held until the test lets it go.
    let armed = Arc::new(AtomicBool::new(false));
    let held = Arc::new(Gate::default());
    let go = Arc::new(Gate::default());
    let env = {
        let (mem, stray, armed, held, go) = (
            Arc::clone(&mem),
            stray.clone(),
            Arc::clone(&armed),
            Arc::clone(&held),
            Arc::clone(&go),
        );
        HookEnv::new(Arc::clone(&mem) as Arc<dyn Env>, move |call| {
            if call.op == EnvOp::NewWritableFile
                && call.path.extension().is_some_and(|e| e == "ldb")
                && armed.swap(false, Ordering::SeqCst)
            {
                let mut file = mem.new_writable_file(&stray).unwrap();
                file.append(&[0u8; 64]).unwrap();
                file.close().unwrap();
            }
            if call.op == EnvOp::RemoveFile && call.path == stray.as_path() {
                held.open();
                assert!(go.wait(Duration::from_secs(30)), "never let go");
            }
            Ok(())
        })
    };
    let options = Options {
        value_separation: Some(ValueSeparation::new(256)),
        max_background_jobs: background_jobs,
        ..support::options(&env)
    };
    let db = Arc::new(DB::open(DIR, options).unwrap());
    let snapshot = two_versions_behind_a_snapshot(&db);
    // The current state, held by an iterator: every pass until the next install sees it as
    // the current one (so their plans find no older state).
    let it = db.iter();
    armed.store(true, Ordering::SeqCst);
    // Version 0 is garbage now: the plan is redone, chooses its files and rewrites the tables
    // in place, which replaces the state the iterator holds; the pass after that rewrite sees
    // it as an older state, reaching version 0's files.
    drop(snapshot);
    assert!(
        held.wait(Duration::from_secs(20)),
        "no pass deleted the stray value file"
    );
    // The reader lets go while that pass runs; another thread notes it (an idle compaction
    // thread's look, and a write's), under the plan of the pass before.
    drop(it);
    let writer = {
        let db = Arc::clone(&db);
        std::thread::spawn(move || db.put(b"small", b"inline").unwrap())
    };
    std::thread::sleep(Duration::from_millis(300));
    go.open();
    writer.join().unwrap();
    // No more writes: the files must come within the bound.
    rest_within_bound(&mem, || true, &format!("jobs {background_jobs}"));
    for k in 0..KEYS {
        assert_eq!(
            db.get(format!("key{k:05}").as_bytes()).unwrap(),
            Some(value(k, 1))
        );
    }
}

#[test]
fn a_release_noted_by_an_idle_thread_during_a_pass_is_not_lost() {
    released_during_a_pass(2);
}

#[test]
fn a_release_noted_by_a_write_during_a_pass_is_not_lost() {
    released_during_a_pass(1);
}

/// The pass after a collection's rewrite lists the directory (`obsolete_files::one_pass`) and,
/// when that fails, returns without a word and without `delete_unreferenced`. Before 9dcf054
/// the release of the state the rewrite replaced had the plan redone (an idle thread's look,
/// within 100 ms); since, nothing does once writes stop: no reader ever held an older state.
#[test]
fn a_pass_that_could_not_list_the_directory_is_redone() {
    let mem = Arc::new(MemEnv::new());
    let armed = Arc::new(AtomicBool::new(false));
    let fail_listing = Arc::new(AtomicBool::new(false));
    let env = {
        let (armed, fail_listing) = (Arc::clone(&armed), Arc::clone(&fail_listing));
        HookEnv::new(Arc::clone(&mem) as Arc<dyn Env>, move |call| {
            if call.op == EnvOp::NewWritableFile
                && call.path.extension().is_some_and(|e| e == "ldb")
                && armed.swap(false, Ordering::SeqCst)
            {
                fail_listing.store(true, Ordering::SeqCst);
            }
            if call.op == EnvOp::Children && fail_listing.swap(false, Ordering::SeqCst) {
                return Err(Error::io("injected, listing", std::io::Error::other("EIO")));
            }
            Ok(())
        })
    };
    let options = Options {
        value_separation: Some(ValueSeparation::new(256)),
        ..support::options(&env)
    };
    let db = DB::open(DIR, options).unwrap();
    let snapshot = two_versions_behind_a_snapshot(&db);
    armed.store(true, Ordering::SeqCst);
    // Version 0 becomes garbage: the rewrite drops it, and the listing of the pass after it
    // fails once.
    drop(snapshot);
    rest_within_bound(
        &mem,
        || !armed.load(Ordering::SeqCst),
        "after the failed listing (the rewrite written)",
    );
}
