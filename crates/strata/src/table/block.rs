//! Reads blocks written by [`super::block_builder::BlockBuilder`] (layout documented there):
//! [`Block`] holds a block's uncompressed contents (a buffer of its own, or a range of its table's
//! mapping, see [`super::contents`]) and [`BlockIter`] walks its entries.
//!
//! Thread safety: a `Block` is immutable and shared through `Arc` (the block cache hands the same
//! block to many readers); each `BlockIter` is owned by one thread and holds its own `Arc`.
//!
//! Robustness: `Block::new` checks that the restart array fits in the block; everything else is
//! checked lazily as entries are decoded (varints, lengths against the end of the entries, shared
//! prefix against the previous key, restart offsets against the entries). A bad entry makes the
//! iterator invalid and its `status()` a `Corruption` carrying the block's file offset; nothing
//! read from the block can cause a panic.
//!
//! Seeking binary-searches the restart points (comparing each restart key in place, without a
//! copy) and then scans forward; `prev` goes back to the restart point before the current entry
//! and scans forward to the entry just before it. The only per-entry work is appending the
//! unshared key bytes to one reused key buffer.

use std::cmp::Ordering;
use std::sync::Arc;

use super::contents::Contents;
use super::format::touch_lines;
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::util::coding::{decode_fixed32, get_varint32};
use crate::util::comparator::compare_bytes;
use crate::util::internal_key::InternalKeyComparator;

/// The order of the keys in a block: data and index blocks hold internal keys, the metaindex
/// block plain byte strings.
#[derive(Debug, Clone)]
pub(crate) enum KeyOrder {
    Internal(InternalKeyComparator),
    Bytewise,
}

impl KeyOrder {
    #[inline]
    pub(crate) fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        match self {
            KeyOrder::Internal(icmp) => icmp.compare(a, b),
            KeyOrder::Bytewise => compare_bytes(a, b),
        }
    }
}

/// The uncompressed contents of one block, with its restart array located.
///
/// Invariant: `restarts + 4 * num_restarts + 4 == data.len()`.
pub(crate) struct Block {
    data: Contents,
    /// Offset of the restart array, which is also the end of the entries.
    restarts: usize,
    num_restarts: usize,
    /// Offset of the block in its file, reported in errors.
    file_offset: u64,
    /// The block's checksum was verified when it was read (see [`Block::set_verified`]).
    verified: bool,
}

impl std::fmt::Debug for Block {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Block")
            .field("size", &self.data.len())
            .field("num_restarts", &self.num_restarts)
            .field("file_offset", &self.file_offset)
            .finish()
    }
}

impl Block {
    /// Takes ownership of a block's contents read from file offset `file_offset`.
    pub(crate) fn new(data: impl Into<Contents>, file_offset: u64) -> Result<Block> {
        let data = data.into();
        let len = data.len();
        let count = len
            .checked_sub(4)
            .and_then(|at| data.get(at..))
            .and_then(decode_fixed32)
            .ok_or_else(|| {
                Error::corruption_at(
                    file_offset,
                    format!("block of {len} bytes is too short for its restart count"),
                )
            })? as usize;
        let max_restarts = (len - 4) / 4;
        if count > max_restarts {
            return Err(Error::corruption_at(
                file_offset,
                format!("bad restart count {count} in a block of {len} bytes"),
            ));
        }
        Ok(Block {
            restarts: len - 4 - 4 * count,
            num_restarts: count,
            data,
            file_offset,
            verified: false,
        })
    }

    /// Records that the block's checksum was verified when it was read, so a read that asks for
    /// verification can take it from the block cache.
    pub(crate) fn set_verified(&mut self, verified: bool) {
        self.verified = verified;
    }

    /// True when the block's checksum was verified when it was read.
    pub(crate) fn verified(&self) -> bool {
        self.verified
    }

    /// Bytes of contents (what the inspection tools report; the engine charges `memory`).
    #[cfg(any(test, feature = "tools"))]
    pub(crate) fn size(&self) -> usize {
        self.data.len()
    }

    /// Bytes of memory the contents hold (a reused buffer may be larger than the block),
    /// charged against the block cache.
    pub(crate) fn memory(&self) -> usize {
        self.data.memory()
    }

    /// Gives the contents' buffer back, for the next block read to reuse.
    pub(crate) fn into_data(self) -> Vec<u8> {
        self.data.into_buffer()
    }

