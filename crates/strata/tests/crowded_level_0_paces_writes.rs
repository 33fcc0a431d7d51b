//! Writes slow down to a byte rate while level 0 is crowded (`db/write_pace.rs`): with level 0
//! held at the slowdown trigger, writes take at least what the pace allows,
//! `strata.write-stalls` counts that time as level-0 slowdowns, and every write lands; the pace
//! runs on the monotonic clock, so the `Env`'s clock set back adds no wait.
//! (That writes at the stop trigger stay paced is `write_pace`'s unit test: here a memtable
//! filling up at 12 files would wait for ever for the suspended compactions.)

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use strata::{MemEnv, Options, DB};
use support::state::write_stalls;

/// The pace at the slowdown trigger (8 level-0 files), in bytes a second.
const RATE_AT_TRIGGER: f64 = (64 << 20) as f64;

const VALUE: [u8; 1024] = [b'v'; 1024];

/// A database with a 1 MiB write buffer whose level 0 holds 8 tables, the slowdown trigger
/// (compactions suspended).
fn crowded(env: &Arc<MemEnv>) -> DB {
    let options = Options {
        write_buffer_size: 1 << 20,
        ..support::options(env)
    };
    let db = DB::open("/db", options).unwrap();
    support::state::crowd_level_0(&db, 8, &VALUE);
    db
}

/// 1024 writes of 1 KiB take at least what the pace allows: the pace never speeds up as level
/// 0 grows, and only the last debt, under the shortest wait (1 ms), may be left unpaid.
#[test]
fn a_crowded_level_0_holds_writes_to_its_pace() {
    let env = Arc::new(MemEnv::new());
    let db = crowded(&env);
    let writes = 1024;
    let start = Instant::now();
    for i in 0..writes {
        db.put(format!("paced{i:04}").as_bytes(), &VALUE).unwrap();
    }
    let elapsed = start.elapsed();
    let at_pace = Duration::from_secs_f64(f64::from(writes) * 1024.0 / RATE_AT_TRIGGER);
    assert!(
        elapsed + Duration::from_millis(1) >= at_pace,
        "{writes} writes of 1 KiB took {elapsed:?}, under the pace's {at_pace:?}"
    );
    // The sleeps are counted as level-0 slowdowns: at least the pace's time, at most the whole.
    let (waits, micros) = write_stalls(&db, "level0-slowdown");
    let slept = Duration::from_micros(micros);
    assert!(waits > 0);
    assert!(
        slept + Duration::from_millis(2) >= at_pace && slept <= elapsed,
        "slept {slept:?} of {elapsed:?}, the pace asks {at_pace:?}"
    );
    // (A memtable may fill while the one before it is flushed: flushes still run.)
    assert_eq!(write_stalls(&db, "level0-stop"), (0, 0));
    assert_eq!(write_stalls(&db, "value-files"), (0, 0));
    for i in 0..writes {
        let key = format!("paced{i:04}");
        assert_eq!(
            db.get(key.as_bytes()).unwrap().as_deref(),
            Some(&VALUE[..]),
            "{key}"
        );
    }
    assert!(support::state::files_at_level(&db, 0) >= 8);
    db.resume_compactions();
}

/// The `Env`'s clock set back an hour, as a wall clock may be, is no debt: small writes at the
/// slowdown trigger owe microseconds and wait for none.
#[test]
fn a_clock_set_back_adds_no_wait() {
    let env = Arc::new(MemEnv::new());
    let db = crowded(&env);
    env.set_clock(Some(3_600_000_000));
    db.put(b"before", b"1").unwrap();
    env.set_clock(Some(1_000_000));
    let start = Instant::now();
    for i in 0..50 {
        db.put(format!("small{i:02}").as_bytes(), b"1").unwrap();
    }
    // Paced, 50 small writes owe about 0.1 ms; a wait taken for the hour would be 10 ms each.
    let elapsed = start.elapsed();
    assert!(
        elapsed < Duration::from_millis(250),
        "50 small writes took {elapsed:?}"
    );
    db.resume_compactions();
}
