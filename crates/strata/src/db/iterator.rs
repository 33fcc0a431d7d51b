//! The public iterator: a cursor over user keys and values as of one sequence number.

use std::sync::Arc;

use super::SuperVersion;
use crate::error::Result;
use crate::iter::db_iter::DbIter;

/// A cursor over the database's keys in comparator order, forward and backward.
///
/// It is unpositioned until a `seek*` call. It sees the database as of its creation (or its
/// snapshot): later writes are invisible. It keeps the memtables and tables it reads alive, so
/// compactions running meanwhile never pull data from under it.
///
/// ```no_run
/// # fn demo(db: &strata::DB) -> strata::Result<()> {
/// let mut it = db.iter();
/// it.seek_to_first();
/// while it.valid() {
///     println!("{:?} = {:?}", it.key(), it.value());
///     it.next();
/// }
/// it.status()
/// # }
/// ```
pub struct DbIterator {
    inner: DbIter,
    /// Keeps the memtables and the version (and so its files) alive.
    _view: Arc<SuperVersion>,
}

impl std::fmt::Debug for DbIterator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DbIterator")
            .field("valid", &self.inner.valid())
            .finish_non_exhaustive()
    }
}

impl DbIterator {
    pub(crate) fn new(inner: DbIter, view: Arc<SuperVersion>) -> DbIterator {
        DbIterator { inner, _view: view }
    }

    /// True when positioned at an entry.
    pub fn valid(&self) -> bool {
        self.inner.valid()
    }

    /// Positions at the first key (at or after the lower bound).
    pub fn seek_to_first(&mut self) {
        self.inner.seek_to_first()
    }

    /// Positions at the last key (before the upper bound).
    pub fn seek_to_last(&mut self) {
        self.inner.seek_to_last()
    }

    /// Positions at the first key `>= target`.
    pub fn seek(&mut self, target: &[u8]) {
        self.inner.seek(target)
    }

    /// Moves to the next key. Requires `valid()`.
    pub fn next(&mut self) {
        if self.inner.valid() {
            self.inner.next()
        }
    }

    /// Moves to the previous key. Requires `valid()`.
    pub fn prev(&mut self) {
        if self.inner.valid() {
            self.inner.prev()
        }
    }

    /// The current key. Empty when not `valid()`.
    pub fn key(&self) -> &[u8] {
        if self.inner.valid() {
            self.inner.key()
        } else {
            &[]
        }
    }

    /// The current value. Empty when not `valid()`.
    pub fn value(&self) -> &[u8] {
        if self.inner.valid() {
            self.inner.value()
        } else {
            &[]
        }
    }

    /// The first error met (corrupt data, I/O failure), if any. Iteration stops at an error.
    pub fn status(&self) -> Result<()> {
        self.inner.status()
    }
}
