//! After any single I/O error (the process then exits and the database is reopened, no power
//! loss), the database must open again and hold every acknowledged write.
//!
//! Bugs this caught:
//! - a compaction whose manifest write failed *after* the record reached the file (sync or
//!   `CURRENT` failing) deleted its output tables, both in the compaction job and in the
//!   obsolete-file sweep run before the background error was recorded: the manifest then named
//!   missing tables and the database no longer opened;
//! - `set_current_file` failing after the rename (directory sync) removed the new manifest that
//!   `CURRENT` already named: "CURRENT points to a non-existent file".

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::Arc;

use strata::testing::{FaultEnv, InjectedError, OpKind};
use strata::{Env, MemEnv, Options, DB};

fn options(env: &FaultEnv) -> Options {
    Options {
        create_if_missing: true,
        env: Arc::new(env.clone()) as Arc<dyn Env>,
        ..Options::default()
    }
}

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// Builds a database with one table at level 2, and an unflushed log overlapping it.
fn setup(env: &FaultEnv, model: &mut Model) {
    let db = DB::open("/db", options(env)).unwrap();
    for i in 0..200u32 {
        let (k, v) = (
            format!("key{i:04}").into_bytes(),
            format!("old{i}").into_bytes(),
        );
        db.put(&k, &v).unwrap();
        model.insert(k, v);
    }
    db.compact_range(None, None).unwrap();
    for i in (0..200u32).step_by(3) {
        let (k, v) = (
            format!("key{i:04}").into_bytes(),
            format!("new{i}").into_bytes(),
        );
        db.put(&k, &v).unwrap();
        model.insert(k, v);
    }
}

/// Opens, compacts everything and writes more, all with the fault armed; records what was
/// acknowledged.
fn workload(env: &FaultEnv, model: &mut Model) {
    let Ok(db) = DB::open("/db", options(env)) else {
        return;
    };
    let _ = db.compact_range(None, None);
    for i in (1..200u32).step_by(7) {
        let (k, v) = (
            format!("key{i:04}").into_bytes(),
            format!("late{i}").into_bytes(),
        );
        if db.put(&k, &v).is_ok() {
            model.insert(k, v);
        }
    }
    let _ = db.compact_range(None, None);
}

fn check(env: &FaultEnv, model: &Model, what: &str) {
    let db = DB::open("/db", options(env)).unwrap_or_else(|e| panic!("{what}: reopen failed: {e}"));
    let mut it = db.iter();
    it.seek_to_first();
    let mut got = Model::new();
    while it.valid() {
        got.insert(it.key().to_vec(), it.value().to_vec());
        it.next();
    }
    it.status()
        .unwrap_or_else(|e| panic!("{what}: scan failed: {e}"));
    assert!(got == *model, "{what}: contents differ after reopen");
}

#[test]
fn every_single_io_error_leaves_an_openable_database() {
    for (kind, error) in [
        (OpKind::Sync, InjectedError::Io),
        (OpKind::SyncDir, InjectedError::Io),
        (OpKind::Append, InjectedError::Io),
        (OpKind::Append, InjectedError::ShortWrite),
        (OpKind::Rename, InjectedError::Io),
        (OpKind::Open, InjectedError::Io),
        (OpKind::Remove, InjectedError::Io),
    ] {
        for n in 1..=40 {
            let env = FaultEnv::new(Arc::new(MemEnv::new()));
            let mut model = Model::new();
            setup(&env, &mut model);
            let before = env.op_count(kind);
            env.fail_after(kind, n, error);
            workload(&env, &mut model);
            let fired = env.op_count(kind) - before >= n;
            env.clear_faults();
            check(&env, &model, &format!("{kind:?} {error:?} #{n}"));
            if !fired {
                break; // the workload does fewer operations of this kind
            }
        }
    }
}
