//! Recovery across several live write-ahead logs: a memtable switch syncs nothing, a `sync`
//! write syncs the older live logs first, and recovery skips a log that does not continue the
//! sequence numbers where the earlier ones end (`db/wal.rs`). These tests hold the flush of the
//! immutable memtable back so that two logs are live when the process dies, then check that a
//! crash keeps every write, that a power loss keeps a prefix holding every synced write, and
//! that no recovery mistakes an intact history for a lost one.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use strata::testing::{
    encode_version_edit, read_log_file, version_edit_fields, write_log_file, EnvCall, EnvOp,
    FaultEnv, HookEnv, InjectedError, OpKind, PowerLossMode,
};
use strata::{Env, Options, WriteBatch, WriteOptions, DB};
use support::files::{append_raw, copy_dir, file_names, rewrite_file};
use support::trials::wait_until;
use support::{fault_env, TestEnv};

const DIR: &str = "/db";
const VALUE_LEN: usize = 1000;

/// A gate that holds back the creation of tables (`.ldb`) while it is closed, so the flush of
/// an immutable memtable waits and its log stays live: the hook of the databases' env.
/// Clones share one gate.
#[derive(Clone, Default)]
struct Gate(Arc<GateShared>);

#[derive(Default)]
struct GateShared {
    state: Mutex<GateState>,
    /// Signalled when the gate opens or lets a creation through.
    wake: Condvar,
}

#[derive(Default)]
struct GateState {
    closed: bool,
    waiting: usize,
    /// Table creations let through although the gate is closed.
    passes: usize,
}

impl Gate {
    /// An env over `inner` whose table creations pass this gate first.
    fn env(&self, inner: &FaultEnv) -> HookEnv {
        let gate = self.clone();
        HookEnv::new(Arc::new(inner.clone()), move |call: &EnvCall<'_>| {
            let table = call.path.extension().is_some_and(|e| e == "ldb");
            if call.op == EnvOp::NewWritableFile && table {
                gate.pass();
            }
            Ok(())
        })
    }

    /// Waits while the gate is closed, unless a pass lets this creation through.
    fn pass(&self) {
        let mut state = self.0.state.lock();
        state.waiting += 1;
        while state.closed && state.passes == 0 {
            self.0.wake.wait(&mut state);
        }
        if state.closed {
            state.passes -= 1;
        }
        state.waiting -= 1;
    }

    fn close(&self) {
        self.0.state.lock().closed = true;
    }

    fn open(&self) {
        self.0.state.lock().closed = false;
        self.0.wake.notify_all();
    }

    /// Lets one table creation through the closed gate.
    fn let_one_through(&self) {
        self.0.state.lock().passes += 1;
        self.0.wake.notify_all();
    }

    /// Whether a table creation is held at the gate.
    fn flush_waiting(&self) -> bool {
        self.0.state.lock().waiting > 0
    }
}

fn options(env: &impl TestEnv, reuse_logs: bool) -> Options {
    Options {
        write_buffer_size: 64 << 10,
        reuse_logs,
        ..support::options(env)
    }
}

fn key(i: u64) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn value(i: u64) -> Vec<u8> {
    let mut v = format!("value{i}|").into_bytes();
    v.resize(VALUE_LEN, b'a' + (i % 26) as u8);
    v
}

/// The database's logs, oldest first.
fn log_names(env: &FaultEnv) -> Vec<String> {
    file_names(&**env.inner(), Path::new(DIR), |n| n.ends_with(".log"))
}

/// How many of the keys `0..written` the database holds as a prefix; panics on a hole or on a
/// wrong value.
fn prefix_len(db: &DB, written: u64, what: &str) -> u64 {
    let present: Vec<bool> = (0..written)
        .map(|i| match db.get(&key(i)).unwrap() {
            Some(v) => {
                assert_eq!(v, value(i), "{what}: key {i} has a wrong value");
                true
            }
            None => false,
        })
        .collect();
    let prefix = present.iter().take_while(|&&p| p).count();
    assert!(
        present[prefix..].iter().all(|&p| !p),
        "{what}: a hole after {prefix} writes: later ones present at {:?}",
        present
            .iter()
            .enumerate()
            .skip(prefix)
            .filter(|(_, &p)| p)
            .map(|(i, _)| i)
            .collect::<Vec<_>>()
    );
    prefix as u64
}

