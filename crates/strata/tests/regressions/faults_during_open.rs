//! A fault met while opening (recovery) must fail the open or leave the database whole, and a
//! reopen once the fault clears must hold everything. Three ways an I/O error during open lost
//! data, found by the I/O-error tests: a log read error skipped like damage, a manifest read
//! error taken for a torn last edit, and a failed directory sync after `CURRENT` was replaced
//! that removed the new manifest `CURRENT` named. Each test fails the `n`th operation of one
//! kind, for every `n` the open reaches.

use strata::testing::{FaultEnv, InjectedError, OpKind};
use strata::{Options, DB};

use crate::support::fault_env;
use crate::support::state::{read_state, Model};
use crate::workload::{self, fill, key, value, DIR};

/// Opens the database in a fresh env after `build` wrote it, with the `n`th operation of
/// `kind` failing; the open must fail or hold everything, and once the fault clears a reopen
/// must hold everything. Runs `n` from 1 until the fault no longer fires.
fn open_survives_every_fault_of(
    kind: OpKind,
    options: impl Fn(&FaultEnv) -> Options,
    build: impl Fn(&DB) -> Model,
) {
    for n in 1.. {
        let env = fault_env();
        let db = DB::open(DIR, options(&env)).unwrap();
        let model = build(&db);
        drop(db);
        env.fail_after(kind, n, InjectedError::Io);
        let opened = DB::open(DIR, options(&env));
        let fired = !env.injected_faults().is_empty();
        env.clear_faults();
        if let Ok(db) = opened {
            assert!(
                read_state(&db, &[]).unwrap() == model,
                "{kind:?} #{n}: open succeeded and lost data"
            );
        }
        env.clear_faults();
        let db = DB::open(DIR, options(&env))
            .unwrap_or_else(|e| panic!("{kind:?} #{n}: reopen after the fault failed: {e}"));
        assert!(
            read_state(&db, &[]).unwrap() == model,
            "{kind:?} #{n}: reopen lost data"
        );
        if !fired {
            assert!(n > 1, "the fault never fired");
            return;
        }
    }
}

/// A read error while replaying a log was reported like damage and skipped (unless
/// `paranoid_checks`): the rest of the log was never read, recovery flushed what it had read
/// and deleted the log, and the acknowledged writes after the failed read were gone.
#[test]
fn log_read_error_during_recovery_fails_open() {
    let options = |env: &FaultEnv| Options {
        write_buffer_size: 4 << 20,
        ..workload::options(env, false)
    };
    open_survives_every_fault_of(OpKind::Read, options, |db| {
        // About three log blocks.
        fill(db, 0..450, 1);
        (0..450).map(|i| (key(i), value(i, 1))).collect()
    });
}

/// A read error in the middle of the manifest must fail open, not pass for a torn last edit:
/// taking it for one would drop later edits, and with them live tables.
#[test]
fn manifest_read_error_fails_open() {
    open_survives_every_fault_of(
        OpKind::Read,
        |env| workload::options(env, true),
        |db| {
            // Long keys make long edits: the manifest spans several blocks.
            let mut model = Model::new();
            for round in 0..8u32 {
                for i in 0..8u32 {
                    let mut k = format!("{i:02}-{round:02}-").into_bytes();
                    k.resize(4_000, b'k');
                    db.put(&k, b"v").unwrap();
                    model.insert(k, b"v".to_vec());
                }
                db.compact_range(None, None).unwrap();
            }
            model
        },
    );
}

/// When `CURRENT` had been renamed to name a new manifest but the directory sync after it
/// failed, the new manifest was removed as if nothing had happened: `CURRENT` named a missing
/// file and the database could never be opened again.
#[test]
fn failed_directory_sync_after_replacing_current_keeps_the_new_manifest() {
    open_survives_every_fault_of(
        OpKind::SyncDir,
        |env| workload::options(env, false),
        |db| {
            fill(db, 0..300, 1);
            (0..300).map(|i| (key(i), value(i, 1))).collect()
        },
    );
}
