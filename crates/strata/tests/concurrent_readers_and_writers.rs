//! Several writer and reader threads on one database at once; afterwards every acknowledged
//! write is present, and readers never saw a value that was not written.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;

use strata::{MemEnv, Options, WriteBatch, WriteOptions, DB};

const WRITERS: usize = 4;
const PER_WRITER: usize = 6_000;

fn value_for(writer: usize, i: usize) -> Vec<u8> {
    format!("value-{writer}-{i}-{}", "x".repeat(i % 97)).into_bytes()
}

#[test]
fn concurrent_writers_lose_nothing_and_readers_see_only_written_values() {
    let env = Arc::new(MemEnv::new());
    let options = Options {
        write_buffer_size: 64 << 10,
        ..support::options(&env)
    };
    let db = Arc::new(DB::open("/concurrent", options.clone()).expect("open"));
    let stop = Arc::new(AtomicBool::new(false));

    let readers: Vec<_> = (0..2)
        .map(|r| {
            let db = Arc::clone(&db);
            let stop = Arc::clone(&stop);
            thread::spawn(move || {
                let mut checked = 0usize;
                while !stop.load(Ordering::Relaxed) {
                    for w in 0..WRITERS {
                        let i = (checked * 31 + r) % PER_WRITER;
                        let key = format!("w{w}-{i:06}");
                        if let Some(v) = db.get(key.as_bytes()).expect("get") {
                            assert_eq!(v, value_for(w, i), "reader saw a wrong value for {key}");
                        }
                        checked += 1;
                    }
                    // Iterators must always see keys in order.
                    let mut it = db.iter();
                    it.seek_to_first();
                    let mut last: Option<Vec<u8>> = None;
                    let mut n = 0;
                    while it.valid() && n < 500 {
                        if let Some(prev) = &last {
                            assert!(prev.as_slice() < it.key(), "iterator out of order");
                        }
                        last = Some(it.key().to_vec());
                        it.next();
                        n += 1;
                    }
                    it.status().expect("iterator status");
                }
                checked
            })
        })
        .collect();

    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let db = Arc::clone(&db);
            thread::spawn(move || {
                for i in 0..PER_WRITER {
                    let key = format!("w{w}-{i:06}");
                    if i % 10 == 0 {
                        let mut batch = WriteBatch::new();
                        batch.put(key.as_bytes(), &value_for(w, i));
                        batch.put(format!("batch-{w}-{i:06}").as_bytes(), b"b");
                        db.write_opt(&WriteOptions { sync: i % 500 == 0 }, &batch)
                            .expect("write");
                    } else {
                        db.put(key.as_bytes(), &value_for(w, i)).expect("put");
                    }
                }
            })
        })
        .collect();
    for w in writers {
        w.join().expect("writer thread");
    }
    stop.store(true, Ordering::Relaxed);
    let checked: usize = readers
        .into_iter()
        .map(|r| r.join().expect("reader thread"))
        .sum();
    assert!(checked > 0);

    let verify = |db: &DB| {
        for w in 0..WRITERS {
            for i in 0..PER_WRITER {
                let key = format!("w{w}-{i:06}");
                assert_eq!(
                    db.get(key.as_bytes()).expect("get"),
                    Some(value_for(w, i)),
                    "{key}"
                );
            }
        }
    };
    verify(&db);
    drop(Arc::try_unwrap(db).expect("sole owner"));
    let db = DB::open("/concurrent", options).expect("reopen");
    verify(&db);
}
