//! The bytes of a block: a buffer of its own, or a range of its table file's mapping that it
//! shares.
//!
//! A table opened from a mapped file ([`RandomAccessFile::shared`]) reads the blocks stored
//! uncompressed in place, checksums verified as for a copy: its index, filter and metaindex
//! blocks, which live as long as the table, and its data blocks, which are then not cached. A
//! copy would only duplicate on the heap what the page cache already holds (LevelDB reads a
//! mapped table's uncompressed blocks in place the same way, uncached). Decompressed blocks,
//! and every block of a file read with system calls, are buffers of their own, which the block
//! cache charges and recycles.
//!
//! [`RandomAccessFile::shared`]: crate::env::RandomAccessFile::shared

use std::ops::Deref;

use bytes::Bytes;

/// A block's bytes.
pub(crate) enum Contents {
    /// A buffer of its own.
    Owned(Vec<u8>),
    /// A range of the table file's mapping, which stays mapped while this is held.
    Shared(Bytes),
}

impl Contents {
    /// Bytes of memory the contents are charged for: a buffer's capacity (a reused one may be
    /// larger than the block), or a shared range's length, as if it were a copy. Shared data
    /// blocks never enter the block cache; charging one nothing would let it in without
    /// bound.
    pub(crate) fn memory(&self) -> usize {
        match self {
            Contents::Owned(buf) => buf.capacity(),
            Contents::Shared(bytes) => bytes.len(),
        }
    }

    /// The buffer, for the next block read to reuse; an empty one for a shared range.
    pub(crate) fn into_buffer(self) -> Vec<u8> {
        match self {
            Contents::Owned(buf) => buf,
            Contents::Shared(_) => Vec::new(),
        }
    }

    /// Whether the bytes are a range of a mapping rather than a buffer of their own.
    pub(crate) fn is_shared(&self) -> bool {
        matches!(self, Contents::Shared(_))
    }
}

impl Deref for Contents {
    type Target = [u8];

    #[inline]
    fn deref(&self) -> &[u8] {
        match self {
            Contents::Owned(buf) => buf,
            Contents::Shared(bytes) => bytes,
        }
    }
}

impl From<Vec<u8>> for Contents {
    fn from(buf: Vec<u8>) -> Contents {
        Contents::Owned(buf)
    }
}
