//! Whole databases crossing between real LevelDB 1.23 and Strata, both ways: a database with
//! several levels and a live write-ahead log opens in the other engine with every key and
//! value exact, and that engine keeps writing to it. Each refuses to open while the other
//! holds the LOCK.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::path::Path;
use std::sync::Arc;

use leveldb_peer::fixtures::{build_db, read_all, FixtureSpec, KeyOrder, KeyShape, ValueSizes};
use leveldb_peer::{LevelDb, LevelDbOptions};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use strata::{BloomFilterPolicy, CompressionType, Options, ReadOptions, DB};
use support::{scan, Model};

fn strata_options(compression: bool, bloom: bool) -> Options {
    Options {
        create_if_missing: true,
        write_buffer_size: 64 << 10,
        compression: if compression {
            CompressionType::Snappy
        } else {
            CompressionType::None
        },
        filter_policy: bloom
            .then(|| Arc::new(BloomFilterPolicy::new(10)) as Arc<dyn strata::FilterPolicy>),
        ..Options::default()
    }
}

fn leveldb_options(compression: bool, bloom: bool) -> LevelDbOptions {
    LevelDbOptions {
        write_buffer_size: Some(64 << 10),
        compression,
        bloom_bits: bloom.then_some(10),
        ..LevelDbOptions::default()
    }
}

/// Random puts and deletes, applied to `model` too, through `put`/`delete` callbacks.
fn random_writes(
    rng: &mut StdRng,
    model: &mut Model,
    count: usize,
    mut put: impl FnMut(&[u8], &[u8]),
    mut delete: impl FnMut(&[u8]),
) {
    for _ in 0..count {
        let key = format!("{:016}", rng.gen_range(0..40_000u32)).into_bytes();
        if rng.gen_bool(0.2) {
            delete(&key);
            model.remove(&key);
        } else {
            let len = rng.gen_range(0..300);
            let value: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
            put(&key, &value);
            model.insert(key, value);
        }
    }
}

fn levels_in_use_leveldb(db: &LevelDb) -> Vec<usize> {
    (0..7)
        .filter(|l| {
            db.property(&format!("leveldb.num-files-at-level{l}"))
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(0)
                > 0
        })
        .collect()
}

fn levels_in_use_strata(db: &DB) -> Vec<usize> {
    (0..7)
        .filter(|l| {
            db.property(&format!("leveldb.num-files-at-level{l}"))
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(0)
                > 0
        })
        .collect()
}

fn spot_checks(db: &DB, model: &Model) {
    for (i, (k, v)) in model.iter().enumerate() {
        if i % 7 == 0 {
            assert_eq!(db.get(k).expect("get").as_ref(), Some(v), "key {k:?}");
        }
    }
    for missing in [
        &b"0000000000999999x"[..],
        b"",
        b"zzzz",
        b"0000000000000000\x00",
    ] {
        if !model.contains_key(missing) {
            assert_eq!(db.get(missing).expect("get missing"), None);
        }
    }
}