    /// Starts loading the block's lines into the CPU's cache at once (its first 4 KiB and its
    /// last line, which holds the restart array; see [`touch_lines`]), for a block found in the
    /// block cache.
    pub(crate) fn touch(&self) {
        touch_lines(&self.data);
    }

    /// Whether the contents are a range of the table's mapping rather than a copy.
    pub(crate) fn is_shared(&self) -> bool {
        self.data.is_shared()
    }

    /// An unpositioned iterator over the block's entries, ordered by `order`.
    pub(crate) fn iter(self: &Arc<Self>, order: KeyOrder) -> BlockIter {
        BlockIter {
            block: Arc::clone(self),
            order,
            current: self.restarts,
            restart_index: self.num_restarts,
            next_offset: self.restarts,
            key: Vec::new(),
            value_at: 0,
            value_len: 0,
            err: None,
        }
    }

    /// The entries, without the restart array.
    #[inline]
    fn entries(&self) -> &[u8] {
        self.data.get(..self.restarts).unwrap_or(&[])
    }

    /// Offset of restart point `index`; `None` past the array.
    #[inline]
    fn restart_point(&self, index: usize) -> Option<usize> {
        if index >= self.num_restarts {
            return None;
        }
        let at = self.restarts + 4 * index;
        self.data
            .get(at..)
            .and_then(decode_fixed32)
            .map(|offset| offset as usize)
    }
}

impl Block {
    /// A corruption of this block: `what` was found at byte `at` of it.
    fn corruption(&self, at: usize, what: &str) -> Error {
        Error::corruption_at(
            self.file_offset,
            format!("{what} at byte {at} of the block"),
        )
    }

    /// The number of restart points.
    pub(crate) fn num_restarts(&self) -> usize {
        self.num_restarts
    }

    /// The key of restart point `index` (whose entry shares nothing with the one before);
    /// `Err(offset)` when the restart entry is corrupt.
    pub(crate) fn restart_key(&self, index: usize) -> Result<&[u8], usize> {
        let restart_at = self.restarts + 4 * index;
        let offset = self.restart_point(index).ok_or(restart_at)?;
        restart_entry_key(self.entries(), offset).ok_or(offset)
    }

