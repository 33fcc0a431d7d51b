//! Scans over range deletes against a BTreeMap model, in shapes `model_randomized.rs` does not
//! reach: several background jobs and subcompactions, value separation, reused logs, a
//! compaction filter (in-place rewrites of the deepest level) with expiring keys, keys-only
//! iterators, long-lived iterators and snapshots, read-only handles following a writer, and
//! repair. Scans move the sources older than a tombstone past its range (`iter/db_iter.rs`);
//! these check that nothing visible is skipped and nothing hidden is shown. More rounds:
//! `STRATA_SCAN_MODEL_SEEDS=25 STRATA_SCAN_MODEL_OPS=6000`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use strata::{CompressionType, MemEnv, Options, ReadOptions, Snapshot, ValueSeparation, DB};
use support::state::Model;
use support::trials::trials;

const KEYS: u32 = 1500;

fn k(n: u32) -> Vec<u8> {
    format!("{n:05}").into_bytes()
}

fn val(rng: &mut StdRng, big: bool) -> Vec<u8> {
    let len = if big && rng.gen_bool(0.3) {
        rng.gen_range(100..400)
    } else {
        rng.gen_range(1..40)
    };
    let c = rng.gen_range(b'a'..=b'z');
    vec![c; len]
}

fn del_range(model: &mut Model, s: &[u8], e: &[u8]) {
    model.retain(|key, _| !(key.as_slice() >= s && key.as_slice() < e));
}

/// Random walk (with bounds) compared with `model`; keys-only when `keys_only`.
fn walk(db: &DB, model: &Model, snap: Option<&Snapshot>, rng: &mut StdRng, tag: &str) {
    let lower = rng.gen_bool(0.2).then(|| k(rng.gen_range(0..KEYS)));
    let upper = rng.gen_bool(0.2).then(|| k(rng.gen_range(0..KEYS)));
    let ro = ReadOptions {
        snapshot: snap.cloned(),
        lower_bound: lower.clone(),
        upper_bound: upper.clone(),
        fill_cache: rng.gen_bool(0.5),
        ..ReadOptions::default()
    };
    let exp: Vec<(&Vec<u8>, &Vec<u8>)> = model
        .iter()
        .filter(|(key, _)| {
            lower.as_ref().is_none_or(|l| *key >= l) && upper.as_ref().is_none_or(|u| *key < u)
        })
        .collect();
    let keys_only = rng.gen_bool(0.3);
    enum It {
        Full(strata::DbIterator),
        Keys(strata::KeyIterator),
    }
    let mut it = if keys_only {
        It::Keys(db.iter_keys_opt(&ro))
    } else {
        It::Full(db.iter_opt(&ro))
    };
    macro_rules! call {
        ($m:ident $(, $a:expr)?) => {
            match &mut it {
                It::Full(i) => i.$m($($a)?),
                It::Keys(i) => i.$m($($a)?),
            }
        };
    }
    let mut pos: Option<usize> = match rng.gen_range(0..3) {
        0 => {
            call!(seek_to_first);
            (!exp.is_empty()).then_some(0)
        }
        1 => {
            call!(seek_to_last);
            exp.len().checked_sub(1)
        }
        _ => {
            let t = k(rng.gen_range(0..KEYS));
            call!(seek, &t);
            let f = exp.partition_point(|(key, _)| {
                key.as_slice() < t.as_slice()
                    || lower
                        .as_ref()
                        .is_some_and(|l| key.as_slice() < l.as_slice())
            });
            (f < exp.len()).then_some(f)
        }
    };
    // Long walks so forward moves cross deleted ranges; mostly forward.
    for step in 0..rng.gen_range(1..400) {
        let (valid, key) = match &it {
            It::Full(i) => (i.valid(), i.key().to_vec()),
            It::Keys(i) => (i.valid(), i.key().to_vec()),
        };
        match pos {
            Some(p) => {
                assert!(
                    valid,
                    "{tag}: step {step}: iterator ended early; expected {:?} (snap {}, lower {:?}, upper {:?})",
                    String::from_utf8_lossy(exp[p].0),
                    snap.is_some(),
                    lower.as_ref().map(|l| String::from_utf8_lossy(l).into_owned()),
                    upper.as_ref().map(|l| String::from_utf8_lossy(l).into_owned()),
                );
                assert_eq!(
                    String::from_utf8_lossy(&key),
                    String::from_utf8_lossy(exp[p].0),
                    "{tag}: step {step} key (snap {}, keys_only {keys_only})",
                    snap.is_some()
                );
                match &it {
                    It::Full(i) => assert_eq!(i.value(), exp[p].1.as_slice(), "{tag}: value"),
                    It::Keys(i) => assert_eq!(i.value_len(), exp[p].1.len() as u64, "{tag}"),
                }
            }
            None => {
                assert!(
                    !valid,
                    "{tag}: extra key {:?}",
                    String::from_utf8_lossy(&key)
                );
                break;
            }
        }
        let p = pos.unwrap();
        if rng.gen_bool(0.8) {
            call!(next);
            pos = (p + 1 < exp.len()).then_some(p + 1);
        } else {
            call!(prev);
            pos = p.checked_sub(1);
        }
    }
    match &it {
        It::Full(i) => i.status().expect("status"),
        It::Keys(i) => i.status().expect("status"),
    }
}

