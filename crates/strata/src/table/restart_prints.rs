//! Fingerprints of a block's restart keys: a binary search over one dense array of numbers
//! instead of the block's entries.
//!
//! Every point lookup that reaches a table first searches the table's index block. A binary
//! search of a block reads, per probe, a restart offset, an entry header and a key — three
//! places in a block that falls out of the CPU's caches when lookups spread over many tables.
//! For internal keys in the bytewise order, [`RestartPrints`] keeps one number per restart
//! point, made from its user key and a prefix most of the block's keys share (the one the
//! restart keys a quarter and three quarters of the way through share: an index block's last
//! key is often a short successor such as `1`, sharing nothing). The top byte is the key's
//! class — 0 below the prefix without starting with it, 1 starting with it, 2 above it — and
//! for class 1 the seven bytes after the prefix follow, big-endian, zero-padded past the key's
//! end. Where two numbers differ they order like their keys: across classes, because every
//! key starting with the prefix lies between the other two classes; within class 1, at the
//! first byte where they differ either both keys have a byte there and the smaller belongs to
//! the smaller key, or the smaller number's key has ended and is a prefix of the other (keys of
//! class 0 or 2 all get the same number, which claims nothing). So a search over the numbers
//! leaves only the restart points whose number equals the target's (usually none or one) for
//! the block to compare in full ([`Block::seek_point_within`]); the answers are exactly those
//! of the plain search.
//!
//! Layout: the numbers sit in groups of eight, one cache line each, beside an array of each
//! group's last number. A search finds its group in that array (an eighth of the numbers; it
//! stays in the CPU's caches across lookups) and then reads one line, where a binary search
//! over all the numbers would wait for a line from memory at each of its last few probes.
//!
//! Built from a table's index block (one pass over the restart points) once the table has
//! served a few lookups (`Table::index_prints`). A block with a restart entry that does not
//! decode gets none, so searching it reports the corruption as before; so do a block whose
//! prints go down somewhere (its keys are out of order: the numbers would place keys where
//! the block's own search does not go) and an order other than the bytewise one.

use super::block::Block;
use crate::util::internal_key::{user_key, TRAILER_LEN};

/// Prints per cache line: the search reads one group's line after the group tops.
const GROUP: usize = 8;

/// [`GROUP`] consecutive prints, on a cache line of their own.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Group([u64; GROUP]);

/// One number per restart point of a block; see the module documentation.
pub(crate) struct RestartPrints {
    /// The bytes every restart point's user key starts with.
    prefix: Box<[u8]>,
    /// Per restart point, the eight bytes of its user key after `prefix`, in groups of
    /// [`GROUP`]; the last group is padded with `u64::MAX`, above every print (whose top byte
    /// is at most 2).
    groups: Box<[Group]>,
    /// Per group, its last print (not padding): a search finds its group in this short array,
    /// which stays in the CPU's caches, and then reads one line of `groups`.
    tops: Box<[u64]>,
    /// The number of restart points.
    len: usize,
}

impl RestartPrints {
    /// The prints of `block`, whose keys are internal keys in the bytewise order; `None` for
    /// a block without restart points, with one that does not decode, or whose restart keys'
    /// prints go down.
    pub(crate) fn new(block: &Block) -> Option<RestartPrints> {
        let n = block.num_restarts();
        let user = |i| -> Option<&[u8]> {
            let key = block.restart_key(i).ok()?;
            (key.len() >= TRAILER_LEN).then(|| user_key(key))
        };
        let (a, b) = (user(n.checked_sub(1)? / 4)?, user(3 * (n - 1) / 4)?);
        let shared = a.iter().zip(b).take_while(|(a, b)| a == b).count();
        let prefix = &a[..shared];
        let prints = (0..n).map(|i| print(prefix, block.restart_entry(i)?.key));
        RestartPrints::from_prints(prefix.into(), n, prints)
    }

    /// Lays out `len` prints in groups; `None` if one of them is, or if one is below the one
    /// before.
    fn from_prints(
        prefix: Box<[u8]>,
        len: usize,
        mut prints: impl Iterator<Item = Option<u64>>,
    ) -> Option<RestartPrints> {
        let mut groups = Vec::with_capacity(len.div_ceil(GROUP));
        let mut tops = Vec::with_capacity(len.div_ceil(GROUP));
        let mut last = 0;
        for start in (0..len).step_by(GROUP) {
            let mut group = Group([u64::MAX; GROUP]);
            let filled = &mut group.0[..GROUP.min(len - start)];
            for slot in filled.iter_mut() {
                let print = prints.next()??;
                if print < last {
                    return None;
                }
                (*slot, last) = (print, print);
            }
            tops.extend(filled.last().copied());
            groups.push(group);
        }
        Some(RestartPrints {
            prefix,
            groups: groups.into(),
            tops: tops.into(),
            len,
        })
    }