    /// The entry at restart point `index`; `None` past the last one, or when it is corrupt
    /// (does not decode, or shares a prefix). Inlined into the caller's loop over the restart
    /// points: returned through memory, the entry cost a pass over an index block twice as
    /// long (its words, stored one by one, then loaded two at a time, stall the loads).
    #[inline(always)]
    pub(crate) fn restart_entry(&self, index: usize) -> Option<RestartEntry<'_>> {
        let entries = self.entries();
        let at = self.restart_point(index)?;
        // Where the entry ends if the next restart point starts right after it.
        let next = self.restart_point(index + 1).unwrap_or(self.restarts);
        let h = decode_entry(entries, at).filter(|h| h.shared == 0)?;
        let value_at = h.key_at + h.non_shared;
        let end = value_at + h.value_len;
        Some(RestartEntry {
            key: entries.get(h.key_at..value_at)?,
            value: entries.get(value_at..end)?,
            from_value: entries.get(value_at..)?,
            alone: next == end,
        })
    }

    /// Index of the last restart point whose key is `< target` (or `left`), searching
    /// `[left, right]`; `Err(offset)` when a restart entry is corrupt.
    fn search_restarts(
        &self,
        order: &KeyOrder,
        mut left: usize,
        mut right: usize,
        target: &[u8],
    ) -> Result<usize, usize> {
        while left < right {
            let mid = left + (right - left).div_ceil(2);
            if order.compare(self.restart_key(mid)?, target) == Ordering::Less {
                left = mid;
            } else {
                right = mid - 1;
            }
        }
        Ok(left)
    }

    /// Decodes the entry at `offset`, whose predecessor's key is in `key`, leaving the entry's
    /// own key there; `None` when the entry is corrupt (`key` is then unspecified).
    #[inline]
    fn decode_next(&self, offset: usize, key: &mut Vec<u8>) -> Option<DecodedEntry> {
        let entries = self.entries();
        let header = decode_entry(entries, offset).filter(|h| h.shared <= key.len())?;
        let value_at = header.key_at + header.non_shared;
        let delta = entries.get(header.key_at..value_at)?;
        key.truncate(header.shared);
        key.extend_from_slice(delta);
        Some(DecodedEntry {
            value_at,
            value_len: header.value_len,
            next: value_at + header.value_len,
        })
    }

    /// A point lookup without a cursor: the value of the first entry whose key is `>= target`,
    /// with that key left in `key` (a buffer the caller reuses across lookups); `Ok(None)` when
    /// every key is below `target`. Errors are the corruptions a [`BlockIter`] reports.
    pub(crate) fn seek_point<'a>(
        &'a self,
        order: &KeyOrder,
        target: &[u8],
        key: &mut Vec<u8>,
    ) -> Result<Option<&'a [u8]>> {
        self.seek_point_within(order, target, key, None)
    }

    /// [`seek_point`](Self::seek_point), with the binary search over the restart points
    /// narrowed to `[left, right]` when `within` is given: the caller knows the last restart
    /// point whose key is below `target` is among them (see `table/restart_prints.rs`).
    pub(crate) fn seek_point_within<'a>(
        &'a self,
        order: &KeyOrder,
        target: &[u8],
        key: &mut Vec<u8>,
        within: Option<(usize, usize)>,
    ) -> Result<Option<&'a [u8]>> {
        key.clear();
        let Some(last) = self.num_restarts.checked_sub(1) else {
            return Ok(None);
        };
        let (left, right) = within.map_or((0, last), |(l, r)| (l.min(last), r.min(last)));
        let found = self
            .search_restarts(order, left.min(right), right, target)
            .map_err(|at| self.corruption(at, "bad restart entry"))?;
        let mut offset = match self.restart_point(found) {
            Some(offset) if offset <= self.restarts => offset,
            _ => {
                let at = self.restarts + 4 * found;
                return Err(self.corruption(at, "restart offset out of range"));
            }
        };
        while offset < self.restarts {
            let entry = self
                .decode_next(offset, key)
                .ok_or_else(|| self.corruption(offset, "bad block entry"))?;
            if order.compare(key, target) != Ordering::Less {
                return Ok(self
                    .data
                    .get(entry.value_at..entry.value_at + entry.value_len));
            }
            offset = entry.next;
        }
        key.clear();
        Ok(None)
    }
}

/// An entry at a restart point ([`Block::restart_entry`]).
pub(crate) struct RestartEntry<'a> {
    pub(crate) key: &'a [u8],
    pub(crate) value: &'a [u8],
    /// The block's entries from the value on: the value, then whatever follows it (room to
    /// read a short value a word at a time).
    pub(crate) from_value: &'a [u8],
    /// The next restart point starts where this entry ends (for the last entry, the restart
    /// array does): no other entry lies between them.
    pub(crate) alone: bool,
}

/// Where a decoded entry's value lies and where the next entry starts.
struct DecodedEntry {
    value_at: usize,
    value_len: usize,
    next: usize,
}

/// One decoded entry header.
struct EntryHeader {
    shared: usize,
    non_shared: usize,
    value_len: usize,
    /// Offset of the key delta (just past the header).
    key_at: usize,
}

/// The key of the restart entry at `offset` of `entries`; `None` when it does not decode or
/// shares bytes with an entry before it (a restart entry never does).
fn restart_entry_key(entries: &[u8], offset: usize) -> Option<&[u8]> {
    let h = decode_entry(entries, offset)?;
    (h.shared == 0)
        .then(|| entries.get(h.key_at..h.key_at + h.non_shared))
        .flatten()
}

/// Decodes the header of the entry at `offset` and checks that its key delta and value lie
/// inside `entries`.
#[inline]
fn decode_entry(entries: &[u8], offset: usize) -> Option<EntryHeader> {
    let rest = entries.get(offset..)?;
    let (shared, non_shared, value_len, header_len) = match *rest {
        // Fast path: all three lengths fit in one byte each.
        [a, b, c, ..] if (a | b | c) < 0x80 => (a as usize, b as usize, c as usize, 3),
        _ => {
            let mut p = rest;
            let shared = get_varint32(&mut p)? as usize;
            let non_shared = get_varint32(&mut p)? as usize;
            let value_len = get_varint32(&mut p)? as usize;
            (shared, non_shared, value_len, rest.len() - p.len())
        }
    };
    if non_shared.checked_add(value_len)? > rest.len() - header_len {
        return None;
    }
    Some(EntryHeader {
        shared,
        non_shared,
        value_len,
        key_at: offset + header_len,
    })
}

