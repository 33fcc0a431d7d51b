//! Regression tests for what the fuzz targets found: numbers read from a manifest, a log or a
//! file name that no database writes (sequence numbers past 2^56 - 1, file numbers near 2^64,
//! file sizes whose sum overflows) made `DB::open`, a write or a flush panic on integer
//! overflow. Each must now be a typed error or, where LevelDB skips damage, skipped. Also: a
//! log record holding a batch whose count disagrees with its records was applied in part.

use std::path::Path;
use std::sync::Arc;

use strata::testing::{
    write_batch_set_sequence, write_log_file, EditFields, EditNewFile, MAX_SEQUENCE,
};
use strata::{Env, Error, MemEnv, Options, ValueSeparation, WriteBatch, DB};

use crate::support;

use crate::support::files::write_manifest;

const DIR: &str = "/db";

fn options(env: &Arc<MemEnv>, paranoid_checks: bool) -> Options {
    Options {
        paranoid_checks,
        ..crate::support::options(env)
    }
}

/// A database directory holding only `MANIFEST-000002` (one edit: `fields` over sane defaults)
/// and `CURRENT`.
fn manifest_only(fields: EditFields) -> Arc<MemEnv> {
    let env = Arc::new(MemEnv::new());
    let dir = Path::new(DIR);
    env.create_dir(dir).unwrap();
    let edit = EditFields {
        comparator: Some("leveldb.BytewiseComparator".into()),
        log_number: fields.log_number.or(Some(0)),
        next_file_number: fields.next_file_number.or(Some(3)),
        last_sequence: fields.last_sequence.or(Some(0)),
        ..fields
    };
    write_manifest(&*env, dir, 2, &[edit]);
    env
}

fn assert_manifest_corruption(result: Result<DB, Error>, needle: &str) {
    match result {
        Err(e) => {
            assert!(e.is_corruption(), "{e}");
            let text = e.to_string();
            assert!(text.contains("MANIFEST-000002"), "{text}");
            assert!(text.contains(needle), "{text}");
        }
        Ok(_) => panic!("a manifest with a {needle} past its range opened"),
    }
}

#[test]
fn fuzz_manifest_last_sequence_past_max_is_corruption() {
    let env = manifest_only(EditFields {
        last_sequence: Some(MAX_SEQUENCE + 1),
        ..EditFields::default()
    });
    assert_manifest_corruption(DB::open(DIR, options(&env, false)), "last sequence");
}

#[test]
fn fuzz_exhausted_sequence_numbers_fail_writes_without_panic() {
    // The largest valid last sequence: the database opens and reads, but has no number left.
    let env = manifest_only(EditFields {
        last_sequence: Some(MAX_SEQUENCE),
        ..EditFields::default()
    });
    let db = DB::open(DIR, options(&env, false)).unwrap();
    assert!(matches!(db.put(b"k", b"v"), Err(Error::NotSupported(_))));
    assert_eq!(db.get(b"k").unwrap(), None);
    // One number left: a two-update write fails without harm, a one-update write takes it.
    drop(db);
    let env = manifest_only(EditFields {
        last_sequence: Some(MAX_SEQUENCE - 1),
        ..EditFields::default()
    });
    let db = DB::open(DIR, options(&env, false)).unwrap();
    let mut two = WriteBatch::new();
    two.put(b"a", b"1");
    two.put(b"b", b"2");
    assert!(matches!(db.write(&two), Err(Error::NotSupported(_))));
    db.put(b"k", b"v").unwrap();
    assert!(matches!(db.put(b"k", b"w"), Err(Error::NotSupported(_))));
    assert_eq!(db.get(b"k").unwrap(), Some(b"v".to_vec()));
    assert_eq!(db.get(b"a").unwrap(), None);
}

#[test]
fn fuzz_manifest_file_number_past_max_is_corruption() {
    for (fields, needle) in [
        (
            EditFields {
                next_file_number: Some(u64::MAX),
                ..EditFields::default()
            },
            "next file number",
        ),
        (
            EditFields {
                log_number: Some(u64::MAX),
                next_file_number: Some(5),
                ..EditFields::default()
            },
            "log number",
        ),
        (
            EditFields {
                prev_log_number: Some(u64::MAX - 1),
                ..EditFields::default()
            },
            "previous log number",
        ),
    ] {
        let env = manifest_only(fields);
        assert_manifest_corruption(DB::open(DIR, options(&env, false)), needle);
    }
}

#[test]
fn fuzz_manifest_file_sizes_overflowing_u64_are_not_a_panic() {
    let key = |user: &[u8]| {
        let mut k = user.to_vec();
        k.extend_from_slice(&((1u64 << 8) | 1).to_le_bytes());
        k
    };
    let file = |number, smallest: &[u8], largest: &[u8]| EditNewFile {
        level: 1,
        number,
        file_size: u64::MAX - 10,
        smallest: key(smallest),
        largest: key(largest),
    };
    let env = manifest_only(EditFields {
        next_file_number: Some(10),
        new_files: vec![file(4, b"a", b"b"), file(5, b"c", b"d")],
        ..EditFields::default()
    });
    // The tables do not exist: a typed error naming them, after the level sizes were summed.
    match DB::open(DIR, options(&env, false)) {
        Err(e) => assert!(
            e.is_corruption() && e.to_string().contains("missing"),
            "{e}"
        ),
        Ok(_) => panic!("a manifest listing missing tables opened"),
    }
}

