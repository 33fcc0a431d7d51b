//! Reads a table file: [`Table`] (opened once, shared) and [`TableIter`] (a two-level cursor).
//!
//! Opening reads the footer and the index block, and — when a filter policy is configured — the
//! metaindex and the filter block named `filter.<policy name>`. A missing, unreadable or
//! differently named filter is ignored (reads just go without it), as in LevelDB. With
//! `TableOptions::range_deletions` (format extension `range-deletes`) it also reads the
//! range-deletion block, if the metaindex names one, into [`Fragments`]; then a damaged
//! metaindex or range-deletion block fails the open, since reading on without the tombstones
//! would return deleted keys. Data blocks
//! are read on demand through the block cache when one is configured, keyed by
//! `(cache id of this table, block offset)`; those stored uncompressed in a file that shares
//! its mapping are read in place and not cached (see [`Table::data_block`]).
//!
//! Checksums of the index, metaindex and filter blocks are always verified when the table is
//! opened (they are read once and then serve every lookup, so one unverified flipped byte would
//! send reads to the wrong block or make the filter deny keys the table holds). A data block's
//! checksum is verified when the read asks for it (`BlockReads::verify_checksums`) or
//! `TableOptions::paranoid_checks` is set; such a read does not take a block from the cache
//! that an unverified read put there, but reads and verifies it again. Every error names the
//! file and the offset.
//!
//! Thread safety: a `Table` is immutable after `open` and shared through `Arc` by any number of
//! readers; each `TableIter` belongs to one thread and keeps the table alive.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::env::RandomAccessFile;
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::range_del::{Fragments, RangeTombstone};
use crate::util::internal_key::user_key;

use super::block::{Block, BlockIter, KeyOrder};
use super::block_offsets::BlockOffsets;
use super::builder::{FILTER_META_PREFIX, RANGE_DELETIONS_META_KEY};
use super::contents::Contents;
use super::filter_block::FilterBlockReader;
use super::format::{
    read_block, read_data_block, read_footer, read_lasting_block, BlockHandle, BLOCK_TRAILER_LEN,
};
use super::restart_prints::RestartPrints;
use super::{BlockReads, TableOptions};

/// Lookups of a table served by a plain search of its index block before its restart prints
/// are built, at least (see [`Table::index_prints`]: the build may wait longer for a read
/// that has not paid for other work).
pub(super) const PRINTS_AFTER: usize = 2;

/// How long a read that must not wait for the disk trusts a finding that a table's meta blocks
/// kept in its file's mapping are in memory ([`Table::check_meta_in_memory`]) before it asks
/// the kernel again. Asking is a system call (`mincore`), about a microsecond on this project's
/// test machine, which made a Node `get` answered from memory 17% slower when made on every
/// lookup; pages searched this recently sit on the kernel's active list, the last it reclaims.
pub(super) const META_RECHECK: Duration = Duration::from_millis(50);

/// `Table::meta_in_memory_at` before any read found its meta blocks in memory: later than
/// every time, so no age is measured from it.
const NEVER: u64 = u64::MAX;

/// The data block a lookup in one table read last (with its file offset), kept for the next
/// lookup in the same table, and whether the latest lookup searched a data block at all; see
/// [`Table::get_in`].
#[derive(Default)]
pub(crate) struct RecentBlock {
    block: Option<(u64, Arc<Block>)>,
    searched: bool,
}

impl RecentBlock {
    /// Whether the latest lookup searched a data block: false when the filter ruled its key
    /// out or every key of the table is below it. Only such a read costs what LevelDB's seek
    /// compaction saves (see `Version::get`).
    pub(crate) fn searched(&self) -> bool {
        self.searched
    }
}

/// What one point read has paid for of the work a table puts on its first lookups: its open
/// (`TableCache::find_table_spending`) or a build of its index aids. A read that has paid for
/// one leaves the next build to a later lookup, so that no read pays for two: the slowest
/// reads of new tables were those that opened one table and built another's aids. See
/// [`Table::index_prints`].
#[derive(Default)]
pub(crate) struct ReadBudget {
    spent: bool,
}

impl ReadBudget {
    /// Records that the read has paid for a table's open.
    pub(crate) fn spend(&mut self) {
        self.spent = true;
    }

