//! Regression tests for what the corruption tests found, each named after what went wrong
//! before the fix, and the limits of what checksums can do, stated as tests.
//!
//! Every test works on a copy of the template database of `corruption/mod.rs` (two tables of
//! `a` and `b` keys, a write-ahead log of `w` keys).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod corruption;

use std::collections::BTreeSet;
use std::fs;
use std::ops::Range;
use std::path::Path;

use corruption::{
    assert_corruption_in, check, check_reads, check_repair, file_names, options, template, Damage,
    Template,
};
use strata::{Options, ReadOptions, DB};

fn verified() -> ReadOptions {
    ReadOptions {
        verify_checksums: true,
        ..ReadOptions::default()
    }
}

/// File offset of `needle` in `range` of the file at `path`, which must hold it once there.
fn find_in_file(path: &Path, range: Range<u64>, needle: &[u8]) -> u64 {
    let bytes = fs::read(path).unwrap();
    let bytes = &bytes[range.start as usize..range.end as usize];
    let mut at = bytes
        .windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle);
    let (offset, _) = at.next().expect("bytes not found");
    assert!(at.next().is_none(), "bytes found twice");
    range.start + offset as u64
}

/// The offset of a byte in the middle of `key`'s value in the first table.
fn value_byte(t: &Template, key: &[u8]) -> u64 {
    let value = &t.expected[key];
    let table = &t.tables[0];
    find_in_file(&t.path.join(&table.name), 0..table.size, value) + value.len() as u64 / 2
}

fn table_files(dir: &Path) -> BTreeSet<String> {
    file_names(dir)
        .into_iter()
        .filter(|n| n.ends_with(".ldb"))
        .collect()
}

/// The filter block was read without verifying its checksum (unless `paranoid_checks`), so a
/// damaged filter denied keys its table holds: reads said "absent", even with
/// `verify_checksums`. Meta blocks are now always verified at table open, and a damaged filter
/// is ignored.
#[test]
fn filter_block_damage_made_reads_miss_keys() {
    let t = template();
    let table = &t.tables[0];
    let copy = t.copy();
    // Clear the first 16 bytes of filter 0's bit array: the filter of data block 0.
    let filter = table.filter.offset;
    Damage::Zero(filter..filter + 16).apply(&copy.path.join(&table.name));
    let db = DB::open(&copy.path, options(false)).unwrap();
    for read in [ReadOptions::default(), verified()] {
        for key in &table.data[0].1 {
            assert_eq!(
                db.get_opt(&read, key).unwrap().as_ref(),
                Some(&t.expected[key]),
                "{} is missing",
                String::from_utf8_lossy(key)
            );
        }
    }
}

/// The index block was not verified either: a damaged separator key sent lookups to the
/// wrong data block, which answered "absent" for keys the table holds.
#[test]
fn index_block_damage_sent_lookups_to_the_wrong_block() {
    let t = template();
    let table = &t.tables[0];
    let copy = t.copy();
    let path = copy.path.join(&table.name);
    // The separator after data block 5 is at least its last key (`a0001xx`); make it
    // `a0000xx`, below every key of the block.
    let last = table.data[5].1.last().unwrap();
    let at = find_in_file(&path, table.index.range(), last);
    let mut bytes = fs::read(&path).unwrap();
    bytes[at as usize + 4] = b'0';
    fs::write(&path, bytes).unwrap();
    let db = DB::open(&copy.path, options(false)).unwrap();
    for key in &table.data[5].1 {
        for read in [ReadOptions::default(), verified()] {
            let err = db.get_opt(&read, key).unwrap_err();
            assert_corruption_in(&err, &table.name, Some(&table.index.range()));
        }
    }
}

