//! A block cached by a read without `verify_checksums` was handed as it was to later reads
//! with `verify_checksums`, which returned its damage as data. Found by the corruption tests;
//! this works on a copy of the template database of `corruption/mod.rs`.

use strata::DB;

use crate::corruption::{
    assert_corruption_in, copy_with_a_damaged_value, options, template, verified,
};

/// A block put in the block cache by a read without `verify_checksums` was handed to later
/// reads with `verify_checksums` as it was: they returned its damage as data. Such a read now
/// reads the block again and verifies it.
#[test]
fn verified_read_took_an_unverified_block_from_the_cache() {
    let t = template();
    let table = &t.tables[0];
    let (copy, key) = copy_with_a_damaged_value(t);
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
        assert!(!it.valid() || it.key() != key);
        assert!(it.status().is_err());
    }
}
