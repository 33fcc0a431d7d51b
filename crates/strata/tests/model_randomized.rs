//! A long random sequence of operations checked op by op against a `BTreeMap` model, under
//! several option sets, over the in-memory Env with small buffers so flushes and compactions
//! happen constantly. Snapshots are checked against copies of the model taken with them;
//! reopening checks that everything acknowledged survives. Option sets with
//! `Options::range_deletes` also delete ranges (alone and in batches), with subcompactions on;
//! every set clears ranges key by key (`DB::clear_range`) and reads batches of keys
//! (`DB::get_many`, at the latest state and at snapshots). Sets with `Options::expiring_keys`
//! also put values with a time to live (alone and in batches) while the test moves the `Env`'s
//! clock by hand: the model drops a key when its time comes, and so must every read. (Output-file cuts through
//! tombstones need tables of 1 MiB, too big for this test: `range_deletes.rs` covers them.)

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use strata::{
    BloomFilterPolicy, CompressionType, MemEnv, Options, ReadOptions, Snapshot, WriteBatch, DB,
};
use support::state::{files_at_level, Model};

struct Config {
    name: &'static str,
    block_size: usize,
    restart_interval: usize,
    compression: CompressionType,
    bloom: bool,
    write_buffer_size: usize,
    reuse_logs: bool,
    range_deletes: bool,
    expiring_keys: bool,
    max_file_size: usize,
    max_subcompactions: usize,
}

const CONFIGS: &[Config] = &[
    Config {
        name: "small blocks, snappy, bloom",
        block_size: 256,
        restart_interval: 4,
        compression: CompressionType::Snappy,
        bloom: true,
        write_buffer_size: 64 << 10,
        reuse_logs: false,
        range_deletes: false,
        expiring_keys: false,
        max_file_size: 1 << 20,
        max_subcompactions: 1,
    },
    Config {
        name: "defaults-like, no compression",
        block_size: 4096,
        restart_interval: 16,
        compression: CompressionType::None,
        bloom: false,
        write_buffer_size: 64 << 10,
        reuse_logs: true,
        range_deletes: false,
        expiring_keys: false,
        max_file_size: 1 << 20,
        max_subcompactions: 1,
    },
    Config {
        name: "restart interval 1, bloom, no compression",
        block_size: 1024,
        restart_interval: 1,
        compression: CompressionType::None,
        bloom: true,
        write_buffer_size: 128 << 10,
        reuse_logs: false,
        range_deletes: false,
        expiring_keys: false,
        max_file_size: 1 << 20,
        max_subcompactions: 1,
    },
    Config {
        name: "large blocks, snappy",
        block_size: 16 << 10,
        restart_interval: 32,
        compression: CompressionType::Snappy,
        bloom: false,
        write_buffer_size: 96 << 10,
        reuse_logs: true,
        range_deletes: false,
        expiring_keys: false,
        max_file_size: 1 << 20,
        max_subcompactions: 1,
    },
    Config {
        name: "range deletes, expiring keys, subcompactions, snappy, bloom",
        block_size: 512,
        restart_interval: 4,
        compression: CompressionType::Snappy,
        bloom: true,
        write_buffer_size: 64 << 10,
        reuse_logs: false,
        range_deletes: true,
        expiring_keys: true,
        max_file_size: 1 << 20,
        max_subcompactions: 4,
    },
    Config {
        name: "range deletes, expiring keys, reused logs, no compression",
        block_size: 4096,
        restart_interval: 16,
        compression: CompressionType::None,
        bloom: false,
        write_buffer_size: 96 << 10,
        reuse_logs: true,
        range_deletes: true,
        expiring_keys: true,
        max_file_size: 1 << 20,
        max_subcompactions: 2,
    },
];

fn options(config: &Config, env: &Arc<MemEnv>) -> Options {
    Options {
        block_size: config.block_size,
        block_restart_interval: config.restart_interval,
        compression: config.compression,
        filter_policy: config
            .bloom
            .then(|| Arc::new(BloomFilterPolicy::new(10)) as Arc<dyn strata::FilterPolicy>),
        write_buffer_size: config.write_buffer_size,
        max_file_size: config.max_file_size,
        max_subcompactions: config.max_subcompactions,
        range_deletes: config.range_deletes,
        expiring_keys: config.expiring_keys,
        reuse_logs: config.reuse_logs,
        block_cache: Some(strata::BlockCache::new(256 << 10)),
        ..support::options(env)
    }
}

