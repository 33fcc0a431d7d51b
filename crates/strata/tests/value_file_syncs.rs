//! Syncing value files (docs/design.md, section 4.4, "Order of writes"): a value file the next
//! one replaced is *retired*, not synced by the write that filled it, and the next sync (a
//! synced write, a flush, a relocation) syncs it without the value writer's lock
//! (`vlog/writer.rs`, `value_files::sync`). A synced write never returns while a file holding
//! earlier values is unsynced, fails when such a sync fails or panics (and never waits for
//! ever), and a power loss after a flush or a synced write keeps what they made durable.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use strata::testing::{EnvOp, FaultEnv, HookEnv, PowerLossMode};
use strata::{Env, Error, MemEnv, Options, ValueSeparation, WriteOptions, DB};
use support::files::file_names;

const DIR: &str = "/db";
const LEN: usize = 2000;
/// Long enough for a thread that is not blocked to finish a write.
const SETTLE: Duration = Duration::from_millis(300);
/// Longer than anything here takes unless it hangs.
const LIMIT: Duration = Duration::from_secs(20);

/// Every value separated, into value files cut at 64 KiB.
fn options(env: &impl support::TestEnv) -> Options {
    Options {
        value_separation: Some(ValueSeparation::new(100).with_file_size(64 << 10)),
        write_buffer_size: 64 << 10,
        ..support::options(env)
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

/// A value naming its key, so a misplaced one shows.
fn value(i: u32) -> Vec<u8> {
    format!("<{i}>").bytes().cycle().take(LEN).collect()
}

fn value_files(env: &dyn Env) -> Vec<String> {
    file_names(env, Path::new(DIR), |n| n.ends_with(".vlog"))
}

/// Puts keys from `from` on until `files` value files exist (in `listing`); returns the next
/// key.
fn fill_until(db: &DB, listing: &dyn Env, files: usize, from: u32) -> u32 {
    let mut n = from;
    while value_files(listing).len() < files {
        db.put(&key(n), &value(n)).unwrap();
        n += 1;
    }
    n
}

/// Crashes `db` (dropped without a clean close), loses power in `mode`, and reopens.
fn reopen_after_power_loss(fault: &FaultEnv, db: DB, mode: PowerLossMode, seed: u64) -> DB {
    fault.crash_now();
    drop(db);
    fault.simulate_power_loss(mode, seed).unwrap();
    fault.clear_faults();
    DB::open(DIR, options(fault)).unwrap_or_else(|e| panic!("{mode:?}: {e}"))
}

/// How many of the writes of keys `0..end` survive, checking that they are a prefix and
/// each intact (`what` names the case in failures).
fn surviving_prefix(db: &DB, end: u32, what: &str) -> u32 {
    let kept = (0..end)
        .take_while(|&i| db.get(&key(i)).unwrap().is_some())
        .count() as u32;
    for i in 0..end {
        let got = db.get(&key(i)).unwrap();
        assert_eq!(
            got,
            (i < kept).then(|| value(i)),
            "{what}: write {i} of a {kept}-write prefix"
        );
    }
    kept
}

/// The first sync of one value file, once armed, answered by a hook: `on_sync` runs on the
/// syncing thread and its answer is the sync's.
struct HeldSync {
    held: Arc<Mutex<Option<String>>>,
    armed: Arc<AtomicBool>,
}

impl HeldSync {
    /// An env over `inner` whose armed sync runs `on_sync`.
    fn env(
        inner: Arc<dyn Env>,
        on_sync: impl Fn() -> strata::Result<()> + Send + Sync + 'static,
    ) -> (HookEnv, HeldSync) {
        let held = Arc::new(Mutex::new(None::<String>));
        let armed = Arc::new(AtomicBool::new(false));
        let (name, on) = (Arc::clone(&held), Arc::clone(&armed));
        let env = HookEnv::new(inner, move |call| {
            let file = call
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned());
            if call.op == EnvOp::Sync
                && file.is_some()
                && *name.lock().unwrap() == file
                && on.swap(false, Ordering::SeqCst)
            {
                return on_sync();
            }
            Ok(())
        });
        (env, HeldSync { held, armed })
    }

    /// Arms the hook for the first of `files` (the oldest value file: the replaced one).
    fn arm_first(&self, files: &[String]) {
        *self.held.lock().unwrap() = files.first().cloned();
        self.armed.store(true, Ordering::SeqCst);
    }

    fn fired(&self) -> bool {
        !self.armed.load(Ordering::SeqCst)
    }
}

/// A gate the held sync waits at: `entered` hears when it is there, `release` lets it go on.
struct Gate {
    entered: Receiver<()>,
    release: Sender<()>,
}

/// A gate, and the `on_sync` that waits at it and then answers `then()`.
fn gate(
    then: impl Fn() -> strata::Result<()> + Send + Sync + 'static,
) -> (
    Gate,
    impl Fn() -> strata::Result<()> + Send + Sync + 'static,
) {
    let (entered_tx, entered) = channel();
    let (release, released) = channel();
    let (entered_tx, released) = (Mutex::new(entered_tx), Mutex::new(released));
    let on_sync = move || {
        entered_tx.lock().unwrap().send(()).unwrap();
        let _ = released.lock().unwrap().recv();
        then()
    };
    (Gate { entered, release }, on_sync)
}

fn injected(what: &str) -> Error {
    Error::io(what, std::io::Error::other("injected"))
}

/// A database whose first value file was replaced, with a flush (on a thread of its own)
/// held at the gate inside that file's sync, and a synced write (on another thread) started
/// behind it: returns the database, the gate, the flush, and the synced write's outcome.
fn synced_write_behind_a_held_flush(
    then: impl Fn() -> strata::Result<()> + Send + Sync + 'static,
) -> (
    Arc<DB>,
    Gate,
    std::thread::JoinHandle<()>,
    Receiver<strata::Result<()>>,
) {
    let mem: Arc<dyn Env> = Arc::new(MemEnv::new());
    let (gate, on_sync) = gate(then);
    let (env, held) = HeldSync::env(Arc::clone(&mem), on_sync);
    let db = Arc::new(DB::open(DIR, options(&env)).unwrap());
    let n = fill_until(&db, mem.as_ref(), 2, 0);
    held.arm_first(&value_files(mem.as_ref()));
    // A flush syncs the value files first: it takes the replaced one and is held there.
    let flushing = Arc::clone(&db);
    let flush = std::thread::spawn(move || {
        let _ = flushing.compact_range(None, None);
    });
    gate.entered
        .recv_timeout(LIMIT)
        .expect("the flush syncs the replaced file");
    assert!(held.fired());
    // Plain writes go on meanwhile: appends do not wait for that sync.
    db.put(&key(n), &value(n)).unwrap();
    let (done_tx, done) = channel();
    let writing = Arc::clone(&db);
    std::thread::spawn(move || {
        let synced = writing.put_opt(&WriteOptions { sync: true }, b"synced", &value(0));
        let _ = done_tx.send(synced);
    });
    (db, gate, flush, done)
}

/// While a flush syncs a replaced file (which may hold values written before), a synced write
/// does not return; once the sync ends, it does. (Threads of their own, not a scope: a write
/// left waiting fails the test instead of hanging it.)
#[test]
fn a_synced_write_waits_for_a_replaced_file_another_thread_is_syncing() {
    let (db, gate, flush, done) = synced_write_behind_a_held_flush(|| Ok(()));
    let returned_early = done.recv_timeout(SETTLE).is_ok();
    gate.release.send(()).unwrap();
    assert!(
        !returned_early,
        "a synced write returned while a file holding earlier values was being synced"
    );
    done.recv_timeout(LIMIT)
        .expect("the synced write ends once the sync it waits for does")
        .unwrap();
    flush.join().unwrap();
    assert_eq!(db.get(b"synced").unwrap(), Some(value(0)));
}

/// The sync a synced write waits for fails: the write fails (the file may hold values written
/// before it, which may never be durable).
#[test]
fn a_synced_write_waiting_for_a_failed_sync_of_a_replaced_file_fails() {
    let (_db, gate, flush, done) = synced_write_behind_a_held_flush(|| Err(injected("sync")));
    std::thread::sleep(SETTLE);
    gate.release.send(()).unwrap();
    let synced = done.recv_timeout(LIMIT).expect("the synced write ends");
    assert!(synced.is_err(), "a synced write succeeded: {synced:?}");
    flush.join().unwrap();
}

/// The sync a synced write waits for panics (an env's bug; the database turns background
/// panics into errors): the write fails instead of waiting for good holding the log, and the
/// database closes.
#[test]
fn a_panic_syncing_a_replaced_file_does_not_leave_a_synced_write_waiting() {
    let (db, gate, flush, done) =
        synced_write_behind_a_held_flush(|| panic!("injected: the env panics in a sync"));
    std::thread::sleep(SETTLE);
    gate.release.send(()).unwrap();
    let _ = flush.join();
    let synced = done
        .recv_timeout(LIMIT)
        .expect("the synced write still waits after the sync it waited for panicked");
    assert!(synced.is_err(), "the synced write succeeded");
    let (closed_tx, closed) = channel();
    std::thread::spawn(move || {
        drop(db);
        let _ = closed_tx.send(());
    });
    closed
        .recv_timeout(LIMIT)
        .expect("closing the database hangs");
}

/// A synced write's own sync of a replaced file fails: it fails, and so does every later write
/// (small and unsynced ones included: the file's tail is unknown). After a power loss the
/// database holds a prefix of the writes with the synced one acknowledged before.
#[test]
fn a_failed_sync_of_a_replaced_value_file_fails_every_later_write() {
    let fault = FaultEnv::new(Arc::new(MemEnv::new()));
    let (env, held) = HeldSync::env(Arc::new(fault.clone()), || Err(injected("sync")));
    let db = DB::open(DIR, options(&env)).unwrap();
    let synced_at = 3u32;
    for i in 0..=synced_at {
        let sync = i == synced_at;
        db.put_opt(&WriteOptions { sync }, &key(i), &value(i))
            .unwrap();
    }
    let n = fill_until(&db, &fault, 2, synced_at + 1);
    held.arm_first(&value_files(&fault));
    let failed = db.put_opt(&WriteOptions { sync: true }, &key(n), &value(n));
    assert!(failed.is_err(), "the synced write succeeded: {failed:?}");
    assert!(held.fired(), "the replaced file was not synced");
    assert!(
        db.put(b"small", b"v").is_err(),
        "a small write after the failure"
    );
    assert!(
        db.put(b"large", &value(7)).is_err(),
        "a large write after it"
    );
    let synced_small = db.put_opt(&WriteOptions { sync: true }, b"small", b"v");
    assert!(synced_small.is_err(), "a small synced write after it");
    let db = reopen_after_power_loss(&fault, db, PowerLossMode::DropUnsynced, 1);
    let kept = surviving_prefix(&db, n + 1, "after the failed sync");
    assert!(
        kept > synced_at,
        "synced write {synced_at} lost ({kept} kept)"
    );
}

/// A flush syncs the replaced files its memtable's pointers name before its table is recorded:
/// a power loss after it keeps every flushed write, though none was synced, and files replaced
/// after it do not disturb that.
#[test]
fn a_power_loss_after_a_flush_keeps_the_values_in_replaced_files() {
    for mode in [
        PowerLossMode::DropUnsynced,
        PowerLossMode::TornTail,
        PowerLossMode::GarbageTail,
    ] {
        let env = FaultEnv::new(Arc::new(MemEnv::new()));
        let db = DB::open(DIR, options(&env)).unwrap();
        let flushed = fill_until(&db, &env, 4, 0);
        db.compact_range(None, None).unwrap();
        let files = value_files(&env).len();
        let n = fill_until(&db, &env, files + 2, flushed);
        let db = reopen_after_power_loss(&env, db, mode, u64::from(n));
        let kept = surviving_prefix(&db, n, &format!("{mode:?}"));
        assert!(
            kept >= flushed,
            "{mode:?}: {kept} kept of {flushed} flushed"
        );
    }
}

/// A value file replaced while no file follows it (the next one could not be created) is
/// synced, with its directory entry, by the next synced write, though no current file is left
/// to sync the directory for.
#[test]
fn a_synced_write_after_a_failed_value_file_creation_makes_the_replaced_file_durable() {
    let fault = FaultEnv::new(Arc::new(MemEnv::new()));
    let armed = Arc::new(AtomicBool::new(false));
    let env = {
        let armed = Arc::clone(&armed);
        HookEnv::new(Arc::new(fault.clone()), move |call| {
            if call.op == EnvOp::NewWritableFile
                && call.path.extension().is_some_and(|e| e == "vlog")
                && armed.swap(false, Ordering::SeqCst)
            {
                return Err(injected("create value file"));
            }
            Ok(())
        })
    };
    let db = DB::open(DIR, options(&env)).unwrap();
    // The log's directory entry is synced before the first value file exists.
    db.put_opt(&WriteOptions { sync: true }, b"first", b"synced")
        .unwrap();
    db.put(&key(0), &value(0)).unwrap();
    armed.store(true, Ordering::SeqCst);
    let mut n = 1u32;
    while db.put(&key(n), &value(n)).is_ok() {
        n += 1;
    }
    assert!(!armed.load(Ordering::SeqCst));
    assert_eq!(value_files(&fault).len(), 1);
    db.put_opt(&WriteOptions { sync: true }, b"last", b"synced")
        .unwrap();
    let db = reopen_after_power_loss(&fault, db, PowerLossMode::DropUnsynced, 7);
    assert_eq!(db.get(b"last").unwrap().as_deref(), Some(&b"synced"[..]));
    for i in 0..n {
        assert_eq!(db.get(&key(i)).unwrap(), Some(value(i)), "{i}");
    }
}

/// A relocation syncing its current value file holds the relocations' writer (`vlog::Lane`)
/// through the sync: a pass deleting value files meanwhile (after a flush) must not hold the
/// writes' writer while it waits for that one, or every write's append waits for the
/// relocation's sync (what relocating to files of their own was to end).
#[test]
fn write_appends_do_not_wait_behind_a_deletion_pass_waiting_for_a_relocation_sync() {
    let mem: Arc<dyn Env> = Arc::new(MemEnv::new());
    let (gate, on_sync) = gate(|| Ok(()));
    // The newest value file a background thread appended to (only relocations do), and
    // whether the first sync of such a file while it is the newest is still to be held.
    let newest = Arc::new(Mutex::new(None::<std::path::PathBuf>));
    let armed = Arc::new(AtomicBool::new(true));
    // Told when the write made during the held sync appends its value.
    let (appended_tx, appended) = channel::<()>();
    let env = {
        let (newest, armed) = (Arc::clone(&newest), Arc::clone(&armed));
        let appended_tx = Mutex::new(appended_tx);
        HookEnv::new(Arc::clone(&mem), move |call| {
            let vlog = call.path.extension().is_some_and(|e| e == "vlog");
            let thread = std::thread::current();
            let name = thread.name().unwrap_or("");
            if vlog && call.op == EnvOp::Append && name.starts_with("strata-bg") {
                *newest.lock().unwrap() = Some(call.path.to_path_buf());
            }
            if vlog && call.op == EnvOp::Append && name == "during-the-sync" {
                let _ = appended_tx.lock().unwrap().send(());
            }
            if vlog
                && call.op == EnvOp::Sync
                && newest.lock().unwrap().as_deref() == Some(call.path)
                && armed.swap(false, Ordering::SeqCst)
            {
                return on_sync();
            }
            Ok(())
        })
    };
    let options = Options {
        value_separation: Some(ValueSeparation::new(100)),
        write_buffer_size: 64 << 10,
        ..support::options(&env)
    };
    let db = Arc::new(DB::open(DIR, options).unwrap());
    // Overwrites until a compaction relocates values and syncs them.
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (db, stop) = (Arc::clone(&db), Arc::clone(&stop));
        std::thread::spawn(move || {
            for round in 0..200u32 {
                for i in 0..300 {
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    db.put(&key(i), &value(i + round)).unwrap();
                }
            }
        })
    };
    gate.entered
        .recv_timeout(LIMIT)
        .expect("a relocation syncs the file it relocated to");
    stop.store(true, Ordering::SeqCst);
    // A flush, and after it a pass deleting value files, on a thread of its own (the
    // compaction after them waits for the held one).
    let compacting = Arc::clone(&db);
    let compact = std::thread::spawn(move || {
        let _ = compacting.compact_range(None, None);
    });
    std::thread::sleep(SETTLE);
    let writing = Arc::clone(&db);
    let during = std::thread::Builder::new()
        .name("during-the-sync".into())
        .spawn(move || writing.put(b"during", &value(0)))
        .unwrap();
    let waited = appended.recv_timeout(LIMIT / 4);
    gate.release.send(()).unwrap();
    writer.join().unwrap();
    compact.join().unwrap();
    during.join().unwrap().unwrap();
    waited.expect("a write's append waited for a relocation's sync");
}
