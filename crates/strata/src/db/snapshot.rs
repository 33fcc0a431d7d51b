//! Snapshots: a pinned sequence number that reads can be made at.
//!
//! While a snapshot lives, compactions keep every entry it can see. Dropping the last handle
//! releases it.

use std::sync::{Arc, Weak};

use super::DbInner;

/// A consistent, read-only view of the database at the moment it was taken.
///
/// Cheap to clone (clones share the same pin). Thread safety: `Send + Sync`.
#[derive(Clone)]
pub struct Snapshot {
    pin: Arc<Pin>,
}

struct Pin {
    sequence: u64,
    db: Weak<DbInner>,
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
}

impl Drop for Pin {
    fn drop(&mut self) {
        if let Some(db) = self.db.upgrade() {
            let mut state = db.state.lock();
            if let Some(count) = state.snapshots.get_mut(&self.sequence) {
                *count -= 1;
                if *count == 0 {
                    state.snapshots.remove(&self.sequence);
                }
            }
        }
    }
}

/// Pins the current last sequence number.
pub(crate) fn acquire(db: &Arc<DbInner>) -> Snapshot {
    let mut state = db.state.lock();
    let sequence = state.versions.last_sequence;
    *state.snapshots.entry(sequence).or_insert(0) += 1;
    Snapshot {
        pin: Arc::new(Pin {
            sequence,
            db: Arc::downgrade(db),
        }),
    }
}
