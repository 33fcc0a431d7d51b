//! The block cache: a sharded LRU (`util::lru`) of uncompressed table blocks, bounded by bytes.
//!
//! `(table cache id, block offset) -> Arc<Block>`, charged by the memory a block holds (its
//! buffer's capacity: a reused buffer's may exceed the block, and a new one has an eighth more
//! room, so that once reused it holds the table's other blocks; `table::format::with_room`). Each open table takes a fresh id from
//! [`BlockCache::new_id`], so one cache can be shared by many tables (and databases) without
//! key clashes, and a reopened file never sees stale blocks.
//!
//! The buffers of evicted blocks nobody still reads are kept (a few small ones, see
//! [`SPARE_BUFFERS`] and [`MAX_SPARE_BUFFER`]) and handed to the next block reads: a cache that
//! misses a lot (random reads over data much larger than the cache) then reads blocks without
//! allocating and zeroing a fresh buffer each time. The spare buffers are not charged: at most
//! `SPARE_BUFFERS * MAX_SPARE_BUFFER` bytes, typically 16 blocks.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use super::block::Block;
use crate::util::lru::LruCache;

/// How many evicted blocks' buffers the block cache keeps for reuse. A reader takes one per
/// block it reads and the insert that follows gives one back, so a handful covers every thread.
pub(crate) const SPARE_BUFFERS: usize = 16;

/// Largest buffer kept for reuse: blocks are a few KiB; the rare large one (a block holding one
/// big value) is freed, not kept around uncharged.
pub(crate) const MAX_SPARE_BUFFER: usize = 64 << 10;

/// A sharded LRU cache of uncompressed table blocks, bounded by their total size in bytes.
///
/// Thread safety: shared by every reader (`Arc<BlockCache>`); all methods take `&self`. A block
/// evicted while an iterator uses it stays alive for that iterator.
pub struct BlockCache {
    lru: LruCache<(u64, u64), Block>,
    next_id: AtomicU64,
    /// Buffers of evicted blocks, at most [`SPARE_BUFFERS`].
    spare: Mutex<Vec<Vec<u8>>>,
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
            spare: Mutex::new(Vec::new()),
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

    /// Caches `block`, charged by the memory it holds. The buffers of the blocks this evicts
    /// that no reader holds any more are kept for [`take_buffer`](Self::take_buffer). Readers
    /// never wait for the spare list: when another thread has it, buffers are just freed.
    pub(crate) fn insert(&self, id: u64, offset: u64, block: Arc<Block>) {
        debug_assert!(
            !block.is_shared(),
            "a block read in place entered the cache"
        );
        let charge = block.memory();
        let evicted = self.lru.insert((id, offset), block, charge);
        let mut reusable = evicted
            .into_iter()
            .filter_map(|block| Arc::try_unwrap(block).ok())
            .map(Block::into_data)
            .filter(|data| data.capacity() <= MAX_SPARE_BUFFER)
            .peekable();
        if reusable.peek().is_some() {
            if let Some(mut spare) = self.spare.try_lock() {
                let room = SPARE_BUFFERS.saturating_sub(spare.len());
                spare.extend(reusable.take(room));
            }
        }
    }

    /// A buffer for the next block read: an evicted block's, or a new empty one (also when
    /// another thread has the spare list). Its contents are stale bytes the read overwrites.
    pub(crate) fn take_buffer(&self) -> Vec<u8> {
        self.spare
            .try_lock()
            .and_then(|mut spare| spare.pop())
            .unwrap_or_default()
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
        assert_eq!(cache.lookup(a, 0).unwrap().memory(), 100);
        assert_eq!(cache.lookup(b, 0).unwrap().memory(), 300);
        assert!(cache.lookup(a, 1).is_none());
        assert_eq!(cache.capacity(), 1 << 20);
    }

