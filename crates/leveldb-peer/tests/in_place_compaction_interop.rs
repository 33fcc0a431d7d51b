//! `compact_range`'s in-place rewrite of the deepest level on a database real LevelDB 1.23
//! wrote with a user key's versions split across several tables of one level (LevelDB cuts
//! compaction outputs by size alone; Strata never does). Opened in Strata with a compaction
//! filter, or with range deletes and a range delete, `compact_range` must take every table
//! holding the key into one rewrite: the newest version stays the one read, no older version
//! comes back, no two tables of a level share a user key afterwards, and the loop ends.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::path::Path;
use std::sync::Arc;

use leveldb_peer::{LevelDb, LevelDbOptions};
use strata::{CompactionFilter, CompressionType, FilterDecision, Options, ReadOptions, DB};
use support::{scan, Model};

const HOT: &[u8] = b"m-hot";
const VERSIONS: u32 = 3000;

fn cold(i: u32) -> Vec<u8> {
    format!("{}-{i:04}", if i < 500 { "a" } else { "z" }).into_bytes()
}

/// `len` bytes that compress poorly, distinct per `(i, round)`.
fn value(i: u32, round: u32, len: usize) -> Vec<u8> {
    let mut v = format!("v-{i}-{round}-").into_bytes();
    let mut x = u64::from(i) << 32 | u64::from(round) | 1;
    while v.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.push(b'a' + (x % 26) as u8);
    }
    v
}

/// Writes cold keys around `HOT`, then `VERSIONS` versions of `HOT` of 2 KB each while a
/// snapshot keeps them all (6 MB), and compacts with LevelDB's smallest tables (1 MiB), so the
/// versions land in several tables of one level. Returns the model of the latest view.
fn leveldb_with_a_split_key(path: &Path) -> Model {
    let opts = LevelDbOptions {
        create_if_missing: true,
        write_buffer_size: Some(64 << 10),
        max_file_size: Some(1 << 20),
        compression: false,
        ..LevelDbOptions::default()
    };
    let db = LevelDb::open(path, &opts).unwrap();
    let mut model = Model::new();
    for i in 0..1000 {
        db.put(&cold(i), &value(i, 0, 300), false).unwrap();
        model.insert(cold(i), value(i, 0, 300));
    }
    let snapshot = db.snapshot();
    for round in 1..=VERSIONS {
        db.put(HOT, &value(7777, round, 2000), false).unwrap();
    }
    model.insert(HOT.to_vec(), value(7777, VERSIONS, 2000));
    db.compact_range(None, None);
    let tables = db.property("leveldb.sstables").unwrap();
    drop(snapshot);
    let quoted = format!("'{}'", String::from_utf8_lossy(HOT));
    let split = tables.lines().filter(|l| l.contains(&quoted)).count();
    assert!(
        split >= 3,
        "LevelDB split the hot key's versions across {split} tables:\n{tables}"
    );
    model
}

/// User-key ranges of the tables per level, from `leveldb.sstables` (keys are printable).
fn levels(db: &DB) -> Vec<Vec<(String, String)>> {
    let text = db.property("leveldb.sstables").unwrap();
    let mut out: Vec<Vec<(String, String)>> = Vec::new();
    for line in text.lines() {
        if line.starts_with("--- level") {
            out.push(Vec::new());
        } else {
            let q: Vec<&str> = line.split('\'').collect();
            out.last_mut()
                .unwrap()
                .push((q[1].to_owned(), q[3].to_owned()));
        }
    }
    out
}

fn assert_no_shared_user_keys(db: &DB) {
    for (level, tables) in levels(db).iter().enumerate().skip(1) {
        for pair in tables.windows(2) {
            assert!(
                pair[0].1 < pair[1].0,
                "level {level} tables share a user key: {pair:?}\n{}",
                db.property("leveldb.sstables").unwrap()
            );
        }
    }
}

