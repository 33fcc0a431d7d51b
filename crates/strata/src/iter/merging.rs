//! The merging iterator: one sorted view over many sorted children (memtable, immutable
//! memtable, level-0 tables, one iterator per deeper level).
//!
//! Contract:
//! - Yields the union of the children's entries in internal-key order, forward and backward,
//!   and may switch direction at any point. Entries with equal keys in several children are all
//!   yielded, ordered by child index (lower first); each child must itself be sorted with
//!   distinct keys. So the iterator is a plain cursor over one totally ordered sequence.
//! - A child that fails (becomes invalid with an error status) stops the whole merge: the
//!   iterator becomes invalid rather than carry on with a hole in the data, which could bring
//!   back values a failed child's tombstones hide. `status()` reports the first failed child in
//!   child order. The next seek tries every child again.
//! - [`InternalIterator::skip_older_sources`] is the one exception to that: it moves some
//!   children forward past entries the caller knows to be hidden, which are then never
//!   yielded. Moving backward afterwards repositions every child, as any change of direction
//!   does, so the entries skipped come back on the way back.
//! - Thread safety: like every [`InternalIterator`], owned by one thread at a time.
//!
//! How: the valid children sit in a binary heap ordered by `(key, child index)`, smallest first
//! when moving forward and largest first when moving backward. The current entry is the top of
//! the heap; a step moves the top child and sifts it down, which stops after two comparisons
//! while the same child keeps supplying the next entries (the common case for an LSM, where most
//! data lives in the last level). On a change of direction every other child is repositioned
//! just past the current entry on the new side and the heap is rebuilt.
//!
//! Why a heap and not a linear scan: the ignored micro-benchmark `bench_heap_vs_linear` below
//! (run with `cargo test -p strata-kv --lib bench_heap_vs_linear -- --ignored --nocapture`) steps
//! both through 200,000 entries spread over 2..32 children, either uniformly at random or
//! skewed (90% in one child, as in an LSM whose last level holds most data). Measured in the
//! test profile (opt-level 1) on a shared 2-core machine, ns per `next`, heap vs linear, first
//! of two runs (the second agreed within about 30%):
//!
//! ```text
//! children    uniform       skewed
//!        2    29 vs  23     15 vs  38
//!        4    81 vs 103     40 vs  63
//!        8   163 vs 237     22 vs 184
//!       15   184 vs 483     28 vs 369
//!       32   277 vs 915     53 vs 742
//! ```
//!
//! At two children the two are within noise of each other; from four on the heap wins, by 2.5x
//! (uniform) to over 10x (skewed) at the typical ~15 children. So the heap is used for every
//! count. A tournament tree would save the sibling comparison at each level but could not stop
//! early, and the early stop is what the skewed, realistic case lives on.

use std::cmp::Ordering;

use super::InternalIterator;
use crate::error::Result;
use crate::util::internal_key::InternalKeyComparator;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Forward,
    Reverse,
}

/// A sorted union of child iterators over internal keys.
pub(crate) struct MergingIterator {
    icmp: InternalKeyComparator,
    children: Vec<Box<dyn InternalIterator>>,
    /// Indices of the valid children as a binary heap; `heap[0]` is the current child.
    /// Forward: least `(key, index)` first. Reverse: greatest first. Empty when not valid.
    heap: Vec<usize>,
    direction: Direction,
    /// Copy of the current key during a change of direction (reused, so no allocation per switch).
    scratch: Vec<u8>,
}

/// A merged view of `children`: the child itself when there is only one.
pub(crate) fn merging_iterator(
    icmp: InternalKeyComparator,
    mut children: Vec<Box<dyn InternalIterator>>,
) -> Box<dyn InternalIterator> {
    if children.len() == 1 {
        if let Some(only) = children.pop() {
            return only;
        }
    }
    Box::new(MergingIterator::new(icmp, children))
}

