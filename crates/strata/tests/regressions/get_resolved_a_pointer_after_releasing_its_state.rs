//! `DB::get` (and `get` at a snapshot) resolved a value pointer after releasing the state it
//! found the pointer in: `point_read` returned the pointer and dropped its super version, and
//! only then did `get` read the value file. In between, garbage collection could relocate the
//! value, install the rewritten table and delete the value file — nothing held the old state
//! any more — so the read failed with "value file is missing" although the key had its value
//! all along. Now a point read resolves its pointer while it still holds its state (review of
//! issue 14, branch `review-vsep`).

use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use strata::testing::{EnvOp, HookEnv};
use strata::{Env, MemEnv, Options, ValueSeparation, DB};

use crate::support;

const DIR: &str = "/db";

fn key(i: u32) -> Vec<u8> {
    format!("key{i:04}").into_bytes()
}

fn value(i: u32, version: u32) -> Vec<u8> {
    format!("<{i}:{version}>")
        .bytes()
        .cycle()
        .take(4096)
        .collect()
}

/// Whether the first value file (the one holding key 0's original value) is still there.
fn first_value_file_present(env: &dyn Env, first: &Path) -> bool {
    env.file_exists(first)
}

#[derive(Default)]
struct Gate {
    /// Whether the reader is held at its value-file open.
    held: bool,
    /// Whether it may go on.
    released: bool,
}

#[test]
fn a_get_whose_value_was_relocated_meanwhile_still_reads_it() {
    let mem: Arc<dyn Env> = Arc::new(MemEnv::new());
    let gate = Arc::new((Mutex::new(Gate::default()), Condvar::new()));
    let hook_gate = Arc::clone(&gate);
    // The thread named "reader" is held when it opens a value file.
    let env = HookEnv::new(Arc::clone(&mem), move |call| {
        let is_reader = std::thread::current().name() == Some("reader");
        if is_reader
            && call.op == EnvOp::NewRandomAccessFile
            && call.path.extension().is_some_and(|e| e == "vlog")
        {
            let (lock, wake) = &*hook_gate;
            let mut gate = lock.lock().unwrap();
            gate.held = true;
            wake.notify_all();
            let deadline = Instant::now() + Duration::from_secs(30);
            while !gate.released && Instant::now() < deadline {
                gate = wake
                    .wait_timeout(gate, Duration::from_millis(50))
                    .unwrap()
                    .0;
            }
        }
        Ok(())
    });
    let options = Options {
        value_separation: Some(ValueSeparation::new(256)),
        ..support::options(&env)
    };
    let db = Arc::new(DB::open(DIR, options).unwrap());
    for i in 0..200 {
        db.put(&key(i), &value(i, 0)).unwrap();
    }
    db.compact_range(None, None).unwrap();
    let first = support::files::numbered_files(&*mem, Path::new(DIR), ".vlog")
        .first()
        .map(|number| Path::new(DIR).join(format!("{number:06}.vlog")))
        .expect("a value file");

    // The reader finds key 0's pointer into the first value file and is held before it
    // opens that file.
    let reader = {
        let db = Arc::clone(&db);
        std::thread::Builder::new()
            .name("reader".into())
            .spawn(move || db.get(&key(0)))
            .unwrap()
    };
    {
        let (lock, wake) = &*gate;
        let mut held = lock.lock().unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while !held.held {
            assert!(
                Instant::now() < deadline,
                "the reader never opened a value file"
            );
            held = wake
                .wait_timeout(held, Duration::from_millis(50))
                .unwrap()
                .0;
        }
    }
    // Meanwhile every other key is overwritten: the first file is almost all garbage, and
    // collection relocates key 0's value out of it.
    for round in 1..3 {
        for i in 1..200 {
            db.put(&key(i), &value(i, round)).unwrap();
        }
        db.compact_range(None, None).unwrap();
    }
    // Give collection its time: the file goes as soon as nothing reaches it.
    let deadline = Instant::now() + Duration::from_secs(3);
    while first_value_file_present(&*mem, &first) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    {
        let (lock, wake) = &*gate;
        lock.lock().unwrap().released = true;
        wake.notify_all();
    }
    let read = reader.join().unwrap();
    assert_eq!(
        read.expect("the read in flight failed"),
        Some(value(0, 0)),
        "the read in flight"
    );
    // Once the reader is done the first file is collected (a write notices the release).
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut round = 3;
    while first_value_file_present(&*mem, &first) {
        assert!(
            Instant::now() < deadline,
            "{} never deleted after the reader finished",
            first.display()
        );
        for i in 1..200 {
            db.put(&key(i), &value(i, round)).unwrap();
        }
        round += 1;
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(db.get(&key(0)).unwrap(), Some(value(0, 0)));
}
