//! Block reads reuse the buffers of blocks the cache evicted. A reused buffer holds another
//! block's bytes (longer or shorter, compressed or not): none of them may show through in a
//! value, and a damaged block must still fail its checksum rather than come back as data.
//!
//! A block cache of 64 KiB (one 4 KiB block per shard) evicts on nearly every read, so almost
//! every read decompresses or copies into a recycled buffer. Values of very different sizes make
//! blocks of different sizes, so buffers are reused both larger and smaller than the block.
//! Runs over the in-memory env (blocks read with `read_at`) and the POSIX one (tables are
//! memory-mapped: blocks copied or decompressed straight out of the mapping), with and without
//! Snappy.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use strata::{
    BlockCache, CompressionType, Env, MemEnv, Options, PosixEnv, ReadOptions, WriteOptions, DB,
};
use support::files::{file_names, rewrite_file};

const KEYS: usize = 3000;

fn key(i: usize) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

/// A value of 10 to 3000 bytes, its bytes depending on the key and the length (compressible
/// runs and noise mixed, so Snappy compresses some blocks and stores others raw).
fn value(i: usize, rng: &mut StdRng) -> Vec<u8> {
    let len = if i % 3 == 0 {
        rng.gen_range(1000..3000)
    } else {
        rng.gen_range(10..200)
    };
    let mut v = format!("value{i}:").into_bytes();
    while v.len() < len {
        if rng.gen_bool(0.5) {
            v.extend(std::iter::repeat_n(b'a' + (i % 26) as u8, 16));
        } else {
            v.push(rng.gen());
        }
    }
    v.truncate(len);
    v
}

/// Small blocks and a small cache (a fresh one at every open), so buffers are reused often.
fn options(env: &Arc<dyn Env>, compression: CompressionType) -> Options {
    Options {
        compression,
        block_size: 2048,
        block_cache: Some(BlockCache::new(64 << 10)),
        ..support::options(env)
    }
}

/// Reads every key many times in random order from four threads, and scans, checking every
/// value; returns how many gets failed with a corruption error (reads verify checksums when
/// `verify`), failing the test on any wrong value or other error.
fn read_back(db: &Arc<DB>, model: &Arc<Vec<Vec<u8>>>, verify: bool) -> usize {
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let db = Arc::clone(db);
            let model = Arc::clone(model);
            std::thread::spawn(move || {
                let mut rng = StdRng::seed_from_u64(t);
                let read = ReadOptions {
                    verify_checksums: verify,
                    ..ReadOptions::default()
                };
                let mut corrupt = 0;
                for _ in 0..4 * KEYS {
                    let i = rng.gen_range(0..KEYS);
                    match db.get_opt(&read, &key(i)) {
                        Ok(got) => assert!(
                            got.as_deref() == Some(&model[i][..]),
                            "key {i}: wrong value ({} bytes, want {})",
                            got.map_or(0, |v| v.len()),
                            model[i].len()
                        ),
                        Err(e) if e.is_corruption() => corrupt += 1,
                        Err(e) => panic!("key {i}: {e}"),
                    }
                }
                corrupt
            })
        })
        .collect();
    let corrupt = threads.into_iter().map(|t| t.join().unwrap()).sum();
    if corrupt == 0 {
        let mut it = db.iter_opt(&ReadOptions {
            verify_checksums: verify,
            ..ReadOptions::default()
        });
        it.seek_to_first();
        for (i, want) in model.iter().enumerate() {
            assert!(it.valid(), "scan ended at key {i}");
            assert_eq!(it.key(), &key(i)[..]);
            assert!(it.value() == &want[..], "scan: key {i} has a wrong value");
            it.next();
        }
        assert!(!it.valid());
        it.status().unwrap();
    }
    corrupt
}

/// Writes the keys, compacts them into tables, reads them back; then flips a byte inside the
/// first data block of one table and reopens: checksum-verified reads of that block fail, and
/// every other read still returns the right value.
fn run(env: Arc<dyn Env>, dir: &Path, compression: CompressionType, flip: impl Fn(&Path)) {
    let mut rng = StdRng::seed_from_u64(11);
    let model: Arc<Vec<Vec<u8>>> = Arc::new((0..KEYS).map(|i| value(i, &mut rng)).collect());
    let db = Arc::new(DB::open(dir, options(&env, compression)).unwrap());
    for (i, v) in model.iter().enumerate() {
        db.put_opt(&WriteOptions::default(), &key(i), v).unwrap();
    }
    db.compact_range(None, None).unwrap();
    assert_eq!(read_back(&db, &model, false), 0);
    assert_eq!(read_back(&db, &model, true), 0);
    drop(db);

    let table: PathBuf = dir.join(&file_names(&*env, dir, |n| n.ends_with(".ldb"))[0]);
    flip(&table);
    let db = Arc::new(DB::open(dir, options(&env, compression)).unwrap());
    let corrupt = read_back(&db, &model, true);
    assert!(corrupt > 0, "the damaged block was never reported");
}

/// Flips byte 100 of `path` (inside the first data block: blocks are 2 KiB).
fn flip_with(env: &dyn Env, path: &Path) {
    rewrite_file(env, path, |bytes| bytes[100] ^= 0x40);
}

#[test]
fn reused_buffers_never_leak_stale_bytes_in_memory() {
    for compression in [CompressionType::None, CompressionType::Snappy] {
        let env = Arc::new(MemEnv::new());
        let flipper = env.clone();
        run(env, Path::new("/db"), compression, |p| {
            flip_with(&*flipper, p)
        });
    }
}

#[test]
fn reused_buffers_never_leak_stale_bytes_from_mapped_tables() {
    for compression in [CompressionType::None, CompressionType::Snappy] {
        let dir = tempfile::tempdir().unwrap();
        let env = Arc::new(PosixEnv::new());
        let flipper = env.clone();
        run(env, dir.path(), compression, |p| flip_with(&*flipper, p));
    }
}
