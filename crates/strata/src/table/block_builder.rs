//! Builds blocks: sorted key/value entries with prefix-compressed keys and restart points.
//!
//! Layout (on-disk: never change), decoded by [`super::block::Block`]:
//!
//! ```text
//! block   := entry* restart* num_restarts
//! entry   := shared (varint32) non_shared (varint32) value_len (varint32)
//!            key_delta (non_shared bytes) value (value_len bytes)
//! restart := offset of an entry whose shared == 0 (fixed32 LE)
//! num_restarts := fixed32 LE (at least 1; the first restart is offset 0)
//! ```
//!
//! An entry's key is the first `shared` bytes of the previous entry's key followed by
//! `key_delta`. Every `restart_interval` entries a restart point stores its key whole, so a
//! reader can binary-search the restart array and decode forward from there.
//!
//! Contract: keys are added in strictly increasing order (of whatever comparator the block will
//! be read with); keys and values are shorter than 4 GiB (checked at the API boundary).
//! Not thread-safe; one builder per table being written.

use crate::util::coding::{put_fixed32, put_varint32};

/// Accumulates one block's entries.
pub(crate) struct BlockBuilder {
    /// Entries, and after `finish` the restart array too.
    buffer: Vec<u8>,
    /// Offsets of the restart points.
    restarts: Vec<u32>,
    /// Entries since the last restart point.
    counter: usize,
    restart_interval: usize,
    finished: bool,
    last_key: Vec<u8>,
}

impl BlockBuilder {
    /// A builder that stores a full key every `restart_interval` entries (at least 1).
    pub(crate) fn new(restart_interval: usize) -> BlockBuilder {
        BlockBuilder {
            buffer: Vec::new(),
            restarts: vec![0],
            counter: 0,
            restart_interval: restart_interval.max(1),
            finished: false,
            last_key: Vec::new(),
        }
    }

    /// Forgets every entry, keeping the allocated buffers.
    pub(crate) fn reset(&mut self) {
        self.buffer.clear();
        self.restarts.clear();
        self.restarts.push(0);
        self.counter = 0;
        self.finished = false;
        self.last_key.clear();
    }

    /// True when no entry has been added since the last reset.
    pub(crate) fn is_empty(&self) -> bool {
        self.buffer.is_empty()
    }

    /// Size of the block `finish` would return now.
    pub(crate) fn current_size_estimate(&self) -> usize {
        self.buffer.len() + self.restarts.len() * 4 + 4
    }

    /// Appends an entry; `key` must be greater than every key added before.
    pub(crate) fn add(&mut self, key: &[u8], value: &[u8]) {
        debug_assert!(!self.finished, "add after finish");
        let shared = if self.counter < self.restart_interval {
            self.last_key
                .iter()
                .zip(key)
                .take_while(|(a, b)| a == b)
                .count()
        } else {
            self.restarts.push(self.buffer.len() as u32);
            self.counter = 0;
            0
        };
        let delta = key.get(shared..).unwrap_or(&[]);
        put_varint32(&mut self.buffer, shared as u32);
        put_varint32(&mut self.buffer, delta.len() as u32);
        put_varint32(&mut self.buffer, value.len() as u32);
        self.buffer.extend_from_slice(delta);
        self.buffer.extend_from_slice(value);
        self.last_key.truncate(shared);
        self.last_key.extend_from_slice(delta);
        self.counter += 1;
    }

    /// Appends the restart array and returns the finished block; valid until `reset`.
    pub(crate) fn finish(&mut self) -> &[u8] {
        if !self.finished {
            for &restart in &self.restarts {
                put_fixed32(&mut self.buffer, restart);
            }
            put_fixed32(&mut self.buffer, self.restarts.len() as u32);
            self.finished = true;
        }
        &self.buffer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_block_is_one_restart() {
        let mut b = BlockBuilder::new(16);
        assert!(b.is_empty());
        assert_eq!(b.current_size_estimate(), 8);
        assert_eq!(b.finish(), &[0, 0, 0, 0, 1, 0, 0, 0]);
    }

    #[test]
    fn known_bytes_with_prefix_compression() {
        let mut b = BlockBuilder::new(2);
        b.add(b"apple", b"1");
        b.add(b"apply", b"");
        b.add(b"banana", b"22");
        let estimate = b.current_size_estimate();
        let block = b.finish().to_vec();
        assert_eq!(block.len(), estimate);
        let mut expected = Vec::new();
        expected.extend_from_slice(&[0, 5, 1]);
        expected.extend_from_slice(b"apple1");
        expected.extend_from_slice(&[4, 1, 0]);
        expected.extend_from_slice(b"y");
        let restart = expected.len() as u8;
        expected.extend_from_slice(&[0, 6, 2]);
        expected.extend_from_slice(b"banana22");
        expected.extend_from_slice(&[0, 0, 0, 0, restart, 0, 0, 0, 2, 0, 0, 0]);
        assert_eq!(block, expected);

        b.reset();
        assert!(b.is_empty());
        b.add(b"x", b"y");
        assert_eq!(b.finish(), &[0, 1, 1, b'x', b'y', 0, 0, 0, 0, 1, 0, 0, 0]);
    }
}
