//! The user's view of the database: turns the merged stream of internal entries (every version
//! of every key, tombstones included) into the user keys visible at one sequence number.
//!
//! Contract:
//! - Yields, in user-key order and forward or backward, each user key whose newest entry with
//!   `sequence <= snapshot` is a value, with that value. Deletions, older versions and entries
//!   newer than the snapshot are hidden. Direction may change at any point.
//! - Format extensions: with [`DbIter::set_range_tombstones`], a value older than the newest
//!   tombstone (at or below the snapshot) covering its key is hidden like a deletion; with
//!   [`DbIter::set_clock`], an expiring value is hidden once expired, by the clock read at each
//!   positioning call (`seek*`, `next`, `prev`), and otherwise yields the user's value without
//!   its expiry time. Both decide through `util::entry::visible`, as point lookups do.
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
//! - Moving forward onto an entry a range tombstone hides, the children of the merge older
//!   than the tombstone's source are moved past the covered range (up to the upper bound) in
//!   one step ([`InternalIterator::skip_older_sources`]) rather than stepped through.
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
use std::sync::Arc;

use super::InternalIterator;
use crate::env::Env;
use crate::error::{Error, Result};
use crate::range_del::Fragments;
use crate::util::entry::{visible, Visible};
use crate::util::internal_key::{
    append_internal_key, parse_internal_key, user_key, InternalKeyComparator, ParsedInternalKey,
    SequenceNumber, ValueType, MAX_SEQUENCE, VALUE_TYPE_FOR_SEEK,
};

/// Called with an internal key read and the bytes of that entry (key plus value).
pub(crate) type ReadSampler = Box<dyn FnMut(&[u8], usize) + Send>;

/// Mean number of bytes read between two samples.
const READ_SAMPLE_PERIOD: u64 = 1 << 20;

/// A saved value larger than this is freed rather than kept for reuse.
const MAX_KEPT_VALUE_CAPACITY: usize = 1 << 20;

/// One source's range tombstones, or several sources' merged.
struct TombstoneList {
    fragments: Arc<Fragments>,
    /// Where the last search ended (the hint of `Fragments::covering_near`).
    hint: usize,
    /// The first child of the merged inner iterator from which on every child's entries are
    /// older than these tombstones where they cover; `usize::MAX` for none.
    older_from: usize,
}

