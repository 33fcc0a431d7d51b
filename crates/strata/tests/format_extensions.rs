//! The format-extension marker (docs/design.md, section 4): a database that enables an
//! extension records, in its manifest's first edit, a comparator name LevelDB cannot match; a
//! database that never did keeps LevelDB's own. Strata refuses a database whose marker names an
//! extension the options do not enable (naming the option) or one this build does not know.
//! (That real LevelDB refuses such a directory is proven in `crates/leveldb-peer/tests`.)

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use strata::testing::EditFields;
use strata::{Env, Error, MemEnv, Options, DB};
use support::files::{file_names, read_file, recorded_comparator, write_manifest};

const DIR: &str = "/db";
const BYTEWISE: &str = "leveldb.BytewiseComparator";

/// Every file of the database but the info log and the lock, with its bytes.
fn stored_files(env: &dyn Env) -> BTreeMap<String, Vec<u8>> {
    file_names(env, Path::new(DIR), |n| {
        !n.starts_with("LOG") && n != "LOCK"
    })
    .into_iter()
    .map(|n| {
        let bytes = read_file(env, &Path::new(DIR).join(&n)).unwrap();
        (n, bytes)
    })
    .collect()
}

fn options(env: &Arc<MemEnv>, range_deletes: bool, expiring_keys: bool) -> Options {
    Options {
        range_deletes,
        expiring_keys,
        ..support::options(env)
    }
}

#[test]
fn a_database_without_extensions_records_leveldbs_comparator_name() {
    let env = Arc::new(MemEnv::new());
    let db = DB::open(DIR, options(&env, false, false)).unwrap();
    db.put(b"k", b"v").unwrap();
    drop(db);
    let db = DB::open(DIR, options(&env, false, false)).unwrap();
    drop(db);
    assert_eq!(recorded_comparator(&*env, Path::new(DIR)), BYTEWISE);
}

#[test]
fn a_new_database_with_an_extension_records_the_marker_from_its_first_manifest() {
    let env = Arc::new(MemEnv::new());
    let db = DB::open(DIR, options(&env, true, false)).unwrap();
    assert_eq!(
        recorded_comparator(&*env, Path::new(DIR)),
        "strata.v1+range-deletes:leveldb.BytewiseComparator"
    );
    db.put(b"k", b"v").unwrap();
    drop(db);

    // The marker stays, and the database opens only with the option on.
    let err = DB::open(DIR, options(&env, false, false)).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    let message = err.to_string();
    assert!(
        message.contains("range deletes") && message.contains("Options::range_deletes = true"),
        "{message}"
    );
    let db = DB::open(DIR, options(&env, true, false)).unwrap();
    assert_eq!(db.get(b"k").unwrap(), Some(b"v".to_vec()));
}

#[test]
fn enabling_an_extension_on_an_existing_database_records_it_at_open() {
    for reuse_logs in [false, true] {
        let env = Arc::new(MemEnv::new());
        let plain = Options {
            reuse_logs,
            ..options(&env, false, false)
        };
        let db = DB::open(DIR, plain.clone()).unwrap();
        db.put(b"k", b"v").unwrap();
        drop(db);
        assert_eq!(recorded_comparator(&*env, Path::new(DIR)), BYTEWISE);

        let with_ttl = Options {
            reuse_logs,
            ..options(&env, false, true)
        };
        let db = DB::open(DIR, with_ttl.clone()).unwrap();
        // Recorded before open returns: before any write can log extension data.
        assert_eq!(
            recorded_comparator(&*env, Path::new(DIR)),
            "strata.v1+expiring-keys:leveldb.BytewiseComparator",
            "reuse_logs {reuse_logs}"
        );
        drop(db);
        let err = DB::open(DIR, plain).unwrap_err();
        assert!(
            err.to_string().contains("Options::expiring_keys = true"),
            "{err}"
        );

        // Enabling a second one adds it; both must then be on.
        let both = Options {
            reuse_logs,
            ..options(&env, true, true)
        };
        let db = DB::open(DIR, both).unwrap();
        assert_eq!(db.get(b"k").unwrap(), Some(b"v".to_vec()));
        drop(db);
        assert_eq!(
            recorded_comparator(&*env, Path::new(DIR)),
            "strata.v1+range-deletes+expiring-keys:leveldb.BytewiseComparator"
        );
        let err = DB::open(DIR, with_ttl).unwrap_err();
        assert!(
            err.to_string().contains("Options::range_deletes = true"),
            "{err}"
        );
    }
}

#[test]
fn refused_opens_change_no_stored_byte() {
    let env = Arc::new(MemEnv::new());
    let db = DB::open(DIR, options(&env, true, true)).unwrap();
    db.put(b"k", b"v").unwrap();
    drop(db);
    let before = stored_files(&*env);
    for (range_deletes, expiring_keys) in [(false, false), (true, false), (false, true)] {
        let opts = options(&env, range_deletes, expiring_keys);
        assert!(DB::open(DIR, opts).is_err());
        assert_eq!(stored_files(&*env), before);
    }
}

