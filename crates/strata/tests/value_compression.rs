//! Compressed value files (format extension `value-compression`, docs/design.md section 4.4):
//! with `ValueSeparation::compression` set to Snappy, separated values that compress by at
//! least 1/8 are stored compressed and read back exactly, `head` still reports the value's own
//! length, garbage collection moves them without changing them, and the marker records the
//! extension before open returns: the database then opens only with compression on, which
//! still reads values an earlier open stored uncompressed. (That real LevelDB refuses such a
//! directory is proven in `crates/leveldb-peer/tests/extension_refusal.rs`.)

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::path::Path;
use std::sync::Arc;

use strata::{CompressionType, Error, MemEnv, Options, ValueSeparation, DB};
use support::files::recorded_comparator;

const DIR: &str = "/db";

fn separating(env: &Arc<MemEnv>, compression: CompressionType) -> Options {
    Options {
        value_separation: Some(ValueSeparation::new(256).with_compression(compression)),
        ..support::options(env)
    }
}

/// A value of `len` bytes that Snappy halves (runs of 8 equal bytes), distinct per `seed`.
fn compressible(seed: u32, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (seed as usize * 31 + i / 8) as u8)
        .collect()
}

/// A value of `len` bytes that Snappy cannot shrink by 1/8 (a xorshift stream).
fn incompressible(seed: u32, len: usize) -> Vec<u8> {
    let mut state = u64::from(seed).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect()
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn property(db: &DB, name: &str) -> u64 {
    db.property(&format!("strata.value-files.{name}"))
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn compressed_values_read_back_exactly_and_take_less_room() {
    let env = Arc::new(MemEnv::new());
    let db = DB::open(DIR, separating(&env, CompressionType::Snappy)).unwrap();
    assert_eq!(
        recorded_comparator(&*env, Path::new(DIR)),
        "strata.v1+value-separation+value-compression:leveldb.BytewiseComparator"
    );
    let expected = |i: u32| match i % 3 {
        0 => compressible(i, 8192),
        1 => incompressible(i, 4000),
        _ => b"small, in the tree".to_vec(),
    };
    for i in 0..300 {
        db.put(&key(i), &expected(i)).unwrap();
    }
    let check = |db: &DB, when: &str| {
        for i in 0..300 {
            let value = expected(i);
            assert_eq!(db.get(&key(i)).unwrap(), Some(value.clone()), "{when}: {i}");
            // `head` answers the value's own length from the tree, compressed or not.
            assert_eq!(
                db.head(&key(i)).unwrap(),
                Some(value.len() as u64),
                "{when}: head {i}"
            );
        }
        let mut it = db.iter();
        it.seek_to_first();
        for i in 0..300 {
            assert!(it.valid(), "{when}: scan ended at {i}");
            assert_eq!((it.key(), it.value()), (&key(i)[..], &expected(i)[..]));
            it.next();
        }
        assert!(!it.valid());
    };
    check(&db, "written");
    // 100 values of 8 KiB stored at about half, 100 of 4,000 bytes as they are.
    let raw: u64 = 100 * 8192 + 100 * 4000;
    let total = property(&db, "total-bytes");
    assert!(total < raw - 100 * 8192 / 3, "{total} bytes for {raw}");
    assert!(total > 100 * 4000, "{total} bytes for {raw}");
    db.compact_range(None, None).unwrap();
    check(&db, "compacted");
    drop(db);
    let db = DB::open(DIR, separating(&env, CompressionType::Snappy)).unwrap();
    check(&db, "reopened");
}

#[test]
fn collection_moves_compressed_values_as_they_are() {
    let env = Arc::new(MemEnv::new());
    let db = DB::open(DIR, separating(&env, CompressionType::Snappy)).unwrap();
    let keys = 400;
    for round in 0..12u32 {
        for i in 0..keys {
            db.put(&key(i), &compressible(i * 100 + round, 6000))
                .unwrap();
        }
    }
    db.compact_range(None, None).unwrap();
    assert!(
        property(&db, "relocated-bytes") > 0,
        "nothing was relocated"
    );
    for i in 0..keys {
        assert_eq!(
            db.get(&key(i)).unwrap(),
            Some(compressible(i * 100 + 11, 6000))
        );
    }
    // Relocated records are still compressed: the files hold far less than the values.
    let live = property(&db, "live-bytes");
    assert!(
        live < u64::from(keys) * 6000 / 2,
        "{live} live bytes for {keys} values of 6,000 bytes"
    );
}

#[test]
fn turning_compression_on_keeps_earlier_values_and_is_then_required_by_name() {
    let env = Arc::new(MemEnv::new());
    let db = DB::open(DIR, separating(&env, CompressionType::None)).unwrap();
    db.put(b"before", &compressible(1, 5000)).unwrap();
    drop(db);
    assert_eq!(
        recorded_comparator(&*env, Path::new(DIR)),
        "strata.v1+value-separation:leveldb.BytewiseComparator"
    );
    let db = DB::open(DIR, separating(&env, CompressionType::Snappy)).unwrap();
    db.put(b"after", &compressible(2, 5000)).unwrap();
    assert_eq!(db.get(b"before").unwrap(), Some(compressible(1, 5000)));
    assert_eq!(db.get(b"after").unwrap(), Some(compressible(2, 5000)));
    drop(db);
    assert_eq!(
        recorded_comparator(&*env, Path::new(DIR)),
        "strata.v1+value-separation+value-compression:leveldb.BytewiseComparator"
    );
    // Opened without compression, or without value separation, it is refused by name.
    for options in [
        separating(&env, CompressionType::None),
        support::options(&env),
    ] {
        let err = DB::open(DIR, options).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
        assert!(err.to_string().contains("`value-"), "{err}");
    }
    let err = DB::open(DIR, separating(&env, CompressionType::None)).unwrap_err();
    assert!(
        err.to_string().contains("`value-compression`")
            && err.to_string().contains("CompressionType::Snappy"),
        "{err}"
    );
    // Replayed from the log (a compressed pointer needs the marker) and read back.
    let db = DB::open(DIR, separating(&env, CompressionType::Snappy)).unwrap();
    assert_eq!(db.get(b"after").unwrap(), Some(compressible(2, 5000)));
    assert_eq!(db.get(b"before").unwrap(), Some(compressible(1, 5000)));
}
