//! The small workload the crash and I/O-error regressions share: numbered keys with 200-byte
//! values tagged by a round, written to a database with a 64 KiB write buffer over a
//! `FaultEnv`, and the crash, power loss and reopen that follow.

use std::ops::Range;
use std::path::Path;

use strata::testing::{FaultEnv, PowerLossMode};
use strata::{Options, DB};

use crate::support::files::file_names;

pub const DIR: &str = "/db";

/// A 64 KiB write buffer, so a few hundred writes fill a memtable.
pub fn options(env: &FaultEnv, reuse_logs: bool) -> Options {
    Options {
        write_buffer_size: 64 << 10,
        reuse_logs,
        ..crate::support::options(env)
    }
}

pub fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

pub fn value(i: u32, round: u32) -> Vec<u8> {
    let mut v = format!("value{i}-{round}|").into_bytes();
    v.resize(200, b'a' + (i % 26) as u8);
    v
}

/// Writes keys `range` (unsynced), tagged with `round`.
pub fn fill(db: &DB, range: Range<u32>, round: u32) {
    for i in range {
        db.put(&key(i), &value(i, round)).unwrap();
    }
}

#[track_caller]
pub fn assert_holds(db: &DB, range: Range<u32>, round: u32) {
    for i in range {
        assert_eq!(
            db.get(&key(i)).unwrap(),
            Some(value(i, round)),
            "key {i} of round {round}"
        );
    }
}

/// Kills the process, drops the database, loses power, and reopens on the revived env.
pub fn crash_and_reopen(env: &FaultEnv, db: DB, mode: PowerLossMode, reuse_logs: bool) -> DB {
    env.crash_now();
    drop(db);
    env.simulate_power_loss(mode, 7).unwrap();
    env.clear_faults();
    DB::open(DIR, options(env, reuse_logs)).unwrap()
}

/// The database's files whose names end or start with `suffix_or_prefix`, sorted.
pub fn names(env: &FaultEnv, suffix_or_prefix: &str) -> Vec<String> {
    file_names(env, Path::new(DIR), |n| {
        n.ends_with(suffix_or_prefix) || n.starts_with(suffix_or_prefix)
    })
}
