//! [`Fragments`]: a set of range tombstones cut into disjoint ranges, for lookups.
//!
//! Building sorts every tombstone's start and end and sweeps them: between two consecutive
//! bounds the same tombstones cover every key, and that range becomes one fragment holding
//! their sequence numbers, newest first. Empty tombstones (`start >= end`) cover nothing and
//! are left out; neighbouring fragments covered by the same sequence numbers are joined.
//! Building is `O(n log n)` in the number of tombstones plus the size of the result (nested
//! tombstones give fragments several sequence numbers each).
//!
//! Thread safety: immutable once built; shared as `Arc<Fragments>` by readers.

use std::cmp::Ordering;

use super::RangeTombstone;
use crate::util::internal_key::{InternalKeyComparator, SequenceNumber};

/// A range `[start, end)` and the sequence numbers of the tombstones that cover all of it,
/// newest first (never empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fragment {
    pub(crate) start: Vec<u8>,
    pub(crate) end: Vec<u8>,
    pub(crate) sequences: Vec<SequenceNumber>,
}

impl Fragment {
    /// The newest sequence number of the fragment at or below `sequence`.
    pub(crate) fn newest_at(&self, sequence: SequenceNumber) -> Option<SequenceNumber> {
        // Newest first: the first one not above the read's sequence.
        self.sequences.iter().copied().find(|&s| s <= sequence)
    }
}

/// Disjoint fragments in user-key order. See the module documentation.
#[derive(Debug, Clone)]
pub(crate) struct Fragments {
    icmp: InternalKeyComparator,
    fragments: Vec<Fragment>,
}

impl Fragments {
    /// Fragments of `tombstones`, in any order.
    pub(crate) fn new(icmp: &InternalKeyComparator, tombstones: Vec<RangeTombstone>) -> Fragments {
        let cmp = |a: &[u8], b: &[u8]| icmp.compare_user(a, b);
        let mut tombstones: Vec<RangeTombstone> = tombstones
            .into_iter()
            .filter(|t| cmp(&t.start, &t.end) == Ordering::Less)
            .collect();
        tombstones.sort_by(|a, b| cmp(&a.start, &b.start));
        let mut bounds: Vec<&[u8]> = tombstones
            .iter()
            .flat_map(|t| [t.start.as_slice(), t.end.as_slice()])
            .collect();
        bounds.sort_by(|a, b| cmp(a, b));
        bounds.dedup_by(|a, b| cmp(a, b) == Ordering::Equal);

        let mut fragments: Vec<Fragment> = Vec::new();
        // Tombstones started at or before the current bound, by index; those ended are dropped
        // as the sweep passes their end.
        let mut active: Vec<usize> = Vec::new();
        let mut next = 0;
        for pair in bounds.windows(2) {
            let (lo, hi) = (pair[0], pair[1]);
            while let Some(t) = tombstones.get(next) {
                if cmp(&t.start, lo) == Ordering::Greater {
                    break;
                }
                active.push(next);
                next += 1;
            }
            active.retain(|&i| cmp(&tombstones[i].end, lo) == Ordering::Greater);
            if active.is_empty() {
                continue;
            }
            let mut sequences: Vec<SequenceNumber> =
                active.iter().map(|&i| tombstones[i].sequence).collect();
            sequences.sort_unstable_by(|a, b| b.cmp(a));
            sequences.dedup();
            match fragments.last_mut() {
                Some(last)
                    if last.sequences == sequences && cmp(&last.end, lo) == Ordering::Equal =>
                {
                    last.end = hi.to_vec();
                }
                _ => fragments.push(Fragment {
                    start: lo.to_vec(),
                    end: hi.to_vec(),
                    sequences,
                }),
            }
        }
        Fragments {
            icmp: icmp.clone(),
            fragments,
        }
    }

