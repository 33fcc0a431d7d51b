//! `compact_range` rewrites the deepest level holding the range *in place* when compactions can
//! reclaim more there than shadowed entries: the tables holding range tombstones (with range
//! deletes), every table in the range (with expiring keys or a compaction filter). These tests
//! drive that rewrite through the cases where it could go wrong: a level of many tables taken a
//! chunk at a time, many versions of a key kept by snapshots and released a few at a time, and
//! repeated calls, which must leave the data where it is rather than march it down a level per
//! call.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::sync::Arc;

use strata::{CompactionFilter, FilterDecision, MemEnv, Options, ReadOptions, Snapshot, DB};
use support::state::{scan, Model};

const DIR: &str = "/deepest-level";
const LEVELS: usize = 7;

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

/// About 200 bytes that compress poorly, so tables fill up.
fn value(i: u32, round: u32) -> Vec<u8> {
    value_of_len(i, round, 200)
}

fn value_of_len(i: u32, round: u32, len: usize) -> Vec<u8> {
    let mut v = format!("value-{i}-{round}-").into_bytes();
    let mut x = u64::from(i) << 32 | u64::from(round);
    while v.len() < len {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        v.push(b'a' + (x >> 59) as u8);
    }
    v
}

/// The smallest memtables and tables the engine allows (64 KiB, 1 MiB), so a few thousand
/// keys make many tables in one level.
fn small_tables(env: &Arc<MemEnv>) -> Options {
    Options {
        range_deletes: true,
        write_buffer_size: 64 << 10,
        max_file_size: 1 << 20,
        ..support::options(env)
    }
}

