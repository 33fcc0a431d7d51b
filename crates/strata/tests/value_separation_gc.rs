//! Garbage collection of value files (docs/design.md, section 4.4): under sustained uniform
//! overwrites the value files stay within 1.5 times the value bytes some reader can still read
//! (checked at checkpoints throughout, with snapshots and iterators pinning old values), no
//! value is ever lost, the accounting is right after a reopen, and a crash or power loss in
//! the middle of a relocation — or at any kind of operation a background thread makes on a
//! value file, table, manifest or `CURRENT` — loses nothing synced and leaves no pointer
//! without its value.
//!
//! The workload's size: `STRATA_GC_KEYS` keys (default 3,000; the 40,000 by hand) of
//! 300 B to 8 KB, then `STRATA_GC_ROUNDS` rounds (default 6) of as many overwrites of keys
//! drawn uniformly at random (by hand, also small values or deletes: see the test).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use strata::testing::{EnvOp, FaultEnv, HookEnv, OpKind, PowerLossMode};
use strata::{MemEnv, Options, ReadOptions, ValueSeparation, WriteOptions, DB};

const DIR: &str = "/db";
/// The bound the issue sets: value files at most 1.5 times the live value bytes.
const BOUND: f64 = 1.5;

fn env_number(name: &str, default: u32) -> u32 {
    std::env::var(name)
        .ok()
        .map(|v| v.parse().expect("a number"))
        .unwrap_or(default)
}

/// Every value large enough to be separated; everything else at its default.
fn separating(env: &impl support::TestEnv) -> Options {
    Options {
        value_separation: Some(ValueSeparation::new(256)),
        ..support::options(env)
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

/// Keys from this one on hold small values, where a record's header and key are a larger
/// share of the file.
const SMALL_VALUES_FROM: u32 = 1_000_000;

/// The length of version `version` of key `i`: 300 B to 8 KB, spread evenly (256-300 B from
/// [`SMALL_VALUES_FROM`] on).
fn value_len(i: u32, version: u32) -> usize {
    let mix = u64::from(i) * 2_654_435_761 + u64::from(version) * 40_503;
    if i >= SMALL_VALUES_FROM {
        256 + (mix % 45) as usize
    } else {
        300 + (mix % 7_893) as usize
    }
}

/// Version `version` of key `i`'s value, naming both, so a misplaced value shows.
fn value(i: u32, version: u32) -> Vec<u8> {
    let stamp = format!("<{i}:{version}>");
    stamp.bytes().cycle().take(value_len(i, version)).collect()
}

/// Uniformly random keys of `0..keys` (a fixed sequence: SplitMix64 from a fixed seed), so
/// some values live for many rounds among dead ones and garbage collection has live values
/// to relocate.
struct UniformKeys {
    state: u64,
    keys: u32,
}

impl UniformKeys {
    fn next(&mut self) -> u32 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) % u64::from(self.keys)) as u32
    }
}

/// Which version of each key a reader sees.
type Model = BTreeMap<u32, u32>;

/// Writes `keys` keys once, then `rounds - 1` rounds of as many overwrites of uniformly random
/// keys (drawn from `seed`); returns what the database then holds.
fn write_then_overwrite(db: &DB, keys: u32, rounds: u32, seed: u64) -> Model {
    let mut model = Model::new();
    let mut uniform = UniformKeys { state: seed, keys };
    for round in 0..rounds {
        for n in 0..keys {
            let i = if round == 0 { n } else { uniform.next() };
            db.put(&key(i), &value(i, round)).unwrap();
            model.insert(i, round);
        }
    }
    model
}

/// Value bytes readable by any of `readers` (a value several readers see counts once).
fn live_bytes(readers: &[&Model]) -> u64 {
    let mut versions = std::collections::BTreeSet::new();
    for model in readers {
        versions.extend(model.iter().map(|(&i, &v)| (i, v)));
    }
    versions
        .into_iter()
        .map(|(i, v)| value_len(i, v) as u64)
        .sum()
}

fn property(db: &DB, name: &str) -> u64 {
    db.property(&format!("strata.value-files.{name}"))
        .unwrap()
        .parse()
        .unwrap()
}

/// The value files in the directory: number and size.
fn value_files(env: &MemEnv) -> BTreeMap<u64, u64> {
    support::files::value_file_sizes(env, Path::new(DIR))
}