impl MergingIterator {
    pub(crate) fn new(
        icmp: InternalKeyComparator,
        children: Vec<Box<dyn InternalIterator>>,
    ) -> MergingIterator {
        let heap = Vec::with_capacity(children.len());
        MergingIterator {
            icmp,
            children,
            heap,
            direction: Direction::Forward,
            scratch: Vec::new(),
        }
    }

    /// True when child `a` comes before child `b` in the current direction.
    #[inline]
    fn before(&self, a: usize, b: usize) -> bool {
        let order = self
            .icmp
            .compare(self.children[a].key(), self.children[b].key())
            .then(a.cmp(&b));
        match self.direction {
            Direction::Forward => order == Ordering::Less,
            Direction::Reverse => order == Ordering::Greater,
        }
    }

    fn sift_down(&mut self, mut at: usize) {
        let len = self.heap.len();
        loop {
            let left = 2 * at + 1;
            if left >= len {
                return;
            }
            let right = left + 1;
            let mut first = left;
            if right < len && self.before(self.heap[right], self.heap[left]) {
                first = right;
            }
            if !self.before(self.heap[first], self.heap[at]) {
                return;
            }
            self.heap.swap(at, first);
            at = first;
        }
    }

    /// Rebuilds the heap from every valid child; empties it if any child has failed.
    fn rebuild(&mut self) {
        self.heap.clear();
        for (index, child) in self.children.iter().enumerate() {
            if child.valid() {
                self.heap.push(index);
            } else if child.status().is_err() {
                self.heap.clear();
                return;
            }
        }
        for at in (0..self.heap.len() / 2).rev() {
            self.sift_down(at);
        }
    }

    /// Restores the heap after the top child moved.
    fn fix_top(&mut self) {
        let top = self.heap[0];
        if self.children[top].valid() {
            self.sift_down(0);
        } else if self.children[top].status().is_err() {
            self.heap.clear();
        } else {
            self.heap.swap_remove(0);
            if !self.heap.is_empty() {
                self.sift_down(0);
            }
        }
    }

    /// Repositions every child but the current one strictly after (`Forward`) or before
    /// (`Reverse`) the current entry in `(key, index)` order, then rebuilds the heap.
    fn change_direction(&mut self, direction: Direction) {
        let current = self.heap[0];
        self.scratch.clear();
        self.scratch.extend_from_slice(self.children[current].key());
        for (index, child) in self.children.iter_mut().enumerate() {
            if index == current {
                continue;
            }
            child.seek(&self.scratch);
            if !child.valid() {
                if direction == Direction::Reverse && child.status().is_ok() {
                    child.seek_to_last();
                }
                continue;
            }
            // Equal keys in a lower-indexed child sort before the current entry.
            let equal_before =
                index < current && self.icmp.compare(child.key(), &self.scratch) == Ordering::Equal;
            match direction {
                Direction::Forward if equal_before => child.next(),
                Direction::Reverse if !equal_before => child.prev(),
                _ => {}
            }
        }
        self.direction = direction;
        self.rebuild();
    }
}

impl InternalIterator for MergingIterator {
    fn valid(&self) -> bool {
        !self.heap.is_empty()
    }

    fn seek_to_first(&mut self) {
        for child in &mut self.children {
            child.seek_to_first();
        }
        self.direction = Direction::Forward;
        self.rebuild();
    }

    fn seek_to_last(&mut self) {
        for child in &mut self.children {
            child.seek_to_last();
        }
        self.direction = Direction::Reverse;
        self.rebuild();
    }

    fn seek(&mut self, target: &[u8]) {
        for child in &mut self.children {
            child.seek(target);
        }
        self.direction = Direction::Forward;
        self.rebuild();
    }

    fn next(&mut self) {
        if self.direction != Direction::Forward && self.valid() {
            self.change_direction(Direction::Forward);
        }
        let Some(&top) = self.heap.first() else {
            return;
        };
        self.children[top].next();
        self.fix_top();
    }

