//! The user's view of the database: turns the merged stream of internal entries (every version
//! of every key, tombstones included) into the user keys visible at one sequence number.
//!
//! Contract:
//! - Yields, in user-key order and forward or backward, each user key whose newest entry with
//!   `sequence <= snapshot` is a value, with that value. Deletions, older versions and entries
//!   newer than the snapshot are hidden. Direction may change at any point.
//! - Optional bounds: only keys `>= lower_bound` and `< upper_bound` are seen. A seek below the
//!   lower bound starts at it, `seek_to_first` seeks to it, `seek_to_last` starts just below the
//!   upper bound, and iteration ends at either bound.
//! - An entry whose internal key cannot be parsed stops the iterator with a corruption status.
//!   That status is sticky: every later positioning call leaves the iterator invalid. Errors of
//!   the underlying iterator are reported by `status()` as they are.
//! - Thread safety: owned by one thread at a time (`Send`, not `Sync`).
//!
//! State, and how it keeps copies off the forward path:
//! - Moving forward, the inner iterator sits *on* the entry that supplies the current key and
//!   value, so `key()`/`value()` borrow from it. `saved_key` only remembers the user key being
//!   skipped (reused buffer: no allocation once it has grown).
//! - Moving backward, the inner iterator sits *before* every entry of the current user key (on
//!   the last entry of a smaller key, or unpositioned), because the newest version of a key is
//!   met last when walking backward. The current key and value are copied into `saved_key` and
//!   `saved_value`.
//!
//! - `next`/`prev` on an invalid iterator do nothing; `key`/`value` then return empty slices.
//!
//! Read sampling (for seek-triggered compaction): [`DbIter::set_read_sampler`] installs a
//! callback that is handed the internal key of an entry read and that entry's size (key plus
//! value) each time the bytes read cross a sampling point. Gaps between points are drawn
//! uniformly from 1 byte to 2 MiB, so there is about one sample per MiB read (several for one
//! entry larger than a gap). Every entry the iterator parses counts, hidden ones included.
//! Without a sampler the cost is one branch per entry.

use std::cmp::Ordering;

use super::InternalIterator;
use crate::error::{Error, Result};
use crate::util::internal_key::{
    append_internal_key, parse_internal_key, user_key, InternalKeyComparator, SequenceNumber,
    ValueType, MAX_SEQUENCE, VALUE_TYPE_FOR_SEEK,
};

/// Called with an internal key read and the bytes of that entry (key plus value).
pub(crate) type ReadSampler = Box<dyn FnMut(&[u8], usize) + Send>;

/// Mean number of bytes read between two samples.
const READ_SAMPLE_PERIOD: u64 = 1 << 20;

/// A saved value larger than this is freed rather than kept for reuse.
const MAX_KEPT_VALUE_CAPACITY: usize = 1 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Forward,
    Reverse,
}

struct Sampling {
    callback: ReadSampler,
    /// Bytes still to read before the next sample.
    until_next: u64,
    /// xorshift64 state; never zero.
    rng: u64,
}

impl Sampling {
    fn gap(&mut self) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        1 + self.rng % (2 * READ_SAMPLE_PERIOD)
    }

    fn record(&mut self, internal_key: &[u8], bytes: usize) {
        let read = bytes as u64;
        while self.until_next < read {
            self.until_next += self.gap();
            (self.callback)(internal_key, bytes);
        }
        self.until_next -= read;
    }
}

/// Iterator over the user keys visible at a sequence number; see the module docs.
pub(crate) struct DbIter {
    inner: Box<dyn InternalIterator>,
    icmp: InternalKeyComparator,
    sequence: SequenceNumber,
    lower_bound: Option<Vec<u8>>,
    upper_bound: Option<Vec<u8>>,
    direction: Direction,
    valid: bool,
    /// Corruption met by this iterator itself (sticky).
    status: Result<()>,
    /// Forward: the user key being skipped. Reverse: the current user key. Also the buffer a
    /// seek builds its lookup key in.
    saved_key: Vec<u8>,
    /// Reverse: the current value.
    saved_value: Vec<u8>,
    sampling: Option<Sampling>,
}