    /// Spends the budget on a build, if it is unspent: whether the build may go ahead.
    fn try_spend(&mut self) -> bool {
        !std::mem::replace(&mut self.spent, true)
    }

    /// Whether the read has paid for a table's open or a build.
    #[cfg(test)]
    pub(crate) fn spent(&self) -> bool {
        self.spent
    }
}

/// An open table. See the module documentation.
pub(crate) struct Table {
    opts: TableOptions,
    file: Arc<dyn RandomAccessFile>,
    /// The file's mapping, when it shares one ([`RandomAccessFile::shared`]): blocks stored
    /// uncompressed are read in place out of it.
    mapping: Option<Bytes>,
    file_name: String,
    file_size: u64,
    /// Key space of this table's blocks in the block cache (0 without a cache).
    cache_id: u64,
    /// The order of the data and index blocks' keys.
    order: KeyOrder,
    index_block: Arc<Block>,
    /// Narrows lookups' search of the index block (bytewise order only); built by a lookup
    /// after the first [`PRINTS_AFTER`] (see [`Table::index_prints`]).
    index_prints: OnceLock<Option<RestartPrints>>,
    /// The blocks the index block's entries point to, for lookups the prints place alone;
    /// built by a later read than the one that built the prints (see [`Table::get_in`]).
    block_offsets: OnceLock<Option<BlockOffsets>>,
    /// Lookups and seeks served before `index_prints` was built.
    lookups: AtomicUsize,
    index_handle: BlockHandle,
    metaindex_handle: BlockHandle,
    filter: Option<FilterBlockReader>,
    /// The part of the file from the first to the end of the last meta block the table keeps
    /// in the file's mapping (offset, length), `None` when it keeps copies: what a read that
    /// must not wait for the disk checks is in memory ([`Table::check_meta_in_memory`]).
    shared_meta: Option<(u64, u64)>,
    /// When a read last found the blocks of `shared_meta` in memory, in microseconds after
    /// `opened` ([`NEVER`]: no read has yet).
    meta_in_memory_at: AtomicU64,
    opened: Instant,
    /// The table's range tombstones (`None` when it has none, or they are not read).
    range_tombstones: Option<Arc<Fragments>>,
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table")
            .field("file_name", &self.file_name)
            .field("file_size", &self.file_size)
            .field("has_filter", &self.filter.is_some())
            .finish_non_exhaustive()
    }
}

impl Table {
    /// Opens the table in `file` (`file_size` bytes long); `file_name` is used in errors.
    pub(crate) fn open(
        opts: TableOptions,
        file: Arc<dyn RandomAccessFile>,
        file_size: u64,
        file_name: String,
    ) -> Result<Arc<Table>> {
        let footer = read_footer(&*file, file_size).map_err(|e| e.in_file(&file_name))?;
        let mapping = file.shared();
        let index_block =
            read_lasting_block(mapping.as_ref(), &*file, file_size, &footer.index, true)
                .and_then(|contents| Block::new(contents, footer.index.offset))
                .map_err(|e| e.in_file(&file_name))?;
        let cache_id = opts.block_cache.as_ref().map_or(0, |c| c.new_id());
        let order = KeyOrder::Internal(opts.icmp.clone());
        let mut table = Table {
            order,
            opts,
            file,
            mapping,
            file_name,
            file_size,
            cache_id,
            index_block: Arc::new(index_block),
            index_prints: OnceLock::new(),
            block_offsets: OnceLock::new(),
            lookups: AtomicUsize::new(0),
            index_handle: footer.index,
            metaindex_handle: footer.metaindex,
            filter: None,
            shared_meta: None,
            meta_in_memory_at: AtomicU64::new(NEVER),
            opened: Instant::now(),
            range_tombstones: None,
        };
        let filter = table.read_filter();
        let kept = [
            table.index_block.is_shared().then_some(footer.index),
            filter
                .as_ref()
                .and_then(|(handle, filter)| filter.is_shared().then_some(*handle)),
        ];
        // Both handles lie inside the file: reading the blocks checked them.
        let from = kept.iter().flatten().map(|h| h.offset).min();
        let to = kept
            .iter()
            .flatten()
            .map(|h| h.offset + h.size + BLOCK_TRAILER_LEN as u64)
            .max();
        table.shared_meta = from.zip(to).map(|(from, to)| (from, to - from));
        table.filter = filter.map(|(_, filter)| filter);
        if table.opts.range_deletions {
            table.range_tombstones = table
                .read_range_deletions()
                .map_err(|e| e.in_file(&table.file_name))?;
        }
        Ok(Arc::new(table))
    }

