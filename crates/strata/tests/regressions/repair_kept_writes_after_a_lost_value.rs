//! Repair skipped a log record whose separated value was lost and went on with the records
//! after it (found by `survives_power_loss.rs`, seed 10372713005361029475, in CI: a power loss
//! while a manifest edit was written left garbage that only repair gets past). The value of an
//! unsynced write was not in its value file, but later writes with small values, kept in the
//! log itself, were: repair kept them and the database held later writes without an earlier
//! one, a state no sequence of acknowledged writes gives. A sync covers every value appended
//! before it, so a lost value means that write and every later one were never durable; an
//! open stops replaying there, and now so does repair, leaving out the later logs too.

use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use strata::testing::{EnvOp, HookEnv};
use strata::{Env, Error, MemEnv, Options, ReadOptions, ValueSeparation, WriteOptions, DB};

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

/// Cuts the value file holding `value(lost)` inside that value's record.
fn lose_value(env: &MemEnv, lost: u32) {
    let lost = value(lost);
    for number in support::files::numbered_files(env, Path::new(DIR), ".vlog") {
        let path = Path::new(DIR).join(format!("{number:06}.vlog"));
        let mut found = false;
        support::files::rewrite_file(env, &path, |bytes| {
            if let Some(at) = bytes.windows(lost.len()).position(|w| w == lost) {
                bytes.truncate(at + 1);
                found = true;
            }
        });
        if found {
            return;
        }
    }
    panic!("no value file holds the value");
}

/// Every key and value of the database.
fn scan(db: &DB) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut it = db.iter_opt(&ReadOptions::default());
    it.seek_to_first();
    let mut all = Vec::new();
    while it.valid() {
        all.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().unwrap();
    all
}

/// Repairs, then checks that the database holds exactly writes `0..kept`.
fn repair_keeps(env: &Arc<MemEnv>, kept: u32) {
    strata::repair(DIR, &separating(env)).unwrap();
    let db = DB::open(DIR, separating(env)).unwrap();
    let all = scan(&db);
    let expected: Vec<_> = (0..kept).map(|i| (key(i), value(i))).collect();
    let names = |all: &[(Vec<u8>, Vec<u8>)]| {
        all.iter()
            .map(|(k, _)| String::from_utf8_lossy(k).into_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&all), names(&expected), "keys after repair");
    assert_eq!(all, expected, "values after repair");
}

#[test]
fn repair_keeps_the_writes_before_a_lost_value_and_none_after() {
    let env = Arc::new(MemEnv::new());
    let db = DB::open(DIR, separating(&env)).unwrap();
    for i in 0..WRITES {
        db.put(&key(i), &value(i)).unwrap();
    }
    drop(db);
    // The value file loses the values of the even writes from FIRST_LOST on (never synced);
    // the log keeps every record.
    lose_value(&env, FIRST_LOST);
    repair_keeps(&env, FIRST_LOST);
}

/// A copy of the directory (what a crash leaves) with two live logs: the first one full, the
/// second one holding the five writes after the one that switched to it. Returns it with the
/// number of the first write in the second log.
fn two_live_logs() -> (Arc<MemEnv>, u32) {
    let env = Arc::new(MemEnv::new());
    // Flushes are held before they write a table: the full memtable's log stays beside the
    // next one.
    let held = Arc::new(AtomicBool::new(true));
    let holding: Arc<dyn Env> = {
        let held = Arc::clone(&held);
        Arc::new(HookEnv::new(env.clone(), move |call| {
            let table = call.path.extension().is_some_and(|e| e == "ldb");
            while call.op == EnvOp::NewWritableFile && table && held.load(AtomicOrdering::SeqCst) {
                thread::sleep(Duration::from_millis(1));
            }
            Ok(())
        }))
    };
    let options = Options {
        env: holding,
        write_buffer_size: 64 << 10,
        ..separating(&env)
    };
    let db = DB::open(DIR, options).unwrap();
    let logs = || support::files::numbered_files(&*env, Path::new(DIR), ".log").len();
    let mut first_in_second_log = None;
    for i in 0.. {
        db.put(&key(i), &value(i)).unwrap();
        if logs() > 1 {
            first_in_second_log.get_or_insert(i);
        }
        if first_in_second_log.is_some_and(|first| i >= first + 5) {
            break;
        }
        assert!(i < 100_000, "the memtable never switched logs");
    }
    let crashed = Arc::new(MemEnv::new());
    support::files::copy_dir(&*env, &*crashed, Path::new(DIR));
    held.store(false, AtomicOrdering::SeqCst);
    drop(db);
    let first_in_second_log = first_in_second_log.unwrap();
    assert!(
        first_in_second_log > 20,
        "{first_in_second_log} writes in the first log"
    );
    assert_eq!(
        support::files::numbered_files(&*crashed, Path::new(DIR), ".log").len(),
        2,
        "logs in the copy"
    );
    (crashed, first_in_second_log)
}

