//! Range deletes under a custom (reverse) comparator through
//! flushes, compactions and reopens; a compaction filter that removes everything against
//! snapshots held across several compactions.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::cmp::Ordering;
use std::sync::Arc;

use strata::{CompactionFilter, Comparator, FilterDecision, MemEnv, Options, ReadOptions, DB};
use support::state::{scan, Model};

const DIR: &str = "/review16b";

fn key(i: u32) -> Vec<u8> {
    format!("k{i:04}").into_bytes()
}

struct Reverse;
impl Comparator for Reverse {
    fn name(&self) -> &str {
        "review.Reverse"
    }
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        b.cmp(a)
    }
}

/// Checks gets, `get_many` and a forward scan (in the comparator's order) against `model`.
fn check(db: &DB, read: &ReadOptions, model: &Model, keys: &[Vec<u8>], what: &str) {
    let many = db.get_many_opt(read, keys).unwrap();
    for (k, got) in keys.iter().zip(many) {
        assert_eq!(got.as_ref(), model.get(k), "{what}: get_many {k:?}");
        assert_eq!(
            db.get_opt(read, k).unwrap().as_ref(),
            model.get(k),
            "{what}: get {k:?}"
        );
    }
    let mut it = db.iter_opt(read);
    it.seek_to_first();
    let mut seen = Vec::new();
    while it.valid() {
        seen.push(it.key().to_vec());
        it.next();
    }
    it.status().unwrap();
    let expected: Vec<Vec<u8>> = model.keys().rev().cloned().collect();
    assert_eq!(seen, expected, "{what}: scan");
}

/// With a reverse comparator, `delete_range(start, end)` deletes the keys with
/// `start >= k > end` bytewise (comparator order `start <= k < end`), in every state.
#[test]
fn range_deletes_follow_a_reverse_comparator() {
    let env = Arc::new(MemEnv::new());
    let options = || Options {
        comparator: Arc::new(Reverse),
        range_deletes: true,
        write_buffer_size: 16 << 10,
        ..support::options(&env)
    };
    let keys: Vec<Vec<u8>> = (0..300).map(key).collect();
    let mut model = Model::new();
    let db = DB::open(DIR, options()).unwrap();
    for k in &keys {
        db.put(k, &[b'x'; 200]).unwrap();
        model.insert(k.clone(), vec![b'x'; 200]);
    }
    db.compact_range(None, None).unwrap();
    // In reverse order, key(200) comes before key(100).
    assert!(
        db.delete_range(&key(100), &key(200)).is_err(),
        "start after end"
    );
    db.delete_range(&key(200), &key(100)).unwrap();
    model.retain(|k, _| {
        !(k.as_slice() <= key(200).as_slice() && k.as_slice() > key(100).as_slice())
    });
    check(&db, &ReadOptions::default(), &model, &keys, "memtable");
    let snap = db.snapshot();
    let before_second = model.clone();
    db.delete_range(&key(50), &key(20)).unwrap();
    model.retain(|k, _| !(k.as_slice() <= key(50).as_slice() && k.as_slice() > key(20).as_slice()));
    db.compact_range(Some(&key(250)), Some(&key(150))).unwrap();
    check(
        &db,
        &ReadOptions::default(),
        &model,
        &keys,
        "partial compaction",
    );
    let at_snap = ReadOptions {
        snapshot: Some(snap.clone()),
        ..ReadOptions::default()
    };
    check(&db, &at_snap, &before_second, &keys, "snapshot");
    db.compact_range(None, None).unwrap();
    check(
        &db,
        &ReadOptions::default(),
        &model,
        &keys,
        "full compaction",
    );
    check(
        &db,
        &at_snap,
        &before_second,
        &keys,
        "snapshot after full compaction",
    );
    drop(snap);
    drop(db);
    let db = DB::open(DIR, options()).unwrap();
    check(&db, &ReadOptions::default(), &model, &keys, "reopen");
    db.compact_range(None, None).unwrap();
    check(
        &db,
        &ReadOptions::default(),
        &model,
        &keys,
        "compaction after reopen",
    );
}

struct RemoveAll;
impl CompactionFilter for RemoveAll {
    fn filter(&self, _level: usize, _key: &[u8], _value: &[u8]) -> FilterDecision {
        FilterDecision::Remove
    }
}

/// A filter removing every entry it is asked about: snapshots held across flushes and several
/// compactions keep their view exactly; the latest view loses only entries written after the
/// newest snapshot.
#[test]
fn a_filter_removing_everything_never_changes_a_snapshots_view() {
    let env = Arc::new(MemEnv::new());
    let options = Options {
        compaction_filter: Some(Arc::new(RemoveAll)),
        write_buffer_size: 16 << 10,
        ..support::options(&env)
    };
    let keys: Vec<Vec<u8>> = (0..200).map(key).collect();
    let db = DB::open(DIR, options).unwrap();
    let mut model = Model::new();
    let mut snaps = Vec::new();
    for round in 0..4u8 {
        for (i, k) in keys.iter().enumerate() {
            if i % (round as usize + 2) == 0 {
                db.put(k, &[round; 100]).unwrap();
                model.insert(k.clone(), vec![round; 100]);
            }
        }
        snaps.push((db.snapshot(), model.clone()));
        db.compact_range(None, None).unwrap();
        for (snap, m) in &snaps {
            let read = ReadOptions {
                snapshot: Some(snap.clone()),
                ..ReadOptions::default()
            };
            check_bytewise(&db, &read, m, &keys, round);
        }
    }
    // Every write is seen by the newest snapshot: the latest view is the same.
    check_bytewise(&db, &ReadOptions::default(), &model, &keys, 9);
    // Writes after the newest snapshot are filtered away (older values stay hidden); the
    // snapshots keep their views.
    for k in &keys[..10] {
        db.put(k, b"late").unwrap();
        model.remove(k);
    }
    db.compact_range(None, None).unwrap();
    check_bytewise(&db, &ReadOptions::default(), &model, &keys, 10);
    for (snap, m) in &snaps {
        let read = ReadOptions {
            snapshot: Some(snap.clone()),
            ..ReadOptions::default()
        };
        check_bytewise(&db, &read, m, &keys, 11);
    }
}

fn check_bytewise(db: &DB, read: &ReadOptions, model: &Model, keys: &[Vec<u8>], round: u8) {
    let many = db.get_many_opt(read, keys).unwrap();
    for (k, got) in keys.iter().zip(many) {
        assert_eq!(got.as_ref(), model.get(k), "round {round}: get_many");
        assert_eq!(
            db.get_opt(read, k).unwrap().as_ref(),
            model.get(k),
            "round {round}: get"
        );
    }
    assert_eq!(&scan(db, read).unwrap(), model, "round {round}: scan");
}
