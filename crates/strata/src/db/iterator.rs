//! The public iterator: a cursor over user keys and values as of one sequence number.
//!
//! A value kept in a value file (format extension `value-separation`) is read when the
//! iterator lands on its key; a value that cannot be read stops the iteration with the error.
//! A [`KeyIterator`] walks the same keys with their values' lengths and never reads a value
//! file.

use std::sync::Arc;

use super::read::value_file_read_would_block;
use super::value_files::pointer_len;
use super::SuperVersion;
use crate::error::{Error, Result};
use crate::iter::db_iter::DbIter;
use crate::vlog::reader::ValueFiles;

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
    /// Where values kept in value files are read; `None` for a keys-only iterator.
    value_files: Option<Arc<ValueFiles>>,
    /// Fail at a value a value file holds rather than read it (`ReadOptions::memory_only`).
    memory_only: bool,
    /// The current value, when it is kept in a value file and read.
    resolved: Option<Vec<u8>>,
    /// The current value's length, when it is kept in a value file and not read.
    pointed_len: Option<u64>,
    /// A value that could not be read (sticky: iteration stops).
    failed: Option<Error>,
}

impl std::fmt::Debug for DbIterator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DbIterator")
            .field("valid", &self.inner.valid())
            .finish_non_exhaustive()
    }
}

impl DbIterator {
    pub(crate) fn new(
        inner: DbIter,
        view: Arc<SuperVersion>,
        value_files: Option<Arc<ValueFiles>>,
        memory_only: bool,
    ) -> DbIterator {
        DbIterator {
            inner,
            _view: view,
            value_files,
            memory_only,
            resolved: None,
            pointed_len: None,
            failed: None,
        }
    }

    /// True when positioned at an entry.
    pub fn valid(&self) -> bool {
        self.failed.is_none() && self.inner.valid()
    }

    /// Positions at the first key (at or after the lower bound).
    pub fn seek_to_first(&mut self) {
        self.moved(DbIter::seek_to_first)
    }

    /// Positions at the last key (before the upper bound).
    pub fn seek_to_last(&mut self) {
        self.moved(DbIter::seek_to_last)
    }

    /// Positions at the first key `>= target`.
    pub fn seek(&mut self, target: &[u8]) {
        self.moved(|inner| inner.seek(target))
    }

    /// Moves to the next key. Requires `valid()`.
    pub fn next(&mut self) {
        if self.valid() {
            self.moved(DbIter::next)
        }
    }

    /// Moves to the previous key. Requires `valid()`.
    pub fn prev(&mut self) {
        if self.valid() {
            self.moved(DbIter::prev)
        }
    }

    /// The current key. Empty when not `valid()`.
    pub fn key(&self) -> &[u8] {
        if self.valid() {
            self.inner.key()
        } else {
            &[]
        }
    }

    /// The current value. Empty when not `valid()`.
    pub fn value(&self) -> &[u8] {
        match &self.resolved {
            _ if !self.valid() => &[],
            Some(value) => value,
            None => self.inner.value(),
        }
    }

    /// The first error met (corrupt data, a value that cannot be read, I/O failure), if any.
    /// Iteration stops at an error.
    pub fn status(&self) -> Result<()> {
        match &self.failed {
            Some(e) => Err(e.clone()),
            None => self.inner.status(),
        }
    }

    /// Runs a positioning call, then reads the value it lands on if a value file holds it.
    fn moved(&mut self, step: impl FnOnce(&mut DbIter)) {
        if self.failed.is_some() {
            return;
        }
        step(&mut self.inner);
        self.resolved = None;
        self.pointed_len = None;
        if !self.inner.value_is_pointer() {
            return;
        }
        let (key, pointer) = (self.inner.key(), self.inner.value());
        let outcome = match &self.value_files {
            Some(_) if self.memory_only => Err(value_file_read_would_block(key)),
            Some(files) => files.read(key, pointer).map(|v| self.resolved = Some(v)),
            None => pointer_len(key, pointer).map(|n| self.pointed_len = Some(n)),
        };
        if let Err(e) = outcome {
            self.failed = Some(e);
        }
    }

    /// The current value's length; 0 when not `valid()`.
    fn value_len(&self) -> u64 {
        match self.pointed_len {
            Some(len) if self.valid() => len,
            _ => self.value().len() as u64,
        }
    }
}

/// A cursor over the database's keys and the lengths of their values, in comparator order,
/// forward and backward: a [`DbIterator`] that never reads a value kept in a value file
/// ([`Options::value_separation`](crate::Options)), so a scan of keys reads the tree alone.
/// Same positioning, snapshot and error rules as [`DbIterator`].
pub struct KeyIterator {
    inner: DbIterator,
}

impl std::fmt::Debug for KeyIterator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyIterator")
            .field("valid", &self.inner.valid())
            .finish_non_exhaustive()
    }
}

impl KeyIterator {
    pub(crate) fn new(inner: DbIterator) -> KeyIterator {
        KeyIterator { inner }
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
        self.inner.next()
    }

    /// Moves to the previous key. Requires `valid()`.
    pub fn prev(&mut self) {
        self.inner.prev()
    }

    /// The current key. Empty when not `valid()`.
    pub fn key(&self) -> &[u8] {
        self.inner.key()
    }

    /// The length in bytes of the current key's value; 0 when not `valid()`.
    pub fn value_len(&self) -> u64 {
        self.inner.value_len()
    }

    /// The first error met, if any. Iteration stops at an error.
    pub fn status(&self) -> Result<()> {
        self.inner.status()
    }
}

/// The positioning [`DbIterator`] and [`KeyIterator`] share, each method as the iterators'
/// own: code that moves an iterator of either kind (a binding's iterator object, which may
/// hold either) does it through `&mut dyn Cursor`.
pub trait Cursor: Send {
    /// True when positioned at an entry.
    fn valid(&self) -> bool;
    /// Positions at the first key (at or after the lower bound).
    fn seek_to_first(&mut self);
    /// Positions at the last key (before the upper bound).
    fn seek_to_last(&mut self);
    /// Positions at the first key `>= target`.
    fn seek(&mut self, target: &[u8]);
    /// Moves to the next key. Requires `valid()`.
    fn next(&mut self);
    /// Moves to the previous key. Requires `valid()`.
    fn prev(&mut self);
    /// The current key. Empty when not `valid()`.
    fn key(&self) -> &[u8];
    /// The first error met, if any. Iteration stops at an error.
    fn status(&self) -> Result<()>;
}

/// Implements [`Cursor`] for an iterator type by its methods of the same names.
macro_rules! cursor_by_own_methods {
    ($iterator:ty) => {
        impl Cursor for $iterator {
            fn valid(&self) -> bool {
                <$iterator>::valid(self)
            }
            fn seek_to_first(&mut self) {
                <$iterator>::seek_to_first(self)
            }
            fn seek_to_last(&mut self) {
                <$iterator>::seek_to_last(self)
            }
            fn seek(&mut self, target: &[u8]) {
                <$iterator>::seek(self, target)
            }
            fn next(&mut self) {
                <$iterator>::next(self)
            }
            fn prev(&mut self) {
                <$iterator>::prev(self)
            }
            fn key(&self) -> &[u8] {
                <$iterator>::key(self)
            }
            fn status(&self) -> Result<()> {
                <$iterator>::status(self)
            }
        }
    };
}

cursor_by_own_methods!(DbIterator);
cursor_by_own_methods!(KeyIterator);