/// A zeroed record header in a log was taken for the zero-filled tail of a preallocated file:
/// the rest of its block was dropped without a report. In the manifest that hid the edits
/// after it — open (even with `paranoid_checks`) then took the tables they added for obsolete
/// and deleted them.
#[test]
fn zeroed_manifest_record_made_open_delete_live_tables() {
    let t = template();
    let copy = t.copy();
    let (start, end) = t.manifest[t.manifest.len() / 2];
    Damage::Zero(start..end).apply(&copy.path.join(&t.manifest_name));
    let tables = table_files(&copy.path);
    for paranoid in [true, false] {
        let err = DB::open(&copy.path, options(paranoid)).unwrap_err();
        assert_corruption_in(&err, &t.manifest_name, Some(&(start..end)));
        assert!(
            err.to_string()
                .contains("zero-filled region followed by data"),
            "{err}"
        );
        assert_eq!(table_files(&copy.path), tables, "open deleted tables");
    }
    assert_eq!(check_repair(t, &copy.path, &BTreeSet::new()), 0);
}

/// The same in the write-ahead log: a zeroed header silently cost the records after it in its
/// block, even with `paranoid_checks`, and without it nothing in the `LOG` said so.
#[test]
fn zeroed_log_record_hid_the_rest_of_its_block_silently() {
    let t = template();
    let copy = t.copy();
    let record = &t.log[40];
    Damage::Zero(record.start..record.start + 7).apply(&copy.path.join(&t.log_name));
    let err = DB::open(&copy.path, options(true)).unwrap_err();
    assert_corruption_in(&err, &t.log_name, Some(&(record.start..record.start + 1)));
    // Without paranoid checks the loss is noted in the LOG.
    let lenient = corruption::copy_dir(&copy.path);
    drop(DB::open(&lenient.path, options(false)).unwrap());
    let log = fs::read_to_string(lenient.path.join("LOG")).unwrap();
    assert!(log.contains("zero-filled region followed by data"), "{log}");
    let report = check(&copy.path);
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.file == t.log_name && p.offset == Some(record.start)),
        "{report}"
    );
}

/// Compactions read their input without verifying checksums (unless `paranoid_checks`): a
/// damaged value was copied into a new table under a fresh, valid checksum, and from then on
/// read back as data even with `verify_checksums`. Compactions now always verify; one that
/// meets damage fails, and the database refuses writes until it is repaired.
#[test]
fn compaction_copied_damage_under_fresh_checksums() {
    let t = template();
    let table = &t.tables[0];
    let copy = t.copy();
    let key = &table.data[5].1[3];
    Damage::Flip(value_byte(t, key)).apply(&copy.path.join(&table.name));
    let db = DB::open(&copy.path, options(false)).unwrap();
    // A key inside the damaged table's range makes the compaction read it.
    db.put(b"a000100x", b"overlaps").unwrap();
    let err = db.compact_range(None, None).unwrap_err();
    assert_corruption_in(&err, &table.name, Some(&table.data[5].0.range()));
    let err = db.put(b"later", b"write").unwrap_err();
    assert!(
        err.is_corruption(),
        "writes after a failed compaction: {err}"
    );
    // Reads go on: the damaged block fails, everything else reads back.
    let lost: BTreeSet<Vec<u8>> = table.data[5].1.iter().cloned().collect();
    let mut expected = t.expected.clone();
    expected.insert(b"a000100x".to_vec(), b"overlaps".to_vec());
    let reads = check_reads(
        &expected,
        &db,
        &verified(),
        &lost,
        &table.name,
        Some(&table.data[5].0.range()),
    );
    assert_eq!(reads.failed, lost.len());
    drop(db);
    // Repair leaves out the damaged block and nothing else.
    let repaired = corruption::copy_dir(&copy.path);
    strata::repair(&repaired.path, &options(false)).unwrap();
    let db = DB::open(&repaired.path, options(true)).unwrap();
    assert_eq!(db.get(key).unwrap(), None);
    assert_eq!(
        db.get(b"a000100x").unwrap().as_deref(),
        Some(&b"overlaps"[..])
    );
    db.put(b"later", b"write").unwrap();
}

