//! A pass deleting obsolete files that panicked (a bug, or a user's `Env`) stayed marked as
//! running for ever: a `compact_range` step finishing after it waited for that pass's next run
//! (`obsolete_files::wait_for_deletions`), which never came, so its thread never ended and
//! closing the database hung. Now a wait for deletions ends at a background error (the panic
//! becomes one, and no file is deleted after it) or when the database closes.

use std::sync::Arc;

use strata::testing::{FaultEnv, InjectedError, OpKind};
use strata::{MemEnv, Options, ReadOptions, DB};

use super::background_panic::within_a_minute;
use crate::support::hold::{on_a_compaction_thread, Hold};
use crate::support::state::{files_at_level, scan, Model};

const DIR: &str = "/pass-panic";

fn put(db: &DB, model: &mut Model, prefix: &str, round: u32) -> strata::Result<()> {
    for i in 0..400u32 {
        let key = format!("{prefix}{i:04}").into_bytes();
        let value = format!("{prefix}{i:04} round {round} {}", "v".repeat(150)).into_bytes();
        db.put(&key, &value)?;
        model.insert(key, value);
    }
    Ok(())
}

#[test]
fn a_step_of_compact_range_after_a_panicking_deletion_pass_lets_the_database_close() {
    let env = FaultEnv::new(Arc::new(MemEnv::new()));
    let hold = Hold::new(Arc::new(env.clone()), on_a_compaction_thread);
    let options = Options {
        write_buffer_size: 64 << 10,
        max_background_jobs: 2,
        max_subcompactions: 1,
        compaction_filter: Some(Arc::new(crate::support::KeepAll)),
        ..crate::support::options(hold.env())
    };
    let db = Arc::new(DB::open(DIR, options.clone()).unwrap());
    let mut model = Model::new();
    put(&db, &mut model, "z", 0).unwrap();
    db.compact_range(None, None).unwrap();
    assert_eq!(files_at_level(&db, 2), 1);

    // A step of `compact_range` (the in-place rewrite of the `z` table) is held mid-merge.
    hold.arm();
    let compacting = {
        let db = Arc::clone(&db);
        std::thread::spawn(move || db.compact_range(Some(b"z"), Some(b"zz")))
    };
    crate::support::trials::wait_until("the step held", std::time::Duration::from_secs(60), || {
        hold.is_held()
    });
    // Meanwhile a flush's deletion pass panics removing the log it retired.
    env.fail_after(OpKind::Remove, 1, InjectedError::Panic);
    let mut round = 0;
    let err = loop {
        assert!(round < 40, "no deletion pass panicked");
        if let Err(e) = put(&db, &mut model, "a", round) {
            break e;
        }
        round += 1;
    };
    assert!(err.to_string().contains("panicked"), "{err}");
    env.clear_faults();

    // Let go, the step fails with the background error; `compact_range` reports it, and the
    // database closes.
    hold.release();
    let err = within_a_minute(move || compacting.join().unwrap()).unwrap_err();
    assert!(err.to_string().contains("panicked"), "{err}");
    within_a_minute(move || drop(Arc::into_inner(db).unwrap()));

    // What was acknowledged is there (the write that failed is not in the model).
    let db = DB::open(DIR, options).unwrap();
    assert_eq!(scan(&db, &ReadOptions::default()).unwrap(), model);
}
