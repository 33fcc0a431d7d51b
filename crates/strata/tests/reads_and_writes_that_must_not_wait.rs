//! Reads with `ReadOptions::memory_only` and `DB::try_write`, for callers that must not block
//! (an event loop): each either does all its work from memory at once or fails with
//! `Error::WouldBlock` having done nothing, and the same call without the request then does
//! it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;

use strata::testing::{EnvOp, HookEnv};
use strata::{
    Error, MemEnv, Options, PosixEnv, ReadOptions, ValueSeparation, WriteBatch, WriteOptions, DB,
};

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn put(key: &[u8], value: &[u8]) -> WriteBatch {
    let mut batch = WriteBatch::new();
    batch.put(key, value);
    batch
}

fn would_block<T: std::fmt::Debug>(result: strata::Result<T>) -> bool {
    matches!(result, Err(Error::WouldBlock(_)))
}

/// `try_write` until it is refused for another reason than a moment's busy state, checking
/// each write is visible at once. Returns the refusal and the number of writes done.
fn try_write_until_refused(db: &DB, first: u32, value: &[u8]) -> (String, u32) {
    let mut written = first;
    loop {
        match support::try_write_past_busy(db, &put(&key(written), value)) {
            Ok(()) => {
                assert_eq!(db.get(&key(written)).unwrap().as_deref(), Some(value));
                written += 1;
            }
            Err(Error::WouldBlock(why)) => return (why, written - first),
            Err(e) => panic!("try_write failed: {e}"),
        }
        assert!(written - first < 1000, "try_write was never refused");
    }
}

/// A full memtable is switched by the `try_write` that finds it so, unless the last one is
/// still being flushed: then that write is refused, having written nothing, and the waiting
/// `write_opt` does it once the flush is done.
#[test]
fn try_write_switches_a_full_memtable_unless_a_flush_is_pending() {
    // The flush's table file cannot be created while `hold` is set; logs created are counted.
    let hold = Arc::new(AtomicBool::new(true));
    let logs = Arc::new(AtomicUsize::new(0));
    let env = {
        let (hold, logs) = (Arc::clone(&hold), Arc::clone(&logs));
        HookEnv::new(Arc::new(MemEnv::new()), move |call| {
            let extension = call.path.extension().and_then(|e| e.to_str());
            if call.op == EnvOp::NewWritableFile {
                match extension {
                    Some("log") => {
                        logs.fetch_add(1, Ordering::SeqCst);
                    }
                    Some("ldb") => {
                        while hold.load(Ordering::SeqCst) {
                            thread::sleep(std::time::Duration::from_millis(1));
                        }
                    }
                    _ => {}
                }
            }
            Ok(())
        })
    };
    let options = Options {
        write_buffer_size: 64 << 10,
        ..support::options(&env)
    };
    let db = DB::open("/db", options).unwrap();
    let logs_at_open = logs.load(Ordering::SeqCst);
    let value = [b'v'; 1000];
    // The first memtable fills and a try_write switches it (a new log); the second fills while
    // the first cannot be flushed.
    let (refused, written) = try_write_until_refused(&db, 0, &value);
    assert!(refused.contains("flushed"), "{refused}");
    assert_eq!(logs.load(Ordering::SeqCst), logs_at_open + 1);
    assert!(
        written > 100,
        "only {written} writes before the second memtable was full"
    );
    // The refused write left nothing behind; the waiting write does it once the flush is.
    assert_eq!(db.get(&key(written)).unwrap(), None);
    hold.store(false, Ordering::SeqCst);
    db.write_opt(&WriteOptions::default(), &put(&key(written), &value))
        .unwrap();
    assert_eq!(db.get(&key(written)).unwrap().as_deref(), Some(&value[..]));
    assert_eq!(logs.load(Ordering::SeqCst), logs_at_open + 2);
    // With no flush held back, try_write goes on switching full memtables itself.
    let more = 300;
    for i in 0..more {
        let k = key(written + 1 + i);
        let mut refusals = 0;
        while let Err(e) = db.try_write(&WriteOptions::default(), &put(&k, &value)) {
            // Refused: busy a moment, or a full memtable whose predecessor is being flushed.
            assert!(matches!(e, Error::WouldBlock(_)), "try_write failed: {e}");
            assert_eq!(db.get(&k).unwrap(), None);
            refusals += 1;
            assert!(refusals < 1_000_000, "try_write refused for ever: {e}");
            thread::yield_now();
        }
    }
    assert!(logs.load(Ordering::SeqCst) >= logs_at_open + 4);
    for i in 0..=more {
        assert!(db.get(&key(written + i)).unwrap().is_some());
    }
    // A sync write waits for the disk.
    assert!(would_block(
        db.try_write(&WriteOptions { sync: true }, &put(b"synced", b"x"))
    ));
    assert_eq!(db.get(b"synced").unwrap(), None);
}

/// An open returns once its background threads have started and found nothing to do, so the
/// first write after it is not refused for a state they hold meanwhile (it was, now and then:
/// in the Node binding's tests on a busy machine, the first `put` after an open was a task).
#[test]
fn the_first_try_write_after_an_open_is_not_refused() {
    for round in 0..200 {
        let env = Arc::new(MemEnv::new());
        let options = Options {
            max_background_jobs: 2,
            ..support::options(&env)
        };
        let db = DB::open("/db", options).unwrap();
        let first = db.try_write(&WriteOptions::default(), &put(b"first", b"write"));
        assert!(first.is_ok(), "open {round}: {first:?}");
    }
}

