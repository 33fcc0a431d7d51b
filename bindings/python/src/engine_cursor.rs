//! The engine iterator behind a Python iterator: over entries, or over keys alone for
//! `include_value=False`, which never reads a value file (a database with value separation
//! keeps large values beside the tree; see `DB(..., value_separation=...)`).

use strata::{DbIterator, KeyIterator};

/// An engine iterator of either kind, with the cursor operations both have.
pub(crate) enum EngineCursor {
    Entries(DbIterator),
    Keys(KeyIterator),
}

/// Runs the same call on whichever iterator `$cursor` holds.
macro_rules! on_either {
    ($cursor:expr, $it:ident => $call:expr) => {
        match $cursor {
            EngineCursor::Entries($it) => $call,
            EngineCursor::Keys($it) => $call,
        }
    };
}

impl EngineCursor {
    pub(crate) fn valid(&self) -> bool {
        on_either!(self, it => it.valid())
    }

    pub(crate) fn seek_to_first(&mut self) {
        on_either!(self, it => it.seek_to_first())
    }

    pub(crate) fn seek_to_last(&mut self) {
        on_either!(self, it => it.seek_to_last())
    }

    pub(crate) fn seek(&mut self, target: &[u8]) {
        on_either!(self, it => it.seek(target))
    }

    pub(crate) fn next(&mut self) {
        on_either!(self, it => it.next())
    }

    pub(crate) fn prev(&mut self) {
        on_either!(self, it => it.prev())
    }

    pub(crate) fn key(&self) -> &[u8] {
        on_either!(self, it => it.key())
    }

    /// The current value; empty for a keys-only iterator (whose callers never ask).
    pub(crate) fn value(&self) -> &[u8] {
        match self {
            EngineCursor::Entries(it) => it.value(),
            EngineCursor::Keys(_) => &[],
        }
    }

    pub(crate) fn status(&self) -> strata::Result<()> {
        on_either!(self, it => it.status())
    }
}