fn key(rng: &mut StdRng) -> Vec<u8> {
    // A small key space so keys are overwritten and deleted often; some long shared prefixes.
    let n: u32 = rng.gen_range(0..3000);
    if n % 7 == 0 {
        format!("prefix/with/a/long/shared/part/{n:06}").into_bytes()
    } else {
        format!("{n:06}").into_bytes()
    }
}

/// A range `[start, end)` to delete: mostly a few dozen keys, sometimes empty or thousands.
fn range(rng: &mut StdRng) -> (Vec<u8>, Vec<u8>) {
    let n: u32 = rng.gen_range(0..3000);
    let width: u32 = match rng.gen_range(0..20) {
        0 => 0,
        1 => rng.gen_range(0..3000),
        _ => rng.gen_range(1..60),
    };
    // Now and then among the long shared-prefix keys (both bounds, so start <= end).
    let prefix = n % 97 == 0;
    let bound = |n: u32| {
        if prefix {
            format!("prefix/with/a/long/shared/part/{n:06}").into_bytes()
        } else {
            format!("{n:06}").into_bytes()
        }
    };
    (bound(n), bound(n + width))
}

/// Removes the keys of `[start, end)` from `model`.
fn delete_range(model: &mut Model, start: &[u8], end: &[u8]) {
    model.retain(|k, _| !(k.as_slice() >= start && k.as_slice() < end));
}

/// Where the test's clock starts (2026-01-01T00:00:00Z, microseconds); it moves only when the
/// test advances it.
const START: u64 = 1_767_225_600_000_000;

/// The expiry times (microseconds) of the model's keys written with a time to live.
#[derive(Clone, Default)]
struct Expiries(std::collections::BTreeMap<Vec<u8>, u64>);

impl Expiries {
    /// Removes from `model` every key expired at `now` (an expired key reads as deleted).
    fn purge(&mut self, model: &mut Model, now: u64) {
        self.0.retain(|k, &mut at| {
            if at <= now {
                model.remove(k);
            }
            at > now
        });
    }
}

/// A time to live: mostly a few seconds (the clock moves by up to 3 s at a time).
fn ttl(rng: &mut StdRng) -> std::time::Duration {
    std::time::Duration::from_millis(rng.gen_range(0..8000))
}

fn value(rng: &mut StdRng) -> Vec<u8> {
    let len = match rng.gen_range(0..20) {
        0 => 0,
        1 => rng.gen_range(1000..6000),
        _ => rng.gen_range(1..200),
    };
    (0..len)
        .map(|i| b'a' + ((i * 7 + len) % 26) as u8)
        .collect()
}

/// Everything an iterator yields, walking forward from `seek` (or the start).
fn check_iteration(db: &DB, model: &Model, snapshot: Option<&Snapshot>, rng: &mut StdRng) {
    let lower = rng.gen_bool(0.3).then(|| key(rng));
    let upper = rng.gen_bool(0.3).then(|| key(rng));
    let options = ReadOptions {
        snapshot: snapshot.cloned(),
        lower_bound: lower.clone(),
        upper_bound: upper.clone(),
        ..ReadOptions::default()
    };
    let in_bounds =
        |k: &Vec<u8>| lower.as_ref().is_none_or(|l| k >= l) && upper.as_ref().is_none_or(|u| k < u);
    let expected: Vec<(&Vec<u8>, &Vec<u8>)> = model.iter().filter(|(k, _)| in_bounds(k)).collect();
    let mut it = db.iter_opt(&options);

    // A random walk: seek somewhere, then move in random directions, comparing each step.
    let mut pos: Option<usize>;
    match rng.gen_range(0..3) {
        0 => {
            it.seek_to_first();
            pos = (!expected.is_empty()).then_some(0);
        }
        1 => {
            it.seek_to_last();
            pos = expected.len().checked_sub(1);
        }
        _ => {
            let target = key(rng);
            it.seek(&target);
            let first = expected.partition_point(|(k, _)| {
                k.as_slice() < target.as_slice()
                    || lower.as_ref().is_some_and(|l| k.as_slice() < l.as_slice())
            });
            pos = (first < expected.len()).then_some(first);
        }
    }
    for _ in 0..rng.gen_range(1..60) {
        match pos {
            Some(p) => {
                assert!(
                    it.valid(),
                    "iterator ended early; expected {:?}",
                    expected[p].0
                );
                assert_eq!(it.key(), expected[p].0.as_slice());
                assert_eq!(it.value(), expected[p].1.as_slice());
            }
            None => {
                assert!(!it.valid(), "iterator has extra key {:?}", it.key());
                break;
            }
        }
        let p = pos.unwrap_or(0);
        if rng.gen_bool(0.6) {
            it.next();
            pos = (p + 1 < expected.len()).then_some(p + 1);
        } else {
            it.prev();
            pos = p.checked_sub(1);
        }
    }
    it.status().expect("iterator status");
}

