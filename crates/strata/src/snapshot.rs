//! Snapshots: pinned sequence numbers that reads can be made at.
//!
//! A [`SnapshotList`] counts, per sequence number, the [`Snapshot`] handles that pin it; while
//! a sequence number is pinned, compactions keep every entry a read at it can see (they ask
//! [`SnapshotList::oldest`] and [`SnapshotList::pinned`]: an entry a newer one hides from every
//! pinned sequence number that sees it goes, [`hidden_by_newer`]). Dropping the last clone of a snapshot releases its pin.
//!
//! A snapshot of a read-only handle also holds the view it was taken on (`pin_with_view`):
//! the writer beside it compacts without knowing about this process's snapshots, so reads at
//! the snapshot must keep going to the tables and memtables that were current then.
//!
//! Thread safety: the list has its own mutex, taken only to pin, release and ask for the
//! oldest pin. The database pins under its state mutex too (reading its last sequence number
//! and pinning it is one step for compactions, which ask under that mutex), so a compaction
//! never misses a snapshot being taken; a release may race with a compaction, which then
//! keeps a little more than it needed to.

use std::any::Any;
use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::Mutex;

/// The pinned sequence numbers of one database, with how many snapshots hold each.
#[derive(Debug, Default)]
pub(crate) struct SnapshotList {
    pins: Mutex<BTreeMap<u64, usize>>,
}

impl SnapshotList {
    /// Pins `sequence` for as long as the returned snapshot (or a clone) lives.
    pub(crate) fn pin(self: &Arc<Self>, sequence: u64) -> Snapshot {
        self.pin_inner(sequence, None)
    }

    /// Pins `sequence` and keeps `view` (what reads at it must use) alive with it.
    pub(crate) fn pin_with_view(
        self: &Arc<Self>,
        sequence: u64,
        view: Arc<dyn Any + Send + Sync>,
    ) -> Snapshot {
        self.pin_inner(sequence, Some(view))
    }

    fn pin_inner(
        self: &Arc<Self>,
        sequence: u64,
        view: Option<Arc<dyn Any + Send + Sync>>,
    ) -> Snapshot {
        *self.pins.lock().entry(sequence).or_insert(0) += 1;
        Snapshot {
            pin: Arc::new(Pin {
                sequence,
                list: Arc::clone(self),
                view,
            }),
        }
    }

    /// The oldest pinned sequence number, if any.
    pub(crate) fn oldest(&self) -> Option<u64> {
        self.pins.lock().keys().next().copied()
    }

    /// Every pinned sequence number, oldest first.
    pub(crate) fn pinned(&self) -> Vec<u64> {
        self.pins.lock().keys().copied().collect()
    }

    /// The newest pinned sequence number, if any.
    pub(crate) fn newest(&self) -> Option<u64> {
        self.pins.lock().keys().next_back().copied()
    }

    fn release(&self, sequence: u64) {
        let mut pins = self.pins.lock();
        if let Some(count) = pins.get_mut(&sequence) {
            *count -= 1;
            if *count == 0 {
                pins.remove(&sequence);
            }
        }
    }
}

/// Whether an entry at `sequence`, whose key has a newer entry at `newer`, is one no reader
/// can see: no snapshot of `pinned` (oldest first) reads at a sequence number from `sequence`
/// up to before `newer`, so every snapshot that sees it sees the newer entry, and so do reads
/// of the latest state (a read or iterator begun earlier holds the tables it reads from).
pub(crate) fn hidden_by_newer(pinned: &[u64], sequence: u64, newer: u64) -> bool {
    let first_seeing = pinned.partition_point(|&pin| pin < sequence);
    pinned.get(first_seeing).is_none_or(|&pin| pin >= newer)
}

/// A consistent, read-only view of the database at the moment it was taken: pass it in
/// `ReadOptions::snapshot` to read as of then.
///
/// Cheap to clone (clones share the same pin). Thread safety: `Send + Sync`.
#[derive(Clone)]
pub struct Snapshot {
    pin: Arc<Pin>,
}

struct Pin {
    sequence: u64,
    list: Arc<SnapshotList>,
    /// The view reads at this snapshot use, when it is not simply the latest one.
    view: Option<Arc<dyn Any + Send + Sync>>,
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot")
            .field("sequence", &self.pin.sequence)
            .finish()
    }
}

impl Snapshot {
    /// The sequence number this snapshot reads at.
    pub fn sequence(&self) -> u64 {
        self.pin.sequence
    }

    /// The view pinned with this snapshot, if it was taken from `list`'s database with one.
    pub(crate) fn view_in(&self, list: &Arc<SnapshotList>) -> Option<Arc<dyn Any + Send + Sync>> {
        if Arc::ptr_eq(&self.pin.list, list) {
            self.pin.view.clone()
        } else {
            None
        }
    }
}

impl Drop for Pin {
    fn drop(&mut self) {
        self.list.release(self.sequence);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_is_hidden_when_no_pin_sees_it_without_its_newer_one() {
        // No pins: the newer entry hides it from every reader.
        assert!(hidden_by_newer(&[], 5, 9));
        // A pin between the two sees it and not the newer one.
        assert!(!hidden_by_newer(&[7], 5, 9));
        assert!(!hidden_by_newer(&[5], 5, 9));
        // Pins before it (they see neither) or at or after the newer one (they see both).
        assert!(hidden_by_newer(&[1, 4, 9, 20], 5, 9));
        assert!(!hidden_by_newer(&[1, 4, 8, 20], 5, 9));
    }

    #[test]
    fn the_oldest_pin_lasts_until_its_last_clone_is_dropped() {
        let list = Arc::new(SnapshotList::default());
        assert_eq!(list.oldest(), None);
        let newer = list.pin(9);
        let older = list.pin(5);
        let same = list.pin(5);
        let clone = older.clone();
        assert_eq!((older.sequence(), list.oldest()), (5, Some(5)));
        drop(older);
        drop(same);
        assert_eq!(list.oldest(), Some(5), "a clone still holds the pin");
        drop(clone);
        assert_eq!(list.oldest(), Some(9));
        drop(newer);
        assert_eq!(list.oldest(), None);
    }
}
