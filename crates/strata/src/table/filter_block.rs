//! The filter block: one filter per 2 KiB range of data-block offsets, so a point lookup can skip
//! reading a data block whose filter rules the key out.
//!
//! Layout (on-disk: never change):
//!
//! ```text
//! filter_block := filter[0] ... filter[n-1]
//!                 offset[0] ... offset[n-1]   (fixed32 LE each: where filter[i] starts)
//!                 array_offset                (fixed32 LE: where offset[0] starts)
//!                 base_lg                     (1 byte: 11, i.e. 2 KiB ranges)
//! ```
//!
//! Filter `i` covers the keys of every data block whose file offset lies in
//! `[i << base_lg, (i + 1) << base_lg)`; it ends where filter `i + 1` starts (the last one ends at
//! `array_offset`, which is why `array_offset` directly follows the offsets). A range without
//! blocks gets an empty filter, which matches nothing. Filters are built over *user* keys.
//!
//! Reading is forgiving the way LevelDB is: a malformed filter block disables filtering (every key
//! may match) and a bad filter entry matches, so corruption here costs reads, never answers.

use std::sync::Arc;

use super::contents::Contents;
use crate::util::bloom::FilterPolicy;
use crate::util::coding::{decode_fixed32, put_fixed32};

/// Log2 of the data-offset range each filter covers. On-disk: never change.
pub(crate) const FILTER_BASE_LG: u8 = 11;

/// Builds a table's filter block. Not thread-safe.
///
/// Call sequence: `start_block(offset)` before each data block's keys (with the offset the block
/// will have), `add_key` for each key of the block, and `finish` once after the last block.
pub(crate) struct FilterBlockBuilder {
    policy: Arc<dyn FilterPolicy>,
    /// Keys of the current range, concatenated.
    keys: Vec<u8>,
    /// Start of each key in `keys`.
    key_starts: Vec<usize>,
    /// Filters generated so far, then the finished block.
    result: Vec<u8>,
    filter_offsets: Vec<u32>,
}

impl FilterBlockBuilder {
    pub(crate) fn new(policy: Arc<dyn FilterPolicy>) -> FilterBlockBuilder {
        FilterBlockBuilder {
            policy,
            keys: Vec::new(),
            key_starts: Vec::new(),
            result: Vec::new(),
            filter_offsets: Vec::new(),
        }
    }

    /// Announces that the next keys belong to a data block at `block_offset`, closing the
    /// filters of every range before it.
    pub(crate) fn start_block(&mut self, block_offset: u64) {
        let filter_index = block_offset >> FILTER_BASE_LG;
        while (self.filter_offsets.len() as u64) < filter_index {
            self.generate_filter();
        }
    }

    /// Adds a user key to the current range's filter.
    pub(crate) fn add_key(&mut self, user_key: &[u8]) {
        self.key_starts.push(self.keys.len());
        self.keys.extend_from_slice(user_key);
    }

    /// Emits the last filter and the offsets; returns the finished block.
    pub(crate) fn finish(&mut self) -> &[u8] {
        if !self.key_starts.is_empty() {
            self.generate_filter();
        }
        let array_offset = self.result.len() as u32;
        for &offset in &self.filter_offsets {
            put_fixed32(&mut self.result, offset);
        }
        put_fixed32(&mut self.result, array_offset);
        self.result.push(FILTER_BASE_LG);
        &self.result
    }

    fn generate_filter(&mut self) {
        self.filter_offsets.push(self.result.len() as u32);
        if self.key_starts.is_empty() {
            return; // empty filter: matches nothing
        }
        let keys: Vec<&[u8]> = self
            .key_starts
            .iter()
            .enumerate()
            .map(|(i, &start)| {
                let end = self
                    .key_starts
                    .get(i + 1)
                    .copied()
                    .unwrap_or(self.keys.len());
                self.keys.get(start..end).unwrap_or(&[])
            })
            .collect();
        self.policy.create_filter(&keys, &mut self.result);
        self.keys.clear();
        self.key_starts.clear();
    }
}

/// Answers "may this data block hold this user key?" from a table's filter block.
///
/// Thread safety: immutable after construction; shared by all readers of the table.
pub(crate) struct FilterBlockReader {
    policy: Arc<dyn FilterPolicy>,
    data: Contents,
    /// Offset of the filter offsets array; `None` when the block is malformed (filtering off).
    array_offset: Option<usize>,
    num_filters: usize,
    base_lg: u8,
}

