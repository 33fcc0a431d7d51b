//! Regression tests for bugs the power-loss and I/O-error tests found, one per bug, each named
//! after what used to go wrong. Each sets up the failing situation directly over a
//! `FaultEnv` on a `MemEnv`, so it fails without its fix every time.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::Path;
use std::sync::Arc;

use strata::testing::{FaultEnv, InjectedError, OpKind, PowerLossMode};
use strata::{Env, MemEnv, Options, WriteOptions, DB};

mod support;

use support::{append_raw, read_state, Model};

const DIR: &str = "/db";

fn options(env: &FaultEnv, reuse_logs: bool) -> Options {
    Options {
        create_if_missing: true,
        env: Arc::new(env.clone()),
        write_buffer_size: 64 << 10,
        reuse_logs,
        ..Options::default()
    }
}

fn new_env() -> FaultEnv {
    FaultEnv::new(Arc::new(MemEnv::new()))
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

fn value(i: u32, round: u32) -> Vec<u8> {
    let mut v = format!("value{i}-{round}|").into_bytes();
    v.resize(200, b'a' + (i % 26) as u8);
    v
}

/// Writes keys `range` (unsynced), tagged with `round`.
fn fill(db: &DB, range: std::ops::Range<u32>, round: u32) {
    for i in range {
        db.put(&key(i), &value(i, round)).unwrap();
    }
}

fn assert_holds(db: &DB, range: std::ops::Range<u32>, round: u32) {
    for i in range {
        assert_eq!(
            db.get(&key(i)).unwrap(),
            Some(value(i, round)),
            "key {i} of round {round}"
        );
    }
}

/// Kills the process, drops the database, loses power, and reopens on the revived env.
fn crash_and_reopen(env: &FaultEnv, db: DB, mode: PowerLossMode, reuse_logs: bool) -> DB {
    env.crash_now();
    drop(db);
    env.simulate_power_loss(mode, 7).unwrap();
    env.clear_faults();
    DB::open(DIR, options(env, reuse_logs)).unwrap()
}

fn names(env: &FaultEnv, suffix_or_prefix: &str) -> Vec<String> {
    let mut names: Vec<String> = env
        .children(Path::new(DIR))
        .unwrap()
        .into_iter()
        .filter(|n| n.ends_with(suffix_or_prefix) || n.starts_with(suffix_or_prefix))
        .collect();
    names.sort();
    names
}

/// Tables were created without syncing the directory, so a power loss after the manifest
/// edit naming them was durable could take the files away: open then failed with "table
/// files missing".
#[test]
fn table_written_by_a_flush_survives_power_loss() {
    let env = new_env();
    let db = DB::open(DIR, options(&env, false)).unwrap();
    fill(&db, 0..1000, 1);
    db.compact_range(None, None).unwrap();
    let db = crash_and_reopen(&env, db, PowerLossMode::DropUnsynced, false);
    assert_holds(&db, 0..1000, 1);
}

/// A new log's directory entry was never synced, and the old log was closed without a sync:
/// a synced write to the new log could vanish with the file, or survive while the unsynced
/// writes before it (in the old log) were lost — a hole.
#[test]
fn synced_write_in_a_new_log_survives_power_loss_with_everything_before_it() {
    for mode in [PowerLossMode::DropUnsynced, PowerLossMode::TornTail] {
        let env = new_env();
        let db = DB::open(DIR, options(&env, false)).unwrap();
        // Fill the memtable: the next write switches to a new log.
        fill(&db, 0..400, 1);
        db.put_opt(&WriteOptions { sync: true }, b"synced", b"yes")
            .unwrap();
        let db = crash_and_reopen(&env, db, mode, false);
        assert_eq!(db.get(b"synced").unwrap(), Some(b"yes".to_vec()));
        assert_holds(&db, 0..400, 1);
    }
}

/// With `reuse_logs`, recovery appended new writes to a log that ended in a torn record; the
/// next recovery met the torn record, dropped the rest of its block, and with it the synced
/// writes appended behind it.
#[test]
fn reused_log_with_a_torn_tail_keeps_later_writes() {
    let env = new_env();
    let db = DB::open(DIR, options(&env, true)).unwrap();
    fill(&db, 0..20, 1);
    drop(db);
    let logs = names(&env, ".log");
    let log = logs.last().unwrap();
    // The first bytes of a record header: a write torn by a crash.
    append_raw(
        &**env.inner(),
        DIR,
        log,
        &[0x12, 0x34, 0x56, 0x78, 0x20, 0x00],
    );
    let db = DB::open(DIR, options(&env, true)).unwrap();
    assert_holds(&db, 0..20, 1);
    for i in 20..40 {
        db.put_opt(&WriteOptions { sync: true }, &key(i), &value(i, 1))
            .unwrap();
    }
    let db = crash_and_reopen(&env, db, PowerLossMode::DropUnsynced, true);
    assert_holds(&db, 0..40, 1);
}

/// With `reuse_logs`, open appended new edits to a manifest that ended in a torn record; the
/// next open met the torn record followed by valid bytes, reported corruption and failed.
#[test]
fn reused_manifest_with_a_torn_tail_keeps_later_edits() {
    let env = new_env();
    let db = DB::open(DIR, options(&env, true)).unwrap();
    fill(&db, 0..500, 1);
    db.compact_range(None, None).unwrap();
    drop(db);
    let manifests = names(&env, "MANIFEST-");
    append_raw(
        &**env.inner(),
        DIR,
        manifests.last().unwrap(),
        &[0x9a, 0xbc, 0xde, 0xf0, 0x40],
    );
    let db = DB::open(DIR, options(&env, true)).unwrap();
    fill(&db, 500..1000, 2);
    db.compact_range(None, None).unwrap();
    drop(db);
    let db = DB::open(DIR, options(&env, true)).unwrap();
    assert_holds(&db, 0..500, 1);
    assert_holds(&db, 500..1000, 2);
}

/// A manifest edit cut by power loss and replaced by garbage (a complete-looking record with a
/// bad checksum at the end of the manifest) made open fail with a corruption error, though the
/// edit was never acknowledged and nothing depended on it.
#[test]
fn manifest_with_a_damaged_tail_opens() {
    for reuse_logs in [false, true] {
        let env = new_env();
        let db = DB::open(DIR, options(&env, reuse_logs)).unwrap();
        fill(&db, 0..500, 1);
        db.compact_range(None, None).unwrap();
        drop(db);
        let manifests = names(&env, "MANIFEST-");
        // A full record of 5 payload bytes whose checksum does not match.
        append_raw(
            &**env.inner(),
            DIR,
            manifests.last().unwrap(),
            &[1, 2, 3, 4, 5, 0, 1, 9, 9, 9, 9, 9],
        );
        let db = DB::open(DIR, options(&env, reuse_logs)).unwrap();
        assert_holds(&db, 0..500, 1);
        fill(&db, 500..600, 2);
        drop(db);
        // The damaged manifest was replaced, and later opens are clean.
        let db = DB::open(DIR, options(&env, reuse_logs)).unwrap();
        assert_holds(&db, 0..500, 1);
        assert_holds(&db, 500..600, 2);
        drop(db);
        // Paranoid checks refuse a damaged manifest tail.
        let env = new_env();
        let db = DB::open(DIR, options(&env, reuse_logs)).unwrap();
        fill(&db, 0..10, 1);
        drop(db);
        let manifests = names(&env, "MANIFEST-");
        append_raw(
            &**env.inner(),
            DIR,
            manifests.last().unwrap(),
            &[1, 2, 3, 4, 5, 0, 1, 9, 9, 9, 9, 9],
        );
        let paranoid = Options {
            paranoid_checks: true,
            ..options(&env, reuse_logs)
        };
        let err = DB::open(DIR, paranoid).unwrap_err();
        assert!(err.is_corruption(), "{err}");
    }
}

/// Opens the database in a fresh env after `build` wrote it, with the `n`th operation of
/// `kind` failing; the open must fail or hold everything, and once the fault clears a reopen
/// must hold everything. Runs `n` from 1 until the fault no longer fires.
fn open_survives_every_fault_of(
    kind: OpKind,
    options: impl Fn(&FaultEnv) -> Options,
    build: impl Fn(&DB) -> Model,
) {
    for n in 1.. {
        let env = new_env();
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
        ..options(env, false)
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
        |env| options(env, true),
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
        |env| options(env, false),
        |db| {
            fill(db, 0..300, 1);
            (0..300).map(|i| (key(i), value(i, 1))).collect()
        },
    );
}

/// When a flush's or compaction's manifest edit failed after its record was appended (the
/// sync failed), the new tables were removed (or deleted as obsolete before the background
/// error was recorded), though the edit naming them could be in the manifest: the next open
/// failed with "table files missing".
#[test]
fn tables_named_by_a_failed_manifest_edit_are_kept() {
    for n in 1..40 {
        let env = new_env();
        let db = DB::open(DIR, options(&env, n % 2 == 0)).unwrap();
        env.fail_after(OpKind::Sync, n, InjectedError::Io);
        let mut acked = Model::new();
        for round in 0..6 {
            for i in 0..300 {
                if db.put(&key(i), &value(i, round)).is_ok() {
                    acked.insert(key(i), value(i, round));
                }
            }
            let _ = db.compact_range(None, None);
        }
        drop(db);
        env.clear_faults();
        let db = DB::open(DIR, options(&env, n % 2 == 0))
            .unwrap_or_else(|e| panic!("sync #{n}: reopen failed: {e}"));
        assert!(
            read_state(&db, &[]).unwrap() == acked,
            "sync #{n}: lost writes"
        );
    }
}
