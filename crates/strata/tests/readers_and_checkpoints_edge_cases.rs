//! Edge cases of read-only handles and checkpoints (review of issue 15): a `CURRENT` naming a
//! missing manifest and a damaged log tail give an error or a consistent state, never a panic
//! and never a write; a reader follows a writer that reopens with `reuse_logs` and appends to
//! the log it read; snapshots keep their view across refreshes; checkpoints of a database open
//! with `paranoid_checks` land on another file system (`/dev/shm`) and reopen exactly.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;

use strata::{Error, Options, ReadOptions, DB};

mod support;

use support::state::{scan, Model};

fn create() -> Options {
    Options {
        create_if_missing: true,
        ..Options::default()
    }
}

fn paranoid() -> Options {
    Options {
        paranoid_checks: true,
        ..Options::default()
    }
}

/// Every file of `dir` with its bytes.
fn contents(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

fn the_log(dir: &Path) -> std::path::PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "log"))
        .unwrap()
}

#[test]
fn a_current_naming_a_missing_manifest_is_an_error_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    DB::open(dir.path(), create())
        .unwrap()
        .put(b"a", b"1")
        .unwrap();
    std::fs::write(dir.path().join("CURRENT"), b"MANIFEST-000777\n").unwrap();
    let before = contents(dir.path());
    for options in [Options::default(), paranoid()] {
        let err = DB::open_read_only(dir.path(), options).unwrap_err();
        assert!(err.to_string().contains("MANIFEST-000777"), "{err}");
    }
    for garbage in [
        &b""[..],
        b"\n",
        b"../../etc/passwd\n",
        b"MANIFEST-\n",
        b"LOCK\n",
    ] {
        std::fs::write(dir.path().join("CURRENT"), garbage).unwrap();
        let err = DB::open_read_only(dir.path(), Options::default()).unwrap_err();
        assert!(
            matches!(err, Error::Corruption(_) | Error::Io { .. }),
            "{garbage:?}: {err}"
        );
    }
    std::fs::write(dir.path().join("CURRENT"), b"MANIFEST-000777\n").unwrap();
    assert_eq!(
        contents(dir.path()),
        before,
        "a read-only open wrote nothing"
    );
}

#[test]
fn a_damaged_log_tail_is_judged_as_open_judges_it_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = DB::open(dir.path(), create()).unwrap();
        for i in 0..100 {
            db.put(format!("k{i:03}").as_bytes(), b"v").unwrap();
        }
    }
    let log = the_log(dir.path());
    // A record header promising more than follows, then bytes that are no record.
    let mut file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    file.write_all(&[0xde, 0xad, 0xbe, 0xef, 0xff, 0x7f, 1, 9, 9, 9])
        .unwrap();
    drop(file);
    let before = contents(dir.path());
    let reader = DB::open_read_only(dir.path(), Options::default()).unwrap();
    assert_eq!(scan(&reader, &ReadOptions::default()).unwrap().len(), 100);
    reader.refresh().unwrap();
    assert_eq!(scan(&reader, &ReadOptions::default()).unwrap().len(), 100);
    // More bytes after the damage: a paranoid read-only open judges the log as a paranoid
    // open of the database judges it (here: a torn write, its header's length running past
    // the end), and a lenient one keeps the writes before the damage.
    let mut file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    file.write_all(&vec![0x5a; 4000]).unwrap();
    drop(file);
    reader.refresh().unwrap();
    assert_eq!(scan(&reader, &ReadOptions::default()).unwrap().len(), 100);
    let copy = tempfile::tempdir().unwrap();
    for (name, bytes) in contents(dir.path()) {
        std::fs::write(copy.path().join(name), bytes).unwrap();
    }
    let read_only = DB::open_read_only(dir.path(), paranoid())
        .and_then(|db| scan(&db, &ReadOptions::default()));
    let writer =
        DB::open(copy.path(), paranoid()).and_then(|db| scan(&db, &ReadOptions::default()));
    match (read_only, writer) {
        (Ok(a), Ok(b)) => assert_eq!(a, b),
        (Err(a), Err(b)) => assert_eq!(
            std::mem::discriminant(&a),
            std::mem::discriminant(&b),
            "{a} / {b}"
        ),
        (a, b) => panic!("read-only {a:?}, open {b:?}"),
    }
    // A zeroed header followed by data in the same block is damage in every reading.
    let mut file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    file.write_all(&[0; 7]).unwrap();
    file.write_all(b"data after zeros").unwrap();
    drop(file);
    reader.refresh().unwrap();
    assert_eq!(scan(&reader, &ReadOptions::default()).unwrap().len(), 100);
    let mut after = contents(dir.path());
    let log_name = log.file_name().unwrap().to_string_lossy().into_owned();
    after
        .get_mut(&log_name)
        .unwrap()
        .truncate(before[&log_name].len());
    assert_eq!(after, before, "a read-only open wrote nothing");
}

