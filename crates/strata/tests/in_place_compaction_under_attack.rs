//! Attacks on `compact_range`'s in-place rewrite of the deepest level, on `get_many`'s runs
//! looked up by helper threads, and on the iterator's hints over range tombstones, by
//! random workloads checked against a model after every compaction.
//!
//! Each workload mixes puts, deletes, range deletes and values a compaction filter removes or
//! changes, holds and releases snapshots, reopens, and calls `compact_range` on random ranges
//! with tables small enough that the deepest level holds many. After every `compact_range`:
//! - every live snapshot reads exactly what it read when it was taken, through forward and
//!   backward scans, scans within bounds, random seeks followed by mixed `next` and `prev`, and
//!   `get_many` of large batches (cut in runs) with absent and repeated keys;
//! - the latest view differs from the model only by the filter's own decisions (a removed
//!   value is gone, a changed one changed), never by an older version coming back;
//! - no two tables of a level >= 1 share a user key, and the manual loop has returned.
//!
//! - a crash at any operation of such a `compact_range`, then power loss, leaves a database
//!   that opens with exactly what was written (the manifest names the inputs or the outputs);
//! - a comparator panicking in the runs of a `get_many` other threads look up reaches the
//!   caller without a hang, and leaves the database answering.
//!
//! Longer runs: `STRATA_MODEL_OPS` (operations per workload).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::ops::Bound;
use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::path::Path;

use strata::testing::{FaultEnv, OpKind, PowerLossMode};
use strata::{CompactionFilter, Env, FilterDecision, MemEnv, Options, ReadOptions, Snapshot, DB};
use support::state::Model;

const DIR: &str = "/in-place-attack";
const KEYS: u32 = 3000;

fn key(i: u32) -> Vec<u8> {
    format!("k{i:05}").into_bytes()
}

/// A value of `len` bytes that compresses poorly, starting with `prefix`.
fn value(prefix: &str, rng: &mut StdRng, len: usize) -> Vec<u8> {
    let mut v = prefix.as_bytes().to_vec();
    while v.len() < len {
        v.push(rng.gen_range(b'a'..=b'z'));
    }
    v
}

/// Removes values starting with `drop`, changes those starting with `chg` to start with `CHG`.
struct Filter;

impl CompactionFilter for Filter {
    fn filter(&self, _level: usize, _key: &[u8], value: &[u8]) -> FilterDecision {
        if value.starts_with(b"drop") {
            FilterDecision::Remove
        } else if let Some(rest) = value.strip_prefix(b"chg") {
            FilterDecision::ChangeValue([b"CHG".as_slice(), rest].concat())
        } else {
            FilterDecision::Keep
        }
    }
}

/// What the filter may make of `value` (itself included).
fn filtered(value: &[u8]) -> Option<Vec<u8>> {
    match Filter.filter(0, b"", value) {
        FilterDecision::Keep => Some(value.to_vec()),
        FilterDecision::Remove => None,
        FilterDecision::ChangeValue(v) => Some(v),
    }
}

fn options(env: &impl support::TestEnv, with_filter: bool) -> Options {
    Options {
        range_deletes: true,
        write_buffer_size: 64 << 10,
        max_file_size: 1 << 20,
        compaction_filter: with_filter.then(|| Arc::new(Filter) as Arc<dyn CompactionFilter>),
        ..support::options(env)
    }
}

fn at(snapshot: &Snapshot) -> ReadOptions {
    ReadOptions {
        snapshot: Some(snapshot.clone()),
        ..ReadOptions::default()
    }
}

fn scan(db: &DB, read: &ReadOptions) -> Model {
    support::state::scan(db, read).unwrap()
}

/// Checks that the latest view is `model` up to the filter's decisions, and makes `model` what
/// the view holds.
fn reconcile(view: &Model, model: &mut Model, what: &str) {
    for (k, v) in view {
        let expected = model.get(k);
        assert!(
            expected.is_some_and(|m| m == v || filtered(m).as_ref() == Some(v)),
            "{what}: {} reads {:?}, the model holds {:?}",
            String::from_utf8_lossy(k),
            String::from_utf8_lossy(&v[..8.min(v.len())]),
            expected.map(|m| String::from_utf8_lossy(&m[..8.min(m.len())]).into_owned())
        );
    }
    for (k, m) in model.iter() {
        assert!(
            view.contains_key(k) || filtered(m).is_none(),
            "{what}: {} is missing",
            String::from_utf8_lossy(k)
        );
    }
    model.clone_from(view);
}

