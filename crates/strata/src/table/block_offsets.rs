//! Where each entry of a table's index block points: the data blocks' file offsets in one
//! array, so a lookup that the index's restart prints place alone (`table/restart_prints.rs`)
//! finds its block without reading the index block.
//!
//! A lookup of a key absent from a table waits, before the table's filter can answer, for the
//! table's place in the table cache, its print group, the index block's restart array and
//! entry, and then the filter's offsets and bits: each a cache line that is rarely in the CPU's
//! cache when lookups spread over many tables, each waited for in turn. When every index entry
//! is a restart point (LevelDB and Strata write index blocks so) and no restart key's print
//! equals the target's, the prints alone say how many entries lie below the target (the
//! prints never go down: `RestartPrints::new` refuses a block whose prints would), so the
//! entry the lookup wants is the next one; this array then gives its block in one read.
//!
//! Data blocks lie back to back in a table, each followed by its trailer, so one offset per
//! block and the end of the last say where each starts and how long it is. A table whose
//! index entries are not one per restart point, do not decode, or describe blocks that are
//! not back to back gets none, and its lookups search the index block as before. (Tested with
//! the prints, in `restart_prints.rs`.)
//!
//! The array is built by a later read than the one that built the prints (`Table::get_in`,
//! `ReadBudget`), so that no read waits for both: each is a pass over every index entry (for
//! 2170 entries, 1 KiB blocks, about 11 µs for the prints and 17 for the offsets here, where a
//! lookup in a table already open takes under 1 µs), and one lookup paying for both was among
//! the slowest 1% of a sweep's reads of new tables. Handles are decoded a word at a time
//! ([`decode_handle`]).

use super::block::{Block, RestartEntry};
use super::format::{BlockHandle, BLOCK_TRAILER_LEN};

/// The data block each entry of an index block points to; see the module documentation.
/// Immutable once built, and shared by the table's lookups on every thread.
pub(crate) struct BlockOffsets {
    /// The offset of each entry's block, then the end of the last block's trailer: one more
    /// than the index has entries, each at least [`BLOCK_TRAILER_LEN`] above the one before.
    starts: Box<[u64]>,
}

/// Adds to `starts` the end of the block `entry` points to (and its start, for the first);
/// `None` when the entry is not alone between its restart point and the next, its handle does
/// not decode, or its block does not start where the last one ended.
fn add(starts: &mut Vec<u64>, entry: &RestartEntry<'_>) -> Option<()> {
    if !entry.alone {
        return None;
    }
    let handle = decode_handle(entry)?;
    let end = handle
        .offset
        .checked_add(handle.size)?
        .checked_add(BLOCK_TRAILER_LEN as u64)?;
    match starts.last() {
        Some(&last) if last != handle.offset => return None,
        Some(_) => starts.push(end),
        None => starts.extend([handle.offset, end]),
    }
    Some(())
}

/// The handle in `entry`'s value, as [`BlockHandle::decode_from`] reads it. When both of its
/// varints end within the first eight bytes (a block below 2^21 bytes at an offset below
/// 2^35, say), they are read from one little-endian word: the bytes whose top bit is clear
/// end them, and each one's seven-bit groups are gathered in three shift-and-mask steps.
/// Inlined: returned through memory, the handle's two words were stored as one and loaded
/// one by one, and the second load stalled.
#[inline(always)]
fn decode_handle(entry: &RestartEntry<'_>) -> Option<BlockHandle> {
    const TOP_BITS: u64 = 0x8080_8080_8080_8080;
    let Some(&word) = entry.from_value.first_chunk::<8>() else {
        return BlockHandle::decode_from(&mut &entry.value[..]);
    };
    let word = u64::from_le_bytes(word);
    let ends = !word & TOP_BITS;
    let second_ends = ends & ends.wrapping_sub(1);
    // The byte index of each varint's last byte (8 when it does not end in the word).
    let first_last = ends.trailing_zeros() / 8;
    let second_last = second_ends.trailing_zeros() / 8;
    if second_last >= 8 || second_last as usize >= entry.value.len() {
        return BlockHandle::decode_from(&mut &entry.value[..]);
    }
    let first_len = first_last + 1;
    Some(BlockHandle {
        offset: gather(word & low_bytes(first_len)),
        size: gather((word >> (8 * first_len)) & low_bytes(second_last - first_last)),
    })
}