fn leveldb_to_strata(compression: bool, bloom: bool, keys: KeyShape, seed: u64) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("db");
    let spec = FixtureSpec {
        seed,
        num_keys: 12_000,
        keys,
        order: KeyOrder::Random,
        values: ValueSizes {
            len: 0..=300,
            empty_fraction: 0.05,
            large_fraction: 0.01,
            large_len: 4097..=12_000,
        },
        batch_size: 8,
        compact_at_end: true,
        ..FixtureSpec::default()
    };
    let mut model = build_db(&path, &leveldb_options(compression, bloom), &spec).expect("fixture");
    let mut rng = StdRng::seed_from_u64(seed ^ 0xabc);
    {
        // A second phase without compaction: level-0 files and a live WAL on top of deeper levels.
        let db = LevelDb::open(&path, &leveldb_options(compression, bloom)).expect("reopen");
        random_writes(
            &mut rng,
            &mut model,
            6000,
            |k, v| db.put(k, v, false).expect("put"),
            |k| db.delete(k, false).expect("delete"),
        );
        let levels = levels_in_use_leveldb(&db);
        assert!(
            levels.len() >= 2,
            "fixture should span levels, has {levels:?}"
        );
    }
    assert!(
        std::fs::read_dir(&path).expect("dir").any(|e| {
            let e = e.expect("entry");
            e.file_name().to_string_lossy().ends_with(".log")
                && e.metadata().expect("meta").len() > 0
        }),
        "fixture should leave a non-empty WAL"
    );

    let db =
        DB::open(&path, strata_options(compression, bloom)).expect("strata opens LevelDB's db");
    assert_eq!(
        scan(&db, &ReadOptions::default()),
        model,
        "Strata reads LevelDB's database exactly"
    );
    spot_checks(&db, &model);
    // Strata keeps writing, flushing and compacting it.
    random_writes(
        &mut rng,
        &mut model,
        6000,
        |k, v| db.put(k, v).expect("put"),
        |k| db.delete(k).expect("delete"),
    );
    db.compact_range(Some(b"0000000000010000"), Some(b"0000000000020000"))
        .expect("compact");
    assert_eq!(scan(&db, &ReadOptions::default()), model);
    drop(db);

    // And LevelDB reads what Strata left, exactly.
    let db = LevelDb::open(&path, &leveldb_options(compression, bloom)).expect("LevelDB reopens");
    assert_eq!(
        read_all(&db).expect("read_all"),
        model,
        "LevelDB reads Strata's changes"
    );
}

#[test]
fn leveldb_database_opens_in_strata_snappy_bloom() {
    leveldb_to_strata(true, true, KeyShape::Decimal, 1);
}

#[test]
fn leveldb_database_opens_in_strata_uncompressed_shared_prefix_keys() {
    leveldb_to_strata(false, false, KeyShape::SharedPrefix { prefix_len: 40 }, 2);
}

#[test]
fn leveldb_database_opens_in_strata_binary_keys_bloom() {
    leveldb_to_strata(true, true, KeyShape::Binary, 3);
}

fn strata_to_leveldb(compression: bool, bloom: bool, seed: u64) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("db");
    let mut model = Model::new();
    let mut rng = StdRng::seed_from_u64(seed);
    {
        let db = DB::open(&path, strata_options(compression, bloom)).expect("open");
        random_writes(
            &mut rng,
            &mut model,
            15_000,
            |k, v| db.put(k, v).expect("put"),
            |k| db.delete(k).expect("delete"),
        );
        db.compact_range(None, None).expect("compact");
        random_writes(
            &mut rng,
            &mut model,
            6000,
            |k, v| db.put(k, v).expect("put"),
            |k| db.delete(k).expect("delete"),
        );
        let levels = levels_in_use_strata(&db);
        assert!(
            levels.len() >= 2,
            "Strata database should span levels, has {levels:?}"
        );
    }
    {
        let db = LevelDb::open(&path, &leveldb_options(compression, bloom))
            .expect("LevelDB opens Strata's db");
        assert_eq!(
            read_all(&db).expect("read_all"),
            model,
            "LevelDB reads Strata's database exactly"
        );
        for (k, v) in model.iter().step_by(11) {
            assert_eq!(db.get(k).expect("get").as_ref(), Some(v));
        }
        random_writes(
            &mut rng,
            &mut model,
            5000,
            |k, v| db.put(k, v, false).expect("put"),
            |k| db.delete(k, false).expect("delete"),
        );
        db.compact_range(None, Some(b"0000000000020000"));
    }
    let db = DB::open(&path, strata_options(compression, bloom)).expect("Strata reopens");
    assert_eq!(
        scan(&db, &ReadOptions::default()),
        model,
        "Strata reads LevelDB's changes"
    );
}

#[test]
fn strata_database_opens_in_leveldb_snappy_bloom() {
    strata_to_leveldb(true, true, 11);
}

#[test]
fn strata_database_opens_in_leveldb_uncompressed() {
    strata_to_leveldb(false, false, 12);
}

/// Runs `engine` ("leveldb" or "strata") in a child process that tries to open `path` and
/// reports the outcome on stdout. POSIX record locks are per process, so only another process
/// shows whether the two engines exclude each other.
fn open_in_child(engine: &str, path: &Path) -> String {
    let output = std::process::Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--ignored",
            "--exact",
            "lock_probe_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("LOCK_PROBE_ENGINE", engine)
        .env("LOCK_PROBE_PATH", path)
        .output()
        .expect("spawn child");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    stdout
        .lines()
        .find_map(|l| {
            l.find("PROBE: ")
                .map(|at| l[at + "PROBE: ".len()..].to_owned())
        })
        .unwrap_or_else(|| panic!("child printed no probe result: {stdout}"))
}

