//! Memtables keep a bloom filter of their user keys (`memtable/key_filter.rs`), and a point
//! read of a key the filter rules out skips the memtable. A key the filter misses by mistake
//! would read as absent, or as the older value a table below holds. So: while writers fill
//! memtables that switch every few hundred writes, every point read — `get`, `get_with`,
//! `contains`, `head`, `get_many`, `contains_many`, a read at a snapshot, a `memory_only`
//! read — finds every key whose put returned before it began, with its value, and none whose
//! delete did; the puts are plain, expiring and separated values, so every kind of memtable
//! entry is added. A read-only handle following the writer's logs finds every key written
//! before its refresh, also while another thread reads it during the next refresh (which adds
//! to the memtable that thread reads).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use strata::{Error, MemEnv, Options, ReadOptions, ValueSeparation, WriteBatch, DB};

const WRITERS: u64 = 2;
const STEPS: u64 = 8_000;
/// Step `i` deletes the key step `i - DELETE_LAG` put, when that one's index is a multiple of
/// four.
const DELETE_LAG: u64 = 40;

fn key(writer: u64, i: u64) -> Vec<u8> {
    format!("w{writer}-{i:08}").into_bytes()
}

/// Every third value is long enough to be separated; the others stay in the tree.
fn value(writer: u64, i: u64) -> Vec<u8> {
    let len = if i % 3 == 0 { 300 } else { 40 };
    let mut v = format!("v{writer}-{i}-").into_bytes();
    v.resize(len, b'.');
    v
}

fn deleted_at_some_point(i: u64) -> bool {
    i % 4 == 0
}

/// What a read begun after `acknowledged` steps of a writer must find for its key `i`:
/// `Some(true)` its value, `Some(false)` nothing, `None` either (a delete in flight).
fn expected(i: u64, acknowledged: u64) -> Option<bool> {
    if i >= acknowledged {
        return None;
    }
    if !deleted_at_some_point(i) {
        return Some(true);
    }
    // The delete of `i` is step `i + DELETE_LAG`.
    if i + DELETE_LAG < acknowledged {
        Some(false)
    } else {
        None
    }
}

/// One writer's steps: a put (plain, expiring if `expiring`, separated by its size if the
/// database separates values) of a new key, then maybe the delete of an older one, each
/// acknowledged before the next.
fn write_steps(db: &DB, w: u64, acknowledged: &AtomicU64, expiring: bool) {
    for i in 0..STEPS {
        if expiring && i % 7 == 0 {
            db.put_with_ttl(&key(w, i), &value(w, i), Duration::from_secs(3600))
                .unwrap();
        } else if i % 11 == 0 {
            let mut batch = WriteBatch::new();
            batch.put(&key(w, i), &value(w, i));
            db.write(&batch).unwrap();
        } else {
            db.put(&key(w, i), &value(w, i)).unwrap();
        }
        if i >= DELETE_LAG && deleted_at_some_point(i - DELETE_LAG) {
            db.delete(&key(w, i - DELETE_LAG)).unwrap();
        }
        acknowledged.store(i + 1, Ordering::Release);
    }
}

/// A xorshift step, for the readers' picks.
fn next(rng: &mut u64) -> u64 {
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    *rng
}

/// The keys a reader checks after `acknowledged` steps: the newest ones (in the newest
/// memtable, where a missed filter add shows) and some older ones at random.
fn picks(acknowledged: u64, rng: &mut u64) -> Vec<u64> {
    let mut picked: Vec<u64> = (acknowledged.saturating_sub(12)..acknowledged).collect();
    if acknowledged > 0 {
        picked.extend((0..6).map(|_| next(rng) % acknowledged));
    }
    picked
}

fn check(what: &str, key: &[u8], want: Option<bool>, found: Option<&[u8]>, value: &[u8]) {
    match (want, found) {
        (None, None) => {}
        (None | Some(true), Some(found)) => assert_eq!(
            found,
            value,
            "{what} of {} read another value",
            key.escape_ascii()
        ),
        (Some(true), None) => panic!(
            "{what} of {} found nothing after its put was acknowledged",
            key.escape_ascii()
        ),
        (Some(false), Some(_)) => panic!(
            "{what} of {} found a value after its delete was acknowledged",
            key.escape_ascii()
        ),
        (Some(false), None) => {}
    }
}

/// Every point read of the keys `picks` chose, against what must be found.
fn check_point_reads(db: &DB, w: u64, acknowledged: u64, rng: &mut u64) {
    let picked = picks(acknowledged, rng);
    let keys: Vec<Vec<u8>> = picked.iter().map(|&i| key(w, i)).collect();
    let snapshot = db.snapshot();
    let at_snapshot = ReadOptions {
        snapshot: Some(snapshot),
        ..ReadOptions::default()
    };
    let memory_only = ReadOptions {
        memory_only: true,
        ..ReadOptions::default()
    };
    let many = db.get_many(&keys).unwrap();
    let many_at_snapshot = db.get_many_opt(&at_snapshot, &keys).unwrap();
    let present = db.contains_many(&keys).unwrap();
    for (n, (&i, k)) in picked.iter().zip(&keys).enumerate() {
        let want = expected(i, acknowledged);
        let v = value(w, i);
        check("get", k, want, db.get(k).unwrap().as_deref(), &v);
        check("get_many", k, want, many[n].as_deref(), &v);
        let lent = db.get_with(&ReadOptions::default(), k, <[u8]>::to_vec);
        check("get_with", k, want, lent.unwrap().as_deref(), &v);
        check(
            "get at a snapshot",
            k,
            want,
            db.get_opt(&at_snapshot, k).unwrap().as_deref(),
            &v,
        );
        check(
            "get_many at a snapshot",
            k,
            want,
            many_at_snapshot[n].as_deref(),
            &v,
        );
        // A memory-only read may refuse to wait, never answer "absent" wrongly.
        match db.get_opt(&memory_only, k) {
            Ok(found) => check("memory-only get", k, want, found.as_deref(), &v),
            Err(Error::WouldBlock(_)) => {}
            Err(e) => panic!("memory-only get: {e}"),
        }
        let length = db.head(k).unwrap();
        let contains = db.contains(k).unwrap();
        match want {
            Some(true) => {
                assert_eq!(length, Some(v.len() as u64), "head of {i}");
                assert!(contains && present[n], "contains of {i}");
            }
            Some(false) => {
                assert_eq!(length, None, "head of {i}");
                assert!(!contains && !present[n], "contains of {i}");
            }
            None => {}
        }
    }
}