impl DbIter {
    /// An iterator over `inner` (internal keys ordered by `icmp`) as of `sequence`.
    pub(crate) fn new(
        inner: Box<dyn InternalIterator>,
        icmp: InternalKeyComparator,
        sequence: SequenceNumber,
        lower_bound: Option<Vec<u8>>,
        upper_bound: Option<Vec<u8>>,
    ) -> DbIter {
        DbIter {
            inner,
            icmp,
            sequence: sequence.min(MAX_SEQUENCE),
            lower_bound,
            upper_bound,
            direction: Direction::Forward,
            valid: false,
            status: Ok(()),
            saved_key: Vec::new(),
            saved_value: Vec::new(),
            sampling: None,
        }
    }

    /// Installs the read-sampling callback; `seed` picks the (pseudo-random) sampling points.
    pub(crate) fn set_read_sampler(&mut self, callback: ReadSampler, seed: u64) {
        let mut sampling = Sampling {
            callback,
            until_next: 0,
            rng: seed | 1,
        };
        sampling.until_next = sampling.gap();
        self.sampling = Some(sampling);
    }

    pub(crate) fn valid(&self) -> bool {
        self.valid
    }

    /// The current user key; empty when not valid.
    pub(crate) fn key(&self) -> &[u8] {
        match (self.valid, self.direction) {
            (false, _) => &[],
            (true, Direction::Forward) => user_key(self.inner.key()),
            (true, Direction::Reverse) => &self.saved_key,
        }
    }

    /// The current value; empty when not valid.
    pub(crate) fn value(&self) -> &[u8] {
        match (self.valid, self.direction) {
            (false, _) => &[],
            (true, Direction::Forward) => self.inner.value(),
            (true, Direction::Reverse) => &self.saved_value,
        }
    }

    /// This iterator's corruption if any, else the inner iterator's status.
    pub(crate) fn status(&self) -> Result<()> {
        self.status.clone()?;
        self.inner.status()
    }

    pub(crate) fn seek(&mut self, target: &[u8]) {
        if self.stopped() {
            return;
        }
        self.direction = Direction::Forward;
        self.clear_saved_value();
        let target = match &self.lower_bound {
            Some(lower) if self.icmp.compare_user(target, lower) == Ordering::Less => {
                lower.as_slice()
            }
            _ => target,
        };
        self.saved_key.clear();
        append_internal_key(
            &mut self.saved_key,
            target,
            self.sequence,
            VALUE_TYPE_FOR_SEEK,
        );
        self.inner.seek(&self.saved_key);
        self.find_next_user_entry(false);
    }

    pub(crate) fn seek_to_first(&mut self) {
        if let Some(lower) = self.lower_bound.take() {
            self.seek(&lower);
            self.lower_bound = Some(lower);
            return;
        }
        if self.stopped() {
            return;
        }
        self.direction = Direction::Forward;
        self.clear_saved_value();
        self.inner.seek_to_first();
        self.find_next_user_entry(false);
    }

    pub(crate) fn seek_to_last(&mut self) {
        if self.stopped() {
            return;
        }
        self.direction = Direction::Reverse;
        self.clear_saved_value();
        match &self.upper_bound {
            Some(upper) => {
                // The first entry of the upper bound's user key, then one step back.
                self.saved_key.clear();
                append_internal_key(
                    &mut self.saved_key,
                    upper,
                    MAX_SEQUENCE,
                    VALUE_TYPE_FOR_SEEK,
                );
                self.inner.seek(&self.saved_key);
                if self.inner.valid() {
                    self.inner.prev();
                } else if self.inner.status().is_ok() {
                    self.inner.seek_to_last();
                }
            }
            None => self.inner.seek_to_last(),
        }
        self.find_prev_user_entry();
    }

