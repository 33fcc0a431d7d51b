//! Writes slow down to a byte rate while level 0 is crowded (`db/write_pace.rs`): with level 0
//! held at the slowdown trigger, a mebibyte of writes takes at least what the pace allows, and
//! every write lands.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use strata::{MemEnv, Options, DB};

/// The pace at the slowdown trigger (8 level-0 files), in bytes a second.
const RATE_AT_TRIGGER: f64 = (64 << 20) as f64;

#[test]
fn a_crowded_level_0_holds_writes_to_its_pace() {
    let env = Arc::new(MemEnv::new());
    let options = Options {
        write_buffer_size: 1 << 20,
        ..support::options(&env)
    };
    let db = DB::open("/db", options).unwrap();
    // Compactions wait; memtables still become level-0 tables, each over the same keys.
    db.suspend_compactions();
    let value = [b'v'; 1024];
    let mut n = 0u32;
    while support::state::files_at_level(&db, 0) < 8 {
        assert!(n < 100_000, "level 0 never filled up");
        db.put(format!("k{:04}", n % 1000).as_bytes(), &value)
            .unwrap();
        n += 1;
    }
    let start = Instant::now();
    let writes = 1024;
    for i in 0..writes {
        db.put(format!("paced{i:04}").as_bytes(), &value).unwrap();
    }
    let elapsed = start.elapsed();
    // The pace may halve once the memtable's flush makes a ninth file; it never speeds up,
    // and only the last debt, under the shortest wait (1 ms), may be left unpaid.
    let at_pace = Duration::from_secs_f64(f64::from(writes) * 1024.0 / RATE_AT_TRIGGER);
    assert!(
        elapsed + Duration::from_millis(1) >= at_pace,
        "{writes} writes of 1 KiB took {elapsed:?}, under the pace's {at_pace:?}"
    );
    assert!(support::state::files_at_level(&db, 0) >= 8);
    for i in 0..writes {
        let key = format!("paced{i:04}");
        assert_eq!(
            db.get(key.as_bytes()).unwrap().as_deref(),
            Some(&value[..]),
            "{key}"
        );
    }
    db.resume_compactions();
}
