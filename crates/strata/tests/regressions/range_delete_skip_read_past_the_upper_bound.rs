//! A forward scan moves the sources older than a range tombstone past the range it hides
//! (`iter/db_iter.rs`). As first written, it moved them to the tombstone's end even when the
//! scan's upper bound came first: a scan bounded inside a deleted range then read a table block
//! far past its bound, which a scan of cached blocks never did before (so a `memory_only` scan
//! could fail with `WouldBlock`, and a damaged table outside the bounds could fail the scan).
//! The sources now move no further than the upper bound. Found by the review of the skip,
//! before it landed.

use std::sync::atomic::Ordering;

use strata::ReadOptions;

use crate::support::reads::{numbered_key, range_deletes_db};
use crate::support::state::scan;

#[test]
fn a_bounded_scan_inside_a_deleted_range_read_a_table_block_past_its_bound() {
    let (db, _, reads) = range_deletes_db("/db", 40_000);
    let bounded = |memory_only: bool, fill_cache: bool| ReadOptions {
        lower_bound: Some(numbered_key(1_000)),
        upper_bound: Some(numbered_key(1_100)),
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
    db.delete_range(&numbered_key(1_000), &numbered_key(39_000))
        .unwrap();
    reads.store(0, Ordering::Relaxed);
    let cold = scan(&db, &bounded(false, false)).unwrap();
    assert!(cold.is_empty());
    assert_eq!(
        reads.load(Ordering::Relaxed),
        0,
        "a scan of [k001000, k001100), cached, read table blocks past its upper bound"
    );
}
