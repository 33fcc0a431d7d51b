//! In-memory files for tests and the `testing` helpers: a writable file that appends to a
//! shared `Vec<u8>` ([`VecSink`]), a sequential file ([`VecSource`]) and a random-access file
//! ([`VecFile`]) over owned bytes. Not used by the engine, which goes through an `Env`.

use std::sync::Arc;

use parking_lot::Mutex;

use crate::env::{RandomAccessFile, SequentialFile, WritableFile};
use crate::error::Result;

/// A writable file whose bytes land in a shared buffer, visible through [`VecSink::contents`].
/// Clones share the buffer.
#[derive(Clone, Default)]
pub(crate) struct VecSink {
    data: Arc<Mutex<Vec<u8>>>,
}

impl VecSink {
    pub(crate) fn new() -> VecSink {
        VecSink::default()
    }

    /// A copy of every byte appended so far.
    pub(crate) fn contents(&self) -> Vec<u8> {
        self.data.lock().clone()
    }
}

impl WritableFile for VecSink {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.data.lock().extend_from_slice(data);
        Ok(())
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

/// A sequential file over owned bytes. `max_read` caps how much one `read` returns, to exercise
/// readers against short reads.
pub(crate) struct VecSource {
    data: Vec<u8>,
    pos: usize,
    max_read: usize,
}

impl VecSource {
    pub(crate) fn new(data: Vec<u8>) -> VecSource {
        VecSource {
            data,
            pos: 0,
            max_read: usize::MAX,
        }
    }

    /// Like [`VecSource::new`], but each `read` returns at most `max_read` bytes (at least 1).
    #[cfg(test)]
    pub(crate) fn with_max_read(data: Vec<u8>, max_read: usize) -> VecSource {
        VecSource {
            data,
            pos: 0,
            max_read: max_read.max(1),
        }
    }
}

impl SequentialFile for VecSource {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        let rest = self.data.get(self.pos..).unwrap_or(&[]);
        let n = rest.len().min(buf.len()).min(self.max_read);
        buf[..n].copy_from_slice(&rest[..n]);
        self.pos += n;
        Ok(n)
    }

    fn skip(&mut self, n: u64) -> Result<()> {
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        self.pos = self.pos.saturating_add(n).min(self.data.len());
        Ok(())
    }
}

/// A read-only file holding `bytes`; made with [`VecFile::sharing`], it also shares them as a
/// mapped file does ([`RandomAccessFile::shared`]), so a table kept in it reads its
/// uncompressed blocks in place there.
pub(crate) struct VecFile {
    bytes: bytes::Bytes,
    sharing: bool,
}

impl VecFile {
    pub(crate) fn new(bytes: Vec<u8>) -> VecFile {
        VecFile {
            bytes: bytes.into(),
            sharing: false,
        }
    }

    pub(crate) fn sharing(bytes: Vec<u8>) -> VecFile {
        VecFile {
            bytes: bytes.into(),
            sharing: true,
        }
    }
}

impl RandomAccessFile for VecFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(self.bytes.len());
        let src = self.bytes.get(start..).unwrap_or(&[]);
        let n = src.len().min(buf.len());
        buf[..n].copy_from_slice(&src[..n]);
        Ok(n)
    }

    fn shared(&self) -> Option<bytes::Bytes> {
        self.sharing.then(|| self.bytes.clone())
    }

    fn in_memory(&self, _offset: u64, _len: usize) -> bool {
        true
    }
}
