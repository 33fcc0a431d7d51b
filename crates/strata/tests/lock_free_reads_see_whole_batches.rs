//! Reads without a lock (`db/published.rs`) load the view and the sequence number apart from
//! each other, while writers switch memtables, the worker flushes and compacts, and a
//! read-only handle's refresh replays new log records into the memtable its readers read.
//! Whatever the interleaving, every read sees a write batch whole (`get_many`, an iterator, a
//! snapshot taken by another thread) and sees every write acknowledged before it started;
//! a read-only handle sees, after a refresh, every write acknowledged before the refresh.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;

use strata::{MemEnv, Options, ReadOptions, WriteBatch, DB};

const WRITERS: u64 = 2;
const WRITES: u64 = 8_000;

fn pair(writer: u64) -> [Vec<u8>; 2] {
    [
        format!("w{writer}-a").into_bytes(),
        format!("w{writer}-b").into_bytes(),
    ]
}

/// A batch setting both keys of `writer`'s pair to `n`, with a value of some bulk beside
/// them so memtables fill and switch every few hundred batches.
fn batch(writer: u64, n: u64) -> WriteBatch {
    let mut batch = WriteBatch::new();
    let [a, b] = pair(writer);
    batch.put(&a, &n.to_be_bytes());
    batch.put(&b, &n.to_be_bytes());
    batch.put(format!("f-{writer}-{:02}", n % 40).as_bytes(), &[b'.'; 300]);
    batch
}

fn counter(value: Option<&[u8]>) -> u64 {
    value.map_or(0, |v| u64::from_be_bytes(v.try_into().unwrap()))
}

/// Runs the writers on `db`, each storing its acknowledged count in `acknowledged`.
fn spawn_writers(db: &Arc<DB>, acknowledged: &Arc<Vec<AtomicU64>>) -> Vec<thread::JoinHandle<()>> {
    (0..WRITERS)
        .map(|w| {
            let db = Arc::clone(db);
            let acknowledged = Arc::clone(acknowledged);
            thread::spawn(move || {
                for n in 1..=WRITES {
                    db.write(&batch(w, n)).unwrap();
                    acknowledged[w as usize].store(n, Ordering::Release);
                }
            })
        })
        .collect()
}

/// Reads `writer`'s pair from `db` with `get_many`, with an iterator over the pair, and at a
/// snapshot, checking each read sees both keys at one count of at least `at_least`; returns
/// the count `get_many` saw.
fn check_pair(db: &DB, writer: u64, at_least: u64, read: &ReadOptions) -> u64 {
    let keys = pair(writer);
    let many = db.get_many_opt(read, &keys).unwrap();
    let (a, b) = (counter(many[0].as_deref()), counter(many[1].as_deref()));
    assert_eq!(a, b, "writer {writer}: get_many saw half a batch");
    assert!(
        a >= at_least,
        "writer {writer}: get_many read {a} after {at_least} was acknowledged"
    );
    let mut it = db.iter_opt(&ReadOptions {
        lower_bound: Some(format!("w{writer}-").into_bytes()),
        upper_bound: Some(format!("w{writer}.").into_bytes()),
        ..read.clone()
    });
    it.seek_to_first();
    let mut seen = Vec::new();
    while it.valid() {
        seen.push(counter(Some(it.value())));
        it.next();
    }
    it.status().unwrap();
    if a > 0 {
        assert_eq!(seen.len(), 2, "writer {writer}: the iterator saw {seen:?}");
        assert_eq!(
            seen[0], seen[1],
            "writer {writer}: an iterator saw half a batch"
        );
        assert!(seen[0] >= a, "writer {writer}: the iterator went back");
    }
    if read.snapshot.is_none() {
        let snapshot = db.snapshot();
        let at = ReadOptions {
            snapshot: Some(snapshot),
            ..ReadOptions::default()
        };
        let first = counter(db.get_opt(&at, &keys[0]).unwrap().as_deref());
        let second = counter(db.get_opt(&at, &keys[1]).unwrap().as_deref());
        assert_eq!(
            first, second,
            "writer {writer}: a snapshot saw half a batch"
        );
        assert!(first >= a, "writer {writer}: a later snapshot went back");
    }
    a
}