/// The sequence number of a range tombstone's end as a table's largest key: the table ends
/// just before that user key.
const TOMBSTONE_END: &str = "72057594037927935";

/// Parses `leveldb.sstables` and checks that the tables of each level >= 1 are in order and
/// share no user key (a table ending at a range tombstone's exclusive end may be followed by
/// one starting at that user key).
fn check_levels(db: &DB) {
    let text = db.property("leveldb.sstables").unwrap();
    let mut level = 0;
    let mut last: Option<(String, bool)> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("--- level ") {
            level = rest.trim_end_matches(" ---").parse().unwrap();
            last = None;
            continue;
        }
        // ` n:size['smallest' @ seq : type .. 'largest' @ seq : type]`
        let quoted: Vec<&str> = line.split('\'').collect();
        let (smallest, largest) = (quoted[1].to_owned(), quoted[3].to_owned());
        let ends_before_largest = quoted[4].starts_with(&format!(" @ {TOMBSTONE_END} "));
        assert!(smallest <= largest, "{line}");
        if level > 0 {
            if let Some((last, exclusive)) = &last {
                assert!(
                    *last < smallest || (*last == smallest && *exclusive),
                    "level {level}: tables share user key {smallest}\n{text}"
                );
            }
            last = Some((largest, ends_before_largest));
        }
    }
}

/// Random positioning and stepping of an iterator at `read`, checked against `model`.
fn check_iterator_moves(db: &DB, read: &ReadOptions, model: &Model, rng: &mut StdRng) {
    let mut it = db.iter_opt(read);
    for _ in 0..20 {
        let target = key(rng.gen_range(0..KEYS + 10));
        // The position, as the model's key (None: not valid).
        let mut pos: Option<Vec<u8>> = if rng.gen_bool(0.5) {
            it.seek(&target);
            model.range(target.clone()..).next().map(|(k, _)| k.clone())
        } else if rng.gen_bool(0.5) {
            it.seek_to_first();
            model.keys().next().cloned()
        } else {
            it.seek_to_last();
            model.keys().next_back().cloned()
        };
        for step in 0..rng.gen_range(1..40) {
            assert_eq!(
                it.valid().then(|| it.key().to_vec()),
                pos,
                "after {step} steps from {}",
                String::from_utf8_lossy(&target)
            );
            let Some(p) = pos.clone() else { break };
            assert_eq!(Some(it.value()), model.get(&p).map(Vec::as_slice));
            if rng.gen_bool(0.5) {
                it.next();
                pos = model
                    .range((Bound::Excluded(p), Bound::Unbounded))
                    .next()
                    .map(|(k, _)| k.clone());
            } else {
                it.prev();
                pos = model.range(..p).next_back().map(|(k, _)| k.clone());
            }
        }
        it.status().unwrap();
    }
}

/// Bounded scans, both ways, against the model's range.
fn check_bounded_scans(db: &DB, read: &ReadOptions, model: &Model, rng: &mut StdRng) {
    let a = rng.gen_range(0..KEYS);
    let (lower, upper) = (key(a), key(rng.gen_range(a..KEYS + 5)));
    let read = ReadOptions {
        lower_bound: Some(lower.clone()),
        upper_bound: Some(upper.clone()),
        ..read.clone()
    };
    let expected: Vec<&Vec<u8>> = model.range(lower..upper).map(|(k, _)| k).collect();
    let mut it = db.iter_opt(&read);
    let mut forward = Vec::new();
    it.seek_to_first();
    while it.valid() {
        forward.push(it.key().to_vec());
        it.next();
    }
    assert_eq!(forward.iter().collect::<Vec<_>>(), expected, "bounded scan");
    let mut backward = Vec::new();
    it.seek_to_last();
    while it.valid() {
        backward.push(it.key().to_vec());
        it.prev();
    }
    backward.reverse();
    assert_eq!(backward, forward, "bounded backward scan");
    it.status().unwrap();
}

fn check_get_many(db: &DB, read: &ReadOptions, model: &Model, rng: &mut StdRng, what: &str) {
    for parallel in [true, false] {
        let n = rng.gen_range(1..600);
        let keys: Vec<Vec<u8>> = (0..n).map(|_| key(rng.gen_range(0..KEYS + 10))).collect();
        let read = ReadOptions {
            get_many_parallel: parallel,
            ..read.clone()
        };
        let got = db.get_many_opt(&read, &keys).unwrap();
        for (k, v) in keys.iter().zip(got) {
            assert_eq!(
                v.as_ref(),
                model.get(k),
                "{what}: get_many (parallel {parallel}) of {}",
                String::from_utf8_lossy(k)
            );
        }
    }
}