    /// The restart points `[left, right]` among which lies the last one whose key is below
    /// `target` (an internal key), or which is the first one when none is.
    pub(crate) fn narrow(&self, target: &[u8]) -> (usize, usize) {
        let target = print(&self.prefix, target).unwrap_or(0);
        let below = self.below(target);
        let equal = (below..self.len)
            .take_while(|&i| self.groups[i / GROUP].0[i % GROUP] == target)
            .count();
        let left = below.saturating_sub(1);
        (left, (below + equal).saturating_sub(1).max(left))
    }

    /// How many restart keys are below `target` (an internal key), when the prints alone
    /// tell: `None` when a restart key's print equals the target's (only a full comparison
    /// orders those) or the target is shorter than a trailer.
    pub(crate) fn keys_below(&self, target: &[u8]) -> Option<usize> {
        let target = print(&self.prefix, target)?;
        let below = self.below(target);
        let tied = below < self.len && self.groups[below / GROUP].0[below % GROUP] == target;
        (!tied).then_some(below)
    }

    /// How many prints are below `target`: the first group whose top is not below it holds
    /// the first print that is not (every earlier group lies wholly below).
    fn below(&self, target: u64) -> usize {
        let group = self.tops.partition_point(|&top| top < target);
        match self.groups.get(group) {
            Some(Group(prints)) => group * GROUP + prints.iter().filter(|&&p| p < target).count(),
            None => self.len,
        }
    }
}

