//! Walks every block of a table file, for `dump` and `check` (table layout in `table/format.rs`).
//!
//! Unlike the engine's table reader, which stops at the first bad block a read needs, the walk
//! visits every part in file order of importance — footer, metaindex, filter blocks, index,
//! then each data block — and reports each damaged part to the visitor before going on with
//! the next one. Only a bad footer or index block ends it (nothing can be found without them).
//! It never panics on what it reads; lengths are checked against the file size before any
//! allocation (by `read_block`).

use std::path::Path;
use std::sync::Arc;

use crate::env::{Env, RandomAccessFile};
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::table::block::{Block, KeyOrder};
use crate::table::format::{read_block, read_footer, BlockHandle, Footer};
use crate::util::coding::decode_fixed32;

/// Prefix of a metaindex entry naming a filter block. On-disk: never change.
pub(crate) const FILTER_PREFIX: &[u8] = b"filter.";

/// What the walk reports, in file order. Every method has an empty default.
pub(crate) trait TableVisitor {
    /// The footer: where the metaindex and index blocks are.
    fn footer(&mut self, _footer: &Footer) {}
    /// One metaindex entry: a name and, when its value decodes, a handle.
    fn meta_entry(&mut self, _name: &[u8], _handle: Option<BlockHandle>) {}
    /// A filter block named in the metaindex (name without the `filter.` prefix).
    fn filter_block(&mut self, _name: &[u8], _handle: BlockHandle, _filter: &FilterSummary) {}
    /// One index entry: a separator key and the data block's handle.
    fn index_entry(&mut self, _key: &[u8], _handle: BlockHandle) {}
    /// A data block about to be walked: its position among the data blocks, its handle, its
    /// compression type byte and its uncompressed length.
    fn data_block(&mut self, _index: usize, _handle: BlockHandle, _compression: u8, _len: usize) {}
    /// One data-block entry (an internal key and its value).
    fn entry(&mut self, _key: &[u8], _value: &[u8]) {}
    /// Damage at a file offset (when known). The walk goes on where it can.
    fn problem(&mut self, offset: Option<u64>, reason: String);
}

/// The shape of a filter block, read from its trailer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FilterSummary {
    /// The filter block's contents.
    pub(crate) data: Vec<u8>,
    /// Number of filters (one per `1 << base_lg` bytes of data-block offsets).
    pub(crate) num_filters: usize,
    /// Log2 of the offset range each filter covers.
    pub(crate) base_lg: u8,
}

impl FilterSummary {
    /// Parses the trailer (`offsets array start: fixed32`, `base_lg: u8`); `Err` names what
    /// is malformed.
    fn parse(data: Vec<u8>) -> std::result::Result<FilterSummary, String> {
        let len = data.len();
        let trailer_at = len
            .checked_sub(5)
            .ok_or_else(|| format!("filter block of {len} bytes is too short"))?;
        let array_offset = data
            .get(trailer_at..)
            .and_then(decode_fixed32)
            .map(|v| v as usize)
            .unwrap_or(usize::MAX);
        let base_lg = data.get(len - 1).copied().unwrap_or(0);
        if array_offset > trailer_at {
            return Err(format!(
                "filter offsets start at {array_offset}, past the block's {trailer_at} bytes"
            ));
        }
        if (trailer_at - array_offset) % 4 != 0 {
            return Err("filter offsets array is not a whole number of entries".into());
        }
        if base_lg >= 64 {
            return Err(format!("filter base_lg {base_lg} is out of range"));
        }
        let num_filters = (trailer_at - array_offset) / 4;
        let mut previous = 0;
        for i in 0..num_filters {
            let start = data
                .get(array_offset + 4 * i..)
                .and_then(decode_fixed32)
                .map_or(usize::MAX, |v| v as usize);
            if start < previous || start > array_offset {
                return Err(format!(
                    "filter {i} starts at {start}, out of order or range"
                ));
            }
            previous = start;
        }
        Ok(FilterSummary {
            data,
            num_filters,
            base_lg,
        })
    }
}

/// An opened table file: its size and footer.
pub(crate) struct TableFile {
    file: Arc<dyn RandomAccessFile>,
    size: u64,
    footer: Footer,
}

impl TableFile {
    /// Opens `path` and reads its footer. Corruption carries the file name.
    pub(crate) fn open(env: &dyn Env, path: &Path) -> Result<TableFile> {
        let name = path.display();
        let size = env.file_size(path)?;
        let file = env.new_random_access_file(path)?;
        let footer = read_footer(&*file, size).map_err(|e| e.in_file(&name))?;
        Ok(TableFile { file, size, footer })
    }

    /// Size of the file in bytes.
    pub(crate) fn size(&self) -> u64 {
        self.size
    }

    /// Reads a block (checksum verified when `verify`) and its compression type byte.
    fn block(&self, handle: &BlockHandle, verify: bool) -> Result<(Arc<Block>, u8)> {
        let contents = read_block(&*self.file, self.size, handle, verify)?;
        let mut type_byte = [0u8; 1];
        // `read_block` checked that the trailer lies inside the file.
        self.file
            .read_at(handle.offset + handle.size, &mut type_byte)?;
        Ok((Arc::new(Block::new(contents, handle.offset)?), type_byte[0]))
    }