fn strata_options() -> Options {
    Options {
        write_buffer_size: 64 << 10,
        max_file_size: 1 << 20,
        compression: CompressionType::None,
        // The hot key's tables (6 MB) make a rewrite large enough to be cut in parallel
        // ranges.
        max_subcompactions: 4,
        ..Options::default()
    }
}

/// Removes the cold keys of `z-`, changes every hot value to `changed`.
struct Filter;

impl CompactionFilter for Filter {
    fn filter(&self, _level: usize, key: &[u8], _value: &[u8]) -> FilterDecision {
        if key == HOT {
            FilterDecision::ChangeValue(b"changed".to_vec())
        } else if key.starts_with(b"z-") {
            FilterDecision::Remove
        } else {
            FilterDecision::Keep
        }
    }
}

#[test]
fn a_filter_rewrites_a_key_leveldb_split_across_tables_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut model = leveldb_with_a_split_key(&path);
    let options = Options {
        compaction_filter: Some(Arc::new(Filter)),
        ..strata_options()
    };
    let db = DB::open(&path, options.clone()).unwrap();
    assert_eq!(
        scan(&db, &ReadOptions::default()),
        model,
        "Strata reads LevelDB's database"
    );
    // A range that starts inside the hot key's tables, then everything.
    db.compact_range(Some(HOT), Some(HOT)).unwrap();
    assert_no_shared_user_keys(&db);
    assert_eq!(db.get(HOT).unwrap(), Some(b"changed".to_vec()));
    db.compact_range(None, None).unwrap();
    assert_no_shared_user_keys(&db);
    model.retain(|k, _| !k.starts_with(b"z-"));
    model.insert(HOT.to_vec(), b"changed".to_vec());
    assert_eq!(scan(&db, &ReadOptions::default()), model);
    let total: u64 = db.approximate_sizes(&[strata::Range {
        start: b"",
        limit: b"zzzz",
    }])[0];
    assert!(
        total < 1 << 20,
        "the hot key's old versions are reclaimed: {total} bytes left"
    );
    drop(db);
    let db = DB::open(&path, options).unwrap();
    assert_eq!(scan(&db, &ReadOptions::default()), model, "after reopening");
}

#[test]
fn a_range_delete_over_a_key_leveldb_split_across_tables_leaves_no_version() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut model = leveldb_with_a_split_key(&path);
    let options = Options {
        range_deletes: true,
        ..strata_options()
    };
    let db = DB::open(&path, options.clone()).unwrap();
    // Nothing to reclaim but shadowed entries: LevelDB's tables stay as they are, split key
    // and all. Then a range delete over the hot key.
    db.compact_range(None, None).unwrap();
    assert_eq!(scan(&db, &ReadOptions::default()), model);
    let snapshot = db.snapshot();
    db.delete_range(b"a-0900", b"m-zzz").unwrap();
    let before = model.clone();
    model.retain(|k, _| {
        !(k.as_slice() >= b"a-0900".as_slice() && k.as_slice() < b"m-zzz".as_slice())
    });
    for _ in 0..2 {
        db.compact_range(Some(b"a-0950"), Some(HOT)).unwrap();
        assert_no_shared_user_keys(&db);
        assert_eq!(scan(&db, &ReadOptions::default()), model);
        let read = strata::ReadOptions {
            snapshot: Some(snapshot.clone()),
            ..strata::ReadOptions::default()
        };
        assert_eq!(db.get_opt(&read, HOT).unwrap(), before.get(HOT).cloned());
    }
    drop(snapshot);
    db.compact_range(None, None).unwrap();
    assert_no_shared_user_keys(&db);
    assert_eq!(scan(&db, &ReadOptions::default()), model);
    assert_eq!(db.get(HOT).unwrap(), None);
    drop(db);
    let db = DB::open(&path, options).unwrap();
    assert_eq!(scan(&db, &ReadOptions::default()), model, "after reopening");
}
