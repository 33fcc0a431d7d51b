//! `DB::checkpoint`: a copy at one point in time while writes go on, that opens with exactly
//! the data of that moment and passes `check`; links where it can and copies where it cannot;
//! and that a crash and power loss at any step leave the source intact and no partial copy
//! that opens.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use strata::testing::{FaultEnv, OpKind, PowerLossMode};
use strata::{Env, Error, MemEnv, Options, ReadOptions, WriteOptions, DB};

mod support;

use support::race_env::RaceEnv;
use support::state::Model;

/// Keys written in turn by the workload.
const KEYS: u64 = 500;

fn key(j: u64) -> Vec<u8> {
    format!("key{:04}", j % KEYS).into_bytes()
}

fn value(j: u64) -> Vec<u8> {
    format!("value{j}-{}", "v".repeat((j % 200) as usize)).into_bytes()
}

/// Write `j` of the workload: a deletion of `key(j)` for every seventh, a put otherwise.
fn is_delete(j: u64) -> bool {
    j % 7 == 3
}

fn apply(model: &mut Model, j: u64) {
    if is_delete(j) {
        model.remove(&key(j));
    } else {
        model.insert(key(j), value(j));
    }
}

fn write(db: &DB, j: u64, sync: bool) {
    let options = WriteOptions { sync };
    if is_delete(j) {
        db.delete_opt(&options, &key(j)).unwrap();
    } else {
        db.put_opt(&options, &key(j), &value(j)).unwrap();
    }
}

/// Every pair, each block's checksum verified.
fn scan(db: &DB) -> Model {
    let verified = ReadOptions {
        verify_checksums: true,
        ..ReadOptions::default()
    };
    support::state::scan(db, &verified).unwrap()
}

fn small(options: Options) -> Options {
    Options {
        write_buffer_size: 64 << 10,
        max_file_size: 1 << 20,
        ..options
    }
}

fn create(options: Options) -> Options {
    Options {
        create_if_missing: true,
        ..small(options)
    }
}

fn paranoid() -> Options {
    Options {
        paranoid_checks: true,
        ..Options::default()
    }
}

fn assert_checks_clean(path: &Path) {
    let report = strata::tools::check_db(path, &Options::default()).unwrap();
    assert!(report.is_ok(), "{}: {report:?}", path.display());
}

#[test]
fn a_checkpoint_opens_with_exactly_the_data_of_its_moment() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("db");
    let db = DB::open(&source, create(Options::default())).unwrap();
    let mut model = Model::new();
    for j in 0..6000 {
        write(&db, j, false);
        apply(&mut model, j);
    }
    let target = dir.path().join("checkpoint");
    db.checkpoint(&target).unwrap();
    for j in 6000..7000 {
        write(&db, j, false);
    }
    assert!(std::fs::read_dir(dir.path()).unwrap().all(|e| !e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .contains("checkpoint-tmp")));
    assert_checks_clean(&target);
    // Tables are hard links to the source's (same file system), logs are copies.
    let mut linked = 0;
    for entry in std::fs::read_dir(&target).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        let meta = entry.metadata().unwrap();
        if name.ends_with(".ldb") && source.join(&name).exists() {
            assert_eq!(
                meta.ino(),
                std::fs::metadata(source.join(&name)).unwrap().ino()
            );
            linked += 1;
        }
        if name.ends_with(".log") {
            assert_eq!(meta.nlink(), 1, "{name} is a copy");
        }
    }
    assert!(linked > 0, "the checkpoint holds tables");
    let copy = DB::open(&target, paranoid()).unwrap();
    assert_eq!(scan(&copy), model);
    // The copy is a database of its own: writing to it leaves the source alone.
    copy.put(b"only-in-copy", b"1").unwrap();
    copy.compact_range(None, None).unwrap();
    assert_eq!(db.get(b"only-in-copy").unwrap(), None);
    drop(db);
    let db = DB::open(&source, paranoid()).unwrap();
    let mut all = model.clone();
    for j in 6000..7000 {
        apply(&mut all, j);
    }
    assert_eq!(scan(&db), all);
}

