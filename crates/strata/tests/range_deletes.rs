//! Range deletes (format extension `range-deletes`) end to end: refused without the option,
//! visible at once to reads and iterators in both directions, invisible to older snapshots,
//! kept through flushes, compactions (tombstones straddling output-file cuts and
//! subcompaction split points) and reopens, and reclaimed by compaction once no snapshot needs
//! what they delete. `DB::clear_range` works on any database.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::sync::Arc;

use strata::{CompressionType, Error, MemEnv, Options, ReadOptions, WriteBatch, DB};
use support::state::{files_at_level, scan, tables_by_level, Model};

const DIR: &str = "/range-db";

fn key(i: u32) -> Vec<u8> {
    format!("k{i:06}").into_bytes()
}

/// About 1 KB: a few thousand keys fill several tables of the smallest size (1 MiB).
fn value(i: u32, round: u32) -> Vec<u8> {
    format!("v{i}-{round}-{}", "x".repeat(1000)).into_bytes()
}

fn options(env: &Arc<MemEnv>) -> Options {
    Options {
        range_deletes: true,
        write_buffer_size: 256 << 10,
        // The smallest the engine takes (1 MiB): compactions of a few MiB cut outputs.
        max_file_size: 1 << 20,
        max_subcompactions: 4,
        block_size: 512,
        compression: CompressionType::None,
        ..support::options(env)
    }
}

fn delete_range(model: &mut Model, start: &[u8], end: &[u8]) {
    model.retain(|k, _| k.as_slice() < start || k.as_slice() >= end);
}

/// Every read path agrees with `model`: a forward and a backward scan, and a get of every key
/// of `probe`, one by one and in one `get_many`.
fn check(db: &DB, model: &Model, read: &ReadOptions, probe: impl Iterator<Item = u32>) {
    assert_eq!(&scan(db, read).unwrap(), model, "forward scan");
    let mut it = db.iter_opt(read);
    it.seek_to_last();
    let mut backward = Vec::new();
    while it.valid() {
        backward.push(it.key().to_vec());
        it.prev();
    }
    it.status().unwrap();
    backward.reverse();
    assert_eq!(
        backward,
        model.keys().cloned().collect::<Vec<_>>(),
        "backward scan"
    );
    let probe: Vec<Vec<u8>> = probe.map(key).collect();
    for k in &probe {
        assert_eq!(
            db.get_opt(read, k).unwrap().as_ref(),
            model.get(k),
            "get {}",
            String::from_utf8_lossy(k)
        );
    }
    // The same keys in one batch, in reverse: get_many across the same tables and tombstones.
    let batch: Vec<&Vec<u8>> = probe.iter().rev().collect();
    let values = db.get_many_opt(read, &batch).unwrap();
    for (k, value) in batch.iter().zip(values) {
        assert_eq!(
            value.as_ref(),
            model.get(*k),
            "get_many {}",
            String::from_utf8_lossy(k)
        );
    }
}

#[test]
fn without_the_option_range_deletes_are_refused_naming_it() {
    let env = Arc::new(MemEnv::new());
    let db = DB::open(DIR, support::options(&env)).unwrap();
    db.put(b"a", b"1").unwrap();
    let err = db.delete_range(b"a", b"b").unwrap_err();
    assert!(matches!(err, Error::NotSupported(_)), "{err}");
    assert!(err.to_string().contains("Options::range_deletes"), "{err}");
    let mut batch = WriteBatch::new();
    batch.put(b"b", b"2");
    batch.delete_range(b"a", b"c");
    let err = db.write(&batch).unwrap_err();
    assert!(matches!(err, Error::NotSupported(_)), "{err}");
    // Nothing of the refused batch was applied.
    assert_eq!(db.get(b"b").unwrap(), None);
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
    // clear_range works on any database.
    assert_eq!(db.clear_range(b"a", b"c").unwrap(), 1);
    assert_eq!(db.get(b"a").unwrap(), None);
}

