//! Opening and recovery: writes survive reopen without a clean close, open refuses what it
//! must (missing database, existing one with error_if_exists, wrong comparator, a second
//! opener, a table missing from disk, a damaged CURRENT), and the LOG and properties say what
//! happened.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::cmp::Ordering;
use std::path::Path;
use std::sync::Arc;

use strata::{Comparator, Env, Error, MemEnv, Options, PosixEnv, DB};
use support::files::{file_names, info_log, write_file};
use support::options;
use support::state::files_at_level;

fn read_file(env: &MemEnv, path: &str) -> Vec<u8> {
    support::files::read_file(env, Path::new(path)).unwrap()
}

fn strata_write(env: &MemEnv, path: &str, data: &[u8]) {
    write_file(env, Path::new(path), data);
}

#[test]
fn writes_survive_reopen_after_drop_without_flush() {
    let env = Arc::new(MemEnv::new());
    {
        let db = DB::open("/db", options(&env)).unwrap();
        for i in 0..1000u32 {
            db.put(format!("key{i:05}").as_bytes(), &i.to_le_bytes())
                .unwrap();
        }
        db.delete(b"key00007").unwrap();
    }
    for _ in 0..3 {
        let db = DB::open("/db", options(&env)).unwrap();
        assert_eq!(
            db.get(b"key00999").unwrap(),
            Some(999u32.to_le_bytes().to_vec())
        );
        assert_eq!(db.get(b"key00007").unwrap(), None);
        db.put(b"more", b"data").unwrap();
    }
    let db = DB::open("/db", options(&env)).unwrap();
    assert_eq!(db.get(b"more").unwrap(), Some(b"data".to_vec()));
}

#[test]
fn open_refuses_missing_or_existing_database_as_asked() {
    let env = Arc::new(MemEnv::new());
    let err = DB::open(
        "/nothing",
        Options {
            env: env.clone(),
            ..Options::default()
        },
    )
    .unwrap_err();
    assert!(
        matches!(err, Error::InvalidArgument(ref m) if m.contains("does not exist")),
        "{err}"
    );
    drop(DB::open("/db", options(&env)).unwrap());
    let err = DB::open(
        "/db",
        Options {
            error_if_exists: true,
            ..options(&env)
        },
    )
    .unwrap_err();
    assert!(
        matches!(err, Error::InvalidArgument(ref m) if m.contains("exists")),
        "{err}"
    );
}

struct Reverse;
impl Comparator for Reverse {
    fn name(&self) -> &str {
        "test.Reverse"
    }
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        b.cmp(a)
    }
}

#[test]
fn wrong_comparator_is_refused_and_custom_comparator_orders_keys() {
    let env = Arc::new(MemEnv::new());
    let reverse = Options {
        comparator: Arc::new(Reverse),
        ..options(&env)
    };
    {
        let db = DB::open("/rev", reverse.clone()).unwrap();
        for k in [b"a", b"c", b"b"] {
            db.put(k, k).unwrap();
        }
        let mut it = db.iter();
        it.seek_to_first();
        let mut keys = Vec::new();
        while it.valid() {
            keys.push(it.key().to_vec());
            it.next();
        }
        assert_eq!(keys, vec![b"c".to_vec(), b"b".to_vec(), b"a".to_vec()]);
        db.compact_range(None, None).unwrap();
        assert_eq!(db.get(b"b").unwrap(), Some(b"b".to_vec()));
    }
    let err = DB::open("/rev", options(&env)).unwrap_err();
    assert!(
        matches!(err, Error::InvalidArgument(ref m) if m.contains("test.Reverse") && m.contains("leveldb.BytewiseComparator")),
        "{err}"
    );
    // Still intact for the right comparator.
    let db = DB::open("/rev", reverse).unwrap();
    assert_eq!(db.get(b"c").unwrap(), Some(b"c".to_vec()));
}

#[test]
fn second_opener_is_refused_while_the_lock_is_held() {
    let dir = tempfile::tempdir().unwrap();
    let options = options(&Arc::new(PosixEnv::new()));
    let db = DB::open(dir.path(), options.clone()).unwrap();
    let err = DB::open(dir.path(), options.clone()).unwrap_err();
    assert!(
        err.is_io_error() && err.to_string().contains("LOCK"),
        "{err}"
    );
    drop(db);
    DB::open(dir.path(), options).unwrap();
}

#[test]
fn missing_table_is_reported_by_name_and_nothing_is_deleted() {
    let env = Arc::new(MemEnv::new());
    {
        let db = DB::open("/db", options(&env)).unwrap();
        for i in 0..2000u32 {
            db.put(format!("k{i:06}").as_bytes(), &[b'v'; 100]).unwrap();
        }
        db.compact_range(None, None).unwrap();
    }
    let tables = file_names(&*env, Path::new("/db"), |n| n.ends_with(".ldb"));
    assert!(!tables.is_empty());
    let victim = format!("/db/{}", tables[0]);
    let saved = read_file(&env, &victim);
    env.remove_file(Path::new(&victim)).unwrap();
    let before = env.children(Path::new("/db")).unwrap();
    let err = DB::open("/db", options(&env)).unwrap_err();
    let details = err.corruption_details().expect("corruption");
    assert!(details.reason.contains(&tables[0]), "{err}");
    assert!(
        details
            .file
            .as_deref()
            .is_some_and(|f| f.contains("MANIFEST")),
        "{err}"
    );
    let mut after = env.children(Path::new("/db")).unwrap();
    let mut before = before;
    before.sort();
    after.sort();
    // A failed open may add a LOG line but deletes and rewrites nothing.
    after.retain(|n| n != "LOG.old");
    before.retain(|n| n != "LOG.old");
    assert_eq!(before, after);
    // Put the table back: the database opens with everything.
    strata_write(&env, &victim, &saved);
    let db = DB::open("/db", options(&env)).unwrap();
    assert_eq!(db.get(b"k001999").unwrap(), Some(vec![b'v'; 100]));
}

