//! The engine iterator behind a Python iterator: over entries, or over keys alone for
//! `include_value=False`, which never reads a value file (a database with value separation
//! keeps large values beside the tree; see `DB(..., value_separation=...)`).

use strata::{DbIterator, KeyIterator};

/// An engine iterator of either kind; it dereferences to the positioning both share.
pub(crate) enum EngineCursor {
    Entries(DbIterator),
    Keys(KeyIterator),
}

/// The positioning of whichever engine iterator it holds.
impl std::ops::Deref for EngineCursor {
    type Target = dyn strata::Cursor;

    fn deref(&self) -> &Self::Target {
        match self {
            EngineCursor::Entries(it) => it,
            EngineCursor::Keys(it) => it,
        }
    }
}

impl std::ops::DerefMut for EngineCursor {
    fn deref_mut(&mut self) -> &mut Self::Target {
        match self {
            EngineCursor::Entries(it) => it,
            EngineCursor::Keys(it) => it,
        }
    }
}

impl EngineCursor {
    /// The current value; empty for a keys-only iterator (whose callers never ask).
    pub(crate) fn value(&self) -> &[u8] {
        match self {
            EngineCursor::Entries(it) => it.value(),
            EngineCursor::Keys(_) => &[],
        }
    }
}