/// Asserts the value files hold at most [`BOUND`] times the bytes `readers` can read.
fn assert_bounded(db: &DB, readers: &[&Model], when: &str) -> f64 {
    let total = property(db, "total-bytes");
    let live = live_bytes(readers);
    let ratio = total as f64 / live as f64;
    assert!(
        ratio <= BOUND,
        "{when}: value files hold {total} bytes for {live} live value bytes ({ratio:.3}x)"
    );
    ratio
}

/// Every key and value `db` shows as of `options`, checked against `model`.
fn check_scan(db: &DB, options: &ReadOptions, model: &Model, when: &str) {
    let mut it = db.iter_opt(options);
    it.seek_to_first();
    let mut seen = 0;
    for (&i, &version) in model {
        assert!(
            it.valid(),
            "{when}: scan ended before key {i}: {:?}",
            it.status()
        );
        assert_eq!(it.key(), key(i), "{when}");
        assert!(
            it.value() == value(i, version),
            "{when}: key {i} version {version}"
        );
        it.next();
        seen += 1;
    }
    it.status().unwrap();
    assert!(!it.valid(), "{when}: more keys than written");
    assert_eq!(seen, model.len());
}

/// Waits, with no further write, until the value files hold at most `bound` times `live`
/// bytes; fails after 20 s.
fn wait_for_collection(db: &DB, live: u64, bound: f64) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let total = property(db, "total-bytes");
        let ratio = total as f64 / live as f64;
        if ratio <= bound {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "value files hold {total} bytes for {live} live value bytes ({ratio:.3}x) 20 s \
             after the last write"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn sustained_uniform_overwrites_keep_value_files_within_the_bound_with_readers_pinning() {
    // By hand: `STRATA_GC_SMALL_VALUES=1` for 256-300 B values (9-byte keys: the files'
    // record headers and keys are about 6% of the value bytes, which the bound does not count
    // as live), `STRATA_GC_DELETES=30` for three writes in ten deleting their key (the live
    // bytes shrink as the files take the garbage; a deleted key comes back when drawn again).
    // Both went past the bound under a busy machine's load: see docs/design.md, section 4.4.
    let first = if env_number("STRATA_GC_SMALL_VALUES", 0) == 0 {
        0
    } else {
        SMALL_VALUES_FROM
    };
    let deletes = env_number("STRATA_GC_DELETES", 0);
    sustained(
        env_number("STRATA_GC_KEYS", 3_000),
        first,
        u64::from(deletes),
    );
}

/// `STRATA_GC_ROUNDS` rounds (default 6) over `keys` keys from `first`: every key written,
/// then as many writes as keys per round to uniformly random ones, `delete_percent` of them
/// deletes; the bound checked at every tenth of a round, with readers pinning old values.
fn sustained(keys: u32, first: u32, delete_percent: u64) {
    let rounds = env_number("STRATA_GC_ROUNDS", 6);
    let env = Arc::new(MemEnv::new());
    let mut db = DB::open(DIR, separating(&env)).unwrap();
    let mut model = Model::new();
    let mut uniform = UniformKeys { state: 14, keys };
    let checkpoints = 10;
    let mut worst: f64 = 0.0;
    for round in 0..rounds {
        // Round 1 holds an iterator throughout, round 2 a snapshot, round 4 both (taken
        // together). An iterator pins every value its version's tables point to, values a
        // snapshot released just before kept included: no iterator is opened right after a
        // snapshot's release (a plain round comes between).
        let snapshot = (round % 6 == 2 || round % 6 == 4).then(|| (db.snapshot(), model.clone()));
        let mut iterator = (round % 6 == 1 || round % 6 == 4).then(|| {
            let mut it = db.iter();
            it.seek_to_first();
            (it, model.clone())
        });
        for n in 0..keys {
            // Round 0 writes every key once; later rounds overwrite (or delete) uniformly
            // random ones.
            let i = first + if round == 0 { n } else { uniform.next() };
            if round > 0 && u64::from(n) * 2_654_435_761 % 100 < delete_percent {
                db.delete(&key(i)).unwrap();
                model.remove(&i);
            } else {
                db.put(&key(i), &value(i, round)).unwrap();
                model.insert(i, round);
            }
            if round > 0 && (n + 1) % (keys / checkpoints) == 0 {
                let mut readers = vec![&model];
                readers.extend(snapshot.iter().map(|(_, m)| m));
                readers.extend(iterator.iter().map(|(_, m)| m));
                let when = format!("round {round}, {} keys written", n + 1);
                worst = worst.max(assert_bounded(&db, &readers, &when));
            }
        }
        // The pinned readers read exactly their moment's values.
        if let Some((it, pinned)) = iterator.as_mut() {
            for (&i, &version) in pinned.iter() {
                assert!(
                    it.valid(),
                    "round {round}: pinned iterator ended: {:?}",
                    it.status()
                );
                assert_eq!(it.key(), key(i));
                assert!(it.value() == value(i, version), "pinned iterator, key {i}");
                it.next();
            }
            it.status().unwrap();
        }
        if let Some((snapshot, pinned)) = &snapshot {
            let at = ReadOptions {
                snapshot: Some(snapshot.clone()),
                ..ReadOptions::default()
            };
            check_scan(&db, &at, pinned, &format!("round {round}, snapshot"));
        }
        drop(iterator);
        drop(snapshot);
        check_scan(
            &db,
            &ReadOptions::default(),
            &model,
            &format!("round {round}"),
        );
        if round == rounds / 2 {
            // Reopened, the accounting is rebuilt from the tables and the files.
            drop(db);
            let before = value_files(&env);
            db = DB::open(DIR, separating(&env)).unwrap();
            // Files nothing reaches may go at the open and none comes back; the only new
            // files are those collection writes after it, numbered past every older one (the
            // worker starts at the open, so under load it may already have relocated some).
            let newest_before = before.keys().max().copied().unwrap_or(0);
            for (number, size) in value_files(&env) {
                match before.get(&number) {
                    Some(&old) => assert_eq!(size, old, "value file {number} changed at the open"),
                    None => assert!(
                        number > newest_before,
                        "value file {number} appeared at the open"
                    ),
                }
            }
            assert!(property(&db, "live-bytes") >= live_bytes(&[&model]));
            assert_bounded(&db, &[&model], "after reopening");
            check_scan(&db, &ReadOptions::default(), &model, "after reopening");
        }
    }
    let relocated = property(&db, "relocated-bytes");
    assert!(relocated > 0, "nothing was relocated");
    eprintln!(
        "{keys} keys from {first} x {rounds} rounds, {delete_percent}% deletes: worst {worst:.3}x, finally {}x, {relocated} bytes relocated since the reopen",
        db.property("strata.value-files.space-amplification").unwrap()
    );
}

/// Collection that lags the writes. Plans are redone by a pass after each flush and
/// compaction, one pass at a time; a flush that finds one running leaves it to run once more.
/// Here a compaction thread's pass is held in its deletion of a value file, before it makes
/// its plan (as a busy machine slows one down: CI saw 1.61x), while the flush thread goes on
/// flushing. Writes used to go on against the plan in place whenever it was made within the
/// bound writes wait at (1.51x here in 2 of 7 runs: in the others that plan made them wait);
/// now they wait for a new plan once what they appended since the last one could take the
/// files past the bound (`value_gc::Collection::outgrown`, unit-tested where it is). Since
/// collection keeps the files at up to 1.25x rather than 1.15x, this no longer shows that
/// wait: without it the files reached 1.39-1.46x here (4 runs; longer holds and twice the
/// writes the same), something else holding the writes; with it, 1.35-1.36x. It stays as a
/// check of the bound beside a lagging pass, and of `strata.write-stalls` counting the writes'
/// waits for collection.
#[test]
fn writes_wait_for_a_plan_when_collection_lags_them() {
    use std::sync::{Condvar, Mutex};
    use strata::testing::{EnvOp, HookEnv};
    /// Once armed, the compaction threads' deletions of value files are held until opened.
    #[derive(Default)]
    struct Gate {
        armed: bool,
        held: bool,
        open: bool,
    }
    let gate = Arc::new((Mutex::new(Gate::default()), Condvar::new()));
    let files = Arc::new(MemEnv::new());
    let hook_gate = Arc::clone(&gate);
    let env = HookEnv::new(files.clone(), move |call| {
        let compacting = std::thread::current().name() == Some("strata-bg-compact");
        let value_file = call.path.extension().is_some_and(|e| e == "vlog");
        if call.op == EnvOp::RemoveFile && value_file && compacting {
            let (gate, changed) = &*hook_gate;
            let mut gate = gate.lock().unwrap();
            gate.held |= gate.armed;
            changed.notify_all();
            while gate.armed && !gate.open {
                gate = changed.wait(gate).unwrap();
            }
        }
        Ok(())
    });
    let db = DB::open(DIR, separating(&env)).unwrap();
    let keys = 2_400;
    let mut model = Model::new();
    let mut uniform = UniformKeys { state: 41, keys };
    let mut next_write = |model: &mut Model, n: u32| {
        let (i, version) = if n < keys {
            (n, 0)
        } else {
            (uniform.next(), n / keys)
        };
        db.put(&key(i), &value(i, version)).unwrap();
        model.insert(i, version);
    };
    for n in 0..2 * keys {
        next_write(&mut model, n);
    }
    // Settled within the bound writes wait at (1.28x), so the plan in place when the pass
    // is held lets writes go on (the compaction drops the garbage the memtable shadowed).
    // Files less than half garbage are left until the files hold over 1.25x (record headers
    // and keys add under 1% here).
    db.compact_range(None, None).unwrap();
    wait_for_collection(&db, live_bytes(&[&model]), 1.26);
    let (state, changed) = &*gate;
    state.lock().unwrap().armed = true;
    let open = || {
        state.lock().unwrap().open = true;
        changed.notify_all();
    };
    /// Opens the gate when dropped, so a failing assertion does not leave a pass held.
    struct OpenAtEnd<F: Fn()>(F);
    impl<F: Fn()> Drop for OpenAtEnd<F> {
        fn drop(&mut self) {
            (self.0)();
        }
    }
    let mut worst: f64 = 0.0;
    std::thread::scope(|scope| {
        let _open_at_end = OpenAtEnd(open);
        // Two seconds after the pass is held, it goes on.
        scope.spawn(|| {
            let mut gate = state.lock().unwrap();
            while !gate.held && !gate.open {
                gate = changed.wait(gate).unwrap();
            }
            drop(gate);
            std::thread::sleep(Duration::from_secs(2));
            open();
        });
        for n in 2 * keys..4 * keys {
            next_write(&mut model, n);
            if n % 50 == 49 {
                // Measured in the files, not through the database: a property's read would
                // be a reader whose release makes writes wait for a pass.
                let total: u64 = value_files(&files).values().sum();
                let ratio = total as f64 / live_bytes(&[&model]) as f64;
                assert!(
                    ratio <= BOUND,
                    "{n} writes: value files at {ratio:.3}x the live bytes"
                );
                worst = worst.max(ratio);
            }
        }
        assert!(
            state.lock().unwrap().held,
            "no pass deleted a value file: nothing was held"
        );
    });
    check_scan(&db, &ReadOptions::default(), &model, "after the writes");
    // What held the writes: garbage collection, for most of the two seconds (2.2 s in
    // three runs here).
    let (_, waited) = support::state::write_stalls(&db, "value-files");
    assert!(
        waited >= 1_000_000,
        "writes waited {waited} µs for collection"
    );
    eprintln!("{keys} keys, 2 rounds beside a held pass: worst {worst:.3}x");
}

/// Deletes that leave most values garbage, then no more writes: the garbage is shadowed by
/// the deletions in the memtable, so collection waits for its flush. Writes ask for that flush
/// before they add to the memtable, and only when it held separated values, so a database
/// whose last writes were deletions rested at about 2x for good. Now a background thread
/// flushes a memtable a plan waits for once no write is in progress.
#[test]
fn garbage_the_memtable_shadows_is_collected_once_writes_stop() {
    let env = Arc::new(MemEnv::new());
    let db = DB::open(DIR, separating(&env)).unwrap();
    let big = |i: u32| -> Vec<u8> { value(i, 0).into_iter().cycle().take(8 << 10).collect() };
    for i in 0..1_000 {
        db.put(&key(i), &big(i)).unwrap();
    }
    db.compact_range(None, None).unwrap();
    // An iterator holding the state before a memtable switch: its release, noted by the last
    // write, has collection look again while the deletions are in the memtable.
    let older = db.iter();
    db.compact_range(Some(b"~"), Some(b"~")).unwrap(); // flushes the memtable, however empty
    for i in 0..500 {
        db.delete(&key(i)).unwrap();
    }
    drop(older);
    db.delete(&key(500)).unwrap();
    let live: u64 = (501..1_000).map(|i| big(i).len() as u64).sum();
    wait_for_collection(&db, live, BOUND);
    for i in (0..1_000).step_by(97) {
        let expected = (i > 500).then(|| big(i));
        assert_eq!(db.get(&key(i)).unwrap(), expected, "key {i}");
    }
}

/// Overwrites that all land in the value file being written, then no more writes: that file
/// holds most of the garbage and was never collected (a file being written is not), so a small
/// database rested above the bound for good once its writes stopped. Now the file is closed
/// and collected, and the value files come back within the bound with no further write.
#[test]
fn garbage_in_the_file_being_written_is_collected_once_writes_stop() {
    let env = Arc::new(MemEnv::new());
    let db = DB::open(DIR, separating(&env)).unwrap();
    let big = |i: u32, round: u32| -> Vec<u8> {
        let stamp = format!("<{i}:{round}>");
        stamp.bytes().cycle().take(16 << 10).collect()
    };
    // Four keys of 16 KiB written three times: 192 KiB, one file (files are cut at 256 KiB at
    // this size), a third of it live.
    for round in 0..3 {
        for i in 0..4 {
            db.put(&key(i), &big(i, round)).unwrap();
        }
    }
    db.compact_range(None, None).unwrap();
    let live = 4 * (16 << 10) as u64;
    wait_for_collection(&db, live, BOUND);
    for i in 0..4 {
        assert_eq!(db.get(&key(i)).unwrap(), Some(big(i, 2)), "key {i}");
    }
    drop(db);
    let db = DB::open(DIR, separating(&env)).unwrap();
    for i in 0..4 {
        assert_eq!(
            db.get(&key(i)).unwrap(),
            Some(big(i, 2)),
            "key {i} after a reopen"
        );
    }
}

/// Relocated values go to value files of their own (`vlog::Lane`): no file receives both
/// values a write separates (appended on the writing thread) and values collection relocates
/// (appended by a compaction, on a background thread), so relocated values, which outlive the
/// writes around them, do not keep the files new values fill from turning into garbage.
#[test]
fn relocated_values_go_to_files_no_write_appends_to() {
    // Per value file: appended to by the writing thread, by a background thread.
    let appends: Arc<Mutex<BTreeMap<String, (bool, bool)>>> = Arc::default();
    let env = {
        let appends = Arc::clone(&appends);
        HookEnv::new(Arc::new(MemEnv::new()), move |call| {
            if call.op == EnvOp::Append && file_kind(call.path) == "vlog" {
                let name = call.path.display().to_string();
                let mut appends = appends.lock().unwrap();
                let by = appends.entry(name).or_default();
                if on_background_thread() {
                    by.1 = true;
                } else {
                    by.0 = true;
                }
            }
            Ok(())
        })
    };
    let db = DB::open(DIR, separating(&env)).unwrap();
    let model = write_then_overwrite(&db, 2_000, 5, 7);
    let live = live_bytes(&[&model]);
    wait_for_collection(&db, live, BOUND);
    assert!(
        property(&db, "relocated-bytes") > 0,
        "nothing was relocated"
    );
    check_scan(&db, &ReadOptions::default(), &model, "after the overwrites");
    let appends = appends.lock().unwrap();
    let both: Vec<&String> = appends
        .iter()
        .filter(|(_, &(writes, relocations))| writes && relocations)
        .map(|(name, _)| name)
        .collect();
    assert!(
        both.is_empty(),
        "files with written and relocated values: {both:?}"
    );
    let relocation_files = appends
        .values()
        .filter(|&&(_, relocations)| relocations)
        .count();
    assert!(relocation_files > 0, "no file received relocated values");
}

/// Relocated values are made durable by the relocation's own sync (of `Lane::Relocations`)
/// before the compaction's tables are installed: nothing else syncs the files they go to
/// (flushes and synced writes sync the writes' files only). A power loss right after
/// collection, with no write since, loses none of them.
#[test]
fn a_power_loss_right_after_collection_keeps_every_relocated_value() {
    for (n, mode) in MODES.into_iter().enumerate() {
        let env = FaultEnv::new(Arc::new(MemEnv::new()));
        let options = Options {
            write_buffer_size: 256 << 10,
            ..separating(&env)
        };
        let db = DB::open(DIR, options.clone()).unwrap();
        let model = write_then_overwrite(&db, 1_000, 6, 11);
        // Every write in a table (the flush syncs the values it names), then collection.
        db.compact_range(None, None).unwrap();
        wait_for_collection(&db, live_bytes(&[&model]), BOUND);
        assert!(
            property(&db, "relocated-bytes") > 0,
            "{mode:?}: nothing relocated"
        );
        env.crash_now();
        drop(db);
        env.simulate_power_loss(mode, n as u64).unwrap();
        env.clear_faults();
        let db = DB::open(DIR, options).unwrap();
        check_scan(&db, &ReadOptions::default(), &model, &format!("{mode:?}"));
    }
}

/// Whether the current thread is one of the engine's background threads (where compactions,
/// and so relocations, run).
fn on_background_thread() -> bool {
    std::thread::current()
        .name()
        .is_some_and(|name| name.starts_with("strata-bg"))
}

/// The kind of file a path names, as crash points choose them.
fn file_kind(path: &Path) -> &'static str {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if name.ends_with(".vlog") {
        "vlog"
    } else if name.ends_with(".ldb") || name.ends_with(".sst") {
        "table"
    } else if name.starts_with("MANIFEST") {
        "manifest"
    } else if name.starts_with("CURRENT") || name.ends_with(".dbtmp") {
        "current"
    } else {
        "other"
    }
}

