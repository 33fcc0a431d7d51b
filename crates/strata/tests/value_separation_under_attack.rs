//! Value separation attacked (review of issue 14): garbage collection relocating and deleting
//! value files under every kind of reader, and the accounting after a reopen. (Crashes at
//! every kind of operation a collection makes: `value_separation_gc.rs`.)
//!
//! - Readers pinned at random moments — snapshots read by `get`, `get_many` (its runs on the
//!   engine's helper threads) and scans, iterators walked with seeks, `next` and `prev` — read
//!   exactly their moment's values while collection relocates values and deletes files, and
//!   threads reading the latest state meanwhile never meet a missing value.
//! - Reopened, the live bytes counted equal those before.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use strata::{MemEnv, Options, ReadOptions, ValueSeparation, DB};

const DIR: &str = "/db";

/// Which version of each key a reader sees.
type Model = BTreeMap<u32, u32>;

fn separating(env: &impl support::TestEnv) -> Options {
    Options {
        value_separation: Some(ValueSeparation::new(256)),
        write_buffer_size: 128 << 10,
        ..support::options(env)
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

/// Version `version` of key `i`: 300 B to 5 KB (some under the separation size, kept inline),
/// naming both.
fn value(i: u32, version: u32) -> Vec<u8> {
    let len = 200 + ((u64::from(i) * 2_654_435_761 + u64::from(version) * 40_503) % 4_800);
    format!("<{i}:{version}>")
        .bytes()
        .cycle()
        .take(len as usize)
        .collect()
}

/// The key number and version a stored value names, checking the value whole.
fn parse_value(k: &[u8], v: &[u8]) -> (u32, u32) {
    let i: u32 = std::str::from_utf8(&k[3..]).unwrap().parse().unwrap();
    let stamp = String::from_utf8_lossy(&v[..v.len().min(16)]).to_string();
    let version: u32 = stamp
        .trim_start_matches('<')
        .split(':')
        .nth(1)
        .and_then(|v| v.split('>').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("key {i} holds a foreign value"));
    assert!(v == value(i, version), "key {i} version {version} damaged");
    (i, version)
}

fn property(db: &DB, name: &str) -> u64 {
    db.property(&format!("strata.value-files.{name}"))
        .unwrap()
        .parse()
        .unwrap()
}

/// Checks a pinned iterator against its model: seeks to random keys, walks a few steps
/// forward and back, and a full pass both ways.
fn check_iterator(it: &mut strata::DbIterator, model: &Model, keys: u32, rng: &mut StdRng) {
    let entries: Vec<(u32, u32)> = model.iter().map(|(&k, &v)| (k, v)).collect();
    let check_at = |it: &strata::DbIterator, at: Option<usize>| match at {
        Some(at) => {
            assert!(it.valid(), "iterator ended early: {:?}", it.status());
            let (i, version) = entries[at];
            assert_eq!(it.key(), key(i));
            assert!(
                it.value() == value(i, version),
                "iterator: key {i} v{version}"
            );
        }
        None => {
            assert!(!it.valid(), "iterator past its model");
            it.status().unwrap();
        }
    };
    for _ in 0..20 {
        let target = rng.gen_range(0..keys + 1);
        it.seek(&key(target));
        let mut at = entries.partition_point(|&(i, _)| i < target);
        check_at(it, (at < entries.len()).then_some(at));
        if at == entries.len() {
            continue;
        }
        for _ in 0..rng.gen_range(1..8) {
            if rng.gen_bool(0.5) {
                it.next();
                at += 1;
                check_at(it, (at < entries.len()).then_some(at));
                if at == entries.len() {
                    break;
                }
            } else {
                it.prev();
                if at == 0 {
                    check_at(it, None);
                    break;
                }
                at -= 1;
                check_at(it, Some(at));
            }
        }
    }
    it.seek_to_last();
    for at in (0..entries.len()).rev() {
        check_at(it, Some(at));
        it.prev();
    }
    check_at(it, None);
    it.seek_to_first();
    for at in 0..entries.len() {
        check_at(it, Some(at));
        it.next();
    }
    check_at(it, None);
}

/// Checks a snapshot (or the latest state, `None`) against its model by gets, a `get_many`
/// of random keys (absent ones too) and a scan.
fn check_reads(
    db: &DB,
    snapshot: Option<&strata::Snapshot>,
    model: &Model,
    keys: u32,
    rng: &mut StdRng,
) {
    let options = ReadOptions {
        snapshot: snapshot.cloned(),
        ..ReadOptions::default()
    };
    let expect = |i: u32| model.get(&i).map(|&v| value(i, v));
    for _ in 0..30 {
        let i = rng.gen_range(0..keys + 10);
        assert_eq!(
            db.get_opt(&options, &key(i)).unwrap(),
            expect(i),
            "get key {i}"
        );
    }
    let batch: Vec<u32> = (0..rng.gen_range(40..300))
        .map(|_| rng.gen_range(0..keys + 10))
        .collect();
    let keys_of: Vec<Vec<u8>> = batch.iter().map(|&i| key(i)).collect();
    let got = db.get_many_opt(&options, &keys_of).unwrap();
    for (&i, got) in batch.iter().zip(got) {
        assert_eq!(got, expect(i), "get_many key {i}");
    }
    let mut it = db.iter_opt(&options);
    it.seek_to_first();
    for (&i, &version) in model {
        assert!(it.valid(), "scan ended before key {i}: {:?}", it.status());
        assert_eq!(it.key(), key(i));
        assert!(it.value() == value(i, version), "scan key {i}");
        it.next();
    }
    assert!(!it.valid());
    it.status().unwrap();
}

enum Pinned {
    Snapshot(strata::Snapshot, Model),
    Iterator(Box<strata::DbIterator>, Model),
}

#[test]
fn pinned_readers_read_their_exact_values_while_collection_relocates_and_deletes() {
    let keys = 1_500u32;
    for seed in [1u64, 2] {
        let env = Arc::new(MemEnv::new());
        let mut db = Arc::new(DB::open(DIR, separating(&env)).unwrap());
        let mut rng = StdRng::seed_from_u64(seed);
        let mut model = Model::new();
        let mut version = 0u32;
        for i in 0..keys {
            db.put(&key(i), &value(i, version)).unwrap();
            model.insert(i, version);
        }
        let mut pinned: Vec<Pinned> = Vec::new();
        let mut relocated = 0;
        for step in 0..24u32 {
            // Threads reading the latest state meanwhile: any version of a key, never an
            // error (a pointer read while its file goes).
            let stop = Arc::new(AtomicBool::new(false));
            let latest: Vec<_> = (0..2)
                .map(|t| {
                    let (db, stop) = (Arc::clone(&db), Arc::clone(&stop));
                    std::thread::spawn(move || {
                        let mut rng = StdRng::seed_from_u64(seed * 100 + t);
                        let mut reads = 0u64;
                        while !stop.load(Ordering::Relaxed) || reads < 50 {
                            let batch: Vec<Vec<u8>> =
                                (0..50).map(|_| key(rng.gen_range(0..keys))).collect();
                            let got = if t == 0 {
                                db.get_many(&batch).unwrap()
                            } else {
                                batch.iter().map(|k| db.get(k).unwrap()).collect()
                            };
                            // (Deleted keys have none.)
                            for (k, v) in batch.iter().zip(got) {
                                if let Some(v) = v {
                                    parse_value(k, &v);
                                }
                            }
                            reads += 50;
                        }
                    })
                })
                .collect();
            version += 1;
            for _ in 0..keys / 2 {
                let i = rng.gen_range(0..keys);
                if rng.gen_ratio(1, 40) {
                    db.delete(&key(i)).unwrap();
                    model.remove(&i);
                } else {
                    db.put(&key(i), &value(i, version)).unwrap();
                    model.insert(i, version);
                }
            }
            stop.store(true, Ordering::Relaxed);
            for thread in latest {
                thread.join().unwrap();
            }
            // Pin a reader now and then; release the oldest at times.
            match rng.gen_range(0..4) {
                0 => pinned.push(Pinned::Snapshot(db.snapshot(), model.clone())),
                1 => pinned.push(Pinned::Iterator(Box::new(db.iter()), model.clone())),
                2 if !pinned.is_empty() => {
                    pinned.remove(rng.gen_range(0..pinned.len()));
                }
                _ => {}
            }
            for reader in &mut pinned {
                match reader {
                    Pinned::Snapshot(snapshot, m) => {
                        check_reads(&db, Some(snapshot), m, keys, &mut rng)
                    }
                    Pinned::Iterator(it, m) => check_iterator(it, m, keys, &mut rng),
                }
            }
            check_reads(&db, None, &model, keys, &mut rng);
            if step % 8 == 7 {
                // Reopened, readers dropped first: the accounting is the same again.
                pinned.clear();
                db.compact_range(None, None).unwrap();
                let live = property(&db, "live-bytes");
                relocated += property(&db, "relocated-bytes");
                drop(db);
                db = Arc::new(DB::open(DIR, separating(&env)).unwrap());
                assert_eq!(
                    property(&db, "live-bytes"),
                    live,
                    "seed {seed}: live bytes after reopening"
                );
                check_reads(&db, None, &model, keys, &mut rng);
            }
        }
        relocated += property(&db, "relocated-bytes");
        eprintln!(
            "seed {seed}: {relocated} bytes relocated, finally {}x",
            db.property("strata.value-files.space-amplification")
                .unwrap()
        );
        assert!(relocated > 0, "seed {seed}: nothing was relocated");
    }
}
