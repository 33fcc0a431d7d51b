//! A value file nothing reached whose removal failed was kept for garbage collection's plan,
//! which chose it and, finding nothing to relocate in it, asked for a memtable flush at every
//! write, for as long as the removal kept failing (found in a review of this session's changes
//! to the deletion passes: 100 flushes for 100 small writes). Now such a file is left for a
//! later pass, out of the plan and the space bound.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use strata::testing::EnvOp;
use strata::{MemEnv, Options, ValueSeparation, DB};

use crate::support;

const DIR: &str = "/db";

fn key(i: u32) -> Vec<u8> {
    format!("key{i:04}").into_bytes()
}

/// Flushes the `LOG` records.
fn flushes(env: &MemEnv) -> usize {
    support::files::info_log(env, Path::new(DIR))
        .lines()
        .filter(|l| l.contains("level-0 table") && l.contains(": started"))
        .count()
}

#[test]
fn a_value_file_that_cannot_be_removed_costs_no_flushes() {
    let env = Arc::new(MemEnv::new());
    let failing = Arc::new(AtomicBool::new(false));
    let hooked = support::failing::failing_while(&env, &failing, &[EnvOp::RemoveFile], "vlog");
    let options = Options {
        env: hooked,
        // Small value files, so that most are done with and can go.
        value_separation: Some(ValueSeparation::new(256).with_file_size(16 << 10)),
        ..support::options(&env)
    };
    let db = DB::open(DIR, options).unwrap();
    for i in 0..200 {
        db.put(&key(i), &[b'v'; 1000]).unwrap();
    }
    failing.store(true, Ordering::SeqCst);
    for i in 0..200 {
        db.delete(&key(i)).unwrap();
    }
    db.compact_range(None, None).unwrap();
    // The files nothing reaches go at the next pass, after a flush.
    db.put(b"next", b"pass").unwrap();
    db.compact_range(None, None).unwrap();
    assert!(
        support::files::info_log(&*env, Path::new(DIR)).contains("injected"),
        "no value file removal failed: {:?}\n{}",
        support::files::numbered_files(&*env, Path::new(DIR), ".vlog"),
        support::files::log_tail(&*env, Path::new(DIR), 30)
    );
    thread::sleep(Duration::from_millis(100));
    let before = flushes(&env);
    for i in 0..100 {
        db.put(&key(1000 + i), b"small").unwrap();
        thread::sleep(Duration::from_millis(2));
    }
    let flushed = flushes(&env) - before;
    assert!(flushed <= 2, "{flushed} flushes for 100 small writes");
}