#[test]
fn a_start_after_the_end_is_invalid_and_an_empty_range_deletes_nothing() {
    let env = Arc::new(MemEnv::new());
    let db = DB::open(DIR, options(&env)).unwrap();
    db.put(b"m", b"1").unwrap();
    let err = db.delete_range(b"z", b"a").unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    let err = db.clear_range(b"z", b"a").unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    db.delete_range(b"m", b"m").unwrap();
    assert_eq!(db.get(b"m").unwrap().as_deref(), Some(&b"1"[..]));
    // The end is kept.
    db.delete_range(b"a", b"m").unwrap();
    assert_eq!(db.get(b"m").unwrap().as_deref(), Some(&b"1"[..]));
}

#[test]
fn reads_iterators_and_snapshots_see_a_range_delete_at_its_sequence() {
    let env = Arc::new(MemEnv::new());
    let db = DB::open(DIR, options(&env)).unwrap();
    let mut model = Model::new();
    for i in 0..3000 {
        db.put(&key(i), &value(i, 0)).unwrap();
        model.insert(key(i), value(i, 0));
    }
    // Some of it in tables, some in the memtable.
    db.compact_range(None, Some(&key(1500))).unwrap();
    let before = db.snapshot();
    let before_model = model.clone();
    db.delete_range(&key(100), &key(2900)).unwrap();
    delete_range(&mut model, &key(100), &key(2900));
    // Written after the tombstone: visible.
    db.put(&key(150), &value(150, 1)).unwrap();
    model.insert(key(150), value(150, 1));
    let latest = ReadOptions::default();
    let at_before = ReadOptions {
        snapshot: Some(before.clone()),
        ..ReadOptions::default()
    };
    check(&db, &model, &latest, 0..3000);
    check(&db, &before_model, &at_before, 0..3000);
    // Through a flush and compactions of every level, and a reopen.
    db.compact_range(None, None).unwrap();
    check(&db, &model, &latest, 0..3000);
    check(&db, &before_model, &at_before, 0..3000);
    drop(before);
    drop(db);
    let db = DB::open(DIR, options(&env)).unwrap();
    check(&db, &model, &latest, 0..3000);
}

/// A tombstone over most of a large key range deletes entries in many tables of deeper levels;
/// compacting it down cuts it at output-file boundaries and subcompaction split points, with
/// newer writes inside its range and a snapshot holding the old data.
#[test]
fn tombstones_straddling_output_cuts_and_subcompactions_delete_exactly_their_range() {
    let env = Arc::new(MemEnv::new());
    let db = DB::open(DIR, options(&env)).unwrap();
    let mut model = Model::new();
    let n = 6000;
    for i in 0..n {
        db.put(&key(i), &value(i, 0)).unwrap();
        model.insert(key(i), value(i, 0));
    }
    db.compact_range(None, None).unwrap();
    let deep: usize = (1..7).map(|l| files_at_level(&db, l)).sum();
    assert!(deep >= 8, "expected many tables below level 0: {deep}");
    // Several tombstones, nested and overlapping, and writes between them.
    let ranges = [(500, 5500), (1000, 1200), (1100, 3000), (5400, 6200)];
    for (round, &(a, b)) in ranges.iter().enumerate() {
        db.delete_range(&key(a), &key(b)).unwrap();
        delete_range(&mut model, &key(a), &key(b));
        for i in (a..b.min(n)).step_by(97) {
            let v = value(i, round as u32 + 1);
            db.put(&key(i), &v).unwrap();
            model.insert(key(i), v);
        }
    }
    let snapshot_model = model.clone();
    let snapshot = db.snapshot();
    db.delete_range(&key(0), &key(300)).unwrap();
    delete_range(&mut model, &key(0), &key(300));
    let latest = ReadOptions::default();
    let at_snapshot = ReadOptions {
        snapshot: Some(snapshot.clone()),
        ..ReadOptions::default()
    };
    check(&db, &model, &latest, 0..n + 300);
    // Compact piecewise (cuts inside the tombstones), then everything.
    for (a, b) in [(0, 800), (2000, 2600), (5000, 6100)] {
        db.compact_range(Some(&key(a)), Some(&key(b))).unwrap();
        check(&db, &model, &latest, (0..n + 300).step_by(7));
        check(&db, &snapshot_model, &at_snapshot, (0..n + 300).step_by(7));
    }
    db.compact_range(None, None).unwrap();
    check(&db, &model, &latest, 0..n + 300);
    check(&db, &snapshot_model, &at_snapshot, 0..n + 300);
    let outputs: usize = tables_by_level(&db).iter().map(Vec::len).sum();
    assert!(outputs >= 2, "the compaction wrote {outputs} tables");
    drop((snapshot, at_snapshot));
    drop(db);
    let db = DB::open(DIR, options(&env)).unwrap();
    check(&db, &model, &latest, 0..n + 300);
}

