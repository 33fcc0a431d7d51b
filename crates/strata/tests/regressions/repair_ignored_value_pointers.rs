//! Repair did not know value pointers (found in the review of issue 14, branch `review-vsep`).
//!
//! 1. It learned which format extensions the salvaged data uses from the logs and from
//!    tables' expiring values and range tombstones, but not from tables' value pointers: a
//!    database with value separation whose pointers were all in tables, repaired without
//!    `Options::value_separation` (as `strata repair` does), got a manifest without the
//!    `value-separation` marker, so LevelDB 1.23 and Strata without the option opened it again
//!    (LevelDB then reports its entries corrupted instead of refusing the directory). Now a
//!    table's pointer records the extension as a log's does; and repair's last step, which
//!    opens and compacts the database when its tables interleave, enables every extension the
//!    new manifest records (it was refused before, once the marker was kept).
//! 2. It replayed every readable log record into a table without checking that the values its
//!    pointers name exist: a log whose value file lost its tail (values appended by unsynced
//!    writes, or a torn file) became a table of pointers without values, every read of them a
//!    corruption error. Now a record with a pointer whose value is missing or damaged is
//!    skipped and said in the `LOG`, as a damaged record is, and the value files the kept
//!    pointers name are synced before their table is written (as recovery does).

use std::path::Path;
use std::sync::Arc;

use strata::{Env, MemEnv, Options, ValueSeparation, WriteOptions, DB};

use crate::support;

const DIR: &str = "/db";

pub(super) fn key(i: u32) -> Vec<u8> {
    format!("key{i:04}").into_bytes()
}

pub(super) fn value(i: u32) -> Vec<u8> {
    format!("<{i}>")
        .bytes()
        .cycle()
        .take(1000 + i as usize)
        .collect()
}

fn separating(env: &Arc<MemEnv>) -> Options {
    Options {
        value_separation: Some(ValueSeparation::new(256)),
        ..support::options(env)
    }
}

#[test]
fn repair_without_the_option_keeps_value_separation_recorded() {
    // Pointers in tables only, and in a table and a log.
    for in_log in [false, true] {
        let env = Arc::new(MemEnv::new());
        let db = DB::open(DIR, separating(&env)).unwrap();
        for i in 0..50 {
            db.put(&key(i), &value(i)).unwrap();
        }
        db.compact_range(None, None).unwrap();
        if in_log {
            db.put(&key(60), &value(60)).unwrap();
        }
        drop(db);
        strata::repair(DIR, &support::options(&env)).unwrap();
        match DB::open(DIR, support::options(&env)) {
            Ok(db) => panic!(
                "in_log {in_log}: a plain open of the repaired database worked: {:?}",
                support::reads::scan(&db).map(|all| all.len())
            ),
            Err(e) => assert!(
                e.to_string().contains("Options::value_separation"),
                "in_log {in_log}: {e}"
            ),
        }
        let db = DB::open(DIR, separating(&env)).unwrap();
        let mut expected: Vec<(Vec<u8>, Vec<u8>)> = (0..50).map(|i| (key(i), value(i))).collect();
        if in_log {
            expected.push((key(60), value(60)));
        }
        assert_eq!(
            support::reads::scan(&db).unwrap(),
            expected,
            "in_log {in_log}"
        );
    }
}

/// Repair without the option of tables that interleave in sequence numbers (its step 4 opens
/// and compacts the database): the open must not be refused, nor a value lost.
#[test]
fn repair_without_the_option_compacts_interleaved_separated_tables() {
    let env = Arc::new(MemEnv::new());
    let db = DB::open(DIR, separating(&env)).unwrap();
    for i in 0..=100 {
        db.put(&key(i), &value(i)).unwrap();
    }
    db.compact_range(None, None).unwrap();
    // A newer version of key 0 alone in a table, then one of key 100 compacted into the
    // table holding key 0's oldest: that table's sequence numbers span the first one's.
    db.put(&key(0), &value(1000)).unwrap();
    drop(db);
    // Recovery writes the log's memtable as a level-0 table.
    let db = DB::open(DIR, separating(&env)).unwrap();
    db.put(&key(100), &value(2000)).unwrap();
    db.compact_range(Some(&key(100)), Some(&key(100))).unwrap();
    drop(db);
    strata::repair(DIR, &support::options(&env)).unwrap();
    let db = DB::open(DIR, separating(&env)).unwrap();
    let mut expected: Vec<(Vec<u8>, Vec<u8>)> = (0..=100).map(|i| (key(i), value(i))).collect();
    expected[0].1 = value(1000);
    expected[100].1 = value(2000);
    assert_eq!(support::reads::scan(&db).unwrap(), expected);
    assert_eq!(db.get(&key(0)).unwrap(), Some(value(1000)));
}

#[test]
fn repair_skips_log_records_whose_values_were_lost() {
    let env = Arc::new(MemEnv::new());
    let db = DB::open(DIR, separating(&env)).unwrap();
    for i in 0..40 {
        db.put_opt(&WriteOptions { sync: i == 19 }, &key(i), &value(i))
            .unwrap();
    }
    drop(db);
    // The value file loses the values of the last ten (unsynced) writes; the log kept them.
    let vlog = support::files::numbered_files(&*env, Path::new(DIR), ".vlog")
        .last()
        .map(|number| Path::new(DIR).join(format!("{number:06}.vlog")))
        .expect("a value file");
    let size = env.file_size(&vlog).unwrap();
    let lost: u64 = (30..40).map(|i| value(i).len() as u64 + 20).sum();
    support::files::rewrite_file(&*env, &vlog, |bytes| bytes.truncate((size - lost) as usize));
    strata::repair(DIR, &separating(&env)).unwrap();
    let db = DB::open(DIR, separating(&env)).unwrap();
    let all = support::reads::scan(&db)
        .unwrap_or_else(|e| panic!("a pointer without its value after repair: {e}"));
    // Every synced write is there, every value reads back, nothing else.
    assert!(all.len() >= 20, "{} keys left", all.len());
    for (k, v) in &all {
        let i: u32 = std::str::from_utf8(&k[3..]).unwrap().parse().unwrap();
        assert_eq!(*v, value(i), "key {i}");
    }
    for i in 0..40 {
        if let Err(e) = db.get(&key(i)) {
            panic!("key {i}: {e}");
        }
    }
}
