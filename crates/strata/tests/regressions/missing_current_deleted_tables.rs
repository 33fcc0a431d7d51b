//! Without `CURRENT`, open with `create_if_missing` created a new, empty database over the old
//! one's tables and deleted them as obsolete. Found by the corruption tests; this works on a
//! copy of the template database of `corruption/mod.rs`.

use std::collections::BTreeSet;
use std::fs;

use strata::{Options, DB};

use crate::corruption::{assert_corruption_in, check_repair, options, table_files, template};

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
