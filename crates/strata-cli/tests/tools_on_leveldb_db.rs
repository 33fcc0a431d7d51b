//! The tool commands on a directory written by real LevelDB 1.23: tables with bloom filters,
//! several levels, binary keys, and a live write-ahead log LevelDB left behind; and the read
//! commands' `--read-only` on a database a running LevelDB (or Strata) holds open.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use leveldb_peer::fixtures::{build_db, FixtureSpec, KeyOrder, KeyShape};
use leveldb_peer::{LevelDb, LevelDbOptions};
use strata::{Options, DB};

fn strata(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(args)
        .output()
        .expect("run strata")
}

fn expect(code: i32, args: &[&str]) -> String {
    let output = strata(args);
    assert_eq!(
        output.status.code(),
        Some(code),
        "strata {args:?}\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A LevelDB database with binary keys over several tables and a live log, and its model.
fn leveldb_db(dir: &Path) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let options = LevelDbOptions {
        bloom_bits: Some(10),
        write_buffer_size: Some(64 << 10),
        ..LevelDbOptions::default()
    };
    let spec = FixtureSpec {
        seed: 7,
        num_keys: 3000,
        keys: KeyShape::Binary,
        order: KeyOrder::Random,
        batch_size: 4,
        compact_at_end: true,
        live_wal_ops: 200,
        ..FixtureSpec::default()
    };
    build_db(dir, &options, &spec).expect("LevelDB builds the fixture")
}

#[test]
fn check_dump_and_scan_read_a_leveldb_directory() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("leveldb");
    let model = leveldb_db(&db);

    // check verifies it as it is, without opening (so before Strata rewrites anything).
    let report = expect(0, &["check", s(&db)]);
    assert!(report.trim_end().ends_with("no problems found"), "{report}");
    assert!(!report.contains(" 0 tables"), "{report}");

    // dump reads every file LevelDB wrote; the live log holds batches of 4 ops.
    let mut seen_log_batch = false;
    let mut seen_filter = false;
    for entry in std::fs::read_dir(&db).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        if name == "LOCK" || name.starts_with("LOG") {
            continue;
        }
        let text = expect(0, &["dump", s(&path)]);
        seen_log_batch |= name.ends_with(".log") && text.contains(", 4 ops");
        seen_filter |= text.contains("filter 'leveldb.BuiltinBloomFilter2': ");
    }
    assert!(seen_log_batch, "the live log's batches are dumped");
    assert!(seen_filter, "LevelDB's bloom filters are summarised");

    // Every key and value reads back exactly (and in order), through scan and get.
    let scanned = expect(0, &["scan", "--hex", s(&db)]);
    let expected: String = model
        .iter()
        .map(|(k, v)| format!("{}\t{}\n", hex(k), hex(v)))
        .collect();
    assert_eq!(scanned, expected);
    let (key, value) = model.iter().nth(model.len() / 2).unwrap();
    assert_eq!(
        expect(0, &["get", "--hex", s(&db), &hex(key)]),
        format!("{}\n", hex(value))
    );

    let stats = expect(0, &["stats", s(&db)]);
    assert!(
        stats.contains("leveldb.sstables:\n--- level 0 ---"),
        "{stats}"
    );
}

#[test]
fn export_load_compact_and_repair_a_leveldb_directory() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("leveldb");
    let model = leveldb_db(&db);

    let file = dir.path().join("export.jsonl");
    let out = expect(
        0,
        &["export", s(&db), "--encoding", "base64", "-o", s(&file)],
    );
    assert!(
        out.starts_with(&format!("exported {} pairs", model.len())),
        "{out}"
    );
    let copy = dir.path().join("copy");
    expect(0, &["load", s(&copy), s(&file), "--encoding", "base64"]);
    assert_eq!(
        expect(0, &["scan", "--hex", s(&copy)]),
        expect(0, &["scan", "--hex", s(&db)])
    );

    expect(0, &["compact", s(&db)]);
    expect(0, &["check", s(&db)]);
    expect(0, &["repair", s(&db)]);
    let after: usize = expect(0, &["scan", "--keys-only", s(&db)]).lines().count();
    assert_eq!(after, model.len());
    let out = expect(0, &["destroy", "--yes", s(&db)]);
    // Repair set the old manifest aside in lost/, which destroy leaves alone (as LevelDB does).
    assert!(out.contains("the directory stays"), "{out}");
    assert!(!db.join("CURRENT").exists());
    assert!(db.join("lost").is_dir());
}

/// `get`, `scan`, `export` and `stats` with `--read-only` on the database in `db`, which
/// holds `key0000`..`key0999`, while another process holds its LOCK.
fn read_commands_work_while_held(db: &str) {
    // Without --read-only the LOCK keeps the command out.
    let refused = strata(&["get", db, "key0001"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("LOCK"));

    assert_eq!(
        expect(0, &["get", "--read-only", db, "key0001"]),
        "value1\n"
    );
    assert_eq!(
        strata(&["get", "--read-only", db, "missing"]).status.code(),
        Some(1)
    );
    let scan = expect(0, &["scan", "--read-only", db, "--prefix", "key00"]);
    assert_eq!(scan.lines().count(), 100);
    assert!(scan.starts_with("key0000\tvalue0\n"));
    let export = expect(0, &["export", "--read-only", db]);
    assert_eq!(export.lines().count(), 1000);
    let stats = expect(0, &["stats", "--read-only", db]);
    assert!(stats.contains("leveldb.num-files-at-level0"), "{stats}");
    // A write command has no --read-only.
    assert_eq!(
        strata(&["put", "--read-only", db, "k", "v"]).status.code(),
        Some(2)
    );
}

#[test]
fn read_commands_on_a_database_strata_holds() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(
        dir.path(),
        Options {
            create_if_missing: true,
            write_buffer_size: 64 << 10,
            ..Options::default()
        },
    )
    .unwrap();
    for i in 0..1000 {
        db.put(
            format!("key{i:04}").as_bytes(),
            format!("value{i}").as_bytes(),
        )
        .unwrap();
    }
    read_commands_work_while_held(s(dir.path()));
}

#[test]
fn read_commands_on_a_database_leveldb_holds() {
    let dir = tempfile::tempdir().unwrap();
    let db = LevelDb::open(
        dir.path(),
        &LevelDbOptions {
            create_if_missing: true,
            write_buffer_size: Some(64 << 10),
            ..LevelDbOptions::default()
        },
    )
    .unwrap();
    for i in 0..1000 {
        db.put(
            format!("key{i:04}").as_bytes(),
            format!("value{i}").as_bytes(),
            false,
        )
        .unwrap();
    }
    read_commands_work_while_held(s(dir.path()));
}