/// The child half of `open_in_child`; does nothing unless run by it.
#[test]
#[ignore = "run only as a child process by each_engine_refuses_to_open_while_the_other_holds_the_lock"]
fn lock_probe_child() {
    let engine = std::env::var("LOCK_PROBE_ENGINE").expect("LOCK_PROBE_ENGINE");
    let path = std::env::var("LOCK_PROBE_PATH").expect("LOCK_PROBE_PATH");
    let outcome = match engine.as_str() {
        "leveldb" => LevelDb::open(&path, &leveldb_options(true, false)).map(|_| ()),
        _ => DB::open(&path, strata_options(true, false))
            .map(|_| ())
            .map_err(|e| e.to_string()),
    };
    match outcome {
        Ok(()) => println!("PROBE: opened"),
        Err(e) => println!("PROBE: refused: {e}"),
    }
}

#[test]
fn each_engine_refuses_to_open_while_the_other_holds_the_lock() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("db");
    {
        let strata = DB::open(&path, strata_options(true, false)).expect("open");
        let outcome = open_in_child("leveldb", &path);
        assert!(
            outcome.starts_with("refused") && outcome.to_lowercase().contains("lock"),
            "LevelDB: {outcome}"
        );
        drop(strata);
    }
    assert_eq!(
        open_in_child("leveldb", &path),
        "opened",
        "LevelDB opens once Strata closed"
    );
    {
        let leveldb = LevelDb::open(&path, &leveldb_options(true, false)).expect("LevelDB opens");
        let outcome = open_in_child("strata", &path);
        assert!(
            outcome.starts_with("refused") && outcome.contains("LOCK"),
            "Strata: {outcome}"
        );
        // In the same process, Strata's own registry refuses too.
        let err = DB::open(&path, strata_options(true, false))
            .map(|_| ())
            .unwrap_err();
        assert!(err.is_io_error(), "{err}");
        drop(leveldb);
    }
    assert_eq!(
        open_in_child("strata", &path),
        "opened",
        "Strata opens once LevelDB closed"
    );
}

/// The trailer type byte of each block a Strata table lists in its index, with its index and
/// metaindex blocks' own type bytes and index entry count.
struct StoredTypes {
    index: u8,
    metaindex: u8,
    index_entries: usize,
    index_len: u64,
    snappy_data_blocks: usize,
    raw_data_blocks: usize,
}

fn stored_types(table: &[u8]) -> StoredTypes {
    use strata::testing::{decode_block, decode_footer, read_block_at};
    let footer = decode_footer(&table[table.len() - 48..]).expect("footer");
    let type_at = |offset: u64, size: u64| table[usize::try_from(offset + size).unwrap()];
    let entries = decode_block(read_block_at(table, footer.index, true).expect("index"))
        .expect("index entries");
    let (mut snappy, mut raw) = (0, 0);
    for (_, handle) in &entries {
        let mut h = handle.as_slice();
        let mut varint = || {
            let mut out = 0u64;
            for shift in (0..64).step_by(7) {
                let (&b, rest) = h.split_first().expect("handle");
                h = rest;
                out |= u64::from(b & 0x7f) << shift;
                if b < 0x80 {
                    break;
                }
            }
            out
        };
        let (offset, size) = (varint(), varint());
        match type_at(offset, size) {
            0 => raw += 1,
            1 => snappy += 1,
            other => panic!("data block type {other}"),
        }
    }
    StoredTypes {
        index: type_at(footer.index.offset, footer.index.size),
        metaindex: type_at(footer.metaindex.offset, footer.metaindex.size),
        index_entries: entries.len(),
        index_len: footer.index.size,
        snappy_data_blocks: snappy,
        raw_data_blocks: raw,
    }
}

