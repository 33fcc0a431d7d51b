//! Tables: immutable, sorted files of internal keys and values in LevelDB 1.23's format.
//!
//! - [`format`]: block handles, block trailers, the footer, reading a block from a file.
//! - [`block_builder`] / [`block`]: prefix-compressed blocks with restart points.
//! - [`filter_block`]: the per-table filter block (one filter per 2 KiB of data offsets).
//! - [`builder`]: writes a table; [`reader`]: opens one, point lookups and a two-level iterator.

pub(crate) mod block;
pub(crate) mod block_builder;
pub(crate) mod builder;
pub(crate) mod filter_block;
pub(crate) mod format;
pub(crate) mod reader;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use crate::cache::BlockCache;
use crate::options::{CompressionType, Options};
use crate::util::bloom::FilterPolicy;
use crate::util::internal_key::InternalKeyComparator;

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
            .finish()
    }
}

impl TableOptions {
    /// The table-related part of `options`. The block cache is taken as is (`None` stays
    /// `None`; the database layer creates its default 8 MiB cache).
    pub(crate) fn from_options(options: &Options) -> TableOptions {
        TableOptions {
            icmp: InternalKeyComparator::new(Arc::clone(&options.comparator)),
            block_size: options.block_size,
            block_restart_interval: options.block_restart_interval,
            compression: options.compression,
            filter_policy: options.filter_policy.clone(),
            block_cache: options.block_cache.clone(),
            paranoid_checks: options.paranoid_checks,
        }
    }
}