#[test]
fn checkpoints_taken_under_load_hold_a_prefix_with_every_acknowledged_write() {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(DB::open(dir.path().join("db"), create(Options::default())).unwrap());
    let acked = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (db, acked, stop) = (Arc::clone(&db), Arc::clone(&acked), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut j = 0;
            while !stop.load(Ordering::Relaxed) {
                write(&db, j, false);
                j += 1;
                acked.store(j, Ordering::Release);
                if j % 5000 == 0 {
                    db.compact_range(None, None).unwrap();
                }
            }
        })
    };
    for round in 0..6 {
        while acked.load(Ordering::Acquire) < 3000 * (round + 1) {
            std::thread::yield_now();
        }
        let target = dir.path().join(format!("checkpoint{round}"));
        let before = acked.load(Ordering::Acquire);
        db.checkpoint(&target).unwrap();
        let after = acked.load(Ordering::Acquire) + 1; // one write may be in flight
        assert_checks_clean(&target);
        let copy = DB::open(&target, paranoid()).unwrap();
        let found = scan(&copy);
        // The copy holds writes 0..n for one n: at least every write acknowledged before the
        // call, at most those made by its end.
        let mut model = Model::new();
        for j in 0..before {
            apply(&mut model, j);
        }
        let mut n = before;
        while model != found {
            assert!(
                n < after,
                "round {round}: no prefix of {before}..={after} writes matches"
            );
            apply(&mut model, n);
            n += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
}

#[test]
fn a_checkpoint_refuses_a_target_that_exists() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(dir.path().join("db"), create(Options::default())).unwrap();
    let target = dir.path().join("taken");
    std::fs::create_dir(&target).unwrap();
    let err = db.checkpoint(&target).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0);
}

/// Found in review: checkpoints to one target shared one temporary directory, each clearing
/// what another had put there; one whose hard link failed (the name taken) fell back to a copy,
/// and creating the copy truncated the source's table through the other's hard link.
#[test]
fn concurrent_checkpoints_to_one_target_never_mix() {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(DB::open(dir.path().join("db"), create(Options::default())).unwrap());
    let mut model = Model::new();
    for j in 0..5000 {
        write(&db, j, false);
        apply(&mut model, j);
    }
    let target = dir.path().join("copy");
    // A temporary directory a crashed checkpoint left is no obstacle.
    std::fs::create_dir(dir.path().join("copy.checkpoint-tmp-1-0")).unwrap();
    let racers: Vec<_> = (0..4)
        .map(|_| {
            let (db, target) = (Arc::clone(&db), target.clone());
            std::thread::spawn(move || db.checkpoint(&target))
        })
        .collect();
    let won = racers
        .into_iter()
        .map(|racer| racer.join().unwrap())
        .filter(Result::is_ok)
        .count();
    assert!(won >= 1, "no checkpoint succeeded");
    // The source is whole: no checkpoint wrote through a hard link into its tables.
    assert_eq!(scan(&db), model);
    assert_checks_clean(&target);
    assert_eq!(scan(&DB::open(&target, paranoid()).unwrap()), model);
    // The losers cleaned up after themselves.
    let left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("copy.checkpoint-tmp"))
        .collect();
    assert_eq!(left, ["copy.checkpoint-tmp-1-0"]);
}

#[test]
fn a_checkpoint_across_file_systems_copies_the_tables() {
    // /dev/shm is a tmpfs, another file system than the temporary directory's.
    let shm = Path::new("/dev/shm");
    let dir = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir_in(shm).expect("this test needs /dev/shm");
    assert_ne!(
        std::fs::metadata(dir.path()).unwrap().dev(),
        std::fs::metadata(other.path()).unwrap().dev(),
        "this test needs /dev/shm on another file system than {}",
        dir.path().display()
    );
    let db = DB::open(dir.path().join("db"), create(Options::default())).unwrap();
    let mut model = Model::new();
    for j in 0..4000 {
        write(&db, j, false);
        apply(&mut model, j);
    }
    let target = other.path().join("copy");
    db.checkpoint(&target).unwrap();
    assert_checks_clean(&target);
    assert_eq!(scan(&DB::open(&target, paranoid()).unwrap()), model);
}

