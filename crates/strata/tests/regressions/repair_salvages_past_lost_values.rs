//! Repair salvages (docs/guarantees.md, "Repair salvages"): a log's write whose separated value
//! is lost costs that write alone. A change that made repair stop at the first such write
//! instead, to keep a prefix of the writes after a power loss (`survives_power_loss.rs` had
//! found repair keeping later writes without an earlier one), was reverted: it cost synced
//! writes after ordinary damage, and a prefix is what an open keeps, not what repair is for.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::Arc;

use strata::testing::EnvOp;
use strata::{MemEnv, Options, ReadOptions, ValueSeparation, WriteOptions, DB};

use crate::support;
use crate::support::state::Model;

const DIR: &str = "/db";
const WRITES: u32 = 40;
/// The first write whose value the value file loses.
const FIRST_LOST: u32 = 30;

fn key(i: u32) -> Vec<u8> {
    format!("key{i:04}").into_bytes()
}

/// Even writes go to the value file, odd ones stay in the log.
fn value(i: u32) -> Vec<u8> {
    let len = if i % 2 == 0 { 1000 + i as usize } else { 10 };
    format!("<{i}>").bytes().cycle().take(len).collect()
}

fn separating(env: &Arc<MemEnv>) -> Options {
    Options {
        value_separation: Some(ValueSeparation::new(256)),
        ..support::options(env)
    }
}

/// Cuts the value file holding `value(lost)` inside that value's record.
fn lose_value(env: &MemEnv, lost: u32) {
    let lost = value(lost);
    for number in support::files::numbered_files(env, Path::new(DIR), ".vlog") {
        let path = Path::new(DIR).join(format!("{number:06}.vlog"));
        let mut found = false;
        support::files::rewrite_file(env, &path, |bytes| {
            if let Some(at) = bytes.windows(lost.len()).position(|w| w == lost) {
                bytes.truncate(at + 1);
                found = true;
            }
        });
        if found {
            return;
        }
    }
    panic!("no value file holds the value");
}

/// Every key and value of the database.
fn scan(db: &DB) -> Model {
    support::state::scan(db, &ReadOptions::default()).unwrap()
}

/// The synced writes of `db`'s later log: the odd keys below 20.
fn synced_writes() -> impl Iterator<Item = u32> {
    (0..10).map(|i| 1 + 2 * i)
}

fn write_synced(db: &DB) {
    for i in synced_writes() {
        db.put_opt(&WriteOptions { sync: true }, &key(i), &value(i))
            .unwrap();
    }
}

/// Repairs, then checks that every synced write is there.
fn repair_keeps_synced_writes(env: &Arc<MemEnv>) {
    strata::repair(DIR, &separating(env)).unwrap();
    let db = DB::open(DIR, separating(env)).unwrap();
    let all = scan(&db);
    for i in synced_writes() {
        assert_eq!(all.get(&key(i)), Some(&value(i)), "synced write {i}");
    }
}

/// A power loss took the values of the even writes from `FIRST_LOST` on (never synced); the log
/// kept every record. Repair leaves out exactly the writes whose value is lost.
#[test]
fn a_lost_value_costs_that_write_alone() {
    let env = Arc::new(MemEnv::new());
    let db = DB::open(DIR, separating(&env)).unwrap();
    for i in 0..WRITES {
        db.put(&key(i), &value(i)).unwrap();
    }
    drop(db);
    lose_value(&env, FIRST_LOST);
    strata::repair(DIR, &separating(&env)).unwrap();
    let db = DB::open(DIR, separating(&env)).unwrap();
    let expected: Model = (0..WRITES)
        .filter(|&i| i < FIRST_LOST || i % 2 == 1)
        .map(|i| (key(i), value(i)))
        .collect();
    assert!(scan(&db) == expected, "not every write but the lost ones");
}

/// Writes separated values, then deletes them all and compacts while logs cannot be removed:
/// the log holding the values is obsolete but stays. Returns the open database and the value
/// files it wrote, which nothing live names any more.
fn obsolete_log_left(env: &Arc<MemEnv>, failing: &Arc<AtomicBool>) -> (DB, Vec<u64>) {
    let options = Options {
        env: support::failing::failing_while(env, failing, &[EnvOp::RemoveFile], "log"),
        ..separating(env)
    };
    let db = DB::open(DIR, options).unwrap();
    for i in (0..100).map(|i| i * 2) {
        db.put(&key(i), &value(i)).unwrap();
    }
    let files: Vec<u64> = support::files::numbered_files(&**env, Path::new(DIR), ".vlog")
        .into_iter()
        .collect();
    assert!(!files.is_empty());
    failing.store(true, AtomicOrdering::SeqCst);
    for i in (0..100).map(|i| i * 2) {
        db.delete(&key(i)).unwrap();
    }
    db.compact_range(None, None).unwrap();
    (db, files)
}

/// An obsolete log is left on disk (its removal failed) and the value files its writes name
/// are collected: repair leaves out only those writes, which reached tables or were
/// overwritten, and keeps every later log.
#[test]
fn a_lost_value_in_an_obsolete_log_costs_no_later_write() {
    let env = Arc::new(MemEnv::new());
    let failing = Arc::new(AtomicBool::new(false));
    let (db, files) = obsolete_log_left(&env, &failing);
    write_synced(&db);
    drop(db);
    let left = support::files::numbered_files(&*env, Path::new(DIR), ".vlog");
    assert!(
        files.iter().all(|f| !left.contains(f)),
        "value files {files:?} not collected: {left:?}"
    );
    let logs = support::files::numbered_files(&*env, Path::new(DIR), ".log");
    assert!(logs.len() >= 2, "the obsolete log is gone: {logs:?}");
    repair_keeps_synced_writes(&env);
}
