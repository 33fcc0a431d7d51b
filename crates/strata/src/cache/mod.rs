//! Caches: the sharded LRU block cache (capacity in bytes) and the table cache.
// PLACEHOLDER: filled in by the table/cache work.

/// A sharded LRU cache of uncompressed table blocks, bounded by their total size in bytes.
#[derive(Debug)]
pub struct BlockCache {
    capacity: usize,
}

impl BlockCache {
    /// A cache holding up to `capacity` bytes of blocks.
    pub fn new(capacity: usize) -> std::sync::Arc<BlockCache> {
        std::sync::Arc::new(BlockCache { capacity })
    }

    /// The capacity in bytes.
    pub fn capacity(&self) -> usize {
        self.capacity
    }
}