#[test]
fn try_write_does_not_wait_for_another_writer() {
    // The log append of the write made while `hold` is set waits at the barrier, twice: once
    // when it has started (the writer then leads its group), once to be let go.
    let hold = Arc::new(AtomicBool::new(false));
    let barrier = Arc::new(Barrier::new(2));
    let env = {
        let (hold, barrier) = (Arc::clone(&hold), Arc::clone(&barrier));
        HookEnv::new(Arc::new(MemEnv::new()), move |call| {
            let is_log = call.path.extension().is_some_and(|e| e == "log");
            if call.op == EnvOp::Append && is_log && hold.swap(false, Ordering::SeqCst) {
                barrier.wait();
                barrier.wait();
            }
            Ok(())
        })
    };
    let db = Arc::new(DB::open("/db", support::options(&env)).unwrap());
    hold.store(true, Ordering::SeqCst);
    let writer = {
        let db = Arc::clone(&db);
        thread::spawn(move || db.put(b"slow", b"write").unwrap())
    };
    barrier.wait();
    let refused = db.try_write(&WriteOptions::default(), &put(b"quick", b"write"));
    assert!(would_block(refused));
    barrier.wait();
    writer.join().unwrap();
    assert_eq!(db.get(b"quick").unwrap(), None);
    support::try_write_past_busy(&db, &put(b"quick", b"write")).unwrap();
    assert_eq!(db.get(b"slow").unwrap().as_deref(), Some(&b"write"[..]));
    assert_eq!(db.get(b"quick").unwrap().as_deref(), Some(&b"write"[..]));
}

#[test]
fn memory_only_reads_answer_from_memory_or_would_block() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        create_if_missing: true,
        env: Arc::new(PosixEnv::new()),
        ..Options::default()
    };
    let db = DB::open(dir.path(), options.clone()).unwrap();
    for i in 0..2000 {
        db.put(&key(i), &[b'v'; 100]).unwrap();
    }
    db.compact_range(None, None).unwrap();
    drop(db);
    // Reopened: the tables are not open, so no lookup in them can be done from memory.
    let db = DB::open(dir.path(), options).unwrap();
    db.put(b"in the memtable", b"yes").unwrap();
    assert_eq!(
        db.get_opt(&support::memory_only(), b"in the memtable")
            .unwrap()
            .as_deref(),
        Some(&b"yes"[..])
    );
    assert!(would_block(db.get_opt(&support::memory_only(), &key(7))));
    assert!(would_block(
        db.contains_opt(&support::memory_only(), &key(7))
    ));
    let batch: Vec<Vec<u8>> = (0..100).map(key).collect();
    assert!(would_block(
        db.get_many_opt(&support::memory_only(), &batch)
    ));
    let mut it = db.iter_opt(&support::memory_only());
    it.seek_to_first();
    assert!(would_block(it.status()));
    drop(it);
    // A read that may wait opens the table and caches the block; then the same key, and any
    // other whose block the OS holds (the table was just written), come from memory.
    assert!(db.get(&key(7)).unwrap().is_some());
    assert_eq!(
        db.get_opt(&support::memory_only(), &key(7))
            .unwrap()
            .as_deref(),
        Some(&[b'v'; 100][..])
    );
    let uncached = ReadOptions {
        fill_cache: false,
        ..support::memory_only()
    };
    assert!(db.get_opt(&uncached, &key(1900)).unwrap().is_some());
    assert_eq!(
        db.get_opt(&support::memory_only(), b"missing").unwrap(),
        None
    );
    let found = db.get_many_opt(&support::memory_only(), &batch).unwrap();
    assert!(found.iter().all(Option::is_some));
    let mut it = db.iter_opt(&support::memory_only());
    it.seek_to_first();
    let mut seen = 0;
    while it.valid() {
        seen += 1;
        it.next();
    }
    it.status().unwrap();
    assert_eq!(seen, 2001);
}

#[test]
fn values_in_value_files_are_never_read_without_waiting() {
    let env = Arc::new(MemEnv::new());
    let options = Options {
        value_separation: Some(ValueSeparation::new(256)),
        ..support::options(&env)
    };
    let db = DB::open("/db", options).unwrap();
    db.put(b"small", b"inline").unwrap();
    db.put(b"large", &[b'L'; 4096]).unwrap();
    assert_eq!(
        db.get_opt(&support::memory_only(), b"small")
            .unwrap()
            .as_deref(),
        Some(&b"inline"[..])
    );
    assert!(would_block(db.get_opt(&support::memory_only(), b"large")));
    assert!(would_block(db.get_many_opt(
        &support::memory_only(),
        &[&b"small"[..], &b"large"[..]]
    )));
    // Its length is in the tree.
    assert_eq!(
        db.head_opt(&support::memory_only(), b"large").unwrap(),
        Some(4096)
    );
    let mut it = db.iter_opt(&support::memory_only());
    it.seek_to_first();
    assert!(would_block(it.status()));
    drop(it);
    // Writes go to a value file first.
    assert!(would_block(
        db.try_write(&WriteOptions::default(), &put(b"k", b"v"))
    ));
    assert_eq!(db.get(b"k").unwrap(), None);
}