#[test]
fn every_lock_free_read_sees_a_batch_whole_and_every_acknowledged_write() {
    let env = Arc::new(MemEnv::new());
    let options = Options {
        write_buffer_size: 32 << 10,
        ..support::options(&env)
    };
    let db = Arc::new(DB::open("/db", options).unwrap());
    let acknowledged: Arc<Vec<AtomicU64>> =
        Arc::new((0..WRITERS).map(|_| AtomicU64::new(0)).collect());
    let writers = spawn_writers(&db, &acknowledged);
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let db = Arc::clone(&db);
            let acknowledged = Arc::clone(&acknowledged);
            thread::spawn(move || {
                let mut seen = [0u64; WRITERS as usize];
                let mut reads = 0u64;
                while seen.iter().any(|&n| n < WRITES) {
                    for w in 0..WRITERS {
                        let at_least = acknowledged[w as usize].load(Ordering::Acquire);
                        let found = check_pair(&db, w, at_least, &ReadOptions::default());
                        assert!(found >= seen[w as usize], "writer {w}: a reader went back");
                        seen[w as usize] = found;
                        reads += 1;
                    }
                }
                reads
            })
        })
        .collect();
    for writer in writers {
        writer.join().unwrap();
    }
    for reader in readers {
        assert!(reader.join().unwrap() > 0);
    }
    assert!(
        !support::state::live_tables(&db).is_empty(),
        "no memtable was ever flushed: views were not replaced under the readers"
    );
}

#[test]
fn a_read_only_handle_sees_after_a_refresh_every_write_acknowledged_before_it() {
    let env = Arc::new(MemEnv::new());
    let options = Options {
        write_buffer_size: 32 << 10,
        ..support::options(&env)
    };
    let db = Arc::new(DB::open("/db", options.clone()).unwrap());
    db.write(&batch(0, 0)).unwrap();
    let follower = Arc::new(DB::open_read_only("/db", options).unwrap());
    let acknowledged: Arc<Vec<AtomicU64>> =
        Arc::new((0..WRITERS).map(|_| AtomicU64::new(0)).collect());
    let done = Arc::new(AtomicBool::new(false));
    let writers = spawn_writers(&db, &acknowledged);
    // One thread refreshes and checks what it then reads; others read the handle meanwhile.
    let refresher = {
        let (follower, acknowledged, done) = (
            Arc::clone(&follower),
            Arc::clone(&acknowledged),
            Arc::clone(&done),
        );
        thread::spawn(move || {
            let mut refreshes = 0u64;
            while !done.load(Ordering::Acquire) {
                let before: Vec<u64> = acknowledged
                    .iter()
                    .map(|n| n.load(Ordering::Acquire))
                    .collect();
                follower.refresh().unwrap();
                for w in 0..WRITERS {
                    check_pair(&follower, w, before[w as usize], &ReadOptions::default());
                }
                refreshes += 1;
            }
            refreshes
        })
    };
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (follower, done) = (Arc::clone(&follower), Arc::clone(&done));
            thread::spawn(move || {
                let mut seen = [0u64; WRITERS as usize];
                while !done.load(Ordering::Acquire) {
                    for w in 0..WRITERS {
                        let found = check_pair(&follower, w, 0, &ReadOptions::default());
                        assert!(found >= seen[w as usize], "writer {w}: a reader went back");
                        seen[w as usize] = found;
                    }
                }
                seen
            })
        })
        .collect();
    for writer in writers {
        writer.join().unwrap();
    }
    done.store(true, Ordering::Release);
    assert!(refresher.join().unwrap() > 0);
    for reader in readers {
        reader.join().unwrap();
    }
    follower.refresh().unwrap();
    for w in 0..WRITERS {
        assert_eq!(
            check_pair(&follower, w, WRITES, &ReadOptions::default()),
            WRITES
        );
    }
}
