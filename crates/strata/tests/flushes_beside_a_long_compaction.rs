//! With `max_background_jobs` of 2 or more, memtables are flushed on a thread of their own: a
//! flush never waits for a compaction, however long it takes. Here a compaction is held at its
//! first output write while a writer fills memtable after memtable; it goes on, each memtable
//! flushed meanwhile, and once the compaction is let go, it finishes and everything reads
//! back, before and after a reopen.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use strata::testing::{EnvOp, HookEnv};
use strata::{MemEnv, Options, ReadOptions, DB};
use support::files::info_log;
use support::state::{files_at_level, scan, Model};

const DIR: &str = "/flush-beside-compaction";

/// Writes keys `0..count` of `round`, each with a value naming it.
fn put_round(db: &DB, model: &mut Model, round: u32, count: u32) {
    for i in 0..count {
        let key = format!("key{i:05}").into_bytes();
        let value = format!("round {round} key {i} {}", "v".repeat(150)).into_bytes();
        db.put(&key, &value).unwrap();
        model.insert(key, value);
    }
}

/// Whether the calling thread is one of the compaction's (its own or a sub-range's).
fn on_a_compaction_thread() -> bool {
    let name = std::thread::current().name().map(str::to_owned);
    name.is_some_and(|n| n.starts_with("strata-bg-compact") || n == "strata-bg-sub")
}

/// How many memtables the database has flushed, by its info log.
fn flushes(env: &HookEnv) -> usize {
    info_log(env, Path::new(DIR))
        .lines()
        .filter(|line| line.contains("level-0 table #") && line.ends_with(" bytes"))
        .count()
}

#[test]
fn memtables_are_flushed_while_a_compaction_is_held() {
    // Holds the first table append on a compaction thread after `armed`, until released.
    let armed = Arc::new(AtomicBool::new(false));
    let (held_tx, held_rx) = mpsc::channel::<()>();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let hold = Mutex::new(Some((held_tx, release_rx)));
    let hook_armed = Arc::clone(&armed);
    let env = HookEnv::new(Arc::new(MemEnv::new()), move |call| {
        let table = call.path.extension().is_some_and(|e| e == "ldb");
        if call.op == EnvOp::Append
            && table
            && on_a_compaction_thread()
            && hook_armed.swap(false, Ordering::AcqRel)
        {
            let (held, release) = hold.lock().unwrap().take().unwrap();
            held.send(()).unwrap();
            release.recv().unwrap();
        }
        Ok(())
    });
    let options = Options {
        write_buffer_size: 64 << 10,
        max_background_jobs: 2,
        ..support::options(&env)
    };
    let db = Arc::new(DB::open(DIR, options).unwrap());
    let mut model = Model::new();

    // Overwrite the same keys until level 0 reaches its trigger and a compaction starts, to
    // stop at its first output write.
    armed.store(true, Ordering::Release);
    let mut round = 0;
    while held_rx.try_recv().is_err() {
        assert!(round < 40, "no compaction started");
        put_round(&db, &mut model, round, 400);
        round += 1;
    }
    let flushed_before = flushes(&env);

    // Three more memtables' worth, on another thread: each memtable switch needs the
    // previous memtable flushed.
    let writer = {
        let db = Arc::clone(&db);
        let mut model = model.clone();
        std::thread::spawn(move || {
            for round in round..round + 3 {
                put_round(&db, &mut model, round, 400);
            }
            model
        })
    };
    support::trials::wait_until(
        "the writes, with the compaction held",
        Duration::from_secs(60),
        || writer.is_finished(),
    );
    model = writer.join().unwrap();
    assert!(
        flushes(&env) >= flushed_before + 2,
        "memtables were not flushed while the compaction was held:\n{}",
        info_log(&env, Path::new(DIR))
    );
    assert_eq!(scan(&db, &ReadOptions::default()).unwrap(), model);

    release_tx.send(()).unwrap();
    support::trials::wait_until("level 0 compacted", Duration::from_secs(60), || {
        files_at_level(&db, 0) < 4
    });
    assert_eq!(scan(&db, &ReadOptions::default()).unwrap(), model);
    drop(db);
    let db = DB::open(DIR, support::options(&env)).unwrap();
    assert_eq!(scan(&db, &ReadOptions::default()).unwrap(), model);
}
