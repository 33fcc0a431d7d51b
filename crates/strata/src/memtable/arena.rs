//! A bump allocator for the memtable's skiplist nodes.
//!
//! Contract:
//! - `allocate` takes `&mut self`: one thread allocates at a time (the skiplist keeps the arena
//!   inside its writer mutex). The memory it hands out is *not* guarded by that borrow: the
//!   skiplist initialises a node, then publishes it to lock-free readers through atomic links.
//! - Every allocation is [`ALIGN`]-aligned and stays at the same address until the arena drops;
//!   nothing is freed before that. Memory is uninitialised: callers write before they read.
//! - Small requests are carved from [`BLOCK_SIZE`] blocks; a request larger than a quarter block
//!   gets a block of its own, so a big value never wastes the tail of the current block.
//! - [`Arena::memory_usage`] is the total size of the blocks obtained from the system, the figure
//!   that decides when a memtable is full.

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::ptr::NonNull;

/// Size of a regular block. Measured against 4 KiB, 256 KiB and 1 MiB on 16-byte keys with
/// 100-byte values, the choice is within noise for insert and lookup speed; 64 KiB costs one
/// `malloc` per ~450 such entries, overshoots a 4 MiB write buffer by at most 1.6% and stays
/// under glibc's default mmap threshold, so freed blocks are reused by the next memtable.
pub(crate) const BLOCK_SIZE: usize = 64 * 1024;

/// Requests above this get a dedicated block.
const LARGE_REQUEST: usize = BLOCK_SIZE / 4;

/// Alignment of every allocation: enough for the atomic pointers and `u32`s of a node.
pub(crate) const ALIGN: usize = 8;

/// A bump allocator that frees everything at once when dropped.
pub(crate) struct Arena {
    /// Every block obtained from the system, with the layout it was allocated with.
    blocks: Vec<(NonNull<u8>, Layout)>,
    /// Next free byte of the current block; always `ALIGN`-aligned. Dangling while
    /// `remaining == 0` and no block has been allocated.
    cursor: NonNull<u8>,
    /// Free bytes after `cursor` in the current block; a multiple of `ALIGN`.
    remaining: usize,
    /// Sum of the sizes of `blocks`.
    usage: usize,
}

// SAFETY: the arena exclusively owns the heap blocks its raw pointers refer to; those pointers
// carry no thread affinity, so moving the arena (and the right to allocate) to another thread is
// as sound as moving a `Vec<Box<[u8]>>`.
unsafe impl Send for Arena {}

impl Arena {
    pub(crate) fn new() -> Arena {
        Arena {
            blocks: Vec::new(),
            cursor: NonNull::dangling(),
            remaining: 0,
            usage: 0,
        }
    }

    /// Returns `size` bytes (rounded up to `ALIGN`, at least `ALIGN`) of uninitialised memory,
    /// aligned to `ALIGN`, valid until the arena drops.
    #[inline]
    pub(crate) fn allocate(&mut self, size: usize) -> NonNull<u8> {
        let size = match size.max(1).checked_next_multiple_of(ALIGN) {
            Some(size) => size,
            None => capacity_overflow(),
        };
        if size <= self.remaining {
            let ptr = self.cursor;
            // SAFETY: `cursor + remaining` is the end of the current block and
            // `size <= remaining`, so `cursor + size` stays inside (or one past) the block.
            self.cursor = unsafe { ptr.add(size) };
            self.remaining -= size;
            return ptr;
        }
        self.allocate_slow(size)
    }

    #[cold]
    fn allocate_slow(&mut self, size: usize) -> NonNull<u8> {
        if size > LARGE_REQUEST {
            // Keep the current block's tail for the small requests that follow.
            return self.new_block(size);
        }
        let block = self.new_block(BLOCK_SIZE);
        // SAFETY: `size <= LARGE_REQUEST < BLOCK_SIZE`, so the cursor stays inside the block.
        self.cursor = unsafe { block.add(size) };
        self.remaining = BLOCK_SIZE - size;
        block
    }

