//! Garbage collection of value files once writes stop, in a database smaller than one value
//! file (256 KiB in a database this small), written by several threads at once: nothing but
//! the writes' own end and the background threads can redo the plan then (no flush or
//! compaction follows), so the files must come within 1.5 times the live value bytes without
//! another write, and a write in progress must never make a pass close the file being written
//! for nothing. Looking for the moment writes stop must not cost the writes themselves a pass
//! each.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use strata::testing::{EnvOp, HookEnv};
use strata::{MemEnv, Options, ValueSeparation, DB};

const DIR: &str = "/db";
const BOUND: f64 = 1.5;
const THREADS: u32 = 4;

fn options(env: &Arc<MemEnv>) -> Options {
    Options {
        value_separation: Some(ValueSeparation::new(256)),
        ..support::options(env)
    }
}

/// Version `version` of thread `thread`'s key `key`: `len` bytes naming all three.
fn value(thread: u32, key: u32, version: u32, len: usize) -> Vec<u8> {
    format!("<{thread}:{key}:{version}>")
        .bytes()
        .cycle()
        .take(len)
        .collect()
}

/// The value files in the directory: number and size.
fn value_files(env: &MemEnv) -> BTreeMap<u64, u64> {
    support::files::value_file_sizes(env, Path::new(DIR))
}

/// How many times a pass closed the file being written to collect it.
fn closes(env: &MemEnv) -> usize {
    support::files::info_log(env, Path::new(DIR))
        .lines()
        .filter(|line| line.contains("to collect it"))
        .count()
}

#[test]
fn writers_at_once_without_garbage_keep_one_file() {
    for trial in 0..20 {
        let env = Arc::new(MemEnv::new());
        let db = Arc::new(DB::open(DIR, options(&env)).unwrap());
        let threads: Vec<_> = (0..THREADS)
            .map(|t| {
                let db = Arc::clone(&db);
                std::thread::spawn(move || {
                    for k in 0..40 {
                        let len = 500 + (k as usize * 97) % 1500;
                        db.put(format!("t{t}k{k:04}").as_bytes(), &value(t, k, 0, len))
                            .unwrap();
                        if k % 10 == 0 {
                            // Passes run while the other threads' values are appended but
                            // not yet in the memtable: those bytes are not garbage.
                            db.compact_range(None, None).unwrap();
                        }
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        drop(db);
        let files = value_files(&env);
        assert_eq!(files.len(), 1, "trial {trial}: {files:?}");
        assert_eq!(
            closes(&env),
            0,
            "trial {trial}: a file closed with no garbage"
        );
    }
}

#[test]
fn overwrites_by_writers_at_once_are_collected_once_they_stop() {
    overwrites_then_rest(false);
}

#[test]
fn overwrites_beside_a_scanner_are_collected_once_both_stop() {
    overwrites_then_rest(true);
}

/// Four threads overwrite 24 keys each (0.5 to 4 KB values, under 256 KiB live) 3,000 times,
/// beside a thread scanning the database over and over when `scan`; then nothing more is
/// written, and the value files must come within the bound.
fn overwrites_then_rest(scan: bool) {
    let env = Arc::new(MemEnv::new());
    let db = Arc::new(DB::open(DIR, options(&env)).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let scanner = {
        let db = Arc::clone(&db);
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            while scan && !stop.load(Ordering::Relaxed) {
                let mut it = db.iter();
                it.seek_to_first();
                while it.valid() {
                    it.next();
                }
                it.status().unwrap();
            }
        })
    };
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let db = Arc::clone(&db);
            std::thread::spawn(move || {
                let mut newest = BTreeMap::new();
                let mut x: u64 = 0x9e37_79b9 + u64::from(t);
                for version in 0..3000 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let k = (x % 24) as u32;
                    let len = 500 + (x >> 20) as usize % 3500;
                    let key = format!("t{t}k{k:04}");
                    let v = value(t, k, version, len);
                    db.put(key.as_bytes(), &v).unwrap();
                    newest.insert(key, v);
                }
                newest
            })
        })
        .collect();
    let mut expected = BTreeMap::new();
    for thread in threads {
        expected.extend(thread.join().unwrap());
    }
    stop.store(true, Ordering::Relaxed);
    scanner.join().unwrap();
    for (key, v) in &expected {
        assert_eq!(db.get(key.as_bytes()).unwrap().as_ref(), Some(v), "{key}");
    }
    // Record bytes: a 4-byte crc, two one- or two-byte lengths, the key and the value.
    let live: u64 = expected
        .iter()
        .map(|(k, v)| (4 + 1 + if v.len() < 128 { 1 } else { 2 } + k.len() + v.len()) as u64)
        .sum();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let total: u64 = value_files(&env).values().sum();
        let ratio = total as f64 / live as f64;
        if ratio <= BOUND {
            eprintln!("rested at {ratio:.3}x, {} closes to collect", closes(&env));
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{ratio:.3}x 20 s after the last write: {:?}",
            value_files(&env)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(db);
    let db = DB::open(DIR, options(&env)).unwrap();
    for (key, v) in &expected {
        assert_eq!(
            db.get(key.as_bytes()).unwrap().as_ref(),
            Some(v),
            "{key} after a reopen"
        );
    }
    drop(db);
    let report = strata::tools::check_db(Path::new(DIR), &options(&env)).unwrap();
    assert!(report.problems.is_empty(), "{report}");
}

/// A writer alone ends every write with no other behind it: with an open iterator keeping the
/// files over the bound, nothing can be collected, and each of its writes once redid the plan
/// (a merged read of every table): 300 puts made about 300 passes, and overwriting 16,000
/// keys took 40 s instead of 0.4 s.
#[test]
fn a_writer_alone_beside_an_open_iterator_does_not_redo_the_plan_at_every_write() {
    let listings = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&listings);
    let env = HookEnv::new(Arc::new(MemEnv::new()), move |call| {
        if call.op == EnvOp::Children {
            // Every pass lists the directory.
            counted.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    });
    let db = DB::open(
        DIR,
        Options {
            value_separation: Some(ValueSeparation::new(256)),
            ..support::options(&env)
        },
    )
    .unwrap();
    let value = |i: u32, version: u32| value(0, i, version, 2000);
    for i in 0..4000 {
        db.put(format!("key{i:06}").as_bytes(), &value(i, 0))
            .unwrap();
    }
    db.compact_range(None, None).unwrap();
    let mut it = db.iter();
    it.seek_to_first();
    assert!(it.valid());
    for i in 0..4000 {
        db.put(format!("key{i:06}").as_bytes(), &value(i, 1))
            .unwrap();
    }
    db.compact_range(None, None).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    listings.store(0, Ordering::Relaxed);
    for i in 0..300 {
        db.put(format!("key{i:06}").as_bytes(), &value(i, 2))
            .unwrap();
    }
    let passes = listings.load(Ordering::Relaxed);
    assert!(
        passes < 30,
        "{passes} passes for 300 puts beside an open iterator"
    );
    drop(it);
}
