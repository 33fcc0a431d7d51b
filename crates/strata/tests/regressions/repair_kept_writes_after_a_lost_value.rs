//! Repair skipped a log record whose separated value was lost and went on with the records
//! after it (found by `survives_power_loss.rs`, seed 10372713005361029475, in CI: a power loss
//! while a manifest edit was written left garbage that only repair gets past). The value of an
//! unsynced write was not in its value file, but later writes with small values, kept in the
//! log itself, were: repair kept them and the database held later writes without an earlier
//! one, a state no sequence of acknowledged writes gives. A sync covers every value appended
//! before it, so a lost value means that write and every later one were never durable; an
//! open stops replaying there, and now so does repair.

use std::path::Path;
use std::sync::Arc;

use strata::{MemEnv, Options, ReadOptions, ValueSeparation, WriteOptions, DB};

use crate::support;

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

#[test]
fn repair_keeps_the_writes_before_a_lost_value_and_none_after() {
    let env = Arc::new(MemEnv::new());
    let db = DB::open(DIR, separating(&env)).unwrap();
    for i in 0..WRITES {
        let sync = WriteOptions { sync: i == 19 };
        db.put_opt(&sync, &key(i), &value(i)).unwrap();
    }
    drop(db);
    // The value file loses the values of the even writes from FIRST_LOST on (never synced);
    // the log keeps every record.
    let vlog = support::files::numbered_files(&*env, Path::new(DIR), ".vlog")
        .last()
        .map(|number| Path::new(DIR).join(format!("{number:06}.vlog")))
        .expect("a value file");
    // Cut inside the first lost value's record, which ends every earlier one.
    let first_lost = value(FIRST_LOST);
    support::files::rewrite_file(&*env, &vlog, |bytes| {
        let at = bytes
            .windows(first_lost.len())
            .position(|w| w == first_lost)
            .expect("the value in its file");
        bytes.truncate(at + 1);
    });

    strata::repair(DIR, &separating(&env)).unwrap();
    let db = DB::open(DIR, separating(&env)).unwrap();
    let mut it = db.iter_opt(&ReadOptions::default());
    it.seek_to_first();
    let mut kept = Vec::new();
    while it.valid() {
        kept.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().unwrap();
    let expected: Vec<_> = (0..FIRST_LOST).map(|i| (key(i), value(i))).collect();
    let names = |all: &[(Vec<u8>, Vec<u8>)]| {
        all.iter()
            .map(|(k, _)| String::from_utf8_lossy(k).into_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&kept), names(&expected), "keys after repair");
    assert_eq!(kept, expected, "values after repair");
}
