//! The compactions in flight, so that several can run at once without meeting (RocksDB marks
//! such files "being compacted", Pebble checks "in-progress compactions").
//!
//! A compaction is entered here when it is picked, before the state mutex that picked it is
//! released, and leaves once its edit is installed (or given up). A memtable flush is entered
//! for the time its edit is being written: the table's level is chosen by then, but the
//! version does not show it yet.
//!
//! Contract: while a compaction `r` is in flight, a compaction `c` may start only when
//! [`Running::conflicts`] says no, which holds when:
//! - no input file of `c` is an input of `r` (no two compactions take one file: each edit
//!   deletes files the current version holds);
//! - when both write to the same level, their user-key ranges (of all inputs, inclusive) do
//!   not meet: outputs span the gaps between inputs, so two outputs of one level from
//!   meeting ranges could overlap;
//! - they do not both take files of level 0 (its files overlap one another, and which of them
//!   a compaction must take depends on all of them);
//! - when `r` is a flush, `c` does not write above the flushed table's level where their
//!   ranges meet (the table is newer than anything `c` writes).
//!
//! These are enough for the version's invariants: a file of level `L` inside a compaction's
//! key range is one of its inputs (the inputs of a level are every file overlapping the
//! range of the level above, and a level's files are sorted and disjoint), so a compaction
//! that writes to `L` never lands over a file of `L` another compaction keeps, and what it
//! writes is newer than what any other compaction moves below it in its range. A flush is
//! kept above the output level of every compaction whose range it meets
//! ([`Running::flush_level`]): the compaction decided which deletions it may drop from the
//! levels below its output, and its outputs may span the gap the table would land in.
//!
//! Thread safety: none of its own; it lives in the database state, under its mutex.

use std::cmp::Ordering;

use super::Compaction;
use crate::util::internal_key::{user_key, InternalKeyComparator};

/// One compaction, or flush, in flight.
struct InFlight {
    id: u64,
    /// The first level its inputs come from (for a flush: the level its table goes to).
    level: usize,
    output_level: usize,
    /// User keys `[smallest, largest]` of all its inputs (of a flush: of its table).
    smallest: Vec<u8>,
    largest: Vec<u8>,
    /// Numbers of its input files (none for a flush).
    files: Vec<u64>,
}

/// Proof that an entry was made in [`Running`]; hand it back to [`Running::finish`].
#[derive(Debug)]
#[must_use = "an entry left in flight keeps its files and key range from every compaction"]
pub(crate) struct InFlightId(u64);

/// The compactions and the flush in flight. See the module documentation.
pub(crate) struct Running {
    icmp: InternalKeyComparator,
    entries: Vec<InFlight>,
    next_id: u64,
}

impl Running {
    pub(crate) fn new(icmp: InternalKeyComparator) -> Running {
        Running {
            icmp,
            entries: Vec::new(),
            next_id: 0,
        }
    }

    /// Whether table `number` is an input of a compaction in flight.
    pub(crate) fn being_compacted(&self, number: u64) -> bool {
        self.entries.iter().any(|e| e.files.contains(&number))
    }

    /// Whether `c` may not start beside the compactions in flight (see the module
    /// documentation). A compaction without inputs conflicts with nothing.
    pub(crate) fn conflicts(&self, c: &Compaction) -> bool {
        let Some((smallest, largest)) = Compaction::range_of(&self.icmp, c.inputs.iter().flatten())
        else {
            return false;
        };
        let (smallest, largest) = (user_key(&smallest), user_key(&largest));
        self.entries.iter().any(|e| {
            let flush = e.files.is_empty();
            c.inputs
                .iter()
                .flatten()
                .any(|f| e.files.contains(&f.number()))
                || (c.level == 0 && e.level == 0 && !flush)
                || (self.meets(e, smallest, largest)
                    && (c.output_level == e.output_level
                        || (flush && c.output_level < e.output_level)))
        })
    }

    /// Enters `c`, which must not conflict, as in flight.
    pub(crate) fn start(&mut self, c: &Compaction) -> InFlightId {
        debug_assert!(!self.conflicts(c), "{} conflicts", c.summary());
        let (smallest, largest) = Compaction::range_of(&self.icmp, c.inputs.iter().flatten())
            .map(|(s, l)| (user_key(&s).to_vec(), user_key(&l).to_vec()))
            .unwrap_or_default();
        let files = c.inputs.iter().flatten().map(|f| f.number()).collect();
        self.enter(c.level, c.output_level, smallest, largest, files)
    }

    /// Enters a flushed table of user keys `[smallest, largest]` going to `level`, while its
    /// edit is written.
    pub(crate) fn start_flush(
        &mut self,
        level: usize,
        smallest: &[u8],
        largest: &[u8],
    ) -> InFlightId {
        self.enter(
            level,
            level,
            smallest.to_vec(),
            largest.to_vec(),
            Vec::new(),
        )
    }

    fn enter(
        &mut self,
        level: usize,
        output_level: usize,
        smallest: Vec<u8>,
        largest: Vec<u8>,
        files: Vec<u64>,
    ) -> InFlightId {
        let id = self.next_id;
        self.next_id += 1;
        self.entries.push(InFlight {
            id,
            level,
            output_level,
            smallest,
            largest,
            files,
        });
        InFlightId(id)
    }

    /// Removes the entry `id` names.
    pub(crate) fn finish(&mut self, id: InFlightId) {
        self.entries.retain(|e| e.id != id.0);
    }

    /// The deepest level at most `level` a flushed table of user keys `[smallest, largest]`
    /// may go to: above the output level of every compaction in flight whose range it meets.
    pub(crate) fn flush_level(&self, smallest: &[u8], largest: &[u8], level: usize) -> usize {
        self.entries
            .iter()
            .filter(|e| !e.files.is_empty() && self.meets(e, smallest, largest))
            .fold(level, |level, e| {
                level.min(e.output_level.saturating_sub(1))
            })
    }

    /// Whether `e`'s key range and the user keys `[smallest, largest]` share a key.
    fn meets(&self, e: &InFlight, smallest: &[u8], largest: &[u8]) -> bool {
        self.icmp.compare_user(smallest, &e.largest) != Ordering::Greater
            && self.icmp.compare_user(largest, &e.smallest) != Ordering::Less
    }
}

#[cfg(test)]
mod tests;