    pub(crate) fn next(&mut self) {
        if !self.valid {
            return;
        }
        match self.direction {
            Direction::Forward => {
                // Skip the rest of the current key's versions.
                self.saved_key.clear();
                self.saved_key.extend_from_slice(user_key(self.inner.key()));
                self.inner.next();
            }
            Direction::Reverse => {
                // The inner iterator is before the current key's entries and `saved_key` holds
                // that key: step onto its entries and skip them.
                self.direction = Direction::Forward;
                self.clear_saved_value();
                if self.inner.valid() {
                    self.inner.next();
                } else {
                    self.inner.seek_to_first();
                }
            }
        }
        self.find_next_user_entry(true);
    }

    pub(crate) fn prev(&mut self) {
        if !self.valid {
            return;
        }
        if self.direction == Direction::Forward {
            // The inner iterator is on the current key's entry: walk back to before all of
            // that key's entries (newer, invisible versions included).
            self.saved_key.clear();
            self.saved_key.extend_from_slice(user_key(self.inner.key()));
            loop {
                self.inner.prev();
                if !self.inner.valid() {
                    self.valid = false;
                    self.saved_key.clear();
                    return;
                }
                let before = self
                    .icmp
                    .compare_user(user_key(self.inner.key()), &self.saved_key);
                if before == Ordering::Less {
                    break;
                }
            }
            self.direction = Direction::Reverse;
        }
        self.find_prev_user_entry();
    }

    /// True (and invalid) once this iterator has met corruption.
    fn stopped(&mut self) -> bool {
        if self.status.is_err() {
            self.valid = false;
            return true;
        }
        false
    }

    fn corrupt(&mut self) {
        self.valid = false;
        self.status = Err(Error::corruption(format!(
            "unparseable internal key of {} bytes in iterator",
            self.inner.key().len()
        )));
    }

    fn clear_saved_value(&mut self) {
        if self.saved_value.capacity() > MAX_KEPT_VALUE_CAPACITY {
            self.saved_value = Vec::new();
        } else {
            self.saved_value.clear();
        }
    }

    /// Moving forward from the inner position, stops on the first entry that supplies a
    /// visible user key. With `skipping`, entries of user keys `<= saved_key` are hidden.
    fn find_next_user_entry(&mut self, mut skipping: bool) {
        debug_assert_eq!(self.direction, Direction::Forward);
        while self.inner.valid() {
            let ikey = self.inner.key();
            if let Some(sampling) = &mut self.sampling {
                sampling.record(ikey, ikey.len() + self.inner.value().len());
            }
            let Some(parsed) = parse_internal_key(ikey) else {
                self.corrupt();
                return;
            };
            if parsed.sequence <= self.sequence {
                let hidden = skipping
                    && self.icmp.compare_user(parsed.user_key, &self.saved_key)
                        != Ordering::Greater;
                if !hidden {
                    if let Some(upper) = &self.upper_bound {
                        if self.icmp.compare_user(parsed.user_key, upper) != Ordering::Less {
                            break;
                        }
                    }
                    match parsed.value_type {
                        ValueType::Value => {
                            self.valid = true;
                            return;
                        }
                        ValueType::Deletion => {
                            // Everything older of this key is deleted too.
                            self.saved_key.clear();
                            self.saved_key.extend_from_slice(parsed.user_key);
                            skipping = true;
                        }
                    }
                }
            }
            self.inner.next();
        }
        self.valid = false;
        self.saved_key.clear();
    }

