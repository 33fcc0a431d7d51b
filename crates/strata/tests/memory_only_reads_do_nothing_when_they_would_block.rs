//! A read with `ReadOptions::memory_only` that would have to wait fails with
//! `Error::WouldBlock` having opened no file and read no byte (and left no table open for the
//! next one), on a database with range deletes and expiring keys, at a snapshot or not; and
//! whatever it answers is what the same read that may wait answers. (Value files: a database
//! separating values opens every table at open, for its accounting, so there only a value
//! read is refused: `reads_and_writes_that_must_not_wait.rs`.)

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use strata::testing::{EnvOp, HookEnv};
use strata::{Error, MemEnv, Options, ReadOptions, DB};

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

fn memory_only(snapshot: Option<strata::Snapshot>) -> ReadOptions {
    ReadOptions {
        memory_only: true,
        snapshot,
        ..ReadOptions::default()
    }
}

fn would_block<T: std::fmt::Debug>(result: &strata::Result<T>) -> bool {
    matches!(result, Err(Error::WouldBlock(_)))
}

/// Counts the file opens and reads of tables, logs and value files while `counting` is set.
struct Counter {
    counting: Arc<AtomicBool>,
    count: Arc<AtomicU64>,
}

fn counting_env() -> (HookEnv, Counter) {
    let counting = Arc::new(AtomicBool::new(false));
    let count = Arc::new(AtomicU64::new(0));
    let env = {
        let (counting, count) = (Arc::clone(&counting), Arc::clone(&count));
        HookEnv::new(Arc::new(MemEnv::new()), move |call| {
            let data = call
                .path
                .extension()
                .is_some_and(|e| e == "ldb" || e == "log" || e == "vlog" || e == "sst");
            let io = matches!(
                call.op,
                EnvOp::NewRandomAccessFile | EnvOp::NewSequentialFile | EnvOp::ReadAt | EnvOp::Read
            );
            if data && io && counting.load(Ordering::SeqCst) {
                count.fetch_add(1, Ordering::SeqCst);
            }
            Ok(())
        })
    };
    (env, Counter { counting, count })
}

/// Every memory-only read of a reopened database (no table open) would block, and doing so
/// touches no file: gets, `get_many`, `contains`, `head`, iterators in both directions, at a
/// snapshot and not, with range deletes and expiring keys. A refused read leaves the tables
/// closed (the next is refused too); a read that may wait then opens them, and the
/// memory-only reads answer what it answers.
#[test]
fn a_refused_read_opens_no_file_and_reads_no_byte() {
    let (env, counter) = counting_env();
    let options = Options {
        range_deletes: true,
        expiring_keys: true,
        ..support::options(&env)
    };
    let db = DB::open("/db", options.clone()).unwrap();
    for i in 0..3000 {
        let size = if i % 7 == 0 { 2000 } else { 50 };
        db.put(&key(i), &vec![b'a' + (i % 26) as u8; size]).unwrap();
    }
    db.delete_range(&key(100), &key(200)).unwrap();
    db.put_with_ttl(&key(5000), b"expiring", Duration::from_secs(3600))
        .unwrap();
    db.compact_range(None, None).unwrap();
    drop(db);
    let db = DB::open("/db", options).unwrap();
    let snapshot = db.snapshot();
    counter.counting.store(true, Ordering::SeqCst);
    for read in [memory_only(None), memory_only(Some(snapshot.clone()))] {
        for k in [key(1), key(150), key(5000)] {
            assert!(would_block(&db.get_opt(&read, &k)));
            assert!(would_block(&db.contains_opt(&read, &k)));
            assert!(would_block(&db.head_opt(&read, &k)));
        }
        // No table holds a key past the last one: that is answered from memory.
        assert_eq!(db.get_opt(&read, &key(9999)).unwrap(), None);
        let batch: Vec<Vec<u8>> = (0..50).map(|i| key(i * 60)).collect();
        assert!(would_block(&db.get_many_opt(&read, &batch)));
        assert!(would_block(&db.contains_many_opt(&read, &batch)));
        for position in 0..3 {
            let mut it = db.iter_opt(&read);
            match position {
                0 => it.seek_to_first(),
                1 => it.seek_to_last(),
                _ => it.seek(&key(1500)),
            }
            assert!(!it.valid());
            assert!(would_block(&it.status()), "{:?}", it.status());
            let mut keys = db.iter_keys_opt(&read);
            keys.seek_to_first();
            assert!(!keys.valid());
            assert!(would_block(&keys.status()));
        }
    }
    counter.counting.store(false, Ordering::SeqCst);
    assert_eq!(
        counter.count.load(Ordering::SeqCst),
        0,
        "refused memory-only reads opened or read files"
    );
    // Reads that may wait open the tables (a scan opens every one); then the memory-only
    // reads answer from memory what they answer, except values in value files.
    let scan = support::state::scan(&db, &ReadOptions::default()).unwrap();
    for i in [1u32, 2, 150, 2999, 5000, 9999] {
        let k = key(i);
        let expected = scan.get(&k).cloned();
        let head = db.head_opt(&memory_only(None), &k).unwrap();
        assert_eq!(head, expected.as_ref().map(|v| v.len() as u64), "head {i}");
        assert_eq!(
            db.contains_opt(&memory_only(None), &k).unwrap(),
            expected.is_some()
        );
        assert_eq!(
            db.get_opt(&memory_only(None), &k).unwrap(),
            expected,
            "get {i}"
        );
    }
    let mut keys = db.iter_keys_opt(&memory_only(Some(snapshot)));
    keys.seek_to_first();
    let mut seen = BTreeMap::new();
    while keys.valid() {
        seen.insert(keys.key().to_vec(), keys.value_len());
        keys.next();
    }
    keys.status().unwrap();
    let expected: BTreeMap<Vec<u8>, u64> = scan
        .iter()
        .map(|(k, v)| (k.clone(), v.len() as u64))
        .collect();
    assert_eq!(seen, expected);
}