/// A cursor over one block. See the module documentation.
pub(crate) struct BlockIter {
    block: Arc<Block>,
    order: KeyOrder,
    /// Offset of the current entry; `block.restarts` when not valid.
    current: usize,
    /// Restart point at or before `current`; `block.num_restarts` when not valid.
    restart_index: usize,
    /// Offset just past the current entry: where the next one starts.
    next_offset: usize,
    /// The current entry's full key.
    key: Vec<u8>,
    value_at: usize,
    value_len: usize,
    err: Option<Error>,
}

impl BlockIter {
    fn mark_invalid(&mut self) {
        self.current = self.block.restarts;
        self.next_offset = self.block.restarts;
        self.restart_index = self.block.num_restarts;
    }

    fn corrupt(&mut self, at: usize, what: &str) {
        if self.err.is_none() {
            self.err = Some(self.block.corruption(at, what));
        }
        self.key.clear();
        self.mark_invalid();
    }

    /// Positions at the first entry `>= target`, the binary search over the restart points
    /// narrowed to `[left, right]` when `within` is given: the caller knows the last restart
    /// point whose key is below `target` is among them (see `table/restart_prints.rs`).
    pub(crate) fn seek_within(&mut self, target: &[u8], within: Option<(usize, usize)>) {
        let num_restarts = self.block.num_restarts;
        if num_restarts == 0 {
            self.mark_invalid();
            return;
        }
        let last = num_restarts - 1;
        let (mut left, mut right) = within.map_or((0, last), |(l, r)| (l.min(last), r.min(last)));
        // When already positioned, the current entry narrows the search (sequential seeks, as
        // a merging iterator makes them, then rarely leave the current restart interval).
        let mut current_is_before = false;
        if self.valid() {
            match self.order.compare(&self.key, target) {
                Ordering::Less => {
                    left = left.max(self.restart_index);
                    current_is_before = true;
                }
                Ordering::Greater => right = right.min(self.restart_index),
                Ordering::Equal => return,
            }
        }
        let found = match self
            .block
            .search_restarts(&self.order, left.min(right), right, target)
        {
            Ok(found) => found,
            Err(at) => {
                self.corrupt(at, "bad restart entry");
                return;
            }
        };
        // Scanning on from the current entry is the same as restarting at `found` when the
        // current entry is before the target and in the same restart interval.
        let keep_position = current_is_before && found == self.restart_index;
        if !keep_position && !self.seek_to_restart_point(found) {
            return;
        }
        while self.parse_next_key() {
            if self.order.compare(&self.key, target) != Ordering::Less {
                return;
            }
        }
    }

    /// Positions before the entry at restart point `index`; false (and corrupt) when the
    /// restart offset is out of range.
    fn seek_to_restart_point(&mut self, index: usize) -> bool {
        self.key.clear();
        self.restart_index = index;
        match self.block.restart_point(index) {
            Some(offset) if offset <= self.block.restarts => {
                self.next_offset = offset;
                true
            }
            _ => {
                self.corrupt(
                    self.block.restarts + 4 * index,
                    "restart offset out of range",
                );
                false
            }
        }
    }

    /// Decodes the entry at `next_offset`; false at the end of the block or on corruption.
    #[inline]
    fn parse_next_key(&mut self) -> bool {
        self.current = self.next_offset;
        let block = &*self.block;
        if self.current >= block.restarts {
            self.mark_invalid();
            return false;
        }
        let Some(entry) = block.decode_next(self.current, &mut self.key) else {
            let at = self.current;
            self.corrupt(at, "bad block entry");
            return false;
        };
        self.value_at = entry.value_at;
        self.value_len = entry.value_len;
        self.next_offset = entry.next;
        while self.restart_index + 1 < block.num_restarts
            && block
                .restart_point(self.restart_index + 1)
                .is_some_and(|r| r < self.current)
        {
            self.restart_index += 1;
        }
        true
    }
}

impl InternalIterator for BlockIter {
    #[inline]
    fn valid(&self) -> bool {
        self.current < self.block.restarts
    }

