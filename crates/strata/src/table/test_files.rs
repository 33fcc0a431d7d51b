//! In-memory files for table tests and the `testing` feature: a `RandomAccessFile` over a
//! `Vec<u8>` and a `WritableFile` whose bytes stay reachable after the writer is handed away.

use std::sync::Arc;

use parking_lot::Mutex;

use crate::env::{RandomAccessFile, WritableFile};
use crate::error::Result;

/// A read-only file holding `bytes`.
pub(crate) struct VecFile {
    bytes: Vec<u8>,
}

impl VecFile {
    pub(crate) fn new(bytes: Vec<u8>) -> VecFile {
        VecFile { bytes }
    }
}

impl RandomAccessFile for VecFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(self.bytes.len());
        let src = self.bytes.get(start..).unwrap_or(&[]);
        let n = src.len().min(buf.len());
        for (dst, src) in buf.iter_mut().zip(src).take(n) {
            *dst = *src;
        }
        Ok(n)
    }
}

/// A writable file appending to a shared buffer.
#[derive(Clone, Default)]
pub(crate) struct SharedVecFile {
    bytes: Arc<Mutex<Vec<u8>>>,
}

impl SharedVecFile {
    pub(crate) fn new() -> SharedVecFile {
        SharedVecFile::default()
    }

    /// A copy of everything appended so far.
    pub(crate) fn contents(&self) -> Vec<u8> {
        self.bytes.lock().clone()
    }
}

impl WritableFile for SharedVecFile {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.bytes.lock().extend_from_slice(data);
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
