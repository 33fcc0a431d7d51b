//! The format extensions under attack (first written as the review of issue 16): the marker's write order under crashes,
//! its presence in every new manifest, repair without the options, range tombstones against
//! snapshots and `get_many`, expiring keys with a clock moving back, and the new batch records
//! fed arbitrary bytes.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rand::{Rng, SeedableRng};
use strata::testing::{write_batch_from_contents, write_log_file, FaultEnv, OpKind, PowerLossMode};
use strata::{Env, Error, MemEnv, Options, ReadOptions, WriteBatch, WriteOptions, DB};
use support::state::{scan, Model};

const DIR: &str = "/db";

fn key(i: u32) -> Vec<u8> {
    format!("k{i:04}").into_bytes()
}

/// Every file's bytes except the info log and the lock (which any open writes).
fn files(env: &dyn Env) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for name in env.children(Path::new(DIR)).unwrap() {
        if name.starts_with("LOG") || name == "LOCK" {
            continue;
        }
        let bytes = support::files::read_file(env, &Path::new(DIR).join(&name)).unwrap();
        out.insert(name, bytes);
    }
    out
}

fn plain_model(n: u32) -> Model {
    (0..n).map(|i| (key(i), b"v".to_vec())).collect()
}

/// A crash at any operation while a LevelDB-format database is reopened with range deletes and
/// its first range delete is written, then power loss: the directory either holds no extension
/// data (it opens without the option, as LevelDB's format) or records the marker (a plain open
/// is refused naming the option, and changes no byte), and an acknowledged range delete is
/// never lost.
#[test]
fn a_crash_while_enabling_range_deletes_never_leaves_unmarked_extension_data() {
    let sync = WriteOptions { sync: true };
    for kind in [
        OpKind::Append,
        OpKind::Sync,
        OpKind::Rename,
        OpKind::SyncDir,
        OpKind::Open,
        OpKind::Remove,
    ] {
        for mode in [PowerLossMode::DropUnsynced, PowerLossMode::TornTail] {
            for n in 1..200 {
                let env = support::fault_env();
                let plain = |env: &FaultEnv| support::options(env);
                let extended = |env: &FaultEnv| Options {
                    range_deletes: true,
                    ..support::options(env)
                };
                {
                    let db = DB::open(DIR, plain(&env)).unwrap();
                    for i in 0..20 {
                        db.put_opt(&sync, &key(i), b"v").unwrap();
                    }
                }
                env.crash_after(kind, n);
                let mut acked = false;
                if let Ok(db) = DB::open(DIR, extended(&env)) {
                    acked = db.delete_range_opt(&sync, &key(5), &key(15)).is_ok();
                }
                let fired = env.crash_point().is_some();
                env.simulate_power_loss(mode, n).unwrap();
                env.clear_faults();

                let before = files(&**env.inner());
                let mut after_delete = plain_model(20);
                after_delete.retain(|k, _| k < &key(5) || k >= &key(15));
                match DB::open(DIR, plain(&env)) {
                    Ok(db) => {
                        assert!(
                            !acked,
                            "{kind:?} #{n} {mode:?}: acknowledged range delete, plain open worked"
                        );
                        assert_eq!(
                            scan(&db, &ReadOptions::default()).unwrap(),
                            plain_model(20),
                            "{kind:?} #{n} {mode:?}: plain open"
                        );
                    }
                    Err(e) => {
                        assert!(
                            matches!(e, Error::InvalidArgument(_))
                                && e.to_string().contains("Options::range_deletes"),
                            "{kind:?} #{n} {mode:?}: plain open refused with {e}"
                        );
                        assert_eq!(
                            files(&**env.inner()),
                            before,
                            "{kind:?} #{n} {mode:?}: a refused open changed bytes"
                        );
                        let db = DB::open(DIR, extended(&env)).unwrap_or_else(|e| {
                            panic!("{kind:?} #{n} {mode:?}: open with the option: {e}")
                        });
                        let state = scan(&db, &ReadOptions::default()).unwrap();
                        if acked {
                            assert_eq!(state, after_delete, "{kind:?} #{n} {mode:?}");
                        } else {
                            assert!(
                                state == after_delete || state == plain_model(20),
                                "{kind:?} #{n} {mode:?}: neither before nor after"
                            );
                        }
                    }
                }
                if !fired {
                    assert!(n > 1, "{kind:?}: the crash never fired");
                    eprintln!("{kind:?} {mode:?}: {} crash points", n - 1);
                    break;
                }
            }
        }
    }
}

/// The payload of the first record of the manifest `CURRENT` names.
fn first_manifest_record(env: &dyn Env) -> Vec<u8> {
    let current = support::files::read_file(env, &Path::new(DIR).join("CURRENT")).unwrap();
    let name = String::from_utf8(current).unwrap();
    let bytes = support::files::read_file(env, &Path::new(DIR).join(name.trim_end())).unwrap();
    let records = strata::testing::read_log_records(&bytes);
    records.records.into_iter().next().expect("a first record")
}