/// What a run left: the env, how many writes were acknowledged, and how many of them a power
/// loss must keep (every write up to the last synced one).
struct Run {
    env: FaultEnv,
    written: u64,
    must_keep: u64,
}

/// What [`two_live_logs`] does.
#[derive(Default)]
struct Plan {
    reuse_logs: bool,
    /// Writes into the newer log before the process dies.
    after: u64,
    /// The index of the write to sync (`u64::MAX`: the last one).
    sync_at: Option<u64>,
    /// The env of an earlier run to go on from.
    prior: Option<FaultEnv>,
    /// First let one memtable flush complete with this many writes in the log after it, so
    /// the manifest's recorded sequence is set while that log has writes.
    flushed_first: Option<u64>,
}

/// Opens a database, writes `0..` until the memtable switches and its flush is held at the
/// gate, then `plan.after` more writes into the new log. Then the process dies with both logs
/// live.
fn two_live_logs(plan: Plan) -> Run {
    let env = plan.prior.unwrap_or_else(fault_env);
    let gate = Gate::default();
    let db = DB::open(DIR, options(&gate.env(&env), plan.reuse_logs)).unwrap();
    let start = (0..).find(|&i| db.get(&key(i)).unwrap().is_none()).unwrap();
    let mut i = start;
    let mut must_keep = 0;
    let mut put = |i: u64, last: bool| {
        let sync = plan.sync_at == Some(i) || (last && plan.sync_at == Some(u64::MAX));
        db.put_opt(&WriteOptions { sync }, &key(i), &value(i))
            .unwrap();
        if sync {
            must_keep = i + 1;
        }
    };
    let fill_until_switch = |i: &mut u64, put: &mut dyn FnMut(u64, bool)| {
        let logs_before = log_names(&env).len();
        while log_names(&env).len() == logs_before {
            put(*i, false);
            *i += 1;
            assert!(*i - start < 5000, "no memtable switch");
        }
        wait_for_held_flush(&gate);
    };
    gate.close();
    if let Some(writes) = plan.flushed_first {
        fill_until_switch(&mut i, &mut put);
        for _ in 0..writes {
            put(i, false);
            i += 1;
        }
        gate.open();
        while log_names(&env).len() > 1 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        gate.close();
    }
    fill_until_switch(&mut i, &mut put);
    // A compaction finishing now would sync the directory: the new log's entry becomes
    // durable while the older log is still needed and its tail is not.
    env.sync_dir(Path::new(DIR)).unwrap();
    for n in 0..plan.after {
        put(i, n + 1 == plan.after);
        i += 1;
    }
    env.crash_now();
    gate.open();
    drop(db);
    Run {
        env,
        written: i,
        must_keep,
    }
}

/// Opens the gate when dropped, so a test that fails while a flush is held ends instead of
/// leaving the flush (and whoever waits for it) blocked.
struct OpenGateOnDrop<'a>(&'a Gate);

impl Drop for OpenGateOnDrop<'_> {
    fn drop(&mut self) {
        self.0.open();
    }
}

/// Opens a fresh database behind a closed gate and writes `0..` until the memtable switches
/// and its flush is held: two live logs. Returns the env, the gate, the database and the next
/// key to write.
fn held_switch() -> (FaultEnv, Gate, DB, u64) {
    let env = fault_env();
    let gate = Gate::default();
    let db = DB::open(DIR, options(&gate.env(&env), false)).unwrap();
    gate.close();
    let mut i = 0;
    while log_names(&env).len() == 1 {
        db.put(&key(i), &value(i)).unwrap();
        i += 1;
    }
    wait_for_held_flush(&gate);
    (env, gate, db, i)
}

/// Waits until the flush of the immutable memtable is held at the gate.
fn wait_for_held_flush(gate: &Gate) {
    wait_until("the held flush", Duration::from_secs(10), || {
        gate.flush_waiting()
    });
}

fn reopen(env: &FaultEnv, reuse_logs: bool) -> DB {
    env.clear_faults();
    DB::open(DIR, options(env, reuse_logs)).unwrap()
}

