//! Tables: immutable, sorted files of internal keys and values in LevelDB 1.23's format.
//!
//! - [`format`]: block handles, block trailers, the footer, reading a block from a file.
//! - [`block_builder`] / [`block`]: prefix-compressed blocks with restart points.
//! - [`filter_block`]: the per-table filter block (one filter per 2 KiB of data offsets).
//! - [`builder`]: writes a table; [`reader`]: opens one, point lookups and a two-level iterator;
//!   [`restart_prints`]: narrows point lookups' search of a table's index block, and
//!   [`block_offsets`] lets them skip it where the prints alone place the key.
//! - Range tombstones (format extension `range-deletes`) go in a range-deletion block named
//!   `strata.range-deletions` in the metaindex (layout in `range_del`).

pub(crate) mod block;
pub(crate) mod block_builder;
pub(crate) mod block_cache;
pub(crate) mod block_offsets;
pub(crate) mod builder;
pub(crate) mod contents;
pub(crate) mod filter_block;
pub(crate) mod format;
pub(crate) mod reader;
pub(crate) mod restart_prints;

#[cfg(test)]
mod mapped_tests;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use crate::util::bloom::FilterPolicy;

use crate::util::internal_key::InternalKeyComparator;
use block_cache::BlockCache;
use format::CompressionType;

/// What building and reading tables needs from the database's options.
#[derive(Clone)]
pub(crate) struct TableOptions {
    /// Order of the internal keys in data and index blocks.
    pub(crate) icmp: InternalKeyComparator,
    /// Uncompressed size at which a data block is closed (approximate).
    pub(crate) block_size: usize,
    /// Entries between restart points in data blocks.
    pub(crate) block_restart_interval: usize,
    /// How data blocks are compressed when written.
    pub(crate) compression: CompressionType,
    /// Filter written with, and used when reading, tables (matched by name).
    pub(crate) filter_policy: Option<Arc<dyn FilterPolicy>>,
    /// Where read blocks are cached; `None` reads every block from the file.
    pub(crate) block_cache: Option<Arc<BlockCache>>,
    /// Verify every block's checksum on every read.
    pub(crate) paranoid_checks: bool,
    /// Read the range-deletion block of every table opened (format extension
    /// `range-deletes`); a table whose metaindex or range-deletion block is damaged then
    /// cannot be opened, since reads without its tombstones would return deleted keys.
    pub(crate) range_deletions: bool,
}

impl std::fmt::Debug for TableOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableOptions")
            .field("icmp", &self.icmp)
            .field("block_size", &self.block_size)
            .field("block_restart_interval", &self.block_restart_interval)
            .field("compression", &self.compression)
            .field(
                "filter_policy",
                &self.filter_policy.as_ref().map(|p| p.name().to_owned()),
            )
            .field("block_cache", &self.block_cache)
            .field("paranoid_checks", &self.paranoid_checks)
            .field("range_deletions", &self.range_deletions)
            .finish()
    }
}

/// How one read or iterator reads data blocks: the part of the public `ReadOptions` the table
/// layer uses (no snapshot, no bounds), small enough to copy into every table cursor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BlockReads {
    /// Verify each data block's checksum (index, filter and metaindex blocks always are).
    pub(crate) verify_checksums: bool,
    /// Keep the blocks read in the block cache (but those read in place, see
    /// `Table::data_block`).
    pub(crate) fill_cache: bool,
    /// Fail with `Error::WouldBlock` rather than read a block whose pages are not in memory
    /// (or open a table file): `ReadOptions::memory_only`.
    pub(crate) memory_only: bool,
    /// For a scan that reads each block once (`BlockReads::background_scan`): drop the pages of the
    /// blocks passed from the process's resident memory as the scan goes
    /// (`RandomAccessFile::release`, `reader::TableIter`).
    pub(crate) release_behind: bool,
}

impl BlockReads {
    /// How background work, repair and checks read: every block's checksum verified, no
    /// block kept in the cache.
    pub(crate) fn checked_uncached() -> BlockReads {
        BlockReads {
            verify_checksums: true,
            fill_cache: false,
            memory_only: false,
            release_behind: false,
        }
    }

    /// How background work that reads each block once (a compaction's inputs, the value
    /// files' accounting passes) reads: as [`BlockReads::checked_uncached`], releasing the
    /// pages it has passed.
    pub(crate) fn background_scan() -> BlockReads {
        BlockReads {
            release_behind: true,
            ..BlockReads::checked_uncached()
        }
    }
}

impl Default for BlockReads {
    /// What a read with default `ReadOptions` does: no checksum check, fill the cache.
    fn default() -> BlockReads {
        BlockReads {
            verify_checksums: false,
            fill_cache: true,
            memory_only: false,
            release_behind: false,
        }
    }
}