/// Every manifest a database with an extension writes (each reopen, with and without
/// `reuse_logs`, and after compactions) carries the marker in its first edit, and a plain
/// open stays refused.
#[test]
fn every_new_manifest_records_the_marker_in_its_first_edit() {
    let env = Arc::new(MemEnv::new());
    let marker = b"strata.v1+range-deletes:leveldb.BytewiseComparator";
    for round in 0..6u32 {
        let options = Options {
            range_deletes: true,
            reuse_logs: round % 2 == 1,
            write_buffer_size: 64 << 10,
            ..support::options(&env)
        };
        let db = DB::open(DIR, options).unwrap();
        for i in 0..2000 {
            db.put(&key(i), &[round as u8; 100]).unwrap();
        }
        db.delete_range(&key(round * 10), &key(round * 10 + 5))
            .unwrap();
        db.compact_range(None, None).unwrap();
        let first = first_manifest_record(&*env);
        assert!(
            first.windows(marker.len()).any(|w| w == marker),
            "round {round}: the live manifest's first edit lacks the marker"
        );
        drop(db);
        let err = DB::open(DIR, support::options(&env)).unwrap_err();
        assert!(err.to_string().contains("Options::range_deletes"), "{err}");
    }
}

/// Repair of a database whose extension data sits in a log and in a table, run without the
/// options: the rebuilt database still records the marker (a plain open is refused, naming the
/// option), and with the option it reads the range delete and the expiring value right.
#[test]
fn repair_without_the_options_keeps_the_extensions_recorded() {
    for (flush, expiring) in [(false, false), (true, false), (false, true), (true, true)] {
        let env = Arc::new(MemEnv::new());
        env.set_clock(Some(1_000_000_000_000));
        let extended = || Options {
            range_deletes: true,
            expiring_keys: true,
            ..support::options(&env)
        };
        let db = DB::open(DIR, extended()).unwrap();
        for i in 0..50 {
            db.put(&key(i), b"v").unwrap();
        }
        db.compact_range(None, None).unwrap();
        if expiring {
            db.put_with_ttl(&key(60), b"ttl", Duration::from_secs(10))
                .unwrap();
        } else {
            db.delete_range(&key(10), &key(20)).unwrap();
        }
        if flush {
            // Flushes the memtable; the range compacted holds none of the extension data, so
            // the new table keeps it.
            db.compact_range(Some(&key(90)), Some(&key(99))).unwrap();
        }
        drop(db);
        strata::repair(DIR, &support::options(&env)).unwrap();
        if let Ok(db) = DB::open(DIR, support::options(&env)) {
            panic!(
                "flush {flush} expiring {expiring}: a plain open of the repaired database \
                 worked and reads {} keys",
                scan(&db, &ReadOptions::default()).unwrap().len()
            );
        }
        let db = DB::open(DIR, extended()).unwrap();
        let mut model = plain_model(50);
        if expiring {
            model.insert(key(60), b"ttl".to_vec());
        } else {
            model.retain(|k, _| k < &key(10) || k >= &key(20));
        }
        assert_eq!(scan(&db, &ReadOptions::default()).unwrap(), model);
        env.advance_clock(Duration::from_secs(11));
        assert_eq!(db.get(&key(60)).unwrap(), None);
    }
}

/// Tombstones and entries spread over the memtable, the immutable memtable and several
/// levels, with snapshots between them: `get_many` answers what `get` answers at every
/// snapshot, both match a model, and so they stay through compactions that drop tombstones at
/// the bottom while the oldest snapshot still needs what they delete.
#[test]
fn get_many_matches_get_under_tombstones_everywhere_with_snapshots() {
    let env = Arc::new(MemEnv::new());
    let options = Options {
        range_deletes: true,
        write_buffer_size: 32 << 10,
        max_file_size: 1 << 20,
        ..support::options(&env)
    };
    let db = DB::open(DIR, options).unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(16);
    let mut model: Model = Model::new();
    let mut snaps = Vec::new();
    let keys: Vec<Vec<u8>> = (0..400).map(key).collect();
    for step in 0..400u32 {
        match rng.gen_range(0..10) {
            0..=4 => {
                let k = key(rng.gen_range(0..400));
                let v = format!("{step}-{}", "x".repeat(rng.gen_range(0..300))).into_bytes();
                db.put(&k, &v).unwrap();
                model.insert(k, v);
            }
            5 => {
                let k = key(rng.gen_range(0..400));
                db.delete(&k).unwrap();
                model.remove(&k);
            }
            6 | 7 => {
                let a = rng.gen_range(0..400);
                let b = (a + rng.gen_range(0..60)).min(400);
                db.delete_range(&key(a), &key(b)).unwrap();
                model.retain(|k, _| k < &key(a) || k >= &key(b));
            }
            8 => {
                if snaps.len() < 4 {
                    snaps.push((db.snapshot(), model.clone()));
                } else {
                    snaps.remove(rng.gen_range(0..snaps.len()));
                }
            }
            _ => {
                let a = rng.gen_range(0..400);
                db.compact_range(Some(&key(a)), Some(&key(a + 50))).unwrap();
            }
        }
        if step % 25 == 0 {
            let mut views: Vec<(ReadOptions, &Model)> = vec![(ReadOptions::default(), &model)];
            for (snap, m) in &snaps {
                views.push((
                    ReadOptions {
                        snapshot: Some(snap.clone()),
                        ..ReadOptions::default()
                    },
                    m,
                ));
            }
            for (read, m) in views {
                let many = db.get_many_opt(&read, &keys).unwrap();
                for (k, got) in keys.iter().zip(many) {
                    assert_eq!(got.as_ref(), m.get(k), "step {step}: get_many");
                    assert_eq!(
                        db.get_opt(&read, k).unwrap().as_ref(),
                        m.get(k),
                        "step {step}: get"
                    );
                }
                assert_eq!(&scan(&db, &read).unwrap(), m, "step {step}: scan");
            }
        }
    }
}