    fn skip_older_sources(&mut self, first_child: usize, target: &[u8]) -> bool {
        if self.direction != Direction::Forward || self.heap.is_empty() {
            return false;
        }
        let mut moved = false;
        for child in self.children.iter_mut().skip(first_child) {
            if child.valid() && self.icmp.compare(child.key(), target) == Ordering::Less {
                child.seek(target);
                moved = true;
            }
        }
        if moved {
            self.rebuild();
        }
        moved
    }

    fn prev(&mut self) {
        if self.direction != Direction::Reverse && self.valid() {
            self.change_direction(Direction::Reverse);
        }
        let Some(&top) = self.heap.first() else {
            return;
        };
        self.children[top].prev();
        self.fix_top();
    }

    fn key(&self) -> &[u8] {
        self.heap
            .first()
            .map_or(&[], |&top| self.children[top].key())
    }

    fn value(&self) -> &[u8] {
        self.heap
            .first()
            .map_or(&[], |&top| self.children[top].value())
    }

    fn status(&self) -> Result<()> {
        self.children.iter().try_for_each(|child| child.status())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};

    use super::*;
    use crate::error::Error;
    use crate::iter::vec_iter::VecIter;
    use crate::util::comparator::BytewiseComparator;
    use crate::util::internal_key::{internal_key, ValueType};

    fn icmp() -> InternalKeyComparator {
        InternalKeyComparator::new(BytewiseComparator::shared())
    }

    /// User keys chosen so that prefixes and high bytes meet.
    const USER_KEYS: [&[u8]; 6] = [b"", b"a", b"a\0", b"ab", b"b", b"\xff"];

    /// An internal key as `(user key index, sequence, is a value)`.
    type Spec = (usize, u64, bool);

    fn ikey((user, sequence, is_value): Spec) -> Vec<u8> {
        let t = if is_value {
            ValueType::Value
        } else {
            ValueType::Deletion
        };
        internal_key(USER_KEYS[user], sequence, t)
    }

    type Entries = Vec<(Vec<u8>, Vec<u8>)>;

    /// Children built from `specs` (sorted, distinct within a child) and the expected union:
    /// every entry, ordered by `(key, child index)`. Values name their child.
    fn build(specs: &[Vec<Spec>]) -> (Vec<Box<dyn InternalIterator>>, Entries) {
        let c = icmp();
        let mut union = Vec::new();
        let mut children: Vec<Box<dyn InternalIterator>> = Vec::new();
        for (index, child) in specs.iter().enumerate() {
            let mut entries: Entries = child
                .iter()
                .map(|&s| (ikey(s), format!("{index}:{s:?}").into_bytes()))
                .collect();
            entries.sort_by(|a, b| c.compare(&a.0, &b.0));
            entries.dedup_by(|a, b| c.compare(&a.0, &b.0) == Ordering::Equal);
            union.extend(entries.iter().map(|(k, v)| (k.clone(), index, v.clone())));
            children.push(Box::new(VecIter::new(c.clone(), entries)));
        }
        union.sort_by(|a, b| c.compare(&a.0, &b.0).then(a.1.cmp(&b.1)));
        (
            children,
            union.into_iter().map(|(k, _, v)| (k, v)).collect(),
        )
    }

    fn scan_forward(it: &mut dyn InternalIterator) -> Entries {
        let mut out = Vec::new();
        it.seek_to_first();
        while it.valid() {
            out.push((it.key().to_vec(), it.value().to_vec()));
            it.next();
        }
        out
    }

    fn scan_backward(it: &mut dyn InternalIterator) -> Entries {
        let mut out = Vec::new();
        it.seek_to_last();
        while it.valid() {
            out.push((it.key().to_vec(), it.value().to_vec()));
            it.prev();
        }
        out
    }

    #[derive(Debug, Clone)]
    enum Op {
        First,
        Last,
        Seek(Spec),
        Next,
        Prev,
    }

