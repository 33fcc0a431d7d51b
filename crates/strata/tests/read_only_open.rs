//! `DB::open_read_only`: what a read-only handle sees of a database another handle (or
//! process) holds open for writing, that it never writes, and what it refuses.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

use strata::{Error, MemEnv, Options, ReadOptions, WriteBatch, DB};

mod support;

use support::state::scan;

fn key(i: usize) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn value(i: usize, round: usize) -> Vec<u8> {
    format!("value-{i}-{round}-{}", "x".repeat(100)).into_bytes()
}

/// Small buffers, so a few hundred writes make several tables.
fn small(options: Options) -> Options {
    Options {
        write_buffer_size: 64 << 10,
        max_file_size: 1 << 20,
        ..options
    }
}

fn create_options() -> Options {
    small(Options {
        create_if_missing: true,
        ..Options::default()
    })
}

/// Every file of `dir` with its bytes.
fn directory_contents(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            (
                entry.file_name().to_string_lossy().into_owned(),
                std::fs::read(entry.path()).unwrap(),
            )
        })
        .collect()
}

#[test]
fn sees_the_tables_and_the_live_log_of_a_database_held_open_for_writing() {
    let dir = tempfile::tempdir().unwrap();
    let writer = DB::open(dir.path(), create_options()).unwrap();
    let mut model = BTreeMap::new();
    for i in 0..2000 {
        writer.put(&key(i % 700), &value(i, 0)).unwrap();
        model.insert(key(i % 700), value(i, 0));
    }
    writer.delete(&key(3)).unwrap();
    model.remove(&key(3));
    assert!(
        writer.property("leveldb.num-files-at-level0").unwrap() != "0"
            || writer.property("leveldb.num-files-at-level1").unwrap() != "0",
        "the test needs tables"
    );

    // The writer holds LOCK: a second writer is refused, a reader is not.
    assert!(DB::open(dir.path(), Options::default()).is_err());
    let reader = DB::open_read_only(dir.path(), Options::default()).unwrap();
    assert!(reader.is_read_only() && !writer.is_read_only());
    assert_eq!(scan(&reader, &ReadOptions::default()).unwrap(), model);
    assert_eq!(reader.get(&key(5)).unwrap(), model.get(&key(5)).cloned());
    assert_eq!(reader.get(&key(3)).unwrap(), None);
    // Writes made after the open are not seen until a refresh.
    writer.put(b"later", b"1").unwrap();
    assert_eq!(reader.get(b"later").unwrap(), None);
    reader.refresh().unwrap();
    assert_eq!(reader.get(b"later").unwrap(), Some(b"1".to_vec()));
    // A refresh on a handle that writes has nothing to do.
    writer.refresh().unwrap();
}

#[test]
fn every_write_call_on_a_read_only_handle_is_not_supported() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = DB::open(dir.path(), create_options()).unwrap();
        db.put(b"a", b"1").unwrap();
    }
    let reader = DB::open_read_only(dir.path(), Options::default()).unwrap();
    let mut batch = WriteBatch::new();
    batch.put(b"b", b"2");
    let refused = [
        ("put", reader.put(b"a", b"2")),
        ("delete", reader.delete(b"a")),
        ("write", reader.write(&batch)),
        ("compact_range", reader.compact_range(None, None)),
    ];
    for (call, result) in refused {
        let err = result.expect_err(call);
        assert!(matches!(err, Error::NotSupported(_)), "{call}: {err}");
        assert!(err.to_string().contains("read-only"), "{call}: {err}");
    }
    // Suspending compactions on a handle that runs none changes nothing.
    reader.suspend_compactions();
    reader.resume_compactions();
    assert_eq!(reader.get(b"a").unwrap(), Some(b"1".to_vec()));
    assert_eq!(reader.get(b"b").unwrap(), None);
}

#[test]
fn a_read_only_handle_changes_no_file_of_the_directory() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = DB::open(dir.path(), create_options()).unwrap();
        for i in 0..3000 {
            db.put(&key(i % 900), &value(i, 1)).unwrap();
        }
    }
    // Closed with records in its log: the reader replays them without flushing them.
    let before = directory_contents(dir.path());
    assert!(before.keys().any(|name| name.ends_with(".log")));
    {
        let reader = DB::open_read_only(dir.path(), Options::default()).unwrap();
        let snapshot = reader.snapshot();
        let at_snapshot = ReadOptions {
            snapshot: Some(snapshot),
            ..ReadOptions::default()
        };
        assert_eq!(scan(&reader, &at_snapshot).unwrap().len(), 900);
        reader.refresh().unwrap();
        assert!(reader.put(b"k", b"v").is_err());
        reader.property("leveldb.stats").unwrap();
    }
    assert_eq!(directory_contents(dir.path()), before);
}

#[test]
fn a_database_that_does_not_exist_is_not_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing");
    let options = Options {
        create_if_missing: true,
        ..Options::default()
    };
    let err = DB::open_read_only(&path, options).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    assert!(!path.exists());
}

#[test]
fn opens_a_database_whose_lock_another_process_holds() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = DB::open(dir.path(), create_options()).unwrap();
        db.put(b"held", b"yes").unwrap();
    }
    // Another process takes LOCK the way LevelDB does (an fcntl write lock) and keeps it.
    let script = "import fcntl, os, sys\n\
                  fd = os.open(sys.argv[1], os.O_RDWR)\n\
                  fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n\
                  print('locked', flush=True)\n\
                  sys.stdin.read()\n";
    let mut holder = Command::new("/usr/bin/python3")
        .arg("-c")
        .arg(script)
        .arg(dir.path().join("LOCK"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run /usr/bin/python3");
    let mut line = String::new();
    BufReader::new(holder.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "locked");

    let err = DB::open(dir.path(), Options::default()).unwrap_err();
    assert!(err.to_string().contains("another process"), "{err}");
    let reader = DB::open_read_only(dir.path(), Options::default()).unwrap();
    assert_eq!(reader.get(b"held").unwrap(), Some(b"yes".to_vec()));
    drop(reader);

    holder.stdin.take().unwrap().write_all(b"").unwrap();
    assert!(holder.wait().unwrap().success());
    // LOCK exclusion between writers is unchanged: free again, a writer opens.
    DB::open(dir.path(), Options::default()).unwrap();
}

#[test]
fn works_on_an_in_memory_env() {
    let env = MemEnv::new();
    let options = Options {
        env: Arc::new(env.clone()),
        ..create_options()
    };
    let writer = DB::open("/db", options.clone()).unwrap();
    for i in 0..1500 {
        writer.put(&key(i), &value(i, 2)).unwrap();
    }
    let reader = DB::open_read_only(
        "/db",
        Options {
            env: Arc::new(env),
            ..Options::default()
        },
    )
    .unwrap();
    assert_eq!(scan(&reader, &ReadOptions::default()).unwrap().len(), 1500);
}