struct Cfg {
    name: &'static str,
    jobs: usize,
    subcompactions: usize,
    separation: bool,
    reuse_logs: bool,
    filter: bool,
    expiring: bool,
}

fn opts(cfg: &Cfg, env: &Arc<MemEnv>) -> Options {
    Options {
        range_deletes: true,
        block_size: 1024,
        compression: CompressionType::None,
        write_buffer_size: 64 << 10,
        max_background_jobs: cfg.jobs,
        max_subcompactions: cfg.subcompactions,
        reuse_logs: cfg.reuse_logs,
        expiring_keys: cfg.expiring,
        compaction_filter: cfg
            .filter
            .then(|| Arc::new(support::KeepAll) as Arc<dyn strata::CompactionFilter>),
        value_separation: cfg.separation.then(|| {
            let mut v = ValueSeparation::new(100);
            v.file_size = 64 << 10;
            v
        }),
        block_cache: Some(strata::BlockCache::new(128 << 10)),
        ..support::options(env)
    }
}

fn run(cfg: &Cfg, seed: u64, ops: usize) {
    let env = Arc::new(MemEnv::new());
    let path = std::path::Path::new("/rv");
    let mut db = DB::open(path, opts(cfg, &env)).expect("open");
    const START: u64 = 1_767_225_600_000_000;
    env.set_clock(Some(START));
    let mut now = START;
    let mut exp: std::collections::BTreeMap<Vec<u8>, u64> = Default::default();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut model = Model::new();
    type Exp = std::collections::BTreeMap<Vec<u8>, u64>;
    let mut snaps: Vec<(Snapshot, Model, Exp)> = Vec::new();
    // An iterator made long ago, with the model of its time.
    let mut held: Option<(strata::DbIterator, Model, Exp)> = None;
    fn purge(m: &mut Model, e: &mut Exp, now: u64) {
        e.retain(|key, &mut at| {
            if at <= now {
                m.remove(key);
            }
            at > now
        });
    }
    for step in 0..ops {
        let tag = format!("{} seed {seed} step {step}", cfg.name);
        // Expired keys read as deleted, at snapshots too.
        purge(&mut model, &mut exp, now);
        for (_, m, e) in &mut snaps {
            purge(m, e, now);
        }
        if let Some((_, m, e)) = &mut held {
            purge(m, e, now);
        }
        match rng.gen_range(0..100) {
            0..=54 => {
                // Sequential-ish fills make flushes that overlap nothing (placed at L1/L2).
                let base = rng.gen_range(0..KEYS);
                for i in 0..rng.gen_range(1..30) {
                    let key = k((base + i) % KEYS);
                    let v = val(&mut rng, cfg.separation);
                    if cfg.expiring && rng.gen_bool(0.3) {
                        let ttl = std::time::Duration::from_millis(rng.gen_range(1..5000));
                        db.put_with_ttl(&key, &v, ttl).unwrap();
                        exp.insert(key.clone(), now + ttl.as_micros() as u64);
                    } else {
                        db.put(&key, &v).unwrap();
                        exp.remove(&key);
                    }
                    model.insert(key, v);
                }
            }
            55..=59 => {
                let key = k(rng.gen_range(0..KEYS));
                db.delete(&key).unwrap();
                model.remove(&key);
                exp.remove(&key);
                if cfg.expiring {
                    let by = std::time::Duration::from_millis(rng.gen_range(0..3000));
                    env.advance_clock(by);
                    now += by.as_micros() as u64;
                }
            }
            60..=71 => {
                let s = rng.gen_range(0..KEYS);
                let w = match rng.gen_range(0..10) {
                    0 => rng.gen_range(0..KEYS),
                    _ => rng.gen_range(1..80),
                };
                let (s, e) = (k(s), k(s + w));
                db.delete_range(&s, &e).unwrap();
                del_range(&mut model, &s, &e);
                exp.retain(|key, _| {
                    !(key.as_slice() >= s.as_slice() && key.as_slice() < e.as_slice())
                });
            }
            72..=75 => {
                if snaps.len() < 4 {
                    snaps.push((db.snapshot(), model.clone(), exp.clone()));
                } else {
                    snaps.remove(rng.gen_range(0..snaps.len()));
                }
            }
            76..=80 => {
                let a = rng.gen_range(0..KEYS);
                let b = a + rng.gen_range(0..600);
                let (a, b) = (k(a), k(b));
                let whole = rng.gen_bool(0.2);
                if whole {
                    db.compact_range(None, None).unwrap();
                } else {
                    db.compact_range(Some(&a), Some(&b)).unwrap();
                }
            }
            81 => {
                if rng.gen_bool(0.2) {
                    drop(held.take());
                    snaps.clear();
                    drop(db);
                    db = DB::open(path, opts(cfg, &env)).expect("reopen");
                }
            }
            82..=84 => {
                // Check the long-lived iterator, then maybe replace it.
                if let Some((mut it, m, _)) = held.take() {
                    it.seek_to_first();
                    let mut got = Model::new();
                    while it.valid() {
                        got.insert(it.key().to_vec(), it.value().to_vec());
                        it.next();
                    }
                    it.status().unwrap();
                    assert!(got == m, "{tag}: held iterator differs: {}", diff(&got, &m));
                }
                if rng.gen_bool(0.7) {
                    held = Some((db.iter(), model.clone(), exp.clone()));
                }
            }
            _ => {
                walk(&db, &model, None, &mut rng, &tag);
                if !snaps.is_empty() {
                    let i = rng.gen_range(0..snaps.len());
                    let (s, m, _) = &snaps[i];
                    walk(&db, m, Some(s), &mut rng, &format!("{tag} snapshot {i}"));
                }
                if rng.gen_bool(0.1) {
                    let got = support::state::scan(&db, &ReadOptions::default()).unwrap();
                    assert!(
                        got == model,
                        "{tag}: full scan differs: {}",
                        diff(&got, &model)
                    );
                }
            }
        }
    }
}

