//! Range tombstones (format extension `range-deletes`): a deletion of every user key in
//! `[start, end)` at one sequence number, hiding every older entry of those keys.
//!
//! Where they live: a write batch records one as a tag-2 record (`write_batch.rs`); a memtable
//! keeps them beside its skiplist (`memtable/range_dels.rs`); a table keeps them in its
//! range-deletion block (`table/builder.rs`), one entry each:
//!
//! ```text
//! key   := internal key (start, sequence, type 3 = range deletion)
//! value := end (the user key just past the range; raw bytes, the entry's whole value)
//! ```
//!
//! in internal-key order (start ascending, then sequence descending), and the table's smallest
//! and largest keys cover them: its smallest is at most `(start, sequence, 3)` of its first
//! tombstone, its largest at least [`end_bound`]`(end)` of its last, a key that sorts before
//! every real entry of `end` (no entry of `end` is deleted). So a table's key range covers its
//! tombstones, and the levels' invariants (newer data above, level >= 1 tables disjoint) hold
//! for them as for entries.
//!
//! Readers merge the tombstones of a source into [`Fragments`] (`fragments.rs`): disjoint
//! ranges, each with the sequence numbers of the tombstones covering it, which answer "the
//! newest tombstone at or below a read's sequence that covers this key" by binary search.

mod fragments;

pub(crate) use fragments::{clip, Fragment, Fragments};

use std::cmp::Ordering;

use crate::error::{Error, Result};
use crate::util::internal_key::{
    internal_key, parse_internal_key, InternalKeyComparator, SequenceNumber, ValueType,
    MAX_SEQUENCE,
};

/// A deletion of the user keys `[start, end)` at `sequence`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RangeTombstone {
    pub(crate) start: Vec<u8>,
    pub(crate) end: Vec<u8>,
    pub(crate) sequence: SequenceNumber,
}

impl RangeTombstone {
    /// The key of this tombstone's entry in a range-deletion block, and the smallest key of a
    /// table that starts with it.
    pub(crate) fn entry_key(&self) -> Vec<u8> {
        internal_key(&self.start, self.sequence, ValueType::RangeDeletion)
    }

    /// Decodes an entry of a range-deletion block. Fails with a corruption (no location: the
    /// caller knows the file and block) when the key is not a range deletion's.
    pub(crate) fn from_entry(key: &[u8], value: &[u8]) -> Result<RangeTombstone> {
        match parse_internal_key(key) {
            Some(parsed) if parsed.value_type == ValueType::RangeDeletion => Ok(RangeTombstone {
                start: parsed.user_key.to_vec(),
                end: value.to_vec(),
                sequence: parsed.sequence,
            }),
            _ => Err(Error::corruption(format!(
                "range-deletion block entry with key '{}' is no range deletion",
                key.escape_ascii()
            ))),
        }
    }
}

/// The largest key of a table whose last tombstone ends at user key `end`: it sorts after
/// every key before `end` and before every entry of `end` (the highest trailer there is), so
/// it covers the tombstone without claiming `end`, which the tombstone does not delete.
pub(crate) fn end_bound(end: &[u8]) -> Vec<u8> {
    internal_key(end, MAX_SEQUENCE, ValueType::RangeDeletion)
}

/// Widens a table's key range `[smallest, largest]` (both empty while it has no entry) to
/// cover the tombstones of `fragments` (sorted, as [`Fragments`] holds them) it also holds.
pub(crate) fn cover(
    icmp: &InternalKeyComparator,
    smallest: &mut Vec<u8>,
    largest: &mut Vec<u8>,
    fragments: &[Fragment],
) {
    let (Some(first), Some(last)) = (fragments.first(), fragments.last()) else {
        return;
    };
    // The newest tombstone of the first fragment has the smallest entry key.
    let newest = first.sequences.first().copied().unwrap_or(0);
    let low = internal_key(&first.start, newest, ValueType::RangeDeletion);
    if smallest.is_empty() || icmp.compare(&low, smallest) == Ordering::Less {
        *smallest = low;
    }
    let high = end_bound(&last.end);
    if largest.is_empty() || icmp.compare(&high, largest) == Ordering::Greater {
        *largest = high;
    }
}

#[cfg(test)]
mod tests;
