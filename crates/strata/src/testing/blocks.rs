//! The parts of a table file one at a time: a block built or decoded on its own, the footer,
//! a block read out of a file's bytes by its location, and a filter block's answer.

use std::ops::Range;
use std::sync::Arc;

use super::forward_entries;
use crate::env::vec_files::VecFile;
use crate::error::Result;
use crate::iter::InternalIterator;
use crate::table::block::{Block, KeyOrder};
use crate::table::block_builder::BlockBuilder;
use crate::table::filter_block::FilterBlockReader;
use crate::table::format::{read_block, BlockHandle, Footer, BLOCK_TRAILER_LEN};
use crate::util::bloom::BloomFilterPolicy;

/// Where a block is in a table file: its contents are `offset..offset + size`, followed by the
/// 5-byte trailer (compression type, checksum).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockSpan {
    /// Offset of the block's first byte.
    pub offset: u64,
    /// Length of the block's contents, without the trailer.
    pub size: u64,
}

impl BlockSpan {
    /// The file bytes the block takes up, its trailer included.
    pub fn range(&self) -> Range<u64> {
        self.offset..self.offset + self.size + BLOCK_TRAILER_LEN as u64
    }
}

/// What a table's 48-byte footer says: where its metaindex and index blocks are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableFooter {
    /// The metaindex block (names the filter block, if any).
    pub metaindex: BlockSpan,
    /// The index block (one entry per data block).
    pub index: BlockSpan,
}

/// Builds one block of bytewise-ordered entries (keys increasing).
pub fn build_block(entries: &[(Vec<u8>, Vec<u8>)], restart_interval: usize) -> Vec<u8> {
    let mut b = BlockBuilder::new(restart_interval);
    for (k, v) in entries {
        b.add(k, v);
    }
    b.finish().to_vec()
}

/// Decodes a block of bytewise-ordered entries, walking it forwards, backwards and seeking
/// to each key; errors on corruption.
pub fn decode_block(bytes: Vec<u8>) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let block = Arc::new(Block::new(bytes, 0)?);
    let mut it = block.iter(KeyOrder::Bytewise);
    let out = forward_entries(&mut it)?;
    it.seek_to_last();
    while it.valid() {
        it.prev();
    }
    for (k, _) in &out {
        it.seek(k);
    }
    it.status()?;
    Ok(out)
}

/// Decodes a table's 48-byte footer.
pub fn decode_footer(bytes: &[u8]) -> Result<TableFooter> {
    let f = Footer::decode(bytes, 0)?;
    let span = |h: &BlockHandle| BlockSpan {
        offset: h.offset,
        size: h.size,
    };
    Ok(TableFooter {
        metaindex: span(&f.metaindex),
        index: span(&f.index),
    })
}

/// Reads the block at `span` of the table file `file` (contents and trailer), decompressing it
/// and, when `verify`, checking its checksum.
pub fn read_block_at(file: &[u8], span: BlockSpan, verify: bool) -> Result<Vec<u8>> {
    let f = VecFile::new(file.to_vec());
    read_block(
        &f,
        file.len() as u64,
        &BlockHandle::new(span.offset, span.size),
        verify,
    )
}

/// Asks a filter block (bloom policy with `bits_per_key`) whether `user_key` may be in the
/// data block at `block_offset`.
pub fn filter_block_may_match(
    data: Vec<u8>,
    bits_per_key: usize,
    block_offset: u64,
    user_key: &[u8],
) -> bool {
    FilterBlockReader::new(Arc::new(BloomFilterPolicy::new(bits_per_key)), data)
        .key_may_match(block_offset, user_key)
}
