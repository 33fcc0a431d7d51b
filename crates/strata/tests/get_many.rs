//! `DB::get_many` answers exactly what one `get` per key answers, and `DB::contains` /
//! `DB::contains_many` say a key has a value exactly when `get` finds one: checked by a proptest over
//! random histories (puts, deletes, range deletes, expiring puts, flushes, compactions of part
//! of the key space) read at the latest state and at snapshots taken along the way, with key
//! lists in any order holding duplicates and absent keys. The data lies in memtables, level-0
//! tables and deeper levels at once, with range tombstones straddling tables.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::sync::Arc;
use std::time::Duration;

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::Config;
use strata::{BloomFilterPolicy, CompressionType, MemEnv, Options, ReadOptions, DB};

/// Keys drawn from a small space, so histories overwrite, delete and re-read the same keys.
const KEYS: u32 = 60;

fn key(i: u32) -> Vec<u8> {
    format!("key{i:03}").into_bytes()
}

#[derive(Debug, Clone)]
enum Op {
    Put(u32, usize),
    Delete(u32),
    DeleteRange(u32, u32),
    /// A put that has expired as soon as it is written (ttl 0), or one that lasts an hour.
    PutWithTtl(u32, bool),
    Snapshot,
    /// Flush and compact keys `[a, b]` (tables move down; others stay where they are).
    Compact(u32, u32),
    /// get_many of these keys at the latest state and at every live snapshot.
    Check(Vec<u32>),
}

fn op() -> impl Strategy<Value = Op> {
    let k = 0..KEYS + 5; // a few keys never written
    prop_oneof![
        6 => (k.clone(), 0..1500usize).prop_map(|(k, n)| Op::Put(k, n)),
        2 => k.clone().prop_map(Op::Delete),
        2 => (k.clone(), 0..12u32).prop_map(|(k, n)| Op::DeleteRange(k, k + n)),
        2 => (k.clone(), any::<bool>()).prop_map(|(k, lasting)| Op::PutWithTtl(k, lasting)),
        1 => Just(Op::Snapshot),
        1 => (k.clone(), 0..30u32).prop_map(|(k, n)| Op::Compact(k, k + n)),
        2 => vec(k, 0..40).prop_map(Op::Check),
    ]
}

fn options(env: &Arc<MemEnv>, filters: bool) -> Options {
    Options {
        range_deletes: true,
        expiring_keys: true,
        // The smallest buffer (64 KiB): values of up to 1.5 KB flush it every few dozen puts.
        write_buffer_size: 64 << 10,
        block_size: 1024,
        compression: CompressionType::None,
        filter_policy: filters
            .then(|| Arc::new(BloomFilterPolicy::new(10)) as Arc<dyn strata::FilterPolicy>),
        ..support::options(env)
    }
}

fn check(db: &DB, read: &ReadOptions, keys: &[u32]) -> Result<(), TestCaseError> {
    let keys: Vec<Vec<u8>> = keys.iter().map(|&k| key(k)).collect();
    let singles: Vec<Option<Vec<u8>>> = keys.iter().map(|k| db.get_opt(read, k).unwrap()).collect();
    for (k, single) in keys.iter().zip(&singles) {
        prop_assert_eq!(
            db.contains_opt(read, k).unwrap(),
            single.is_some(),
            "contains of {}",
            String::from_utf8_lossy(k)
        );
    }
    // On the caller's thread alone, and with runs other threads may take.
    for parallel in [false, true] {
        let read = ReadOptions {
            get_many_parallel: parallel,
            ..read.clone()
        };
        let batched = db.get_many_opt(&read, &keys).unwrap();
        let present = db.contains_many_opt(&read, &keys).unwrap();
        prop_assert_eq!(batched.len(), keys.len());
        prop_assert_eq!(present.len(), keys.len());
        for (((k, got), has), single) in keys.iter().zip(&batched).zip(present).zip(&singles) {
            prop_assert_eq!(
                has,
                single.is_some(),
                "contains_many of {}, parallel {}",
                String::from_utf8_lossy(k),
                parallel
            );
            prop_assert_eq!(
                got,
                single,
                "key {} at snapshot {}, parallel {}",
                String::from_utf8_lossy(k),
                read.snapshot.is_some(),
                parallel
            );
        }
    }
    Ok(())
}

