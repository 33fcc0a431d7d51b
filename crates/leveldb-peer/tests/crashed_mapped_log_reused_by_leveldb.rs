//! A Strata process killed with its memory-mapped write-ahead log open leaves the log with zeros
//! up to its 32 KiB block's end (`crates/strata/src/env/posix/mapped_log.rs`). LevelDB 1.23
//! opened with `reuse_logs` (a C++ option; its C API does not expose it) keeps appending to the
//! last log at its file size — after the zeros, at the next block's start
//! (`log::Writer(file, file_size)` in `DBImpl::RecoverLogFile`) — and its own reader skips a
//! zero header's block and reads on. The writes it made there must be found by Strata too.
//!
//! The test appends what LevelDB's writer would (one record holding the next write batch, at
//! the file's end) rather than running LevelDB's C++ with `reuse_logs`, and has LevelDB 1.23 (C
//! API) read the result to show that LevelDB itself finds the write.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use leveldb_peer::{LevelDb, LevelDbOptions};
use strata::testing::{
    stop_mapped_log_writes_after, write_batch_contents, write_batch_set_sequence, write_log_records,
};
use strata::{Options, WriteBatch, DB};

fn key(i: u64) -> Vec<u8> {
    format!("key{i:07}").into_bytes()
}

fn copy_without_lock(dir: &Path, to: &Path) {
    fs::create_dir(to).unwrap();
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        if entry.file_name() != "LOCK" {
            fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

fn only_log(dir: &Path) -> PathBuf {
    let logs: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    logs.into_iter().next().unwrap()
}

#[test]
fn writes_leveldb_appended_to_a_reused_crashed_mapped_log_are_found_by_strata() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("db");
    let db = DB::open(
        &dir,
        Options {
            create_if_missing: true,
            ..Options::default()
        },
    )
    .unwrap();
    for i in 0..3 {
        db.put(&key(i), b"strata").unwrap();
    }
    // Killed here: the log is left as it is, zero tail and all.
    stop_mapped_log_writes_after(Some(0));
    let crashed = root.path().join("crashed");
    copy_without_lock(&dir, &crashed);
    drop(db);
    stop_mapped_log_writes_after(None);
    let log = only_log(&crashed);
    assert_eq!(fs::metadata(&log).unwrap().len(), 32 * 1024, "no zero tail");

    // LevelDB with reuse_logs: recovery replays the three writes (sequences 1 to 3), then its
    // log writer appends at the file's size, a block boundary; the next write is sequence 4.
    let mut batch = WriteBatch::new();
    batch.put(&key(3), b"leveldb");
    write_batch_set_sequence(&mut batch, 4);
    let record = write_log_records(&[write_batch_contents(&batch)]);
    OpenOptions::new()
        .append(true)
        .open(&log)
        .unwrap()
        .write_all(&record)
        .unwrap();

    for paranoid_checks in [false, true] {
        let copy = root.path().join(format!("leveldb-{paranoid_checks}"));
        copy_without_lock(&crashed, &copy);
        let ldb = LevelDb::open(
            &copy,
            &LevelDbOptions {
                paranoid_checks,
                ..LevelDbOptions::default()
            },
        )
        .unwrap_or_else(|e| panic!("LevelDB (paranoid {paranoid_checks}): {e}"));
        assert_eq!(
            ldb.get(&key(3)).unwrap().as_deref(),
            Some(&b"leveldb"[..]),
            "LevelDB (paranoid {paranoid_checks}) lost its own write"
        );
    }
    for paranoid_checks in [false, true] {
        let copy = root.path().join(format!("strata-{paranoid_checks}"));
        copy_without_lock(&crashed, &copy);
        let db = DB::open(
            &copy,
            Options {
                paranoid_checks,
                ..Options::default()
            },
        )
        .unwrap_or_else(|e| panic!("Strata (paranoid {paranoid_checks}): {e}"));
        for i in 0..3 {
            assert_eq!(db.get(&key(i)).unwrap().as_deref(), Some(&b"strata"[..]));
        }
        assert_eq!(
            db.get(&key(3)).unwrap().as_deref(),
            Some(&b"leveldb"[..]),
            "Strata (paranoid {paranoid_checks}) lost the write LevelDB appended to the log"
        );
    }
}
