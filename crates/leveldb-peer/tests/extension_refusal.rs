//! Real LevelDB 1.23 refuses a database that uses a Strata format extension, with its own
//! comparator-mismatch error, and changes nothing in the directory; a database that never
//! enabled one stays LevelDB's to open (docs/design.md, section 4).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use leveldb_peer::{LevelDb, LevelDbOptions};
use strata::{CompressionType, Options, ValueSeparation, WriteBatch, DB};

/// Every file of `dir` with its bytes (LevelDB's LOCK and LOG files aside: opening writes
/// them whatever it decides).
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| (e.file_name().into_string().unwrap(), e.path()))
        .filter(|(name, _)| !matches!(name.as_str(), "LOCK" | "LOG" | "LOG.old"))
        .map(|(name, path)| (name, std::fs::read(path).unwrap()))
        .collect()
}

fn leveldb_open(dir: &Path) -> Result<LevelDb, String> {
    LevelDb::open(dir, &LevelDbOptions::default())
}

/// A database written by Strata with `options`, holding tables, tombstones or expiring values
/// (as the options allow), and a live log.
fn strata_db(dir: &Path, options: Options) {
    let db = DB::open(dir, options.clone()).unwrap();
    for i in 0..2000u32 {
        db.put(format!("k{i:05}").as_bytes(), b"value").unwrap();
    }
    if options.range_deletes {
        db.delete_range(b"k00100", b"k00200").unwrap();
    }
    if options.expiring_keys {
        db.put_with_ttl(b"t", b"expiring", Duration::from_secs(3600))
            .unwrap();
    }
    db.compact_range(None, None).unwrap();
    let mut batch = WriteBatch::new();
    batch.put(b"in-the-log", b"v");
    if options.range_deletes {
        batch.delete_range(b"k01000", b"k01010");
    }
    db.write(&batch).unwrap();
}

fn assert_refused_unchanged(dir: &Path) {
    let before = files(dir);
    let err = leveldb_open(dir)
        .err()
        .expect("LevelDB opened a database using an extension");
    assert!(
        err.contains("does not match existing comparator"),
        "LevelDB refused with another error: {err}"
    );
    assert!(
        err.contains("strata.v1+"),
        "the error does not show the marker: {err}"
    );
    assert_eq!(
        files(dir),
        before,
        "LevelDB's refused open changed the directory"
    );
}

#[test]
fn leveldb_refuses_a_database_with_range_deletes_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    strata_db(
        dir.path(),
        Options {
            create_if_missing: true,
            range_deletes: true,
            ..Options::default()
        },
    );
    assert_refused_unchanged(dir.path());
    // Strata still opens it, tombstones in force.
    let db = DB::open(
        dir.path(),
        Options {
            range_deletes: true,
            ..Options::default()
        },
    )
    .unwrap();
    assert_eq!(db.get(b"k00150").unwrap(), None);
    assert_eq!(db.get(b"k01005").unwrap(), None);
    assert_eq!(db.get(b"k00099").unwrap().as_deref(), Some(&b"value"[..]));
}

#[test]
fn leveldb_refuses_a_database_with_expiring_keys() {
    let dir = tempfile::tempdir().unwrap();
    strata_db(
        dir.path(),
        Options {
            create_if_missing: true,
            expiring_keys: true,
            ..Options::default()
        },
    );
    assert_refused_unchanged(dir.path());
}

/// LevelDB refuses a database with a value in a value file, separated as `separation` says;
/// Strata then reads it back.
fn assert_value_files_refused(separation: ValueSeparation) {
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        create_if_missing: true,
        value_separation: Some(separation),
        ..Options::default()
    };
    strata_db(dir.path(), options.clone());
    let db = DB::open(dir.path(), options.clone()).unwrap();
    db.put(b"large", &[7u8; 1000]).unwrap();
    drop(db);
    assert_refused_unchanged(dir.path());
    let db = DB::open(dir.path(), options).unwrap();
    assert_eq!(db.get(b"large").unwrap(), Some(vec![7u8; 1000]));
}

#[test]
fn leveldb_refuses_a_database_with_value_separation() {
    assert_value_files_refused(ValueSeparation::new(64));
}

#[test]
fn leveldb_refuses_a_database_with_compressed_value_files() {
    assert_value_files_refused(ValueSeparation::new(64).with_compression(CompressionType::Snappy));
}

#[test]
fn leveldb_refuses_a_database_that_enabled_an_extension_before_writing_any() {
    // The marker goes in at open, before any extension record: a database opened once with
    // the option is refused even though it holds none (a crash right after the marker leaves
    // exactly this).
    let dir = tempfile::tempdir().unwrap();
    drop(
        DB::open(
            dir.path(),
            Options {
                create_if_missing: true,
                ..Options::default()
            },
        )
        .unwrap(),
    );
    let db = leveldb_open(dir.path()).expect("a plain Strata database is LevelDB's");
    db.put(b"from-leveldb", b"1", true).unwrap();
    drop(db);
    drop(
        DB::open(
            dir.path(),
            Options {
                range_deletes: true,
                ..Options::default()
            },
        )
        .unwrap(),
    );
    assert_refused_unchanged(dir.path());
}

#[test]
fn a_database_without_extensions_stays_leveldbs() {
    let dir = tempfile::tempdir().unwrap();
    strata_db(
        dir.path(),
        Options {
            create_if_missing: true,
            ..Options::default()
        },
    );
    let db = leveldb_open(dir.path()).expect("LevelDB refused a plain Strata database");
    assert_eq!(db.get(b"k00150").unwrap().as_deref(), Some(&b"value"[..]));
    assert_eq!(db.get(b"in-the-log").unwrap().as_deref(), Some(&b"v"[..]));
}
