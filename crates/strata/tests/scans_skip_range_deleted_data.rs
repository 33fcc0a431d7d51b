//! A forward scan over a range deleted above the data it deletes moves past that data rather
//! than reading it (format extension `range-deletes`): the sources older than a tombstone are
//! moved to the tombstone's end. Checked by counting the table blocks a scan reads, with the
//! tombstone in the memtable and in a level-0 table, and against what must still be seen:
//! writes newer than the tombstone (in its own source and in newer ones), and everything for
//! a snapshot older than it. The randomized model test (`model_randomized.rs`) checks scans
//! against a model over every shape of tree.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use strata::{Options, ReadOptions, DB};
use support::reads::{numbered_key as key, range_deletes_db};
use support::state::{files_at_level, scan, Model};

const DIR: &str = "/db";

const KEYS: u32 = 20_000;
/// The deleted range: keys `[FROM, TO)`, nine tenths of them.
const FROM: u32 = 1_000;
const TO: u32 = 19_000;

/// A database of `KEYS` keys compacted below level 0, over an env that counts the reads of
/// table files; and its options, to reopen it.
fn filled() -> (DB, Options, Arc<AtomicUsize>) {
    let (db, options, reads) = range_deletes_db(DIR, KEYS);
    assert_eq!(files_at_level(&db, 0), 0);
    (db, options, reads)
}

fn model(keys: impl Iterator<Item = u32>) -> Model {
    keys.map(|i| (key(i), vec![b'v'; 100])).collect()
}

/// A forward scan (cache left empty, so every block it needs is read) and the table reads it
/// made.
fn counted_scan(db: &DB, reads: &AtomicUsize, read: &ReadOptions) -> (Model, usize) {
    let read = ReadOptions {
        fill_cache: false,
        ..read.clone()
    };
    reads.store(0, Ordering::Relaxed);
    let state = scan(db, &read).unwrap();
    (state, reads.load(Ordering::Relaxed))
}

/// The blocks a scan of every key reads: about 100-byte values, 4 KiB blocks.
fn full_scan_reads(db: &DB, reads: &AtomicUsize) -> usize {
    let (state, full) = counted_scan(db, reads, &ReadOptions::default());
    assert_eq!(state.len(), KEYS as usize);
    assert!(full >= 400, "a scan of {KEYS} keys read only {full} blocks");
    full
}

#[test]
fn a_scan_moves_past_data_deleted_by_a_tombstone_in_a_newer_source() {
    let (db, options, reads) = filled();
    let full = full_scan_reads(&db, &reads);
    db.delete_range(&key(FROM), &key(TO)).unwrap();
    // Written after the tombstone, into the same memtable: seen in the range.
    db.put(&key(5_000), b"newer").unwrap();
    let mut expected = model((0..FROM).chain(TO..KEYS));
    expected.insert(key(5_000), b"newer".to_vec());

    // The tombstone in the memtable, the data below level 0.
    let (state, skipping) = counted_scan(&db, &reads, &ReadOptions::default());
    assert_eq!(state, expected, "tombstone in the memtable");
    assert!(
        skipping * 4 < full,
        "tombstone in the memtable: {skipping} blocks read, {full} for the whole database"
    );

    // Reopened: the log is flushed into a level-0 table holding the tombstone and the newer
    // write, above the data.
    drop(db);
    let db = DB::open(DIR, options).unwrap();
    assert_eq!(files_at_level(&db, 0), 1);
    let (state, skipping) = counted_scan(&db, &reads, &ReadOptions::default());
    assert_eq!(state, expected, "tombstone in a level-0 table");
    assert!(
        skipping * 4 < full,
        "tombstone in a level-0 table: {skipping} blocks read, {full} for the whole database"
    );

    // A snapshot older than newer writes in the memtable, inside and beside the deleted range:
    // it sees the tombstone and not them; now sees both.
    let before = db.snapshot();
    db.put(&key(7_000), b"newest").unwrap();
    db.delete(&key(TO)).unwrap();
    let old = ReadOptions {
        snapshot: Some(before),
        ..ReadOptions::default()
    };
    let (state, _) = counted_scan(&db, &reads, &old);
    assert_eq!(state, expected, "snapshot before the newest writes");
    expected.insert(key(7_000), b"newest".to_vec());
    expected.remove(&key(TO));
    let (state, _) = counted_scan(&db, &reads, &ReadOptions::default());
    assert_eq!(state, expected, "newest writes above the tombstone's table");
}

/// A snapshot older than a tombstone sees everything it deletes, wherever the tombstone is.
#[test]
fn a_snapshot_older_than_the_tombstone_skips_nothing() {
    let (db, options, reads) = filled();
    let before = db.snapshot();
    db.delete_range(&key(FROM), &key(TO)).unwrap();
    let old = ReadOptions {
        snapshot: Some(before),
        ..ReadOptions::default()
    };
    let (state, _) = counted_scan(&db, &reads, &old);
    assert_eq!(state, model(0..KEYS), "tombstone in the memtable");
    let (state, _) = counted_scan(&db, &reads, &ReadOptions::default());
    assert_eq!(state, model((0..FROM).chain(TO..KEYS)), "now");
    drop(db);
    // Reopened (no snapshot survives that), with a write the new snapshot predates.
    let db = DB::open(DIR, options).unwrap();
    let before = db.snapshot();
    db.delete_range(&key(0), &key(KEYS)).unwrap();
    let old = ReadOptions {
        snapshot: Some(before),
        ..ReadOptions::default()
    };
    let (state, _) = counted_scan(&db, &reads, &old);
    assert_eq!(
        state,
        model((0..FROM).chain(TO..KEYS)),
        "tombstone in a level-0 table"
    );
    let (state, _) = counted_scan(&db, &reads, &ReadOptions::default());
    assert!(state.is_empty(), "everything deleted");
}