/// Everything a reader at `read` may do, checked against `model`.
fn check_view(db: &DB, read: &ReadOptions, model: &Model, rng: &mut StdRng, what: &str) {
    let got = scan(db, read);
    if got != *model {
        let diff: Vec<String> = model
            .keys()
            .chain(got.keys())
            .filter(|k| got.get(*k) != model.get(*k))
            .take(5)
            .map(|k| String::from_utf8_lossy(k).into_owned())
            .collect();
        panic!("{what}: the scan differs from the model at {diff:?}");
    }
    check_iterator_moves(db, read, model, rng);
    check_bounded_scans(db, read, model, rng);
    check_get_many(db, read, model, rng, what);
}

fn workload(seed: u64, with_filter: bool) {
    let ops = support::trials::trials("STRATA_MODEL_OPS", 2500);
    let mut rng = StdRng::seed_from_u64(seed);
    let env = Arc::new(MemEnv::new());
    let mut db = DB::open(DIR, options(&env, with_filter)).unwrap();
    let mut model = Model::new();
    let mut snapshots: Vec<(Snapshot, Model)> = Vec::new();
    let mut compactions = 0;
    for op in 0..ops {
        let what = format!("seed {seed}, filter {with_filter}, op {op}");
        match rng.gen_range(0..1000) {
            0..=699 => {
                let i = rng.gen_range(0..KEYS);
                let prefix = match rng.gen_range(0..10) {
                    0 if with_filter => "drop",
                    1 if with_filter => "chg",
                    _ => "v",
                };
                let len = rng.gen_range(100..1500);
                // Bursts of neighbouring keys, so tables fill and levels grow.
                for j in i..(i + rng.gen_range(1..20)).min(KEYS) {
                    let v = value(prefix, &mut rng, len);
                    db.put(&key(j), &v).unwrap();
                    model.insert(key(j), v);
                }
            }
            700..=799 => {
                let i = rng.gen_range(0..KEYS);
                db.delete(&key(i)).unwrap();
                model.remove(&key(i));
            }
            800..=879 => {
                let a = rng.gen_range(0..KEYS);
                let b = rng.gen_range(a..(a + 400).min(KEYS + 1));
                db.delete_range(&key(a), &key(b)).unwrap();
                let doomed: Vec<Vec<u8>> = model
                    .range(key(a)..key(b))
                    .map(|(k, _)| k.clone())
                    .collect();
                for k in doomed {
                    model.remove(&k);
                }
            }
            880..=919 => {
                let snapshot = db.snapshot();
                let view = scan(&db, &at(&snapshot));
                reconcile(&view, &mut model, &what);
                // Tombstones in the memtable and level 0 too, not only after compactions.
                check_view(
                    &db,
                    &at(&snapshot),
                    &view,
                    &mut rng,
                    &format!("{what}, new snapshot"),
                );
                snapshots.push((snapshot, view));
            }
            920..=949 if !snapshots.is_empty() => {
                let i = rng.gen_range(0..snapshots.len());
                snapshots.swap_remove(i);
            }
            950..=959 => {
                snapshots.clear();
                drop(db);
                db = DB::open(DIR, options(&env, with_filter)).unwrap();
                let view = scan(&db, &ReadOptions::default());
                reconcile(&view, &mut model, &what);
            }
            _ => {
                let (begin, end) = match rng.gen_range(0..3) {
                    0 => (None, None),
                    _ => {
                        let a = rng.gen_range(0..KEYS);
                        (Some(key(a)), Some(key(rng.gen_range(a..KEYS))))
                    }
                };
                db.compact_range(begin.as_deref(), end.as_deref()).unwrap();
                compactions += 1;
                check_levels(&db);
                for (i, (snapshot, view)) in snapshots.iter().enumerate() {
                    check_view(
                        &db,
                        &at(snapshot),
                        view,
                        &mut rng,
                        &format!("{what}, snapshot {i}"),
                    );
                }
                // The latest view, frozen: compactions may apply the filter at any moment.
                let latest = db.snapshot();
                let view = scan(&db, &at(&latest));
                reconcile(&view, &mut model, &what);
                check_view(
                    &db,
                    &at(&latest),
                    &model,
                    &mut rng,
                    &format!("{what}, latest"),
                );
            }
        }
    }
    assert!(compactions > 0, "the workload compacted");
    snapshots.clear();
    db.compact_range(None, None).unwrap();
    check_levels(&db);
    let latest = scan(&db, &ReadOptions::default());
    reconcile(&latest, &mut model, "the end");
    drop(db);
    let db = DB::open(DIR, options(&env, with_filter)).unwrap();
    check_view(
        &db,
        &ReadOptions::default(),
        &model,
        &mut rng,
        "after reopening",
    );
}

