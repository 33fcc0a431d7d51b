//! Compactions side by side (`Options::max_background_jobs`), under load, checked against a
//! model.
//!
//! Randomized: writer threads put, delete and write batches over keys each of them owns (so
//! each keeps an exact model of its keys), reading their own keys back, taking snapshots and
//! checking them later against copies of their model; a reader thread scans the whole
//! database (keys in order, every value naming its key) and reads batches of keys; another
//! thread calls `compact_range` on random ranges (a compaction filter that keeps everything
//! makes it rewrite the deepest level in place too) and now and then suspends compactions. Each
//! round ends with a reopen, after which the database holds exactly the writers' models. Run
//! with one, two and four compaction threads, with and without subcompactions; the info log
//! tells how many compactions ran at once at most (printed; two or more in practice).
//! `PARALLEL_COMPACTIONS_TRIALS` sets the number of seeds per setup,
//! `PARALLEL_COMPACTIONS_SEED` reruns one.
//!
//! Deterministic: a compaction held in the middle of its merge does not keep a compaction of
//! other keys into another level from running and finishing.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use strata::{Logger, MemEnv, Options, ReadOptions, Snapshot, WriteBatch, DB};
use support::hold::{on_a_compaction_thread, Hold};
use support::state::{files_at_level, scan, write_until_level0_compacts, Model};

const DIR: &str = "/parallel";
const WRITERS: usize = 3;
const KEYS_PER_WRITER: u64 = 3000;
const OPS_PER_ROUND: usize = 3000;
const ROUNDS: usize = 3;

/// Counts the compactions running at once, from the info log's lines.
#[derive(Default)]
struct Concurrency {
    running: AtomicUsize,
    most: AtomicUsize,
}