/// A crash of the process alone keeps every acknowledged write, with either log setting, and
/// over several crash-and-reopen cycles (the manifest's recorded sequence and the logs' first
/// sequences must agree every time, also after recoveries that reused a log).
#[test]
fn a_crash_with_two_live_logs_keeps_every_write_over_many_cycles() {
    for reuse_logs in [false, true] {
        let mut env = None;
        let mut total = 0;
        for cycle in 0..6u64 {
            // Alternate the setting across cycles too, and how much the second log holds.
            let reuse = if cycle % 2 == 0 {
                reuse_logs
            } else {
                !reuse_logs
            };
            let run = two_live_logs(Plan {
                reuse_logs: reuse,
                after: cycle * 7,
                prior: env.take(),
                flushed_first: (cycle % 3 == 1).then_some(cycle * 3),
                ..Plan::default()
            });
            let db = reopen(&run.env, reuse);
            let what = format!("reuse {reuse_logs}, cycle {cycle}");
            assert_eq!(prefix_len(&db, run.written, &what), run.written, "{what}");
            assert!(run.written > total);
            total = run.written;
            drop(db);
            env = Some(run.env);
        }
    }
}

/// A power loss with two live logs keeps a prefix of the writes that holds every write up to
/// the last synced one, whichever way the unsynced tails are cut.
#[test]
fn a_power_loss_with_two_live_logs_keeps_a_prefix_with_every_synced_write() {
    let modes = [
        PowerLossMode::DropUnsynced,
        PowerLossMode::TornTail,
        PowerLossMode::GarbageTail,
    ];
    let mut shorter = 0;
    for reuse_logs in [false, true] {
        for (m, &mode) in modes.iter().enumerate() {
            for seed in 0..8u64 {
                let mut rng = StdRng::seed_from_u64(seed * 31 + m as u64);
                let after = rng.gen_range(1..40);
                // No sync, a sync in the first log, or one in the second.
                let sync_at = match seed % 3 {
                    0 => None,
                    1 => Some(rng.gen_range(0..30)),
                    _ => Some(u64::MAX),
                };
                // Half the runs start from a database that crashed before, so the first live
                // log is one a recovery replayed (and, with `reuse_logs`, reused).
                let prior = (seed % 2 == 1).then(|| {
                    let run = two_live_logs(Plan {
                        reuse_logs,
                        after: 10,
                        ..Plan::default()
                    });
                    run.env.clear_faults();
                    run.env
                });
                let run = two_live_logs(Plan {
                    reuse_logs,
                    after,
                    sync_at,
                    prior,
                    flushed_first: (seed % 4 >= 2).then_some(after / 2),
                });
                run.env.simulate_power_loss(mode, seed).unwrap();
                let db = reopen(&run.env, reuse_logs);
                let what = format!("reuse {reuse_logs}, {mode:?}, seed {seed}, sync {sync_at:?}");
                let prefix = prefix_len(&db, run.written, &what);
                assert!(
                    prefix >= run.must_keep,
                    "{what}: synced write lost: {prefix} < {}",
                    run.must_keep
                );
                if prefix < run.written {
                    shorter += 1;
                }
                // Writing on and reopening keeps the prefix and the new writes.
                db.put(b"after", b"x").unwrap();
                drop(db);
                let db = reopen(&run.env, reuse_logs);
                assert_eq!(prefix_len(&db, run.written, &what), prefix, "{what}");
                assert_eq!(
                    db.get(b"after").unwrap().as_deref(),
                    Some(&b"x"[..]),
                    "{what}"
                );
            }
        }
    }
    assert!(
        shorter > 0,
        "no power loss lost anything: the test is vacuous"
    );
}