#[test]
fn range_deletes_snapshots_and_compactions_in_place_match_the_model() {
    for seed in [1, 2] {
        workload(seed, false);
    }
}

#[test]
fn a_filter_range_deletes_and_snapshots_with_compactions_in_place_match_the_model() {
    for seed in [3, 4] {
        workload(seed, true);
    }
}

/// A database whose deepest level holds many tables, and range tombstones over part of it
/// written after everything was compacted: the `compact_range` that follows moves the
/// tombstones down and rewrites the deepest level in place. Returns the model.
fn before_an_in_place_rewrite(env: &Arc<MemEnv>) -> Model {
    let db = DB::open(DIR, options(env, false)).unwrap();
    let mut rng = StdRng::seed_from_u64(7);
    let mut model = Model::new();
    for i in 0..KEYS {
        let v = value("v", &mut rng, 500);
        db.put(&key(i), &v).unwrap();
        model.insert(key(i), v);
    }
    db.compact_range(None, None).unwrap();
    for (a, b) in [(100, 900), (1500, 1510), (2000, 2600)] {
        db.delete_range(&key(a), &key(b)).unwrap();
        model.retain(|k, _| k < &key(a) || k >= &key(b));
    }
    db.put(&key(2300), b"after the tombstone").unwrap();
    model.insert(key(2300), b"after the tombstone".to_vec());
    model
}

#[test]
fn a_crash_during_an_in_place_rewrite_then_power_loss_loses_and_duplicates_nothing() {
    let base = Arc::new(MemEnv::new());
    let model = before_an_in_place_rewrite(&base);
    let dir = Path::new(DIR);
    let fresh = || {
        let env = FaultEnv::new(Arc::new(MemEnv::new()));
        support::files::copy_dir(&*base as &dyn Env, &**env.inner(), dir);
        env
    };
    // The rewrite as it runs without faults: the deepest level stays where it is.
    let env = fresh();
    let db = DB::open(DIR, options(&env, false)).unwrap();
    let before = support::state::tables_by_level(&db);
    let counts: Vec<u64> = OpKind::ALL.iter().map(|&k| env.op_count(k)).collect();
    db.compact_range(None, None).unwrap();
    let ops: Vec<u64> = OpKind::ALL
        .iter()
        .zip(&counts)
        .map(|(&k, &c)| env.op_count(k) - c)
        .collect();
    let after = support::state::tables_by_level(&db);
    let deepest = before.iter().rposition(|l| !l.is_empty()).unwrap();
    assert_eq!(after.iter().rposition(|l| !l.is_empty()), Some(deepest));
    assert_ne!(
        before[deepest], after[deepest],
        "the deepest level was rewritten"
    );
    assert_eq!(scan(&db, &ReadOptions::default()), model);
    drop(db);

    let mut crashes = 0;
    for (kind, &count) in OpKind::ALL.iter().zip(&ops) {
        if matches!(kind, OpKind::Read | OpKind::Lock) {
            continue;
        }
        // Every operation of the small kinds, about 25 spread over the large ones.
        let step = (count / 25).max(1);
        for n in (1..=count).step_by(usize::try_from(step).unwrap()) {
            for mode in [PowerLossMode::DropUnsynced, PowerLossMode::TornTail] {
                let env = fresh();
                let db = DB::open(DIR, options(&env, false)).unwrap();
                env.crash_after(*kind, n);
                let result = db.compact_range(None, None);
                assert!(
                    result.is_err() || env.crash_point().is_none(),
                    "{kind:?} #{n}: compact_range succeeded past the crash"
                );
                crashes += usize::from(env.crash_point().is_some());
                drop(db);
                env.simulate_power_loss(mode, n).unwrap();
                env.clear_faults();
                let what = format!("crash after {kind:?} #{n}, {mode:?}");
                let db = DB::open(DIR, options(&env, false))
                    .unwrap_or_else(|e| panic!("{what}: reopen: {e}"));
                check_levels(&db);
                assert_eq!(scan(&db, &ReadOptions::default()), model, "{what}");
                db.compact_range(None, None)
                    .unwrap_or_else(|e| panic!("{what}: compact_range after reopening: {e}"));
                check_levels(&db);
                assert_eq!(
                    scan(&db, &ReadOptions::default()),
                    model,
                    "{what}, compacted"
                );
            }
        }
    }
    assert!(crashes > 50, "{crashes} crashes");
}

