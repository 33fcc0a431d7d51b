//! Repair replayed every readable log record into a table without checking that the values
//! its pointers name exist: a log whose value file lost its tail (values appended by unsynced
//! writes, or a torn file) became a table of pointers without values, every read of them a
//! corruption error. Now a record with a pointer whose value is missing or damaged is skipped
//! and said in the `LOG`, as a damaged record is, and the value files the kept pointers name
//! are synced before their table is written (as recovery does). Found in the review of issue
//! 14 (branch `review-vsep`).

use std::path::Path;
use std::sync::Arc;

use strata::{Env, MemEnv, Options, ReadOptions, ValueSeparation, WriteOptions, DB};

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
    let all = scan(&db).unwrap_or_else(|e| panic!("a pointer without its value after repair: {e}"));
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
