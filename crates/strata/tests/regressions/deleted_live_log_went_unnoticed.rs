//! A deleted live log cost its writes without a word: neither open (even with
//! `paranoid_checks`) nor `check` said so. Found by the corruption tests; this works on a copy
//! of the template database of `corruption/mod.rs`.

use std::fs;

use strata::DB;

use crate::corruption::{assert_corruption_in, check, check_reads, options, template, verified};

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