fn diff(got: &Model, want: &Model) -> String {
    // Up to five keys of `of` that `from` lacks.
    let absent = |from: &Model, of: &Model| -> Vec<String> {
        of.keys()
            .filter(|key| !from.contains_key(*key))
            .take(5)
            .map(|key| String::from_utf8_lossy(key).into_owned())
            .collect()
    };
    format!(
        "extra {:?} missing {:?}",
        absent(want, got),
        absent(got, want)
    )
}

const CFGS: &[Cfg] = &[
    Cfg {
        name: "4 jobs, 4 subcompactions",
        jobs: 4,
        subcompactions: 4,
        separation: false,
        reuse_logs: false,
        filter: false,
        expiring: false,
    },
    Cfg {
        name: "value separation, 3 jobs",
        jobs: 3,
        subcompactions: 2,
        separation: true,
        reuse_logs: false,
        filter: false,
        expiring: false,
    },
    Cfg {
        name: "reuse logs, 1 job",
        jobs: 1,
        subcompactions: 1,
        separation: false,
        reuse_logs: true,
        filter: false,
        expiring: false,
    },
    Cfg {
        name: "compaction filter (in-place rewrites), expiring keys, 2 jobs",
        jobs: 2,
        subcompactions: 2,
        separation: false,
        reuse_logs: false,
        filter: true,
        expiring: true,
    },
];

#[test]
fn scans_match_model_under_many_shapes() {
    let seeds = trials("STRATA_SCAN_MODEL_SEEDS", 3);
    let ops = trials("STRATA_SCAN_MODEL_OPS", 3000) as usize;
    for cfg in CFGS {
        for seed in 0..seeds {
            run(cfg, 1000 + seed, ops);
        }
    }
}