#[test]
fn a_checkpoint_of_a_read_only_handle_holds_what_the_handle_sees() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("db");
    let writer = DB::open(&source, create(Options::default())).unwrap();
    let mut model = Model::new();
    for j in 0..4000 {
        write(&writer, j, false);
        apply(&mut model, j);
    }
    let reader = DB::open_read_only(&source, Options::default()).unwrap();
    // The writer goes on, rewriting and deleting every table the reader holds.
    for j in 4000..9000 {
        write(&writer, j, false);
    }
    writer.compact_range(None, None).unwrap();
    let target = dir.path().join("copy");
    reader.checkpoint(&target).unwrap();
    assert_checks_clean(&target);
    assert_eq!(scan(&DB::open(&target, paranoid()).unwrap()), model);
    assert_eq!(scan(&reader), model);
}

/// A database's files (name and bytes) and what it holds.
type Files = (Vec<(String, Vec<u8>)>, Model);

/// The files of a database with a few tables, and what it holds: made once, copied into a
/// fresh env for each crash point.
fn base_database() -> &'static Files {
    static BASE: OnceLock<Files> = OnceLock::new();
    BASE.get_or_init(|| {
        let env = MemEnv::new();
        let db = DB::open(
            "/db",
            create(Options {
                env: Arc::new(env.clone()),
                write_buffer_size: 256 << 10,
                compression: strata::CompressionType::None,
                ..Options::default()
            }),
        )
        .unwrap();
        let mut model = Model::new();
        for i in 0..6_000 {
            let (k, v) = (format!("table{i:06}"), format!("{i}-{}", "t".repeat(150)));
            db.put(k.as_bytes(), v.as_bytes()).unwrap();
            model.insert(k.into_bytes(), v.into_bytes());
        }
        db.compact_range(None, None).unwrap();
        drop(db);
        let files = env
            .children(Path::new("/db"))
            .unwrap()
            .into_iter()
            .map(|name| {
                let path = Path::new("/db").join(&name);
                let mut bytes = Vec::new();
                let file = env.new_random_access_file(&path).unwrap();
                let mut buf = vec![0u8; 1 << 16];
                loop {
                    let n = file.read_at(bytes.len() as u64, &mut buf).unwrap();
                    if n == 0 {
                        break;
                    }
                    bytes.extend_from_slice(&buf[..n]);
                }
                (name, bytes)
            })
            .collect();
        (files, model)
    })
}

/// The base database in a fresh env under fault injection, open at `/db` and idle (nothing
/// left to flush or compact), with synced writes in its log; and what it holds.
fn idle_source(env: &FaultEnv) -> (DB, Model) {
    let (files, base) = base_database();
    env.create_dir(Path::new("/db")).unwrap();
    for (name, bytes) in files {
        let mut file = env.new_writable_file(&Path::new("/db").join(name)).unwrap();
        file.append(bytes).unwrap();
        file.sync().unwrap();
    }
    env.sync_dir(Path::new("/db")).unwrap();
    let db = DB::open(
        "/db",
        create(Options {
            env: Arc::new(env.clone()),
            ..Options::default()
        }),
    )
    .unwrap();
    let mut model = base.clone();
    for j in 0..100 {
        write(&db, j, true);
        apply(&mut model, j);
    }
    (db, model)
}

#[test]
fn a_power_loss_during_a_checkpoint_leaves_the_source_and_no_partial_copy() {
    let modes = [
        PowerLossMode::DropUnsynced,
        PowerLossMode::TornTail,
        PowerLossMode::GarbageTail,
    ];
    let mut crashes = 0;
    // A checkpoint takes no lock.
    for kind in OpKind::ALL.into_iter().filter(|&kind| kind != OpKind::Lock) {
        for n in 1.. {
            let env = FaultEnv::new(Arc::new(MemEnv::new()));
            let (db, model) = idle_source(&env);
            env.crash_after(kind, n);
            let result = db.checkpoint("/copy");
            let crashed = env.crash_point().is_some();
            if !crashed {
                // Past the checkpoint's last operation of this kind.
                result.unwrap();
            }
            drop(db);
            let mode = modes[(n as usize) % modes.len()];
            env.simulate_power_loss(mode, n).unwrap();
            env.clear_faults();
            let context = format!("crash after {kind:?} #{n} ({mode:?})");
            let options = || Options {
                env: Arc::new(env.clone()),
                paranoid_checks: true,
                ..Options::default()
            };
            // The source is as it was: the checkpoint wrote nothing into it.
            let source = DB::open("/db", options()).unwrap();
            assert_eq!(scan(&source), model, "{context}: source");
            drop(source);
            // The target is absent or whole; a leftover temporary directory never opens as
            // less than the whole copy.
            let dirs: Vec<String> = env
                .children(Path::new("/"))
                .unwrap()
                .into_iter()
                .filter(|name| name.starts_with("copy"))
                .map(|name| format!("/{name}"))
                .collect();
            assert!(dirs.len() <= 1, "{context}: {dirs:?}");
            for dir in &dirs {
                match DB::open(dir, options()) {
                    Ok(copy) => assert_eq!(scan(&copy), model, "{context}: {dir}"),
                    Err(e) => assert!(
                        dir.contains(".checkpoint-tmp-") && matches!(e, Error::InvalidArgument(_)),
                        "{context}: {dir} exists but does not open: {e}"
                    ),
                }
            }
            if !crashed {
                assert!(env.file_exists(Path::new("/copy")), "{context}");
                break;
            }
            crashes += 1;
        }
    }
    assert!(crashes > 30, "only {crashes} crash points");
}