impl FilterBlockReader {
    /// Wraps a filter block's contents. Never fails: a malformed block disables filtering.
    pub(crate) fn new(
        policy: Arc<dyn FilterPolicy>,
        data: impl Into<Contents>,
    ) -> FilterBlockReader {
        let mut reader = FilterBlockReader {
            policy,
            data: data.into(),
            array_offset: None,
            num_filters: 0,
            base_lg: FILTER_BASE_LG,
        };
        let len = reader.data.len();
        let Some(trailer_at) = len.checked_sub(5) else {
            return reader;
        };
        let base_lg = reader.data.get(len - 1).copied().unwrap_or(0);
        let array_offset = reader
            .data
            .get(trailer_at..)
            .and_then(decode_fixed32)
            .map(|v| v as usize);
        match array_offset {
            Some(at) if at <= trailer_at && base_lg < 64 => {
                reader.array_offset = Some(at);
                reader.num_filters = (trailer_at - at) / 4;
                reader.base_lg = base_lg;
            }
            _ => {}
        }
        reader
    }

    /// Whether the filter block is a range of its table's mapping rather than a copy.
    pub(crate) fn is_shared(&self) -> bool {
        self.data.is_shared()
    }

    /// False only when the filter for the data block at `block_offset` rules `user_key` out.
    pub(crate) fn key_may_match(&self, block_offset: u64, user_key: &[u8]) -> bool {
        let Some(array_offset) = self.array_offset else {
            return true;
        };
        let index = block_offset >> self.base_lg;
        if index >= self.num_filters as u64 {
            return true; // no filter for this range: treat as a match
        }
        let slot = array_offset + 4 * index as usize;
        let start = self.data.get(slot..).and_then(decode_fixed32);
        // For the last filter this reads `array_offset` itself.
        let limit = self.data.get(slot + 4..).and_then(decode_fixed32);
        match (start, limit) {
            (Some(start), Some(limit)) => {
                let (start, limit) = (start as usize, limit as usize);
                // An empty filter (a range without blocks) is handed to the policy too; the
                // bloom filter says no to everything for it.
                match self.data.get(start..limit) {
                    Some(filter) if limit <= array_offset => {
                        self.policy.key_may_match(user_key, filter)
                    }
                    _ => start != limit, // bad offsets: treat as a match
                }
            }
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::bloom::BloomFilterPolicy;
    use crate::util::hash::hash;
    use proptest::prelude::*;

    /// A transparent policy: the "filter" is the concatenation of 4-byte hashes of the keys.
    struct TestHashPolicy;

    impl FilterPolicy for TestHashPolicy {
        fn name(&self) -> &str {
            "TestHashFilter"
        }
        fn create_filter(&self, keys: &[&[u8]], dst: &mut Vec<u8>) {
            for key in keys {
                put_fixed32(dst, hash(key, 1));
            }
        }
        fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool {
            let h = hash(key, 1);
            filter.chunks_exact(4).any(|c| decode_fixed32(c) == Some(h))
        }
    }

    fn policy() -> Arc<dyn FilterPolicy> {
        Arc::new(TestHashPolicy)
    }

    #[test]
    fn empty_builder_is_five_bytes() {
        let mut b = FilterBlockBuilder::new(policy());
        assert_eq!(b.finish(), &[0, 0, 0, 0, 11]);
        let r = FilterBlockReader::new(policy(), b.finish().to_vec());
        assert!(r.key_may_match(0, b"foo"));
        assert!(r.key_may_match(100_000, b"foo"));
    }

    #[test]
    fn single_chunk_known_layout() {
        let mut b = FilterBlockBuilder::new(policy());
        b.start_block(100);
        b.add_key(b"foo");
        b.add_key(b"bar");
        b.add_key(b"box");
        b.start_block(200);
        b.add_key(b"box");
        b.start_block(300);
        b.add_key(b"hello");
        let block = b.finish().to_vec();
        // Five 4-byte hashes, one offset (0), array offset (20), base lg.
        assert_eq!(block.len(), 20 + 4 + 4 + 1);
        assert_eq!(&block[20..], &[0, 0, 0, 0, 20, 0, 0, 0, 11]);
        assert_eq!(decode_fixed32(&block[..4]), Some(hash(b"foo", 1)));
        let r = FilterBlockReader::new(policy(), block);
        for key in [&b"foo"[..], b"bar", b"box", b"hello"] {
            assert!(r.key_may_match(100, key));
        }
        assert!(!r.key_may_match(100, b"missing"));
        assert!(!r.key_may_match(100, b"other"));
    }

    #[test]
    fn multiple_chunks_known_answers() {
        let mut b = FilterBlockBuilder::new(policy());
        // First filter: offsets [0, 2048).
        b.start_block(0);
        b.add_key(b"foo");
        b.start_block(2000);
        b.add_key(b"bar");
        // Second filter: [2048, 4096).
        b.start_block(3100);
        b.add_key(b"box");
        // Third and fourth filters empty; last filter covers 9000.
        b.start_block(9000);
        b.add_key(b"box");
        b.add_key(b"hello");
        let block = b.finish().to_vec();
        // Hash bytes: 2 + 1 + 0 + 0 + 2 keys = 20 bytes; five offsets: 0, 8, 12, 12, 12.
        let array = &block[20..];
        let offsets: Vec<u32> = array[..20]
            .chunks_exact(4)
            .map(|c| decode_fixed32(c).unwrap())
            .collect();
        assert_eq!(offsets, [0, 8, 12, 12, 12]);
        assert_eq!(&array[20..], &[20, 0, 0, 0, 11]);

        let r = FilterBlockReader::new(policy(), block);
        assert!(r.key_may_match(0, b"foo"));
        assert!(r.key_may_match(2000, b"bar"));
        assert!(!r.key_may_match(0, b"box"));
        assert!(!r.key_may_match(0, b"hello"));

        assert!(r.key_may_match(3100, b"box"));
        assert!(!r.key_may_match(3100, b"foo"));
        assert!(!r.key_may_match(3100, b"bar"));
        assert!(!r.key_may_match(3100, b"hello"));

        // Empty ranges match nothing.
        for key in [&b"foo"[..], b"bar", b"box", b"hello"] {
            assert!(!r.key_may_match(4100, key));
            assert!(!r.key_may_match(6200, key));
        }

        assert!(r.key_may_match(9000, b"box"));
        assert!(r.key_may_match(9000, b"hello"));
        assert!(!r.key_may_match(9000, b"foo"));
        assert!(!r.key_may_match(9000, b"bar"));
        // Beyond the last filter: match.
        assert!(r.key_may_match(20_000, b"anything"));
    }

    #[test]
    fn bloom_filter_block_keeps_members() {
        let policy: Arc<dyn FilterPolicy> = Arc::new(BloomFilterPolicy::new(10));
        let mut b = FilterBlockBuilder::new(Arc::clone(&policy));
        let mut offset = 0u64;
        for block in 0..20u32 {
            b.start_block(offset);
            for i in 0..50u32 {
                b.add_key(&(block * 1000 + i).to_be_bytes());
            }
            offset += 3000;
        }
        let r = FilterBlockReader::new(policy, b.finish().to_vec());
        let mut false_positives = 0;
        for block in 0..20u32 {
            let at = u64::from(block) * 3000;
            for i in 0..50u32 {
                assert!(r.key_may_match(at, &(block * 1000 + i).to_be_bytes()));
                false_positives +=
                    usize::from(r.key_may_match(at, &(block * 1000 + 500 + i).to_be_bytes()));
            }
        }
        assert!(false_positives < 50, "{false_positives} false positives");
    }

    #[test]
    fn malformed_blocks_match_everything() {
        for data in [
            vec![],
            vec![11],
            vec![0, 0, 0],
            vec![9, 0, 0, 0, 11],  // array offset past the trailer
            vec![0, 0, 0, 0, 200], // base lg too large
        ] {
            let r = FilterBlockReader::new(policy(), data);
            assert!(r.key_may_match(0, b"x"));
            assert!(r.key_may_match(1 << 40, b"x"));
        }
        // A filter offset past the array: matches.
        let data = vec![0, 0, 0, 0, 50, 0, 0, 0, 0, 0, 0, 0, 11];
        let r = FilterBlockReader::new(policy(), data);
        assert!(r.key_may_match(0, b"x"));
    }

    proptest! {
        #[test]
        fn reader_never_panics(data in proptest::collection::vec(any::<u8>(), 0..64),
                               offsets in proptest::collection::vec(any::<u64>(), 1..8)) {
            for p in [policy(), Arc::new(BloomFilterPolicy::new(10)) as Arc<dyn FilterPolicy>] {
                let r = FilterBlockReader::new(p, data.clone());
                for &o in &offsets {
                    let _ = r.key_may_match(o, b"key");
                    let _ = r.key_may_match(o % 10_000, b"key");
                }
            }
        }

        #[test]
        fn mutated_blocks_never_panic(flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..4)) {
            let mut b = FilterBlockBuilder::new(policy());
            for i in 0..6u64 {
                b.start_block(i * 1500);
                b.add_key(&i.to_le_bytes());
            }
            let mut data = b.finish().to_vec();
            for (at, x) in flips {
                let len = data.len();
                data[at % len] ^= x;
            }
            let r = FilterBlockReader::new(policy(), data);
            for i in 0..10u64 {
                let _ = r.key_may_match(i * 1500, &i.to_le_bytes());
            }
        }
    }
}