    fn seek_to_first(&mut self) {
        if self.block.num_restarts == 0 {
            self.mark_invalid();
            return;
        }
        if self.seek_to_restart_point(0) {
            self.parse_next_key();
        }
    }

    fn seek_to_last(&mut self) {
        if self.block.num_restarts == 0 {
            self.mark_invalid();
            return;
        }
        if self.seek_to_restart_point(self.block.num_restarts - 1) {
            while self.parse_next_key() && self.next_offset < self.block.restarts {}
        }
    }

    fn seek(&mut self, target: &[u8]) {
        self.seek_within(target, None);
    }

    fn next(&mut self) {
        debug_assert!(self.valid());
        self.parse_next_key();
    }

    fn prev(&mut self) {
        debug_assert!(self.valid());
        let original = self.current;
        // Back up to a restart point that starts before the current entry.
        loop {
            match self.block.restart_point(self.restart_index) {
                Some(r) if r < original => break,
                _ => {}
            }
            if self.restart_index == 0 {
                self.key.clear();
                self.mark_invalid();
                return;
            }
            self.restart_index -= 1;
        }
        if !self.seek_to_restart_point(self.restart_index) {
            return;
        }
        // Scan forward to the entry just before `original`.
        while self.parse_next_key() && self.next_offset < original {}
    }

    #[inline]
    fn key(&self) -> &[u8] {
        &self.key
    }

    #[inline]
    fn value(&self) -> &[u8] {
        self.block
            .data
            .get(self.value_at..self.value_at + self.value_len)
            .unwrap_or(&[])
    }

    fn status(&self) -> Result<()> {
        match &self.err {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::block_builder::BlockBuilder;
    use crate::util::comparator::BytewiseComparator;
    use crate::util::internal_key::{internal_key, ValueType};
    use proptest::prelude::*;

    fn build(entries: &[(Vec<u8>, Vec<u8>)], interval: usize) -> Arc<Block> {
        let mut b = BlockBuilder::new(interval);
        for (k, v) in entries {
            b.add(k, v);
        }
        Arc::new(Block::new(b.finish().to_vec(), 0).unwrap())
    }

    fn collect_forward(it: &mut BlockIter) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut out = Vec::new();
        it.seek_to_first();
        while it.valid() {
            out.push((it.key().to_vec(), it.value().to_vec()));
            it.next();
        }
        out
    }

    fn collect_backward(it: &mut BlockIter) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut out = Vec::new();
        it.seek_to_last();
        while it.valid() {
            out.push((it.key().to_vec(), it.value().to_vec()));
            it.prev();
        }
        out.reverse();
        out
    }

    /// Keys with long shared prefixes, empty values and varied lengths.
    fn sample_entries(n: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
        let prefix = vec![b'p'; 300];
        let mut out: Vec<(Vec<u8>, Vec<u8>)> = (0..n)
            .map(|i| {
                let mut key = prefix.clone();
                key.extend_from_slice(format!("{:08}", i * 2).as_bytes());
                let value = if i % 3 == 0 {
                    Vec::new()
                } else {
                    vec![(i % 251) as u8; i % 200]
                };
                (key, value)
            })
            .collect();
        out.insert(0, (b"a".to_vec(), b"first".to_vec()));
        out
    }

    #[test]
    fn round_trip_forward_backward_and_seek() {
        for interval in [1, 2, 16] {
            let entries = sample_entries(500);
            let block = build(&entries, interval);
            let mut it = block.iter(KeyOrder::Bytewise);
            assert!(!it.valid());
            assert_eq!(collect_forward(&mut it), entries);
            assert_eq!(collect_backward(&mut it), entries);
            it.status().unwrap();

            for (i, (k, v)) in entries.iter().enumerate() {
                // Seek to every key exactly.
                it.seek(k);
                assert!(it.valid());
                assert_eq!((it.key(), it.value()), (&k[..], &v[..]));
                // Seek between keys: the key plus a byte lands on the next key.
                let mut between = k.clone();
                between.push(b'0');
                it.seek(&between);
                match entries.get(i + 1) {
                    Some((next, _)) => assert_eq!(it.key(), &next[..], "interval {interval}"),
                    None => assert!(!it.valid()),
                }
            }
            // Before everything and after everything.
            it.seek(b"");
            assert_eq!(it.key(), b"a");
            it.seek(b"\xff");
            assert!(!it.valid());
            it.status().unwrap();
        }
    }