    /// Moving backward from the inner position, gathers the newest visible version of the
    /// next smaller user key into `saved_key`/`saved_value`, leaving the inner iterator before
    /// all of that key's entries.
    fn find_prev_user_entry(&mut self) {
        debug_assert_eq!(self.direction, Direction::Reverse);
        // Whether `saved_key`/`saved_value` hold a live candidate.
        let mut found = false;
        while self.inner.valid() {
            let ikey = self.inner.key();
            if let Some(sampling) = &mut self.sampling {
                sampling.record(ikey, ikey.len() + self.inner.value().len());
            }
            let Some(parsed) = parse_internal_key(ikey) else {
                self.corrupt();
                return;
            };
            if let Some(lower) = &self.lower_bound {
                if self.icmp.compare_user(parsed.user_key, lower) == Ordering::Less {
                    break;
                }
            }
            if parsed.sequence <= self.sequence {
                if found
                    && self.icmp.compare_user(parsed.user_key, &self.saved_key) == Ordering::Less
                {
                    // A smaller key: the candidate's newest visible version has been seen.
                    break;
                }
                match parsed.value_type {
                    ValueType::Value => {
                        found = true;
                        self.saved_key.clear();
                        self.saved_key.extend_from_slice(parsed.user_key);
                        self.saved_value.clear();
                        self.saved_value.extend_from_slice(self.inner.value());
                    }
                    ValueType::Deletion => {
                        found = false;
                        self.saved_key.clear();
                        self.clear_saved_value();
                    }
                }
            }
            self.inner.prev();
        }
        self.valid = found;
        if !found {
            self.saved_key.clear();
            self.clear_saved_value();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};

    use proptest::prelude::*;

    use super::*;
    use crate::iter::merging::merging_iterator;
    use crate::iter::vec_iter::VecIter;
    use crate::util::comparator::{BytewiseComparator, Comparator};
    use crate::util::internal_key::internal_key;

    /// Bytewise order reversed: proves every comparison goes through the user comparator.
    struct ReverseComparator;

    impl Comparator for ReverseComparator {
        fn name(&self) -> &str {
            "strata.test.ReverseBytewise"
        }
        fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
            b.cmp(a)
        }
    }

    fn bytewise() -> InternalKeyComparator {
        InternalKeyComparator::new(BytewiseComparator::shared())
    }

    type Entries = Vec<(Vec<u8>, Vec<u8>)>;

    /// The internal entry of one write: a put with a value or a delete.
    fn entry(key: &[u8], sequence: SequenceNumber, value: Option<&[u8]>) -> (Vec<u8>, Vec<u8>) {
        match value {
            Some(v) => (internal_key(key, sequence, ValueType::Value), v.to_vec()),
            None => (internal_key(key, sequence, ValueType::Deletion), Vec::new()),
        }
    }

    /// Writes as `(key, sequence, value or None for a delete)`, all in one child.
    fn writes(list: &[(&str, u64, Option<&str>)]) -> Entries {
        list.iter()
            .map(|&(k, s, v)| entry(k.as_bytes(), s, v.map(str::as_bytes)))
            .collect()
    }

    fn db_iter_over(
        icmp: &InternalKeyComparator,
        children: Vec<Entries>,
        sequence: SequenceNumber,
        lower: Option<&str>,
        upper: Option<&str>,
    ) -> DbIter {
        let children = children
            .into_iter()
            .map(|e| Box::new(VecIter::new(icmp.clone(), e)) as Box<dyn InternalIterator>)
            .collect();
        DbIter::new(
            merging_iterator(icmp.clone(), children),
            icmp.clone(),
            sequence,
            lower.map(|b| b.as_bytes().to_vec()),
            upper.map(|b| b.as_bytes().to_vec()),
        )
    }

    fn db_iter(entries: Entries, sequence: SequenceNumber) -> DbIter {
        db_iter_over(&bytewise(), vec![entries], sequence, None, None)
    }

    /// The current `key=value`, or `-` when not valid.
    fn at(it: &DbIter) -> String {
        if !it.valid() {
            return "-".to_owned();
        }
        format!(
            "{}={}",
            String::from_utf8_lossy(it.key()),
            String::from_utf8_lossy(it.value())
        )
    }

    fn scan_forward(it: &mut DbIter) -> Vec<String> {
        let mut out = Vec::new();
        it.seek_to_first();
        while it.valid() {
            out.push(at(it));
            it.next();
        }
        out
    }

    fn scan_backward(it: &mut DbIter) -> Vec<String> {
        let mut out = Vec::new();
        it.seek_to_last();
        while it.valid() {
            out.push(at(it));
            it.prev();
        }
        out
    }