/// One crash trial: `keys` keys overwritten in rounds (a write in 97 synced, by `seed`) until
/// the `n`-th `kind` operation a background thread makes on a file of kind `what` crashes the
/// env, then power loss in `mode` and a reopen: the state must be a prefix of the writes with
/// every synced one (the write that failed at the crash may be in it or not), every value
/// readable, and collection must go on within the bound.
/// Returns whether the crash point was reached.
fn crash_trial(
    (kind, what, n): (OpKind, &'static str, u64),
    keys: u32,
    seed: u64,
    mode: PowerLossMode,
) -> bool {
    let trial = format!("{kind:?} {what} #{n} seed {seed} {mode:?}");
    let env = FaultEnv::new(Arc::new(MemEnv::new()));
    let options = Options {
        write_buffer_size: 256 << 10,
        ..separating(&env)
    };
    let db = DB::open(DIR, options.clone()).unwrap();
    env.crash_after_matching(kind, n, move |path| {
        file_kind(path) == what && on_background_thread()
    });
    // Every key once, then rounds of as many overwrites of uniformly random keys (so some
    // values outlive the files around them, and collection relocates them); version r of
    // each key is written in round r. Every write is recorded: the state after a crash must
    // be that of a prefix of them.
    let mut writes: Vec<(u32, u32)> = Vec::new();
    let mut uniform = UniformKeys { state: seed, keys };
    let mut synced = None;
    // The write that failed once the env crashed: its log record may have been written
    // before the failure, and a power loss may keep it (a failed write may or may not be
    // durable, as in LevelDB), so the state may also be that of every write and this one.
    let mut failed = None;
    'writing: for round in 0..40u32 {
        for n in 0..keys {
            let i = if round == 0 { n } else { uniform.next() };
            let sync = (u64::from(n) + seed) % 97 == 0;
            if db
                .put_opt(&WriteOptions { sync }, &key(i), &value(i, round))
                .is_err()
            {
                failed = Some((i, round));
                break 'writing;
            }
            writes.push((i, round));
            if sync {
                synced = Some(writes.len());
            }
        }
        if env.crash_point().is_some() {
            break;
        }
    }
    let crashed = env.crash_point().is_some();
    env.crash_now();
    drop(db);
    env.simulate_power_loss(mode, seed).unwrap();
    env.clear_faults();
    let db = DB::open(DIR, options.clone()).unwrap_or_else(|e| panic!("{trial}: reopening: {e}"));
    // The state is that of a prefix of the writes, at least up to the last synced one,
    // and every value of it reads back.
    let mut model = Model::new();
    let mut it = db.iter();
    it.seek_to_first();
    while it.valid() {
        let k = String::from_utf8(it.key().to_vec()).unwrap();
        let i: u32 = k["key".len()..].parse().unwrap();
        let stamp = String::from_utf8_lossy(&it.value()[..16.min(it.value().len())]).to_string();
        let version: u32 = stamp
            .trim_start_matches('<')
            .split(':')
            .nth(1)
            .and_then(|v| v.split('>').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{trial}: key {i} holds a foreign value"));
        assert!(it.value() == value(i, version), "{trial}: key {i} damaged");
        model.insert(i, version);
        it.next();
    }
    it.status()
        .unwrap_or_else(|e| panic!("{trial}: a pointer without its value: {e}"));
    drop(it);
    // The longest prefix of the writes (the failed one last) whose state is the recovered
    // one: replayed write by write, counting the keys where the two differ.
    let mut state = Model::new();
    let mut differing = model.len();
    let mut prefix = (differing == 0).then_some(0);
    for (done, &(i, version)) in writes.iter().chain(&failed).enumerate() {
        let before = state.get(&i) != model.get(&i);
        state.insert(i, version);
        let after = Some(&version) != model.get(&i);
        differing = differing + usize::from(after) - usize::from(before);
        if differing == 0 {
            prefix = Some(done + 1);
        }
    }
    let prefix =
        prefix.unwrap_or_else(|| panic!("{trial}: not the state of a prefix of the writes"));
    if let Some(synced) = synced {
        assert!(
            prefix >= synced,
            "{trial}: synced write {synced} lost (state of the first {prefix} writes)"
        );
    }
    // Collection goes on after the reopen and comes within the bound under further
    // overwrites: files the crash left that nothing reaches do not stay. (Rounds, not one:
    // once writes stop, a small database can rest just above the bound — the file being
    // written is never collected — which the sustained test's contract does not cover.)
    let mut within = false;
    for round in 0..ROUNDS_TO_RECOVER {
        for i in 0..keys {
            db.put(&key(i), &value(i, 1000 + round)).unwrap();
            model.insert(i, 1000 + round);
        }
        db.compact_range(None, None).unwrap();
        check_scan(
            &db,
            &ReadOptions::default(),
            &model,
            &format!("{trial} after, round {round}"),
        );
        let live = live_bytes(&[&model]);
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while !within && std::time::Instant::now() < deadline {
            within = property(&db, "total-bytes") as f64 <= BOUND * live as f64;
            std::thread::sleep(Duration::from_millis(5));
        }
        if within {
            break;
        }
    }
    assert!(
        within,
        "{trial}: value files still over {BOUND}x the live bytes after {ROUNDS_TO_RECOVER} \
         rounds of overwrites: {} of {} bytes",
        property(&db, "total-bytes"),
        live_bytes(&[&model])
    );
    crashed
}

/// Rounds of overwrites after a crash's reopen within which the value files must come back
/// within the bound.
const ROUNDS_TO_RECOVER: u32 = 4;

const MODES: [PowerLossMode; 3] = [
    PowerLossMode::DropUnsynced,
    PowerLossMode::TornTail,
    PowerLossMode::GarbageTail,
];

#[test]
fn a_crash_or_power_loss_during_a_relocation_loses_nothing_synced_and_no_value() {
    // The n-th append a background thread makes to a value file: relocations are the only
    // ones.
    let crashes_in_relocation = (1..=6u64)
        .filter(|&seed| {
            crash_trial(
                (OpKind::Append, "vlog", 3 + seed * 7),
                600,
                seed,
                MODES[(seed % 3) as usize],
            )
        })
        .count();
    assert!(
        crashes_in_relocation >= 4,
        "only {crashes_in_relocation} of 6 runs crashed in a relocation"
    );
}

/// Every kind of operation a collection makes: the relocation's appends, opens and sync of
/// value files, the tables' writes and syncs, the manifest's, `CURRENT`'s rename, and the
/// deletions of value files and tables (the review of issue 14).
#[test]
fn a_crash_at_any_background_operation_then_power_loss_loses_nothing_synced() {
    let points: &[(OpKind, &str)] = &[
        (OpKind::Append, "vlog"),
        (OpKind::Sync, "vlog"),
        (OpKind::Open, "vlog"),
        (OpKind::Append, "table"),
        (OpKind::Sync, "table"),
        (OpKind::Append, "manifest"),
        (OpKind::Sync, "manifest"),
        (OpKind::Rename, "current"),
        (OpKind::Remove, "vlog"),
        (OpKind::Remove, "table"),
    ];
    let mut crashed = 0;
    let mut trials = 0u64;
    for &(kind, what) in points {
        for n in [1u64, 3, 9, 25] {
            trials += 1;
            crashed += usize::from(crash_trial(
                (kind, what, n),
                600,
                trials,
                MODES[(trials % 3) as usize],
            ));
        }
    }
    eprintln!("{crashed} of {trials} trials crashed");
    assert!(
        crashed * 2 >= trials as usize,
        "only {crashed} of {trials} trials crashed"
    );
}