/// A `get_many` of up to 100 keys — some neighbours, some repeated, some absent, in random
/// order — answers what the model holds.
fn check_get_many(
    db: &DB,
    model: &Model,
    snapshot: Option<&Snapshot>,
    rng: &mut StdRng,
    step: usize,
) {
    let mut keys: Vec<Vec<u8>> = Vec::new();
    let len = rng.gen_range(1..100);
    while keys.len() < len {
        match rng.gen_range(0..4) {
            // A run of neighbours from the model (they share blocks).
            0 => {
                let run = rng.gen_range(1..20);
                keys.extend(model.range(key(rng)..).take(run).map(|(k, _)| k.clone()));
            }
            1 if !keys.is_empty() => keys.push(keys[rng.gen_range(0..keys.len())].clone()),
            _ => keys.push(key(rng)),
        }
    }
    let options = ReadOptions {
        snapshot: snapshot.cloned(),
        ..ReadOptions::default()
    };
    let values = db.get_many_opt(&options, &keys).expect("get_many");
    let expected: Vec<Option<Vec<u8>>> = keys.iter().map(|k| model.get(k).cloned()).collect();
    assert_eq!(values, expected, "step {step} get_many of {keys:?}");
}

fn run(config: &Config, seed: u64, ops: usize) -> usize {
    let env = Arc::new(MemEnv::new());
    env.set_clock(Some(START));
    let mut now = START;
    let mut expiries = Expiries::default();
    let path = std::path::Path::new("/model-db");
    let mut db = DB::open(path, options(config, &env)).expect("open");
    let mut rng = StdRng::seed_from_u64(seed);
    let mut model = Model::new();
    let mut snapshots: Vec<(Snapshot, Model, Expiries)> = Vec::new();
    let mut executed = 0;
    for step in 0..ops {
        executed += 1;
        match rng.gen_range(0..100) {
            0..=39 => {
                let (k, v) = (key(&mut rng), value(&mut rng));
                if config.expiring_keys && rng.gen_bool(0.25) {
                    let ttl = ttl(&mut rng);
                    db.put_with_ttl(&k, &v, ttl).expect("put_with_ttl");
                    expiries.0.insert(k.clone(), now + ttl.as_micros() as u64);
                    model.insert(k, v);
                    expiries.purge(&mut model, now); // a ttl of 0 has expired already
                } else {
                    db.put(&k, &v).expect("put");
                    expiries.0.remove(&k);
                    model.insert(k, v);
                }
            }
            40..=46 => {
                let k = key(&mut rng);
                db.delete(&k).expect("delete");
                model.remove(&k);
            }
            47..=48 => {
                let (start, end) = range(&mut rng);
                if config.range_deletes {
                    db.delete_range(&start, &end).expect("delete_range");
                } else {
                    let err = db.delete_range(&start, &end).unwrap_err();
                    assert!(matches!(err, strata::Error::NotSupported(_)), "{err}");
                }
                delete_range(&mut model, &start, &end);
                if !config.range_deletes {
                    db.clear_range(&start, &end).expect("clear_range");
                }
            }
            49 => {
                let (start, end) = range(&mut rng);
                let expected = model.range(start.clone()..end.clone()).count();
                let deleted = db.clear_range(&start, &end).expect("clear_range");
                assert_eq!(deleted, expected as u64, "step {step} clear_range");
                delete_range(&mut model, &start, &end);
            }
            50..=57 => {
                let mut batch = WriteBatch::new();
                for _ in 0..rng.gen_range(1..20) {
                    let k = key(&mut rng);
                    if config.range_deletes && rng.gen_bool(0.05) {
                        let (start, end) = range(&mut rng);
                        batch.delete_range(&start, &end);
                        delete_range(&mut model, &start, &end);
                    } else if config.expiring_keys && rng.gen_bool(0.1) {
                        let (v, ttl) = (value(&mut rng), ttl(&mut rng));
                        batch.put_with_ttl(&k, &v, ttl);
                        expiries.0.insert(k.clone(), now + ttl.as_micros() as u64);
                        model.insert(k, v);
                    } else if rng.gen_bool(0.7) {
                        let v = value(&mut rng);
                        batch.put(&k, &v);
                        expiries.0.remove(&k);
                        model.insert(k, v);
                    } else {
                        batch.delete(&k);
                        model.remove(&k);
                    }
                }
                db.write(&batch).expect("write");
                expiries.purge(&mut model, now);
            }
            58..=73 => {
                let k = key(&mut rng);
                assert_eq!(
                    db.get(&k).expect("get"),
                    model.get(&k).cloned(),
                    "step {step} get {k:?}"
                );
            }
            74..=77 => check_get_many(&db, &model, None, &mut rng, step),
            78..=85 => check_iteration(&db, &model, None, &mut rng),
            86..=88 => {
                if snapshots.len() < 8 {
                    snapshots.push((db.snapshot(), model.clone(), expiries.clone()));
                }
            }
            89 => {
                if !snapshots.is_empty() {
                    let i = rng.gen_range(0..snapshots.len());
                    snapshots.swap_remove(i);
                }
            }
            90 => {
                // Time passes: keys expire for every reader, at snapshots too.
                let by = std::time::Duration::from_millis(rng.gen_range(0..3000));
                env.advance_clock(by);
                now += by.as_micros() as u64;
                expiries.purge(&mut model, now);
                for (_, snap_model, snap_expiries) in &mut snapshots {
                    snap_expiries.purge(snap_model, now);
                }
            }
            91..=95 => {
                if let Some(i) = (!snapshots.is_empty()).then(|| rng.gen_range(0..snapshots.len()))
                {
                    let (snap, snap_model, _) = &snapshots[i];
                    let k = key(&mut rng);
                    let options = ReadOptions {
                        snapshot: Some(snap.clone()),
                        ..ReadOptions::default()
                    };
                    assert_eq!(
                        db.get_opt(&options, &k).expect("get at snapshot"),
                        snap_model.get(&k).cloned(),
                        "step {step} snapshot get {k:?}"
                    );
                    check_iteration(&db, snap_model, Some(snap), &mut rng);
                    check_get_many(&db, snap_model, Some(snap), &mut rng, step);
                }
            }
            96..=97 => {
                let (a, b) = (key(&mut rng), key(&mut rng));
                let (lo, hi) = if a < b { (a, b) } else { (b, a) };
                let begin = rng.gen_bool(0.8).then_some(lo.as_slice());
                let end = rng.gen_bool(0.8).then_some(hi.as_slice());
                db.compact_range(begin, end).expect("compact_range");
            }
            _ => {
                // Reopen: snapshots die with the handle.
                snapshots.clear();
                drop(db);
                db = DB::open(path, options(config, &env)).expect("reopen");
                let all: Vec<(Vec<u8>, Vec<u8>)> = {
                    let mut it = db.iter();
                    it.seek_to_first();
                    let mut out = Vec::new();
                    while it.valid() {
                        out.push((it.key().to_vec(), it.value().to_vec()));
                        it.next();
                    }
                    it.status().expect("scan after reopen");
                    out
                };
                let expected: Vec<(Vec<u8>, Vec<u8>)> =
                    model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                assert_eq!(all, expected, "step {step}: contents after reopen");
            }
        }
    }
    // The run must have exercised the machinery it is meant to test.
    let levels: Vec<usize> = (0..7).map(|l| files_at_level(&db, l)).collect();
    let deeper: usize = levels[1..].iter().sum();
    assert!(
        deeper > 0,
        "{}: no table reached level 1+: {levels:?}",
        config.name
    );
    executed
}

#[test]
fn random_operations_match_a_btreemap_model() {
    let ops_per_config = std::env::var("STRATA_MODEL_OPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(25_000);
    let mut total = 0;
    for (i, config) in CONFIGS.iter().enumerate() {
        total += run(config, 0x5eed + i as u64, ops_per_config);
    }
    eprintln!(
        "model test: {total} operations checked across {} option sets",
        CONFIGS.len()
    );
}
