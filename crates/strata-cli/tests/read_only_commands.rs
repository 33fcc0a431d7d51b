//! The read commands with `--read-only` on a database another process holds open (Strata, or
//! real LevelDB), and `strata checkpoint`, run through the built binary.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::Path;
use std::process::{Command, Output};

use leveldb_peer::{LevelDb, LevelDbOptions};
use strata::{Options, DB};

fn strata(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(args)
        .output()
        .expect("run strata")
}

/// Runs `args` and asserts exit code `code`; returns stdout.
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

#[test]
fn checkpoint_of_a_closed_and_of_a_held_database() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("db");
    let db = DB::open(
        &source,
        Options {
            create_if_missing: true,
            write_buffer_size: 64 << 10,
            ..Options::default()
        },
    )
    .unwrap();
    for i in 0..3000 {
        db.put(
            format!("key{i:04}").as_bytes(),
            format!("value{i}").as_bytes(),
        )
        .unwrap();
    }
    // Held by this process: the command needs --read-only.
    let held = dir.path().join("held");
    assert_eq!(
        strata(&["checkpoint", s(&source), s(&held)]).status.code(),
        Some(2)
    );
    assert!(!held.exists());
    let out = expect(0, &["checkpoint", "--read-only", s(&source), s(&held)]);
    assert!(out.starts_with("checkpoint of "), "{out}");
    drop(db);

    let closed = dir.path().join("closed");
    expect(0, &["checkpoint", s(&source), s(&closed)]);
    // The target exists now: refused.
    assert_eq!(
        strata(&["checkpoint", s(&source), s(&closed)])
            .status
            .code(),
        Some(2)
    );
    for copy in [&held, &closed] {
        expect(0, &["check", s(copy)]);
        assert_eq!(expect(0, &["get", s(copy), "key2999"]), "value2999\n");
        assert_eq!(
            expect(0, &["scan", "--keys-only", s(copy)]).lines().count(),
            3000
        );
    }
}