#[test]
fn concurrent_point_reads_find_every_acknowledged_key_while_memtables_switch() {
    let env = Arc::new(MemEnv::new());
    let options = Options {
        write_buffer_size: 64 << 10,
        expiring_keys: true,
        value_separation: Some(ValueSeparation::new(256)),
        ..support::options(&env)
    };
    let db = Arc::new(DB::open("/db", options).unwrap());
    let acknowledged: Arc<Vec<AtomicU64>> =
        Arc::new((0..WRITERS).map(|_| AtomicU64::new(0)).collect());
    let done = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..2u64)
        .map(|r| {
            let db = Arc::clone(&db);
            let acknowledged = Arc::clone(&acknowledged);
            let done = Arc::clone(&done);
            thread::spawn(move || {
                let mut rng = 0x9e37_79b9_7f4a_7c15 ^ (r + 1);
                let mut rounds = 0u64;
                while !done.load(Ordering::Acquire) || rounds < 2 {
                    for w in 0..WRITERS {
                        let n = acknowledged[w as usize].load(Ordering::Acquire);
                        check_point_reads(&db, w, n, &mut rng);
                    }
                    rounds += 1;
                }
                rounds
            })
        })
        .collect();
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let db = Arc::clone(&db);
            let acknowledged = Arc::clone(&acknowledged);
            thread::spawn(move || write_steps(&db, w, &acknowledged[w as usize], true))
        })
        .collect();
    for writer in writers {
        writer.join().unwrap();
    }
    done.store(true, Ordering::Release);
    for reader in readers {
        assert!(reader.join().unwrap() > 0);
    }
    // Memtables switched under the readers, and the last one still holds keys.
    assert!(
        !support::state::live_tables(&db).is_empty(),
        "no memtable was flushed"
    );
    let mut rng = 7;
    for w in 0..WRITERS {
        check_point_reads(&db, w, STEPS, &mut rng);
    }
}

#[test]
fn a_read_only_handle_finds_every_key_written_before_its_refresh_while_it_refreshes() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        write_buffer_size: 64 << 10,
        create_if_missing: true,
        ..Options::default()
    };
    let writer = Arc::new(DB::open(dir.path(), options.clone()).unwrap());
    let handle = Arc::new(
        DB::open_read_only(
            dir.path(),
            Options {
                create_if_missing: false,
                ..options
            },
        )
        .unwrap(),
    );
    let acknowledged = Arc::new(AtomicU64::new(0));
    // Steps acknowledged before a refresh that has returned began.
    let refreshed = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let write = {
        let writer = Arc::clone(&writer);
        let acknowledged = Arc::clone(&acknowledged);
        // Plain puts: this database has no expiring keys (a refreshed handle's expiring puts
        // and range deletions: `regressions/refresh_forgot_recorded_extensions.rs`).
        thread::spawn(move || write_steps(&writer, 0, &acknowledged, false))
    };
    // Reads the handle while the main thread refreshes it (the refresh adds to the memtable
    // this thread reads).
    let reader = {
        let handle = Arc::clone(&handle);
        let refreshed = Arc::clone(&refreshed);
        let done = Arc::clone(&done);
        thread::spawn(move || {
            let mut rng = 3;
            let mut rounds = 0u64;
            while !done.load(Ordering::Acquire) {
                let n = refreshed.load(Ordering::Acquire);
                check_read_only(&handle, n, &mut rng);
                rounds += 1;
            }
            rounds
        })
    };
    let mut rng = 5;
    loop {
        let finished = write.is_finished();
        let n = acknowledged.load(Ordering::Acquire);
        handle.refresh().unwrap();
        refreshed.store(n, Ordering::Release);
        check_read_only(&handle, n, &mut rng);
        if finished {
            break;
        }
    }
    write.join().unwrap();
    done.store(true, Ordering::Release);
    assert!(reader.join().unwrap() > 0);
    assert_eq!(refreshed.load(Ordering::Acquire), STEPS);
}

/// [`check_point_reads`] for a read-only handle (no value separation there: every value is
/// in the tree).
fn check_read_only(handle: &DB, acknowledged: u64, rng: &mut u64) {
    let picked = picks(acknowledged, rng);
    let keys: Vec<Vec<u8>> = picked.iter().map(|&i| key(0, i)).collect();
    let many = handle.get_many(&keys).unwrap();
    let at_snapshot = ReadOptions {
        snapshot: Some(handle.snapshot()),
        ..ReadOptions::default()
    };
    for (n, (&i, k)) in picked.iter().zip(&keys).enumerate() {
        let want = expected(i, acknowledged);
        let v = value(0, i);
        check(
            "read-only get",
            k,
            want,
            handle.get(k).unwrap().as_deref(),
            &v,
        );
        check("read-only get_many", k, want, many[n].as_deref(), &v);
        check(
            "read-only get at a snapshot",
            k,
            want,
            handle.get_opt(&at_snapshot, k).unwrap().as_deref(),
            &v,
        );
    }
}
