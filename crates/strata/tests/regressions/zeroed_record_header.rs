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
