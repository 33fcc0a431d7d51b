//! Tables: immutable, sorted files of internal keys and values in LevelDB 1.23's format.
//!
//! - [`format`]: block handles, block trailers, the footer, reading a block from a file.
//! - [`block_builder`] / [`block`]: prefix-compressed blocks with restart points.
//! - [`filter_block`]: the per-table filter block (one filter per 2 KiB of data offsets).
//! - [`builder`]: writes a table; [`reader`]: opens one, point lookups and a two-level iterator.

pub(crate) mod block;
pub(crate) mod block_builder;
pub(crate) mod filter_block;
pub(crate) mod format;

#[cfg(any(test, feature = "testing"))]
pub(crate) mod test_files;