/// A Strata database with Snappy on (its default) and compressible values: every table holds
/// Snappy data blocks while its index and metaindex blocks are stored raw (Strata never
/// compresses them), and indexes of hundreds of entries, larger than a data block. LevelDB
/// 1.23 opens it with paranoid checks and reads every key by verified scans both ways and
/// verified gets, compacts all of it (reading every table whole) and still reads it exactly;
/// Strata then reads LevelDB's rewrite (Snappy-compressed indexes) exactly.
#[test]
fn strata_snappy_tables_with_raw_indexes_open_in_leveldb() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("db");
    let mut rng = StdRng::seed_from_u64(0x005e_ed13);
    let mut model = Model::new();
    let options = Options {
        write_buffer_size: 1 << 20,
        max_file_size: 1 << 20,
        ..strata_options(true, true)
    };
    assert_eq!(Options::default().compression, CompressionType::Snappy);
    let mut put_all = |db: &DB, model: &mut Model, range: std::ops::Range<u32>| {
        for i in range {
            let key = format!("user/{:08}/{}", rng.gen_range(0..80_000u32), i % 3).into_bytes();
            let pattern: [u8; 24] = rng.gen();
            let len = rng.gen_range(20..500);
            let value: Vec<u8> = pattern.iter().copied().cycle().take(len).collect();
            db.put(&key, &value).expect("put");
            model.insert(key, value);
        }
    };
    {
        let db = DB::open(&path, options.clone()).expect("open");
        put_all(&db, &mut model, 0..60_000);
        db.compact_range(None, None).expect("compact");
        put_all(&db, &mut model, 60_000..66_000);
        for key in model.keys().step_by(13).cloned().collect::<Vec<_>>() {
            db.delete(&key).expect("delete");
            model.remove(&key);
        }
        let levels = levels_in_use_strata(&db);
        assert!(levels.len() >= 2, "levels in use: {levels:?}");
    }

    let (mut tables, mut biggest_index) = (0, (0, 0u64));
    for entry in std::fs::read_dir(&path).expect("dir") {
        let entry = entry.expect("entry");
        if !entry.file_name().to_string_lossy().ends_with(".ldb") {
            continue;
        }
        let bytes = std::fs::read(entry.path()).expect("table");
        let t = stored_types(&bytes);
        let name = entry.file_name();
        assert_eq!(
            (t.index, t.metaindex),
            (0, 0),
            "{name:?}: raw index, metaindex"
        );
        assert!(t.snappy_data_blocks > 0, "{name:?}: no Snappy data block");
        assert!(t.snappy_data_blocks > t.raw_data_blocks, "{name:?}");
        println!(
            "{name:?}: {} bytes, {} Snappy and {} raw data blocks, index {} entries, {} bytes",
            bytes.len(),
            t.snappy_data_blocks,
            t.raw_data_blocks,
            t.index_entries,
            t.index_len
        );
        biggest_index = biggest_index.max((t.index_entries, t.index_len));
        tables += 1;
    }
    assert!(tables >= 3, "{tables} tables");
    assert!(
        biggest_index.0 >= 200 && biggest_index.1 > 4096,
        "largest index: {biggest_index:?} (entries, bytes)"
    );

    let leveldb = LevelDbOptions {
        paranoid_checks: true,
        ..leveldb_options(true, true)
    };
    {
        let db = LevelDb::open(&path, &leveldb).expect("LevelDB opens Strata's db");
        assert!(read_all(&db).expect("scan") == model, "LevelDB's scan");
        let mut it = db.iter_with(false, true);
        let mut backward = Vec::new();
        it.seek_to_last();
        while it.valid() {
            backward.push(it.key().to_vec());
            it.prev();
        }
        it.status().expect("backward scan");
        drop(it);
        backward.reverse();
        assert!(backward == model.keys().cloned().collect::<Vec<_>>());
        for (k, v) in &model {
            assert_eq!(db.get_with(k, false, true).expect("get").as_ref(), Some(v));
            let absent = [k.as_slice(), b"~"].concat();
            assert_eq!(db.get_with(&absent, false, true).expect("get"), None);
        }
        db.compact_range(None, None);
        assert!(
            read_all(&db).expect("scan") == model,
            "after LevelDB's compaction"
        );
    }
    let db = DB::open(&path, options).expect("Strata reopens");
    assert!(scan(&db, &ReadOptions::default()) == model);
}