/// A mask of the low `n` bytes of a word, `n` from 1 to 7.
fn low_bytes(n: u32) -> u64 {
    (1 << (8 * n)) - 1
}

/// The value of a varint of at most seven bytes held in the low bytes of `bytes` (the bytes
/// above it zero): its bytes' low seven bits, the first byte's lowest.
fn gather(bytes: u64) -> u64 {
    let x = bytes & 0x7f7f_7f7f_7f7f_7f7f;
    let x = (x & 0x007f_007f_007f_007f) | (x & 0x7f00_7f00_7f00_7f00) >> 1;
    let x = (x & 0x0000_3fff_0000_3fff) | (x & 0x3fff_0000_3fff_0000) >> 2;
    (x & 0x0000_0000_0fff_ffff) | (x & 0x0fff_ffff_0000_0000) >> 4
}

impl BlockOffsets {
    /// The block each of `index`'s entries points to; `None` when they are not one per
    /// restart point, one does not decode, or their blocks are not back to back.
    pub(crate) fn new(index: &Block) -> Option<BlockOffsets> {
        let n = index.num_restarts();
        let mut starts = Vec::with_capacity(n + 1);
        for i in 0..n {
            add(&mut starts, &index.restart_entry(i)?)?;
        }
        Some(BlockOffsets {
            starts: starts.into(),
        })
    }

    /// The block entry `entry` points to; `None` past the last entry.
    pub(crate) fn block(&self, entry: usize) -> Option<BlockHandle> {
        let offset = *self.starts.get(entry)?;
        let end = *self.starts.get(entry + 1)?;
        Some(BlockHandle {
            offset,
            size: end - offset - BLOCK_TRAILER_LEN as u64,
        })
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// The word-at-a-time decoder reads what the byte-by-byte one reads, wherever the
        /// handle ends and whatever follows it; and fails where it fails.
        #[test]
        fn handles_decode_a_word_at_a_time_as_byte_by_byte(
            offset in prop_oneof![0u64..1 << 14, 0u64..1 << 35, any::<u64>()],
            size in prop_oneof![0u64..1 << 14, 0u64..1 << 28, any::<u64>()],
            after in prop::collection::vec(any::<u8>(), 0..10),
            cut in 0usize..4,
        ) {
            let mut encoded = Vec::new();
            BlockHandle { offset, size }.encode_to(&mut encoded);
            // A value cut short (a corrupt entry) must fail as the byte-by-byte read does.
            let value_len = encoded.len().saturating_sub(cut);
            encoded.extend_from_slice(&after);
            let entry = RestartEntry {
                key: b"",
                value: &encoded[..value_len],
                from_value: &encoded,
                alone: true,
            };
            let slow = BlockHandle::decode_from(&mut &encoded[..value_len]);
            prop_assert_eq!(decode_handle(&entry), slow);
        }

        /// So does it for any bytes: varints with needless zero groups, too long, cut short.
        #[test]
        fn arbitrary_values_decode_as_byte_by_byte(
            bytes in prop::collection::vec(prop_oneof![Just(0u8), Just(0x7f), Just(0x80),
                Just(0x81), Just(0xff), any::<u8>()], 0..20),
            value_len in 0usize..20,
        ) {
            let value = &bytes[..value_len.min(bytes.len())];
            let entry = RestartEntry { key: b"", value, from_value: &bytes, alone: true };
            prop_assert_eq!(decode_handle(&entry), BlockHandle::decode_from(&mut &value[..]));
        }
    }
}