#[test]
fn a_lost_value_leaves_out_the_later_logs_too() {
    let (crashed, first_in_second_log) = two_live_logs();
    // An even write ten before the switch loses its value: the first log's writes after it,
    // and the second log's, must all go.
    let lost = (first_in_second_log - 10) & !1;
    lose_value(&crashed, lost);
    repair_keeps(&crashed, lost);
}

/// Found in the review of the change above: repair kept every log's writes whatever their
/// sequence numbers, so a power loss that took the tail of one log but not the next (a switch
/// syncs neither) left later writes without earlier ones. Recovery stops at such a jump.
#[test]
fn a_live_log_that_does_not_continue_the_one_before_is_left_out() {
    let (crashed, first_in_second_log) = two_live_logs();
    let first_log = support::files::numbered_files(&*crashed, Path::new(DIR), ".log")
        .first()
        .map(|number| Path::new(DIR).join(format!("{number:06}.log")))
        .unwrap();
    // The first log loses its last quarter: a record cut short, and the ones after it.
    support::files::rewrite_file(&*crashed, &first_log, |bytes| {
        bytes.truncate(bytes.len() * 3 / 4)
    });
    strata::repair(DIR, &separating(&crashed)).unwrap();
    let db = DB::open(DIR, separating(&crashed)).unwrap();
    let all = scan(&db);
    let kept = all.len() as u32;
    assert!(
        (1..first_in_second_log).contains(&kept),
        "{kept} writes kept, the second log starting at write {first_in_second_log}"
    );
    let expected: Vec<_> = (0..kept).map(|i| (key(i), value(i))).collect();
    assert!(all == expected, "not the first {kept} writes");
}

/// `env`, with every removal of a log failing while `failing`.
fn failing_log_removals(env: &Arc<MemEnv>, failing: &Arc<AtomicBool>) -> Arc<dyn Env> {
    let failing = Arc::clone(failing);
    Arc::new(HookEnv::new(env.clone(), move |call| {
        let log = call.path.extension().is_some_and(|e| e == "log");
        if call.op == EnvOp::RemoveFile && log && failing.load(AtomicOrdering::SeqCst) {
            return Err(Error::Io {
                context: format!("injected, {}", call.path.display()),
                source: Arc::new(io::Error::other("EIO")),
            });
        }
        Ok(())
    }))
}

/// Writes separated values, then deletes them all and compacts while logs cannot be removed:
/// the log holding the values is obsolete but stays. Returns the open database and the value
/// files it wrote, which nothing live names any more.
fn obsolete_log_left(env: &Arc<MemEnv>, failing: &Arc<AtomicBool>) -> (DB, Vec<u64>) {
    let options = Options {
        env: failing_log_removals(env, failing),
        ..separating(env)
    };
    let db = DB::open(DIR, options).unwrap();
    for i in (0..100).map(|i| i * 2) {
        db.put(&key(i), &value(i)).unwrap();
    }
    let files: Vec<u64> = support::files::numbered_files(&**env, Path::new(DIR), ".vlog")
        .into_iter()
        .collect();
    assert!(!files.is_empty());
    failing.store(true, AtomicOrdering::SeqCst);
    for i in (0..100).map(|i| i * 2) {
        db.delete(&key(i)).unwrap();
    }
    db.compact_range(None, None).unwrap();
    (db, files)
}