/// Files past the largest file number, of every kind a database writes, are neither read nor
/// deleted (the deletion passes and the value files' collection deleted stray tables and value
/// files: found in a review of repair).
#[test]
fn fuzz_file_named_past_max_file_number_is_ignored() {
    let env = Arc::new(MemEnv::new());
    let separating = || Options {
        value_separation: Some(ValueSeparation::new(256)),
        ..options(&env, false)
    };
    let db = DB::open(DIR, separating()).unwrap();
    db.put(b"a", b"1").unwrap();
    drop(db);
    // Not files a database writes; LevelDB would number every later file after them.
    let stray_log = Path::new(DIR).join(format!("{}.log", u64::MAX));
    write_log_file(&*env, &stray_log, &[b"not a batch of ours"]).unwrap();
    let strays: Vec<_> = ["ldb", "vlog"]
        .iter()
        .map(|kind| Path::new(DIR).join(format!("{}.{kind}", u64::MAX - 1)))
        .collect();
    for stray in &strays {
        support::files::write_file(&*env, stray, b"not a file of ours");
    }
    let db = DB::open(DIR, separating()).unwrap();
    db.put(b"b", b"2").unwrap();
    db.put(b"big", &[7; 1000]).unwrap();
    db.compact_range(None, None).unwrap();
    drop(db);
    strata::repair(DIR, &separating()).unwrap();
    let db = DB::open(DIR, separating()).unwrap();
    assert_eq!(db.get(b"a").unwrap(), Some(b"1".to_vec()));
    assert_eq!(db.get(b"b").unwrap(), Some(b"2".to_vec()));
    assert_eq!(db.get(b"big").unwrap(), Some(vec![7; 1000]));
    db.put(b"c", b"3").unwrap();
    db.delete(b"big").unwrap();
    db.compact_range(None, None).unwrap();
    drop(db);
    for stray in strays.iter().chain([&stray_log]) {
        assert!(
            env.file_exists(stray),
            "{} is not ours, and was deleted",
            stray.display()
        );
    }
}

/// A log numbered above every file of the databases below.
const LOG_100: &str = "000100.log";

/// A closed database holding `kept -> 1`.
fn database_holding_kept() -> Arc<MemEnv> {
    let env = Arc::new(MemEnv::new());
    let db = DB::open(DIR, options(&env, false)).unwrap();
    db.put(b"kept", b"1").unwrap();
    drop(db);
    env
}

/// Opening with `paranoid_checks` fails with a corruption naming log 100, which holds `what`.
#[track_caller]
fn assert_paranoid_open_refuses_log_100(env: &Arc<MemEnv>, what: &str) {
    match DB::open(DIR, options(env, true)) {
        Err(e) => assert!(e.is_corruption() && e.to_string().contains(LOG_100), "{e}"),
        Ok(_) => panic!("paranoid open replayed {what}"),
    }
}

#[test]
fn fuzz_log_batch_numbered_past_max_sequence_is_skipped() {
    let env = database_holding_kept();
    // A well-formed record (checksum and all) whose three updates would be numbered
    // MAX_SEQUENCE - 1, MAX_SEQUENCE and one past it; logs are numbered above the database's.
    let mut batch = WriteBatch::new();
    batch.put(b"x", b"1");
    batch.put(b"y", b"2");
    batch.delete(b"kept");
    write_batch_set_sequence(&mut batch, MAX_SEQUENCE - 1);
    let contents = strata::testing::write_batch_contents(&batch).to_vec();
    write_log_file(&*env, &Path::new(DIR).join(LOG_100), &[&contents]).unwrap();

    assert_paranoid_open_refuses_log_100(&env, "a batch past the largest sequence number");
    let db = DB::open(DIR, options(&env, false)).unwrap();
    assert_eq!(db.get(b"kept").unwrap(), Some(b"1".to_vec()));
    assert_eq!(db.get(b"x").unwrap(), None);
    db.put(b"z", b"3").unwrap();
    assert_eq!(db.get(b"z").unwrap(), Some(b"3".to_vec()));
}

/// A batch's bytes: header (`sequence`, `count`) and one put record per key.
fn raw_batch(sequence: u64, count: u32, keys: &[&[u8]]) -> Vec<u8> {
    let mut bytes = sequence.to_le_bytes().to_vec();
    bytes.extend_from_slice(&count.to_le_bytes());
    for key in keys {
        bytes.push(1); // put
        bytes.push(key.len() as u8);
        bytes.extend_from_slice(key);
        bytes.push(1);
        bytes.push(b'v');
    }
    bytes
}

#[test]
fn fuzz_log_batch_with_wrong_count_is_skipped_whole() {
    let env = database_holding_kept();
    // Found by the fuzzer: a count of 0 with records behind it, numbered from MAX_SEQUENCE,
    // passed the sequence check and then numbered its second record past MAX_SEQUENCE.
    let overflowing = raw_batch(MAX_SEQUENCE, 0, &[b"p", b"q"]);
    // And an ordinary batch claiming one record fewer than it holds: its records went into
    // the memtable before the count check failed, numbered 3 to 5, past the last sequence the
    // database then had (1), and came to light once later writes passed their numbers.
    let miscounted = raw_batch(3, 2, &[b"x", b"y", b"z"]);
    let log = Path::new(DIR).join(LOG_100);
    write_log_file(&*env, &log, &[&overflowing, &miscounted]).unwrap();

    assert_paranoid_open_refuses_log_100(&env, "a malformed batch");
    let db = DB::open(DIR, options(&env, false)).unwrap();
    for i in 0..10u8 {
        db.put(&[b'n', i], b"2").unwrap();
    }
    for key in [&b"p"[..], b"q", b"x", b"y", b"z"] {
        assert_eq!(db.get(key).unwrap(), None, "{key:?} of a malformed batch");
    }
    assert_eq!(db.get(b"kept").unwrap(), Some(b"1".to_vec()));
    assert_eq!(db.get(b"n\x09").unwrap(), Some(b"2".to_vec()));
}
