//! `compact_range` ended with a pass deleting obsolete files run on the caller's thread, outside
//! the background jobs' panic guard: a pass that panicked there (a user's `Env`, a comparator)
//! reached the caller and stayed marked as running, so no later pass ran and the next
//! `compact_range` step waited for one for ever. Now a background thread runs that pass (a
//! panic in it becomes the background error) and the caller only waits for it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use strata::testing::{EnvOp, HookEnv};
use strata::{MemEnv, DB};

use super::background_panic::within_a_minute;
use crate::support::files::numbered_files;
use crate::support::state::live_tables;

const DIR: &str = "/compact-range-caller";

fn put_rounds(db: &DB, rounds: std::ops::Range<u32>) {
    for round in rounds {
        for i in 0..3000u32 {
            db.put(
                format!("key{i:06}").as_bytes(),
                format!("value-{round}-{i}").as_bytes(),
            )
            .unwrap();
        }
    }
}

#[test]
fn compact_range_lists_no_directory_on_its_callers_thread() {
    let caller = std::thread::current().id();
    // Set while `compact_range` runs: listing the directory on the caller's thread panics.
    let armed = Arc::new(AtomicBool::new(false));
    let listed_on_caller = Arc::new(AtomicBool::new(false));
    let env = {
        let (armed, listed_on_caller) = (armed.clone(), listed_on_caller.clone());
        HookEnv::new(Arc::new(MemEnv::new()), move |call| {
            if call.op == EnvOp::Children
                && std::thread::current().id() == caller
                && armed.load(Ordering::SeqCst)
            {
                listed_on_caller.store(true, Ordering::SeqCst);
                panic!("injected: the caller's thread lists the directory");
            }
            Ok(())
        })
    };
    let env: Arc<dyn strata::Env> = Arc::new(env);
    let options = strata::Options {
        write_buffer_size: 64 << 10,
        ..crate::support::options(&env)
    };
    let db = Arc::new(DB::open(DIR, options).unwrap());
    put_rounds(&db, 0..3);
    // An iterator's tables are released after the compaction replaced them: only the final
    // pass deletes them.
    let pinned = db.iter();
    armed.store(true, Ordering::SeqCst);
    db.compact_range(None, None).unwrap();
    drop(pinned);
    db.compact_range(None, None).unwrap();
    armed.store(false, Ordering::SeqCst);
    assert!(
        !listed_on_caller.load(Ordering::SeqCst),
        "a deletion pass ran on the caller's thread"
    );
    assert_eq!(
        numbered_files(&*env, std::path::Path::new(DIR), ".ldb"),
        live_tables(&db),
        "obsolete tables remain on disk"
    );
    // Later calls still run and return.
    put_rounds(&db, 3..5);
    let db2 = Arc::clone(&db);
    within_a_minute(move || db2.compact_range(None, None)).unwrap();
}
