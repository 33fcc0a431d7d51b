//! Writes a table file (layout in [`super::format`]) from internal keys added in order.
//!
//! Data blocks are closed once their estimated size reaches `block_size`. The index block
//! (restart interval 1) maps, for each data block, a short separator key — `>=` every key of that
//! block and `<` every key of the next (`find_shortest_separator`; `find_short_successor` after
//! the last block) — to the block's handle; index entries are written lazily, when the first key
//! of the next block is known. Data blocks (and the range-deletion block) are
//! Snappy-compressed when configured and when that saves at least 1/8 of the block. The
//! filter, metaindex and index blocks are never compressed (LevelDB compresses the latter two
//! like data blocks; a reader takes either): an open table searches its index for every lookup
//! as long as it is open, and stored raw in a mapped file it is searched in place, in the page
//! cache, instead of from a decompressed copy on the heap. At 10M keys (`strata bench`'s keys
//! and values) those copies were 7.8 MiB, a third of the heap, while compressing the index
//! blocks saved 0.6% of the tables' size.
//!
//! The metaindex maps `filter.<policy name>` to the filter block, and, when the table holds
//! range tombstones (format extension `range-deletes`), `strata.range-deletions` to its
//! range-deletion block (entries laid out in `range_del`, compressed like data blocks).
//!
//! Contract: keys are added in strictly increasing internal-key order. Not thread-safe. After an
//! I/O error every later call returns that error. `finish` writes the footer and flushes the file
//! but neither syncs nor closes it: take it back with [`TableBuilder::into_file`].

use super::format::CompressionType;
use crate::env::WritableFile;
use crate::error::{Error, Result};
use crate::range_del::RangeTombstone;
use crate::util::internal_key::user_key;

use super::block_builder::BlockBuilder;
use super::filter_block::FilterBlockBuilder;
use super::format::{block_trailer, BlockHandle, Footer, BLOCK_TRAILER_LEN};
use super::TableOptions;

/// Prefix of the metaindex key naming a filter block. On-disk: never change.
pub(crate) const FILTER_META_PREFIX: &str = "filter.";
/// Metaindex key of the range-deletion block (format extension `range-deletes`). Sorts after
/// every `filter.` key. On-disk: never change.
pub(crate) const RANGE_DELETIONS_META_KEY: &str = "strata.range-deletions";

/// Appends blocks to the file and keeps its offset; owns the compression scratch buffers.
struct BlockWriter {
    file: Box<dyn WritableFile>,
    offset: u64,
    encoder: snap::raw::Encoder,
    /// Reused output buffer for Snappy; kept at its high-water length so it is never re-zeroed.
    compressed: Vec<u8>,
}

impl BlockWriter {
    /// Writes a block, compressed with `compression` when that saves at least 1/8 of it.
    fn write_block(&mut self, raw: &[u8], compression: CompressionType) -> Result<BlockHandle> {
        if compression == CompressionType::Snappy {
            let max = snap::raw::max_compress_len(raw.len());
            if max > 0 {
                if self.compressed.len() < max {
                    self.compressed.resize(max, 0);
                }
                if let Ok(n) = self.encoder.compress(raw, &mut self.compressed) {
                    if n < raw.len() - raw.len() / 8 {
                        let contents = self.compressed.get(..n).unwrap_or(&[]);
                        return write_raw(
                            &mut *self.file,
                            &mut self.offset,
                            contents,
                            CompressionType::Snappy,
                        );
                    }
                }
            }
        }
        write_raw(
            &mut *self.file,
            &mut self.offset,
            raw,
            CompressionType::None,
        )
    }

    fn write_raw_block(&mut self, contents: &[u8]) -> Result<BlockHandle> {
        write_raw(
            &mut *self.file,
            &mut self.offset,
            contents,
            CompressionType::None,
        )
    }
}

/// Appends `contents` and its trailer at `*offset`, advancing it.
fn write_raw(
    file: &mut dyn WritableFile,
    offset: &mut u64,
    contents: &[u8],
    ctype: CompressionType,
) -> Result<BlockHandle> {
    let handle = BlockHandle::new(*offset, contents.len() as u64);
    file.append(contents)?;
    file.append(&block_trailer(contents, ctype))?;
    *offset += (contents.len() + BLOCK_TRAILER_LEN) as u64;
    Ok(handle)
}

/// Builds one table. See the module documentation.
pub(crate) struct TableBuilder {
    opts: TableOptions,
    writer: BlockWriter,
    data_block: BlockBuilder,
    index_block: BlockBuilder,
    filter_block: Option<FilterBlockBuilder>,
    /// Range tombstones added, as range-deletion block entries.
    range_deletions: BlockBuilder,
    /// The last key added: the start of the next index separator.
    last_key: Vec<u8>,
    num_entries: u64,
    /// Set after a data block is written until its index entry is (with the next block's first
    /// key in hand, or at `finish`).
    pending_index_entry: bool,
    pending_handle: BlockHandle,
    /// Scratch for encoding handles.
    handle_buf: Vec<u8>,
    /// First error met; returned by every later call.
    error: Option<Error>,
    closed: bool,
}