fn run(ops: &[Op], filters: bool) -> Result<(), TestCaseError> {
    let env = Arc::new(MemEnv::new());
    let db = DB::open("/db", options(&env, filters)).unwrap();
    let mut snapshots = Vec::new();
    for (n, op) in ops.iter().enumerate() {
        match op {
            Op::Put(k, len) => {
                let value = format!("{n}-{}", "v".repeat(*len));
                db.put(&key(*k), value.as_bytes()).unwrap();
            }
            Op::Delete(k) => db.delete(&key(*k)).unwrap(),
            Op::DeleteRange(a, b) => db.delete_range(&key(*a), &key(*b)).unwrap(),
            Op::PutWithTtl(k, lasting) => {
                let ttl = if *lasting {
                    Duration::from_secs(3600)
                } else {
                    Duration::ZERO
                };
                db.put_with_ttl(&key(*k), format!("ttl-{n}").as_bytes(), ttl)
                    .unwrap();
            }
            Op::Snapshot => {
                snapshots.push(db.snapshot());
                if snapshots.len() > 3 {
                    snapshots.remove(0);
                }
            }
            Op::Compact(a, b) => db.compact_range(Some(&key(*a)), Some(&key(*b))).unwrap(),
            Op::Check(keys) => {
                check(&db, &ReadOptions::default(), keys)?;
                for snapshot in &snapshots {
                    let read = ReadOptions {
                        snapshot: Some(snapshot.clone()),
                        ..ReadOptions::default()
                    };
                    check(&db, &read, keys)?;
                }
            }
        }
    }
    // Every key and as many never written, in reverse order and twice, at the end: enough
    // distinct keys for a batch cut in several runs.
    let all: Vec<u32> = (0..KEYS * 3).rev().chain(0..KEYS * 3).collect();
    check(&db, &ReadOptions::default(), &all)
}

