//! Caches: the sharded LRU block cache (bounded by bytes of uncompressed blocks) and the table
//! cache (bounded by open tables).
//!
//! - [`lru`]: the generic sharded LRU both are built on.
//! - [`BlockCache`]: `(table cache id, block offset) -> Arc<Block>`, charged by block size. Each
//!   open table takes a fresh id from [`BlockCache::new_id`], so one cache can be shared by many
//!   tables (and databases) without key clashes, and a reopened file never sees stale blocks.
//! - [`table_cache`]: file number -> open `Table`, charged 1 per table.

pub(crate) mod lru;
pub(crate) mod table_cache;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::table::block::Block;
use lru::LruCache;

/// A sharded LRU cache of uncompressed table blocks, bounded by their total size in bytes.
///
/// Thread safety: shared by every reader (`Arc<BlockCache>`); all methods take `&self`. A block
/// evicted while an iterator uses it stays alive for that iterator.
pub struct BlockCache {
    lru: LruCache<(u64, u64), Block>,
    next_id: AtomicU64,
}

impl std::fmt::Debug for BlockCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockCache")
            .field("capacity", &self.capacity())
            .field("total_charge", &self.total_charge())
            .finish()
    }
}

impl BlockCache {
    /// A cache holding up to `capacity` bytes of blocks (0 caches nothing).
    pub fn new(capacity: usize) -> Arc<BlockCache> {
        Arc::new(BlockCache {
            lru: LruCache::new(capacity),
            next_id: AtomicU64::new(1),
        })
    }

    /// The capacity in bytes.
    pub fn capacity(&self) -> usize {
        self.lru.capacity()
    }

    /// Bytes of blocks currently held.
    pub fn total_charge(&self) -> usize {
        self.lru.total_charge()
    }

    /// A key space for one open table's blocks; never returns the same id twice.
    pub(crate) fn new_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// The cached block at `offset` of the table with cache id `id`.
    pub(crate) fn lookup(&self, id: u64, offset: u64) -> Option<Arc<Block>> {
        self.lru.get(&(id, offset))
    }

    /// Caches `block`, charged by its size.
    pub(crate) fn insert(&self, id: u64, offset: u64, block: Arc<Block>) {
        let charge = block.size();
        self.lru.insert((id, offset), block, charge);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(size: usize) -> Arc<Block> {
        // `size - 4` zero bytes then a restart count of 0: a valid, empty block of `size` bytes.
        Arc::new(Block::new(vec![0u8; size], 0).unwrap())
    }

    #[test]
    fn ids_are_unique_and_blocks_are_charged_by_size() {
        let cache = BlockCache::new(1 << 20);
        let a = cache.new_id();
        let b = cache.new_id();
        assert_ne!(a, b);
        cache.insert(a, 0, block(100));
        cache.insert(b, 0, block(300));
        assert_eq!(cache.total_charge(), 400);
        assert_eq!(cache.lookup(a, 0).unwrap().size(), 100);
        assert_eq!(cache.lookup(b, 0).unwrap().size(), 300);
        assert!(cache.lookup(a, 1).is_none());
        assert_eq!(cache.capacity(), 1 << 20);
    }

    #[test]
    fn stays_within_capacity() {
        let cache = BlockCache::new(64 * 1024);
        let id = cache.new_id();
        for i in 0..1000u64 {
            cache.insert(id, i * 4096, block(4096));
        }
        assert!(cache.total_charge() <= 64 * 1024);
        assert!(cache.total_charge() >= 32 * 1024);
    }
}
