//! Repair took a value file it could not read for a reason other than damage (an I/O error)
//! for a lost value (found in the review of the change making repair read every value a table
//! points to). It left the entries naming the value out, archived their table or log, and
//! returned `Ok`; the next compaction then deleted the value file, which nothing named any
//! more, and the values were gone for good, where a second repair would have kept them all.
//! Now only a missing or damaged value (a corruption error) leaves its entry out; any other
//! error stops the repair before it archives anything naming the value, and a repair run
//! again once the file reads keeps every entry.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use strata::testing::EnvOp;
use strata::{Env, MemEnv, Options, ReadOptions, ValueSeparation, DB};

use super::repair_ignored_value_pointers::{key, value};
use crate::support;

const DIR: &str = "/db";
const KEYS: u32 = 50;

fn separating(env: Arc<dyn Env>) -> Options {
    Options {
        create_if_missing: true,
        env,
        value_separation: Some(ValueSeparation::new(256)),
        ..Options::default()
    }
}

/// `env`, with every open and read of a value file failing while `failing`.
fn failing_value_reads(env: &Arc<MemEnv>, failing: &Arc<AtomicBool>) -> Arc<dyn Env> {
    const READS: &[EnvOp] = &[EnvOp::NewRandomAccessFile, EnvOp::ReadAt];
    support::failing::failing_while(env, failing, READS, "vlog")
}

/// Repairs with value-file reads failing, then again without; then checks that every key
/// reads back its value, also after a compaction, and that the value files are still there.
fn repair_fails_then_keeps_everything(env: &Arc<MemEnv>) {
    let failing = Arc::new(AtomicBool::new(true));
    let repaired = strata::repair(DIR, &separating(failing_value_reads(env, &failing)));
    assert!(
        repaired.as_ref().is_err_and(|e| !e.is_corruption()),
        "repair with unreadable value files: {repaired:?}"
    );
    failing.store(false, Ordering::SeqCst);
    let files = support::files::numbered_files(&**env, Path::new(DIR), ".vlog");
    assert!(!files.is_empty());

    strata::repair(DIR, &separating(env.clone())).unwrap();
    let db = DB::open(DIR, separating(env.clone())).unwrap();
    db.compact_range(None, None).unwrap();
    let mut it = db.iter_opt(&ReadOptions::default());
    it.seek_to_first();
    let mut seen = 0;
    while it.valid() {
        assert_eq!(it.key(), key(seen));
        assert_eq!(it.value(), value(seen));
        seen += 1;
        it.next();
    }
    it.status().unwrap();
    assert_eq!(seen, KEYS, "keys kept after the second repair");
    assert_eq!(
        support::files::numbered_files(&**env, Path::new(DIR), ".vlog"),
        files,
        "value files after a compaction"
    );
}

/// A closed database holding every key, in tables when `compacted`, else in its log.
fn written(compacted: bool) -> Arc<MemEnv> {
    let env = Arc::new(MemEnv::new());
    let db = DB::open(DIR, separating(env.clone())).unwrap();
    for i in 0..KEYS {
        db.put(&key(i), &value(i)).unwrap();
    }
    if compacted {
        db.compact_range(None, None).unwrap();
    }
    drop(db);
    env
}

#[test]
fn an_io_error_reading_the_values_of_a_table_stops_the_repair() {
    repair_fails_then_keeps_everything(&written(true));
}

#[test]
fn an_io_error_reading_the_values_of_a_log_stops_the_repair() {
    repair_fails_then_keeps_everything(&written(false));
}
