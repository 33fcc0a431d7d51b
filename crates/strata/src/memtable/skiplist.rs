//! A concurrent skiplist of internal-key entries whose nodes live in an [`Arena`].
//!
//! Thread safety: any number of readers (lookups, iterators) run lock-free alongside one writer.
//! Writers are serialised by the writer mutex ([`SkipList::writer`]); the DB's write path is
//! already single-writer, so the lock is uncontended and taken once per write group. Nodes are
//! never removed or modified once linked.
//!
//! Publication protocol: the writer fully initialises a node (header, key, value, its whole
//! tower of links) before making it reachable, then links it in from level 0 upwards with
//! `Release` stores; readers follow links with `Acquire` loads, so a reader that reaches a node
//! sees all of its bytes. `max_height` is a hint read `Relaxed`: a reader that sees a new height
//! before the head links at that height finds null there and simply descends.
//!
//! Node layout (one arena allocation, 8-byte aligned; a node pointer points at the header):
//!
//! ```text
//! link[h-1] .. link[1] link[0] | key_len: u32 | value_len: u32 | internal key | value
//! ^ allocation start           ^ node pointer
//! ```
//!
//! `link[i]` is an `AtomicPtr` to the next node at level `i` (null at the end) and sits just
//! below the header, so the level-0 link, the lengths and the start of the key share a cache
//! line. The internal key is `user_key ++ fixed64_le(sequence << 8 | type)`; lengths are fixed
//! `u32`s (native endian, memory only) so a comparison reads them without varint decoding. Entries
//! order by [`InternalKeyComparator`] on the internal key. The head node has the full height and
//! an empty key; it is never compared.

use std::cmp::Ordering;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering as AtomicOrdering};
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};

use super::arena::Arena;
use crate::util::internal_key::{self, InternalKeyComparator, TRAILER_LEN};

/// Tallest tower; with branching 4 it comfortably indexes 4^12 = 16M entries.
pub(crate) const MAX_HEIGHT: usize = 12;

/// Size of one link of a tower.
const LINK_LEN: usize = std::mem::size_of::<AtomicPtr<u8>>();

/// `key_len: u32` then `value_len: u32`.
const HEADER_LEN: usize = 8;

/// Address of a node's header in the list's arena.
///
/// Invariant: a `Node` is only made by [`SkipList::new`] (the head) and [`Writer::insert`] after
/// the node is fully initialised, or loaded from a link of a node of the same list, so it always
/// names a complete node of a live list. The type is private to this module to keep it so.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Node(NonNull<u8>);

// SAFETY: a `Node` is only an address. Dereferencing it happens in this module under the
// publication protocol above (immutable bytes published with Release/Acquire), which is what
// makes reading a node from any thread sound; the address itself carries no thread affinity.
unsafe impl Send for Node {}
// SAFETY: as for `Send`; `&Node` only gives access to the address.
unsafe impl Sync for Node {}

/// The position a search for a key leaves at each level: `prev[i]` is the last node at level `i`
/// that sorts before the key (or the head).
type Splice = [Node; MAX_HEIGHT];

/// A search key: an internal key taken apart, so comparisons need no trailer decoding.
#[derive(Clone, Copy)]
struct Target<'a> {
    user_key: &'a [u8],
    trailer: u64,
}

