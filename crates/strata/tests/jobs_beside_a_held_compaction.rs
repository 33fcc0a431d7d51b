//! What happens to the other background jobs while one compaction is held in the middle of
//! its merge (`Options::max_background_jobs` = 2: a flush thread and two compaction threads):
//! - another compaction fails: the background error stops writes, the held compaction's edit
//!   is refused once it finishes, and a reopen reads every write back;
//! - the database is closed: the close waits for the held compaction, and a reopen reads
//!   every write back;
//! - the power fails after a compaction beside it finished (its inputs deleted) and memtables
//!   were flushed meanwhile: every synced write survives, whatever the unsynced tails became.
//!
//! Each test writes `z` keys into a table deep down, then overwrites `a` keys until level 0 is
//! compacted, holding that compaction at its first output write, then works beside it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use strata::testing::{FaultEnv, PowerLossMode};
use strata::{Env, MemEnv, Options, ReadOptions, WriteOptions, DB};
use support::files::info_log;
use support::hold::{on_a_compaction_thread, Hold};
use support::state::{files_at_level, scan, Model};
use support::trials::wait_until;

const DIR: &str = "/held";

fn options(hold: &Hold) -> Options {
    Options {
        // Level 0 must stay below its stop trigger (12 tables) while the compaction is held,
        // or a write waits for it for good: at 64 KiB the tests' writes brought it to 10.
        write_buffer_size: 128 << 10,
        max_background_jobs: 2,
        max_subcompactions: 1,
        compaction_filter: Some(Arc::new(support::KeepAll)),
        ..support::options(hold.env())
    }
}

/// Writes the `z` keys deep down, then `a` keys until level 0 asks for a compaction, and
/// waits for it to be held; returns the next round.
fn hold_a_level0_compaction(hold: &Hold, db: &DB, model: &mut Model, sync: bool) -> u32 {
    put(db, model, "z", 0, sync);
    db.compact_range(None, None).unwrap();
    assert_eq!(files_at_level(db, 2), 1);
    hold.arm();
    let mut round = 0;
    while files_at_level(db, 0) < 4 {
        assert!(round < 40, "level 0 never reached the compaction trigger");
        put(db, model, "a", round, sync);
        round += 1;
    }
    // Wait for the compaction before writing more: rounds written while a loaded machine got
    // it going brought level 0 nearer its stop trigger (a clean-clone `make test` hung once).
    wait_until(
        "a level-0 compaction to be held",
        Duration::from_secs(60),
        || hold.is_held(),
    );
    let level0 = files_at_level(db, 0);
    assert!(
        level0 <= 6,
        "{level0} level-0 tables once the compaction is held"
    );
    round
}

/// Writes 400 keys `prefix0000..` of `round`, each value naming its key and round.
fn put(db: &DB, model: &mut Model, prefix: &str, round: u32, sync: bool) {
    for i in 0..400u32 {
        let key = format!("{prefix}{i:04}").into_bytes();
        let value = format!("{prefix}{i:04} round {round} {}", "v".repeat(150)).into_bytes();
        db.put_opt(&WriteOptions { sync }, &key, &value).unwrap();
        model.insert(key, value);
    }
}

/// Reopens the database and checks it holds `model`, before and after compacting it all.
fn reopen_and_read(hold: &Hold, model: &Model, context: &str) {
    let db = DB::open(DIR, options(hold)).unwrap();
    assert_eq!(
        &scan(&db, &ReadOptions::default()).unwrap(),
        model,
        "{context}"
    );
    db.compact_range(None, None).unwrap();
    assert_eq!(
        &scan(&db, &ReadOptions::default()).unwrap(),
        model,
        "{context}"
    );
}

fn failed_compactions(env: &dyn Env) -> usize {
    info_log(env, Path::new(DIR))
        .lines()
        .filter(|line| line.contains("compaction failed"))
        .count()
}

