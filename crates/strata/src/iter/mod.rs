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
}
pub(crate) use error_iter::ErrorIter;
