//! Table meta blocks (the filter block, the index block) were read without verifying their
//! checksums unless `paranoid_checks` was set: damage in them made reads miss keys the table
//! holds, even with `verify_checksums`. Found by the corruption tests; these work on a copy of
//! the template database of `corruption/mod.rs`.

use std::fs;

use strata::{ReadOptions, DB};

use crate::corruption::{assert_corruption_in, find_in_file, options, template, verified, Damage};

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
