//! With `reuse_logs`, open appends to the last log and to the manifest instead of starting new
//! ones. A crash can leave either ending in a torn record (a header or payload cut short),
//! which the reader takes as a clean end. Appending after those bytes buried every later
//! record behind them: the torn header's length now reached into the new records, so the
//! reader dropped them (acknowledged writes lost; manifest edits lost, the database then
//! naming deleted tables). A file is only reused when it ends exactly after its last record.
//! The power-loss and I/O-error tests found both: a reused log's synced writes gone after the
//! next crash, and the next open failing on a torn manifest record followed by valid bytes.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use strata::testing::PowerLossMode;
use strata::{Env, MemEnv, Options, WriteOptions, DB};

use crate::support::fault_env;
use crate::support::files::{append_raw, file_names};
use crate::workload::{self, assert_holds, crash_and_reopen, fill, key, names, value};

fn options(env: &Arc<MemEnv>) -> Options {
    Options {
        reuse_logs: true,
        ..crate::support::options(env)
    }
}

fn only_file(env: &MemEnv, pred: impl Fn(&str) -> bool) -> PathBuf {
    let names = file_names(env, Path::new("/db"), pred);
    assert_eq!(names.len(), 1, "{names:?}");
    Path::new("/db").join(&names[0])
}

/// Appends what a crash in the middle of writing a record leaves: a header announcing 300
/// payload bytes, and only 5 of them.
fn append_torn_record(env: &MemEnv, path: &Path) {
    let mut file = env.new_appendable_file(path).unwrap();
    file.append(&[
        0x12, 0x34, 0x56, 0x78, 44, 1, 1, b'p', b'a', b'r', b't', b'i',
    ])
    .unwrap();
    file.close().unwrap();
}

const SYNC: WriteOptions = WriteOptions { sync: true };

#[test]
fn writes_appended_to_a_reused_log_with_a_torn_tail_survive() {
    let env = Arc::new(MemEnv::new());
    {
        let db = DB::open("/db", options(&env)).unwrap();
        db.put_opt(&SYNC, b"a", b"1").unwrap();
    }
    append_torn_record(&env, &only_file(&env, |n| n.ends_with(".log")));
    {
        let db = DB::open("/db", options(&env)).unwrap();
        assert_eq!(db.get(b"a").unwrap(), Some(b"1".to_vec()));
        db.put_opt(&SYNC, b"b", b"2").unwrap();
        db.put_opt(&SYNC, b"c", b"3").unwrap();
    }
    let db = DB::open("/db", options(&env)).unwrap();
    assert_eq!(db.get(b"a").unwrap(), Some(b"1".to_vec()));
    assert_eq!(db.get(b"b").unwrap(), Some(b"2".to_vec()));
    assert_eq!(db.get(b"c").unwrap(), Some(b"3".to_vec()));
}

#[test]
fn edits_appended_to_a_reused_manifest_with_a_torn_tail_survive() {
    let env = Arc::new(MemEnv::new());
    {
        let db = DB::open("/db", options(&env)).unwrap();
        for i in 0..50u32 {
            db.put(format!("key{i:02}").as_bytes(), b"old").unwrap();
        }
        db.compact_range(None, None).unwrap();
    }
    append_torn_record(&env, &only_file(&env, |n| n.starts_with("MANIFEST-")));
    {
        let db = DB::open("/db", options(&env)).unwrap();
        for i in 0..50u32 {
            db.put(format!("key{i:02}").as_bytes(), b"new").unwrap();
        }
        // Flushes and compacts: the old table is replaced and deleted.
        db.compact_range(None, None).unwrap();
    }
    let db = DB::open("/db", options(&env)).unwrap();
    for i in 0..50u32 {
        assert_eq!(
            db.get(format!("key{i:02}").as_bytes()).unwrap(),
            Some(b"new".to_vec())
        );
    }
}

#[test]
fn clean_log_and_manifest_are_still_reused() {
    let env = Arc::new(MemEnv::new());
    let big = vec![b'v'; 100_000]; // fragmented over several blocks
    {
        let db = DB::open("/db", options(&env)).unwrap();
        db.put_opt(&SYNC, b"a", &big).unwrap();
        db.put_opt(&SYNC, b"b", b"1").unwrap();
    }
    let log = only_file(&env, |n| n.ends_with(".log"));
    let manifest = only_file(&env, |n| n.starts_with("MANIFEST-"));
    {
        let db = DB::open("/db", options(&env)).unwrap();
        db.put_opt(&SYNC, b"c", b"2").unwrap();
    }
    assert_eq!(only_file(&env, |n| n.ends_with(".log")), log);
    assert_eq!(only_file(&env, |n| n.starts_with("MANIFEST-")), manifest);
    let db = DB::open("/db", options(&env)).unwrap();
    assert_eq!(db.get(b"a").unwrap(), Some(big));
    assert_eq!(db.get(b"c").unwrap(), Some(b"2".to_vec()));
}

/// With `reuse_logs`, recovery appended new writes to a log that ended in a torn record; the
/// next recovery met the torn record, dropped the rest of its block, and with it the synced
/// writes appended behind it.
#[test]
fn reused_log_with_a_torn_tail_keeps_later_writes() {
    let env = fault_env();
    let db = DB::open(workload::DIR, workload::options(&env, true)).unwrap();
    fill(&db, 0..20, 1);
    drop(db);
    let logs = names(&env, ".log");
    let log = logs.last().unwrap();
    // The first bytes of a record header: a write torn by a crash.
    append_raw(
        &**env.inner(),
        workload::DIR,
        log,
        &[0x12, 0x34, 0x56, 0x78, 0x20, 0x00],
    );
    let db = DB::open(workload::DIR, workload::options(&env, true)).unwrap();
    assert_holds(&db, 0..20, 1);
    for i in 20..40 {
        db.put_opt(&WriteOptions { sync: true }, &key(i), &value(i, 1))
            .unwrap();
    }
    let db = crash_and_reopen(&env, db, PowerLossMode::DropUnsynced, true);
    assert_holds(&db, 0..40, 1);
}

/// With `reuse_logs`, open appended new edits to a manifest that ended in a torn record; the
/// next open met the torn record followed by valid bytes, reported corruption and failed.
#[test]
fn reused_manifest_with_a_torn_tail_keeps_later_edits() {
    let env = fault_env();
    let db = DB::open(workload::DIR, workload::options(&env, true)).unwrap();
    fill(&db, 0..500, 1);
    db.compact_range(None, None).unwrap();
    drop(db);
    let manifests = names(&env, "MANIFEST-");
    append_raw(
        &**env.inner(),
        workload::DIR,
        manifests.last().unwrap(),
        &[0x9a, 0xbc, 0xde, 0xf0, 0x40],
    );
    let db = DB::open(workload::DIR, workload::options(&env, true)).unwrap();
    fill(&db, 500..1000, 2);
    db.compact_range(None, None).unwrap();
    drop(db);
    let db = DB::open(workload::DIR, workload::options(&env, true)).unwrap();
    assert_holds(&db, 0..500, 1);
    assert_holds(&db, 500..1000, 2);
}