#[test]
fn a_reader_follows_a_writer_reopening_with_reuse_logs() {
    let dir = tempfile::tempdir().unwrap();
    let reuse = Options {
        reuse_logs: true,
        ..create()
    };
    let mut model = Model::new();
    let mut writer = DB::open(dir.path(), reuse.clone()).unwrap();
    let reader = DB::open_read_only(dir.path(), Options::default()).unwrap();
    let log = the_log(dir.path());
    for round in 0..6 {
        for i in 0..200 {
            let (k, v) = (
                format!("k{i:03}").into_bytes(),
                format!("{round}-{i}").into_bytes(),
            );
            writer.put(&k, &v).unwrap();
            model.insert(k, v);
        }
        reader.refresh().unwrap();
        assert_eq!(
            scan(&reader, &ReadOptions::default()).unwrap(),
            model,
            "{round}"
        );
        drop(writer);
        writer = DB::open(dir.path(), reuse.clone()).unwrap();
        reader.refresh().unwrap();
        assert_eq!(
            scan(&reader, &ReadOptions::default()).unwrap(),
            model,
            "{round}"
        );
    }
    assert!(log.exists(), "the writer kept appending to the first log");
}

#[test]
fn a_snapshot_keeps_its_view_across_refreshes_and_a_flush() {
    let dir = tempfile::tempdir().unwrap();
    let writer = DB::open(dir.path(), create()).unwrap();
    writer.put(b"k", b"1").unwrap();
    let reader = DB::open_read_only(dir.path(), Options::default()).unwrap();
    let snapshot = reader.snapshot();
    let at = ReadOptions {
        snapshot: Some(snapshot.clone()),
        ..ReadOptions::default()
    };
    let mut iter = reader.iter();
    iter.seek_to_first();
    writer.put(b"k", b"2").unwrap();
    writer.delete(b"k").unwrap();
    writer.put(b"other", b"x").unwrap();
    writer.compact_range(None, None).unwrap();
    for _ in 0..3 {
        reader.refresh().unwrap();
        assert_eq!(reader.get_opt(&at, b"k").unwrap(), Some(b"1".to_vec()));
        assert_eq!(reader.get_opt(&at, b"other").unwrap(), None);
        assert_eq!(reader.get(b"k").unwrap(), None);
        assert_eq!(reader.get(b"other").unwrap(), Some(b"x".to_vec()));
    }
    assert!(iter.valid());
    assert_eq!((iter.key(), iter.value()), (&b"k"[..], &b"1"[..]));
    iter.next();
    assert!(!iter.valid());
    iter.status().unwrap();
}

#[test]
fn a_paranoid_database_checkpoints_to_another_file_system() {
    let shm = Path::new("/dev/shm");
    assert!(shm.is_dir(), "/dev/shm is needed for a second file system");
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(
        dir.path(),
        Options {
            paranoid_checks: true,
            write_buffer_size: 64 << 10,
            ..create()
        },
    )
    .unwrap();
    let mut model = Model::new();
    for i in 0..3000 {
        let (k, v) = (format!("k{i:05}").into_bytes(), vec![b'v'; 100]);
        db.put(&k, &v).unwrap();
        model.insert(k, v);
    }
    let elsewhere = tempfile::tempdir_in(shm).unwrap();
    let target = elsewhere.path().join("copy");
    db.checkpoint(&target).unwrap();
    let reader = DB::open_read_only(dir.path(), paranoid()).unwrap();
    reader
        .checkpoint(elsewhere.path().join("from-reader"))
        .unwrap();
    for copy in [target, elsewhere.path().join("from-reader")] {
        let copy = DB::open(&copy, paranoid()).unwrap();
        assert_eq!(scan(&copy, &ReadOptions::default()).unwrap(), model);
    }
}
