//! A test iterator over an owned, sorted vector of entries.
//!
//! Contract: [`VecIter`] behaves like any [`InternalIterator`]. Entries are sorted on
//! construction by the given order (internal keys or plain user keys); entries with equal keys
//! keep their given order. [`VecIter::fail_at`] makes the iterator fail with a corruption error
//! whenever it would land on a chosen entry, to exercise error paths of the iterators built on
//! top of it. Only built for tests.

use std::cmp::Ordering;
use std::sync::Arc;

use super::InternalIterator;
use crate::error::{Error, Result};
use crate::util::comparator::Comparator;
use crate::util::internal_key::InternalKeyComparator;

/// How a [`VecIter`] orders its keys.
#[derive(Clone)]
pub(crate) enum KeyOrder {
    /// Keys are internal keys.
    Internal(InternalKeyComparator),
    /// Keys are plain keys ordered by a user comparator.
    User(Arc<dyn Comparator>),
}

impl KeyOrder {
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        match self {
            KeyOrder::Internal(icmp) => icmp.compare(a, b),
            KeyOrder::User(cmp) => cmp.compare(a, b),
        }
    }
}

/// An [`InternalIterator`] over `(key, value)` pairs held in memory.
pub(crate) struct VecIter {
    order: KeyOrder,
    entries: Vec<(Vec<u8>, Vec<u8>)>,
    /// Position; `entries.len()` means not valid.
    pos: usize,
    fail_at: Option<usize>,
    status: Result<()>,
}

impl VecIter {
    /// An iterator over internal keys.
    pub(crate) fn new(icmp: InternalKeyComparator, entries: Vec<(Vec<u8>, Vec<u8>)>) -> VecIter {
        VecIter::with_order(KeyOrder::Internal(icmp), entries)
    }

    /// An iterator over `entries`, sorted by `order`.
    pub(crate) fn with_order(order: KeyOrder, mut entries: Vec<(Vec<u8>, Vec<u8>)>) -> VecIter {
        entries.sort_by(|a, b| order.compare(&a.0, &b.0));
        let pos = entries.len();
        VecIter {
            order,
            entries,
            pos,
            fail_at: None,
            status: Ok(()),
        }
    }

    /// Makes every move that lands on entry `index` (in sorted order) fail with corruption.
    pub(crate) fn fail_at(mut self, index: usize) -> VecIter {
        self.fail_at = Some(index);
        self
    }

    fn land(&mut self, pos: usize) {
        if self.fail_at == Some(pos) && pos < self.entries.len() {
            self.status = Err(Error::corruption(format!(
                "injected failure at entry {pos}"
            )));
            self.pos = self.entries.len();
        } else {
            self.pos = pos;
        }
    }
}

impl InternalIterator for VecIter {
    fn valid(&self) -> bool {
        self.pos < self.entries.len()
    }

    fn seek_to_first(&mut self) {
        self.land(0);
    }

    fn seek_to_last(&mut self) {
        self.land(
            self.entries
                .len()
                .checked_sub(1)
                .unwrap_or(self.entries.len()),
        );
    }

    fn seek(&mut self, target: &[u8]) {
        let at = self
            .entries
            .partition_point(|(k, _)| self.order.compare(k, target) == Ordering::Less);
        self.land(at);
    }

    fn next(&mut self) {
        if self.valid() {
            self.land(self.pos + 1);
        }
    }

    fn prev(&mut self) {
        if self.valid() {
            let to = self.pos.checked_sub(1).unwrap_or(self.entries.len());
            self.land(to);
        }
    }

    fn key(&self) -> &[u8] {
        self.entries.get(self.pos).map_or(&[], |(k, _)| k)
    }

    fn value(&self) -> &[u8] {
        self.entries.get(self.pos).map_or(&[], |(_, v)| v)
    }

    fn status(&self) -> Result<()> {
        self.status.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::comparator::BytewiseComparator;

    fn user(entries: &[(&str, &str)]) -> VecIter {
        VecIter::with_order(
            KeyOrder::User(BytewiseComparator::shared()),
            entries
                .iter()
                .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
                .collect(),
        )
    }

    #[test]
    fn walks_sorted_entries_both_ways() {
        let mut it = user(&[("b", "2"), ("a", "1"), ("c", "3")]);
        assert!(!it.valid());
        it.seek_to_first();
        assert_eq!((it.key(), it.value()), (&b"a"[..], &b"1"[..]));
        it.next();
        assert_eq!(it.key(), b"b");
        it.seek(b"bb");
        assert_eq!(it.key(), b"c");
        it.next();
        assert!(!it.valid());
        it.seek_to_last();
        assert_eq!(it.key(), b"c");
        it.prev();
        it.prev();
        assert_eq!(it.key(), b"a");
        it.prev();
        assert!(!it.valid());
        assert!(it.status().is_ok());
        let mut empty = user(&[]);
        empty.seek_to_last();
        assert!(!empty.valid());
    }

    #[test]
    fn injected_failure_invalidates_and_reports() {
        let mut it = user(&[("a", ""), ("b", ""), ("c", "")]).fail_at(1);
        it.seek_to_first();
        assert!(it.valid());
        it.next();
        assert!(!it.valid());
        assert!(it.status().is_err_and(|e| e.is_corruption()));
    }
}