/// Sets up two live logs and a `sync` write whose `nth` log sync fails (1: the older log's,
/// 2: its own log's, 0: none). Returns the env after the process died, the writes made, the
/// acknowledged ones, and the ones a power loss must keep.
fn failing_sync(nth: u64) -> (FaultEnv, u64, u64, u64) {
    let (env, gate, db, mut i) = held_switch();
    db.put(&key(i), &value(i)).unwrap();
    i += 1;
    assert_eq!(log_names(&env).len(), 2, "two live logs");
    if nth > 0 {
        env.fail_after(OpKind::Sync, nth, InjectedError::Io);
    }
    let synced = db.put_opt(&WriteOptions { sync: true }, &key(i), &value(i));
    assert_eq!(synced.is_ok(), nth == 0, "{synced:?}");
    i += 1;
    let (acked, must_keep) = if synced.is_ok() { (i, i) } else { (i - 1, 0) };
    if synced.is_err() {
        assert!(
            db.put(&key(i), &value(i)).is_err(),
            "a write after a failed sync"
        );
    }
    env.crash_now();
    gate.open();
    drop(db);
    (env, i, acked, must_keep)
}

/// A `sync` write whose sync of an older live log (or of its own) fails returns the error and
/// stops later writes; a crash then keeps every acknowledged write, and a power loss a prefix
/// holding every write acknowledged as synced.
#[test]
fn a_sync_write_failing_half_way_keeps_a_prefix() {
    for nth in [0, 1, 2] {
        let (env, written, acked, _) = failing_sync(nth);
        let db = reopen(&env, false);
        let p = prefix_len(&db, written, &format!("crash, failing sync {nth}"));
        assert!(
            p >= acked,
            "failing sync {nth}: crash lost acknowledged writes: {p} < {acked}"
        );
        for mode in [PowerLossMode::DropUnsynced, PowerLossMode::TornTail] {
            for seed in 0..4 {
                let (env, written, _, must_keep) = failing_sync(nth);
                env.simulate_power_loss(mode, seed).unwrap();
                let db = reopen(&env, false);
                let what = format!("failing sync {nth}, {mode:?}, seed {seed}");
                let p = prefix_len(&db, written, &what);
                assert!(
                    p >= must_keep,
                    "{what}: synced write lost: {p} < {must_keep}"
                );
            }
        }
    }
}

/// Rewrites the manifest's last edit with `last_sequence`, as LevelDB records the live last
/// sequence in every edit (a compaction after a memtable switch records writes of the newer
/// log too).
fn set_manifest_last_sequence(env: &FaultEnv, last_sequence: u64) {
    let inner: &dyn Env = &**env.inner();
    let names = file_names(inner, Path::new(DIR), |n| n.starts_with("MANIFEST-"));
    let manifest: PathBuf = Path::new(DIR).join(names.last().unwrap());
    let read = read_log_file(inner, &manifest).unwrap();
    assert!(read.reports.is_empty(), "{:?}", read.reports);
    let mut records = read.records;
    let last = records.last_mut().unwrap();
    let mut fields = version_edit_fields(last).unwrap();
    fields.last_sequence = Some(last_sequence);
    *last = encode_version_edit(&fields).unwrap();
    let refs: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
    write_log_file(inner, &manifest, &refs).unwrap();
}

/// A LevelDB-written manifest records the live last sequence, which can lie past the first
/// write of the oldest live log and even of the next one. Recovery must not take the logs for
/// ones behind lost writes.
#[test]
fn a_manifest_sequence_past_the_logs_starts_is_no_gap() {
    for reuse_logs in [false, true] {
        let run = two_live_logs(Plan {
            reuse_logs,
            after: 20,
            ..Plan::default()
        });
        let logs = log_names(&run.env);
        assert!(logs.len() >= 2, "{logs:?}");
        // Past every write in both logs, and past the first log's writes only.
        for extra in [run.written + 5, run.written - 10] {
            let env = fault_env();
            copy_dir(&**run.env.inner(), &**env.inner(), Path::new(DIR));
            set_manifest_last_sequence(&env, extra);
            let db = reopen(&env, reuse_logs);
            let what = format!("reuse {reuse_logs}, manifest sequence {extra}");
            assert_eq!(prefix_len(&db, run.written, &what), run.written, "{what}");
            // New writes take sequence numbers past the manifest's: they win over old ones.
            db.put(&key(0), b"new").unwrap();
            assert_eq!(
                db.get(&key(0)).unwrap().as_deref(),
                Some(&b"new"[..]),
                "{what}"
            );
            db.compact_range(None, None).unwrap();
            drop(db);
            let db = reopen(&env, reuse_logs);
            assert_eq!(
                db.get(&key(0)).unwrap().as_deref(),
                Some(&b"new"[..]),
                "{what}"
            );
        }
    }
}