impl TableBuilder {
    /// Starts a table written to `file` from its current (empty) beginning.
    pub(crate) fn new(opts: TableOptions, file: Box<dyn WritableFile>) -> TableBuilder {
        let mut filter_block = opts
            .filter_policy
            .as_ref()
            .map(|p| FilterBlockBuilder::new(std::sync::Arc::clone(p)));
        if let Some(f) = &mut filter_block {
            f.start_block(0);
        }
        TableBuilder {
            data_block: BlockBuilder::new(opts.block_restart_interval),
            index_block: BlockBuilder::new(1),
            writer: BlockWriter {
                file,
                offset: 0,
                encoder: snap::raw::Encoder::new(),
                compressed: Vec::new(),
            },
            filter_block,
            range_deletions: BlockBuilder::new(opts.block_restart_interval),
            opts,
            last_key: Vec::new(),
            num_entries: 0,
            pending_index_entry: false,
            pending_handle: BlockHandle::default(),
            handle_buf: Vec::new(),
            error: None,
            closed: false,
        }
    }

    fn check(&self) -> Result<()> {
        match &self.error {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    fn latch<T>(&mut self, result: Result<T>) -> Result<T> {
        if let Err(e) = &result {
            if self.error.is_none() {
                self.error = Some(e.clone());
            }
        }
        result
    }

    /// Adds an entry; `key` must sort after every key added before.
    pub(crate) fn add(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        debug_assert!(!self.closed, "add after finish or abandon");
        self.check()?;
        debug_assert!(
            self.num_entries == 0
                || self.opts.icmp.compare(key, &self.last_key) == std::cmp::Ordering::Greater,
            "keys added out of order"
        );
        if self.pending_index_entry {
            self.opts
                .icmp
                .find_shortest_separator(&mut self.last_key, key);
            self.add_pending_index_entry();
        }
        if let Some(f) = &mut self.filter_block {
            f.add_key(user_key(key));
        }
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        self.num_entries += 1;
        self.data_block.add(key, value);
        if self.data_block.current_size_estimate() >= self.opts.block_size {
            self.flush()?;
        }
        Ok(())
    }

    /// Adds a range tombstone (format extension `range-deletes`) to the range-deletion block.
    /// Tombstones come in internal-key order of their [`RangeTombstone::entry_key`] (as
    /// [`Fragments::tombstones`](crate::range_del::Fragments::tombstones) yields them); the
    /// caller widens the table's key range to cover them (see `range_del`).
    pub(crate) fn add_range_tombstone(&mut self, tombstone: &RangeTombstone) -> Result<()> {
        debug_assert!(!self.closed, "add after finish or abandon");
        self.check()?;
        self.range_deletions
            .add(&tombstone.entry_key(), &tombstone.end);
        Ok(())
    }

    fn add_pending_index_entry(&mut self) {
        self.handle_buf.clear();
        self.pending_handle.encode_to(&mut self.handle_buf);
        self.index_block.add(&self.last_key, &self.handle_buf);
        self.pending_index_entry = false;
    }

    /// Writes the current data block, if it has entries. Called by `add` when the block is
    /// full; callers may call it to end a block early.
    pub(crate) fn flush(&mut self) -> Result<()> {
        self.check()?;
        if self.data_block.is_empty() {
            return Ok(());
        }
        debug_assert!(!self.pending_index_entry);
        let written = self
            .writer
            .write_block(self.data_block.finish(), self.opts.compression);
        let handle = self.latch(written)?;
        self.data_block.reset();
        self.pending_handle = handle;
        self.pending_index_entry = true;
        if let Some(f) = &mut self.filter_block {
            f.start_block(self.writer.offset);
        }
        Ok(())
    }

    /// Writes the last data block, the filter, metaindex and index blocks and the footer, and
    /// flushes the file. Returns the file's size.
    pub(crate) fn finish(&mut self) -> Result<u64> {
        debug_assert!(!self.closed, "finish called twice");
        self.flush()?;
        self.closed = true;
        let result = self.write_tail();
        self.latch(result)
    }

    fn write_tail(&mut self) -> Result<u64> {
        let filter_handle = match &mut self.filter_block {
            Some(f) => Some(self.writer.write_raw_block(f.finish())?),
            None => None,
        };

        let range_deletions_handle = if self.range_deletions.is_empty() {
            None
        } else {
            Some(
                self.writer
                    .write_block(self.range_deletions.finish(), self.opts.compression)?,
            )
        };

        let mut metaindex = BlockBuilder::new(self.opts.block_restart_interval);
        if let (Some(handle), Some(policy)) = (filter_handle, &self.opts.filter_policy) {
            let key = format!("{FILTER_META_PREFIX}{}", policy.name());
            self.handle_buf.clear();
            handle.encode_to(&mut self.handle_buf);
            metaindex.add(key.as_bytes(), &self.handle_buf);
        }
        if let Some(handle) = range_deletions_handle {
            self.handle_buf.clear();
            handle.encode_to(&mut self.handle_buf);
            metaindex.add(RANGE_DELETIONS_META_KEY.as_bytes(), &self.handle_buf);
        }
        let metaindex_handle = self.writer.write_raw_block(metaindex.finish())?;

        if self.pending_index_entry {
            self.opts.icmp.find_short_successor(&mut self.last_key);
            self.add_pending_index_entry();
        }
        let index_handle = self.writer.write_raw_block(self.index_block.finish())?;

        let footer = Footer {
            metaindex: metaindex_handle,
            index: index_handle,
        }
        .encode();
        self.writer.file.append(&footer)?;
        self.writer.offset += footer.len() as u64;
        self.writer.file.flush()?;
        Ok(self.writer.offset)
    }

    /// Entries added so far.
    pub(crate) fn num_entries(&self) -> u64 {
        self.num_entries
    }

    /// Bytes written so far (the final file size after `finish`).
    pub(crate) fn file_size(&self) -> u64 {
        self.writer.offset
    }

    /// The file, to sync and close after `finish`.
    pub(crate) fn into_file(self) -> Box<dyn WritableFile> {
        self.writer.file
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::vec_files::{VecFile, VecSink};
    use crate::table::format::read_footer;
    use crate::util::bloom::BloomFilterPolicy;
    use crate::util::comparator::BytewiseComparator;
    use crate::util::internal_key::{internal_key, InternalKeyComparator, ValueType};
    use std::sync::Arc;

    fn options(compression: CompressionType) -> TableOptions {
        TableOptions {
            icmp: InternalKeyComparator::new(BytewiseComparator::shared()),
            block_size: 4096,
            block_restart_interval: 16,
            compression,
            filter_policy: None,
            block_cache: None,
            paranoid_checks: false,
            range_deletions: false,
        }
    }

    #[test]
    fn empty_table_has_metaindex_index_and_footer() {
        let out = VecSink::new();
        let mut b = TableBuilder::new(options(CompressionType::None), Box::new(out.clone()));
        let size = b.finish().unwrap();
        let bytes = out.contents();
        assert_eq!(size, bytes.len() as u64);
        // Two empty blocks (8 bytes + 5 trailer each) and the footer.
        assert_eq!(size, 13 + 13 + 48);
        let footer = read_footer(&VecFile::new(bytes), size).unwrap();
        assert_eq!(footer.metaindex, BlockHandle::new(0, 8));
        assert_eq!(footer.index, BlockHandle::new(13, 8));
        assert_eq!(b.num_entries(), 0);
    }

    #[test]
    fn compresses_only_when_it_saves_an_eighth() {
        let mut writer = BlockWriter {
            file: Box::new(VecSink::new()),
            offset: 0,
            encoder: snap::raw::Encoder::new(),
            compressed: Vec::new(),
        };
        let compressible = vec![b'a'; 1000];
        let h = writer
            .write_block(&compressible, CompressionType::Snappy)
            .unwrap();
        assert!(h.size < 100);
        // Random bytes do not compress: stored raw.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let noise: Vec<u8> = (0..1000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 32) as u8
            })
            .collect();
        let h = writer.write_block(&noise, CompressionType::Snappy).unwrap();
        assert_eq!(h.size, 1000);
        assert_eq!(h.offset, writer.offset - 1005);
    }

    #[test]
    fn filter_meta_entry_is_named_after_the_policy() {
        let out = VecSink::new();
        let mut opts = options(CompressionType::None);
        opts.filter_policy = Some(Arc::new(BloomFilterPolicy::new(10)));
        let mut b = TableBuilder::new(opts, Box::new(out.clone()));
        b.add(&internal_key(b"k", 1, ValueType::Value), b"v")
            .unwrap();
        b.finish().unwrap();
        let bytes = out.contents();
        let needle = b"filter.leveldb.BuiltinBloomFilter2";
        assert!(bytes.windows(needle.len()).any(|w| w == needle));
    }

    struct FailingFile;
    impl WritableFile for FailingFile {
        fn append(&mut self, _: &[u8]) -> Result<()> {
            Err(Error::io("append", std::io::Error::other("disk full")))
        }
        fn flush(&mut self) -> Result<()> {
            Ok(())
        }
        fn sync(&mut self) -> Result<()> {
            Ok(())
        }
        fn close(&mut self) -> Result<()> {
            Ok(())
        }
    }

    #[test]
    fn write_errors_stick() {
        let mut opts = options(CompressionType::None);
        opts.block_size = 10;
        let mut b = TableBuilder::new(opts, Box::new(FailingFile));
        let err = b
            .add(&internal_key(b"a", 1, ValueType::Value), b"0123456789")
            .unwrap_err();
        assert!(err.is_io_error());
        assert!(b
            .add(&internal_key(b"b", 1, ValueType::Value), b"x")
            .unwrap_err()
            .is_io_error());
        assert!(b.finish().unwrap_err().is_io_error());
    }
}