    #[test]
    fn seek_moves_backwards_from_a_positioned_iterator() {
        let entries = sample_entries(100);
        let block = build(&entries, 16);
        let mut it = block.iter(KeyOrder::Bytewise);
        it.seek_to_last();
        for (k, _) in entries.iter().rev() {
            it.seek(k);
            assert_eq!(it.key(), &k[..]);
        }
        for (k, _) in &entries {
            it.seek(k);
            assert_eq!(it.key(), &k[..]);
        }
    }

    #[test]
    fn prev_and_next_interleave() {
        let entries = sample_entries(40);
        let block = build(&entries, 4);
        let mut it = block.iter(KeyOrder::Bytewise);
        it.seek(&entries[20].0);
        it.prev();
        assert_eq!(it.key(), &entries[19].0[..]);
        it.next();
        it.next();
        assert_eq!(it.key(), &entries[21].0[..]);
        it.seek_to_first();
        it.prev();
        assert!(!it.valid());
        it.status().unwrap();
    }

    #[test]
    fn internal_key_order_is_used() {
        let icmp = InternalKeyComparator::new(BytewiseComparator::shared());
        // Same user key, newest first.
        let entries: Vec<(Vec<u8>, Vec<u8>)> = [(b"k", 9u64), (b"k", 5), (b"k", 1)]
            .iter()
            .map(|(k, s)| {
                (
                    internal_key(*k, *s, ValueType::Value),
                    s.to_le_bytes().to_vec(),
                )
            })
            .collect();
        let block = build(&entries, 16);
        let mut it = block.iter(KeyOrder::Internal(icmp));
        it.seek(&internal_key(b"k", 6, ValueType::Value));
        assert_eq!(it.key(), &entries[1].0[..]);
        it.seek(&internal_key(b"k", 100, ValueType::Value));
        assert_eq!(it.key(), &entries[0].0[..]);
        it.seek(&internal_key(b"k", 0, ValueType::Value));
        assert!(!it.valid());
    }

    #[test]
    fn empty_block_iterates_nothing() {
        let block = build(&[], 16);
        let mut it = block.iter(KeyOrder::Bytewise);
        it.seek_to_first();
        assert!(!it.valid());
        it.seek_to_last();
        assert!(!it.valid());
        it.seek(b"x");
        assert!(!it.valid());
        it.status().unwrap();
        // A zero restart count is accepted and means no entries.
        let zero = Arc::new(Block::new(vec![0, 0, 0, 0], 0).unwrap());
        let mut it = zero.iter(KeyOrder::Bytewise);
        it.seek_to_first();
        assert!(!it.valid());
        it.status().unwrap();
    }

    #[test]
    fn bad_restart_count_is_corruption() {
        let err = Block::new(vec![0, 0, 0, 0, 2, 0, 0, 0], 4096).unwrap_err();
        let c = err.corruption_details().unwrap();
        assert_eq!(c.offset, Some(4096));
        assert!(c.reason.contains("restart count"), "{err}");
        assert!(Block::new(vec![1, 0, 0], 0).unwrap_err().is_corruption());
        assert!(Block::new(vec![], 0).unwrap_err().is_corruption());
    }

    #[test]
    fn truncated_entry_is_corruption_not_panic() {
        let mut b = BlockBuilder::new(16);
        b.add(b"key1", b"value1");
        b.add(b"key2", b"value2");
        let mut bytes = b.finish().to_vec();
        bytes[2] = 100; // value_len of the first entry runs past the entries
        let block = Arc::new(Block::new(bytes, 8192).unwrap());
        let mut it = block.iter(KeyOrder::Bytewise);
        it.seek_to_first();
        assert!(!it.valid());
        let err = it.status().unwrap_err();
        assert_eq!(err.corruption_details().unwrap().offset, Some(8192));
    }

    #[test]
    fn shared_longer_than_previous_key_is_corruption() {
        let mut b = BlockBuilder::new(16);
        b.add(b"key1", b"v");
        b.add(b"key2", b"v");
        let mut bytes = b.finish().to_vec();
        // Second entry starts at 3 + 4 + 1 = 8; claim 9 shared bytes.
        bytes[8] = 9;
        let block = Arc::new(Block::new(bytes, 0).unwrap());
        let mut it = block.iter(KeyOrder::Bytewise);
        it.seek_to_first();
        assert!(it.valid());
        it.next();
        assert!(!it.valid());
        assert!(it.status().unwrap_err().is_corruption());
    }

