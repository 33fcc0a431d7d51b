//! What damage on disk costs, and what neither checksums nor repair can do, stated as tests:
//! without `verify_checksums` or `paranoid_checks` a damaged value can be read back as data;
//! repair sets aside (never deletes) what it cannot use; and lost log records are lost writes,
//! not lost keys. Each works on a copy of the template database of `corruption/mod.rs` (two
//! tables of `a` and `b` keys, a write-ahead log of `w` keys) or on a database of its own.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod corruption;

use std::collections::BTreeSet;
use std::fs;

use corruption::{
    assert_corruption_in, check_reads, copy_with_a_damaged_value, file_names, options, template,
    verified, Damage,
};
use strata::{Options, DB};

/// The limit of checksums: with neither `verify_checksums` nor `paranoid_checks`, a table
/// block is not verified when read, and a damaged byte inside a value comes back as data (as
/// in LevelDB). Either option turns the read into a corruption error.
#[test]
fn reads_without_checksums_can_return_damaged_values() {
    let t = template();
    let table = &t.tables[0];
    let (copy, key) = copy_with_a_damaged_value(t);
    {
        let db = DB::open(&copy.path, options(false)).unwrap();
        let read = db.get(key).unwrap().unwrap();
        assert_ne!(
            &read, &t.expected[key],
            "the damage should show in the value"
        );
        let err = db.get_opt(&verified(), key).unwrap_err();
        assert_corruption_in(&err, &table.name, Some(&table.data[5].0.range()));
    }
    let db = DB::open(&copy.path, options(true)).unwrap();
    let err = db.get(key).unwrap_err();
    assert_corruption_in(&err, &table.name, Some(&table.data[5].0.range()));
}

/// What repair cannot use it sets aside in `lost/` (never deletes): a table it cannot open, the
/// original of a table it rewrote, the logs it replayed and the old manifest; the `LOG` says
/// what it skipped.
#[test]
fn repair_sets_what_it_cannot_use_aside_in_lost() {
    let t = template();
    let copy = t.copy();
    let (broken, partial) = (&t.tables[0], &t.tables[1]);
    Damage::Flip(broken.index.offset + 2).apply(&copy.path.join(&broken.name));
    let block = partial.data[2].0;
    Damage::Flip(block.offset + 2).apply(&copy.path.join(&partial.name));
    strata::repair(&copy.path, &options(false)).unwrap();
    let lost = file_names(&copy.path.join("lost"));
    let log = fs::read_to_string(copy.path.join("LOG")).unwrap();
    for name in [&broken.name, &partial.name, &t.log_name, &t.manifest_name] {
        assert!(lost.contains(name), "{name} is not in lost/: {lost:?}");
        assert!(log.contains(&format!("{name} to lost/")), "{log}");
    }
    let number: u64 = broken.name.trim_end_matches(".ldb").parse().unwrap();
    assert!(
        log.contains(&format!("table #{number}: ignored: ")),
        "{log}"
    );
    let db = DB::open(&copy.path, options(true)).unwrap();
    let gone: BTreeSet<Vec<u8>> = broken
        .keys()
        .into_iter()
        .chain(partial.data[2].1.iter().cloned())
        .collect();
    let reads = check_reads(&t.expected, &db, &verified(), &gone, "-", None);
    assert_eq!(reads.absent, gone.len());
}

/// Loss is of writes, not keys: when a damaged log block held a key's newest write, recovery
/// (lenient open or repair) keeps the write before it — a lost deletion brings the key back.
#[test]
fn lost_log_records_leave_older_values_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let db = DB::open(
            &path,
            Options {
                create_if_missing: true,
                ..options(false)
            },
        )
        .unwrap();
        db.put(b"changed", b"old").unwrap();
        db.put(b"deleted", b"still here").unwrap();
        db.compact_range(None, None).unwrap();
        db.put(b"changed", b"new").unwrap();
        db.delete(b"deleted").unwrap();
    }
    let log = file_names(&path)
        .into_iter()
        .find(|n| n.ends_with(".log") && fs::metadata(path.join(n)).unwrap().len() > 0)
        .unwrap();
    // Inside the first record's payload: the rest of block 0 (both records) is dropped.
    Damage::Flip(20).apply(&path.join(&log));
    let err = DB::open(&path, options(true)).unwrap_err();
    assert_corruption_in(&err, &log, Some(&(0..1)));
    let expect_old = |db: &DB| {
        assert_eq!(db.get(b"changed").unwrap().as_deref(), Some(&b"old"[..]));
        assert_eq!(
            db.get(b"deleted").unwrap().as_deref(),
            Some(&b"still here"[..])
        );
    };
    let copy = corruption::copy_dir(&path);
    expect_old(&DB::open(&copy.path, options(false)).unwrap());
    strata::repair(&path, &options(false)).unwrap();
    expect_old(&DB::open(&path, options(true)).unwrap());
}