fn config() -> Config {
    let cases = std::env::var("STRATA_GET_MANY_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(48);
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn get_many_and_contains_answer_what_single_gets_answer(
        ops in vec(op(), 1..300),
        filters in any::<bool>(),
    ) {
        run(&ops, filters)?;
    }
}

#[test]
fn get_many_of_no_keys_is_empty_and_absent_keys_are_none() {
    let env = Arc::new(MemEnv::new());
    let db = DB::open("/db", options(&env, true)).unwrap();
    assert!(db.get_many::<&[u8]>(&[]).unwrap().is_empty());
    db.put(b"b", b"2").unwrap();
    db.compact_range(None, None).unwrap();
    db.put(b"a", b"1").unwrap();
    assert_eq!(
        db.get_many(&[&b"c"[..], b"a", b"b", b"a", b""]).unwrap(),
        vec![
            None,
            Some(b"1".to_vec()),
            Some(b"2".to_vec()),
            Some(b"1".to_vec()),
            None
        ]
    );
}

#[test]
fn neighbouring_keys_read_their_table_block_once() {
    use std::sync::atomic::Ordering;

    let (env, table_reads) = support::reads::table_read_counter();
    let options = Options {
        block_size: 4096,
        compression: CompressionType::None,
        ..support::options(&env)
    };
    let db = DB::open("/db", options.clone()).unwrap();
    for i in 0..2000u32 {
        db.put(&key(i), &[b'v'; 100]).unwrap();
    }
    db.compact_range(None, None).unwrap();
    drop(db);
    // Reopened, with reads that leave the block cache empty: every block a lookup needs is
    // read from the file.
    let db = DB::open("/db", options).unwrap();
    let read = ReadOptions {
        fill_cache: false,
        ..ReadOptions::default()
    };
    let keys: Vec<Vec<u8>> = (500..600).map(key).collect();

    table_reads.store(0, Ordering::Relaxed);
    for k in &keys {
        assert!(db.get_opt(&read, k).unwrap().is_some());
    }
    let single = table_reads.swap(0, Ordering::Relaxed);
    // 100 keys of ~110 bytes span 3 or 4 blocks of 4 KiB.
    assert!(single >= 100, "single gets read {single} blocks");
    // On one thread each block once; in runs of at least 16 keys (at most 6 runs), each run
    // reads the block it shares with the run before again.
    for (parallel, most) in [(false, 5), (true, 5 + 5)] {
        let read = ReadOptions {
            get_many_parallel: parallel,
            ..read.clone()
        };
        table_reads.store(0, Ordering::Relaxed);
        let values = db.get_many_opt(&read, &keys).unwrap();
        let batched = table_reads.load(Ordering::Relaxed);
        assert!(values.iter().all(Option::is_some));
        assert!(
            batched <= most,
            "get_many (parallel: {parallel}) read {batched} blocks for 100 neighbouring keys"
        );
    }
}

/// A batch cut in runs fails as a whole when a table only the last run reads cannot be read,
/// and succeeds when the damaged table holds none of its keys.
#[test]
fn a_read_error_on_any_thread_fails_the_batch() {
    use std::collections::BTreeSet;
    use std::sync::atomic::{AtomicBool, Ordering};
    use strata::testing::{EnvOp, HookEnv};
    use strata::Env;

    // Sorted after every `key(i)`.
    let upper_key = |i: u32| format!("upper{i}").into_bytes();
    let failing = Arc::new(AtomicBool::new(false));
    let doomed: Arc<parking_lot::Mutex<BTreeSet<String>>> = Arc::default();
    let (fail, names) = (Arc::clone(&failing), Arc::clone(&doomed));
    let mem = Arc::new(MemEnv::new());
    let env = HookEnv::new(mem.clone(), move |call| {
        let name = call.path.file_name().unwrap().to_string_lossy();
        if call.op == EnvOp::ReadAt && fail.load(Ordering::Relaxed) && names.lock().contains(&*name)
        {
            return Err(strata::Error::io(
                format!("injected read error in {name}"),
                std::io::Error::other("injected"),
            ));
        }
        Ok(())
    });
    let options = Options {
        compression: CompressionType::None,
        ..support::options(&env)
    };
    let tables = || -> BTreeSet<String> {
        mem.children(std::path::Path::new("/db"))
            .unwrap()
            .into_iter()
            .filter(|n| n.ends_with(".ldb"))
            .collect()
    };
    let db = DB::open("/db", options.clone()).unwrap();
    for i in 0..1000u32 {
        db.put(&key(i), &[b'v'; 100]).unwrap();
    }
    db.compact_range(None, None).unwrap();
    let lower = tables();
    for i in 1000..2000u32 {
        db.put(&upper_key(i), &[b'v'; 100]).unwrap();
    }
    db.compact_range(None, None).unwrap();
    let upper: BTreeSet<String> = tables().difference(&lower).cloned().collect();
    assert!(
        !upper.is_empty() && tables().is_superset(&lower),
        "{lower:?} then {upper:?}"
    );
    drop(db);
    *doomed.lock() = upper;
    // Reopened: nothing cached, so the lookups read the tables.
    let db = DB::open("/db", options).unwrap();
    failing.store(true, Ordering::Relaxed);
    let read = ReadOptions {
        get_many_parallel: true,
        ..ReadOptions::default()
    };
    let low: Vec<Vec<u8>> = (0..1000u32).step_by(5).map(key).collect();
    let all: Vec<Vec<u8>> = (0..1000u32)
        .step_by(10)
        .map(key)
        .chain((1000..2000).step_by(10).map(upper_key))
        .collect();
    let values = db.get_many_opt(&read, &low).unwrap();
    assert!(values.iter().all(Option::is_some));
    let err = db.get_many_opt(&read, &all).unwrap_err();
    assert!(err.to_string().contains("injected read error"), "{err}");
}

/// More callers than there are helper threads, each with batches of several runs, one after
/// another and at once: helpers move between posted batches, callers withdraw theirs, and
/// every batch answers exactly, whichever threads looked its runs up.
#[test]
fn many_callers_share_the_helpers_and_every_batch_answers() {
    let env = Arc::new(MemEnv::new());
    let db = Arc::new(DB::open("/db", support::options(&env)).unwrap());
    for i in 0..3000u32 {
        db.put(&key(i), &key(i)).unwrap();
    }
    db.compact_range(None, None).unwrap();
    for i in (0..3000u32).step_by(3) {
        db.delete(&key(i)).unwrap();
    }
    let callers: Vec<_> = (0..8u32)
        .map(|caller| {
            let db = Arc::clone(&db);
            std::thread::spawn(move || {
                let read = ReadOptions {
                    get_many_parallel: true,
                    ..ReadOptions::default()
                };
                for round in 0..40u32 {
                    let keys: Vec<u32> = (0..100 + round)
                        .map(|j| (caller * 977 + round * 131 + j * 29) % 3100)
                        .collect();
                    let bytes: Vec<Vec<u8>> = keys.iter().map(|&k| key(k)).collect();
                    let values = db.get_many_opt(&read, &bytes).unwrap();
                    for (&k, value) in keys.iter().zip(&values) {
                        let expected = (k < 3000 && k % 3 != 0).then(|| key(k));
                        assert_eq!(value, &expected, "caller {caller} round {round} key {k}");
                    }
                    if round % 10 == 9 {
                        // Batches that find the helpers asleep again.
                        std::thread::sleep(Duration::from_millis(2));
                    }
                }
            })
        })
        .collect();
    for caller in callers {
        caller.join().unwrap();
    }
}