#[test]
fn damaged_or_missing_current_is_a_corruption_naming_it() {
    let env = Arc::new(MemEnv::new());
    drop(DB::open("/db", options(&env)).unwrap());
    strata_write(&env, "/db/CURRENT", b"MANIFEST-000001");
    let err = DB::open("/db", options(&env)).unwrap_err();
    assert!(
        err.corruption_details()
            .is_some_and(|c| c.file.as_deref() == Some("/db/CURRENT")),
        "{err}"
    );
    strata_write(&env, "/db/CURRENT", b"MANIFEST-999999\n");
    let err = DB::open("/db", options(&env)).unwrap_err();
    assert!(
        err.is_corruption() && err.to_string().contains("MANIFEST-999999"),
        "{err}"
    );
}

#[test]
fn truncated_manifest_is_reported() {
    let env = Arc::new(MemEnv::new());
    drop(DB::open("/db", options(&env)).unwrap());
    let current = String::from_utf8(read_file(&env, "/db/CURRENT")).unwrap();
    let manifest = format!("/db/{}", current.trim_end());
    let bytes = read_file(&env, &manifest);
    // Keep only a few bytes of the first record: no usable edit remains.
    strata_write(&env, &manifest, &bytes[..5.min(bytes.len())]);
    let err = DB::open("/db", options(&env)).unwrap_err();
    assert!(
        err.is_corruption() && err.to_string().contains("MANIFEST"),
        "{err}"
    );
}

#[test]
fn log_and_properties_describe_the_database() {
    let env = Arc::new(MemEnv::new());
    let db = DB::open(
        "/db",
        Options {
            write_buffer_size: 64 << 10,
            ..options(&env)
        },
    )
    .unwrap();
    for i in 0..5000u32 {
        db.put(format!("k{i:06}").as_bytes(), &[b'v'; 100]).unwrap();
    }
    db.compact_range(None, None).unwrap();
    let files: usize = (0..7).map(|l| files_at_level(&db, l)).sum();
    assert!(files > 0);
    assert_eq!(
        db.property("leveldb.num-files-at-level0").as_deref(),
        Some("0")
    );
    assert!(db.property("leveldb.num-files-at-level7").is_none());
    assert!(db.property("leveldb.nonsense").is_none());
    let stats = db.property("leveldb.stats").unwrap();
    assert!(
        stats.contains("Level") && stats.contains("Compactions"),
        "{stats}"
    );
    let sstables = db.property("leveldb.sstables").unwrap();
    assert!(
        sstables.contains("--- level 0 ---") && sstables.contains("'k000000'"),
        "{sstables}"
    );
    let memory: usize = db
        .property("leveldb.approximate-memory-usage")
        .unwrap()
        .parse()
        .unwrap();
    assert!(memory > 0);
    let sizes = db.approximate_sizes(&[
        strata::Range {
            start: b"k000000",
            limit: b"k999999",
        },
        strata::Range {
            start: b"z",
            limit: b"zz",
        },
    ]);
    assert!(sizes[0] > 30_000, "{sizes:?}");
    assert_eq!(sizes[1], 0);
    drop(db);
    let log = info_log(&*env, Path::new("/db"));
    assert!(
        log.contains("level-0 table") || log.contains("compact"),
        "{log}"
    );
    DB::open("/db", options(&env)).unwrap();
    let log = info_log(&*env, Path::new("/db"));
    assert!(log.contains("recover"), "{log}");
    assert!(env.file_exists(Path::new("/db/LOG.old")));
}

/// Collects what a database logs.
#[derive(Default)]
struct Collected(parking_lot::Mutex<Vec<String>>);

impl strata::Logger for Collected {
    fn log(&self, message: &str) {
        self.0.lock().push(message.to_owned());
    }
}

#[test]
fn a_user_logger_takes_the_place_of_the_log_file() {
    let env = Arc::new(MemEnv::new());
    let logger = Arc::new(Collected::default());
    let options = Options {
        write_buffer_size: 64 << 10,
        info_log: Some(logger.clone()),
        ..options(&env)
    };
    let db = DB::open("/db", options.clone()).unwrap();
    for i in 0..2000u32 {
        db.put(format!("k{i:06}").as_bytes(), &[b'v'; 100]).unwrap();
    }
    db.compact_range(None, None).unwrap();
    drop(db);
    DB::open("/db", options).unwrap();
    let messages = logger.0.lock().clone();
    assert!(
        messages.iter().any(|m| m.contains("level-0 table")),
        "{messages:?}"
    );
    assert!(
        messages.iter().any(|m| m.contains("recover")),
        "{messages:?}"
    );
    assert!(messages.iter().all(|m| !m.is_empty() && !m.contains('\n')));
    let names = env.children(Path::new("/db")).unwrap();
    assert!(
        !names.iter().any(|n| n.starts_with("LOG")),
        "no LOG file is written: {names:?}"
    );
}

#[test]
fn destroy_removes_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let options = Options {
        create_if_missing: true,
        ..Options::default()
    };
    {
        let db = DB::open(&path, options.clone()).unwrap();
        db.put(b"a", b"b").unwrap();
    }
    strata::destroy(&path, &options).unwrap();
    assert!(!path.exists());
}