    fn new_block(&mut self, size: usize) -> NonNull<u8> {
        let layout = match Layout::from_size_align(size, ALIGN) {
            Ok(layout) => layout,
            Err(_) => capacity_overflow(),
        };
        // Reserve first so a failed push cannot leak the block.
        self.blocks.reserve(1);
        // SAFETY: `size >= ALIGN > 0`, so the layout has a non-zero size as `alloc` requires.
        let raw = unsafe { alloc(layout) };
        let Some(block) = NonNull::new(raw) else {
            handle_alloc_error(layout)
        };
        self.blocks.push((block, layout));
        self.usage += size;
        block
    }

    /// Bytes obtained from the system so far.
    pub(crate) fn memory_usage(&self) -> usize {
        self.usage
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        for &(block, layout) in &self.blocks {
            // SAFETY: `block` came from `alloc(layout)` in `new_block` and is freed exactly once,
            // here. Whoever holds pointers into it (the skiplist) owns the arena and is being
            // dropped too, so nothing reads the memory afterwards.
            unsafe { dealloc(block.as_ptr(), layout) };
        }
    }
}

#[cold]
fn capacity_overflow() -> ! {
    panic!("memtable arena: allocation size overflows usize")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fills each allocation with a distinct byte, then checks none was overwritten by another.
    fn check_disjoint(sizes: &[usize]) -> Arena {
        let mut arena = Arena::new();
        let mut allocations = Vec::new();
        for (i, &size) in sizes.iter().enumerate() {
            let ptr = arena.allocate(size);
            assert_eq!(
                ptr.as_ptr() as usize % ALIGN,
                0,
                "allocation {i} misaligned"
            );
            // SAFETY (test): the arena handed out `size` writable bytes at `ptr`.
            unsafe { ptr.as_ptr().write_bytes(i as u8, size) };
            allocations.push((ptr, size, i as u8));
        }
        for &(ptr, size, fill) in &allocations {
            // SAFETY (test): written above, the arena is still alive.
            let bytes = unsafe { std::slice::from_raw_parts(ptr.as_ptr(), size) };
            assert!(
                bytes.iter().all(|&b| b == fill),
                "allocation {fill} overwritten"
            );
        }
        arena
    }

    #[test]
    fn new_arena_holds_nothing() {
        assert_eq!(Arena::new().memory_usage(), 0);
    }

    #[test]
    fn small_allocations_share_blocks_and_stay_disjoint() {
        let sizes: Vec<usize> = (0..5000).map(|i| (i * 7) % 300).collect();
        let total: usize = sizes
            .iter()
            .map(|s| s.max(&1).next_multiple_of(ALIGN))
            .sum();
        let arena = check_disjoint(&sizes);
        assert!(arena.memory_usage() >= total);
        // Less than one block of slack per block used: blocks are shared, not one per request.
        assert!(arena.memory_usage() <= total + total / 10 + BLOCK_SIZE);
        assert_eq!(arena.memory_usage() % BLOCK_SIZE, 0);
    }

    #[test]
    fn large_requests_get_their_own_block_and_keep_the_current_one() {
        let mut arena = Arena::new();
        let small = arena.allocate(16);
        assert_eq!(arena.memory_usage(), BLOCK_SIZE);
        let big = arena.allocate(1 << 20);
        assert_eq!(arena.memory_usage(), BLOCK_SIZE + (1 << 20));
        let next_small = arena.allocate(16);
        // Still carved from the first block, right after the first request.
        assert_eq!(next_small.as_ptr() as usize, small.as_ptr() as usize + 16);
        assert_ne!(big, small);
        assert_eq!(arena.memory_usage(), BLOCK_SIZE + (1 << 20));
        drop(check_disjoint(&[
            1 << 20,
            3,
            LARGE_REQUEST,
            LARGE_REQUEST + 1,
            0,
            5,
        ]));
    }

    #[test]
    fn sizes_round_up_to_alignment() {
        let mut arena = Arena::new();
        let a = arena.allocate(1);
        let b = arena.allocate(0);
        let c = arena.allocate(9);
        assert_eq!(b.as_ptr() as usize - a.as_ptr() as usize, ALIGN);
        assert_eq!(c.as_ptr() as usize - b.as_ptr() as usize, ALIGN);
    }
}
