//! With `max_background_jobs` of 2 or more, memtables are flushed on a thread of their own: a
//! flush never waits for a compaction, however long it takes. Here a compaction is held at its
//! first output write while a writer fills memtable after memtable; it goes on, each memtable
//! flushed meanwhile, and once the compaction is let go, it finishes and everything reads
//! back, before and after a reopen.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use strata::testing::HookEnv;
use strata::{MemEnv, Options, ReadOptions, DB};
use support::files::info_log;
use support::hold::{on_a_compaction_thread, Hold};
use support::state::{
    files_at_level, scan, write_until_level0_compacts, Model, L0_COMPACTION_TRIGGER,
    L0_STOP_WRITES_TRIGGER,
};

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

/// How many memtables the database has flushed, by its info log.
fn flushes(env: &HookEnv) -> usize {
    info_log(env, Path::new(DIR))
        .lines()
        .filter(|line| line.contains("level-0 table #") && line.ends_with(" bytes"))
        .count()
}

#[test]
fn memtables_are_flushed_while_a_compaction_is_held() {
    let hold = Hold::new(Arc::new(MemEnv::new()), on_a_compaction_thread);
    let env = hold.env().clone();
    let options = Options {
        write_buffer_size: 64 << 10,
        max_background_jobs: 2,
        ..support::options(&env)
    };
    let db = Arc::new(DB::open(DIR, options).unwrap());
    let mut model = Model::new();

    // Overwrite the same keys until level 0 reaches its trigger, then wait for the compaction
    // to stop at its first output write.
    hold.arm();
    let round = write_until_level0_compacts(&db, |round| put_round(&db, &mut model, round, 400));
    assert!(
        hold.wait_held(Duration::from_secs(60)),
        "no compaction started"
    );
    // The held compaction removes no level-0 table, and at the stop trigger a write would wait
    // for it for good: the three rounds below (about 1.2 memtables each) and a memtable maybe
    // waiting to be flushed now add at most five.
    let level0 = files_at_level(&db, 0);
    assert!(
        level0 + 5 < L0_STOP_WRITES_TRIGGER,
        "{level0} level-0 tables once the compaction is held"
    );
    let flushed_before = flushes(&env);

    // Three more rounds, on another thread: each memtable switch needs the previous memtable
    // flushed.
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

    hold.release();
    support::trials::wait_until("level 0 compacted", Duration::from_secs(60), || {
        files_at_level(&db, 0) < L0_COMPACTION_TRIGGER
    });
    assert_eq!(scan(&db, &ReadOptions::default()).unwrap(), model);
    drop(db);
    let db = DB::open(DIR, support::options(&env)).unwrap();
    assert_eq!(scan(&db, &ReadOptions::default()).unwrap(), model);
}