#[test]
fn compaction_reclaims_deleted_space_and_drops_tombstones_no_snapshot_needs() {
    let env = Arc::new(MemEnv::new());
    let db = DB::open(DIR, options(&env)).unwrap();
    for i in 0..5000 {
        db.put(&key(i), &value(i, 0)).unwrap();
    }
    db.compact_range(None, None).unwrap();
    let full = db.approximate_sizes(&[strata::Range {
        start: &key(0),
        limit: &key(5000),
    }])[0];
    assert!(full > 5_000_000, "{full}");
    let snapshot = db.snapshot();
    db.delete_range(&key(0), &key(5000)).unwrap();
    db.compact_range(None, None).unwrap();
    // The snapshot still reads everything: nothing was dropped.
    let at_snapshot = ReadOptions {
        snapshot: Some(snapshot.clone()),
        ..ReadOptions::default()
    };
    assert_eq!(scan(&db, &at_snapshot).unwrap().len(), 5000);
    assert!(scan(&db, &ReadOptions::default()).unwrap().is_empty());
    drop((snapshot, at_snapshot));
    // A manual compaction, as LevelDB's, leaves the deepest level's tables alone; one that
    // reaches the table (a write in its range compacted down) drops every entry the tombstone
    // deletes, and the tombstone itself, at the base level.
    db.put(&key(7), b"again").unwrap();
    db.compact_range(None, None).unwrap();
    let tables: Vec<u64> = tables_by_level(&db).into_iter().flatten().collect();
    assert_eq!(tables.len(), 1, "{:?}", db.property("leveldb.sstables"));
    let left = db.approximate_sizes(&[strata::Range {
        start: &key(0),
        limit: &key(5000),
    }])[0];
    assert!(left < 4096, "{left} bytes left of {full}");
    let sstables = db.property("leveldb.sstables").unwrap();
    assert!(
        !sstables.contains(": 3"),
        "a range deletion survived: {sstables}"
    );
    drop(db);
    let db = DB::open(DIR, options(&env)).unwrap();
    let left = scan(&db, &ReadOptions::default()).unwrap();
    assert_eq!(left, Model::from([(key(7), b"again".to_vec())]));
}

#[test]
fn clear_range_deletes_key_by_key_in_bounded_batches() {
    let env = Arc::new(MemEnv::new());
    let db = DB::open(DIR, support::options(&env)).unwrap();
    let n = strata::CLEAR_RANGE_BATCH as u32 * 2 + 17;
    for i in 0..n + 10 {
        db.put(&key(i), b"v").unwrap();
    }
    assert_eq!(db.clear_range(&key(5), &key(n + 5)).unwrap(), u64::from(n));
    let left = scan(&db, &ReadOptions::default()).unwrap();
    let expected: Vec<Vec<u8>> = (0..5).chain(n + 5..n + 10).map(key).collect();
    assert_eq!(left.keys().cloned().collect::<Vec<_>>(), expected);
}
