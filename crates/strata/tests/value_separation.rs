//! Values in value files beside the tree (docs/design.md, section 4.4): large values are
//! stored once in `NNNNNN.vlog` files with pointers in the tree, and every read path (get,
//! get_many, iterators both ways, snapshots) gives the user's value back, across flushes,
//! compactions and reopens; a missing or damaged value is a corruption error naming the value
//! file and the record's offset; after a power loss the database holds a prefix of the writes
//! with every synced one, and no pointer without its value.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use strata::testing::{FaultEnv, PowerLossMode};
use strata::{
    Env, Error, MemEnv, Options, ReadOptions, ValueSeparation, WriteBatch, WriteOptions, DB,
};
use support::files::{file_names, read_file, rewrite_file};

const DIR: &str = "/db";
const MIN: usize = 100;

fn separating(env: &impl support::TestEnv) -> Options {
    Options {
        value_separation: Some(ValueSeparation::new(MIN)),
        write_buffer_size: 64 << 10,
        ..support::options(env)
    }
}

/// A value of `len` bytes that names `key` and `version`, so a misplaced one shows.
fn value(key: u32, version: u32, len: usize) -> Vec<u8> {
    let stamp = format!("<{key}:{version}>");
    stamp.bytes().cycle().take(len.max(stamp.len())).collect()
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

/// Every key and value, by a forward and by a backward scan (which must agree).
fn scan(db: &DB, options: &ReadOptions) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut forward = BTreeMap::new();
    let mut it = db.iter_opt(options);
    it.seek_to_first();
    while it.valid() {
        forward.insert(it.key().to_vec(), it.value().to_vec());
        it.next();
    }
    it.status().unwrap();
    let mut backward = Vec::new();
    it.seek_to_last();
    while it.valid() {
        backward.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    it.status().unwrap();
    backward.reverse();
    assert_eq!(backward, forward.clone().into_iter().collect::<Vec<_>>());
    forward
}

/// Checks every read path of `db` against `model`, at the latest state or a snapshot.
fn check_reads(db: &DB, options: &ReadOptions, model: &BTreeMap<Vec<u8>, Vec<u8>>) {
    assert_eq!(&scan(db, options), model);
    let keys: Vec<Vec<u8>> = (0..300).map(key).collect();
    let many = db.get_many_opt(options, &keys).unwrap();
    for (k, got) in keys.iter().zip(many) {
        assert_eq!(got.as_ref(), model.get(k), "get_many {k:?}");
        assert_eq!(
            db.get_opt(options, k).unwrap().as_ref(),
            model.get(k),
            "get {k:?}"
        );
    }
}

fn value_files(env: &dyn Env) -> Vec<String> {
    file_names(env, Path::new(DIR), |n| n.ends_with(".vlog"))
}

#[test]
fn large_values_live_in_value_files_and_every_read_path_finds_them() {
    let env = Arc::new(MemEnv::new());
    let db = DB::open(DIR, separating(&env)).unwrap();
    let mut model = BTreeMap::new();
    let mut snapshot_model = None;
    let mut snapshot = None;
    for round in 0..4u32 {
        for i in 0..250u32 {
            let k = key(i);
            match (i + round) % 5 {
                0 => {
                    db.delete(&k).unwrap();
                    model.remove(&k);
                }
                // Small values stay inline; the rest go to value files.
                1 => {
                    let v = value(i, round, 20);
                    db.put(&k, &v).unwrap();
                    model.insert(k, v);
                }
                _ => {
                    let v = value(i, round, MIN + (i as usize * 37) % 3000);
                    let mut batch = WriteBatch::new();
                    batch.put(&k, &v);
                    batch.put(b"zz-small", b"s");
                    db.write(&batch).unwrap();
                    model.insert(k, v);
                    model.insert(b"zz-small".to_vec(), b"s".to_vec());
                }
            }
        }
        if round == 1 {
            snapshot = Some(db.snapshot());
            snapshot_model = Some(model.clone());
        }
        if round == 2 {
            db.compact_range(None, None).unwrap();
        }
        check_reads(&db, &ReadOptions::default(), &model);
    }
    let snapshot = snapshot.unwrap();
    let at_snapshot = ReadOptions {
        snapshot: Some(snapshot.clone()),
        ..ReadOptions::default()
    };
    check_reads(&db, &at_snapshot, snapshot_model.as_ref().unwrap());
    drop(at_snapshot);
    drop(snapshot);
    drop(db);

    assert!(!value_files(&*env).is_empty(), "no value file was written");
    // A large value's bytes are in a value file only, never in a log or a table.
    let probe = value(9, 3, MIN + 9 * 37);
    assert_eq!(model.get(&key(9)), Some(&probe));
    let holding: Vec<String> = file_names(&*env, Path::new(DIR), |_| true)
        .into_iter()
        .filter(|name| {
            let bytes = read_file(&*env, &Path::new(DIR).join(name)).unwrap();
            bytes.windows(probe.len()).any(|w| w == probe)
        })
        .collect();
    // Garbage collection may have relocated it, leaving the original beside the copy until
    // the file is collected: two value files then.
    assert!(!holding.is_empty(), "no file holds the large value");
    assert!(
        holding.iter().all(|name| name.ends_with(".vlog")),
        "files holding a large value: {holding:?}"
    );
    let db = DB::open(DIR, separating(&env)).unwrap();
    check_reads(&db, &ReadOptions::default(), &model);
    db.compact_range(None, None).unwrap();
    drop(db);
    let db = DB::open(DIR, separating(&env)).unwrap();
    check_reads(&db, &ReadOptions::default(), &model);
}

/// A database with one large value, closed; returns the value file's name.
fn one_large_value(env: &Arc<MemEnv>) -> String {
    let db = DB::open(DIR, separating(env)).unwrap();
    db.put(b"small", b"inline").unwrap();
    db.put(b"large", &value(1, 1, 1000)).unwrap();
    drop(db);
    let files = value_files(&**env);
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

fn assert_names_the_value_file(err: &Error, file: &str) {
    let Error::Corruption(c) = err else {
        panic!("not a corruption error: {err}");
    };
    assert!(
        c.file.as_deref().is_some_and(|f| f.ends_with(file)),
        "{err}"
    );
    assert_eq!(c.offset, Some(0), "{err}");
}

#[test]
fn a_damaged_or_missing_value_is_a_corruption_error_naming_the_file_and_offset() {
    for damage in ["flip", "truncate", "delete"] {
        let env = Arc::new(MemEnv::new());
        let file = one_large_value(&env);
        let path = Path::new(DIR).join(&file);
        match damage {
            "flip" => rewrite_file(&*env, &path, |bytes| bytes[500] ^= 0x20),
            "truncate" => rewrite_file(&*env, &path, |bytes| bytes.truncate(900)),
            _ => env.remove_file(&path).unwrap(),
        }
        // The log holds the pointer and the value file is damaged: a paranoid open refuses,
        // naming the value file; a plain one leaves the write out as never synced.
        let paranoid = Options {
            paranoid_checks: true,
            ..separating(&env)
        };
        let err = DB::open(DIR, paranoid).unwrap_err();
        assert_names_the_value_file(&err, &file);
        let db = DB::open(DIR, separating(&env)).unwrap();
        assert_eq!(db.get(b"large").unwrap(), None, "{damage}");
        assert_eq!(db.get(b"small").unwrap(), Some(b"inline".to_vec()));
    }
}

#[test]
fn damage_after_a_flush_fails_reads_of_that_value_only() {
    for damage in ["flip", "truncate", "delete"] {
        let env = Arc::new(MemEnv::new());
        let db = DB::open(DIR, separating(&env)).unwrap();
        db.put(b"small", b"inline").unwrap();
        db.put(b"large", &value(1, 1, 1000)).unwrap();
        db.compact_range(None, None).unwrap();
        let file = value_files(&*env).remove(0);
        let path = Path::new(DIR).join(&file);
        match damage {
            "flip" => rewrite_file(&*env, &path, |bytes| bytes[500] ^= 0x20),
            "truncate" => rewrite_file(&*env, &path, |bytes| bytes.truncate(900)),
            _ => env.remove_file(&path).unwrap(),
        }
        drop(db);
        let db = DB::open(DIR, separating(&env)).unwrap();
        assert_eq!(db.get(b"small").unwrap(), Some(b"inline".to_vec()));
        let err = db.get(b"large").unwrap_err();
        assert_names_the_value_file(&err, &file);
        let err = db.get_many(&[b"small".as_slice(), b"large"]).unwrap_err();
        assert_names_the_value_file(&err, &file);
        let mut it = db.iter();
        it.seek_to_first();
        assert!(
            !it.valid(),
            "{damage}: the iterator went past a value it could not read"
        );
        assert_names_the_value_file(&it.status().unwrap_err(), &file);
    }
}

/// Also with value files cut at 64 KiB, so that writes fill and replace several files
/// between two synced writes: a replaced file is synced by the next sync, not by the write
/// that filled it (`vlog/writer.rs`), and a synced write must find it synced.
#[test]
fn a_power_loss_keeps_a_prefix_of_the_writes_with_every_synced_one() {
    for (mode, small_files) in [
        PowerLossMode::DropUnsynced,
        PowerLossMode::TornTail,
        PowerLossMode::GarbageTail,
    ]
    .into_iter()
    .flat_map(|mode| [(mode, false), (mode, true)])
    {
        let separating = |env: &FaultEnv| {
            let options = separating(env);
            let separation = options.value_separation.unwrap();
            Options {
                value_separation: Some(if small_files {
                    separation.with_file_size(64 << 10)
                } else {
                    separation
                }),
                ..options
            }
        };
        for seed in 0..6u64 {
            let env = FaultEnv::new(Arc::new(MemEnv::new()));
            let db = DB::open(DIR, separating(&env)).unwrap();
            let mut last_synced = None;
            for i in 0..400u32 {
                let sync = i % 37 == seed as u32;
                let v = value(
                    i,
                    0,
                    if i % 3 == 0 {
                        30
                    } else {
                        MIN + (i as usize * 53) % 2000
                    },
                );
                db.put_opt(&WriteOptions { sync }, &key(i), &v).unwrap();
                if sync {
                    last_synced = Some(i);
                }
            }
            env.crash_now();
            drop(db);
            env.simulate_power_loss(mode, seed).unwrap();
            env.clear_faults();
            let db = DB::open(DIR, separating(&env))
                .unwrap_or_else(|e| panic!("{mode:?} seed {seed}: {e}"));
            let got = scan(&db, &ReadOptions::default());
            // Keys were written in order, one each: what survives is keys 0..n.
            let n = got.len() as u32;
            for i in 0..n {
                assert_eq!(
                    got.get(&key(i)),
                    Some(&value(
                        i,
                        0,
                        if i % 3 == 0 {
                            30
                        } else {
                            MIN + (i as usize * 53) % 2000
                        }
                    )),
                    "{mode:?} seed {seed}: write {i} of a {n}-write prefix"
                );
            }
            if let Some(s) = last_synced {
                assert!(
                    n > s,
                    "{mode:?} seed {seed} small files {small_files}: synced write {s} lost \
                     ({n} kept)"
                );
            }
            if small_files {
                assert!(value_files(&env).len() > 2, "{:?}", value_files(&env));
            }
            // The database takes writes after, and they survive a clean reopen.
            db.put(b"after", &value(9, 9, 500)).unwrap();
            drop(db);
            let db = DB::open(DIR, separating(&env)).unwrap();
            assert_eq!(db.get(b"after").unwrap(), Some(value(9, 9, 500)));
        }
    }
}

#[test]
fn compaction_filters_checkpoints_and_read_only_handles_are_refused_with_value_separation() {
    let env = Arc::new(MemEnv::new());
    struct KeepAll;
    impl strata::CompactionFilter for KeepAll {
        fn filter(&self, _: usize, _: &[u8], _: &[u8]) -> strata::FilterDecision {
            strata::FilterDecision::Keep
        }
    }
    let options = Options {
        compaction_filter: Some(Arc::new(KeepAll)),
        ..separating(&env)
    };
    let err = DB::open(DIR, options).unwrap_err();
    assert!(matches!(err, Error::NotSupported(_)), "{err}");
    let db = DB::open(DIR, separating(&env)).unwrap();
    let err = db.checkpoint("/copy").unwrap_err();
    assert!(matches!(err, Error::NotSupported(_)), "{err}");
    drop(db);
    let err = DB::open_read_only(DIR, separating(&env)).unwrap_err();
    assert!(matches!(err, Error::NotSupported(_)), "{err}");
    // Without the option the marker refuses it, naming the option.
    let err = DB::open_read_only(DIR, support::options(&env)).unwrap_err();
    assert!(
        err.to_string().contains("Options::value_separation"),
        "{err}"
    );
}

/// Every key with its value's length, by `iter_keys` forward and backward (which must agree).
fn key_lengths(db: &DB, options: &ReadOptions) -> BTreeMap<Vec<u8>, u64> {
    let mut forward = BTreeMap::new();
    let mut it = db.iter_keys_opt(options);
    it.seek_to_first();
    while it.valid() {
        forward.insert(it.key().to_vec(), it.value_len());
        it.next();
    }
    it.status().unwrap();
    let mut backward = Vec::new();
    it.seek_to_last();
    while it.valid() {
        backward.push((it.key().to_vec(), it.value_len()));
        it.prev();
    }
    it.status().unwrap();
    backward.reverse();
    assert_eq!(backward, forward.clone().into_iter().collect::<Vec<_>>());
    forward
}

#[test]
fn head_contains_and_keys_only_iteration_answer_from_the_tree_without_value_files() {
    let env = Arc::new(MemEnv::new());
    let db = DB::open(DIR, separating(&env)).unwrap();
    let mut lengths = BTreeMap::new();
    for i in 0..200u32 {
        let len = if i % 4 == 0 {
            10
        } else {
            MIN + i as usize * 11
        };
        db.put(&key(i), &value(i, 0, len)).unwrap();
        lengths.insert(key(i), len as u64);
        if i == 120 {
            // Half in tables, half in the memtable.
            db.compact_range(None, None).unwrap();
        }
    }
    let snapshot = db.snapshot();
    let at_snapshot = ReadOptions {
        snapshot: Some(snapshot.clone()),
        ..ReadOptions::default()
    };
    let before = lengths.clone();
    for i in (0..200u32).step_by(3) {
        db.put(&key(i), &value(i, 1, 5000)).unwrap();
        lengths.insert(key(i), 5000);
    }
    db.delete(&key(1)).unwrap();
    lengths.remove(&key(1));

    // Every value file damaged, then gone: head and iter_keys still answer, get cannot.
    let large = key(2);
    for name in value_files(&*env) {
        let path = Path::new(DIR).join(&name);
        rewrite_file(&*env, &path, |bytes| {
            bytes.iter_mut().for_each(|b| *b ^= 0xff)
        });
    }
    assert!(db.get(&large).unwrap_err().is_corruption());
    for name in value_files(&*env) {
        env.remove_file(&Path::new(DIR).join(name)).unwrap();
    }
    assert!(db.get(&large).unwrap_err().is_corruption());
    let mut it = db.iter();
    it.seek(&large);
    assert!(
        !it.valid() && it.status().is_err(),
        "an iterator read a deleted value file"
    );

    let all_keys: Vec<Vec<u8>> = (0..201u32).map(key).collect();
    for (options, expected) in [(ReadOptions::default(), &lengths), (at_snapshot, &before)] {
        assert_eq!(&key_lengths(&db, &options), expected);
        for i in 0..201u32 {
            assert_eq!(
                db.head_opt(&options, &key(i)).unwrap(),
                expected.get(&key(i)).copied(),
                "head {i}"
            );
            assert_eq!(
                db.contains_opt(&options, &key(i)).unwrap(),
                expected.contains_key(&key(i)),
                "contains {i}"
            );
        }
        let present: Vec<bool> = all_keys.iter().map(|k| expected.contains_key(k)).collect();
        assert_eq!(db.contains_many_opt(&options, &all_keys).unwrap(), present);
    }
}

#[test]
fn value_files_are_deleted_once_nothing_reaches_them_and_not_before() {
    let env = Arc::new(MemEnv::new());
    let options = Options {
        value_separation: Some(ValueSeparation::new(MIN).with_file_size(64 << 10)),
        ..separating(&env)
    };
    let db = DB::open(DIR, options.clone()).unwrap();
    let keys = 50u32;
    let write_round = |round: u32| {
        for i in 0..keys {
            db.put(&key(i), &value(i, round, 2000)).unwrap();
        }
    };
    write_round(0);
    let first_round_files = value_files(&*env);
    // Pins: an iterator holding the memtables and tables of round 0, and (from round 18) a
    // snapshot, which keeps every version from its own on.
    let mut pinned = db.iter();
    pinned.seek_to_first();
    let mut snapshot = None;
    let mut seen: std::collections::BTreeSet<String> = first_round_files.iter().cloned().collect();
    for round in 1..=20 {
        write_round(round);
        if round == 18 {
            snapshot = Some(db.snapshot());
        }
        if round % 4 == 0 {
            db.compact_range(None, None).unwrap();
        }
        seen.extend(value_files(&*env));
    }
    db.compact_range(None, None).unwrap();
    let now = value_files(&*env);
    for name in &first_round_files {
        assert!(now.contains(name), "{name}, pinned by an iterator, is gone");
    }
    assert!(
        now.len() * 2 < seen.len(),
        "unreachable value files are not deleted: {} of {} remain",
        now.len(),
        seen.len()
    );
    // The pinned readers still read every value of round 0.
    let mut count = 0;
    while pinned.valid() {
        let i = count;
        assert_eq!(pinned.key(), key(i));
        assert_eq!(pinned.value(), value(i, 0, 2000));
        pinned.next();
        count += 1;
    }
    pinned.status().unwrap();
    assert_eq!(count, keys);
    let at_snapshot = ReadOptions {
        snapshot: snapshot.clone(),
        ..ReadOptions::default()
    };
    for i in 0..keys {
        assert_eq!(
            db.get_opt(&at_snapshot, &key(i)).unwrap(),
            Some(value(i, 18, 2000))
        );
    }
    drop(at_snapshot);
    drop(snapshot);
    drop(pinned);

    // Unpinned: after one more compaction the first round's files go.
    db.put(b"nudge", &value(0, 99, 2000)).unwrap();
    db.compact_range(None, None).unwrap();
    let now = value_files(&*env);
    for name in &first_round_files[..first_round_files.len() - 1] {
        assert!(!now.contains(name), "{name} outlived every reader: {now:?}");
    }
    let total: u64 = db
        .property("strata.value-files.total-bytes")
        .unwrap()
        .parse()
        .unwrap();
    let live: u64 = db
        .property("strata.value-files.live-bytes")
        .unwrap()
        .parse()
        .unwrap();
    assert!(live > 0 && total >= live, "total {total}, live {live}");
    for i in 0..keys {
        assert_eq!(db.get(&key(i)).unwrap(), Some(value(i, 20, 2000)));
    }
    drop(db);
    let db = DB::open(DIR, options).unwrap();
    for i in 0..keys {
        assert_eq!(db.get(&key(i)).unwrap(), Some(value(i, 20, 2000)));
    }
}

/// On the real file system the value file being appended to is read through one mapping
/// past its end (`env/posix/growing.rs`): values read right after their write, by the writer
/// and by threads reading beside it, across many value files (files cut at 64 KiB, so the
/// reads cross file switches and garbage collection), come back whole, before and after a
/// reopen.
#[test]
fn values_read_right_after_their_write_on_the_real_file_system_come_back_whole() {
    use std::sync::atomic::{AtomicU32, Ordering};
    let dir = tempfile::tempdir().unwrap();
    let env: Arc<dyn Env> = Arc::new(strata::PosixEnv::new());
    let options = Options {
        value_separation: Some(ValueSeparation::new(MIN).with_file_size(64 << 10)),
        ..separating(&env)
    };
    let path = dir.path().join("db");
    let db = Arc::new(DB::open(&path, options.clone()).unwrap());
    let (keys, writes) = (300u32, 3000u32);
    let version = |n: u32| value(n % keys, n / keys, MIN + (n as usize * 53) % 3000);
    let written = Arc::new(AtomicU32::new(0));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (db, written) = (Arc::clone(&db), Arc::clone(&written));
            std::thread::spawn(move || loop {
                let n = written.load(Ordering::Acquire);
                if let Some(last) = n.checked_sub(1) {
                    let got = db.get(&key(last % keys)).unwrap().expect("written");
                    assert!(got.len() >= MIN, "{last}");
                }
                if n == writes {
                    break;
                }
            })
        })
        .collect();
    for n in 0..writes {
        db.put(&key(n % keys), &version(n)).unwrap();
        assert_eq!(db.get(&key(n % keys)).unwrap(), Some(version(n)), "{n}");
        written.store(n + 1, Ordering::Release);
    }
    for reader in readers {
        reader.join().unwrap();
    }
    let value_files = std::fs::read_dir(&path)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension() == Some("vlog".as_ref()))
        .count();
    assert!(value_files > 1, "{value_files} value files");
    let expect = |db: &DB| {
        for i in 0..keys {
            let n = writes - keys + i;
            assert_eq!(db.get(&key(i)).unwrap(), Some(version(n)), "{i}");
        }
    };
    expect(&db);
    drop(db);
    let db = DB::open(&path, options).unwrap();
    expect(&db);
}
