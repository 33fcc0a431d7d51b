//! Expiring keys (format extension `expiring-keys`) with a clock the test stops and moves
//! (`MemEnv::set_clock`): an expired key is never returned by a get, a get_many, an iterator
//! in either direction or a read at a snapshot, wherever its entry lies (memtable, level 0,
//! deeper levels) and whatever older value it overwrote; its expiry time is absolute, so it
//! survives reopening; and compactions reclaim expired values (the bytes go, older values
//! stay hidden), with or without snapshots.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::sync::Arc;
use std::time::Duration;

use strata::{CompressionType, MemEnv, Options, ReadOptions, DB};
use support::state::{scan, Model};

const DIR: &str = "/ttl-db";
/// 2026-01-01T00:00:00Z, in microseconds: where the tests stop the clock.
const START: u64 = 1_767_225_600_000_000;

fn options(env: &Arc<MemEnv>) -> Options {
    Options {
        expiring_keys: true,
        range_deletes: true,
        write_buffer_size: 64 << 10,
        compression: CompressionType::None,
        ..support::options(env)
    }
}

fn stopped_clock() -> Arc<MemEnv> {
    let env = Arc::new(MemEnv::new());
    env.set_clock(Some(START));
    env
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// Every read path at `read` agrees with `model`: forward and backward scans, a get of each
/// of `probe`, and one get_many of all of them.
fn check(db: &DB, read: &ReadOptions, model: &Model, probe: &[&[u8]]) {
    assert_eq!(&scan(db, read).unwrap(), model, "forward scan");
    let mut it = db.iter_opt(read);
    it.seek_to_last();
    let mut backward = Model::new();
    while it.valid() {
        backward.insert(it.key().to_vec(), it.value().to_vec());
        it.prev();
    }
    it.status().unwrap();
    assert_eq!(&backward, model, "backward scan");
    let many = db.get_many_opt(read, probe).unwrap();
    for (k, batched) in probe.iter().zip(many) {
        let expected = model.get(*k);
        assert_eq!(db.get_opt(read, k).unwrap().as_ref(), expected, "get {k:?}");
        assert_eq!(batched.as_ref(), expected, "get_many {k:?}");
    }
}

fn model(entries: &[(&[u8], &[u8])]) -> Model {
    entries
        .iter()
        .map(|(k, v)| (k.to_vec(), v.to_vec()))
        .collect()
}

#[test]
fn expired_keys_are_never_returned_from_any_source() {
    let env = stopped_clock();
    let db = DB::open(DIR, options(&env)).unwrap();
    // Overwritten values that must not come back when their successor expires: one in a
    // deeper level, one in level 0.
    db.put(b"deep", b"old").unwrap();
    db.put(b"mem", b"old").unwrap();
    db.compact_range(None, None).unwrap();
    db.put_with_ttl(b"deep", b"new", secs(10)).unwrap();
    db.put(b"plain", b"p").unwrap();
    db.compact_range(None, None).unwrap();
    db.put(b"level0", b"old").unwrap();
    db.put_with_ttl(b"level0", b"new", secs(20)).unwrap();
    // Flushed to level 0 (a manual compaction of a key range the tables do not hold).
    db.compact_range(Some(b"zz"), Some(b"zzz")).unwrap();
    db.put_with_ttl(b"mem", b"new", secs(30)).unwrap();
    db.put_with_ttl(b"zero", b"gone at once", Duration::ZERO)
        .unwrap();
    let before = db.snapshot();
    let at_snapshot = ReadOptions {
        snapshot: Some(before.clone()),
        ..ReadOptions::default()
    };
    let probe: &[&[u8]] = &[b"deep", b"level0", b"mem", b"plain", b"zero", b"absent"];
    let all = [
        (&b"deep"[..], &b"new"[..]),
        (b"level0", b"new"),
        (b"mem", b"new"),
        (b"plain", b"p"),
    ];
    check(&db, &ReadOptions::default(), &model(&all), probe);

    // Just before an expiry time the value is there; at it, it is gone, also at the snapshot
    // taken before (it expired for every reader).
    env.advance_clock(Duration::from_micros(9_999_999));
    check(&db, &at_snapshot, &model(&all), probe);
    env.advance_clock(Duration::from_micros(1));
    let after_deep = model(&all[1..]);
    check(&db, &ReadOptions::default(), &after_deep, probe);
    check(&db, &at_snapshot, &after_deep, probe);
    env.advance_clock(secs(10));
    check(&db, &at_snapshot, &model(&all[2..]), probe);
    env.advance_clock(secs(10));
    let only_plain = model(&all[3..]);
    check(&db, &ReadOptions::default(), &only_plain, probe);
    check(&db, &at_snapshot, &only_plain, probe);

    // Compactions and a reopen change nothing of it.
    db.compact_range(None, None).unwrap();
    check(&db, &at_snapshot, &only_plain, probe);
    drop((before, at_snapshot));
    drop(db);
    let db = DB::open(DIR, options(&env)).unwrap();
    check(&db, &ReadOptions::default(), &only_plain, probe);
}

#[test]
fn expiry_times_are_absolute_and_survive_reopen() {
    let env = stopped_clock();
    let db = DB::open(DIR, options(&env)).unwrap();
    db.put_with_ttl(b"logged", b"1", secs(60)).unwrap();
    db.put_with_ttl(b"tabled", b"2", secs(90)).unwrap();
    db.compact_range(Some(b"tabled"), Some(b"tabled")).unwrap();
    drop(db);

    // Reopened 59 s later: the log and the tables hold the time, not the duration.
    env.advance_clock(secs(59));
    let db = DB::open(DIR, options(&env)).unwrap();
    assert_eq!(db.get(b"logged").unwrap(), Some(b"1".to_vec()));
    env.advance_clock(secs(1));
    assert_eq!(db.get(b"logged").unwrap(), None);
    assert_eq!(db.get(b"tabled").unwrap(), Some(b"2".to_vec()));
    drop(db);
    env.advance_clock(secs(30));
    let db = DB::open(DIR, options(&env)).unwrap();
    assert_eq!(
        db.get_many(&[b"logged", b"tabled"]).unwrap(),
        vec![None, None]
    );
    assert!(scan(&db, &ReadOptions::default()).unwrap().is_empty());
}

/// Bytes of the live tables of the database in `DIR`.
fn table_bytes(db: &DB) -> u64 {
    db.approximate_sizes(&[strata::Range {
        start: b"",
        limit: b"\xff\xff",
    }])[0]
}

#[test]
fn compactions_reclaim_expired_values_and_older_ones_stay_hidden() {
    for with_snapshot in [false, true] {
        let env = stopped_clock();
        let db = DB::open(DIR, options(&env)).unwrap();
        let key = |i: u32| format!("key{i:05}").into_bytes();
        for i in 0..2000 {
            db.put(&key(i), b"older").unwrap();
        }
        db.compact_range(None, None).unwrap();
        let big = vec![b'x'; 1000];
        for i in 0..2000 {
            db.put_with_ttl(&key(i), &big, secs(60)).unwrap();
        }
        db.put(b"kept", b"k").unwrap();
        db.compact_range(None, None).unwrap();
        let full = table_bytes(&db);
        assert!(full > 2_000_000, "{full} bytes before expiry");

        // A snapshot taken before the expiry sees what everyone sees once it has passed.
        let snapshot = with_snapshot.then(|| db.snapshot());
        env.advance_clock(secs(60));
        db.compact_range(None, None).unwrap();
        let reclaimed = table_bytes(&db);
        assert!(
            reclaimed < full / 20,
            "snapshot {with_snapshot}: {reclaimed} of {full} bytes left after expiry"
        );
        let expected = model(&[(b"kept", b"k")]);
        let reads = [
            ReadOptions::default(),
            ReadOptions {
                snapshot: snapshot.clone(),
                ..ReadOptions::default()
            },
        ];
        for read in &reads {
            assert_eq!(scan(&db, read).unwrap(), expected);
            assert_eq!(db.get_opt(read, &key(7)).unwrap(), None);
        }
        drop(snapshot);
        drop(db);
        let db = DB::open(DIR, options(&env)).unwrap();
        assert_eq!(scan(&db, &ReadOptions::default()).unwrap(), expected);
    }
}

#[test]
fn a_stopped_clock_is_the_env_clock_and_moves_only_when_told() {
    let env = MemEnv::new();
    let wall = strata::Env::now_micros(&env);
    assert!(wall > START, "the wall clock runs from the Unix epoch");
    env.set_clock(Some(START));
    assert_eq!(strata::Env::now_micros(&env), START);
    env.advance_clock(secs(2));
    assert_eq!(strata::Env::now_micros(&env), START + 2_000_000);
    env.set_clock(None);
    assert!(strata::Env::now_micros(&env) >= wall);
}
