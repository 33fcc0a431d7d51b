//! Batched point lookups in the tables of a version (`DB::get_many` below the memtables).
//!
//! Contract: the answer for each key is exactly what [`Version::get`] would give it (the same
//! files consulted in the same order, the same range tombstones joined, the same expiry
//! decision). What a batch saves: the lookups go through the tree level by level, level 0
//! file by file, so each table is found in the table cache once per run of keys it holds
//! rather than once per key; keys come in ascending order, so keys that fall in the same data
//! block follow one another and the block is read once for all of them
//! ([`Table::get_in`]); and each table's filter is asked before any block of it is read.
//!
//! Threads: with `parallel`, a batch of at least twice [`GET_MANY_KEYS_PER_THREAD`] keys is
//! cut in two contiguous runs of the sorted keys, and each run again, down to runs of fewer;
//! the halves go to `rayon::join`, which lets an idle thread of rayon's pool take one while the
//! caller looks up the other, and has the caller look up any the pool leaves. Each run goes
//! through the tree as above on its own; runs share nothing but the table and block caches,
//! and every lookup's answer is the same as on one thread.

use std::cmp::Ordering;
use std::sync::Arc;

use super::table_cache::TableCache;
use super::version::{find_file, FileRef, PointRead, SeekCharge, TableLookup, Version};
use super::NUM_LEVELS;
use crate::error::Result;
use crate::table::reader::{RecentBlock, Table};
use crate::table::BlockReads;
use crate::util::internal_key::user_key;

/// Fewest keys of a run a `get_many` lets another thread look up: handing a run over costs
/// about as much as a few lookups of cached blocks.
pub const GET_MANY_KEYS_PER_THREAD: usize = 16;

/// One key of a batched lookup.
pub(crate) struct BatchedLookup {
    /// The user key with the read's sequence trailer.
    pub(crate) lookup_key: Vec<u8>,
    /// What the memtables found (updated as tables join their tombstones).
    pub(crate) read: PointRead,
    /// The answer once a table decides it; `Absent` when none does.
    pub(crate) result: Option<TableLookup>,
    /// The last file read for this key, and the one charged a seek (see [`Version::get`]).
    last_read: Option<(usize, FileRef)>,
    pub(crate) charge: SeekCharge,
}

impl BatchedLookup {
    pub(crate) fn new(lookup_key: Vec<u8>, read: PointRead) -> BatchedLookup {
        BatchedLookup {
            lookup_key,
            read,
            result: None,
            last_read: None,
            charge: SeekCharge::default(),
        }
    }

    /// Notes that `file` of `level` is read for this key: the first file read is charged a
    /// seek once a second one is.
    fn reading(&mut self, level: usize, file: &FileRef) {
        if self.charge.file.is_none() {
            self.charge.file = self.last_read.take();
        }
        self.last_read = Some((level, Arc::clone(file)));
    }
}

/// The table last used by a run of lookups, with the block it read last.
struct RecentTable {
    number: u64,
    table: Arc<Table>,
    block: RecentBlock,
}

impl Version {
    /// Looks every key of `lookups` up in the tables, with `parallel` on more than this thread
    /// (see the module documentation); `lookups` are sorted by user key and hold each user key
    /// once. Afterwards each holds its answer (`result`, `None` meaning absent) and its seek
    /// charge. Of several runs that fail, the error of the first in key order is returned.
    pub(crate) fn get_many(
        &self,
        reads: BlockReads,
        lookups: &mut [BatchedLookup],
        table_cache: &TableCache,
        parallel: bool,
    ) -> Result<()> {
        if !parallel || lookups.len() < 2 * GET_MANY_KEYS_PER_THREAD {
            return self.get_many_on_this_thread(reads, lookups, table_cache);
        }
        let (low, high) = lookups.split_at_mut(lookups.len() / 2);
        let (low, high) = rayon::join(
            || self.get_many(reads, low, table_cache, true),
            || self.get_many(reads, high, table_cache, true),
        );
        low.and(high)
    }

    /// [`Version::get_many`] on the calling thread.
    fn get_many_on_this_thread(
        &self,
        reads: BlockReads,
        lookups: &mut [BatchedLookup],
        table_cache: &TableCache,
    ) -> Result<()> {
        let mut scratch = Vec::new();
        let covers = |file: &FileRef, ukey: &[u8]| {
            self.icmp().compare_user(ukey, file.smallest_user_key()) != Ordering::Less
                && self.icmp().compare_user(ukey, file.largest_user_key()) != Ordering::Greater
        };
        // Level 0: every file whose range covers a key, newest file first for every key. Each
        // deeper level: the one file that may hold a key's version at its sequence.
        let passes = self.files[0]
            .iter()
            .map(|file| (0, std::slice::from_ref(file)))
            .chain((1..NUM_LEVELS).map(|level| (level, self.files[level].as_slice())));
        for (level, files) in passes {
            let mut recent = None;
            for lookup in lookups.iter_mut().filter(|l| l.result.is_none()) {
                let index = match level {
                    0 => 0,
                    _ => find_file(self.icmp(), files, &lookup.lookup_key),
                };
                let Some(file) = files
                    .get(index)
                    .filter(|file| covers(file, user_key(&lookup.lookup_key)))
                else {
                    continue;
                };
                self.visit(
                    level,
                    file,
                    lookup,
                    reads,
                    table_cache,
                    &mut recent,
                    &mut scratch,
                )?;
            }
        }
        Ok(())
    }

    /// Looks `lookup` up in `file`, reusing the table (and its last block) `recent` holds
    /// when it is that file.
    #[allow(clippy::too_many_arguments)] // the batch's shared state, passed down one level
    fn visit(
        &self,
        level: usize,
        file: &FileRef,
        lookup: &mut BatchedLookup,
        reads: BlockReads,
        table_cache: &TableCache,
        recent: &mut Option<RecentTable>,
        scratch: &mut Vec<u8>,
    ) -> Result<()> {
        lookup.reading(level, file);
        let recent = match recent {
            Some(r) if r.number == file.number() => r,
            _ => recent.insert(RecentTable {
                number: file.number(),
                table: table_cache.find_table(file.number(), file.meta.file_size)?,
                block: RecentBlock::default(),
            }),
        };
        lookup.result = self.get_in_table(
            &recent.table,
            file.number(),
            reads,
            &lookup.lookup_key,
            &mut lookup.read,
            scratch,
            &mut recent.block,
        )?;
        Ok(())
    }
}
