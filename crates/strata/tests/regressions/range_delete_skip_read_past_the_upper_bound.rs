//! A forward scan moves the sources older than a range tombstone past the range it hides
//! (`iter/db_iter.rs`). As first written, it moved them to the tombstone's end even when the
//! scan's upper bound came first: a scan bounded inside a deleted range then read a table block
//! far past its bound, which a scan of cached blocks never did before (so a `memory_only` scan
//! could fail with `WouldBlock`, and a damaged table outside the bounds could fail the scan).
//! The sources now move no further than the upper bound. Found by the review of the skip,
//! before it landed.

use std::sync::atomic::Ordering;

use strata::{CompressionType, Options, ReadOptions, DB};

use crate::support;
use crate::support::reads::table_read_counter;
use crate::support::state::scan;

fn key(i: u32) -> Vec<u8> {
    format!("k{i:06}").into_bytes()
}

#[test]
fn a_bounded_scan_inside_a_deleted_range_read_a_table_block_past_its_bound() {
    let (env, reads) = table_read_counter();
    let options = Options {
        range_deletes: true,
        block_size: 4096,
        compression: CompressionType::None,
        ..support::options(&env)
    };
    let db = DB::open("/db", options).unwrap();
    for i in 0..40_000 {
        db.put(&key(i), &[b'v'; 100]).unwrap();
    }
    db.compact_range(None, None).unwrap();
    let bounded = |memory_only: bool, fill_cache: bool| ReadOptions {
        lower_bound: Some(key(1_000)),
        upper_bound: Some(key(1_100)),
        memory_only,
        fill_cache,
        ..ReadOptions::default()
    };
    // Warm the cache with the bounded range's blocks.
    assert_eq!(scan(&db, &bounded(false, true)).unwrap().len(), 100);
    assert_eq!(
        scan(&db, &bounded(true, true)).unwrap().len(),
        100,
        "the warmed range reads from memory"
    );
    db.delete_range(&key(1_000), &key(39_000)).unwrap();
    reads.store(0, Ordering::Relaxed);
    let cold = scan(&db, &bounded(false, false)).unwrap();
    assert!(cold.is_empty());
    assert_eq!(
        reads.load(Ordering::Relaxed),
        0,
        "a scan of [k001000, k001100), cached, read table blocks past its upper bound"
    );
}