    #[test]
    fn shows_the_newest_visible_version_of_live_keys() {
        let data = writes(&[
            ("a", 1, Some("a1")),
            ("a", 2, Some("a2")),
            ("b", 3, Some("b3")),
            ("b", 4, None),
            ("c", 5, Some("c5")),
            ("c", 7, Some("c7")),
        ]);
        let mut it = db_iter(data.clone(), 6);
        assert_eq!(scan_forward(&mut it), ["a=a2", "c=c5"]);
        assert_eq!(scan_backward(&mut it), ["c=c5", "a=a2"]);
        let mut it = db_iter(data.clone(), 3);
        assert_eq!(scan_forward(&mut it), ["a=a2", "b=b3"]);
        assert_eq!(scan_backward(&mut it), ["b=b3", "a=a2"]);
        let mut it = db_iter(data.clone(), MAX_SEQUENCE);
        assert_eq!(scan_forward(&mut it), ["a=a2", "c=c7"]);
        let mut it = db_iter(data, 0);
        assert!(scan_forward(&mut it).is_empty());
        assert!(scan_backward(&mut it).is_empty());
        assert!(it.status().is_ok());
    }

    #[test]
    fn prev_after_seek_onto_a_key_with_newer_hidden_versions() {
        let data = writes(&[
            ("a", 1, Some("a1")),
            ("b", 2, Some("b2")),
            ("b", 5, Some("b5")),
            ("b", 6, None),
            ("c", 3, Some("c3")),
        ]);
        let mut it = db_iter(data, 4);
        it.seek(b"b");
        assert_eq!(at(&it), "b=b2");
        it.prev();
        assert_eq!(at(&it), "a=a1");
        it.next();
        assert_eq!(at(&it), "b=b2");
        it.next();
        assert_eq!(at(&it), "c=c3");
        it.prev();
        assert_eq!(at(&it), "b=b2");
        it.prev();
        assert_eq!(at(&it), "a=a1");
        it.prev();
        assert_eq!(at(&it), "-");
    }

    #[test]
    fn seek_past_the_end_then_walk_back() {
        let data = writes(&[("a", 1, Some("1")), ("b", 2, Some("2")), ("c", 3, None)]);
        let mut it = db_iter(data, 10);
        it.seek(b"bb");
        assert_eq!(at(&it), "-");
        it.seek(b"z");
        assert_eq!(at(&it), "-");
        it.seek_to_last();
        assert_eq!(at(&it), "b=2");
        it.prev();
        assert_eq!(at(&it), "a=1");
        it.next();
        assert_eq!(at(&it), "b=2");
        it.next();
        assert_eq!(at(&it), "-");
    }

    #[test]
    fn next_after_prev_reaches_the_first_key() {
        let data = writes(&[
            ("a", 1, Some("1")),
            ("b", 2, Some("2")),
            ("c", 3, Some("3")),
        ]);
        let mut it = db_iter(data, 10);
        it.seek_to_last();
        it.prev();
        it.prev();
        // The inner iterator has run off the front while gathering "a".
        assert_eq!(at(&it), "a=1");
        it.next();
        assert_eq!(at(&it), "b=2");
        it.prev();
        assert_eq!(at(&it), "a=1");
        it.prev();
        assert_eq!(at(&it), "-");
        it.seek_to_first();
        assert_eq!(at(&it), "a=1");
        it.prev();
        assert_eq!(at(&it), "-");
    }

    #[test]
    fn deleted_keys_at_the_edges() {
        let data = writes(&[
            ("a", 1, None),
            ("b", 2, Some("2")),
            ("c", 3, Some("3")),
            ("d", 4, Some("4")),
            ("d", 5, None),
        ]);
        let mut it = db_iter(data, 10);
        assert_eq!(scan_forward(&mut it), ["b=2", "c=3"]);
        assert_eq!(scan_backward(&mut it), ["c=3", "b=2"]);
        it.seek_to_first();
        it.prev();
        assert_eq!(at(&it), "-");
        it.seek_to_last();
        it.next();
        assert_eq!(at(&it), "-");
        it.seek(b"a");
        assert_eq!(at(&it), "b=2");
        it.seek(b"d");
        assert_eq!(at(&it), "-");
        it.seek(b"c");
        it.prev();
        it.prev();
        assert_eq!(at(&it), "-");
    }

