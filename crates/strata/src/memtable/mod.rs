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
//! Range tombstones (format extension `range-deletes`) are kept beside the skiplist
//! (`range_dels.rs`): lookups and iterators take them as [`Fragments`]. Nothing is ever
//! removed: memory is returned when the last `Arc` (including iterators') drops.
//!
//! A memtable the database fills ([`MemTable::for_buffer`]) keeps a bloom filter of its user
//! keys when keys order bytewise (`key_filter.rs`): [`get`] of a key it never held then usually
//! returns without searching the skiplist. Each key is added to it before its entry is linked,
//! so a lookup that could see the entry also sees the key in the filter.
//!
//! [`get`]: MemTable::get

mod arena;
mod key_filter;
mod range_dels;
mod skiplist;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::error::Result;
use crate::iter::InternalIterator;
use crate::range_del::Fragments;
use crate::util::internal_key::{
    pack_trailer, parse_internal_key, InternalKeyComparator, SequenceNumber, ValueType,
    VALUE_TYPE_FOR_SEEK,
};
use key_filter::KeyFilter;
use range_dels::RangeDels;

/// The newest entry of a key a memtable lookup found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MemEntry<'a> {
    pub(crate) sequence: SequenceNumber,
    pub(crate) value_type: ValueType,
    /// The stored value (an expiring value's starts with its expiry time).
    pub(crate) value: &'a [u8],
}

/// A sorted, append-only set of entries. See the module docs for the contract.
pub(crate) struct MemTable {
    list: Arc<skiplist::SkipList>,
    /// The user keys added, for lookups of keys never added; see the module documentation.
    filter: Option<KeyFilter>,
    range_dels: RangeDels,
    /// Record bytes of the values in value files that this memtable's pointers name (format
    /// extension `value-separation`), as its writers counted them
    /// ([`MemTableWriter::count_separated`]).
    separated: AtomicU64,
}

impl MemTable {
    /// A memtable without a key filter, for one that is written once and read little: a
    /// repair's, a replayed log's that only becomes a table, or a read-only handle's merge of
    /// several older logs (left only by a writer that crashed with many).
    pub(crate) fn new(icmp: InternalKeyComparator) -> MemTable {
        MemTable::with_filter(icmp, None)
    }

    /// A memtable that fills up to about `write_buffer_size` bytes and serves lookups
    /// meanwhile: with a key filter sized for it when keys order bytewise.
    pub(crate) fn for_buffer(icmp: InternalKeyComparator, write_buffer_size: usize) -> MemTable {
        let filter = icmp
            .is_bytewise()
            .then(|| KeyFilter::for_buffer(write_buffer_size));
        MemTable::with_filter(icmp, filter)
    }

    fn with_filter(icmp: InternalKeyComparator, filter: Option<KeyFilter>) -> MemTable {
        MemTable {
            list: Arc::new(skiplist::SkipList::new(icmp)),
            filter,
            range_dels: RangeDels::default(),
            separated: AtomicU64::new(0),
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
            filter: self.filter.as_ref(),
            range_dels: &self.range_dels,
            separated: &self.separated,
        }
    }

    /// The newest entry for `user_key` with a sequence `<= sequence`, if any. (Range
    /// tombstones are not consulted: see [`MemTable::range_tombstones`].)
    pub(crate) fn get(&self, user_key: &[u8], sequence: SequenceNumber) -> Option<MemEntry<'_>> {
        if self
            .filter
            .as_ref()
            .is_some_and(|f| !f.may_contain(user_key))
        {
            return None;
        }
        let lookup = pack_trailer(sequence, VALUE_TYPE_FOR_SEEK);
        let (key, value) = self.list.find_entry(user_key, lookup)?;
        // Entries were encoded by this process from checked batches: they parse.
        let parsed = parse_internal_key(key)?;
        if self
            .comparator()
            .compare_user(parsed.user_key, user_key)
            .is_ne()
        {
            return None;
        }
        Some(MemEntry {
            sequence: parsed.sequence,
            value_type: parsed.value_type,
            value,
        })
    }

    /// Whether [`MemTable::prefetch_add`] has anything to do.
    pub(crate) fn prefetches_adds(&self) -> bool {
        cfg!(target_arch = "x86_64") && self.filter.is_some()
    }

    /// Starts loading into the processor's cache what adding `user_key` will write outside the
    /// skiplist (its key filter's word), for a writer that has other work to do first. A hint.
    #[inline]
    pub(crate) fn prefetch_add(&self, user_key: &[u8]) {
        if let Some(filter) = &self.filter {
            filter.prefetch(user_key);
        }
    }

    /// Every range tombstone added so far, fragmented; `None` when there is none.
    pub(crate) fn range_tombstones(&self) -> Option<Arc<Fragments>> {
        self.range_dels.fragments(self.comparator())
    }

    /// An iterator over all entries (internal key, value) that keeps this memtable alive.
    pub(crate) fn iter(self: &Arc<Self>) -> MemTableIter {
        MemTableIter {
            inner: skiplist::Iter::new(self.list.clone()),
        }
    }

    /// Bytes of memory held by the entries (arena blocks obtained so far) and the range
    /// tombstones: what `write_buffer_size` bounds.
    pub(crate) fn approximate_memory_usage(&self) -> usize {
        self.list.memory_usage() + self.range_dels.memory()
    }

    /// Bytes of memory held by the key filter, on top of [`MemTable::approximate_memory_usage`]
    /// (1/32 of the write buffer, so a memtable switches after as many entries as without it).
    pub(crate) fn filter_memory(&self) -> usize {
        self.filter.as_ref().map_or(0, KeyFilter::memory)
    }

    /// Record bytes of the separated values this memtable's pointers name (the write path
    /// flushes a memtable once they pass a limit: `db/write.rs`).
    pub(crate) fn separated_bytes(&self) -> u64 {
        self.separated.load(Ordering::Relaxed)
    }

    /// Number of entries and range tombstones.
    pub(crate) fn len(&self) -> usize {
        self.list.len() + self.range_dels.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The memtable's writer lock, held while this lives. Lookups and iterators proceed meanwhile.
pub(crate) struct MemTableWriter<'a> {
    inner: skiplist::Writer<'a>,
    filter: Option<&'a KeyFilter>,
    range_dels: &'a RangeDels,
    separated: &'a AtomicU64,
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
        // Before the entry is linked: see the module documentation.
        if let Some(filter) = self.filter {
            filter.add(user_key);
        }
        self.inner
            .insert(user_key, pack_trailer(sequence, value_type), value);
    }

    /// Adds a range tombstone deleting `[start, end)` at `sequence`.
    pub(crate) fn add_range_deletion(
        &mut self,
        sequence: SequenceNumber,
        start: &[u8],
        end: &[u8],
    ) {
        self.range_dels.add(sequence, start, end);
    }

    /// Counts `bytes` of value records that pointers added through this writer name.
    pub(crate) fn count_separated(&mut self, bytes: u64) {
        self.separated.fetch_add(bytes, Ordering::Relaxed);
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