    /// Visits the whole table; see the module documentation. Returns `Err` only for I/O
    /// errors; damage goes to `visitor.problem`.
    pub(crate) fn walk(&self, verify: bool, visitor: &mut dyn TableVisitor) -> Result<()> {
        let footer = self.footer;
        visitor.footer(&footer);
        self.walk_metaindex(&footer.metaindex, verify, visitor)?;
        let index = match self.block(&footer.index, verify) {
            Ok((block, _)) => block,
            Err(e) => return report(visitor, e, "index block"),
        };
        let mut handles = Vec::new();
        let mut it = index.iter(KeyOrder::Bytewise);
        it.seek_to_first();
        while it.valid() {
            match BlockHandle::decode_from(&mut it.value()) {
                Some(handle) => {
                    visitor.index_entry(it.key(), handle);
                    handles.push(handle);
                }
                None => visitor.problem(
                    Some(footer.index.offset),
                    format!(
                        "index entry '{}' has a bad block handle",
                        it.key().escape_ascii()
                    ),
                ),
            }
            it.next();
        }
        if let Err(e) = it.status() {
            report(visitor, e, "index block")?;
        }
        for (i, handle) in handles.iter().enumerate() {
            let (block, compression) = match self.block(handle, verify) {
                Ok(read) => read,
                Err(e) => {
                    report(visitor, e, &format!("data block {i}"))?;
                    continue;
                }
            };
            visitor.data_block(i, *handle, compression, block.size());
            let mut it = block.iter(KeyOrder::Bytewise);
            it.seek_to_first();
            while it.valid() {
                visitor.entry(it.key(), it.value());
                it.next();
            }
            if let Err(e) = it.status() {
                report(visitor, e, &format!("data block {i}"))?;
            }
        }
        Ok(())
    }

    fn walk_metaindex(
        &self,
        meta_handle: &BlockHandle,
        verify: bool,
        visitor: &mut dyn TableVisitor,
    ) -> Result<()> {
        let meta = match self.block(meta_handle, verify) {
            Ok((block, _)) => block,
            Err(e) => return report(visitor, e, "metaindex block"),
        };
        let mut it = meta.iter(KeyOrder::Bytewise);
        it.seek_to_first();
        let mut filters = Vec::new();
        while it.valid() {
            let handle = BlockHandle::decode_from(&mut it.value());
            visitor.meta_entry(it.key(), handle);
            match (it.key().strip_prefix(FILTER_PREFIX), handle) {
                (Some(name), Some(handle)) => filters.push((name.to_vec(), handle)),
                (_, None) => visitor.problem(
                    Some(meta_handle.offset),
                    format!(
                        "metaindex entry '{}' has a bad block handle",
                        it.key().escape_ascii()
                    ),
                ),
                (None, Some(_)) => {}
            }
            it.next();
        }
        if let Err(e) = it.status() {
            report(visitor, e, "metaindex block")?;
        }
        for (name, handle) in filters {
            let data = match read_block(&*self.file, self.size, &handle, verify) {
                Ok(data) => data,
                Err(e) => {
                    report(visitor, e, "filter block")?;
                    continue;
                }
            };
            match FilterSummary::parse(data) {
                Ok(summary) => visitor.filter_block(&name, handle, &summary),
                Err(reason) => visitor.problem(Some(handle.offset), reason),
            }
        }
        Ok(())
    }
}

/// Hands a corruption to the visitor (prefixed with the part it hit); other errors end the walk.
fn report(visitor: &mut dyn TableVisitor, error: Error, part: &str) -> Result<()> {
    match error {
        Error::Corruption(c) => {
            visitor.problem(c.offset, format!("{part}: {}", c.reason));
            Ok(())
        }
        other => Err(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn filter_trailer_parsing_never_panics(
            data in proptest::collection::vec(any::<u8>(), 0..64),
        ) {
            if let Ok(summary) = FilterSummary::parse(data.clone()) {
                prop_assert!(summary.num_filters * 4 + 5 <= data.len());
            }
        }
    }

    #[test]
    fn filter_trailer_is_checked() {
        // Two filters ("ab", "c"), offsets [0, 2], array at 3, base_lg 11.
        let mut data = b"abc".to_vec();
        data.extend_from_slice(&0u32.to_le_bytes());
        data.extend_from_slice(&2u32.to_le_bytes());
        data.extend_from_slice(&3u32.to_le_bytes());
        data.push(11);
        let summary = FilterSummary::parse(data.clone()).unwrap();
        assert_eq!((summary.num_filters, summary.base_lg), (2, 11));

        let mut bad = data.clone();
        bad[3..7].copy_from_slice(&9u32.to_le_bytes()); // filter 0 starts past the array
        assert!(FilterSummary::parse(bad).unwrap_err().contains("filter 0"));
        let mut bad = data.clone();
        bad[11..15].copy_from_slice(&100u32.to_le_bytes());
        assert!(FilterSummary::parse(bad)
            .unwrap_err()
            .contains("past the block"));
        assert!(FilterSummary::parse(vec![1, 2])
            .unwrap_err()
            .contains("too short"));
        let empty = [0u8, 0, 0, 0, 11].to_vec();
        assert_eq!(FilterSummary::parse(empty).unwrap().num_filters, 0);
    }
}