    #[test]
    fn many_versions_of_one_key() {
        // Versions of "k" alternate put (odd sequences) and delete (even), between two
        // neighbours that never change.
        let mut data = vec![entry(b"a", 1, Some(b"a")), entry(b"z", 1, Some(b"z"))];
        for seq in 2..=200u64 {
            let value = format!("k{seq}");
            data.push(entry(b"k", seq, (seq % 2 == 1).then_some(value.as_bytes())));
        }
        for snapshot in [1, 2, 3, 100, 101, 199, 200, 201] {
            let mut it = db_iter(data.clone(), snapshot);
            let newest = snapshot.min(200);
            let live = newest % 2 == 1 && newest >= 3;
            let k = format!("k=k{newest}");
            let forward: Vec<String> = if live {
                vec!["a=a".into(), k.clone(), "z=z".into()]
            } else {
                vec!["a=a".into(), "z=z".into()]
            };
            assert_eq!(scan_forward(&mut it), forward, "snapshot {snapshot}");
            let mut backward = forward.clone();
            backward.reverse();
            assert_eq!(scan_backward(&mut it), backward, "snapshot {snapshot}");
            // Turn around on and next to "k".
            it.seek(b"k");
            if live {
                assert_eq!(at(&it), k);
                it.prev();
                assert_eq!(at(&it), "a=a");
                it.next();
                assert_eq!(at(&it), k);
                it.next();
                assert_eq!(at(&it), "z=z");
                it.prev();
                assert_eq!(at(&it), k);
            } else {
                assert_eq!(at(&it), "z=z");
                it.prev();
                assert_eq!(at(&it), "a=a");
                it.next();
                assert_eq!(at(&it), "z=z");
            }
        }
    }

    #[test]
    fn bounds_clamp_seeks_and_end_iteration() {
        let mut data = Vec::new();
        for (i, key) in ["a", "b", "c", "d", "e", "f"].iter().enumerate() {
            data.push(entry(key.as_bytes(), i as u64 + 1, Some(key.as_bytes())));
        }
        let mut it = db_iter_over(&bytewise(), vec![data.clone()], 100, Some("b"), Some("e"));
        assert_eq!(scan_forward(&mut it), ["b=b", "c=c", "d=d"]);
        assert_eq!(scan_backward(&mut it), ["d=d", "c=c", "b=b"]);
        it.seek(b"a");
        assert_eq!(at(&it), "b=b");
        it.prev();
        assert_eq!(at(&it), "-");
        it.seek(b"e");
        assert_eq!(at(&it), "-");
        it.seek(b"d");
        it.next();
        assert_eq!(at(&it), "-");
        it.seek_to_last();
        it.prev();
        it.prev();
        assert_eq!(at(&it), "b=b");
        it.next();
        assert_eq!(at(&it), "c=c");

        // Bounds that fall between keys, and an empty range.
        let mut it = db_iter_over(&bytewise(), vec![data.clone()], 100, Some("bb"), Some("dd"));
        assert_eq!(scan_forward(&mut it), ["c=c", "d=d"]);
        assert_eq!(scan_backward(&mut it), ["d=d", "c=c"]);
        let mut it = db_iter_over(&bytewise(), vec![data], 100, Some("c"), Some("c"));
        assert!(scan_forward(&mut it).is_empty());
        assert!(scan_backward(&mut it).is_empty());
    }

