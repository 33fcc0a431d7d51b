//! Compressed value files (format extension `value-compression`, docs/design.md section 4.4):
//! with `ValueSeparation::compression` set to Snappy, separated values that compress by at
//! least 1/8 are stored compressed and read back exactly, `head` still reports the value's own
//! length, garbage collection moves them without changing them, and the marker records the
//! extension before open returns: the database then opens only with compression on, which
//! still reads values an earlier open stored uncompressed; repair records the extension from the
//! data it salvages; the space bound holds; and a write from a thread-local destructor still
//! compresses its value. (That real LevelDB refuses such a directory is
//! proven in `crates/leveldb-peer/tests/extension_refusal.rs`.)

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use strata::{
    CompressionType, Env, Error, MemEnv, Options, ReadOptions, ValueSeparation, WriteOptions, DB,
};
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
    // The odd keys keep their first values, in the first files among the even keys' garbage:
    // collection must move them (overwriting every key left files wholly garbage at times,
    // deleted with nothing to move, and the test failed about one run in five).
    let last_round = |i: u32| if i % 2 == 0 { 11 } else { 0 };
    for round in 0..12u32 {
        for i in (0..keys).filter(|&i| round <= last_round(i)) {
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
            Some(compressible(i * 100 + last_round(i), 6000))
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

const COMPRESSED_MARKER: &str =
    "strata.v1+value-separation+value-compression:leveldb.BytewiseComparator";

/// Where the compressed pointers are when repair runs, and what else happens to the directory.
#[derive(Debug, Clone, Copy)]
enum Layout {
    /// Only in the write-ahead log (no flush).
    LogOnly,
    /// Only in tables.
    TablesOnly,
    /// In both, with interleaving tables (repair's last step opens and compacts).
    Interleaved,
}

/// Puts a compressible value under `k`, synced, and notes it in `expected`.
fn put_key(db: &DB, expected: &mut BTreeMap<Vec<u8>, Vec<u8>>, k: &[u8], seed: u32) {
    let sync = WriteOptions { sync: true };
    let value = compressible(seed, 3000);
    db.put_opt(&sync, k, &value).unwrap();
    expected.insert(k.to_vec(), value);
}

/// A database of compressed values laid out as `layout` says; returns what it holds.
fn build(env: &Arc<MemEnv>, layout: Layout) -> Vec<(Vec<u8>, Vec<u8>)> {
    let db = DB::open(DIR, separating(env, CompressionType::Snappy)).unwrap();
    let mut expected = BTreeMap::new();
    let e = &mut expected;
    match layout {
        Layout::LogOnly => {
            for i in 0..40 {
                put_key(&db, e, &key(i), i);
            }
        }
        Layout::TablesOnly => {
            for i in 0..40 {
                put_key(&db, e, &key(i), i);
            }
            db.compact_range(None, None).unwrap();
        }
        Layout::Interleaved => {
            // As regressions/repair_keeps_newest_version.rs: tables from different levels
            // interleave in sequence numbers, so repair's last step opens and compacts.
            let flush = |db: &DB| db.compact_range(Some(b"zz1"), Some(b"zz2")).unwrap();
            put_key(&db, e, b"a", 1);
            put_key(&db, e, b"k", 2);
            put_key(&db, e, b"m", 3);
            flush(&db);
            put_key(&db, e, b"w", 4);
            put_key(&db, e, b"z", 5);
            flush(&db);
            put_key(&db, e, b"k", 6);
            put_key(&db, e, b"x", 7);
            flush(&db);
            put_key(&db, e, b"j", 8);
            flush(&db);
            db.compact_range(Some(b"j"), Some(b"j")).unwrap();
            put_key(&db, e, b"b", 9); // and one in the log
        }
    }
    drop(db);
    expected.into_iter().collect()
}

/// Removes every manifest and `CURRENT`: repair must learn the extensions from the data.
fn lose_manifest(env: &Arc<MemEnv>) {
    for name in env.children(Path::new(DIR)).unwrap() {
        if name.starts_with("MANIFEST-") || name == "CURRENT" {
            env.remove_file(&Path::new(DIR).join(name)).unwrap();
        }
    }
}

/// Repair records `value-compression` wherever the compressed pointers are (logs, tables, both),
/// with or without the manifest, whatever options it is given.
#[test]
fn repair_records_value_compression_whatever_the_options_and_layout() {
    for layout in [Layout::LogOnly, Layout::TablesOnly, Layout::Interleaved] {
        for manifest_lost in [false, true] {
            for repair_options in ["plain", "separating", "compressing"] {
                let when = format!("{layout:?}, manifest lost {manifest_lost}, {repair_options}");
                let env = Arc::new(MemEnv::new());
                let expected = build(&env, layout);
                if manifest_lost {
                    lose_manifest(&env);
                }
                let options = match repair_options {
                    "plain" => support::options(&env),
                    "separating" => separating(&env, CompressionType::None),
                    _ => separating(&env, CompressionType::Snappy),
                };
                strata::repair(DIR, &options).unwrap_or_else(|e| panic!("{when}: {e}"));
                assert_eq!(
                    recorded_comparator(&*env, Path::new(DIR)),
                    COMPRESSED_MARKER,
                    "{when}"
                );
                assert!(
                    DB::open(DIR, separating(&env, CompressionType::None)).is_err(),
                    "{when}: opened without compression"
                );
                let db = DB::open(DIR, separating(&env, CompressionType::Snappy)).unwrap();
                assert_eq!(support::reads::scan(&db).unwrap(), expected, "{when}");
                for (k, v) in &expected {
                    assert_eq!(db.head(k).unwrap(), Some(v.len() as u64), "{when}");
                }
            }
        }
    }
}

#[test]
fn relocation_keeps_head_snapshots_and_values_of_compressed_pointers() {
    let env = Arc::new(MemEnv::new());
    let db = DB::open(DIR, separating(&env, CompressionType::Snappy)).unwrap();
    let keys = 300u32;
    for i in 0..keys {
        db.put(&key(i), &compressible(i, 5000 + i as usize))
            .unwrap();
    }
    let snapshot = db.snapshot();
    for round in 1..10u32 {
        for i in 0..keys {
            if (i + round) % 3 != 0 {
                db.put(
                    &key(i),
                    &compressible(i * 100 + round, 4000 + round as usize),
                )
                .unwrap();
            }
        }
    }
    db.compact_range(None, None).unwrap();
    let at = ReadOptions {
        snapshot: Some(snapshot.clone()),
        ..ReadOptions::default()
    };
    for i in 0..keys {
        assert_eq!(
            db.get_opt(&at, &key(i)).unwrap(),
            Some(compressible(i, 5000 + i as usize)),
            "snapshot {i}"
        );
        assert_eq!(
            db.head_opt(&at, &key(i)).unwrap(),
            Some(5000 + u64::from(i)),
            "snapshot head {i}"
        );
    }
    drop(snapshot);
    for round in 10..16u32 {
        for i in 0..keys {
            db.put(
                &key(i),
                &compressible(i * 100 + round, 4000 + round as usize),
            )
            .unwrap();
        }
    }
    db.compact_range(None, None).unwrap();
    assert!(property(&db, "relocated-bytes") > 0, "nothing relocated");
    for i in 0..keys {
        assert_eq!(
            db.get(&key(i)).unwrap(),
            Some(compressible(i * 100 + 15, 4015))
        );
        assert_eq!(db.head(&key(i)).unwrap(), Some(4015));
    }
    drop(db);
    let db = DB::open(DIR, separating(&env, CompressionType::Snappy)).unwrap();
    for i in 0..keys {
        assert_eq!(
            db.get(&key(i)).unwrap(),
            Some(compressible(i * 100 + 15, 4015))
        );
    }
}

/// The space bound with compressed values: measured against the live bytes the database
/// counts (stored record bytes), since compressed values are what the files hold.
#[test]
fn the_bound_holds_with_compressed_values() {
    let env = Arc::new(MemEnv::new());
    let db = DB::open(DIR, separating(&env, CompressionType::Snappy)).unwrap();
    let keys = 3000u32;
    let mut state = 7u64;
    let mut next = || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) % u64::from(keys)) as u32
    };
    let mut worst: f64 = 0.0;
    for round in 0..6u32 {
        for n in 0..keys {
            let i = if round == 0 { n } else { next() };
            let len = 300 + ((u64::from(i) * 2_654_435_761 + u64::from(round) * 40_503) % 7_893);
            // Half the values compress (to about half), half do not (different ratios).
            let value = if i % 2 == 0 {
                compressible(i * 13 + round, len as usize)
            } else {
                incompressible(i * 13 + round, len as usize)
            };
            db.put(&key(i), &value).unwrap();
            if round > 0 && (n + 1) % 300 == 0 {
                let total = property(&db, "total-bytes");
                let live = property(&db, "live-bytes");
                let ratio = total as f64 / live as f64;
                worst = worst.max(ratio);
                assert!(
                    ratio <= 1.5,
                    "round {round}, {n}: {total} for {live} ({ratio:.3}x)"
                );
            }
        }
    }
    eprintln!("compressed values: worst {worst:.3}x");
}

