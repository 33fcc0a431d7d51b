//! What reads without a snapshot take, without the state mutex: the current
//! [`SuperVersion`] and the last sequence number whose write is applied to it.
//!
//! Contract: both are published only with the state mutex held (`DbState::refresh_super_version`
//! and `DbState::publish_last_sequence`), the sequence number only after its group's entries
//! are in the memtable. A reader loads the sequence number first, then the view, so the view
//! it gets is the one the sequence number was published for or a newer one. A newer view holds
//! every write up to that sequence number (a memtable stays in every later view, as the
//! immutable memtable or as the tables it was flushed to), but not necessarily every *version*
//! a read at it needs: a compaction installed since may have dropped a value that a write
//! after the sequence number shadows (the writer's compactions keep only what its snapshots
//! need, and a read-only handle's refresh adopts whatever the writer compacted). So a reader
//! reads at the larger of the sequence number and the view's own
//! ([`SuperVersion::sequence`]: the last one when the view was made, whose writes it holds
//! whole): a state at least as new as the one the sequence number names, and whole.
//!
//! The view is handed out as an `arc_swap` guard: a reader holding one keeps its view alive
//! exactly as a clone of the `Arc` would (a replaced view a guard still reaches is counted as a
//! strong reference, which value-file deletion relies on: `db/value_files.rs`), without the
//! contended reference count of a shared `Arc` on the read path.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use arc_swap::{ArcSwap, Guard};

use super::SuperVersion;

/// The read view of the latest state. Thread-safe; see the module doc for its invariants.
pub(crate) struct Published {
    view: ArcSwap<SuperVersion>,
    last_sequence: AtomicU64,
}

/// A reader's hold on the view it loaded.
pub(crate) type ViewGuard = Guard<Arc<SuperVersion>>;

impl Published {
    pub(crate) fn new(view: Arc<SuperVersion>, last_sequence: u64) -> Published {
        Published {
            view: ArcSwap::new(view),
            last_sequence: AtomicU64::new(last_sequence),
        }
    }

    /// The latest view and the sequence number to read it at (see the module doc).
    #[inline]
    pub(crate) fn load(&self) -> (ViewGuard, u64) {
        let sequence = self.last_sequence.load(Ordering::Acquire);
        let view = self.view.load();
        let sequence = sequence.max(view.sequence);
        (view, sequence)
    }

    /// The latest view, as an `Arc` of its own.
    pub(crate) fn view(&self) -> Arc<SuperVersion> {
        self.view.load_full()
    }

    /// Replaces the view. Called with the state mutex held.
    pub(super) fn set_view(&self, view: Arc<SuperVersion>) {
        self.view.store(view);
    }

    /// Makes writes up to `sequence` visible. Called with the state mutex held, after the
    /// writes are in the memtable of the published view.
    pub(super) fn set_last_sequence(&self, sequence: u64) {
        self.last_sequence.store(sequence, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::OnceLock;

    use super::*;
    use crate::memtable::MemTable;
    use crate::util::comparator::BytewiseComparator;
    use crate::util::internal_key::InternalKeyComparator;
    use crate::version::version::Version;

    fn view(sequence: u64) -> Arc<SuperVersion> {
        let icmp = InternalKeyComparator::new(BytewiseComparator::shared());
        Arc::new(SuperVersion {
            mem: Arc::new(MemTable::new(icmp.clone())),
            imm: None,
            version: Arc::new(Version::new(icmp, Default::default())),
            table_tombstones: OnceLock::new(),
            sequence,
        })
    }

    /// Between a new view's store and its sequence number's, a reader gets the new view with
    /// the old number: it reads the view at the view's own number, never older (a
    /// read-only handle's readers saw values compactions had dropped: lock_free_reads_see_
    /// whole_batches.rs, about one run in ten).
    #[test]
    fn a_view_is_never_read_at_an_older_sequence_than_its_own() {
        let published = Published::new(view(10), 10);
        published.set_view(view(20));
        let (loaded, sequence) = published.load();
        assert_eq!((loaded.sequence, sequence), (20, 20));
        published.set_last_sequence(25);
        assert_eq!(published.load().1, 25);
    }
}