    /// The index block's restart prints, built by the first lookup that finds [`PRINTS_AFTER`]
    /// lookups served before it and `budget` unspent (`None` until then, and for an order other
    /// than the bytewise one). A build is a pass over every index entry (for 2170 entries, 1
    /// KiB blocks, about 11 µs here), which a table opened for a lookup or two, or only
    /// scanned, would not earn back.
    ///
    /// Why so early: with the build at the ninth lookup, tables read fewer than nine times in
    /// the 1000 reads of new tables of `strata bench --sweep paper` built their aids in the
    /// next 1000 reads, of cached blocks, which take about 2 µs; that put those reads' p99
    /// over LevelDB's (10.2 and 15.4 µs against 8.5 and 9.3, no compression, 1 KiB blocks).
    /// Built early, the builds land among reads of new tables, and the budget keeps each out
    /// of a read that also opens a table, which sets those reads' p99 (the third-lookup rule
    /// without the budget, 5bec49d, was reverted in c4e4137 for taking that p99 over
    /// LevelDB's). A seek (`TableIter::seek`) has a budget of its own for each table.
    fn index_prints(&self, budget: &mut ReadBudget) -> Option<&RestartPrints> {
        if let Some(prints) = self.index_prints.get() {
            return prints.as_ref();
        }
        if self.lookups.fetch_add(1, Ordering::Relaxed) < PRINTS_AFTER || !budget.try_spend() {
            return None;
        }
        self.index_prints
            .get_or_init(|| {
                let bytewise = self.opts.icmp.is_bytewise();
                bytewise
                    .then(|| RestartPrints::new(&self.index_block))
                    .flatten()
            })
            .as_ref()
    }

    /// Whether the index block and the filter block are ranges of the file's mapping rather
    /// than copies (`None` for the filter when the table has none).
    #[cfg(test)]
    pub(super) fn meta_blocks_shared(&self) -> (bool, Option<bool>) {
        let filter = self.filter.as_ref().map(FilterBlockReader::is_shared);
        (self.index_block.is_shared(), filter)
    }

    /// The index block's block offsets, built by the first lookup that calls for them with
    /// `budget` unspent: `Table::get_in` does once the prints are built, and building those
    /// spent the budget of the read that did.
    fn block_offsets(&self, budget: &mut ReadBudget) -> Option<&BlockOffsets> {
        if let Some(offsets) = self.block_offsets.get() {
            return offsets.as_ref();
        }
        if !budget.try_spend() {
            return None;
        }
        self.block_offsets
            .get_or_init(|| BlockOffsets::new(&self.index_block))
            .as_ref()
    }

    /// Whether the index block's restart prints, and its block offsets, have been built.
    #[cfg(test)]
    pub(super) fn has_index_aids(&self) -> (bool, bool) {
        (
            self.index_prints.get().is_some_and(Option::is_some),
            self.block_offsets.get().is_some_and(Option::is_some),
        )
    }

    /// The meta block at `handle` (metaindex, filter, range deletions), checksum verified.
    fn read_meta_block(&self, handle: &BlockHandle) -> Result<Contents> {
        let (map, file) = (self.mapping.as_ref(), &*self.file);
        read_lasting_block(map, file, self.file_size, handle, true)
    }

    /// The metaindex block, checksum verified.
    fn read_metaindex(&self) -> Result<Arc<Block>> {
        let contents = self.read_meta_block(&self.metaindex_handle)?;
        Ok(Arc::new(Block::new(
            contents,
            self.metaindex_handle.offset,
        )?))
    }

