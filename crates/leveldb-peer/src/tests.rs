//! The safe wrapper against the real LevelDB library.

use std::path::Path;

use crate::fixtures::read_all;
use crate::{
    destroy, repair, version, LevelDb, LevelDbBatch, LevelDbIter, LevelDbOptions, LevelDbSnapshot,
};

fn create_opts() -> LevelDbOptions {
    LevelDbOptions {
        create_if_missing: true,
        ..LevelDbOptions::default()
    }
}

fn fresh(dir: &Path) -> LevelDb {
    LevelDb::open(dir, &create_opts()).expect("open")
}

fn entries(it: &LevelDbIter<'_>) -> (Vec<u8>, Vec<u8>) {
    (it.key().to_vec(), it.value().to_vec())
}

#[test]
fn links_leveldb_1_23() {
    assert_eq!(version(), (1, 23));
}

#[test]
fn peer_types_are_thread_safe() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<LevelDb>();
    send_sync::<LevelDbSnapshot<'static>>();
    send::<LevelDbIter<'static>>();
    send::<LevelDbBatch>();
}

#[test]
fn put_get_delete_round_trip() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = fresh(dir.path());
    assert_eq!(db.get(b"a").expect("get"), None);
    db.put(b"a", b"1", false).expect("put");
    db.put(b"", b"empty key", true).expect("put empty key");
    db.put(b"b", b"", false).expect("put empty value");
    assert_eq!(db.get(b"a").expect("get"), Some(b"1".to_vec()));
    assert_eq!(db.get(b"").expect("get"), Some(b"empty key".to_vec()));
    assert_eq!(db.get(b"b").expect("get"), Some(Vec::new()));
    assert_eq!(
        db.get_with(b"a", false, true).expect("get_with"),
        Some(b"1".to_vec())
    );

    db.put(b"a", b"2", false).expect("overwrite");
    assert_eq!(db.get(b"a").expect("get"), Some(b"2".to_vec()));
    db.delete(b"a", false).expect("delete");
    db.delete(b"never-written", true)
        .expect("delete of absent key is fine");
    assert_eq!(db.get(b"a").expect("get"), None);
}

#[test]
fn batch_applies_in_order_and_clear_empties_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = fresh(dir.path());
    db.put(b"gone", b"x", false).expect("put");

    let mut batch = LevelDbBatch::new();
    batch.put(b"k1", b"v1");
    batch.put(b"k2", b"v2");
    batch.delete(b"k2");
    batch.delete(b"gone");
    batch.put(b"k3", b"v3");
    db.write(&batch, true).expect("write");
    assert_eq!(db.get(b"k1").expect("get"), Some(b"v1".to_vec()));
    assert_eq!(db.get(b"k2").expect("get"), None);
    assert_eq!(db.get(b"gone").expect("get"), None);
    assert_eq!(db.get(b"k3").expect("get"), Some(b"v3".to_vec()));

    batch.clear();
    batch.put(b"k4", b"v4");
    db.write(&batch, false).expect("write after clear");
    batch.clear();
    db.write(&batch, false).expect("empty batch");
    db.delete(b"k1", false).expect("delete");
    assert_eq!(
        db.get(b"k1").expect("get"),
        None,
        "cleared ops must not be replayed"
    );
    assert_eq!(db.get(b"k4").expect("get"), Some(b"v4".to_vec()));
}