/// Empty batches take no sequence number but are logged; a log that starts with one, or is
/// made only of them, and forced switches of an empty memtable (`compact_range`), must not
/// read as a gap.
#[test]
fn empty_batches_and_forced_switches_are_no_gap() {
    for reuse_logs in [false, true] {
        let env = fault_env();
        let mut n = 0;
        for cycle in 0..4 {
            let db = reopen(&env, reuse_logs);
            db.write(&WriteBatch::new()).unwrap();
            db.compact_range(None, None).unwrap();
            db.write(&WriteBatch::new()).unwrap();
            for _ in 0..10 {
                db.put(&key(n), &value(n)).unwrap();
                n += 1;
            }
            db.compact_range(None, None).unwrap();
            db.write(&WriteBatch::new()).unwrap();
            db.compact_range(None, None).unwrap();
            db.write_opt(&WriteOptions { sync: true }, &WriteBatch::new())
                .unwrap();
            db.put(&key(n), &value(n)).unwrap();
            n += 1;
            env.crash_now();
            drop(db);
            let db = reopen(&env, reuse_logs);
            let what = format!("reuse {reuse_logs}, cycle {cycle}");
            assert_eq!(prefix_len(&db, n, &what), n, "{what}");
            drop(db);
        }
    }
}

/// The manifest edit of a flush records the sequence just before the log it makes the oldest
/// live one, even when that log already holds writes: recording the live last sequence (as
/// LevelDB does) would let recovery expect the next log to start past writes the oldest log
/// lost, and replay it behind a hole. Here the flush completes while the newer log holds
/// writes and a forced switch waits for it; a power loss then cuts the newer log.
#[test]
fn a_flush_records_the_sequence_before_the_live_log_so_its_lost_tail_is_found() {
    let mut skipped = 0;
    for mode in [PowerLossMode::TornTail, PowerLossMode::DropUnsynced] {
        for seed in 0..12u64 {
            let (env, gate, db, mut i) = held_switch();
            // Writes into the second log while the first one's flush is held.
            for _ in 0..20 {
                db.put(&key(i), &value(i)).unwrap();
                i += 1;
            }
            let first_two = log_names(&env);
            let written = std::thread::scope(|scope| {
                // A failed assertion must not leave the forced switch waiting at the gate.
                let _opens = OpenGateOnDrop(&gate);
                // A forced switch waits for the held flush, then starts a third log.
                let forced = scope.spawn(|| db.compact_range(None, None));
                std::thread::sleep(std::time::Duration::from_millis(20));
                gate.let_one_through();
                // The first log is obsolete once its flush is through, but its deletion is put
                // off when the next flush is already waiting: count the logs after it.
                let live = || {
                    log_names(&env)
                        .into_iter()
                        .filter(|n| *n > first_two[0])
                        .count()
                };
                for _ in 0..10_000 {
                    if live() == 2 && gate.flush_waiting() {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                assert_eq!(live(), 2, "the second and third logs");
                assert!(gate.flush_waiting(), "the third log's flush is held");
                env.sync_dir(Path::new(DIR)).unwrap();
                for _ in 0..5 {
                    db.put(&key(i), &value(i)).unwrap();
                    i += 1;
                }
                env.crash_now();
                gate.open();
                assert!(forced.join().unwrap().is_err(), "the process died");
                i
            });
            drop(db);
            env.simulate_power_loss(mode, seed).unwrap();
            let db = reopen(&env, false);
            let what = format!("{mode:?}, seed {seed}");
            let prefix = prefix_len(&db, written, &what);
            if prefix < written - 5 {
                skipped += 1;
            }
        }
    }
    assert!(
        skipped > 0,
        "no power loss cut the second log: the test is vacuous"
    );
}

/// Flips one byte of file `name`, `back` bytes before its end, behind the database's back.
fn flip_from_end(env: &FaultEnv, name: &str, back: usize) {
    rewrite_file(&**env.inner(), &Path::new(DIR).join(name), |bytes| {
        let at = bytes.len() - back;
        bytes[at] ^= 0x55;
    });
}

/// Two live logs with 30 writes after the switch: the run, the two log names (older first)
/// and how many writes the older log holds (those the newer one does not).
fn two_live_logs_split(reuse_logs: bool) -> (Run, Vec<String>, u64) {
    let run = two_live_logs(Plan {
        reuse_logs,
        after: 30,
        ..Plan::default()
    });
    let logs = log_names(&run.env);
    assert_eq!(logs.len(), 2, "{logs:?}");
    let inner: &dyn Env = &**run.env.inner();
    let newer = read_log_file(inner, &Path::new(DIR).join(&logs[1])).unwrap();
    let in_older = run.written - newer.records.len() as u64;
    (run, logs, in_older)
}

/// A power loss can leave garbage where an older log's unsynced tail was, and keep a later
/// log: the garbage reads as a damaged record, which recovery cannot tell apart from damage
/// on the disk. Either way the later logs are skipped, so the database keeps a prefix; damage
/// in the last block of a log followed by another live log therefore costs the later logs'
/// writes too (README, "Damage on disk"). Treating a damaged end as mere damage and replaying
/// the later logs would leave a hole after such a power loss.
#[test]
fn a_damaged_end_of_an_older_log_skips_the_later_logs() {
    for reuse_logs in [false, true] {
        let (run, logs, in_older) = two_live_logs_split(reuse_logs);
        // Garbage in place of the last record (one write): its checksum does not match.
        flip_from_end(&run.env, &logs[0], 10);
        for open in 0..2 {
            let db = reopen(&run.env, reuse_logs);
            let what = format!("reuse {reuse_logs}, open {open}");
            assert_eq!(prefix_len(&db, run.written, &what), in_older - 1, "{what}");
            db.put(b"after", b"x").unwrap();
        }
    }
}

/// Deleting the live log the manifest names (damage: a power loss never loses a log while
/// keeping a later one, whose directory entry can only become durable with the earlier one's)
/// costs the writes it held, and only those, as the README promises. Recovery took the next
/// log, which starts past the manifest's sequence, for one behind a power loss and dropped it
/// too; and with `reuse_logs`, the reused log must not be taken for one behind lost writes at
/// the next open either.
#[test]
fn a_deleted_live_log_costs_only_its_own_writes() {
    for reuse_logs in [false, true] {
        let (run, logs, first_kept) = two_live_logs_split(reuse_logs);
        let inner: &dyn Env = &**run.env.inner();
        inner.remove_file(&Path::new(DIR).join(&logs[0])).unwrap();
        // A torn edit at the manifest's end: open writes a new manifest even with
        // `reuse_logs`, recording the reused log as the oldest live one, with its first
        // sequence.
        let manifests = file_names(inner, Path::new(DIR), |n| n.starts_with("MANIFEST-"));
        append_raw(
            &**run.env.inner(),
            DIR,
            manifests.last().unwrap(),
            &[0x9a, 0xbc, 0xde, 0xf0, 0x40],
        );
        let check = |db: &DB, what: &str| {
            for i in 0..run.written {
                let got = db.get(&key(i)).unwrap();
                if i < first_kept {
                    assert_eq!(got, None, "{what}: key {i} was in the deleted log");
                } else {
                    assert_eq!(
                        got,
                        Some(value(i)),
                        "{what}: key {i} of the later log is lost"
                    );
                }
            }
        };
        let db = reopen(&run.env, reuse_logs);
        check(&db, &format!("reuse {reuse_logs}, first open"));
        db.put(b"after", b"x").unwrap();
        drop(db);
        let db = reopen(&run.env, reuse_logs);
        check(&db, &format!("reuse {reuse_logs}, second open"));
        assert_eq!(db.get(b"after").unwrap().as_deref(), Some(&b"x"[..]));
        // A flush moves the manifest past the reused log; the next open replays from there.
        for i in 0..100 {
            db.put(format!("more{i:04}").as_bytes(), &value(i)).unwrap();
        }
        drop(db);
        let db = reopen(&run.env, reuse_logs);
        check(&db, &format!("reuse {reuse_logs}, third open"));
        for i in 0..100 {
            assert_eq!(
                db.get(format!("more{i:04}").as_bytes()).unwrap(),
                Some(value(i))
            );
        }
    }
}