#[test]
fn a_compaction_failing_beside_a_held_one_stops_writes_and_the_held_edit() {
    let hold = Hold::new(Arc::new(MemEnv::new()), on_a_compaction_thread);
    let db = DB::open(DIR, options(&hold)).unwrap();
    let mut model = Model::new();
    hold_a_level0_compaction(&hold, &db, &mut model, false);

    // The in-place rewrite of the `z` table runs on the other compaction thread and fails.
    hold.fail_tables(true);
    let failed = db.compact_range(Some(b"z"), Some(b"zz"));
    assert!(
        matches!(failed, Err(strata::Error::Io { .. })),
        "{failed:?}"
    );
    hold.fail_tables(false);
    let refused = db.put(b"b", b"after the error");
    assert!(
        matches!(refused, Err(strata::Error::Io { .. })),
        "{refused:?}"
    );
    // (A flush whose edit was being written when the error came may still be installed.)
    std::thread::sleep(Duration::from_millis(100));
    let level0 = files_at_level(&db, 0);
    assert!(level0 >= 4, "{level0} level-0 tables");

    // Let go, the held compaction merges and then fails with the background error instead of
    // installing its edit: level 0 keeps its tables.
    hold.release();
    wait_until("the held compaction fails", Duration::from_secs(60), || {
        failed_compactions(hold.env()) >= 2
    });
    assert_eq!(files_at_level(&db, 0), level0);
    assert_eq!(scan(&db, &ReadOptions::default()).unwrap(), model);
    drop(db);

    reopen_and_read(&hold, &model, "");
}

#[test]
fn closing_while_a_compaction_is_held_and_memtables_flush_loses_nothing() {
    let hold = Hold::new(Arc::new(MemEnv::new()), on_a_compaction_thread);
    let db = Arc::new(DB::open(DIR, options(&hold)).unwrap());
    let mut model = Model::new();
    let round = hold_a_level0_compaction(&hold, &db, &mut model, false);
    // Memtables beside it, and the `z` table rewritten in place, its input deleted.
    for round in round..round + 3 {
        put(&db, &mut model, "a", round, false);
    }
    db.compact_range(Some(b"z"), Some(b"zz")).unwrap();
    put(&db, &mut model, "m", 0, false);

    // The close waits for the held compaction, let go once the close has begun.
    let closing = std::thread::spawn(move || drop(Arc::into_inner(db).unwrap()));
    std::thread::sleep(Duration::from_millis(50));
    assert!(
        !closing.is_finished(),
        "the close did not wait for the compaction"
    );
    hold.release();
    closing.join().unwrap();

    reopen_and_read(&hold, &model, "");
}

#[test]
fn power_loss_beside_a_held_compaction_keeps_every_synced_write() {
    for (n, mode) in [
        PowerLossMode::DropUnsynced,
        PowerLossMode::TornTail,
        PowerLossMode::GarbageTail,
    ]
    .into_iter()
    .enumerate()
    {
        let env = FaultEnv::new(Arc::new(MemEnv::new()));
        let hold = Hold::new(Arc::new(env.clone()), on_a_compaction_thread);
        let db = DB::open(DIR, options(&hold)).unwrap();
        let mut model = Model::new();
        let round = hold_a_level0_compaction(&hold, &db, &mut model, true);
        // Beside it: the `z` table rewritten in place (its input deleted), memtables flushed
        // (level 0 or, for the `m` keys, deeper), all synced.
        db.compact_range(Some(b"z"), Some(b"zz")).unwrap();
        for round in round..round + 2 {
            put(&db, &mut model, "a", round, true);
        }
        put(&db, &mut model, "m", 0, true);
        put(&db, &mut model, "z", 1, true);

        env.crash_now();
        hold.release();
        drop(db);
        env.simulate_power_loss(mode, n as u64).unwrap();
        env.clear_faults();

        reopen_and_read(&hold, &model, &format!("{mode:?}"));
    }
}