    /// The handle the metaindex stores under `name`: `Ok(None)` when it has none, an error
    /// when the metaindex is damaged there.
    fn meta_block_handle(&self, metaindex: &Arc<Block>, name: &str) -> Result<Option<BlockHandle>> {
        let mut it = metaindex.iter(KeyOrder::Bytewise);
        it.seek(name.as_bytes());
        if !it.valid() {
            return it.status().map(|()| None);
        }
        if it.key() != name.as_bytes() {
            return Ok(None);
        }
        BlockHandle::decode_from(&mut it.value())
            .map(Some)
            .ok_or_else(|| {
                Error::corruption_at(self.metaindex_handle.offset, "bad handle in metaindex")
            })
    }

    /// The filter named after the configured policy, with its block's handle, if the table
    /// has a readable one.
    fn read_filter(&self) -> Option<(BlockHandle, FilterBlockReader)> {
        let policy = self.opts.filter_policy.as_ref()?;
        let metaindex = self.read_metaindex().ok()?;
        let name = format!("{FILTER_META_PREFIX}{}", policy.name());
        let handle = self.meta_block_handle(&metaindex, &name).ok()??;
        let data = self.read_meta_block(&handle).ok()?;
        Some((handle, FilterBlockReader::new(Arc::clone(policy), data)))
    }

    /// The table's range tombstones, from the range-deletion block the metaindex names (none
    /// when it names none). Both blocks are verified; damage in either is an error.
    fn read_range_deletions(&self) -> Result<Option<Arc<Fragments>>> {
        let metaindex = self.read_metaindex()?;
        let Some(handle) = self.meta_block_handle(&metaindex, RANGE_DELETIONS_META_KEY)? else {
            return Ok(None);
        };
        let contents = self.read_meta_block(&handle)?;
        let block = Arc::new(Block::new(contents, handle.offset)?);
        let tombstones = read_range_tombstones(&block, self.order.clone(), handle.offset)?;
        let fragments = Fragments::new(&self.opts.icmp, tombstones);
        Ok((!fragments.is_empty()).then(|| Arc::new(fragments)))
    }

    /// The table's range tombstones, fragmented; `None` when it has none (or the table options
    /// do not read them).
    pub(crate) fn range_tombstones(&self) -> Option<&Arc<Fragments>> {
        self.range_tombstones.as_ref()
    }

    /// Reads the metaindex and every block it names, checksums verified: `Err` (a corruption
    /// naming the file) when any of them is damaged. Reads ignore damaged meta blocks (they go
    /// without the filter); repair uses this to find tables worth rewriting.
    pub(crate) fn verify_meta_blocks(&self) -> Result<()> {
        let in_file = |e: Error| e.in_file(&self.file_name);
        let contents = read_block(&*self.file, self.file_size, &self.metaindex_handle, true)
            .map_err(in_file)?;
        let metaindex =
            Arc::new(Block::new(contents, self.metaindex_handle.offset).map_err(in_file)?);
        let mut it = metaindex.iter(KeyOrder::Bytewise);
        it.seek_to_first();
        while it.valid() {
            let handle = BlockHandle::decode_from(&mut it.value()).ok_or_else(|| {
                Error::corruption_at(self.metaindex_handle.offset, "bad handle in metaindex")
                    .in_file(&self.file_name)
            })?;
            read_block(&*self.file, self.file_size, &handle, true).map_err(in_file)?;
            it.next();
        }
        it.status().map_err(in_file)
    }

    #[cfg(any(test, feature = "testing"))]
    #[cfg(any(test, feature = "testing"))]
    /// True when reads consult a filter.
    pub(crate) fn has_filter(&self) -> bool {
        self.filter.is_some()
    }

    fn index_iter(&self) -> BlockIter {
        self.index_block.iter(self.order.clone())
    }

    /// Decodes a data block handle stored in the index block.
    fn decode_handle(&self, mut value: &[u8]) -> Result<BlockHandle> {
        BlockHandle::decode_from(&mut value).ok_or_else(|| {
            Error::corruption_at(self.index_handle.offset, "bad block handle in index block")
                .in_file(&self.file_name)
        })
    }

