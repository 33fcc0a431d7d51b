//! The log format, shared by the write-ahead log (`NNNNNN.log`) and the manifest
//! (`MANIFEST-NNNNNN`). Byte-compatible with LevelDB 1.23.
//!
//! A log file is a sequence of 32 KiB blocks (the last one may be short). A block holds
//! *physical records*; a record never straddles a block boundary:
//!
//! ```text
//! block            := physical_record* trailer?
//! physical_record  := checksum: fixed32 LE   masked CRC32C of (type ++ payload)
//!                     length:   fixed16 LE   payload length
//!                     type:     u8           FULL=1 | FIRST=2 | MIDDLE=3 | LAST=4
//!                     payload:  [u8; length]
//! trailer          := 0x00 x (1..=6)         when fewer than 7 bytes remain in the block
//! ```
//!
//! A *logical record* (a write batch, a version edit) is stored either as one `FULL` physical
//! record or split as `FIRST`, `MIDDLE`*, `LAST` over consecutive blocks. Zero-length logical
//! records are valid (one `FULL` record with an empty payload). When exactly 7 bytes remain in a
//! block the writer may emit a `FIRST` fragment with an empty payload there. Type 0 is reserved
//! for preallocated (zero-filled) regions of a file; readers skip such regions silently.
//!
//! The checksum is masked (see `util/crc.rs`) and covers the type byte followed by the payload,
//! not the length. Readers check the length against the block, so a corrupt length is caught
//! before any payload byte is used.
//!
//! [`LogWriter`] appends logical records; [`LogReader`] returns them, reporting and skipping
//! damaged regions (see its documentation for exactly what is reported).

#[cfg(test)]
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
mod mapped_file_tests;
pub(crate) mod reader;
#[cfg(test)]
pub(crate) mod tests;
pub(crate) mod writer;

pub(crate) use reader::{LogReader, Reporter};
pub(crate) use writer::LogWriter;

/// Size of a log block. On-disk: never change.
pub(crate) const BLOCK_SIZE: usize = 32 * 1024;

/// Size of a physical record's header: checksum (4) + length (2) + type (1).
/// On-disk: never change.
pub(crate) const HEADER_SIZE: usize = 4 + 2 + 1;

/// Physical record types. On-disk: never change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum RecordType {
    /// Reserved for preallocated files: zero bytes decode as this type.
    Zero = 0,
    /// A whole logical record.
    Full = 1,
    /// The first fragment of a logical record.
    First = 2,
    /// An inner fragment of a logical record.
    Middle = 3,
    /// The final fragment of a logical record.
    Last = 4,
}

/// Largest valid record type byte.
pub(crate) const MAX_RECORD_TYPE: u8 = RecordType::Last as u8;

impl RecordType {
    /// Decodes a type byte; `None` for values above [`MAX_RECORD_TYPE`].
    pub(crate) fn from_byte(byte: u8) -> Option<RecordType> {
        match byte {
            0 => Some(RecordType::Zero),
            1 => Some(RecordType::Full),
            2 => Some(RecordType::First),
            3 => Some(RecordType::Middle),
            4 => Some(RecordType::Last),
            _ => None,
        }
    }
}