    #[test]
    fn evicted_buffers_are_reused_unless_a_reader_holds_the_block() {
        // 4 KiB per shard: a shard holds one of these blocks, so inserts evict.
        let cache = BlockCache::new(16 * 4096);
        let id = cache.new_id();
        assert_eq!(cache.take_buffer().capacity(), 0, "nothing evicted yet");
        // A block a reader still holds, recognisable by its bytes (then a restart count of 0).
        let mut marked = vec![0xaa; 4092];
        marked.extend_from_slice(&[0; 4]);
        let held = Arc::new(Block::new(marked, 0).unwrap());
        cache.insert(id, 0, Arc::clone(&held));
        for offset in 1..200 {
            cache.insert(id, offset, block(4096));
        }
        assert!(cache.lookup(id, 0).is_none(), "the held block was evicted");
        let mut spare = Vec::new();
        loop {
            let buf = cache.take_buffer();
            if buf.capacity() == 0 {
                break;
            }
            assert_eq!(buf.len(), 4096);
            assert_ne!(
                buf[0], 0xaa,
                "the buffer of a block a reader holds was recycled"
            );
            spare.push(buf);
        }
        assert_eq!(
            spare.len(),
            SPARE_BUFFERS,
            "evicted buffers kept, a bounded number"
        );
        assert_eq!(held.size(), 4096);
    }

    /// A valid, empty block of `len` bytes in a buffer of `capacity` bytes.
    fn block_in(len: usize, capacity: usize) -> Arc<Block> {
        let mut data = Vec::with_capacity(capacity);
        data.resize(len, 0);
        Arc::new(Block::new(data, 0).unwrap())
    }

    #[test]
    fn blocks_are_charged_by_the_memory_they_hold() {
        let cache = BlockCache::new(1 << 20);
        let id = cache.new_id();
        let roomy = block_in(100, 4096);
        assert_eq!(roomy.size(), 100);
        let memory = roomy.memory();
        assert!(memory >= 4096, "{memory}");
        cache.insert(id, 0, roomy);
        cache.insert(id, 1, block(300));
        assert_eq!(cache.total_charge(), memory + 300);
        // Replacing a block charges the new one only.
        cache.insert(id, 0, block(200));
        assert_eq!(cache.total_charge(), 500);
    }

    /// Fills a cache of one `shard`-byte block per shard with `blocks` of `len` bytes each, so
    /// that nearly every insert evicts a block nobody holds; returns the spare buffers taken.
    fn spare_after(shard: usize, len: usize, blocks: u64) -> Vec<Vec<u8>> {
        let cache = BlockCache::new(16 * shard);
        let id = cache.new_id();
        for offset in 0..blocks {
            cache.insert(id, offset, block(len));
        }
        assert!(cache.total_charge() <= cache.capacity());
        std::iter::from_fn(|| Some(cache.take_buffer()).filter(|b| b.capacity() > 0)).collect()
    }

    #[test]
    fn only_small_buffers_are_kept() {
        let kept = spare_after(MAX_SPARE_BUFFER, MAX_SPARE_BUFFER, 200);
        assert_eq!(kept.len(), SPARE_BUFFERS, "64 KiB buffers are kept");
        assert!(kept.iter().all(|b| b.capacity() <= MAX_SPARE_BUFFER));
        let big = spare_after(MAX_SPARE_BUFFER + 1, MAX_SPARE_BUFFER + 1, 200);
        assert!(big.is_empty(), "{} buffers over 64 KiB kept", big.len());
    }

    #[test]
    fn readers_never_wait_for_the_spare_list() {
        let cache = BlockCache::new(16 * 4096);
        let id = cache.new_id();
        for offset in 0..200 {
            cache.insert(id, offset, block(4096));
        }
        let held = cache.spare.lock();
        let spare = held.len();
        assert!(spare > 0);
        // Another thread has the list: no buffer, no wait, and evicted buffers are freed.
        assert_eq!(cache.take_buffer().capacity(), 0);
        for offset in 200..400 {
            cache.insert(id, offset, block(4096));
        }
        assert_eq!(held.len(), spare);
        drop(held);
        assert_eq!(cache.take_buffer().len(), 4096);
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
