//! Repair kept a table whose filter or metaindex block was damaged as it was, so the repaired
//! database still held damage. Found by the corruption tests; this works on a copy of the
//! template database of `corruption/mod.rs`.

use std::collections::BTreeSet;

use crate::corruption::{check_repair, template, Damage};

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
