//! A memtable switch does not sync the old log, so a power loss can keep a later log's writes
//! and lose the tail of an earlier log. Recovery must then keep a prefix of the writes: the
//! later log starts past where the earlier one ends, and it is skipped with everything after it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::path::Path;

use strata::testing::{
    write_batch_contents, write_batch_set_sequence, write_log_file, FaultEnv, PowerLossMode,
};
use strata::{Env, WriteBatch, WriteOptions, DB};
use support::{fault_env, options};

const DIR: &str = "/db";
/// Writes before the flush (sequences 1..=FLUSHED) and after it (up to LOGGED).
const FLUSHED: u64 = 50;
const LOGGED: u64 = 100;

fn key(i: u64) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

/// A log record putting `key` at `sequence`.
fn batch_at(sequence: u64, key: &[u8]) -> Vec<u8> {
    let mut batch = WriteBatch::new();
    batch.put(key, b"late");
    write_batch_set_sequence(&mut batch, sequence);
    write_batch_contents(&batch).to_vec()
}

/// Writes 1..=FLUSHED and flushes them to a table, then FLUSHED+1..=LOGGED into the new log,
/// unsynced; then, as if a later memtable switch had started it and its bytes had reached the
/// disk, a durable log numbered past every file continuing at LOGGED+1. Returns the env after
/// a crash of the process and, if given, a power loss.
fn history(power_loss: Option<(PowerLossMode, u64)>) -> FaultEnv {
    let env = fault_env();
    let db = DB::open(DIR, options(&env)).unwrap();
    for i in 1..=FLUSHED {
        db.put(&key(i), b"v").unwrap();
    }
    db.compact_range(None, None).unwrap();
    for i in FLUSHED + 1..=LOGGED {
        db.put_opt(&WriteOptions { sync: false }, &key(i), b"v")
            .unwrap();
    }
    env.crash_now();
    drop(db);
    let inner: &dyn Env = &**env.inner();
    let later = Path::new(DIR).join("000900.log");
    write_log_file(inner, &later, &[&batch_at(LOGGED + 1, &key(LOGGED + 1))]).unwrap();
    if let Some((mode, seed)) = power_loss {
        env.simulate_power_loss(mode, seed).unwrap();
    }
    env.clear_faults();
    env
}

#[test]
fn a_later_log_behind_a_lost_tail_is_skipped_and_a_whole_one_is_kept() {
    let mut skipped = 0;
    let mut kept = 0;
    let modes = [
        PowerLossMode::DropUnsynced,
        PowerLossMode::TornTail,
        PowerLossMode::GarbageTail,
    ];
    let losses = modes
        .iter()
        .flat_map(|&mode| (0..20).map(move |seed| Some((mode, seed))));
    // A crash of the process alone loses nothing: the later log continues the earlier one.
    for loss in losses.chain([None]) {
        {
            let env = history(loss);
            let db = DB::open(DIR, options(&env)).unwrap();
            let present: Vec<bool> = (1..=LOGGED + 1)
                .map(|i| db.get(&key(i)).unwrap().is_some())
                .collect();
            let prefix = present.iter().take_while(|&&p| p).count() as u64;
            assert!(
                present[prefix as usize..].iter().all(|&p| !p),
                "{loss:?}: a hole after {prefix} writes: {present:?}"
            );
            assert!(prefix >= FLUSHED, "{loss:?}: flushed writes lost");
            // The later log is replayed exactly when the earlier one survived whole.
            let late = db.get(&key(LOGGED + 1)).unwrap().is_some();
            assert_eq!(late, prefix == LOGGED + 1, "{loss:?}");
            assert!(late || loss.is_some(), "a crash alone lost writes");
            if late {
                kept += 1;
            } else {
                skipped += 1;
            }

            // The database goes on from the prefix, and the skipped log stays skipped.
            db.put(b"after", b"reopen").unwrap();
            drop(db);
            let db = DB::open(DIR, options(&env)).unwrap();
            assert_eq!(db.get(b"after").unwrap().as_deref(), Some(&b"reopen"[..]));
            assert_eq!(db.get(&key(LOGGED + 1)).unwrap().is_some(), late);
            let restored = (1..=LOGGED)
                .take_while(|&i| db.get(&key(i)).unwrap().is_some())
                .count() as u64;
            assert_eq!(restored, prefix.min(LOGGED), "{loss:?}");
        }
    }
    // Both outcomes happened: the check is not vacuous either way.
    assert!(skipped > 0 && kept > 0, "skipped {skipped}, kept {kept}");
}
