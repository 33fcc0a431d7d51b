//! With `reuse_logs`, open appends to the last log and to the manifest instead of starting new
//! ones. A crash can leave either ending in a torn record (a header or payload cut short),
//! which the reader takes as a clean end. Appending after those bytes buried every later
//! record behind them: the torn header's length now reached into the new records, so the
//! reader dropped them (acknowledged writes lost; manifest edits lost, the database then
//! naming deleted tables). A file is only reused when it ends exactly after its last record.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use strata::{Env, MemEnv, Options, WriteOptions, DB};

fn options(env: &Arc<MemEnv>) -> Options {
    Options {
        create_if_missing: true,
        reuse_logs: true,
        env: env.clone(),
        ..Options::default()
    }
}

fn only_file(env: &MemEnv, pred: impl Fn(&str) -> bool) -> PathBuf {
    let names: Vec<String> = env
        .children(Path::new("/db"))
        .unwrap()
        .into_iter()
        .filter(|n| pred(n))
        .collect();
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