/// Found by the C API's test: a read-only handle keeps no log it found no record in, so its
/// checkpoint lacked the (empty) live log the manifest names, and opening it with
/// `paranoid_checks` failed.
#[test]
fn a_checkpoint_of_a_read_only_handle_holds_the_live_log_even_while_empty() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("db");
    let writer = DB::open(&source, create(Options::default())).unwrap();
    let mut model = Model::new();
    for j in 0..3000 {
        write(&writer, j, false);
        apply(&mut model, j);
    }
    // The flush leaves the live log empty.
    writer.compact_range(None, None).unwrap();
    let reader = DB::open_read_only(&source, Options::default()).unwrap();
    let target = dir.path().join("copy");
    reader.checkpoint(&target).unwrap();
    assert_checks_clean(&target);
    assert_eq!(scan(&DB::open(&target, paranoid()).unwrap()), model);
}

#[test]
fn a_checkpoint_fails_when_the_log_taking_writes_was_deleted_behind_the_databases_back() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(dir.path().join("db"), create(Options::default())).unwrap();
    db.put(b"k", b"v").unwrap();
    for entry in std::fs::read_dir(dir.path().join("db")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "log") {
            std::fs::remove_file(path).unwrap();
        }
    }
    let err = db.checkpoint(dir.path().join("copy")).unwrap_err();
    assert!(err.is_corruption(), "{err}");
    // Nothing is left behind: no target, no temporary directory.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["db"]);
}

#[test]
fn a_checkpoint_racing_a_flush_and_a_compaction_keeps_its_moment() {
    let dir = tempfile::tempdir().unwrap();
    let env = RaceEnv::new();
    let db = Arc::new(
        DB::open(
            dir.path().join("db"),
            create(Options {
                env: env.env(),
                ..Options::default()
            }),
        )
        .unwrap(),
    );
    let mut model = Model::new();
    for j in 0..4000 {
        write(&db, j, false);
        apply(&mut model, j);
    }
    // The hook env cannot link, so the checkpoint copies the tables after fixing its moment.
    // When it opens the first of them, the writer overwrites every key, flushes (its logs
    // go) and compacts everything (the tables the checkpoint holds are rewritten).
    let hook_db = Arc::clone(&db);
    let checkpointing = std::thread::current().id();
    let logs_before: Vec<_> = std::fs::read_dir(dir.path().join("db"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    env.arm(
        move |path| {
            std::thread::current().id() == checkpointing
                && path.extension().is_some_and(|e| e == "ldb")
        },
        move |_| {
            for j in 4000..9000 {
                write(&hook_db, j, false);
            }
            hook_db.compact_range(None, None).unwrap();
        },
    );
    let target = dir.path().join("copy");
    db.checkpoint(&target).unwrap();
    assert_eq!(env.fired(), 1, "the race was staged");
    assert!(
        logs_before.iter().all(|log| !log.exists()),
        "the logs of the checkpoint's moment were deleted while it copied them"
    );
    assert_checks_clean(&target);
    assert_eq!(scan(&DB::open(&target, paranoid()).unwrap()), model);
}
