//! Garbage collection over real files (`PosixEnv`), with readers and writes throughout: every
//! value read, by a point read or a scan, is exactly one that was written for its key, and
//! after a reopen every key holds its last value.
//!
//! The relocations' value-file writer leaves its appends in the file's buffer until its
//! compaction syncs them (`vlog/writer.rs`, `Handoff::Batched`), and the value files' listing
//! counts the bytes it holds there. `MemEnv`, which the other garbage-collection tests run
//! on, has no such buffer: here the relocated values pass through it while compactions run
//! two at a time, reads look up values as soon as relocated pointers are installed, and a
//! thread asks for the files' total size throughout.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use strata::{Options, ValueSeparation, DB};

const KEYS: u32 = 1_500;
/// Relocated bytes the writes go on until (the test fails if collection never gets there).
const RELOCATED: u64 = 4 << 20;
const DEADLINE: Duration = Duration::from_secs(120);

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

/// Version `version` of key `i`'s value: its stamp `<i:version>` repeated to a length of
/// 300 to 6,299 bytes that varies with both.
fn value(i: u32, version: u32) -> Vec<u8> {
    let stamp = format!("<{i}:{version}>");
    let len = 300 + (i as usize * 7_919 + version as usize * 104_729) % 6_000;
    stamp.bytes().cycle().take(len).collect()
}

/// Asserts that `got` is exactly a version of key `i`'s value, and returns that version.
fn version_of(i: u32, got: &[u8]) -> u32 {
    let prefix = format!("<{i}:");
    let text = std::str::from_utf8(got).expect("a value is its stamp repeated");
    let version = text
        .strip_prefix(&prefix)
        .and_then(|rest| rest.split('>').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            panic!(
                "key {i}: not one of its values: {:?}",
                &text[..40.min(text.len())]
            )
        });
    assert!(
        got == value(i, version),
        "key {i}: version {version} read damaged"
    );
    version
}

fn options() -> Options {
    Options {
        create_if_missing: true,
        value_separation: Some(ValueSeparation::new(256).with_file_size(256 << 10)),
        write_buffer_size: 256 << 10,
        max_file_size: 128 << 10,
        ..Default::default()
    }
}

fn relocated(db: &DB) -> u64 {
    db.property("strata.value-files.relocated-bytes")
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn relocated_values_read_back_exactly_during_and_after_collection() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(dir.path(), options()).unwrap();
    let mut latest = vec![0u32; KEYS as usize];
    for i in 0..KEYS {
        db.put(&key(i), &value(i, 0)).unwrap();
    }
    let stop = AtomicBool::new(false);
    thread::scope(|s| {
        for reader in 0..2u64 {
            let (db, stop) = (&db, &stop);
            s.spawn(move || {
                let mut rng = reader + 1;
                let mut reads = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    rng = rng
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1_442_695_040_888_963_407);
                    let i = ((rng >> 33) % u64::from(KEYS)) as u32;
                    let got = db.get(&key(i)).unwrap().expect("every key has a value");
                    version_of(i, &got);
                    reads += 1;
                    if reads % 1_000 == 0 {
                        let mut it = db.iter();
                        it.seek_to_first();
                        for i in 0..KEYS {
                            assert!(it.valid(), "scan ended at key {i}: {:?}", it.status());
                            assert_eq!(it.key(), key(i));
                            version_of(i, it.value());
                            it.next();
                        }
                        it.status().unwrap();
                    }
                }
            });
        }
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                let total = db.property("strata.value-files.total-bytes").unwrap();
                assert!(total.parse::<u64>().unwrap() > 0);
                thread::sleep(Duration::from_millis(1));
            }
        });
        let started = Instant::now();
        let mut rng = 0x2545_f491_4f6c_dd1d_u64;
        let mut version = 1;
        while relocated(&db) < RELOCATED && started.elapsed() < DEADLINE {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let i = (rng % u64::from(KEYS)) as u32;
            db.put(&key(i), &value(i, version)).unwrap();
            latest[i as usize] = version;
            version += 1;
        }
        stop.store(true, Ordering::Relaxed);
    });
    let moved = relocated(&db);
    assert!(
        moved >= RELOCATED,
        "collection relocated {moved} bytes in {DEADLINE:?}"
    );
    drop(db);
    let db = DB::open(dir.path(), options()).unwrap();
    for i in 0..KEYS {
        let got = db.get(&key(i)).unwrap().expect("every key has a value");
        assert_eq!(
            version_of(i, &got),
            latest[i as usize],
            "key {i} after the reopen"
        );
    }
}
