//! A memtable flushed while `compact_range` rewrote the deepest level in place could land in
//! that level between two of the rewrite's input tables: the flush places a table as deep as
//! level 2 when it overlaps nothing there, and the keys between two neighbouring tables of a
//! level overlap nothing. The rewrite's output then spanned both inputs and the flushed table
//! between them, and the edit installing it was refused as overlapping tables of one level: the
//! compaction failed, its error stopped every later write. (A compaction into the next level
//! cannot meet this: its inputs of the level above span the gap, so the flush stops there.)
//! Found in the review of issue 16 (review16b).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use strata::testing::{EnvOp, HookEnv};
use strata::{CompactionFilter, FilterDecision, MemEnv, Options, ReadOptions, DB};

use crate::support::state::{scan, tables_by_level, Model};

const DIR: &str = "/flush-into-a-gap";

/// Keeps everything: its presence alone makes `compact_range` rewrite the deepest level.
struct KeepAll;

impl CompactionFilter for KeepAll {
    fn filter(&self, _level: usize, _key: &[u8], _value: &[u8]) -> FilterDecision {
        FilterDecision::Keep
    }
}

fn options_for(env: &HookEnv) -> Options {
    Options {
        write_buffer_size: 64 << 10,
        compaction_filter: Some(Arc::new(KeepAll)),
        ..crate::support::options(env)
    }
}

fn put_all(db: &DB, model: &mut Model, prefix: &str, count: u32) {
    for i in 0..count {
        let key = format!("{prefix}{i:04}").into_bytes();
        let value = format!("{prefix}-value-{i:04}-{}", "x".repeat(200)).into_bytes();
        db.put(&key, &value).unwrap();
        model.insert(key, value);
    }
}

#[test]
fn a_table_flushed_between_two_inputs_of_an_in_place_rewrite_does_not_fail_it() {
    // Holds the first append to a table after `armed` until the test lets it go.
    let armed = Arc::new(AtomicBool::new(false));
    let (held_tx, held_rx) = mpsc::channel::<()>();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let hold = Mutex::new(Some((held_tx, release_rx)));
    let hook_armed = Arc::clone(&armed);
    let env = HookEnv::new(Arc::new(MemEnv::new()), move |call| {
        let is_table = call.path.extension().is_some_and(|e| e == "ldb");
        if call.op == EnvOp::Append && is_table && hook_armed.swap(false, Ordering::AcqRel) {
            let (held, release) = hold.lock().unwrap().take().unwrap();
            held.send(()).unwrap();
            release.recv().unwrap();
        }
        Ok(())
    });
    let mut model = Model::new();
    // Two tables side by side in level 2 (a flush that overlaps nothing goes there), with a
    // gap between them: `a` keys, then `c` keys. Without the filter, `compact_range` leaves
    // the deepest level as it is.
    {
        let plain = Options {
            compaction_filter: None,
            ..options_for(&env)
        };
        let db = DB::open(DIR, plain).unwrap();
        put_all(&db, &mut model, "a", 200);
        db.compact_range(None, None).unwrap();
        put_all(&db, &mut model, "c", 200);
        db.compact_range(None, None).unwrap();
        let levels = tables_by_level(&db);
        assert_eq!(
            levels.iter().map(Vec::len).collect::<Vec<_>>(),
            [0, 0, 2, 0, 0, 0, 0],
            "{}",
            db.property("leveldb.sstables").unwrap()
        );
    }
    let db = Arc::new(DB::open(DIR, options_for(&env)).unwrap());

    // The rewrite of both, held at its first output append.
    armed.store(true, Ordering::Release);
    let compacting = {
        let db = Arc::clone(&db);
        std::thread::spawn(move || db.compact_range(None, None))
    };
    held_rx.recv_timeout(Duration::from_secs(60)).unwrap();
    // Meanwhile a memtable of `b` keys fills up and waits to be flushed: its table overlaps
    // nothing, so it may go to level 2, between the rewrite's two inputs.
    put_all(&db, &mut model, "b", 400);
    release_tx.send(()).unwrap();
    let result = compacting.join().unwrap();
    assert!(result.is_ok(), "the in-place rewrite failed: {result:?}");
    // The flush of the full memtable may still be going on (a busy machine): wait for its
    // table.
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut levels = tables_by_level(&db);
    while levels.iter().map(Vec::len).sum::<usize>() < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
        levels = tables_by_level(&db);
    }
    assert_eq!(
        levels.iter().map(Vec::len).collect::<Vec<_>>(),
        [0, 1, 1, 0, 0, 0, 0],
        "the flushed table stays above the rewritten level: {}",
        db.property("leveldb.sstables").unwrap()
    );
    db.put(b"d", b"after").unwrap();
    model.insert(b"d".to_vec(), b"after".to_vec());
    assert_eq!(scan(&db, &ReadOptions::default()).unwrap(), model);
    db.compact_range(None, None).unwrap();
    assert_eq!(scan(&db, &ReadOptions::default()).unwrap(), model);
    drop(db);
    let db = DB::open(DIR, options_for(&env)).unwrap();
    assert_eq!(
        scan(&db, &ReadOptions::default()).unwrap(),
        model,
        "after reopening"
    );
}
