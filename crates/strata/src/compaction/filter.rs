//! Compaction filters ([`Options::compaction_filter`](crate::Options::compaction_filter)): a
//! user callback that may drop or rewrite entries as compactions meet them, and the same
//! rewrite used to reclaim expired values (format extension `expiring-keys`).
//!
//! Contract (what `db/compaction_job.rs` guarantees the callback and the readers):
//! - The filter is asked about an entry only when the entry is a value (plain, or expiring
//!   and not expired), the newest entry of its key among the compaction's inputs, and newer
//!   than every live snapshot: no snapshot taken before the compaction began can see it.
//!   Snapshots taken while such a compaction runs keep the view of the database they were
//!   taken on (`DB::snapshot`), so no snapshot ever sees an entry change.
//! - [`FilterDecision::Remove`] turns the entry into a deletion at its sequence number: older
//!   entries of the key stay hidden (they do not come back), and the deletion itself is
//!   dropped as any deletion is, once nothing below it needs hiding.
//!   [`FilterDecision::ChangeValue`] keeps the entry's sequence number (and, for an expiring
//!   value, its expiry time) with the new value.
//! - Flushes of memtables and compactions that only move a table down a level call no filter.
//! - The filter runs on the compaction's threads (several at once with subcompactions), so it
//!   must be `Send + Sync`; a panic in it fails the compaction like an I/O error would.
//!
//! Expired values are rewritten the same way whatever the snapshots: an expired value reads
//! as a deletion for every reader at every later time, so it becomes one (its value bytes
//! reclaimed), and goes away like a deletion once it hides nothing. This assumes the `Env`'s
//! clock does not go back; if it does, a value reclaimed meanwhile does not come back.

use crate::util::entry::{encode_expiring, expired, split_expiring};
use crate::util::internal_key::{ParsedInternalKey, SequenceNumber, ValueType};

/// What a [`CompactionFilter`] decides for one entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilterDecision {
    /// Keep the entry as it is.
    Keep,
    /// Delete the key (as a `delete` at the entry's sequence number would).
    Remove,
    /// Keep the key with this value instead.
    ChangeValue(Vec<u8>),
}

/// A user callback compactions ask about the newest entry of each key they rewrite; see the
/// module documentation for when it is called.
pub trait CompactionFilter: Send + Sync {
    /// Decides what becomes of the entry `key` → `value` (the user's bytes; an expiring
    /// value without its expiry time) as a compaction writes it to `level`.
    fn filter(&self, level: usize, key: &[u8], value: &[u8]) -> FilterDecision;
}

impl std::fmt::Debug for dyn CompactionFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CompactionFilter")
    }
}

/// What a compaction writes for an entry it keeps.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Rewrite {
    /// The entry as it is.
    Keep,
    /// A deletion of its key at its sequence number.
    Delete,
    /// The entry with this stored value.
    Value(Vec<u8>),
}

/// How one compaction rewrites entries; see the module documentation.
#[derive(Clone, Copy, Default)]
pub(crate) struct Rewrites<'a> {
    /// The time expired values are judged at; `None` when the database has no expiring keys.
    pub(crate) now: Option<u64>,
    /// The user's filter, asked only about entries with sequence numbers above the second
    /// field (the newest live snapshot's, 0 without one).
    pub(crate) filter: Option<(&'a dyn CompactionFilter, SequenceNumber)>,
}

impl Rewrites<'_> {
    /// What to write for an entry the compaction keeps: `key` and its stored `value`,
    /// written to `level`; `newest_of_key` when no newer entry of its user key is among the
    /// inputs.
    pub(crate) fn rewrite(
        &self,
        level: usize,
        key: &ParsedInternalKey<'_>,
        value: &[u8],
        newest_of_key: bool,
    ) -> Rewrite {
        let filter = self
            .filter
            .filter(|&(_, above)| newest_of_key && key.sequence > above)
            .map(|(filter, _)| filter);
        match key.value_type {
            ValueType::Value => match filter.map(|f| f.filter(level, key.user_key, value)) {
                Some(FilterDecision::Remove) => Rewrite::Delete,
                Some(FilterDecision::ChangeValue(new)) => Rewrite::Value(new),
                Some(FilterDecision::Keep) | None => Rewrite::Keep,
            },
            ValueType::ExpiringValue => {
                // Too short for its expiry time: kept, so the damage stays visible.
                let Some((expires_at, user_value)) = split_expiring(value) else {
                    return Rewrite::Keep;
                };
                if self.now.is_some_and(|now| expired(expires_at, now)) {
                    return Rewrite::Delete;
                }
                match filter.map(|f| f.filter(level, key.user_key, user_value)) {
                    Some(FilterDecision::Remove) => Rewrite::Delete,
                    Some(FilterDecision::ChangeValue(new)) => {
                        let mut stored = Vec::new();
                        encode_expiring(&mut stored, expires_at, &new);
                        Rewrite::Value(stored)
                    }
                    Some(FilterDecision::Keep) | None => Rewrite::Keep,
                }
            }
            // Value separation and compaction filters are not enabled together (`db/open.rs`).
            ValueType::Deletion | ValueType::RangeDeletion | ValueType::ValuePointer => {
                Rewrite::Keep
            }
        }
    }
}