    /// Fragments of the tombstones of every list in `lists` together.
    pub(crate) fn merge<'a>(
        icmp: &InternalKeyComparator,
        lists: impl IntoIterator<Item = &'a Fragments>,
    ) -> Fragments {
        let tombstones = lists
            .into_iter()
            .flat_map(|list| list.tombstones())
            .collect();
        Fragments::new(icmp, tombstones)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.fragments.is_empty()
    }

    /// The fragments, in user-key order.
    pub(crate) fn fragments(&self) -> &[Fragment] {
        &self.fragments
    }

    /// One tombstone per fragment and sequence number: the same keys covered at the same
    /// sequence numbers as the tombstones these fragments were built from.
    pub(crate) fn tombstones(&self) -> impl Iterator<Item = RangeTombstone> + '_ {
        self.fragments.iter().flat_map(|f| {
            f.sequences.iter().map(|&sequence| RangeTombstone {
                start: f.start.clone(),
                end: f.end.clone(),
                sequence,
            })
        })
    }

    /// The fragment covering `user_key`, if any.
    pub(crate) fn covering(&self, user_key: &[u8]) -> Option<&Fragment> {
        let after = self
            .fragments
            .partition_point(|f| self.icmp.compare_user(&f.end, user_key) != Ordering::Greater);
        self.fragments
            .get(after)
            .filter(|f| self.icmp.compare_user(&f.start, user_key) != Ordering::Greater)
    }

    /// [`Fragments::covering`] for keys that come in order (a scan, either way): `hint` is
    /// where the previous key's search ended, and a key in the same fragment, the gap before
    /// it or a neighbouring one is found with a few comparisons instead of a binary search.
    /// Any `hint` gives the right answer; the search leaves it updated.
    pub(crate) fn covering_near(&self, user_key: &[u8], hint: &mut usize) -> Option<&Fragment> {
        let below_end = |i: usize| {
            self.fragments
                .get(i)
                .is_none_or(|f| self.icmp.compare_user(user_key, &f.end) == Ordering::Less)
        };
        // `after`: the first fragment ending after the key, as `covering` computes it.
        let is_after = |i: usize| below_end(i) && (i == 0 || !below_end(i - 1));
        let len = self.fragments.len();
        let guess = (*hint).min(len);
        let after = [guess, guess + 1, guess.wrapping_sub(1)]
            .into_iter()
            .find(|&i| i <= len && is_after(i))
            .unwrap_or_else(|| {
                self.fragments.partition_point(|f| {
                    self.icmp.compare_user(&f.end, user_key) != Ordering::Greater
                })
            });
        *hint = after;
        self.fragments
            .get(after)
            .filter(|f| self.icmp.compare_user(&f.start, user_key) != Ordering::Greater)
    }

    /// The newest sequence number at or below `sequence` of a tombstone covering `user_key`:
    /// every entry of `user_key` older than it is deleted for a read at `sequence`.
    pub(crate) fn newest_covering(
        &self,
        user_key: &[u8],
        sequence: SequenceNumber,
    ) -> Option<SequenceNumber> {
        self.covering(user_key)?.newest_at(sequence)
    }
}

/// The parts of `fragments` (sorted and disjoint, as [`Fragments`] holds them) inside the user
/// keys `[lo, hi)` (`None`: unbounded).
pub(crate) fn clip(
    icmp: &InternalKeyComparator,
    fragments: &[Fragment],
    lo: Option<&[u8]>,
    hi: Option<&[u8]>,
) -> Vec<Fragment> {
    let cmp = |a: &[u8], b: &[u8]| icmp.compare_user(a, b);
    let mut out = Vec::new();
    for f in fragments {
        let start = match lo {
            Some(lo) if cmp(&f.start, lo) == Ordering::Less => lo,
            _ => f.start.as_slice(),
        };
        let end = match hi {
            Some(hi) if cmp(&f.end, hi) == Ordering::Greater => hi,
            _ => f.end.as_slice(),
        };
        if cmp(start, end) == Ordering::Less {
            out.push(Fragment {
                start: start.to_vec(),
                end: end.to_vec(),
                sequences: f.sequences.clone(),
            });
        }
    }
    out
}
