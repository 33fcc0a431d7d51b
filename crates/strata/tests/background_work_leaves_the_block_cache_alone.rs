//! Flushes and compactions check each table they write by reading its first block, and do not
//! keep that block in the block cache: the cache holds what readers read. (Each output's first
//! block once went into the cache, so a database being filled kept its cache full of blocks
//! nobody had asked for: 8 MiB of the peak heap of a 10M-key `fillrandom`.)

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod support;

use strata::{BlockCache, CompressionType, MemEnv, Options, DB};
use support::state::tables_by_level;

#[test]
fn flushes_and_compactions_put_nothing_in_the_block_cache() {
    let env = std::sync::Arc::new(MemEnv::new());
    let cache = BlockCache::new(8 << 20);
    let options = Options {
        write_buffer_size: 64 << 10,
        max_file_size: 1 << 20,
        compression: CompressionType::None,
        block_cache: Some(cache.clone()),
        ..support::options(&env)
    };
    let db = DB::open("/db", options).unwrap();
    for i in 0..20_000u32 {
        db.put(
            format!("k{:08}", i.wrapping_mul(2_654_435_761)).as_bytes(),
            &[b'v'; 100],
        )
        .unwrap();
    }
    db.compact_range(None, None).unwrap();
    let tables: usize = tables_by_level(&db).iter().map(Vec::len).sum();
    assert!(tables >= 2, "{tables} tables written");
    assert_eq!(
        cache.total_charge(),
        0,
        "the block cache holds blocks though nothing was read"
    );
    // A read does fill it.
    assert!(db.get(format!("k{:08}", 0).as_bytes()).unwrap().is_some());
    assert!(cache.total_charge() > 0);
}