impl Logger for Concurrency {
    fn log(&self, message: &str) {
        if message.starts_with("compacting ") {
            let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
            self.most.fetch_max(now, Ordering::SeqCst);
        } else if message.starts_with("compacted to") || message.starts_with("compaction failed") {
            self.running.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

fn key(writer: usize, i: u64) -> Vec<u8> {
    format!("w{writer}-{i:06}").into_bytes()
}

/// A value naming its key, written as the `n`th by its writer, of 100 to 1,600 bytes.
fn value(key: &[u8], n: u64, rng: &mut StdRng) -> Vec<u8> {
    let pad = rng.gen_range(100..1600);
    let mut v = format!("{}={n}:", String::from_utf8_lossy(key)).into_bytes();
    v.resize(v.len() + pad, b'v');
    v
}

/// Whether `value` is one written for `key`.
fn names(value: &[u8], key: &[u8]) -> bool {
    value.starts_with(key) && value.get(key.len()) == Some(&b'=')
}

/// The writer's keys, as read options bounding a scan to them (at `snapshot`).
fn own_keys(writer: usize, snapshot: Option<&Snapshot>) -> ReadOptions {
    ReadOptions {
        lower_bound: Some(format!("w{writer}-").into_bytes()),
        upper_bound: Some(format!("w{writer}.").into_bytes()),
        snapshot: snapshot.cloned(),
        ..ReadOptions::default()
    }
}

/// One writer's round: random writes over its keys, checked reads, snapshots checked later.
fn write_round(db: &DB, writer: usize, model: &mut Model, rng: &mut StdRng, n: &mut u64) {
    let mut snapshots: Vec<(Snapshot, Model)> = Vec::new();
    for _ in 0..OPS_PER_ROUND {
        let k = key(writer, rng.gen_range(0..KEYS_PER_WRITER));
        match rng.gen_range(0..100) {
            0..55 => {
                *n += 1;
                let v = value(&k, *n, rng);
                db.put(&k, &v).unwrap();
                model.insert(k, v);
            }
            55..70 => {
                db.delete(&k).unwrap();
                model.remove(&k);
            }
            70..85 => {
                let mut batch = WriteBatch::new();
                let mut applied = model.clone();
                for _ in 0..rng.gen_range(1..20) {
                    let k = key(writer, rng.gen_range(0..KEYS_PER_WRITER));
                    if rng.gen_bool(0.7) {
                        *n += 1;
                        let v = value(&k, *n, rng);
                        batch.put(&k, &v);
                        applied.insert(k, v);
                    } else {
                        batch.delete(&k);
                        applied.remove(&k);
                    }
                }
                db.write(&batch).unwrap();
                *model = applied;
            }
            85..95 => {
                assert_eq!(db.get(&k).unwrap().as_ref(), model.get(&k), "get of {k:?}");
            }
            95..98 if snapshots.len() < 3 => snapshots.push((db.snapshot(), model.clone())),
            _ => {
                if let Some((snapshot, then)) = snapshots.pop() {
                    let seen = scan(db, &own_keys(writer, Some(&snapshot))).unwrap();
                    assert!(seen == then, "writer {writer}: a snapshot changed");
                }
            }
        }
    }
    let seen = scan(db, &own_keys(writer, None)).unwrap();
    assert!(
        seen == *model,
        "writer {writer}: its keys differ from its model"
    );
}

/// Scans and batched reads until `stop`: keys in order, each value naming its key.
fn read_until(db: &DB, stop: &AtomicBool, rng: &mut StdRng) {
    while !stop.load(Ordering::Acquire) {
        let mut it = db.iter();
        it.seek_to_first();
        let mut last: Option<Vec<u8>> = None;
        while it.valid() {
            assert!(last.as_deref() < Some(it.key()), "scan out of order");
            assert!(names(it.value(), it.key()), "value of another key");
            last = Some(it.key().to_vec());
            it.next();
        }
        it.status().unwrap();
        let keys: Vec<Vec<u8>> = (0..50)
            .map(|_| key(rng.gen_range(0..WRITERS), rng.gen_range(0..KEYS_PER_WRITER)))
            .collect();
        for (k, v) in keys.iter().zip(db.get_many(&keys).unwrap()) {
            assert!(
                v.is_none_or(|v| names(&v, k)),
                "get_many: value of another key"
            );
        }
    }
}

/// `compact_range` on random ranges (sometimes all), now and then inside a short suspension
/// of compactions, until `stop`.
fn compact_until(db: &DB, stop: &AtomicBool, rng: &mut StdRng) {
    while !stop.load(Ordering::Acquire) {
        let (a, b) = (
            key(rng.gen_range(0..WRITERS), rng.gen_range(0..KEYS_PER_WRITER)),
            key(rng.gen_range(0..WRITERS), rng.gen_range(0..KEYS_PER_WRITER)),
        );
        let (begin, end) = if a <= b { (a, b) } else { (b, a) };
        if rng.gen_bool(0.2) {
            db.compact_range(None, None).unwrap();
        } else {
            db.compact_range(Some(&begin), Some(&end)).unwrap();
        }
        if rng.gen_bool(0.2) {
            db.suspend_compactions();
            std::thread::sleep(Duration::from_millis(rng.gen_range(1..20)));
            db.resume_compactions();
        }
        std::thread::sleep(Duration::from_millis(rng.gen_range(0..30)));
    }
}

/// Runs the rounds of one seed with `jobs` compaction threads and `subcompactions`; returns
/// how many compactions ran at once at most.
fn trial(seed: u64, jobs: usize, subcompactions: usize) -> usize {
    let env = Arc::new(MemEnv::new());
    let concurrency = Arc::new(Concurrency::default());
    let options = Options {
        write_buffer_size: 64 << 10,
        max_file_size: 1 << 20,
        max_background_jobs: jobs,
        max_subcompactions: subcompactions,
        block_cache: Some(strata::BlockCache::new(1 << 20)),
        info_log: Some(Arc::clone(&concurrency) as Arc<dyn Logger>),
        // `compact_range` then also rewrites the deepest level in place, which runs beside
        // compactions of level 0 (they write to another level).
        compaction_filter: Some(Arc::new(support::KeepAll)),
        ..support::options(&env)
    };
    let mut models: Vec<Model> = vec![Model::new(); WRITERS];
    let mut counters = vec![0u64; WRITERS];
    let mut rng = StdRng::seed_from_u64(seed);
    for round in 0..ROUNDS {
        let db = DB::open(DIR, options.clone()).unwrap();
        let expected: Model = models
            .iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        assert!(
            scan(&db, &ReadOptions::default()).unwrap() == expected,
            "seed {seed}, jobs {jobs}: round {round} reopened to another state"
        );
        let stop = AtomicBool::new(false);
        let seeds: Vec<u64> = (0..WRITERS + 2).map(|_| rng.gen()).collect();
        std::thread::scope(|scope| {
            let helpers = [
                scope.spawn(|| read_until(&db, &stop, &mut StdRng::seed_from_u64(seeds[0]))),
                scope.spawn(|| compact_until(&db, &stop, &mut StdRng::seed_from_u64(seeds[1]))),
            ];
            let writers: Vec<_> = models
                .iter_mut()
                .zip(&mut counters)
                .enumerate()
                .map(|(w, (model, n))| {
                    let db = &db;
                    let seed = seeds[2 + w];
                    scope.spawn(move || {
                        write_round(db, w, model, &mut StdRng::seed_from_u64(seed), n);
                    })
                })
                .collect();
            for writer in writers {
                writer.join().unwrap();
            }
            stop.store(true, Ordering::Release);
            for helper in helpers {
                helper.join().unwrap();
            }
        });
    }
    let db = DB::open(DIR, options).unwrap();
    let expected: Model = models.into_iter().flatten().collect();
    assert!(
        scan(&db, &ReadOptions::default()).unwrap() == expected,
        "seed {seed}, jobs {jobs}: the last reopen lost or changed data"
    );
    concurrency.most.load(Ordering::SeqCst)
}

fn run(jobs: usize, subcompactions: usize, salt: u64) {
    let count = support::trials::trials("PARALLEL_COMPACTIONS_TRIALS", 1);
    for seed in support::trials::seeds("PARALLEL_COMPACTIONS_SEED", count, salt) {
        let most = trial(seed, jobs, subcompactions);
        eprintln!("seed {seed}, jobs {jobs}, subcompactions {subcompactions}: at most {most} compactions at once");
        assert!(
            most <= jobs,
            "{most} compactions at once with {jobs} threads"
        );
    }
}

#[test]
fn one_compaction_thread_matches_the_model() {
    run(1, 2, 0x0001);
}

#[test]
fn two_compaction_threads_match_the_model() {
    run(2, 1, 0x0002);
}

#[test]
fn four_compaction_threads_with_subcompactions_match_the_model() {
    run(4, 2, 0x0004);
}

#[test]
fn a_compaction_of_other_keys_finishes_while_one_is_held() {
    let hold = Hold::new(Arc::new(MemEnv::new()), on_a_compaction_thread);
    let options = Options {
        write_buffer_size: 64 << 10,
        max_background_jobs: 2,
        max_subcompactions: 1,
        compaction_filter: Some(Arc::new(support::KeepAll)),
        ..support::options(hold.env())
    };
    let db = Arc::new(DB::open(DIR, options).unwrap());
    let mut model = Model::new();
    let mut put = |db: &DB, prefix: &str, round: u32| {
        for i in 0..400u32 {
            let key = format!("{prefix}{i:04}").into_bytes();
            let value = format!("{prefix} round {round} {}", "v".repeat(150)).into_bytes();
            db.put(&key, &value).unwrap();
            model.insert(key, value);
        }
    };
    // `z` keys alone in a table deep down (a flush overlapping nothing goes to level 2).
    put(&db, "z", 0);
    db.compact_range(None, None).unwrap();
    assert_eq!(files_at_level(&db, 2), 1);
    // `a` keys, overwritten until level 0 reaches its compaction trigger; that compaction is
    // held.
    hold.arm();
    write_until_level0_compacts(&db, |round| put(&db, "a", round));
    assert!(
        hold.wait_held(Duration::from_secs(60)),
        "no compaction started"
    );
    // Meanwhile `compact_range` over the `z` keys rewrites their table in place (the filter
    // asks for it), beside the held compaction, and returns.
    let compacting = {
        let db = Arc::clone(&db);
        std::thread::spawn(move || db.compact_range(Some(b"z"), Some(b"zz")))
    };
    support::trials::wait_until(
        "compact_range of other keys beside a held compaction",
        Duration::from_secs(60),
        || compacting.is_finished(),
    );
    compacting.join().unwrap().unwrap();
    hold.release();
    db.compact_range(None, None).unwrap();
    assert_eq!(scan(&db, &ReadOptions::default()).unwrap(), model);
}
