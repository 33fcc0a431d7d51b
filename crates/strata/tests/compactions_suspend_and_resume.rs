//! `DB::suspend_compactions` stops compactions (memtables are still flushed, so level 0 fills
//! up) until `resume_compactions`, which lets them catch up; suspensions nest.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::sync::Arc;
use std::time::Duration;

use strata::{MemEnv, Options, DB};
use support::state::files_at_level as files_at;

/// Files below level 0.
fn deeper_files(db: &DB) -> usize {
    (1..7).map(|l| files_at(db, l)).sum()
}

/// Checks that nothing is compacted for a while: level 0 only grows (a flush may still be
/// adding to it) and the levels below stay as they are.
fn assert_no_compaction(db: &DB) {
    let (level0, deeper) = (files_at(db, 0), deeper_files(db));
    std::thread::sleep(Duration::from_millis(150));
    assert!(files_at(db, 0) >= level0, "level 0 was compacted");
    assert_eq!(deeper_files(db), deeper, "a level below 0 changed");
}

/// Writes `rounds` memtables' worth of the same key range, so each flush after the first lands
/// in level 0.
fn fill(db: &DB, rounds: u32) {
    for round in 0..rounds {
        for i in 0..600u32 {
            db.put(format!("k{i:05}").as_bytes(), &[b'a' + round as u8; 100])
                .unwrap();
        }
    }
}

fn wait_until(what: &str, done: impl FnMut() -> bool) {
    support::trials::wait_until(what, Duration::from_secs(30), done);
}

fn open() -> DB {
    let options = Options {
        write_buffer_size: 64 << 10,
        ..support::options(&Arc::new(MemEnv::new()))
    };
    DB::open("/db", options).unwrap()
}

#[test]
fn level_zero_fills_while_suspended_and_compacts_after_resume() {
    let db = open();
    db.suspend_compactions();
    db.suspend_compactions();
    fill(&db, 7);
    // Past the level-0 trigger (4), yet nothing moves down.
    wait_until("five level-0 tables are flushed", || files_at(&db, 0) >= 5);
    assert_no_compaction(&db);

    db.resume_compactions();
    assert_no_compaction(&db); // one resume of two keeps compactions off

    db.resume_compactions();
    wait_until("level 0 is compacted", || files_at(&db, 0) < 4);
    assert!(files_at(&db, 1) > 0);
    for i in 0..600u32 {
        let value = db.get(format!("k{i:05}").as_bytes()).unwrap().unwrap();
        assert_eq!(value, vec![b'a' + 6; 100]);
    }
}

#[test]
fn compact_range_waits_for_the_resume() {
    let db = Arc::new(open());
    fill(&db, 2);
    db.suspend_compactions();
    let compacting = {
        let db = Arc::clone(&db);
        std::thread::spawn(move || db.compact_range(None, None))
    };
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        !compacting.is_finished(),
        "compact_range ran while suspended"
    );
    db.resume_compactions();
    compacting.join().unwrap().unwrap();
    assert_eq!(files_at(&db, 0), 0);
}

#[test]
fn a_resume_without_a_suspension_does_nothing() {
    let db = open();
    db.resume_compactions();
    db.suspend_compactions();
    fill(&db, 7);
    wait_until("five level-0 tables are flushed", || files_at(&db, 0) >= 5);
    assert_no_compaction(&db);
    db.resume_compactions();
    wait_until("level 0 is compacted", || files_at(&db, 0) < 4);
}