fn files_per_level(db: &DB) -> Vec<usize> {
    (0..LEVELS)
        .map(|l| {
            db.property(&format!("leveldb.num-files-at-level{l}"))
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect()
}

fn at(snapshot: &Snapshot) -> ReadOptions {
    ReadOptions {
        snapshot: Some(snapshot.clone()),
        ..ReadOptions::default()
    }
}

/// Bytes the tables hold for user keys in `[from, to)`.
fn bytes_in(db: &DB, from: u32, to: u32) -> u64 {
    db.approximate_sizes(&[strata::Range {
        start: &key(from),
        limit: &key(to),
    }])[0]
}

#[test]
fn range_deleted_space_in_a_level_of_many_tables_is_reclaimed_a_chunk_at_a_time() {
    let env = Arc::new(MemEnv::new());
    let db = DB::open(DIR, small_tables(&env)).unwrap();
    let mut model = Model::new();
    // About 2.6 MB: more than two in-place steps of at most 1 MiB of input each.
    for i in 0..12_000 {
        db.put(&key(i), &value(i, 0)).unwrap();
        model.insert(key(i), value(i, 0));
    }
    db.compact_range(None, None).unwrap();
    let levels = files_per_level(&db);
    let deepest = levels.iter().rposition(|&n| n > 0).unwrap();
    assert!(
        levels[deepest] >= 30,
        "many tables at the deepest level: {levels:?}"
    );
    let full = bytes_in(&db, 1000, 9000);
    assert!(full > 1_500_000, "{full} bytes before the delete");

    let snapshot = db.snapshot();
    let before = model.clone();
    db.delete_range(&key(1000), &key(9000)).unwrap();
    for i in 1000..9000 {
        model.remove(&key(i));
    }
    db.compact_range(None, None).unwrap();
    assert_eq!(
        scan(&db, &at(&snapshot)).unwrap(),
        before,
        "the snapshot's view"
    );
    assert_eq!(
        scan(&db, &ReadOptions::default()).unwrap(),
        model,
        "the latest view"
    );
    assert!(
        bytes_in(&db, 1000, 9000) > full / 2,
        "a live snapshot keeps the deleted values"
    );

    drop(snapshot);
    db.compact_range(None, None).unwrap();
    assert_eq!(scan(&db, &ReadOptions::default()).unwrap(), model);
    let left = bytes_in(&db, 1000, 9000);
    assert!(
        left < full / 20,
        "{left} of {full} bytes left in the deleted range"
    );
    let after = files_per_level(&db);
    assert_eq!(
        after.iter().rposition(|&n| n > 0),
        Some(deepest),
        "the data stays at its level: {levels:?} -> {after:?}"
    );
    assert!(after[deepest] < levels[deepest], "{levels:?} -> {after:?}");
    for i in (0..12_000).step_by(97) {
        assert_eq!(
            db.get(&key(i)).unwrap().as_ref(),
            model.get(&key(i)),
            "key {i}"
        );
    }
    // Reopening reads the same: the rewritten level's manifest edits hold.
    drop(db);
    let db = DB::open(DIR, small_tables(&env)).unwrap();
    assert_eq!(scan(&db, &ReadOptions::default()).unwrap(), model);
}

#[test]
fn each_snapshot_keeps_its_version_through_rewrites_until_released() {
    let env = Arc::new(MemEnv::new());
    let db = DB::open(DIR, small_tables(&env)).unwrap();
    for i in 0..600 {
        db.put(&key(i), &value(i, 0)).unwrap();
    }
    db.delete_range(&key(100), &key(200)).unwrap();
    // 700 versions of one key, each held by a snapshot: more than one table's worth (Strata
    // cuts tables only between user keys, so they stay in one table larger than the rest).
    let hot = key(300);
    let hot_value = |round| value_of_len(300, round, 2000);
    let mut snapshots = Vec::new();
    for round in 1..=700 {
        db.put(&hot, &hot_value(round)).unwrap();
        snapshots.push((round, db.snapshot()));
    }
    db.compact_range(None, None).unwrap();
    db.compact_range(None, None).unwrap();
    let check = |snapshots: &[(u32, Snapshot)]| {
        for (round, snapshot) in snapshots {
            assert_eq!(
                db.get_opt(&at(snapshot), &hot).unwrap(),
                Some(hot_value(*round)),
                "the version of round {round}"
            );
            assert_eq!(
                db.get_opt(&at(snapshot), &key(150)).unwrap(),
                None,
                "deleted before every snapshot"
            );
        }
        assert_eq!(db.get(&hot).unwrap(), Some(hot_value(700)));
        assert_eq!(db.get(&key(150)).unwrap(), None);
        assert_eq!(db.get(&key(250)).unwrap(), Some(value(250, 0)));
    };
    check(&snapshots);
    // Release every other snapshot: the rewrite drops the versions nobody sees any more and
    // keeps the rest, wherever the cuts between tables fall.
    let kept: Vec<(u32, Snapshot)> = snapshots
        .into_iter()
        .filter(|(round, _)| round % 2 == 0)
        .collect();
    db.compact_range(None, None).unwrap();
    check(&kept);
    drop(kept);
    db.compact_range(None, None).unwrap();
    assert_eq!(db.get(&hot).unwrap(), Some(hot_value(700)));
    let levels = files_per_level(&db);
    assert!(
        levels.iter().sum::<usize>() <= 10,
        "the released versions are gone: {levels:?}"
    );
}

/// Drops keys whose value starts with `drop`.
struct DropMarked;

impl CompactionFilter for DropMarked {
    fn filter(&self, _level: usize, _key: &[u8], value: &[u8]) -> FilterDecision {
        if value.starts_with(b"drop") {
            FilterDecision::Remove
        } else {
            FilterDecision::Keep
        }
    }
}

#[test]
fn repeated_calls_with_a_filter_rewrite_the_deepest_level_where_it_is() {
    let env = Arc::new(MemEnv::new());
    let options = || Options {
        compaction_filter: Some(Arc::new(DropMarked) as Arc<dyn CompactionFilter>),
        ..small_tables(&env)
    };
    let db = DB::open(DIR, options()).unwrap();
    for i in 0..2000 {
        db.put(&key(i), &value(i, 0)).unwrap();
    }
    db.compact_range(None, None).unwrap();
    let first = files_per_level(&db);
    let deepest = first.iter().rposition(|&n| n > 0).unwrap();
    assert!(deepest < LEVELS - 1, "room below the data: {first:?}");
    for _ in 0..4 {
        db.compact_range(None, None).unwrap();
        let now = files_per_level(&db);
        assert_eq!(
            now.iter().rposition(|&n| n > 0),
            Some(deepest),
            "no march down: {first:?} -> {now:?}"
        );
    }
    // Marked values in the deepest level go at the next call, and only they.
    for i in (0..2000).step_by(2) {
        db.put(&key(i), b"drop me").unwrap();
    }
    db.compact_range(None, None).unwrap();
    for i in 0..2000 {
        let expected = (i % 2 == 1).then(|| value(i, 0));
        assert_eq!(db.get(&key(i)).unwrap(), expected, "key {i}");
    }
    let now = files_per_level(&db);
    assert_eq!(now.iter().rposition(|&n| n > 0), Some(deepest), "{now:?}");
}
