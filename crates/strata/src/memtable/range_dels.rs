//! The range tombstones of a memtable, kept beside its skiplist.
//!
//! Thread safety: the memtable's one writer appends under `state`'s mutex; readers take the
//! [`Fragments`] of every tombstone added so far, built on first need after an addition and
//! shared until the next one. A reader that knows (through the database's sequence numbers)
//! that a tombstone was added sees it: the addition happens before its write is acknowledged.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::range_del::{Fragments, RangeTombstone};
use crate::util::internal_key::{InternalKeyComparator, SequenceNumber};

/// Per tombstone, what the memtable's memory estimate counts besides its two keys.
const TOMBSTONE_OVERHEAD: usize = 64;

#[derive(Default)]
struct State {
    tombstones: Vec<RangeTombstone>,
    /// Fragments of `tombstones` when they were last built, with how many there were.
    built: Option<(usize, Arc<Fragments>)>,
}

/// See the module documentation.
#[derive(Default)]
pub(super) struct RangeDels {
    state: Mutex<State>,
    /// Tombstones added; read without the lock to skip memtables that have none.
    count: AtomicUsize,
    /// Bytes the tombstones take, for the memtable's memory estimate.
    bytes: AtomicUsize,
}

impl RangeDels {
    pub(super) fn add(&self, sequence: SequenceNumber, start: &[u8], end: &[u8]) {
        let mut state = self.state.lock();
        state.tombstones.push(RangeTombstone {
            start: start.to_vec(),
            end: end.to_vec(),
            sequence,
        });
        self.bytes.fetch_add(
            start.len() + end.len() + TOMBSTONE_OVERHEAD,
            Ordering::Relaxed,
        );
        self.count.store(state.tombstones.len(), Ordering::Release);
    }

    /// The fragments of every tombstone added so far; `None` when there is none.
    pub(super) fn fragments(&self, icmp: &InternalKeyComparator) -> Option<Arc<Fragments>> {
        if self.count.load(Ordering::Acquire) == 0 {
            return None;
        }
        let mut state = self.state.lock();
        let count = state.tombstones.len();
        if let Some((built, fragments)) = &state.built {
            if *built == count {
                return Some(Arc::clone(fragments));
            }
        }
        let fragments = Arc::new(Fragments::new(icmp, state.tombstones.clone()));
        state.built = Some((count, Arc::clone(&fragments)));
        Some(fragments)
    }

    pub(super) fn len(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }

    pub(super) fn memory(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }
}
