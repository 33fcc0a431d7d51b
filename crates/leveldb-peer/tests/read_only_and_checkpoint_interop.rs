//! Read-only handles and checkpoints against real LevelDB 1.23: Strata reads a database while
//! LevelDB holds it open and writes, flushes and compacts it, and follows it with `refresh`;
//! LevelDB opens Strata's checkpoints — of a database Strata writes, and of one LevelDB writes
//! taken through a read-only handle — with exactly their contents.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use leveldb_peer::fixtures::read_all;
use leveldb_peer::{LevelDb, LevelDbOptions};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use strata::{Options, ReadOptions, DB};
use support::{scan, Model};

fn leveldb_options() -> LevelDbOptions {
    LevelDbOptions {
        create_if_missing: true,
        write_buffer_size: Some(64 << 10),
        ..LevelDbOptions::default()
    }
}

/// Random puts and deletes on LevelDB, mirrored in `model`.
fn random_writes(db: &LevelDb, model: &mut Model, rng: &mut StdRng, count: usize, round: usize) {
    for _ in 0..count {
        let key = format!("key{:05}", rng.gen_range(0..3000)).into_bytes();
        if rng.gen_bool(0.1) {
            db.delete(&key, false).unwrap();
            model.remove(&key);
        } else {
            let value = format!("{round}-{}", "v".repeat(rng.gen_range(0..400))).into_bytes();
            db.put(&key, &value, false).unwrap();
            model.insert(key, value);
        }
    }
}

#[test]
fn strata_follows_a_database_leveldb_is_writing() {
    let dir = tempfile::tempdir().unwrap();
    let leveldb = LevelDb::open(dir.path(), &leveldb_options()).unwrap();
    let mut rng = StdRng::seed_from_u64(1082);
    let mut model = Model::new();
    random_writes(&leveldb, &mut model, &mut rng, 3000, 0);

    // LevelDB holds the LOCK: Strata cannot open the database to write, but can to read.
    assert!(DB::open(dir.path(), Options::default()).is_err());
    let reader = DB::open_read_only(dir.path(), Options::default()).unwrap();
    assert_eq!(scan(&reader, &ReadOptions::default()), model);

    let snapshot = reader.snapshot();
    let at_first = model.clone();
    let mut before = reader.iter();
    before.seek_to_first();
    for round in 1..12 {
        random_writes(&leveldb, &mut model, &mut rng, 1500, round);
        if round % 4 == 0 {
            leveldb.compact_range(None, None);
        }
        reader.refresh().unwrap();
        assert_eq!(
            scan(&reader, &ReadOptions::default()),
            model,
            "round {round}"
        );
    }
    assert_eq!(read_all(&leveldb).unwrap(), model);
    // LevelDB compacted away the tables the first state was read from.
    let at_snapshot = ReadOptions {
        snapshot: Some(snapshot),
        ..ReadOptions::default()
    };
    assert_eq!(scan(&reader, &at_snapshot), at_first);
    let mut seen = Model::new();
    while before.valid() {
        seen.insert(before.key().to_vec(), before.value().to_vec());
        before.next();
    }
    before.status().unwrap();
    assert_eq!(seen, at_first);
}

#[test]
fn leveldb_opens_a_strata_checkpoint_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(
        dir.path().join("db"),
        Options {
            create_if_missing: true,
            write_buffer_size: 64 << 10,
            ..Options::default()
        },
    )
    .unwrap();
    let mut model = Model::new();
    for i in 0..5000 {
        let (key, value) = (format!("key{:05}", i % 2000), format!("value{i}"));
        db.put(key.as_bytes(), value.as_bytes()).unwrap();
        model.insert(key.into_bytes(), value.into_bytes());
    }
    let target = dir.path().join("checkpoint");
    db.checkpoint(&target).unwrap();
    db.put(b"after", b"the checkpoint").unwrap();
    let leveldb = LevelDb::open(
        &target,
        &LevelDbOptions {
            paranoid_checks: true,
            ..LevelDbOptions::default()
        },
    )
    .unwrap();
    assert_eq!(read_all(&leveldb).unwrap(), model);
}

#[test]
fn a_checkpoint_of_a_database_leveldb_is_writing_opens_in_leveldb() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("db");
    let leveldb = LevelDb::open(&source, &leveldb_options()).unwrap();
    let mut rng = StdRng::seed_from_u64(182);
    let mut model = Model::new();
    random_writes(&leveldb, &mut model, &mut rng, 4000, 0);
    let reader = DB::open_read_only(&source, Options::default()).unwrap();
    let target = dir.path().join("checkpoint");
    reader.checkpoint(&target).unwrap();
    random_writes(&leveldb, &mut Model::new(), &mut rng, 2000, 1);
    drop(leveldb);

    let copy = LevelDb::open(
        &target,
        &LevelDbOptions {
            paranoid_checks: true,
            ..LevelDbOptions::default()
        },
    )
    .unwrap();
    assert_eq!(read_all(&copy).unwrap(), model);
    drop(copy);
    let copy = DB::open(
        &target,
        Options {
            paranoid_checks: true,
            ..Options::default()
        },
    )
    .unwrap();
    assert_eq!(scan(&copy, &ReadOptions::default()), model);
}