impl<'a> Target<'a> {
    fn from_internal_key(key: &'a [u8]) -> Target<'a> {
        Target {
            user_key: internal_key::user_key(key),
            trailer: internal_key::trailer(key),
        }
    }
}

/// An ordered set of internal-key entries. See the module docs for the contract.
pub(crate) struct SkipList {
    icmp: InternalKeyComparator,
    head: Node,
    /// Height of the tallest tower linked so far (1..=MAX_HEIGHT).
    max_height: AtomicUsize,
    /// What every insert writes, kept off the cache lines readers load on every search.
    writer_side: WriterSide,
}

#[repr(align(128))]
struct WriterSide {
    writer: Mutex<WriterState>,
    len: AtomicUsize,
    /// Copy of the arena's usage, published for readers after every insert.
    memory_usage: AtomicUsize,
}

/// Everything only the writer touches.
struct WriterState {
    arena: Arena,
    rng: u64,
    /// Where the previous insert went: `splice[i]` is the last node at level `i` at or before the
    /// node inserted last. Sequential inserts land right after it and skip the search.
    splice: Splice,
}

impl SkipList {
    pub(crate) fn new(icmp: InternalKeyComparator) -> SkipList {
        let mut arena = Arena::new();
        let raw = arena.allocate(MAX_HEIGHT * LINK_LEN + HEADER_LEN);
        // SAFETY: the allocation holds MAX_HEIGHT links followed by a header; all of it is
        // written here before the head is used, and nothing else refers to it yet.
        let head = unsafe {
            let node = raw.add(MAX_HEIGHT * LINK_LEN);
            write_node_header(node, 0, 0);
            for level in 0..MAX_HEIGHT {
                link_ptr(node, level).write(AtomicPtr::new(ptr::null_mut()));
            }
            Node(node)
        };
        let memory_usage = arena.memory_usage();
        SkipList {
            icmp,
            head,
            max_height: AtomicUsize::new(1),
            writer_side: WriterSide {
                writer: Mutex::new(WriterState {
                    arena,
                    rng: 0x9e37_79b9_7f4a_7c15,
                    splice: [head; MAX_HEIGHT],
                }),
                len: AtomicUsize::new(0),
                memory_usage: AtomicUsize::new(memory_usage),
            },
        }
    }

    pub(crate) fn comparator(&self) -> &InternalKeyComparator {
        &self.icmp
    }