#[test]
fn iterates_forward_backward_and_seeks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = fresh(dir.path());
    let keys: Vec<Vec<u8>> = vec![
        b"a".to_vec(),
        b"b".to_vec(),
        b"c".to_vec(),
        vec![0x80],
        vec![0xff, 0x00],
    ];
    for k in &keys {
        db.put(k, &[k.as_slice(), b"-v"].concat(), false)
            .expect("put");
    }

    let mut it = db.iter();
    assert!(!it.valid(), "a fresh iterator is unpositioned");
    it.seek_to_first();
    let mut forward = Vec::new();
    while it.valid() {
        forward.push(entries(&it));
        it.next();
    }
    assert_eq!(
        forward.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>(),
        keys,
        "unsigned byte order"
    );
    assert!(forward
        .iter()
        .all(|(k, v)| *v == [k.as_slice(), b"-v"].concat()));

    it.seek_to_last();
    let mut backward = Vec::new();
    while it.valid() {
        backward.push(entries(&it));
        it.prev();
    }
    backward.reverse();
    assert_eq!(backward, forward);

    it.seek(b"bb");
    assert_eq!(it.key(), b"c");
    it.prev();
    assert_eq!(it.key(), b"b");
    it.seek(&[0xff, 0x01]);
    assert!(!it.valid(), "past the last key");
    it.status().expect("no iterator error");
}

#[test]
#[should_panic(expected = "not valid")]
fn key_of_an_unpositioned_iterator_panics_instead_of_reading_garbage() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = fresh(dir.path());
    let it = db.iter();
    let _ = it.key();
}

#[test]
fn snapshot_sees_the_past() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = fresh(dir.path());
    db.put(b"k", b"old", false).expect("put");
    db.put(b"doomed", b"here", false).expect("put");
    let snap = db.snapshot();
    db.put(b"k", b"new", false).expect("put");
    db.delete(b"doomed", false).expect("delete");
    db.put(b"later", b"x", false).expect("put");

    assert_eq!(snap.get(b"k").expect("get"), Some(b"old".to_vec()));
    assert_eq!(snap.get(b"doomed").expect("get"), Some(b"here".to_vec()));
    assert_eq!(snap.get(b"later").expect("get"), None);
    assert_eq!(db.get(b"k").expect("get"), Some(b"new".to_vec()));

    let mut it = snap.iter();
    it.seek_to_first();
    let mut seen = Vec::new();
    while it.valid() {
        seen.push(entries(&it));
        it.next();
    }
    assert_eq!(
        seen,
        vec![
            (b"doomed".to_vec(), b"here".to_vec()),
            (b"k".to_vec(), b"old".to_vec())
        ]
    );
}

#[test]
fn properties_compaction_and_sizes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = fresh(dir.path());
    // 1 MiB of values that Snappy cannot shrink.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for i in 0..1024u32 {
        let value: Vec<u8> = (0..1024)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state.to_le_bytes()[0]
            })
            .collect();
        db.put(format!("key{i:06}").as_bytes(), &value, false)
            .expect("put");
    }

    let stats = db.property("leveldb.stats").expect("stats property");
    assert!(stats.contains("Compactions"), "{stats}");
    assert!(db.property("leveldb.no-such-property").is_none());

    db.compact_range(None, None);
    let level0: usize = db
        .property("leveldb.num-files-at-level0")
        .expect("level0")
        .parse()
        .expect("number");
    assert_eq!(level0, 0, "a full compaction leaves nothing in level 0");

    let sizes = db.approximate_sizes(&[
        (b"key", b"key~"),
        (b"zzz0", b"zzz9"),
        (b"key000000", b"key000512"),
    ]);
    assert!(sizes[0] > 900 * 1024, "whole range: {}", sizes[0]);
    assert_eq!(sizes[1], 0, "range without data");
    assert!(sizes[2] > 0 && sizes[2] < sizes[0], "half range: {sizes:?}");

    db.compact_range(Some(b"key000100"), Some(b"key000200"));
    assert_eq!(
        db.get(b"key000150").expect("get").map(|v| v.len()),
        Some(1024)
    );
}

#[test]
fn error_if_exists_reports_the_existing_database() {
    let dir = tempfile::tempdir().expect("tempdir");
    drop(fresh(dir.path()));
    let opts = LevelDbOptions {
        error_if_exists: true,
        ..create_opts()
    };
    let err = LevelDb::open(dir.path(), &opts).err().expect("must fail");
    assert!(err.contains("exists"), "{err}");
}