    /// The data block at `handle`, from the cache or the file; with `reads.memory_only`
    /// `Error::WouldBlock` when it is in neither the cache nor memory.
    ///
    /// A block stored uncompressed in a file that shares its mapping is read in place and not
    /// cached (a copy would only duplicate what the page cache holds, as LevelDB does with a
    /// mapped table), but for a memory-only read, which copies it as before: its pages were in
    /// memory when checked, but may leave before the read (or an iterator stepping through the
    /// block) is done with them, and reading them then would wait for the disk. A copy that
    /// fills the cache also spares the next such read asking the kernel again. A block found
    /// in the cache has its lines loaded at once ([`Block::touch`]) before it is read.
    fn data_block(&self, reads: BlockReads, handle: BlockHandle) -> Result<Arc<Block>> {
        let BlockReads {
            verify_checksums: verify,
            fill_cache,
            memory_only,
            ..
        } = reads;
        let cache = self.opts.block_cache.as_ref();
        if let Some(block) = cache.and_then(|cache| cache.lookup(self.cache_id, handle.offset)) {
            // A block cached by a read that did not verify it is read again (and, unless read
            // in place, replaced) when this read asks for verification.
            if block.verified() || !(verify || self.opts.paranoid_checks) {
                block.touch();
                return Ok(block);
            }
        }
        self.check_in_memory(memory_only, handle)?;
        let fill = cache.filter(|_| fill_cache);
        let map = self.mapping.as_ref().filter(|_| !memory_only);
        let verify = verify || self.opts.paranoid_checks;
        let buf = || fill.map(|cache| cache.take_buffer()).unwrap_or_default();
        let mut block = read_data_block(map, &*self.file, self.file_size, &handle, verify, buf)
            .and_then(|contents| Block::new(contents, handle.offset))
            .map_err(|e| e.in_file(&self.file_name))?;
        block.set_verified(verify);
        let block = Arc::new(block);
        if let Some(cache) = fill.filter(|_| !block.is_shared()) {
            cache.insert(self.cache_id, handle.offset, Arc::clone(&block));
        }
        Ok(block)
    }

    /// For a read that must not wait for the disk (`memory_only`): `Error::WouldBlock` unless
    /// the stored block at `handle` (with its trailer) is in memory.
    fn check_in_memory(&self, memory_only: bool, handle: BlockHandle) -> Result<()> {
        if !memory_only {
            return Ok(());
        }
        let stored = handle.size.checked_add(BLOCK_TRAILER_LEN as u64);
        self.check_range_in_memory("the block", handle.offset, stored)
    }

    /// For a read that must not wait for the disk: `Error::WouldBlock` unless the meta blocks
    /// the table keeps in its file's mapping (index, filter) are in memory. Unlike copies on
    /// the heap, the pages of a mapping are dropped under memory pressure, and the lookup's
    /// search of them would then wait for the disk. Found in memory, they are taken to stay
    /// there for [`META_RECHECK`].
    pub(crate) fn check_meta_in_memory(&self) -> Result<()> {
        let Some((offset, len)) = self.shared_meta else {
            return Ok(());
        };
        let now = u64::try_from(self.opened.elapsed().as_micros()).unwrap_or(NEVER);
        let seen = self.meta_in_memory_at.load(Ordering::Relaxed);
        if now
            .checked_sub(seen)
            .is_some_and(|age| u128::from(age) < META_RECHECK.as_micros())
        {
            return Ok(());
        }
        self.check_range_in_memory("the index and filter blocks", offset, Some(len))?;
        self.meta_in_memory_at.store(now, Ordering::Relaxed);
        Ok(())
    }

    /// `Error::WouldBlock`, naming `what` is there, unless the `len` bytes at `offset` are in
    /// memory.
    fn check_range_in_memory(&self, what: &str, offset: u64, len: Option<u64>) -> Result<()> {
        match len.and_then(|len| usize::try_from(len).ok()) {
            Some(len) if self.file.in_memory(offset, len) => Ok(()),
            _ => Err(Error::WouldBlock(format!(
                "{what} at offset {offset} of {}: not in memory",
                self.file_name
            ))),
        }
    }