    /// Takes the writer lock. Blocks while another writer holds it.
    pub(crate) fn writer(&self) -> Writer<'_> {
        Writer {
            list: self,
            state: self.writer_side.writer.lock(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.writer_side.len.load(AtomicOrdering::Relaxed)
    }

    /// Bytes the arena obtained from the system.
    pub(crate) fn memory_usage(&self) -> usize {
        self.writer_side.memory_usage.load(AtomicOrdering::Relaxed)
    }

    /// The first entry `>=` the internal key `user_key ++ trailer`, as `(internal key, value)`.
    pub(crate) fn find_entry(&self, user_key: &[u8], trailer: u64) -> Option<(&[u8], &[u8])> {
        let (_, found) = self.search(Target { user_key, trailer }, None);
        found.map(|node| (self.key(node), self.value(node)))
    }

    // ---- node access -------------------------------------------------------------------------

    /// The internal key of `node` (empty for the head).
    #[inline]
    fn key(&self, node: Node) -> &[u8] {
        // SAFETY: by the `Node` invariant the header and `key_len` key bytes were written before
        // the node became reachable and never change; the arena (owned by `self`) keeps them
        // alive for the borrow of `self`.
        unsafe {
            let key_len = node.0.cast::<u32>().read() as usize;
            std::slice::from_raw_parts(node.0.as_ptr().add(HEADER_LEN), key_len)
        }
    }

    /// The value of `node`.
    #[inline]
    fn value(&self, node: Node) -> &[u8] {
        // SAFETY: as in `key`; the value follows the key and is `value_len` bytes long.
        unsafe {
            let key_len = node.0.cast::<u32>().read() as usize;
            let value_len = node.0.cast::<u32>().add(1).read() as usize;
            let start = node.0.as_ptr().add(HEADER_LEN + key_len);
            std::slice::from_raw_parts(start, value_len)
        }
    }

    /// The node after `node` at `level`.
    ///
    /// # Safety
    /// `node`'s tower must be taller than `level`: it is the head, or it was reached through a
    /// link at `level` or above, or it was inserted with a height above `level`.
    #[inline]
    unsafe fn next(&self, node: Node, level: usize) -> Option<Node> {
        // SAFETY: the caller guarantees the link exists; it was initialised before the node was
        // published. Acquire pairs with the Release store that linked the successor in.
        let next = unsafe { (*link_ptr(node.0, level)).load(AtomicOrdering::Acquire) };
        NonNull::new(next).map(Node)
    }

    /// Orders `node` against `target` (the head is never passed here).
    #[inline]
    fn compare(&self, node: Node, target: Target<'_>) -> Ordering {
        let key = self.key(node);
        self.icmp
            .compare_user(internal_key::user_key(key), target.user_key)
            .then_with(|| target.trailer.cmp(&internal_key::trailer(key)))
    }

    // ---- searches ----------------------------------------------------------------------------

    /// Descends from the top: returns the last node before `target` (maybe the head) and the
    /// first node `>= target`, recording the level-by-level predecessors in `splice` if given.
    #[inline]
    fn search(&self, target: Target<'_>, mut splice: Option<&mut Splice>) -> (Node, Option<Node>) {
        let mut x = self.head;
        let mut level = self.max_height.load(AtomicOrdering::Relaxed) - 1;
        // The node found not-less at the level above: equal to `next` often, no need to compare
        // it again.
        let mut known_not_less: Option<Node> = None;
        loop {
            // SAFETY: `x` is the head or was reached through a link at `level` or above.
            let next = unsafe { self.next(x, level) };
            match next {
                Some(n) if next != known_not_less && self.compare(n, target) == Ordering::Less => {
                    x = n;
                }
                _ => {
                    if let Some(splice) = splice.as_deref_mut() {
                        splice[level] = x;
                    }
                    if level == 0 {
                        return (x, next);
                    }
                    known_not_less = next;
                    level -= 1;
                }
            }
        }
    }

    /// The last node, or the head when the list is empty.
    fn last(&self) -> Node {
        let mut x = self.head;
        let mut level = self.max_height.load(AtomicOrdering::Relaxed) - 1;
        loop {
            // SAFETY: `x` is the head or was reached through a link at `level` or above.
            match unsafe { self.next(x, level) } {
                Some(n) => x = n,
                None if level == 0 => return x,
                None => level -= 1,
            }
        }
    }
}

/// Exclusive right to insert, held while the guard lives.
pub(crate) struct Writer<'a> {
    list: &'a SkipList,
    state: MutexGuard<'a, WriterState>,
}

impl Writer<'_> {
    /// Inserts the entry `user_key ++ trailer -> value`.
    ///
    /// Panics if the internal key or the value is 4 GiB or longer: LevelDB's formats (write
    /// batch, blocks) cannot represent them, so the DB never passes one.
    pub(crate) fn insert(&mut self, user_key: &[u8], trailer: u64, value: &[u8]) {
        let list = self.list;
        let state = &mut *self.state;
        let key_len = user_key.len() + TRAILER_LEN;
        assert!(
            u32::try_from(key_len).is_ok() && u32::try_from(value.len()).is_ok(),
            "memtable entry too large: key {} bytes, value {} bytes",
            user_key.len(),
            value.len()
        );
        let target = Target { user_key, trailer };

        // Fast path: the key goes right after the previous insert (sequential keys). If it fits
        // between splice[0] and its successor it fits at every level, because splice[i] is at or
        // before splice[0] and its successor at level i at or after the level-0 successor.
        let after_prev = {
            let prev = state.splice[0];
            prev == list.head || list.compare(prev, target) == Ordering::Less
        };
        let fits = after_prev && {
            // SAFETY: splice[0] is the head or a node, and every tower has level 0.
            let next = unsafe { list.next(state.splice[0], 0) };
            next.is_none_or(|next| list.compare(next, target) != Ordering::Less)
        };
        if !fits {
            list.search(target, Some(&mut state.splice));
        }

        let height = random_height(&mut state.rng);
        if height > list.max_height.load(AtomicOrdering::Relaxed) {
            // splice[i] for the new levels is already the head: nothing has been linked there.
            list.max_height.store(height, AtomicOrdering::Relaxed);
        }

        let tower_len = height * LINK_LEN;
        let raw = state
            .arena
            .allocate(tower_len + HEADER_LEN + key_len + value.len());
        // SAFETY: `raw` holds `tower_len + HEADER_LEN + key_len + value_len` fresh bytes no one
        // else can see yet. The node is written completely, its links pointing at the current
        // successors (each `splice[i]` has a tower taller than `i`, see `WriterState::splice`).
        let node = unsafe {
            let node = raw.add(tower_len);
            write_node_header(node, key_len as u32, value.len() as u32);
            let key = node.as_ptr().add(HEADER_LEN);
            ptr::copy_nonoverlapping(user_key.as_ptr(), key, user_key.len());
            let trailer_bytes = trailer.to_le_bytes();
            ptr::copy_nonoverlapping(trailer_bytes.as_ptr(), key.add(user_key.len()), TRAILER_LEN);
            ptr::copy_nonoverlapping(value.as_ptr(), key.add(key_len), value.len());
            for level in 0..height {
                let next = list.next(state.splice[level], level);
                let next = next.map_or(ptr::null_mut(), |n| n.0.as_ptr());
                link_ptr(node, level).write(AtomicPtr::new(next));
            }
            Node(node)
        };
        for level in 0..height {
            // SAFETY: splice[level]'s tower is taller than `level`. The Release store publishes
            // the node initialised above.
            unsafe {
                (*link_ptr(state.splice[level].0, level))
                    .store(node.0.as_ptr(), AtomicOrdering::Release);
            }
            state.splice[level] = node;
        }

        // Only this (lock-holding) writer stores these, so a load and a store suffice.
        let stats = &list.writer_side;
        let len = stats.len.load(AtomicOrdering::Relaxed);
        stats.len.store(len + 1, AtomicOrdering::Relaxed);
        stats
            .memory_usage
            .store(state.arena.memory_usage(), AtomicOrdering::Relaxed);
    }
}

