//! Space deleted by a range delete stayed on disk for good once a snapshot had kept it through
//! the compaction that met the tombstone: the tombstone and the values it deletes then sat
//! together in the deepest level holding the range, and `compact_range` stopped above that
//! level (as LevelDB's does), so no manual compaction ever reclaimed them. Found in the review
//! of issue 16.
//!
//! The same root cause kept expired values forever: each `compact_range` on a database with
//! expiring keys rewrote the deepest level one level down, so a few calls marched the data to
//! level 6, which no compaction took as input; values that expired there were never reclaimed.
//!
//! Fixed by compacting the deepest level in place (`compaction::picker::compact_range_in_place`):
//! `compact_range` rewrites that level where it is — its tables holding range tombstones, or
//! all of it in the range with expiring keys or a compaction filter.

use std::sync::Arc;
use std::time::Duration;

use strata::{MemEnv, Options, ReadOptions, DB};

use crate::support::options;
use crate::support::state::{scan, Model};

const DIR: &str = "/range-deleted-space";

fn key(i: u32) -> Vec<u8> {
    format!("k{i:04}").into_bytes()
}

fn check(db: &DB, read: &ReadOptions, model: &Model, keys: &[Vec<u8>], what: &str) {
    let many = db.get_many_opt(read, keys).unwrap();
    for (k, got) in keys.iter().zip(many) {
        assert_eq!(got.as_ref(), model.get(k), "{what}: get_many");
        assert_eq!(
            db.get_opt(read, k).unwrap().as_ref(),
            model.get(k),
            "{what}: get"
        );
    }
    assert_eq!(&scan(db, read).unwrap(), model, "{what}: scan");
}

/// Data at the deepest level, an older snapshot, a range tombstone over it compacted down to
/// that level: the snapshot still reads every key, the latest view none; once the snapshot
/// is gone a compaction reclaims both.
#[test]
fn range_deleted_space_kept_for_a_snapshot_was_never_reclaimed() {
    let env = Arc::new(MemEnv::new());
    let options = Options {
        range_deletes: true,
        ..options(&env)
    };
    let keys: Vec<Vec<u8>> = (0..500).map(key).collect();
    let db = DB::open(DIR, options).unwrap();
    let mut model = Model::new();
    for k in &keys {
        db.put(k, &[b'v'; 300]).unwrap();
        model.insert(k.clone(), vec![b'v'; 300]);
    }
    db.compact_range(None, None).unwrap();
    let snap = db.snapshot();
    let old = model.clone();
    db.delete_range(&key(0), &key(500)).unwrap();
    for _ in 0..3 {
        db.compact_range(None, None).unwrap();
    }
    let at_snap = ReadOptions {
        snapshot: Some(snap.clone()),
        ..ReadOptions::default()
    };
    check(&db, &at_snap, &old, &keys, "snapshot");
    check(&db, &ReadOptions::default(), &Model::new(), &keys, "latest");
    drop(snap);
    drop(at_snap);
    db.compact_range(None, None).unwrap();
    check(
        &db,
        &ReadOptions::default(),
        &Model::new(),
        &keys,
        "after release",
    );
    let live: u64 = (0..7)
        .map(|l| {
            db.property(&format!("leveldb.num-files-at-level{l}"))
                .unwrap()
                .parse::<u64>()
                .unwrap()
        })
        .sum();
    assert_eq!(
        live,
        0,
        "the deleted keys and the tombstone are reclaimed: {}",
        db.property("leveldb.sstables").unwrap()
    );
}

/// Six `compact_range` calls move values with a TTL to level 6; once they expired, a
/// `compact_range` must reclaim them.
#[test]
fn expired_values_marched_to_the_last_level_are_never_reclaimed() {
    let env = Arc::new(MemEnv::new());
    env.set_clock(Some(2_000_000_000_000_000));
    let db = DB::open(
        DIR,
        Options {
            expiring_keys: true,
            ..options(&env)
        },
    )
    .unwrap();
    for i in 0..500 {
        db.put_with_ttl(&key(i), &[b'v'; 300], Duration::from_secs(60))
            .unwrap();
    }
    for _ in 0..6 {
        db.compact_range(None, None).unwrap();
    }
    env.advance_clock(Duration::from_secs(120));
    db.compact_range(None, None).unwrap();
    assert_eq!(
        db.property("leveldb.num-files-at-level6").as_deref(),
        Some("0"),
        "expired values left at level 6: {}",
        db.property("leveldb.sstables").unwrap()
    );
}