    fn spec() -> impl Strategy<Value = Spec> {
        (0..USER_KEYS.len(), 0..6u64, any::<bool>())
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            1 => Just(Op::First),
            1 => Just(Op::Last),
            2 => spec().prop_map(Op::Seek),
            4 => Just(Op::Next),
            4 => Just(Op::Prev),
        ]
    }

    fn children() -> impl Strategy<Value = Vec<Vec<Spec>>> {
        prop::collection::vec(prop::collection::vec(spec(), 0..14), 0..7)
    }

    proptest! {
        #[test]
        fn full_scans_yield_the_sorted_union(specs in children()) {
            let (children, union) = build(&specs);
            let mut it = MergingIterator::new(icmp(), children);
            prop_assert_eq!(scan_forward(&mut it), union.clone());
            let mut reversed = union;
            reversed.reverse();
            prop_assert_eq!(scan_backward(&mut it), reversed);
            prop_assert!(it.status().is_ok());
        }

        #[test]
        fn random_moves_match_a_cursor_over_the_union(
            specs in children(),
            ops in prop::collection::vec(op(), 1..60),
        ) {
            let c = icmp();
            let (children, union) = build(&specs);
            let mut it = MergingIterator::new(c.clone(), children);
            let mut at: Option<usize> = None;
            for op in ops {
                match op {
                    Op::First => {
                        it.seek_to_first();
                        at = (!union.is_empty()).then_some(0);
                    }
                    Op::Last => {
                        it.seek_to_last();
                        at = union.len().checked_sub(1);
                    }
                    Op::Seek(s) => {
                        let target = ikey(s);
                        it.seek(&target);
                        let p = union.partition_point(|(k, _)| c.compare(k, &target).is_lt());
                        at = (p < union.len()).then_some(p);
                    }
                    Op::Next => {
                        let Some(p) = at else { continue };
                        it.next();
                        at = Some(p + 1).filter(|&p| p < union.len());
                    }
                    Op::Prev => {
                        let Some(p) = at else { continue };
                        it.prev();
                        at = p.checked_sub(1);
                    }
                }
                match at {
                    None => prop_assert!(!it.valid(), "{:?}: expected the end", op),
                    Some(p) => {
                        prop_assert!(it.valid(), "{:?}: expected entry {}", op, p);
                        prop_assert_eq!(it.key(), &union[p].0[..]);
                        prop_assert_eq!(it.value(), &union[p].1[..]);
                    }
                }
            }
            prop_assert!(it.status().is_ok());
        }
    }

    #[test]
    fn equal_keys_across_children_survive_direction_changes() {
        // Three children hold the same key; walk into the middle copy and turn around.
        let k = ikey((1, 5, true));
        let specs = vec![vec![(1, 5, true), (4, 1, true)]; 3];
        let (children, union) = build(&specs);
        assert_eq!(union.len(), 6);
        let mut it = MergingIterator::new(icmp(), children);
        it.seek(&k);
        assert_eq!(it.value(), b"0:(1, 5, true)");
        it.next();
        assert_eq!(it.value(), b"1:(1, 5, true)");
        it.prev();
        assert_eq!(it.value(), b"0:(1, 5, true)");
        it.next();
        it.next();
        assert_eq!(it.value(), b"2:(1, 5, true)");
        it.prev();
        assert_eq!(it.value(), b"1:(1, 5, true)");
        it.prev();
        it.prev();
        assert!(!it.valid());
    }

    #[test]
    fn zero_and_one_children() {
        let mut empty = merging_iterator(icmp(), Vec::new());
        empty.seek_to_first();
        assert!(!empty.valid());
        empty.seek_to_last();
        assert!(!empty.valid());
        assert_eq!(empty.key(), b"");
        let (children, union) = build(&[vec![(1, 1, true), (2, 1, false)]]);
        let mut only = merging_iterator(icmp(), children);
        assert_eq!(scan_forward(&mut *only), union);
    }

    #[test]
    fn a_failing_child_stops_the_merge_and_is_reported() {
        let c = icmp();
        let entries = |user: &[&[u8]]| -> Entries {
            user.iter()
                .map(|u| (internal_key(u, 1, ValueType::Value), u.to_vec()))
                .collect()
        };
        let children: Vec<Box<dyn InternalIterator>> = vec![
            Box::new(VecIter::new(c.clone(), entries(&[b"a", b"c", b"e"]))),
            Box::new(VecIter::new(c.clone(), entries(&[b"b", b"d", b"f"])).fail_at(1)),
        ];
        let mut it = MergingIterator::new(c, children);
        it.seek_to_first();
        let mut seen = Vec::new();
        while it.valid() {
            seen.push(it.value().to_vec());
            it.next();
        }
        // The second child fails as it steps from "b" onto "d": "c" is not yielded either.
        assert_eq!(seen, vec![b"a".to_vec(), b"b".to_vec()]);
        assert!(matches!(it.status(), Err(Error::Corruption(_))));
    }

    /// The simple alternative: scan every child for the smallest key after each step.
    struct LinearMerge {
        icmp: InternalKeyComparator,
        children: Vec<Box<dyn InternalIterator>>,
        current: Option<usize>,
    }

    impl LinearMerge {
        fn find_smallest(&mut self) {
            let mut best: Option<usize> = None;
            for (index, child) in self.children.iter().enumerate() {
                if !child.valid() {
                    continue;
                }
                best = match best {
                    Some(b)
                        if !self
                            .icmp
                            .compare(child.key(), self.children[b].key())
                            .is_lt() =>
                    {
                        Some(b)
                    }
                    _ => Some(index),
                };
            }
            self.current = best;
        }
    }

    fn bench_children(count: usize, skewed: bool, total: usize) -> Vec<Box<dyn InternalIterator>> {
        let c = icmp();
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let mut per_child = vec![Vec::new(); count];
        for i in 0..total {
            let child = if skewed && rng.gen_bool(0.9) {
                0
            } else {
                rng.gen_range(0..count)
            };
            let user = format!("key{i:010}");
            per_child[child].push((
                internal_key(user.as_bytes(), 1, ValueType::Value),
                vec![0; 16],
            ));
        }
        per_child
            .into_iter()
            .map(|e| Box::new(VecIter::new(c.clone(), e)) as Box<dyn InternalIterator>)
            .collect()
    }

    #[test]
    #[ignore = "micro-benchmark; run by hand (see the module docs)"]
    fn bench_heap_vs_linear() {
        const TOTAL: usize = 200_000;
        for skewed in [false, true] {
            for count in [2, 4, 8, 15, 32] {
                let mut heap_ns = f64::MAX;
                let mut linear_ns = f64::MAX;
                for _ in 0..3 {
                    let mut heap =
                        MergingIterator::new(icmp(), bench_children(count, skewed, TOTAL));
                    let start = Instant::now();
                    heap.seek_to_first();
                    let mut n = 0;
                    while heap.valid() {
                        n += 1;
                        heap.next();
                    }
                    assert_eq!(n, TOTAL);
                    heap_ns = heap_ns.min(start.elapsed().as_nanos() as f64 / TOTAL as f64);

                    let mut linear = LinearMerge {
                        icmp: icmp(),
                        children: bench_children(count, skewed, TOTAL),
                        current: None,
                    };
                    let start = Instant::now();
                    for child in &mut linear.children {
                        child.seek_to_first();
                    }
                    linear.find_smallest();
                    let mut n = 0;
                    while let Some(current) = linear.current {
                        n += 1;
                        linear.children[current].next();
                        linear.find_smallest();
                    }
                    assert_eq!(n, TOTAL);
                    linear_ns = linear_ns.min(start.elapsed().as_nanos() as f64 / TOTAL as f64);
                }
                println!(
                    "children {count:>2} skewed {skewed:>5}: heap {heap_ns:>6.1} ns/next, linear {linear_ns:>6.1} ns/next"
                );
            }
        }
    }
}
