//! A block's bytes as a reader holds them: a buffer of its own (read from the file or
//! decompressed), or, for a block stored uncompressed in a memory-mapped table, the block's range
//! of the mapping itself, shared without a copy (as LevelDB reads such blocks). A shared range
//! keeps the table's file, and so the mapping, alive as long as anything holds the block.

use std::ops::{Deref, Range};
use std::sync::Arc;

use bytes::Bytes;

use crate::env::RandomAccessFile;

/// See the module documentation.
pub(crate) enum Contents {
    /// A buffer of the block's own.
    Owned(Vec<u8>),
    /// A range of a mapped table file.
    Mapped(Bytes),
}

impl Contents {
    /// `range` of `file`'s mapping, shared; `None` when the file is not mapped or the range
    /// lies outside it.
    pub(crate) fn mapped(
        file: &Arc<dyn RandomAccessFile>,
        range: Range<usize>,
    ) -> Option<Contents> {
        file.mapped()?.get(range.clone())?;
        Some(Contents::Mapped(Bytes::from_owner(MappedRange {
            file: Arc::clone(file),
            range,
        })))
    }

    /// Bytes of memory the contents hold of their own: an owned buffer's capacity (a reused
    /// buffer may be larger than the block), nothing for a range of a mapping.
    pub(crate) fn memory(&self) -> usize {
        match self {
            Contents::Owned(buffer) => buffer.capacity(),
            Contents::Mapped(_) => 0,
        }
    }

    /// The owned buffer, for another read to reuse.
    pub(crate) fn into_buffer(self) -> Option<Vec<u8>> {
        match self {
            Contents::Owned(buffer) => Some(buffer),
            Contents::Mapped(_) => None,
        }
    }
}

impl From<Vec<u8>> for Contents {
    fn from(buffer: Vec<u8>) -> Contents {
        Contents::Owned(buffer)
    }
}

impl Deref for Contents {
    type Target = [u8];

    #[inline]
    fn deref(&self) -> &[u8] {
        match self {
            Contents::Owned(buffer) => buffer,
            Contents::Mapped(range) => range,
        }
    }
}

/// The owner of a [`Contents::Mapped`]: the file whose mapping holds the bytes, and where.
/// `Bytes` asks it for the slice once, when the range is made; the mapping stays at that
/// address for as long as the file lives.
struct MappedRange {
    file: Arc<dyn RandomAccessFile>,
    range: Range<usize>,
}

impl AsRef<[u8]> for MappedRange {
    fn as_ref(&self) -> &[u8] {
        // `Contents::mapped` checked the range lies inside the mapping.
        self.file
            .mapped()
            .and_then(|map| map.get(self.range.clone()))
            .unwrap_or(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::vec_files::{MappedVecFile, VecFile};

    #[test]
    fn a_mapped_range_shares_the_mapping_and_keeps_the_file_alive() {
        let file: Arc<dyn RandomAccessFile> = Arc::new(MappedVecFile(b"0123456789".to_vec()));
        let map_at = file.mapped().unwrap().as_ptr() as usize;
        let contents = Contents::mapped(&file, 2..6).unwrap();
        drop(file);
        assert_eq!(&*contents, b"2345");
        assert_eq!(contents.as_ptr() as usize, map_at + 2, "copied, not shared");
        assert_eq!(contents.memory(), 0);
        assert!(contents.into_buffer().is_none());
    }

    #[test]
    fn no_range_of_an_unmapped_file_or_past_the_mapping() {
        let unmapped: Arc<dyn RandomAccessFile> = Arc::new(VecFile::new(b"0123".to_vec()));
        assert!(Contents::mapped(&unmapped, 0..2).is_none());
        let mapped: Arc<dyn RandomAccessFile> = Arc::new(MappedVecFile(b"0123".to_vec()));
        assert!(Contents::mapped(&mapped, 2..5).is_none());
    }

    #[test]
    fn an_owned_buffer_is_charged_by_capacity_and_given_back() {
        let mut buffer = Vec::with_capacity(64);
        buffer.extend_from_slice(b"abc");
        let contents = Contents::from(buffer);
        assert_eq!(&*contents, b"abc");
        assert_eq!(contents.memory(), 64);
        assert_eq!(contents.into_buffer().unwrap().capacity(), 64);
    }
}