#[test]
fn unknown_extensions_and_marker_versions_are_refused_by_name() {
    for (recorded, expected) in [
        (
            "strata.v1+range-deletes+value-files:leveldb.BytewiseComparator",
            "`value-files`",
        ),
        ("strata.v7+anything:leveldb.BytewiseComparator", "strata.v7"),
    ] {
        let env = Arc::new(MemEnv::new());
        env.create_dir(Path::new(DIR)).unwrap();
        let edit = EditFields {
            comparator: Some(recorded.to_owned()),
            log_number: Some(0),
            next_file_number: Some(2),
            last_sequence: Some(0),
            ..EditFields::default()
        };
        write_manifest(&*env, Path::new(DIR), 1, &[edit]);
        let err = DB::open(DIR, options(&env, true, true)).unwrap_err();
        assert!(matches!(err, Error::NotSupported(_)), "{err}");
        assert!(err.to_string().contains(expected), "{err}");
    }
}

#[test]
fn a_marker_naming_another_comparator_is_a_comparator_mismatch() {
    let env = Arc::new(MemEnv::new());
    env.create_dir(Path::new(DIR)).unwrap();
    let edit = EditFields {
        comparator: Some("strata.v1+range-deletes:other.Comparator".to_owned()),
        log_number: Some(0),
        next_file_number: Some(2),
        last_sequence: Some(0),
        ..EditFields::default()
    };
    write_manifest(&*env, Path::new(DIR), 1, &[edit]);
    let err = DB::open(DIR, options(&env, true, false)).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    assert!(err.to_string().contains("\"other.Comparator\""), "{err}");
}

/// Every key and value a read through `db` sees, in order.
fn contents(db: &DB) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut it = db.iter();
    it.seek_to_first();
    let mut seen = Vec::new();
    while it.valid() {
        seen.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().unwrap();
    seen
}

/// A database using both extensions, with range tombstones in its tables and in its live log.
fn database_with_extensions(env: &Arc<MemEnv>) -> DB {
    let db = DB::open(DIR, options(env, true, true)).unwrap();
    for i in 0..100u32 {
        db.put(format!("k{i:03}").as_bytes(), b"v").unwrap();
    }
    db.delete_range(b"k010", b"k020").unwrap();
    db.put_with_ttl(b"k050", b"lasting", std::time::Duration::from_secs(3600))
        .unwrap();
    db.compact_range(None, None).unwrap();
    db.delete_range(b"k030", b"k040").unwrap();
    db
}

#[test]
fn read_only_handles_honour_the_marker_and_see_the_extension_records() {
    let env = Arc::new(MemEnv::new());
    let writer = database_with_extensions(&env);
    let expected = contents(&writer);
    assert_eq!(expected.len(), 80);

    for (range_deletes, expiring_keys, option) in [
        (false, false, "Options::range_deletes = true"),
        (true, false, "Options::expiring_keys = true"),
        (false, true, "Options::range_deletes = true"),
    ] {
        let Err(err) = DB::open_read_only(DIR, options(&env, range_deletes, expiring_keys)) else {
            panic!("a read-only open without the extensions is refused");
        };
        assert!(err.to_string().contains(option), "{err}");
    }
    let reader = DB::open_read_only(DIR, options(&env, true, true)).unwrap();
    assert_eq!(contents(&reader), expected);
    assert_eq!(reader.get(b"k035").unwrap(), None);
    assert_eq!(reader.get(b"k050").unwrap(), Some(b"lasting".to_vec()));

    // A refresh reads new range tombstones from the writer's log.
    writer.delete_range(b"k060", b"k070").unwrap();
    reader.refresh().unwrap();
    assert_eq!(contents(&reader), contents(&writer));
    assert_eq!(reader.get(b"k065").unwrap(), None);
}

#[test]
fn checkpoints_of_a_database_with_extensions_record_the_marker() {
    let env = Arc::new(MemEnv::new());
    let writer = database_with_extensions(&env);
    let expected = contents(&writer);
    let reader = DB::open_read_only(DIR, options(&env, true, true)).unwrap();
    for (source, target) in [(&writer, "/from-writer"), (&reader, "/from-reader")] {
        source.checkpoint(target).unwrap();
        let err = DB::open(target, options(&env, false, true)).unwrap_err();
        assert!(
            err.to_string().contains("Options::range_deletes = true"),
            "{target}: {err}"
        );
        let copy = DB::open(target, options(&env, true, true)).unwrap();
        assert_eq!(contents(&copy), expected, "{target}");
    }
}

#[test]
fn a_read_only_handle_enabling_extensions_keeps_a_plain_database_leveldbs_in_its_checkpoints() {
    let env = Arc::new(MemEnv::new());
    let writer = DB::open(DIR, options(&env, false, false)).unwrap();
    writer.put(b"k", b"v").unwrap();
    let reader = DB::open_read_only(DIR, options(&env, true, true)).unwrap();
    reader.checkpoint("/copy").unwrap();
    assert_eq!(recorded_comparator(&*env, Path::new("/copy")), BYTEWISE);
    let copy = DB::open("/copy", options(&env, false, false)).unwrap();
    assert_eq!(copy.get(b"k").unwrap(), Some(b"v".to_vec()));
    drop(writer);
    assert_eq!(recorded_comparator(&*env, Path::new(DIR)), BYTEWISE);
}