    /// Point lookup: finds the first entry with key `>= internal_key` in the one data block
    /// that could hold `internal_key`'s user key, and returns `f(key, value)` for it, borrowing
    /// both from the block (no copy). Returns `Ok(None)` without calling `f` when the filter rules
    /// the user key out or the table has no entry `>= internal_key`. The caller checks whether
    /// the entry's user key is the one it looks for.
    #[cfg(any(test, feature = "testing"))]
    pub(crate) fn get<R>(
        &self,
        reads: BlockReads,
        internal_key: &[u8],
        f: impl FnOnce(&[u8], &[u8]) -> R,
    ) -> Result<Option<R>> {
        self.get_in(
            reads,
            internal_key,
            &mut Vec::new(),
            &mut RecentBlock::default(),
            &mut ReadBudget::default(),
            f,
        )
    }

    /// [`get`](Self::get) with a key buffer the caller reuses across lookups (the lookup then
    /// allocates nothing, creates no cursor and takes no reference to the index block) and
    /// the data block the previous lookup in this table read: a lookup whose block is the one
    /// `recent` holds searches it again without reading it, so neighbouring keys looked up in
    /// turn read their block once. `recent` also records whether this lookup searched a data
    /// block ([`RecentBlock::searched`]).
    pub(crate) fn get_in<R>(
        &self,
        reads: BlockReads,
        internal_key: &[u8],
        scratch: &mut Vec<u8>,
        recent: &mut RecentBlock,
        budget: &mut ReadBudget,
        f: impl FnOnce(&[u8], &[u8]) -> R,
    ) -> Result<Option<R>> {
        if reads.memory_only {
            self.check_meta_in_memory()?;
        }
        recent.searched = false;
        let in_file = |e: Error| e.in_file(&self.file_name);
        // A read builds at most one of a table's aids (see `ReadBudget`): the prints, and
        // the offsets in a later read.
        let prints = self.index_prints(budget);
        let placed = prints.and_then(|p| {
            let offsets = self.block_offsets(budget)?;
            Some(offsets.block(p.keys_below(internal_key)?))
        });
        let handle = match placed {
            Some(Some(handle)) => handle,
            // Every key of the table is below the target.
            Some(None) => return Ok(None),
            None => {
                let within = prints.map(|p| p.narrow(internal_key));
                let Some(handle) = self
                    .index_block
                    .seek_point_within(&self.order, internal_key, scratch, within)
                    .map_err(in_file)?
                else {
                    return Ok(None);
                };
                self.decode_handle(handle)?
            }
        };
        if let Some(filter) = &self.filter {
            if !filter.key_may_match(handle.offset, user_key(internal_key)) {
                return Ok(None);
            }
        }
        let block = match recent.block.take() {
            Some((offset, block)) if offset == handle.offset => block,
            _ => self.data_block(reads, handle)?,
        };
        recent.searched = true;
        let block = &recent.block.insert((handle.offset, block)).1;
        let found = block
            .seek_point(&self.order, internal_key, scratch)
            .map_err(in_file)?;
        Ok(found.map(|value| f(scratch, value)))
    }

    #[cfg(any(test, feature = "testing"))]
    /// False when the filter says `internal_key`'s user key is not in the table (true when the
    /// table has no filter or the key is past the last block).
    pub(crate) fn filter_may_match(&self, internal_key: &[u8]) -> Result<bool> {
        let Some(filter) = &self.filter else {
            return Ok(true);
        };
        let mut index = self.index_iter();
        index.seek(internal_key);
        if !index.valid() {
            index.status().map_err(|e| e.in_file(&self.file_name))?;
            return Ok(true);
        }
        let handle = self.decode_handle(index.value())?;
        Ok(filter.key_may_match(handle.offset, user_key(internal_key)))
    }

    /// A cursor over every entry of the table.
    pub(crate) fn iter(self: &Arc<Self>, reads: BlockReads) -> TableIter {
        TableIter {
            index: self.index_iter(),
            table: Arc::clone(self),
            reads,
            data: None,
            data_handle: None,
            err: None,
            unreleased: None,
            read_to: 0,
        }
    }

    /// Approximate file offset where entries with `internal_key` would be: the offset of the
    /// data block that would hold it, or (past the last key) the offset of the metaindex, which
    /// is close to the file's end.
    pub(crate) fn approximate_offset_of(&self, internal_key: &[u8]) -> u64 {
        let mut index = self.index_iter();
        index.seek(internal_key);
        if index.valid() {
            if let Some(handle) = BlockHandle::decode_from(&mut index.value()) {
                return handle.offset;
            }
        }
        self.metaindex_handle.offset
    }
}

