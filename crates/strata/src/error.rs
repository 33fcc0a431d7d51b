//! The one error type of Strata.
//!
//! Kinds mirror LevelDB's statuses (`Corruption`, `InvalidArgument`, `IoError`, `NotSupported`).
//! A missing key is not an error: reads return `Option`. Every error read from disk says where:
//! corruption carries the file and, when known, the byte offset. `Error` is `Clone` so a
//! background failure can be kept and handed to every later writer.

use std::fmt;
use std::io;
use std::sync::Arc;

/// Result alias used throughout Strata.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in Strata.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Stored bytes are not what they should be.
    #[error("corruption: {0}")]
    Corruption(Corruption),
    /// The caller asked for something that cannot be done with these arguments or this state.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The operating system (or the `Env`) failed an operation.
    #[error("I/O error: {context}: {source}")]
    Io {
        /// What was being done, usually naming the file.
        context: String,
        /// The underlying error.
        #[source]
        source: Arc<io::Error>,
    },
    /// The operation or on-disk feature is not supported by this build.
    #[error("not supported: {0}")]
    NotSupported(String),
    /// An operation asked not to wait would have had to — for the disk (a read with
    /// [`ReadOptions::memory_only`](crate::ReadOptions::memory_only)), or for another writer,
    /// room in the memtable or a sync ([`DB::try_write`](crate::DB::try_write)). Nothing was
    /// done: the same call without that request does the work, waiting as it must.
    #[error("would block: {0}")]
    WouldBlock(String),
}

/// Where and why stored bytes were found to be bad.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Corruption {
    /// The file the bytes came from, when known.
    pub file: Option<String>,
    /// Byte offset within that file (or within the decoded unit, before a file is attached).
    pub offset: Option<u64>,
    /// What was wrong.
    pub reason: String,
}

impl fmt::Display for Corruption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)?;
        match (&self.file, self.offset) {
            (Some(file), Some(offset)) => write!(f, " (in {file} at offset {offset})"),
            (Some(file), None) => write!(f, " (in {file})"),
            (None, Some(offset)) => write!(f, " (at offset {offset})"),
            (None, None) => Ok(()),
        }
    }
}

impl Error {
    /// A corruption error with a reason and no location yet.
    pub fn corruption(reason: impl Into<String>) -> Error {
        Error::Corruption(Corruption {
            file: None,
            offset: None,
            reason: reason.into(),
        })
    }

    /// A corruption error at a byte offset.
    pub fn corruption_at(offset: u64, reason: impl Into<String>) -> Error {
        Error::Corruption(Corruption {
            file: None,
            offset: Some(offset),
            reason: reason.into(),
        })
    }

    /// Attaches a file name to a corruption error that has none; other errors pass unchanged.
    pub fn in_file(mut self, file: impl fmt::Display) -> Error {
        if let Error::Corruption(c) = &mut self {
            if c.file.is_none() {
                c.file = Some(file.to_string());
            }
        }
        self
    }

    /// Shifts a corruption's offset by `base`: a decoder reports offsets within the unit it
    /// decoded (a log record, a block); its caller knows where that unit starts in the file.
    pub(crate) fn offset_by(mut self, base: u64) -> Error {
        if let Error::Corruption(c) = &mut self {
            c.offset = Some(base + c.offset.unwrap_or(0));
        }
        self
    }

    /// Wraps an I/O error with what was being done (an `Env` implementation's failures).
    pub fn io(context: impl Into<String>, source: io::Error) -> Error {
        Error::Io {
            context: context.into(),
            source: Arc::new(source),
        }
    }

    /// True for `Corruption`.
    pub fn is_corruption(&self) -> bool {
        matches!(self, Error::Corruption(_))
    }

    /// True for `Io`.
    pub fn is_io_error(&self) -> bool {
        matches!(self, Error::Io { .. })
    }

    /// The corruption details, if this is a corruption error.
    pub fn corruption_details(&self) -> Option<&Corruption> {
        match self {
            Error::Corruption(c) => Some(c),
            _ => None,
        }
    }
}