/// An expiring value newer than a plain one: once a compaction meets it expired, neither it
/// nor the older value comes back when the clock is set back, for gets, `get_many` and scans.
#[test]
fn a_clock_set_back_brings_back_neither_the_reclaimed_value_nor_an_older_one() {
    let env = Arc::new(MemEnv::new());
    let t0 = 2_000_000_000_000_000;
    env.set_clock(Some(t0));
    let options = Options {
        expiring_keys: true,
        ..support::options(&env)
    };
    let db = DB::open(DIR, options).unwrap();
    for i in 0..100 {
        db.put(&key(i), b"old").unwrap();
    }
    db.compact_range(None, None).unwrap();
    for i in 0..100 {
        db.put_with_ttl(&key(i), b"new", Duration::from_secs(5))
            .unwrap();
    }
    let snap = db.snapshot();
    env.advance_clock(Duration::from_secs(6));
    // Only the upper half is compacted: it is reclaimed while the lower half stays in level 0.
    db.compact_range(Some(&key(50)), Some(&key(99))).unwrap();
    env.set_clock(Some(t0 + 1_000_000));
    let keys: Vec<Vec<u8>> = (0..100).map(key).collect();
    let at_snap = ReadOptions {
        snapshot: Some(snap.clone()),
        ..ReadOptions::default()
    };
    for read in [ReadOptions::default(), at_snap] {
        let many = db.get_many_opt(&read, &keys).unwrap();
        let got = scan(&db, &read).unwrap();
        for (i, k) in keys.iter().enumerate() {
            let single = db.get_opt(&read, k).unwrap();
            assert_ne!(single.as_deref(), Some(&b"old"[..]), "get {i}");
            assert_ne!(many[i].as_deref(), Some(&b"old"[..]), "get_many {i}");
            assert_ne!(got.get(k).map(Vec::as_slice), Some(&b"old"[..]), "scan {i}");
            assert_eq!(single, many[i], "get vs get_many {i}");
            assert_eq!(single.as_ref(), got.get(k), "get vs scan {i}");
        }
    }
}

/// Arbitrary bytes as a write batch (new tags 2, 3 and 4 among them, cut anywhere): decoding
/// and writing give typed errors, never a panic; and as a log record the database recovers or
/// refuses with a typed error.
#[test]
fn arbitrary_batch_bytes_with_the_new_tags_never_panic() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(1616);
    let env = Arc::new(MemEnv::new());
    let options = Options {
        range_deletes: true,
        expiring_keys: true,
        ..support::options(&env)
    };
    let db = DB::open(DIR, options).unwrap();
    for case in 0..3000u32 {
        let mut bytes = vec![0u8; 12];
        bytes[8] = rng.gen_range(0..4);
        let body_len = rng.gen_range(0..40);
        for _ in 0..body_len {
            let b: u8 = match rng.gen_range(0..6) {
                0 => rng.gen_range(2..5),
                1 => rng.gen_range(0..3),
                2 => 0xff,
                _ => rng.gen(),
            };
            bytes.push(b);
        }
        let Ok(batch) = write_batch_from_contents(bytes.clone()) else {
            continue;
        };
        for op in batch.iter() {
            if op.is_err() {
                break;
            }
        }
        let _ = db.write(&batch);
        let _ = case;
    }
    drop(db);

    for case in 0..200u64 {
        let env = Arc::new(MemEnv::new());
        let options = || Options {
            range_deletes: true,
            expiring_keys: true,
            ..support::options(&env)
        };
        drop(DB::open(DIR, options()).unwrap());
        let mut body = Vec::new();
        body.extend_from_slice(&(100 + case).to_le_bytes());
        body.extend_from_slice(&rng.gen_range(1u32..4).to_le_bytes());
        for _ in 0..rng.gen_range(0..30) {
            body.push(if rng.gen_bool(0.3) {
                rng.gen_range(0..5)
            } else {
                rng.gen()
            });
        }
        let log = support::files::file_names(&*env, Path::new(DIR), |n| n.ends_with(".log"));
        let path = Path::new(DIR).join(log.last().unwrap());
        write_log_file(&*env, &path, &[&body]).unwrap();
        for paranoid in [false, true] {
            let _ = DB::open(
                DIR,
                Options {
                    paranoid_checks: paranoid,
                    ..options()
                },
            )
            .map(|db| scan(&db, &ReadOptions::default()));
        }
    }
    let _ = WriteBatch::new();
}