    /// Checks that a point lookup finds what a fresh cursor's seek finds, damage included.
    fn seek_point_agrees_with_a_cursor(block: &Arc<Block>, target: &[u8]) {
        let mut cursor = block.iter(KeyOrder::Bytewise);
        cursor.seek(target);
        let mut key = b"stale".to_vec();
        match block.seek_point(&KeyOrder::Bytewise, target, &mut key) {
            Ok(Some(value)) => {
                assert!(cursor.valid(), "{target:?}");
                assert_eq!((cursor.key(), cursor.value()), (&key[..], value));
            }
            Ok(None) => assert!(!cursor.valid() && cursor.status().is_ok(), "{target:?}"),
            Err(e) => {
                assert!(!cursor.valid());
                let cursor_err = cursor
                    .status()
                    .expect_err("the cursor meets the damage too");
                assert_eq!(cursor_err.to_string(), e.to_string());
            }
        }
    }

    fn exercise(block: &Arc<Block>, probes: &[Vec<u8>]) {
        for p in probes {
            seek_point_agrees_with_a_cursor(block, p);
        }
        let mut it = block.iter(KeyOrder::Bytewise);
        let mut steps = 0;
        it.seek_to_first();
        while it.valid() && steps < 10_000 {
            let _ = (it.key(), it.value());
            it.next();
            steps += 1;
        }
        it.seek_to_last();
        steps = 0;
        while it.valid() && steps < 10_000 {
            it.prev();
            steps += 1;
        }
        for p in probes {
            it.seek(p);
            if it.valid() {
                it.prev();
            }
            if it.valid() {
                it.next();
            }
        }
        let _ = it.status();
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300),
                                       probes in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..6), 0..8)) {
            if let Ok(block) = Block::new(bytes, 0) {
                exercise(&Arc::new(block), &probes);
            }
        }

        #[test]
        fn mutated_blocks_never_panic(n in 1usize..60, interval in 1usize..5,
                                      flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6),
                                      truncate in proptest::option::of(any::<usize>())) {
            let entries: Vec<(Vec<u8>, Vec<u8>)> = (0..n)
                .map(|i| (format!("key{:04}", i * 3).into_bytes(), vec![i as u8; i % 7]))
                .collect();
            let mut b = BlockBuilder::new(interval);
            for (k, v) in &entries {
                b.add(k, v);
            }
            let mut bytes = b.finish().to_vec();
            for (at, x) in flips {
                let len = bytes.len();
                bytes[at % len] ^= x;
            }
            if let Some(t) = truncate {
                let len = bytes.len();
                bytes.truncate(t % (len + 1));
            }
            if let Ok(block) = Block::new(bytes, 0) {
                let probes: Vec<Vec<u8>> = entries.iter().map(|(k, _)| k.clone()).collect();
                exercise(&Arc::new(block), &probes);
            }
        }

        #[test]
        fn random_sorted_entries_round_trip(mut keys in proptest::collection::btree_set(proptest::collection::vec(0u8..4, 0..12), 0..80),
                                            interval in 1usize..20) {
            let entries: Vec<(Vec<u8>, Vec<u8>)> = std::mem::take(&mut keys)
                .into_iter()
                .map(|k| { let v = k.iter().rev().copied().collect(); (k, v) })
                .collect();
            let block = build(&entries, interval);
            let mut it = block.iter(KeyOrder::Bytewise);
            prop_assert_eq!(collect_forward(&mut it), entries.clone());
            prop_assert_eq!(collect_backward(&mut it), entries.clone());
            for (k, v) in &entries {
                it.seek(k);
                prop_assert!(it.valid());
                prop_assert_eq!(it.key(), &k[..]);
                prop_assert_eq!(it.value(), &v[..]);
                seek_point_agrees_with_a_cursor(&block, k);
                // Between and past the keys too.
                let mut after = k.clone();
                after.push(9);
                seek_point_agrees_with_a_cursor(&block, &after);
            }
            seek_point_agrees_with_a_cursor(&block, b"");
        }
    }
}