/// Puts a compressible separated value from its `Drop`: set on a thread before that thread's
/// first write, so it is destroyed after the thread's other thread-locals.
struct PutOnDrop(Option<Arc<DB>>);

impl Drop for PutOnDrop {
    fn drop(&mut self) {
        if let Some(db) = self.0.take() {
            db.put(b"late", &compressible(2, 4096)).unwrap();
        }
    }
}

thread_local! {
    static PUT_ON_DROP: std::cell::RefCell<PutOnDrop> =
        const { std::cell::RefCell::new(PutOnDrop(None)) };
}

/// A write from a thread-local destructor that runs after the thread's compression state is
/// gone still compresses and stores its value (it panicked, aborting the process, when the
/// writer's encoder was only reachable through its thread-local).
#[test]
fn a_write_from_a_thread_local_destructor_is_stored() {
    let env = Arc::new(MemEnv::new());
    let db = Arc::new(DB::open(DIR, separating(&env, CompressionType::Snappy)).unwrap());
    let writer = Arc::clone(&db);
    std::thread::spawn(move || {
        PUT_ON_DROP.with_borrow_mut(|hold| hold.0 = Some(Arc::clone(&writer)));
        writer.put(b"first", &compressible(1, 4096)).unwrap();
    })
    .join()
    .unwrap();
    assert_eq!(db.get(b"late").unwrap(), Some(compressible(2, 4096)));
    assert_eq!(db.get(b"first").unwrap(), Some(compressible(1, 4096)));
}