/// The number of `internal_key`'s user key (see the module documentation); `None` for a key
/// shorter than a trailer.
#[inline]
fn print(prefix: &[u8], internal_key: &[u8]) -> Option<u64> {
    let user = internal_key.len().checked_sub(TRAILER_LEN)?;
    if internal_key[..user].starts_with(prefix) {
        // The seven bytes after the prefix, read from the whole internal key (its trailer
        // leaves at least eight past the prefix), with those past the user key's end zeroed.
        let window = internal_key.get(prefix.len()..prefix.len() + 8)?;
        let seven = u64::from_be_bytes(window.try_into().ok()?) >> 8;
        let kept = (user - prefix.len()).min(7) * 8;
        let low56 = (1u64 << 56) - 1;
        Some(1 << 56 | seven & (low56 & !(low56 >> kept)))
    } else if internal_key[..user] < *prefix {
        Some(0)
    } else {
        Some(2 << 56)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use proptest::prelude::*;

    use super::*;
    use crate::iter::InternalIterator;
    use crate::table::block::KeyOrder;
    use crate::table::block_builder::BlockBuilder;
    use crate::table::block_offsets::BlockOffsets;
    use crate::table::format::{BlockHandle, BLOCK_TRAILER_LEN};
    use crate::util::comparator::BytewiseComparator;
    use crate::util::internal_key::{InternalKeyComparator, ValueType};

    fn internal(user: &[u8], sequence: u64) -> Vec<u8> {
        let mut key = user.to_vec();
        key.extend_from_slice(&((sequence << 8) | ValueType::Value as u64).to_le_bytes());
        key
    }

    fn block(keys: &[Vec<u8>], restart_interval: usize) -> Block {
        let mut builder = BlockBuilder::new(restart_interval);
        for (i, key) in keys.iter().enumerate() {
            builder.add(key, &i.to_le_bytes());
        }
        Block::new(builder.finish().to_vec(), 0).unwrap()
    }

    /// Sorted, distinct internal keys from user keys over a small alphabet (so keys share
    /// prefixes, end early and contain zero bytes), some with two sequence numbers; most start
    /// with 7, and a few at either end may not (as an index block's last key, a short
    /// successor, often does not share the others' prefix).
    fn sorted_keys() -> impl Strategy<Value = Vec<Vec<u8>>> {
        let users = prop::collection::btree_set(prop::collection::vec(0u8..4, 0..14), 1..80);
        let ends = prop::collection::btree_set(prop::collection::vec(0u8..9, 0..3), 0..3);
        (users, ends).prop_map(|(users, ends)| {
            let users: std::collections::BTreeSet<Vec<u8>> = users
                .into_iter()
                .map(|mut user| {
                    user.insert(0, 7);
                    user
                })
                .chain(ends.into_iter().filter(|end| end.first() != Some(&7)))
                .collect();
            let mut keys = Vec::new();
            for (i, user) in users.iter().enumerate() {
                if i % 3 == 0 {
                    keys.push(internal(user, 9));
                }
                keys.push(internal(user, 5));
            }
            keys
        })
    }

    proptest! {
        #[test]
        fn narrowed_point_lookups_answer_as_the_full_search_does(
            keys in sorted_keys(),
            targets in prop::collection::vec(
                (prop::collection::vec(0u8..9, 0..16), 0u64..12), 1..40),
            restart_interval in 1usize..4,
        ) {
            let order = KeyOrder::Internal(InternalKeyComparator::new(Arc::new(BytewiseComparator)));
            let block = block(&keys, restart_interval);
            let prints = RestartPrints::new(&block).unwrap();
            let probes = keys.iter().cloned().chain(targets.iter().map(|(u, s)| internal(u, *s)));
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for target in probes {
                // The last restart point whose key is below the target (or the first): the
                // narrowed range must hold it, or a lookup would start its scan past the key.
                let below = (0..block.num_restarts())
                    .rev()
                    .find(|&i| order.compare(block.restart_key(i).unwrap(), &target).is_lt())
                    .unwrap_or(0);
                let (left, right) = prints.narrow(&target);
                prop_assert!(left <= below && below <= right, "{:?} for {}", (left, right), below);
                let full = block.seek_point(&order, &target, &mut a).unwrap().map(<[u8]>::to_vec);
                let narrowed = block
                    .seek_point_within(&order, &target, &mut b, Some((left, right)))
                    .unwrap()
                    .map(<[u8]>::to_vec);
                prop_assert_eq!(&full, &narrowed, "target {:?}", target);
                prop_assert_eq!(&a, &b);
            }
        }
    }

    proptest! {
        /// Seeks narrowed by the prints, one after another on one iterator (so each also starts
        /// from where the last one left it), land where plain seeks land.
        #[test]
        fn narrowed_seeks_land_where_plain_seeks_do(
            keys in sorted_keys(),
            targets in prop::collection::vec(
                (prop::collection::vec(0u8..9, 0..16), 0u64..12), 1..40),
            restart_interval in 1usize..4,
        ) {
            let order = KeyOrder::Internal(InternalKeyComparator::new(Arc::new(BytewiseComparator)));
            let block = Arc::new(block(&keys, restart_interval));
            let prints = RestartPrints::new(&block).unwrap();
            let (mut plain, mut narrowed) = (block.iter(order.clone()), block.iter(order));
            let probes = keys.iter().cloned().chain(targets.iter().map(|(u, s)| internal(u, *s)));
            for target in probes {
                plain.seek(&target);
                narrowed.seek_within(&target, Some(prints.narrow(&target)));
                prop_assert_eq!(plain.valid(), narrowed.valid(), "target {:?}", target);
                if plain.valid() {
                    prop_assert_eq!(plain.key(), narrowed.key(), "target {:?}", target);
                }
            }
        }
    }

    /// An index block over `keys` (one entry per restart point, as tables write them) whose
    /// entries point to blocks of `sizes` laid back to back from offset 0, each with its
    /// trailer.
    fn index_block(keys: &[Vec<u8>], sizes: &[u64]) -> Arc<Block> {
        let mut builder = BlockBuilder::new(1);
        let mut offset = 0;
        for (key, &size) in keys.iter().zip(sizes.iter().cycle()) {
            builder.add(key, &encoded(offset, size));
            offset += size + BLOCK_TRAILER_LEN as u64;
        }
        Arc::new(Block::new(builder.finish().to_vec(), 0).unwrap())
    }

    /// The handle of a block at `offset` of `size` bytes, encoded as an index entry's value.
    fn encoded(offset: u64, size: u64) -> Vec<u8> {
        let mut handle = Vec::new();
        BlockHandle { offset, size }.encode_to(&mut handle);
        handle
    }

    /// The block a search of `index` finds for `target`.
    fn searched(index: &Block, target: &[u8]) -> Option<BlockHandle> {
        let order = KeyOrder::Internal(InternalKeyComparator::new(Arc::new(BytewiseComparator)));
        index
            .seek_point(&order, target, &mut Vec::new())
            .unwrap()
            .map(|mut value| BlockHandle::decode_from(&mut value).unwrap())
    }

    proptest! {
        /// Where the prints place a key alone, the block the offsets give is the one a search
        /// of the index block finds (or none past its last entry); ties are left to the search.
        #[test]
        fn placed_lookups_find_the_block_the_index_search_finds(
            keys in sorted_keys(),
            sizes in prop::collection::vec(1u64..5000, 1..5),
            targets in prop::collection::vec(
                (prop::collection::vec(0u8..9, 0..16), 0u64..12), 1..40),
        ) {
            let index = index_block(&keys, &sizes);
            let prints = RestartPrints::new(&index).unwrap();
            let offsets = BlockOffsets::new(&index).unwrap();
            let probes = keys.iter().cloned().chain(targets.iter().map(|(u, s)| internal(u, *s)));
            for target in probes {
                let Some(below) = prints.keys_below(&target) else { continue };
                prop_assert_eq!(offsets.block(below), searched(&index, &target), "target {:?}", target);
            }
        }
    }

    /// Restart keys out of order (a crafted index block whose checksum holds) get no prints,
    /// which would otherwise place a lookup where the search of the block does not go.
    #[test]
    fn restart_keys_out_of_order_get_no_prints() {
        let keys: Vec<Vec<u8>> = [&b"d"[..], b"a", b"b", b"e"]
            .iter()
            .map(|u| internal(u, 1))
            .collect();
        let index = index_block(&keys, &[10]);
        // The search ends at `e`, the fourth entry (after three blocks of 10 + 5 bytes).
        let found = searched(&index, &internal(b"c", 1));
        assert_eq!(found.map(|h| h.offset), Some(45));
        assert!(RestartPrints::new(&index).is_none());
    }

    /// An index entry whose value is not a handle leaves the block without offsets: lookups
    /// search it and report the corruption.
    #[test]
    fn an_undecodable_handle_leaves_no_offsets() {
        let mut builder = BlockBuilder::new(1);
        for user in [&b"a"[..], b"c", b"e", b"g"] {
            builder.add(&internal(user, 1), &[0x80u8]);
        }
        let index = Block::new(builder.finish().to_vec(), 0).unwrap();
        assert!(BlockOffsets::new(&index).is_none());
    }

    proptest! {
        /// Damage that leaves an index block with prints and offsets (a crafted table whose
        /// checksum holds) places no lookup where the block's own search does not go.
        #[test]
        fn placed_lookups_in_damaged_index_blocks_agree_with_the_search(
            keys in sorted_keys(),
            sizes in prop::collection::vec(1u64..5000, 1..5),
            flips in prop::collection::vec((any::<usize>(), any::<u8>()), 1..4),
            targets in prop::collection::vec(
                (prop::collection::vec(0u8..9, 0..16), 0u64..12), 1..40),
        ) {
            let order = KeyOrder::Internal(InternalKeyComparator::new(Arc::new(BytewiseComparator)));
            let mut data = Arc::try_unwrap(index_block(&keys, &sizes)).unwrap().into_data();
            for (at, x) in flips {
                let len = data.len();
                data[at % len] ^= x;
            }
            let Ok(index) = Block::new(data, 0) else { return Ok(()) };
            let (Some(prints), Some(offsets)) =
                (RestartPrints::new(&index), BlockOffsets::new(&index)) else { return Ok(()) };
            let mut scratch = Vec::new();
            for target in targets.iter().map(|(u, s)| internal(u, *s)) {
                let Some(below) = prints.keys_below(&target) else { continue };
                let searched = index
                    .seek_point(&order, &target, &mut scratch)
                    .map(|found| found.map(|mut v| BlockHandle::decode_from(&mut v)));
                prop_assert_eq!(searched.ok(), Some(offsets.block(below).map(Some)),
                    "target {:?}", target);
            }
        }
    }

    /// A byte between the last index entry and the restart array: the search reports it, so
    /// no offsets may place a lookup past the last entry.
    #[test]
    fn bytes_after_the_last_index_entry_leave_no_offsets() {
        let keys: Vec<Vec<u8>> = (0..4u8).map(|i| internal(&[b'k', i], 1)).collect();
        let mut data = Arc::try_unwrap(index_block(&keys, &[10]))
            .unwrap()
            .into_data();
        let restarts = data.len() - 4 - 4 * keys.len();
        data.insert(restarts, 0);
        let index = Block::new(data, 0).unwrap();
        assert!(index.restart_entry(3).is_some_and(|e| !e.alone));
        assert!(BlockOffsets::new(&index).is_none());
    }

    #[test]
    fn index_blocks_not_one_entry_per_restart_or_not_back_to_back_get_no_offsets() {
        let keys: Vec<Vec<u8>> = (0..6u8).map(|i| internal(&[b'k', i], 1)).collect();
        let index = index_block(&keys, &[10, 20]);
        let offsets = BlockOffsets::new(&index).unwrap();
        // Between the third and fourth keys: placed by the prints, in the fourth entry's block.
        let between = internal(&[b'k', 2, 5], 1);
        assert_eq!(
            RestartPrints::new(&index).unwrap().keys_below(&between),
            Some(3)
        );
        // Blocks of 10, 20 and 10 bytes, each with a 5-byte trailer, come before it.
        let fourth = BlockHandle {
            offset: 15 + 25 + 15,
            size: 20,
        };
        assert_eq!(offsets.block(3), Some(fourth));
        assert_eq!(offsets.block(6), None);
        // Two entries per restart point.
        let mut builder = BlockBuilder::new(2);
        let mut gapped = BlockBuilder::new(1);
        for (i, key) in keys.iter().enumerate() {
            builder.add(key, &encoded(15 * i as u64, 10));
            // A byte between each block's trailer and the next block.
            gapped.add(key, &encoded(16 * i as u64, 10));
        }
        let sparse = Arc::new(Block::new(builder.finish().to_vec(), 0).unwrap());
        assert!(BlockOffsets::new(&sparse).is_none());
        let gapped = Arc::new(Block::new(gapped.finish().to_vec(), 0).unwrap());
        assert!(BlockOffsets::new(&gapped).is_none());
        // As many restart points as entries, but the second restart point names the first
        // entry again: the second entry is no restart point.
        let mut data = Arc::try_unwrap(index_block(&keys[..2], &[10]))
            .unwrap()
            .into_data();
        let restarts = data.len() - 4 - 2 * 4;
        data[restarts + 4..restarts + 8].copy_from_slice(&0u32.to_le_bytes());
        let repeated = Block::new(data, 0).unwrap();
        assert_eq!(repeated.num_restarts(), 2);
        assert!(BlockOffsets::new(&repeated).is_none());
    }

    /// The search over groups answers as a binary search over the prints in one array.
    #[test]
    fn grouped_search_counts_the_prints_below_as_a_flat_search_does() {
        proptest!(|(mut prints in prop::collection::vec(0u64..40, 0..40), targets in prop::collection::vec(0u64..42, 1..20))| {
            prints.sort_unstable();
            let grouped = RestartPrints::from_prints(Box::default(), prints.len(), prints.iter().map(|&p| Some(p))).unwrap();
            for target in targets {
                prop_assert_eq!(grouped.below(target), prints.partition_point(|&p| p < target));
            }
        });
    }

    #[test]
    fn a_block_whose_restart_entry_does_not_decode_gets_no_prints() {
        let keys = [internal(b"a", 1), internal(b"b", 1)];
        let mut data = block(&keys, 1).into_data();
        // The first entry's shared-prefix length: a restart entry must share nothing.
        data[0] = 1;
        let damaged = Block::new(data, 0).unwrap();
        assert!(RestartPrints::new(&damaged).is_none());
        let short = block(&[b"abc".to_vec()], 1);
        assert!(
            RestartPrints::new(&short).is_none(),
            "a key shorter than a trailer"
        );
    }

    /// The print as the module documentation defines it, from a copy of the user key.
    fn print_by_definition(prefix: &[u8], user: &[u8]) -> u64 {
        let Some(rest) = user.strip_prefix(prefix) else {
            return if user < prefix { 0 } else { 2 << 56 };
        };
        let mut eight = [1, 0, 0, 0, 0, 0, 0, 0];
        let n = rest.len().min(7);
        eight[1..=n].copy_from_slice(&rest[..n]);
        u64::from_be_bytes(eight)
    }

    proptest! {
        /// `print`, which reads the internal key's bytes past the user key and masks them off,
        /// gives the number the definition does, whatever the trailer holds.
        #[test]
        fn prints_follow_their_definition(
            prefix in prop::collection::vec(prop_oneof![Just(0u8), Just(1u8), Just(0xffu8)], 0..5),
            user in prop::collection::vec(prop_oneof![Just(0u8), Just(1u8), Just(0xffu8)], 0..14),
            trailer in any::<[u8; 8]>(),
            share in any::<bool>(),
        ) {
            let user = if share { [&prefix[..], &user[..]].concat() } else { user };
            let key = [&user[..], &trailer[..]].concat();
            prop_assert_eq!(print(&prefix, &key), Some(print_by_definition(&prefix, &user)));
            for short in 0..TRAILER_LEN.min(key.len()) {
                prop_assert_eq!(print(&prefix, &key[..short]), None);
            }
        }
    }
}
