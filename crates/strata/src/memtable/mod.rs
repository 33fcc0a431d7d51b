//! The memtable: recent writes, held sorted in memory until they are flushed to a level-0 table.
//!
//! Thread safety: `MemTable` is `Send + Sync` and shared as `Arc<MemTable>`. Reads ([`get`],
//! iterators) are lock-free and run concurrently with a writer. Writes go through a writer lock:
//! [`MemTable::writer`] takes it once for a whole write group (what the DB's write path does,
//! since it already serialises writers, so the lock is never contended), [`MemTable::add`] takes it
//! for a single entry. A racing second writer only waits; it can never corrupt the list, so `add`
//! is safe to call from anywhere.
//!
//! Each entry is one skiplist node holding `user_key ++ fixed64_le(sequence << 8 | type)` (the
//! internal key) and the value; the node layout is documented in `skiplist.rs`. Entries order by
//! user key ascending, then sequence descending, so the newest version of a key comes first.
//! Nothing is ever removed: memory is returned when the last `Arc` (including iterators') drops.
//!
//! [`get`]: MemTable::get

mod arena;
mod skiplist;

use std::sync::Arc;

use crate::error::Result;
use crate::iter::InternalIterator;
use crate::util::internal_key::{
    pack_trailer, InternalKeyComparator, SequenceNumber, ValueType, VALUE_TYPE_FOR_SEEK,
};

/// Result of a memtable lookup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MemGet {
    /// The newest visible version is a value.
    Found(Vec<u8>),
    /// The newest visible version is a deletion: the key is absent, stop looking further down.
    Deleted,
    /// No visible version here: look in older sources.
    Absent,
}

/// A sorted, append-only set of entries. See the module docs for the contract.
pub(crate) struct MemTable {
    list: Arc<skiplist::SkipList>,
}

impl MemTable {
    pub(crate) fn new(icmp: InternalKeyComparator) -> MemTable {
        MemTable {
            list: Arc::new(skiplist::SkipList::new(icmp)),
        }
    }

    pub(crate) fn comparator(&self) -> &InternalKeyComparator {
        self.list.comparator()
    }

    #[cfg(test)]
    /// Inserts one entry, taking the writer lock for it. See [`MemTable::writer`] to insert
    /// many under one lock.
    ///
    /// `sequence` must not exceed `MAX_SEQUENCE` and `(user_key, sequence)` should be new;
    /// `user_key.len() + 8` and `value.len()` must fit in `u32` (panics otherwise; LevelDB's
    /// write batch cannot carry larger).
    pub(crate) fn add(
        &self,
        sequence: SequenceNumber,
        value_type: ValueType,
        user_key: &[u8],
        value: &[u8],
    ) {
        self.writer().add(sequence, value_type, user_key, value);
    }

    /// Takes the writer lock until the returned guard drops (blocks while another writer holds
    /// it). Readers are never blocked.
    pub(crate) fn writer(&self) -> MemTableWriter<'_> {
        MemTableWriter {
            inner: self.list.writer(),
        }
    }

    /// The newest entry for `user_key` with a sequence `<= sequence`.
    pub(crate) fn get(&self, user_key: &[u8], sequence: SequenceNumber) -> MemGet {
        let lookup = pack_trailer(sequence, VALUE_TYPE_FOR_SEEK);
        let Some((key, value)) = self.list.find_entry(user_key, lookup) else {
            return MemGet::Absent;
        };
        let found = crate::util::internal_key::user_key(key);
        if self.comparator().compare_user(found, user_key).is_ne() {
            return MemGet::Absent;
        }
        let trailer = crate::util::internal_key::trailer(key);
        if trailer & 0xff == ValueType::Deletion as u64 {
            MemGet::Deleted
        } else {
            MemGet::Found(value.to_vec())
        }
    }

    /// An iterator over all entries (internal key, value) that keeps this memtable alive.
    pub(crate) fn iter(self: &Arc<Self>) -> MemTableIter {
        MemTableIter {
            inner: skiplist::Iter::new(self.list.clone()),
        }
    }

    /// Bytes of memory held by the entries (arena blocks obtained so far).
    pub(crate) fn approximate_memory_usage(&self) -> usize {
        self.list.memory_usage()
    }

    /// Number of entries.
    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The memtable's writer lock, held while this lives. Lookups and iterators proceed meanwhile.
pub(crate) struct MemTableWriter<'a> {
    inner: skiplist::Writer<'a>,
}

impl MemTableWriter<'_> {
    /// Inserts one entry; same contract as [`MemTable::add`].
    #[inline]
    pub(crate) fn add(
        &mut self,
        sequence: SequenceNumber,
        value_type: ValueType,
        user_key: &[u8],
        value: &[u8],
    ) {
        self.inner
            .insert(user_key, pack_trailer(sequence, value_type), value);
    }
}

/// Iterator over a memtable's entries: `key()` is the internal key, `value()` the value.
pub(crate) struct MemTableIter {
    inner: skiplist::Iter,
}

impl InternalIterator for MemTableIter {
    fn valid(&self) -> bool {
        self.inner.valid()
    }
    fn seek_to_first(&mut self) {
        self.inner.seek_to_first();
    }
    fn seek_to_last(&mut self) {
        self.inner.seek_to_last();
    }
    fn seek(&mut self, target: &[u8]) {
        self.inner.seek(target);
    }
    fn next(&mut self) {
        self.inner.next();
    }
    fn prev(&mut self) {
        self.inner.prev();
    }
    fn key(&self) -> &[u8] {
        self.inner.key()
    }
    fn value(&self) -> &[u8] {
        self.inner.value()
    }
    fn status(&self) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests;