/// Every entry of a range-deletion block (keys in internal-key order by `order`) read from file
/// offset `offset`, decoded; a malformed one is a corruption at that offset.
pub(crate) fn read_range_tombstones(
    block: &Arc<Block>,
    order: KeyOrder,
    offset: u64,
) -> Result<Vec<RangeTombstone>> {
    let mut tombstones = Vec::new();
    let mut it = block.iter(order);
    it.seek_to_first();
    while it.valid() {
        let tombstone =
            RangeTombstone::from_entry(it.key(), it.value()).map_err(|e| e.offset_by(offset))?;
        tombstones.push(tombstone);
        it.next();
    }
    it.status()?;
    Ok(tombstones)
}

/// A two-level cursor over a table: the index block's iterator picks a data block, whose
/// iterator yields the entries. Empty or unreadable data blocks are skipped in both directions
/// (an unreadable one leaves its error in `status()`).
pub(crate) struct TableIter {
    table: Arc<Table>,
    reads: BlockReads,
    index: BlockIter,
    /// Iterator over the block the index points at; `None` when there is none.
    data: Option<BlockIter>,
    /// Handle of the block `data` iterates.
    data_handle: Option<BlockHandle>,
    /// First error from a block that could not be read or that went bad.
    err: Option<Error>,
    /// With `reads.release_behind`: the offset from which the blocks read are not released
    /// yet (`None` before the first block), and the end of the furthest block read.
    unreleased: Option<u64>,
    read_to: u64,
}

/// With `BlockReads::release_behind`, a table iterator releases the blocks it has read once
/// they span this many bytes, and the rest when it is dropped.
const RELEASE_STEP: u64 = 256 << 10;

impl TableIter {
    fn save_error(&mut self, e: Error) {
        if self.err.is_none() {
            self.err = Some(e.in_file(&self.table.file_name));
        }
    }

    /// Replaces the data iterator, keeping the old one's error.
    fn set_data(&mut self, data: Option<(BlockIter, BlockHandle)>) {
        if let Some(old) = &self.data {
            if let Err(e) = old.status() {
                self.save_error(e);
            }
        }
        match data {
            Some((it, handle)) => {
                self.data = Some(it);
                self.data_handle = Some(handle);
            }
            None => {
                self.data = None;
                self.data_handle = None;
            }
        }
    }

    /// Points `data` at the block the index is positioned on.
    fn init_data_block(&mut self) {
        if !self.index.valid() {
            self.set_data(None);
            return;
        }
        let handle = match self.table.decode_handle(self.index.value()) {
            Ok(h) => h,
            Err(e) => {
                self.save_error(e);
                self.set_data(None);
                return;
            }
        };
        if self.data.is_some() && self.data_handle == Some(handle) {
            return; // already there
        }
        match self.table.data_block(self.reads, handle) {
            Ok(block) => {
                let it = block.iter(self.table.order.clone());
                self.set_data(Some((it, handle)));
                if self.reads.release_behind {
                    self.release_behind(handle);
                }
            }
            Err(e) => {
                self.save_error(e);
                self.set_data(None);
            }
        }
    }

    /// Notes the block at `handle` read, and releases the blocks read before it once they
    /// span [`RELEASE_STEP`] bytes. Forward only: blocks before the last release point are
    /// not released again (a scan going back, which compactions never do, keeps its pages).
    fn release_behind(&mut self, handle: BlockHandle) {
        self.read_to = self.read_to.max(
            handle
                .offset
                .saturating_add(handle.size + BLOCK_TRAILER_LEN as u64),
        );
        let from = *self.unreleased.get_or_insert(handle.offset);
        if handle.offset >= from.saturating_add(RELEASE_STEP) {
            self.table.file.release(from, handle.offset - from);
            self.unreleased = Some(handle.offset);
        }
    }

    fn data_valid(&self) -> bool {
        self.data.as_ref().is_some_and(|d| d.valid())
    }