/// Without `CURRENT`, open with `create_if_missing` created a new, empty database in the
/// directory and deleted every table of the old one as obsolete (LevelDB does the same). It
/// now fails, naming `CURRENT`, and `repair` brings everything back. Without
/// `create_if_missing` the database "does not exist", as in LevelDB.
#[test]
fn missing_current_with_create_if_missing_deleted_every_table() {
    let t = template();
    let copy = t.copy();
    fs::remove_file(copy.path.join("CURRENT")).unwrap();
    let tables = table_files(&copy.path);
    let create = Options {
        create_if_missing: true,
        ..options(false)
    };
    let err = DB::open(&copy.path, create).unwrap_err();
    assert_corruption_in(&err, "CURRENT", None);
    assert!(err.to_string().contains("run repair"), "{err}");
    assert_eq!(table_files(&copy.path), tables, "open deleted tables");
    let err = DB::open(&copy.path, options(false)).unwrap_err();
    assert!(matches!(err, strata::Error::InvalidArgument(_)), "{err}");
    assert!(err.to_string().contains("does not exist"), "{err}");
    assert_eq!(table_files(&copy.path), tables, "open deleted tables");
    assert_eq!(check_repair(t, &copy.path, &BTreeSet::new()), 0);
}

/// Repair kept tables whose filter or metaindex block was damaged as they were, so the
/// repaired database still held damage (`check` found it). It now rewrites them.
#[test]
fn repair_kept_tables_with_damaged_meta_blocks() {
    let t = template();
    let table = &t.tables[0];
    for piece in [table.filter, table.metaindex] {
        let copy = t.copy();
        Damage::Flip(piece.offset + 3).apply(&copy.path.join(&table.name));
        // `check_repair` asserts that the repaired database checks clean.
        assert_eq!(check_repair(t, &copy.path, &BTreeSet::new()), 0);
    }
}

/// A deleted live log costs the writes it held; open said nothing, even with
/// `paranoid_checks`, and neither did `check`. Paranoid open now fails naming it, a lenient
/// open logs it, and `check` reports it.
#[test]
fn deleted_live_log_went_unnoticed() {
    let t = template();
    let copy = t.copy();
    fs::remove_file(copy.path.join(&t.log_name)).unwrap();
    let err = DB::open(&copy.path, options(true)).unwrap_err();
    assert_corruption_in(&err, &t.manifest_name, None);
    assert!(err.to_string().contains(&t.log_name), "{err}");
    let report = check(&copy.path);
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.file == t.manifest_name && p.message.contains(&t.log_name)),
        "{report}"
    );
    let db = DB::open(&copy.path, options(false)).unwrap();
    let reads = check_reads(&t.expected, &db, &verified(), &t.all_log_keys(), "-", None);
    assert_eq!(reads.absent, t.log.len());
    drop(db);
    let log = fs::read_to_string(copy.path.join("LOG")).unwrap();
    assert!(log.contains("is missing"), "{log}");
}

/// A block put in the block cache by a read without `verify_checksums` was handed to later
/// reads with `verify_checksums` as it was: they returned its damage as data. Such a read now
/// reads the block again and verifies it.
#[test]
fn verified_read_took_an_unverified_block_from_the_cache() {
    let t = template();
    let table = &t.tables[0];
    let copy = t.copy();
    let key = &table.data[5].1[3];
    Damage::Flip(value_byte(t, key)).apply(&copy.path.join(&table.name));
    let db = DB::open(&copy.path, options(false)).unwrap();
    let neighbour = &table.data[5].1[4];
    // Unverified: the damaged block is cached.
    assert_eq!(
        db.get(neighbour).unwrap().as_ref(),
        Some(&t.expected[neighbour])
    );
    for _ in 0..2 {
        let err = db.get_opt(&verified(), key).unwrap_err();
        assert_corruption_in(&err, &table.name, Some(&table.data[5].0.range()));
        let mut it = db.iter_opt(&verified());
        it.seek(key);
        assert!(!it.valid() || it.key() != &key[..]);
        assert!(it.status().is_err());
    }
}

/// The limit of checksums: with neither `verify_checksums` nor `paranoid_checks`, a table
/// block is not verified when read, and a damaged byte inside a value comes back as data (as
/// in LevelDB). Either option turns the read into a corruption error.
#[test]
fn reads_without_checksums_can_return_damaged_values() {
    let t = template();
    let table = &t.tables[0];
    let copy = t.copy();
    let key = &table.data[5].1[3];
    Damage::Flip(value_byte(t, key)).apply(&copy.path.join(&table.name));
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
