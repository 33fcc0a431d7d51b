//! Repair learned which format extensions the salvaged data uses from the logs and from
//! tables' expiring values and range tombstones, but not from tables' value pointers: a
//! database with value separation whose pointers were all in tables, repaired without
//! `Options::value_separation` (as `strata repair` does), got a manifest without the
//! `value-separation` marker, so LevelDB 1.23 and Strata without the option opened it again
//! (LevelDB then reports its entries corrupted instead of refusing the directory). Now a
//! table's pointer records the extension as a log's does; and repair's last step, which opens
//! and compacts the database when its tables interleave, enables every extension the new
//! manifest records (it was refused before, once the marker was kept). Found in the review
//! of issue 14 (branch `review-vsep`).

use std::sync::Arc;

use strata::{MemEnv, Options, ReadOptions, ValueSeparation, DB};

use crate::support;

const DIR: &str = "/db";

fn key(i: u32) -> Vec<u8> {
    format!("key{i:04}").into_bytes()
}

fn value(i: u32) -> Vec<u8> {
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

/// Every key and value, or the first error.
fn scan(db: &DB) -> strata::Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let mut it = db.iter_opt(&ReadOptions::default());
    it.seek_to_first();
    let mut all = Vec::new();
    while it.valid() {
        all.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status()?;
    Ok(all)
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
                scan(&db).map(|all| all.len())
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
        assert_eq!(scan(&db).unwrap(), expected, "in_log {in_log}");
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
    assert_eq!(scan(&db).unwrap(), expected);
    assert_eq!(db.get(&key(0)).unwrap(), Some(value(1000)));
}