#[test]
fn missing_database_without_create_if_missing_fails() {
    let dir = tempfile::tempdir().expect("tempdir");
    let err = LevelDb::open(dir.path().join("none"), &LevelDbOptions::default())
        .err()
        .expect("must fail");
    assert!(err.contains("create_if_missing"), "{err}");
}

#[test]
fn second_open_while_open_fails_on_the_lock() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = fresh(dir.path());
    let err = LevelDb::open(dir.path(), &create_opts())
        .err()
        .expect("second open must fail");
    assert!(err.contains("lock"), "{err}");
    drop(db);
    LevelDb::open(dir.path(), &create_opts()).expect("lock released on close");
}

#[test]
fn every_option_is_accepted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = LevelDbOptions {
        create_if_missing: true,
        error_if_exists: true,
        paranoid_checks: true,
        write_buffer_size: Some(128 * 1024),
        max_open_files: Some(100),
        block_size: Some(1024),
        block_restart_interval: Some(4),
        max_file_size: Some(256 * 1024),
        compression: false,
        bloom_bits: Some(10),
        cache_bytes: Some(1 << 20),
    };
    let db = LevelDb::open(dir.path(), &opts).expect("open");
    for i in 0..5000u32 {
        db.put(&i.to_be_bytes(), &[7u8; 100], false).expect("put");
    }
    db.compact_range(None, None);
    assert_eq!(
        db.get(&4999u32.to_be_bytes()).expect("get"),
        Some(vec![7u8; 100])
    );
    assert_eq!(db.get(&5000u32.to_be_bytes()).expect("get"), None);

    let too_big = LevelDbOptions {
        max_open_files: Some(usize::MAX),
        ..create_opts()
    };
    let err = LevelDb::open(dir.path().join("other"), &too_big)
        .err()
        .expect("rejected");
    assert!(err.contains("max_open_files"), "{err}");
}

#[test]
fn concurrent_writers_and_readers_share_one_database() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = fresh(dir.path());
    std::thread::scope(|s| {
        for t in 0..4u8 {
            let db = &db;
            s.spawn(move || {
                for i in 0..500u32 {
                    let key = [&[t][..], &i.to_be_bytes()].concat();
                    db.put(&key, &key, false).expect("put");
                    assert_eq!(db.get(&key).expect("get"), Some(key));
                }
            });
        }
    });
    assert_eq!(read_all(&db).expect("scan").len(), 2000);
}

#[test]
fn destroy_removes_the_database() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("db");
    let db = fresh(&path);
    db.put(b"k", b"v", false).expect("put");
    drop(db);
    destroy(&path).expect("destroy");
    assert!(
        LevelDb::open(&path, &LevelDbOptions::default()).is_err(),
        "nothing left to open"
    );
    destroy(&path).expect("destroying nothing succeeds");
}

#[test]
fn repair_rebuilds_a_lost_manifest() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = fresh(dir.path());
    for i in 0..200u32 {
        db.put(format!("key{i:04}").as_bytes(), b"in a table", false)
            .expect("put");
    }
    db.compact_range(None, None);
    db.put(b"wal-only", b"in the log", false).expect("put");
    drop(db);

    for entry in std::fs::read_dir(dir.path()).expect("list") {
        let entry = entry.expect("entry");
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == "CURRENT" || name.starts_with("MANIFEST-") {
            std::fs::remove_file(entry.path()).expect("remove");
        }
    }
    assert!(
        LevelDb::open(dir.path(), &LevelDbOptions::default()).is_err(),
        "no CURRENT: unopenable"
    );

    repair(dir.path()).expect("repair");
    let db = LevelDb::open(dir.path(), &LevelDbOptions::default()).expect("open after repair");
    let all = read_all(&db).expect("scan");
    assert_eq!(all.len(), 201);
    assert_eq!(
        all.get(b"wal-only".as_slice()).map(Vec::as_slice),
        Some(b"in the log".as_slice())
    );
}