impl TombstoneList {
    /// The newest tombstone at or below `sequence` covering `user_key`, and the end of the
    /// range over which that holds.
    fn covering(
        &mut self,
        user_key: &[u8],
        sequence: SequenceNumber,
    ) -> Option<(SequenceNumber, &[u8])> {
        let fragment = self.fragments.covering_near(user_key, &mut self.hint)?;
        Some((fragment.newest_at(sequence)?, &fragment.end))
    }
}

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
    /// Forward: where the user's value starts in the inner value (after an expiry time).
    value_offset: usize,
    /// Whether the current value is a pointer to the user's value in a value file.
    value_is_pointer: bool,
    sampling: Option<Sampling>,
    /// The range tombstones of every source (each list a source's, or several merged).
    tombstones: Vec<TombstoneList>,
    /// Where a skip past a covered range builds its target (reused buffer).
    skip_target: Vec<u8>,
    /// The clock expiring values are judged by, and its reading for the current call.
    clock: Option<Arc<dyn Env>>,
    now: u64,
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
            value_offset: 0,
            value_is_pointer: false,
            sampling: None,
            tombstones: Vec::new(),
            skip_target: Vec::new(),
            clock: None,
            now: 0,
        }
    }

    /// Hides the values these range tombstones delete (see the module documentation). Each
    /// list comes with the first child of the merged inner iterator from which on every
    /// child's entries are older than the list's tombstones wherever those cover (`usize::MAX`
    /// for none): moving forward through a covered range, those children are moved past it
    /// rather than stepped through ([`InternalIterator::skip_older_sources`]).
    pub(crate) fn set_range_tombstones(&mut self, tombstones: Vec<(Arc<Fragments>, usize)>) {
        self.tombstones = tombstones
            .into_iter()
            .map(|(fragments, older_from)| TombstoneList {
                fragments,
                hint: 0,
                older_from,
            })
            .collect();
    }

    /// Judges expiring values by `clock` (see the module documentation).
    pub(crate) fn set_clock(&mut self, clock: Arc<dyn Env>) {
        self.clock = Some(clock);
    }

    /// Reads the clock for a positioning call.
    fn tick(&mut self) {
        if let Some(clock) = &self.clock {
            self.now = clock.now_micros();
        }
    }

    /// What a read sees of the entry `parsed` with `stored` value (see `util::entry`).
    fn judge<'a>(
        tombstones: &mut [TombstoneList],
        sequence: SequenceNumber,
        now: u64,
        parsed: &ParsedInternalKey<'_>,
        stored: &'a [u8],
    ) -> Result<Visible<'a>> {
        let covered = tombstones
            .iter_mut()
            .filter_map(|list| list.covering(parsed.user_key, sequence).map(|(s, _)| s))
            .max();
        visible(parsed.value_type, parsed.sequence, stored, covered, now)
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

    /// Whether [`DbIter::value`] is a pointer to the user's value in a value file (see
    /// `vlog`) rather than the value.
    pub(crate) fn value_is_pointer(&self) -> bool {
        self.valid && self.value_is_pointer
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
            (true, Direction::Forward) => {
                self.inner.value().get(self.value_offset..).unwrap_or(&[])
            }
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
        self.tick();
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
        self.tick();
        self.direction = Direction::Forward;
        self.clear_saved_value();
        self.inner.seek_to_first();
        self.find_next_user_entry(false);
    }

    pub(crate) fn seek_to_last(&mut self) {
        if self.stopped() {
            return;
        }
        self.tick();
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
        self.tick();
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
        self.tick();
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
        let e = Error::corruption(format!(
            "unparseable internal key of {} bytes in iterator",
            self.inner.key().len()
        ));
        self.fail(e);
    }

    /// Stops the iterator with `e` (sticky).
    fn fail(&mut self, e: Error) {
        self.valid = false;
        self.status = Err(e);
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
                    let stored = self.inner.value();
                    let seen = if parsed.value_type == ValueType::Deletion {
                        Ok(Visible::Gone)
                    } else {
                        Self::judge(
                            &mut self.tombstones,
                            self.sequence,
                            self.now,
                            &parsed,
                            stored,
                        )
                    };
                    match seen {
                        Ok(Visible::Value(value) | Visible::Pointer(value)) => {
                            self.value_offset = stored.len() - value.len();
                            self.value_is_pointer = parsed.value_type == ValueType::ValuePointer;
                            self.valid = true;
                            return;
                        }
                        Ok(Visible::Gone) => {
                            // Everything older of this key is deleted too.
                            self.saved_key.clear();
                            self.saved_key.extend_from_slice(parsed.user_key);
                            skipping = true;
                            if self.skip_covered() {
                                continue; // the merge moved: look at its new entry
                            }
                        }
                        Err(e) => {
                            self.fail(e);
                            return;
                        }
                    }
                }
            }
            self.inner.next();
        }
        self.valid = false;
        self.saved_key.clear();
    }

    /// Moving forward, on a hidden entry of `saved_key`: for each tombstone list covering that
    /// key at the read's sequence, moves the children older than the list past the end of the
    /// covering fragment (or to the upper bound, if that comes first), since everything they
    /// hold there is older than a visible tombstone. Returns whether the inner iterator moved.
    fn skip_covered(&mut self) -> bool {
        let mut moved = false;
        for list in &mut self.tombstones {
            if list.older_from == usize::MAX {
                continue;
            }
            let Some((_, end)) = list.covering(&self.saved_key, self.sequence) else {
                continue;
            };
            // No further than the upper bound: a bounded scan reads nothing past it.
            let end = match &self.upper_bound {
                Some(upper) if self.icmp.compare_user(upper, end) == Ordering::Less => upper,
                _ => end,
            };
            self.skip_target.clear();
            append_internal_key(
                &mut self.skip_target,
                end,
                MAX_SEQUENCE,
                VALUE_TYPE_FOR_SEEK,
            );
            moved |= self
                .inner
                .skip_older_sources(list.older_from, &self.skip_target);
        }
        moved
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
                let seen = if parsed.value_type == ValueType::Deletion {
                    Ok(Visible::Gone)
                } else {
                    Self::judge(
                        &mut self.tombstones,
                        self.sequence,
                        self.now,
                        &parsed,
                        self.inner.value(),
                    )
                };
                match seen {
                    Ok(Visible::Value(value) | Visible::Pointer(value)) => {
                        found = true;
                        self.value_is_pointer = parsed.value_type == ValueType::ValuePointer;
                        self.saved_key.clear();
                        self.saved_key.extend_from_slice(parsed.user_key);
                        self.saved_value.clear();
                        self.saved_value.extend_from_slice(value);
                    }
                    Ok(Visible::Gone) => {
                        found = false;
                        self.saved_key.clear();
                        self.clear_saved_value();
                    }
                    Err(e) => {
                        self.fail(e);
                        return;
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
#[path = "db_iter_tests.rs"]
mod tests;
