//! Internal iterators: the cursor interface every sorted source implements (blocks, tables,
//! memtables, levels), and the merging and DB iterators built from them.
//!
//! Contract of [`InternalIterator`]:
//! - A new iterator is not positioned (`valid()` is false) until a `seek*` call.
//! - `key`/`value` may be called only while `valid()`; the slices stay good until the next
//!   call that moves the iterator.
//! - `next`/`prev` may be called only while `valid()`.
//! - An iterator that meets bad data becomes invalid and reports it from `status()`; it never
//!   panics on what it reads.
//!
//! Files: `merging.rs` (sorted union of children), `db_iter.rs` (user keys visible at a
//! snapshot, with bounds), `vec_iter.rs` (a vector-backed iterator for tests).

pub(crate) mod db_iter;
mod error_iter;
pub(crate) mod merging;
#[cfg(test)]
pub(crate) mod vec_iter;

use crate::error::Result;

/// A cursor over sorted key/value entries.
pub(crate) trait InternalIterator: Send {
    fn valid(&self) -> bool;
    fn seek_to_first(&mut self);
    fn seek_to_last(&mut self);
    /// Positions at the first entry with key `>= target`.
    fn seek(&mut self, target: &[u8]);
    fn next(&mut self);
    fn prev(&mut self);
    fn key(&self) -> &[u8];
    fn value(&self) -> &[u8];
    /// The first error met, if any.
    fn status(&self) -> Result<()>;
    /// Moving forward, moves every source of a merge from child `first_child` on (in the
    /// merge's child order) that is on an entry below `target` to its first entry `>= target`,
    /// so that the entries skipped are never yielded. For a caller that knows those sources
    /// hold nothing visible there (entries older than a range tombstone of a newer source:
    /// `db_iter.rs`). Returns whether any source moved. Anything that is not a merge of
    /// several children ignores it, and so does a merge moving backward.
    fn skip_older_sources(&mut self, _first_child: usize, _target: &[u8]) -> bool {
        false
    }
}

impl<I: InternalIterator + ?Sized> InternalIterator for Box<I> {
    fn valid(&self) -> bool {
        (**self).valid()
    }
    fn seek_to_first(&mut self) {
        (**self).seek_to_first()
    }
    fn seek_to_last(&mut self) {
        (**self).seek_to_last()
    }
    fn seek(&mut self, target: &[u8]) {
        (**self).seek(target)
    }
    fn next(&mut self) {
        (**self).next()
    }
    fn prev(&mut self) {
        (**self).prev()
    }
    fn key(&self) -> &[u8] {
        (**self).key()
    }
    fn value(&self) -> &[u8] {
        (**self).value()
    }
    fn status(&self) -> Result<()> {
        (**self).status()
    }
    fn skip_older_sources(&mut self, first_child: usize, target: &[u8]) -> bool {
        (**self).skip_older_sources(first_child, target)
    }
}
pub(crate) use error_iter::ErrorIter;
