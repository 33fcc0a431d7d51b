//! `DB::get_with` answers as `DB::get_opt` with the same read options: at a snapshot it lends
//! the value the snapshot sees (a memtable's, still held by the snapshot's view after the
//! memtable was flushed and replaced), a `memory_only` read of a separated value fails with
//! `WouldBlock` without calling the closure, and a read-only handle's snapshot lends the value
//! its view holds after refreshes replaced that view's memtable.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::sync::Arc;

use strata::{Error, MemEnv, Options, ReadOptions, ValueSeparation, DB};

fn lent(db: &DB, options: &ReadOptions, key: &[u8]) -> strata::Result<Option<Vec<u8>>> {
    db.get_with(options, key, <[u8]>::to_vec)
}

#[test]
fn get_with_honours_snapshots_and_memory_only() {
    let env = Arc::new(MemEnv::new());
    let options = Options {
        value_separation: Some(ValueSeparation::new(256)),
        ..support::options(&env)
    };
    let db = DB::open("/db", options).unwrap();
    db.put(b"k", b"old").unwrap();
    db.put(b"d", b"there").unwrap();
    let at = ReadOptions {
        snapshot: Some(db.snapshot()),
        ..ReadOptions::default()
    };
    db.put(b"k", b"new").unwrap();
    db.delete(b"d").unwrap();
    for place in ["memtable", "table"] {
        assert_eq!(
            lent(&db, &at, b"k").unwrap().as_deref(),
            Some(&b"old"[..]),
            "{place}"
        );
        assert_eq!(
            lent(&db, &at, b"d").unwrap().as_deref(),
            Some(&b"there"[..]),
            "{place}"
        );
        assert_eq!(
            lent(&db, &ReadOptions::default(), b"d").unwrap(),
            None,
            "{place}"
        );
        assert_eq!(
            db.get_opt(&at, b"k").unwrap(),
            lent(&db, &at, b"k").unwrap()
        );
        db.compact_range(None, None).unwrap();
    }
    db.put(b"big", &[b'x'; 1000]).unwrap();
    db.compact_range(None, None).unwrap();
    let refused = db.get_with(&support::memory_only(), b"big", |_| -> () {
        panic!("lent a value a memory-only read could not have")
    });
    assert!(matches!(refused, Err(Error::WouldBlock(_))), "{refused:?}");
    assert_eq!(
        lent(&db, &ReadOptions::default(), b"big")
            .unwrap()
            .unwrap()
            .len(),
        1000
    );
}

#[test]
fn a_read_only_snapshot_lends_from_the_memtable_its_view_holds() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        create_if_missing: true,
        ..Options::default()
    };
    let writer = DB::open(dir.path(), options.clone()).unwrap();
    writer.put(b"k", b"old").unwrap();
    let handle = DB::open_read_only(dir.path(), options).unwrap();
    let at = ReadOptions {
        snapshot: Some(handle.snapshot()),
        ..ReadOptions::default()
    };
    writer.put(b"k", b"new").unwrap();
    writer.compact_range(None, None).unwrap();
    writer.put(b"k", b"newer").unwrap();
    handle.refresh().unwrap();
    assert_eq!(
        lent(&handle, &ReadOptions::default(), b"k")
            .unwrap()
            .as_deref(),
        Some(&b"newer"[..])
    );
    assert_eq!(
        lent(&handle, &at, b"k").unwrap().as_deref(),
        Some(&b"old"[..])
    );
}