/// A read-only handle following a writer with range deletes: after each refresh, its scans
/// (which skip) match its own point reads (which do not). The handle may see a prefix of the
/// writer's writes, so the writer's model is only a guide.
#[test]
fn read_only_handle_scans_match_its_point_reads() {
    let seeds = trials("STRATA_SCAN_MODEL_SEEDS", 3);
    for seed in 0..seeds {
        let env = Arc::new(MemEnv::new());
        let path = std::path::Path::new("/rw");
        let cfg = &CFGS[0];
        let db = DB::open(path, opts(cfg, &env)).unwrap();
        db.put(b"x", b"y").unwrap();
        let ro_opts = Options {
            create_if_missing: false,
            ..opts(cfg, &env)
        };
        let ro = DB::open_read_only(path, ro_opts).unwrap();
        let mut rng = StdRng::seed_from_u64(seed);
        let mut model = Model::new();
        model.insert(b"x".to_vec(), b"y".to_vec());
        let mut lagging = 0;
        for step in 0..2500 {
            match rng.gen_range(0..100) {
                0..=59 => {
                    let base = rng.gen_range(0..KEYS);
                    for i in 0..rng.gen_range(1..30) {
                        let key = k((base + i) % KEYS);
                        let v = val(&mut rng, false);
                        db.put(&key, &v).unwrap();
                        model.insert(key, v);
                    }
                }
                60..=74 => {
                    let s = rng.gen_range(0..KEYS);
                    let w = rng.gen_range(1..120);
                    let (s, e) = (k(s), k(s + w));
                    db.delete_range(&s, &e).unwrap();
                    del_range(&mut model, &s, &e);
                }
                75..=79 => {
                    let a = rng.gen_range(0..KEYS);
                    db.compact_range(Some(&k(a)), Some(&k(a + 300))).unwrap();
                }
                _ => {
                    ro.refresh().unwrap();
                    let tag = format!("read-only seed {seed} step {step}");
                    let mut keys: Vec<Vec<u8>> = (0..KEYS + 200).map(k).collect();
                    keys.push(b"x".to_vec());
                    let values = ro.get_many(&keys).unwrap();
                    let seen: Model = keys
                        .into_iter()
                        .zip(values)
                        .filter_map(|(key, v)| v.map(|v| (key, v)))
                        .collect();
                    if seen != model {
                        lagging += 1;
                    }
                    walk(&ro, &seen, None, &mut rng, &tag);
                    let got = support::state::scan(&ro, &ReadOptions::default()).unwrap();
                    assert!(
                        got == seen,
                        "{tag}: full scan differs: {}",
                        diff(&got, &seen)
                    );
                }
            }
        }
        eprintln!(
            "seed {seed}: read-only view differed from the writer's model at {lagging} checks"
        );
    }
}

/// After `repair` (every table to level 0, compacted whole when tables interleave), then
/// more writes and range deletes, scans match the model.
#[test]
fn scans_after_repair_match_model() {
    for seed in 0..4u64 {
        let env = Arc::new(MemEnv::new());
        let path = std::path::Path::new("/rp");
        let cfg = &CFGS[0];
        let mut rng = StdRng::seed_from_u64(seed);
        let mut model = Model::new();
        let ops = |db: &DB, model: &mut Model, rng: &mut StdRng, n: usize| {
            for _ in 0..n {
                if rng.gen_bool(0.8) {
                    let base = rng.gen_range(0..KEYS);
                    for i in 0..rng.gen_range(1..30) {
                        let key = k((base + i) % KEYS);
                        let v = val(rng, false);
                        db.put(&key, &v).unwrap();
                        model.insert(key, v);
                    }
                } else {
                    let s = rng.gen_range(0..KEYS);
                    let (s, e) = (k(s), k(s + rng.gen_range(1..150)));
                    db.delete_range(&s, &e).unwrap();
                    del_range(model, &s, &e);
                }
                if rng.gen_bool(0.02) {
                    let a = rng.gen_range(0..KEYS);
                    db.compact_range(Some(&k(a)), Some(&k(a + 400))).unwrap();
                }
            }
        };
        {
            let db = DB::open(path, opts(cfg, &env)).unwrap();
            ops(&db, &mut model, &mut rng, 1500);
        }
        strata::repair(path, &opts(cfg, &env)).unwrap();
        let db = DB::open(path, opts(cfg, &env)).unwrap();
        for round in 0..40 {
            let tag = format!("repair seed {seed} round {round}");
            let got = support::state::scan(&db, &ReadOptions::default()).unwrap();
            assert!(
                got == model,
                "{tag}: full scan differs: {}",
                diff(&got, &model)
            );
            walk(&db, &model, None, &mut rng, &tag);
            ops(&db, &mut model, &mut rng, 20);
        }
    }
}