    /// Whether the index may be searched or stepped: always, but for a read that must not
    /// wait for the disk whose table's meta blocks, kept in the file's mapping, are not in
    /// memory ([`Table::check_meta_in_memory`]); the iterator is then left invalid with
    /// `WouldBlock`.
    fn index_in_memory(&mut self) -> bool {
        if !self.reads.memory_only {
            return true;
        }
        match self.table.check_meta_in_memory() {
            Ok(()) => true,
            Err(e) => {
                self.save_error(e);
                self.set_data(None);
                false
            }
        }
    }

    fn skip_empty_blocks_forward(&mut self) {
        while !self.data_valid() {
            if !self.index.valid() {
                self.set_data(None);
                return;
            }
            // A read that must not wait stops at a block it could not read from memory,
            // invalid with `WouldBlock`: going on past it would leave a hole that the merge
            // above, which stops only at a child invalid with an error, cannot see, and
            // older entries the block hides would be yielded.
            if self.reads.memory_only && self.data.as_ref().is_none_or(|d| d.status().is_err()) {
                return;
            }
            if !self.index_in_memory() {
                return;
            }
            self.index.next();
            self.init_data_block();
            if let Some(d) = &mut self.data {
                d.seek_to_first();
            }
        }
    }

    fn skip_empty_blocks_backward(&mut self) {
        while !self.data_valid() {
            if !self.index.valid() {
                self.set_data(None);
                return;
            }
            // A read that must not wait stops at a block it could not read from memory,
            // invalid with `WouldBlock`: going on past it would leave a hole that the merge
            // above, which stops only at a child invalid with an error, cannot see, and
            // older entries the block hides would be yielded.
            if self.reads.memory_only && self.data.as_ref().is_none_or(|d| d.status().is_err()) {
                return;
            }
            if !self.index_in_memory() {
                return;
            }
            self.index.prev();
            self.init_data_block();
            if let Some(d) = &mut self.data {
                d.seek_to_last();
            }
        }
    }
}

impl Drop for TableIter {
    /// Releases what the scan read and did not release yet (`BlockReads::release_behind`).
    fn drop(&mut self) {
        if let Some(from) = self.unreleased.filter(|&from| from < self.read_to) {
            self.table.file.release(from, self.read_to - from);
        }
    }
}

impl InternalIterator for TableIter {
    fn valid(&self) -> bool {
        self.data_valid()
    }

    fn seek_to_first(&mut self) {
        if !self.index_in_memory() {
            return;
        }
        self.index.seek_to_first();
        self.init_data_block();
        if let Some(d) = &mut self.data {
            d.seek_to_first();
        }
        self.skip_empty_blocks_forward();
    }

    fn seek_to_last(&mut self) {
        if !self.index_in_memory() {
            return;
        }
        self.index.seek_to_last();
        self.init_data_block();
        if let Some(d) = &mut self.data {
            d.seek_to_last();
        }
        self.skip_empty_blocks_backward();
    }

    fn seek(&mut self, target: &[u8]) {
        if !self.index_in_memory() {
            return;
        }
        let within = self
            .table
            .index_prints(&mut ReadBudget::default())
            .map(|p| p.narrow(target));
        self.index.seek_within(target, within);
        self.init_data_block();
        if let Some(d) = &mut self.data {
            d.seek(target);
        }
        self.skip_empty_blocks_forward();
    }

    fn next(&mut self) {
        debug_assert!(self.valid());
        if let Some(d) = &mut self.data {
            d.next();
        }
        self.skip_empty_blocks_forward();
    }

    fn prev(&mut self) {
        debug_assert!(self.valid());
        if let Some(d) = &mut self.data {
            d.prev();
        }
        self.skip_empty_blocks_backward();
    }

    fn key(&self) -> &[u8] {
        self.data.as_ref().map_or(&[], |d| d.key())
    }

    fn value(&self) -> &[u8] {
        self.data.as_ref().map_or(&[], |d| d.value())
    }

    fn status(&self) -> Result<()> {
        let in_file = |e: Error| e.in_file(&self.table.file_name);
        self.index.status().map_err(in_file)?;
        if let Some(d) = &self.data {
            d.status().map_err(in_file)?;
        }
        match &self.err {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}