/// Found in the review of the change above: a deletion pass deleted unreferenced value files
/// before obsolete logs, and a log it then failed to remove (or a crash between the two) was
/// left naming values whose file was gone; repair, which replays every log it finds, stopped
/// at its first record and left out every later log, synced writes included.
#[test]
fn an_obsolete_log_left_on_disk_keeps_its_value_files_and_repair_every_later_write() {
    let env = Arc::new(MemEnv::new());
    let failing = Arc::new(AtomicBool::new(false));
    let (db, files) = obsolete_log_left(&env, &failing);
    // Synced writes with small values, in a later log.
    for i in 0..10 {
        let synced = WriteOptions { sync: true };
        db.put_opt(&synced, &key(1 + 2 * i), &value(1 + 2 * i))
            .unwrap();
    }
    drop(db);
    let left = support::files::numbered_files(&*env, Path::new(DIR), ".vlog");
    assert!(
        files.iter().all(|f| left.contains(f)),
        "value files {files:?} while an obsolete log names them: {left:?}"
    );
    strata::repair(DIR, &separating(&env)).unwrap();
    let db = DB::open(DIR, separating(&env)).unwrap();
    // The obsolete log's puts come back (their deletions were compacted away: a lost deletion
    // brings its key back, docs/guarantees.md) with their values, and so does every synced write.
    let all = scan(&db);
    for i in 0..10 {
        let i = 1 + 2 * i;
        assert!(
            all.contains(&(key(i), value(i))),
            "synced write {i} lost by repair"
        );
    }
}

#[test]
fn value_files_are_deleted_once_the_obsolete_log_is() {
    let env = Arc::new(MemEnv::new());
    let failing = Arc::new(AtomicBool::new(false));
    let (db, files) = obsolete_log_left(&env, &failing);
    failing.store(false, AtomicOrdering::SeqCst);
    db.put(&key(1), &value(1)).unwrap();
    db.compact_range(None, None).unwrap();
    let left = support::files::numbered_files(&*env, Path::new(DIR), ".vlog");
    assert!(
        files.iter().all(|f| !left.contains(f)),
        "value files {files:?} after the obsolete log went: {left:?}"
    );
}

/// Flushes the `LOG` records.
fn flushes(env: &MemEnv) -> usize {
    support::files::info_log(env, Path::new(DIR))
        .lines()
        .filter(|l| l.contains("level-0 table") && l.contains(": started"))
        .count()
}

/// An obsolete log is left on disk and its value files are lost (damage, or a database an
/// older version collected): the manifest says its writes reached tables, so repair leaves out
/// only the writes naming lost values and keeps every later log.
#[test]
fn a_lost_value_in_an_obsolete_log_costs_no_later_write() {
    let env = Arc::new(MemEnv::new());
    let failing = Arc::new(AtomicBool::new(false));
    let (db, files) = obsolete_log_left(&env, &failing);
    for i in 0..10 {
        let synced = WriteOptions { sync: true };
        db.put_opt(&synced, &key(1 + 2 * i), &value(1 + 2 * i))
            .unwrap();
    }
    drop(db);
    for number in files {
        env.remove_file(&Path::new(DIR).join(format!("{number:06}.vlog")))
            .unwrap();
    }
    strata::repair(DIR, &separating(&env)).unwrap();
    let db = DB::open(DIR, separating(&env)).unwrap();
    let all = scan(&db);
    for i in 0..10 {
        let i = 1 + 2 * i;
        assert!(
            all.contains(&(key(i), value(i))),
            "synced write {i} lost by repair"
        );
    }
}

/// Found in the review: while an obsolete log could not be removed, the value files nothing
/// reached were kept for the plan, which chose them for collection and, finding nothing to
/// relocate, asked for a flush at every write.
#[test]
fn a_log_that_cannot_be_removed_costs_no_flushes() {
    let env = Arc::new(MemEnv::new());
    let failing = Arc::new(AtomicBool::new(false));
    let (db, _) = obsolete_log_left(&env, &failing);
    thread::sleep(Duration::from_millis(100));
    let before = flushes(&env);
    for i in 0..100 {
        db.put(&key(1000 + i), b"small").unwrap();
        thread::sleep(Duration::from_millis(2));
    }
    let flushed = flushes(&env) - before;
    assert!(flushed <= 2, "{flushed} flushes for 100 small writes");
}
