//! On the real file system Strata writes its write-ahead log through a memory map that grows
//! in zero-filled chunks and is cut to size at close. A crash leaves the zeros in place: both
//! Strata and LevelDB 1.23 must open the crashed directory, even with paranoid checks, and
//! read every acknowledged write.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::fs;
use std::path::Path;

use leveldb_peer::{LevelDb, LevelDbOptions};
use strata::{Options, WriteOptions, DB};

const WRITES: u32 = 3_000;

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn value(i: u32) -> Vec<u8> {
    format!("value {i} {}", "x".repeat((i % 300) as usize)).into_bytes()
}

/// Writes to a Strata database and "crashes": the database is never closed, so its logs keep
/// their zero tails. Returns a copy of the directory without the LOCK file, which this process
/// still holds.
fn crashed_copy(root: &Path) -> std::path::PathBuf {
    let dir = root.join("db");
    let db = DB::open(
        &dir,
        Options {
            create_if_missing: true,
            write_buffer_size: 64 << 10,
            ..Options::default()
        },
    )
    .unwrap();
    for i in 0..WRITES {
        let sync = i % 1000 == 999;
        db.put_opt(&WriteOptions { sync }, &key(i), &value(i))
            .unwrap();
    }
    std::mem::forget(db);

    let copy = root.join("copy");
    fs::create_dir(&copy).unwrap();
    let mut zero_tailed = 0;
    for entry in fs::read_dir(&dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().into_string().unwrap();
        if name == "LOCK" {
            continue;
        }
        let bytes = fs::read(entry.path()).unwrap();
        if name.ends_with(".log") && bytes.last() == Some(&0) {
            zero_tailed += 1;
        }
        fs::write(copy.join(&name), bytes).unwrap();
    }
    assert!(
        zero_tailed > 0,
        "no log with a zero tail: the test tests nothing"
    );
    copy
}

#[test]
fn strata_reopens_a_crashed_directory_paranoid_with_every_write() {
    let root = tempfile::tempdir().unwrap();
    let copy = crashed_copy(root.path());
    let db = DB::open(
        &copy,
        Options {
            paranoid_checks: true,
            ..Options::default()
        },
    )
    .unwrap();
    for i in 0..WRITES {
        assert_eq!(db.get(&key(i)).unwrap(), Some(value(i)), "key {i}");
    }
}

#[test]
fn leveldb_opens_a_crashed_strata_directory_paranoid_with_every_write() {
    let root = tempfile::tempdir().unwrap();
    let copy = crashed_copy(root.path());
    let db = LevelDb::open(
        &copy,
        &LevelDbOptions {
            paranoid_checks: true,
            ..LevelDbOptions::default()
        },
    )
    .unwrap();
    for i in 0..WRITES {
        assert_eq!(db.get(&key(i)).unwrap(), Some(value(i)), "key {i}");
    }
}
