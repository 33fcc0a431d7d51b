//! Reads take no lock (`db/published.rs`): the view and the sequence number they read at are
//! loaded apart from each other while writers switch memtables and the worker flushes and
//! compacts. Still, a write is visible to every read that starts after it was acknowledged —
//! on the writing thread and on any thread that learnt of it — and what a reader has seen
//! never goes back to an older value.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;

use strata::{MemEnv, Options, DB};

const WRITERS: u64 = 3;
const WRITES: u64 = 4_000;

fn counter_key(writer: u64) -> Vec<u8> {
    format!("counter-{writer}").into_bytes()
}

/// A value of some bulk, so memtables fill and switch every few hundred writes.
fn counter_value(n: u64) -> Vec<u8> {
    let mut value = n.to_be_bytes().to_vec();
    value.resize(200, b'.');
    value
}

fn counter_of(value: &[u8]) -> u64 {
    u64::from_be_bytes(value[..8].try_into().unwrap())
}

#[test]
fn a_read_after_an_acknowledged_write_sees_it_and_readers_never_go_back() {
    let env = Arc::new(MemEnv::new());
    let options = Options {
        write_buffer_size: 32 << 10,
        ..support::options(&env)
    };
    let db = Arc::new(DB::open("/db", options).unwrap());
    // What each writer has had acknowledged so far, for the readers to check against.
    let acknowledged: Arc<Vec<AtomicU64>> =
        Arc::new((0..WRITERS).map(|_| AtomicU64::new(0)).collect());
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let db = Arc::clone(&db);
            let acknowledged = Arc::clone(&acknowledged);
            thread::spawn(move || {
                for n in 1..=WRITES {
                    db.put(&counter_key(w), &counter_value(n)).unwrap();
                    // Its own write, at once.
                    let read = db.get(&counter_key(w)).unwrap().expect("own write missing");
                    assert_eq!(counter_of(&read), n, "writer {w} read back an older value");
                    acknowledged[w as usize].store(n, Ordering::Release);
                }
            })
        })
        .collect();
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
                        let found = db
                            .get(&counter_key(w))
                            .unwrap()
                            .map_or(0, |v| counter_of(&v));
                        assert!(
                            found >= at_least,
                            "writer {w}: read {found} after write {at_least} was acknowledged"
                        );
                        assert!(
                            found >= seen[w as usize],
                            "writer {w}: read {found} after having read {}",
                            seen[w as usize]
                        );
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
    // The memtable switched many times under the readers (so views were replaced).
    let tables: u64 = (0..7)
        .map(|level| {
            db.property(&format!("leveldb.num-files-at-level{level}"))
                .unwrap()
                .parse::<u64>()
                .unwrap()
        })
        .sum();
    assert!(tables > 0, "no memtable was ever flushed");
}