/// Bytewise order that panics, once armed, on every thread but the one named `calm`: the
/// caller of `get_many` sorts its keys unharmed, the runs other threads look up panic.
struct PanickyComparator {
    armed: std::sync::atomic::AtomicBool,
    calm: std::sync::Mutex<Option<std::thread::ThreadId>>,
    /// How many times it panicked.
    panics: std::sync::atomic::AtomicUsize,
}

impl strata::Comparator for PanickyComparator {
    fn name(&self) -> &str {
        "strata.test.Panicky"
    }

    fn compare(&self, a: &[u8], b: &[u8]) -> std::cmp::Ordering {
        if self.armed.load(std::sync::atomic::Ordering::Acquire)
            && *self.calm.lock().unwrap() != Some(std::thread::current().id())
        {
            self.panics
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            panic!("comparator panics off the calling thread");
        }
        a.cmp(b)
    }
}

/// A comparator that panics in the runs of a `get_many` other threads take: the panic reaches
/// the caller (as a panic or an error) without hanging, and the database, its caches and
/// get_many's helper threads go on answering every read and write afterwards. (A round where
/// no helper took a run — the caller looks up every run no helper has started — must answer
/// right; rounds repeat until some helper has panicked.)
#[test]
fn a_comparator_panicking_in_get_many_runs_neither_hangs_nor_poisons() {
    use std::sync::atomic::Ordering;
    use std::sync::mpsc;
    use std::time::Duration;

    let comparator = Arc::new(PanickyComparator {
        armed: false.into(),
        calm: None.into(),
        panics: 0.into(),
    });
    let env = Arc::new(MemEnv::new());
    let db = Arc::new(
        DB::open(
            DIR,
            Options {
                comparator: comparator.clone(),
                ..support::options(&env)
            },
        )
        .unwrap(),
    );
    let keys: Vec<Vec<u8>> = (0..2000).map(key).collect();
    for k in &keys {
        db.put(k, k).unwrap();
    }
    db.compact_range(None, None).unwrap();
    let read = ReadOptions {
        get_many_parallel: true,
        ..ReadOptions::default()
    };
    let mut rounds_with_panics = 0;
    for round in 0..200 {
        if rounds_with_panics == 3 {
            break;
        }
        let panics_before = comparator.panics.load(Ordering::Relaxed);
        let (done_tx, done_rx) = mpsc::channel();
        let caller = {
            let (db, keys, read, comparator) = (
                Arc::clone(&db),
                keys.clone(),
                read.clone(),
                comparator.clone(),
            );
            std::thread::spawn(move || {
                *comparator.calm.lock().unwrap() = Some(std::thread::current().id());
                comparator.armed.store(true, Ordering::Release);
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    db.get_many_opt(&read, &keys)
                }));
                comparator.armed.store(false, Ordering::Release);
                done_tx
                    .send(outcome.map(|r| r.map(|many| many.len())))
                    .unwrap();
            })
        };
        let outcome = done_rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("round {round}: get_many hung after a panic"));
        caller.join().unwrap();
        if comparator.panics.load(Ordering::Relaxed) > panics_before {
            rounds_with_panics += 1;
            assert!(
                !matches!(outcome, Ok(Ok(_))),
                "round {round}: get_many succeeded although its comparator panicked"
            );
        } else {
            assert!(
                matches!(outcome, Ok(Ok(n)) if n == keys.len()),
                "round {round}: no panic, yet get_many failed"
            );
        }
        // Disarmed: every read answers, on every path, and writes go on.
        let many = db.get_many_opt(&read, &keys).unwrap();
        assert!(keys.iter().zip(&many).all(|(k, v)| v.as_ref() == Some(k)));
        assert_eq!(db.get(&keys[1234]).unwrap(), Some(keys[1234].clone()));
        db.put(&key(10_000 + round), b"again").unwrap();
        assert_eq!(
            db.get(&key(10_000 + round)).unwrap(),
            Some(b"again".to_vec())
        );
    }
    assert_eq!(rounds_with_panics, 3, "helpers took runs in 3 rounds");
}