/// Writes a node's header.
///
/// # Safety
/// `node` must point at `HEADER_LEN` writable, 4-aligned bytes.
unsafe fn write_node_header(node: NonNull<u8>, key_len: u32, value_len: u32) {
    // SAFETY: guaranteed by the caller.
    unsafe {
        node.cast::<u32>().write(key_len);
        node.cast::<u32>().add(1).write(value_len);
    }
}

/// Address of link `level` of the node at `node`.
///
/// # Safety
/// The node's tower must be taller than `level` (the link lies inside its allocation).
#[inline]
unsafe fn link_ptr(node: NonNull<u8>, level: usize) -> *mut AtomicPtr<u8> {
    // SAFETY: the tower lies directly below the header, link `level` at `(level + 1)` links down,
    // inside the node's allocation by the caller's guarantee; it is 8-aligned because the
    // allocation and the tower length are.
    unsafe {
        node.as_ptr()
            .sub((level + 1) * LINK_LEN)
            .cast::<AtomicPtr<u8>>()
    }
}

/// A height in `1..=MAX_HEIGHT`, each level kept with probability 1/4 (xorshift64*).
#[inline]
fn random_height(rng: &mut u64) -> usize {
    let mut x = *rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *rng = x;
    let bits = (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32;
    // Two zero bits per extra level: probability 1/4 each.
    (1 + bits.trailing_zeros() as usize / 2).min(MAX_HEIGHT)
}

/// A cursor over a skiplist; holds the list alive.
pub(crate) struct Iter {
    list: Arc<SkipList>,
    /// Current node; `None` when not positioned. Never the head.
    node: Option<Node>,
}

impl Iter {
    pub(crate) fn new(list: Arc<SkipList>) -> Iter {
        Iter { list, node: None }
    }

    pub(crate) fn valid(&self) -> bool {
        self.node.is_some()
    }

    /// Internal key of the current entry; empty when not positioned.
    pub(crate) fn key(&self) -> &[u8] {
        self.node.map_or(&[], |node| self.list.key(node))
    }

    /// Value of the current entry; empty when not positioned.
    pub(crate) fn value(&self) -> &[u8] {
        self.node.map_or(&[], |node| self.list.value(node))
    }

    pub(crate) fn next(&mut self) {
        if let Some(node) = self.node {
            // SAFETY: every node has level 0.
            self.node = unsafe { self.list.next(node, 0) };
        }
    }

    /// Moves to the entry before the current one, searching from the top for it.
    pub(crate) fn prev(&mut self) {
        if let Some(node) = self.node {
            let target = Target::from_internal_key(self.list.key(node));
            let (before, _) = self.list.search(target, None);
            self.node = self.non_head(before);
        }
    }

    /// Positions at the first entry whose internal key is `>= target`.
    pub(crate) fn seek(&mut self, target: &[u8]) {
        let (_, found) = self.list.search(Target::from_internal_key(target), None);
        self.node = found;
    }

    pub(crate) fn seek_to_first(&mut self) {
        // SAFETY: the head has every level.
        self.node = unsafe { self.list.next(self.list.head, 0) };
    }

    pub(crate) fn seek_to_last(&mut self) {
        self.node = self.non_head(self.list.last());
    }

    fn non_head(&self, node: Node) -> Option<Node> {
        (node != self.list.head).then_some(node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::comparator::BytewiseComparator;
    use crate::util::internal_key::{pack_trailer, ValueType};

    fn list() -> Arc<SkipList> {
        Arc::new(SkipList::new(InternalKeyComparator::new(
            BytewiseComparator::shared(),
        )))
    }

    fn collect(list: &Arc<SkipList>) -> Vec<Vec<u8>> {
        let mut it = Iter::new(list.clone());
        let mut out = Vec::new();
        it.seek_to_first();
        while it.valid() {
            out.push(it.key().to_vec());
            it.next();
        }
        out
    }

    #[test]
    fn heights_follow_branching_four() {
        let mut rng = 1;
        let mut counts = [0usize; MAX_HEIGHT + 1];
        let n = 1 << 20;
        for _ in 0..n {
            counts[random_height(&mut rng)] += 1;
        }
        assert_eq!(counts[0], 0);
        // P(height >= h) = 4^-(h-1); check the first levels within a few percent.
        let mut at_least = n;
        for (h, expected_share) in [(1usize, 1.0f64), (2, 0.25), (3, 0.0625), (4, 0.015625)] {
            let observed = at_least as f64 / n as f64;
            assert!(
                (observed - expected_share).abs() < expected_share * 0.05,
                "height >= {h}: {observed} vs {expected_share}"
            );
            at_least -= counts[h];
        }
    }

    #[test]
    fn sequential_and_reverse_inserts_both_sort() {
        let list = list();
        {
            let mut w = list.writer();
            for i in 0..500u32 {
                w.insert(&i.to_be_bytes(), pack_trailer(1, ValueType::Value), b"v");
            }
            for i in (500..1000u32).rev() {
                w.insert(&i.to_be_bytes(), pack_trailer(1, ValueType::Value), b"v");
            }
            // Interleave: forces the search path after the fast path was valid.
            for i in 0..1000u32 {
                w.insert(&i.to_be_bytes(), pack_trailer(0, ValueType::Value), b"w");
            }
        }
        let keys = collect(&list);
        assert_eq!(keys.len(), 2000);
        assert_eq!(list.len(), 2000);
        let icmp = list.comparator().clone();
        assert!(keys
            .windows(2)
            .all(|w| icmp.compare(&w[0], &w[1]) == Ordering::Less));
        // Seq 1 sorts before seq 0 for the same user key.
        assert_eq!(
            keys[0],
            internal_key::internal_key(&0u32.to_be_bytes(), 1, ValueType::Value)
        );
        assert_eq!(
            keys[1],
            internal_key::internal_key(&0u32.to_be_bytes(), 0, ValueType::Value)
        );
    }

    #[test]
    fn find_entry_and_last_on_empty_list() {
        let list = list();
        assert!(list.find_entry(b"", 0).is_none());
        let mut it = Iter::new(list.clone());
        it.seek_to_last();
        assert!(!it.valid());
        it.seek_to_first();
        assert!(!it.valid());
        assert_eq!(it.key(), b"");
        it.next();
        it.prev();
        assert!(!it.valid());
    }
}