    #[test]
    fn an_unparseable_key_stops_with_corruption() {
        let mut bad_type = b"b".to_vec();
        bad_type.extend_from_slice(&((7u64 << 8) | 7).to_le_bytes());
        let mut data = writes(&[("a", 1, Some("1")), ("c", 3, Some("3"))]);
        data.push((bad_type, b"x".to_vec()));

        let mut it = db_iter(data.clone(), 10);
        it.seek_to_first();
        assert_eq!(at(&it), "a=1");
        it.next();
        assert_eq!(at(&it), "-");
        assert!(matches!(it.status(), Err(Error::Corruption(_))));
        // Sticky: later seeks leave it invalid.
        it.seek(b"c");
        assert!(!it.valid());
        it.seek_to_last();
        assert!(!it.valid());

        // Backward, the entry before a key must be read to know the key's newest version:
        // "c" cannot be confirmed, and neither can "d" be left for it.
        let mut it = db_iter(data.clone(), 10);
        it.seek_to_last();
        assert!(!it.valid());
        assert!(matches!(it.status(), Err(Error::Corruption(_))));
        data.extend(writes(&[("d", 4, Some("4"))]));
        let mut it = db_iter(data, 10);
        it.seek_to_last();
        assert_eq!(at(&it), "d=4");
        it.prev();
        assert!(!it.valid());
        assert!(matches!(it.status(), Err(Error::Corruption(_))));

        // A key too short to hold a trailer.
        let mut it = db_iter(vec![(b"short".to_vec(), Vec::new())], 10);
        it.seek_to_first();
        assert!(!it.valid());
        assert!(matches!(it.status(), Err(Error::Corruption(_))));
    }

    #[test]
    fn inner_errors_are_reported() {
        let icmp = bytewise();
        let data = writes(&[
            ("a", 1, Some("1")),
            ("b", 2, Some("2")),
            ("c", 3, Some("3")),
        ]);
        let inner = Box::new(VecIter::new(icmp.clone(), data).fail_at(1));
        let mut it = DbIter::new(inner, icmp, 10, None, None);
        it.seek_to_first();
        assert_eq!(at(&it), "a=1");
        it.next();
        assert!(!it.valid());
        assert!(matches!(it.status(), Err(Error::Corruption(_))));
    }

    #[test]
    fn read_sampler_fires_about_once_per_mib() {
        let value = vec![b'v'; 1000];
        let data: Entries = (0..4096u32)
            .map(|i| entry(format!("key{i:06}").as_bytes(), 1, Some(&value)))
            .collect();
        let entry_bytes = data[0].0.len() + data[0].1.len();
        let total = data.len() * entry_bytes;
        let samples = Arc::new(Mutex::new(Vec::new()));
        let mut it = db_iter(data, 10);
        let seen = Arc::clone(&samples);
        it.set_read_sampler(
            Box::new(move |ikey, bytes| {
                if let Ok(mut seen) = seen.lock() {
                    seen.push((ikey.to_vec(), bytes));
                }
            }),
            42,
        );
        assert_eq!(scan_forward(&mut it).len(), 4096);
        let samples = samples.lock().map(|s| s.clone()).unwrap_or_default();
        // Gaps are at most 2 MiB, so ~4 MiB read gives at least two samples.
        let mib = total as f64 / READ_SAMPLE_PERIOD as f64;
        assert!(
            samples.len() >= 2,
            "{} samples over {mib:.1} MiB",
            samples.len()
        );
        assert!(
            samples.len() <= 20,
            "{} samples over {mib:.1} MiB",
            samples.len()
        );
        for (ikey, bytes) in samples {
            assert_eq!(bytes, entry_bytes);
            assert!(parse_internal_key(&ikey).is_some());
        }
    }

    #[test]
    fn iterators_can_move_between_threads() {
        fn assert_send<T: Send>() {}
        assert_send::<DbIter>();
        assert_send::<crate::iter::merging::MergingIterator>();
    }

    // --- Model check ---------------------------------------------------------------------

    /// User keys written: prefixes, a zero byte and a high byte meet.
    const KEYS: [&[u8]; 7] = [b"", b"a", b"a\0", b"ab", b"b", b"ba", b"\xff"];
    /// Seek targets and bounds: the keys and the gaps between them.
    const TARGETS: [&[u8]; 11] = [
        b"",
        b"a",
        b"a\0",
        b"aa",
        b"ab",
        b"b",
        b"b\0",
        b"ba",
        b"c",
        b"\xff",
        b"\xff\xff",
    ];

