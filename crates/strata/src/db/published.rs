//! What reads without a snapshot take, without the state mutex: the current
//! [`SuperVersion`] and the last sequence number whose write is applied to it.
//!
//! Contract: both are published only with the state mutex held (`DbState::refresh_super_version`
//! and `DbState::publish_last_sequence`), the sequence number only after its group's entries
//! are in the memtable. A reader loads the sequence number first, then the view; since views
//! only ever replace each other with newer ones that hold everything the older one did (a
//! memtable stays in every later view, as the immutable memtable or as the tables it was
//! flushed to), the view it gets holds every write up to the sequence number it got. The view
//! is handed out as an `arc_swap` guard: a reader holding one keeps its view alive exactly as
//! a clone of the `Arc` would (a replaced view a guard still reaches is counted as a strong
//! reference, which value-file deletion relies on: `db/value_files.rs`), without the contended
//! reference count of a shared `Arc` on the read path.

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
    pub(crate) fn load(&self) -> (ViewGuard, u64) {
        let sequence = self.last_sequence.load(Ordering::Acquire);
        (self.view.load(), sequence)
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
