//! A zeroed record header in a log was taken for the zero-filled tail of a preallocated file,
//! and the rest of its block was dropped without a report: in the manifest that hid later
//! edits (and open deleted the tables they added), in the write-ahead log it cost records
//! silently. Found by the corruption tests; these work on a copy of the template database of
//! `corruption/mod.rs`.

use std::collections::BTreeSet;
use std::fs;

use strata::DB;

use crate::corruption::{
    self, assert_corruption_in, check, check_repair, options, table_files, template, Damage,
};

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

/// The same when the zeroed header is in the log's last block: a write-ahead log reader that
/// takes a zero header for a record a killed writer never published (the memory-mapped log's
/// rule) drops the synced records after it in the block without a report, so even a paranoid
/// open loses acknowledged, synced writes silently.
#[test]
fn zeroed_header_in_the_last_log_block_hides_synced_writes_silently() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("db");
    let db = DB::open(
        &dir,
        strata::Options {
            create_if_missing: true,
            ..options(false)
        },
    )
    .unwrap();
    let sync = strata::WriteOptions { sync: true };
    for i in 0..6u8 {
        db.put_opt(&sync, &[b'k', i], &[i; 40]).unwrap();
    }
    drop(db);
    let log = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "log"))
        .unwrap();
    // The header of the third record (the log's records are consecutive in its only block).
    let bytes = fs::read(&log).unwrap();
    let mut at = 0;
    for _ in 0..2 {
        at += 7 + usize::from(u16::from_le_bytes([bytes[at + 4], bytes[at + 5]]));
    }
    Damage::Zero(at as u64..at as u64 + 7).apply(&log);
    let err = DB::open(&dir, options(true)).err();
    assert!(
        err.as_ref().is_some_and(|e| e.is_corruption()),
        "paranoid open of a log with a zeroed header: {err:?}"
    );
    let db = DB::open(&dir, options(false)).unwrap();
    assert_eq!(db.get(&[b'k', 1]).unwrap(), Some(vec![1; 40]));
    drop(db);
    let info = fs::read_to_string(dir.join("LOG")).unwrap();
    assert!(info.contains("dropping"), "the loss is not noted: {info}");
}