    #[derive(Debug, Clone)]
    enum Op {
        First,
        Last,
        Seek(usize),
        Next,
        Prev,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            1 => Just(Op::First),
            1 => Just(Op::Last),
            2 => (0..TARGETS.len()).prop_map(Op::Seek),
            4 => Just(Op::Next),
            4 => Just(Op::Prev),
        ]
    }

    /// `(key index, is a put, child)` per write; write `i` has sequence `i + 1`.
    fn history() -> impl Strategy<Value = Vec<(usize, bool, usize)>> {
        prop::collection::vec(
            (0..KEYS.len(), prop::bool::weighted(0.65), 0..4usize),
            0..60,
        )
    }

    proptest! {
        #[test]
        fn random_moves_match_the_visible_state(
            history in history(),
            snapshot in 0..64u64,
            lower in prop::option::weighted(0.3, 0..TARGETS.len()),
            upper in prop::option::weighted(0.3, 0..TARGETS.len()),
            reverse in any::<bool>(),
            ops in prop::collection::vec(op(), 1..60),
        ) {
            let user: Arc<dyn Comparator> = if reverse {
                Arc::new(ReverseComparator)
            } else {
                BytewiseComparator::shared()
            };
            let icmp = InternalKeyComparator::new(Arc::clone(&user));
            let lower = lower.map(|i| TARGETS[i]);
            let upper = upper.map(|i| TARGETS[i]);

            let mut children: Vec<Entries> = vec![Vec::new(); 4];
            let mut latest: HashMap<&[u8], Option<Vec<u8>>> = HashMap::new();
            for (i, &(key, put, child)) in history.iter().enumerate() {
                let sequence = i as u64 + 1;
                let value = format!("{key}@{sequence}").into_bytes();
                let value = put.then_some(value);
                children[child].push(entry(KEYS[key], sequence, value.as_deref()));
                if sequence <= snapshot {
                    latest.insert(KEYS[key], value);
                }
            }
            let in_bounds = |k: &[u8]| {
                lower.is_none_or(|l| user.compare(k, l) != Ordering::Less)
                    && upper.is_none_or(|u| user.compare(k, u) == Ordering::Less)
            };
            let mut visible: Entries = latest
                .into_iter()
                .filter_map(|(k, v)| Some((k.to_vec(), v?)))
                .filter(|(k, _)| in_bounds(k))
                .collect();
            visible.sort_by(|a, b| user.compare(&a.0, &b.0));

            let inner = merging_iterator(
                icmp.clone(),
                children
                    .into_iter()
                    .map(|e| Box::new(VecIter::new(icmp.clone(), e)) as Box<dyn InternalIterator>)
                    .collect(),
            );
            let mut it = DbIter::new(
                inner,
                icmp,
                snapshot,
                lower.map(<[u8]>::to_vec),
                upper.map(<[u8]>::to_vec),
            );
            let mut pos: Option<usize> = None;
            for op in ops {
                match op {
                    Op::First => {
                        it.seek_to_first();
                        pos = (!visible.is_empty()).then_some(0);
                    }
                    Op::Last => {
                        it.seek_to_last();
                        pos = visible.len().checked_sub(1);
                    }
                    Op::Seek(t) => {
                        it.seek(TARGETS[t]);
                        let p = visible
                            .partition_point(|(k, _)| user.compare(k, TARGETS[t]) == Ordering::Less);
                        pos = (p < visible.len()).then_some(p);
                    }
                    Op::Next => {
                        let Some(p) = pos else { continue };
                        it.next();
                        pos = Some(p + 1).filter(|&p| p < visible.len());
                    }
                    Op::Prev => {
                        let Some(p) = pos else { continue };
                        it.prev();
                        pos = p.checked_sub(1);
                    }
                }
                match pos {
                    None => prop_assert!(!it.valid(), "after {:?}: expected the end, at {}", op, at(&it)),
                    Some(p) => {
                        prop_assert!(it.valid(), "after {:?}: expected {:?}", op, visible[p]);
                        prop_assert_eq!(it.key(), &visible[p].0[..]);
                        prop_assert_eq!(it.value(), &visible[p].1[..]);
                    }
                }
            }
            prop_assert!(it.status().is_ok());
        }
    }
}