/// One randomized history on a database with range deletes and expiring keys, reopened and
/// flushed now and then so some tables are open and others not: every memory-only read
/// either would block or answers exactly what the read that may wait answers, at the
/// latest state and at snapshots.
#[test]
fn memory_only_answers_are_the_answers_of_reads_that_wait() {
    for seed in 0..4u64 {
        let env = Arc::new(MemEnv::new());
        let options = Options {
            range_deletes: true,
            expiring_keys: true,
            write_buffer_size: 16 << 10,
            ..support::options(&env)
        };
        let mut rng = StdRng::seed_from_u64(seed);
        let mut db = DB::open("/db", options.clone()).unwrap();
        let mut snapshots: Vec<strata::Snapshot> = Vec::new();
        let (mut answered, mut refused) = (0u64, 0u64);
        for step in 0..3000u32 {
            let k = key(rng.gen_range(0..400));
            match rng.gen_range(0..100) {
                0..=49 => db.put(&k, format!("v{step}").as_bytes()).unwrap(),
                50..=59 => db.delete(&k).unwrap(),
                60..=62 => {
                    let start = rng.gen_range(0..400);
                    let end = start + rng.gen_range(0..30);
                    db.delete_range(&key(start), &key(end)).unwrap();
                }
                63..=67 => {
                    let ttl = if rng.gen_bool(0.5) {
                        Duration::from_micros(1)
                    } else {
                        Duration::from_secs(3600)
                    };
                    db.put_with_ttl(&k, format!("t{step}").as_bytes(), ttl)
                        .unwrap();
                }
                68..=69 => snapshots.push(db.snapshot()),
                70 => {
                    snapshots.clear();
                    drop(db);
                    db = DB::open("/db", options.clone()).unwrap();
                }
                71 => db.compact_range(Some(b"zzz"), Some(b"zzz")).unwrap(),
                72..=79 => {
                    // A read that may wait (opening a table).
                    db.get(&k).unwrap();
                }
                _ => {
                    let snapshot = match snapshots.len() {
                        0 => None,
                        n if rng.gen_bool(0.5) => Some(snapshots[rng.gen_range(0..n)].clone()),
                        _ => None,
                    };
                    let waiting = ReadOptions {
                        snapshot: snapshot.clone(),
                        ..ReadOptions::default()
                    };
                    let quick = memory_only(snapshot);
                    let probes: Vec<Vec<u8>> = (0..8).map(|_| key(rng.gen_range(0..400))).collect();
                    match db.get_many_opt(&quick, &probes) {
                        Ok(found) => {
                            assert_eq!(found, db.get_many_opt(&waiting, &probes).unwrap());
                            answered += 1;
                        }
                        Err(Error::WouldBlock(_)) => refused += 1,
                        Err(e) => panic!("seed {seed} step {step}: {e}"),
                    }
                    match db.get_opt(&quick, &k) {
                        Ok(found) => assert_eq!(
                            found,
                            db.get_opt(&waiting, &k).unwrap(),
                            "seed {seed} step {step}"
                        ),
                        Err(Error::WouldBlock(_)) => {}
                        Err(e) => panic!("seed {seed} step {step}: {e}"),
                    }
                    if let Ok(found) = db.contains_opt(&quick, &k) {
                        assert_eq!(found, db.contains_opt(&waiting, &k).unwrap());
                    }
                    let quick_scan = support::state::scan(&db, &quick);
                    if let Ok(scan) = quick_scan {
                        assert_eq!(scan, support::state::scan(&db, &waiting).unwrap());
                    } else {
                        assert!(would_block(&quick_scan), "{:?}", quick_scan.err());
                    }
                }
            }
        }
        assert!(
            answered > 0 && refused > 0,
            "seed {seed}: {answered} answered, {refused} refused: both paths must run"
        );
    }
}
