//! A write-ahead log written through a shared memory map ([`PosixEnv::new_log_file`]).
//!
//! An append is a copy into the page cache, without a system call, and survives a crash of the
//! process exactly as a `write` does (the pages belong to the file, not to the process); `sync`
//! is `fdatasync`, which writes back pages dirtied through the map too.
//!
//! The file grows in chunks of [`CHUNK`] bytes, each reserved with `posix_fallocate` before it
//! is mapped: a full disk is an error at the append that needs the chunk, never a `SIGBUS` at
//! a later store. Until `close` (or drop) cuts the file to its written length its tail is
//! zeros, so a crash leaves a zero-filled tail: log readers take zeros up to the end of the
//! file as the end of the log (`log/reader.rs`), as LevelDB's reader does.
//!
//! [`PosixEnv::new_log_file`]: super::PosixEnv

use std::fs::File;
use std::io;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use memmap2::{MmapMut, MmapOptions};

use super::context;
use crate::env::WritableFile;
use crate::error::{Error, Result};

/// Bytes mapped (and reserved on disk) at a time; a multiple of every page size.
const CHUNK: usize = 1 << 20;

/// See the module documentation. `file` is `None` once closed.
pub(super) struct MappedLogFile {
    file: Option<File>,
    path: PathBuf,
    /// The chunk being written.
    map: Option<MmapMut>,
    /// Bytes of the chunk already written.
    used: usize,
    /// Bytes written to the file.
    len: u64,
}

impl MappedLogFile {
    /// A writer for `file`, which must be empty.
    pub(super) fn new(file: File, path: &Path) -> MappedLogFile {
        MappedLogFile {
            file: Some(file),
            path: path.to_path_buf(),
            map: None,
            used: 0,
            len: 0,
        }
    }

    fn open_file(&self, op: &str) -> Result<&File> {
        self.file
            .as_ref()
            .ok_or_else(|| Error::io(context(op, &self.path), io::Error::other("file is closed")))
    }

    /// Reserves and maps the chunk starting at the written length.
    fn map_next_chunk(&mut self) -> Result<()> {
        self.map = None;
        let file = self.open_file("append to")?;
        let offset = self.len;
        let (Ok(start), Ok(len)) = (i64::try_from(offset), i64::try_from(CHUNK)) else {
            return Err(Error::io(
                context("append to", &self.path),
                io::Error::other("file too large"),
            ));
        };
        // SAFETY: the descriptor is open while `file` is borrowed; the call reads integers.
        let rc = unsafe { libc::posix_fallocate(file.as_raw_fd(), start, len) };
        if rc != 0 {
            return Err(Error::io(
                context("reserve space in", &self.path),
                io::Error::from_raw_os_error(rc),
            ));
        }
        // SAFETY: the mapped range lies inside the file (just reserved), and only this writer
        // changes the file while it is mapped: the engine never truncates or writes a live
        // log another way, and readers only read it.
        let map = unsafe {
            MmapOptions::new()
                .offset(offset)
                .len(CHUNK)
                .populate()
                .map_mut(file)
        }
        .map_err(|e| Error::io(context("map", &self.path), e))?;
        self.map = Some(map);
        self.used = 0;
        Ok(())
    }

    /// Unmaps the chunk and cuts the file to its written length.
    fn finish(&mut self) -> Result<()> {
        self.map = None;
        let file = self.open_file("close")?;
        file.set_len(self.len)
            .map_err(|e| Error::io(context("truncate", &self.path), e))
    }
}

impl WritableFile for MappedLogFile {
    fn append(&mut self, mut data: &[u8]) -> Result<()> {
        self.open_file("append to")?;
        while !data.is_empty() {
            if self.map.is_none() || self.used == CHUNK {
                self.map_next_chunk()?;
            }
            let Some(map) = self.map.as_mut() else {
                return Err(Error::io(
                    context("append to", &self.path),
                    io::Error::other("no chunk mapped"),
                ));
            };
            let n = data.len().min(CHUNK - self.used);
            let (head, tail) = data.split_at(n);
            map[self.used..self.used + n].copy_from_slice(head);
            self.used += n;
            self.len += n as u64;
            data = tail;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        // Stores into a shared map are in the page cache already.
        self.open_file("flush").map(|_| ())
    }

    fn sync(&mut self) -> Result<()> {
        let file = self.open_file("sync")?;
        file.sync_data()
            .map_err(|e| Error::io(context("sync", &self.path), e))
    }

    fn close(&mut self) -> Result<()> {
        let result = self.finish();
        self.file = None;
        result
    }
}

impl Drop for MappedLogFile {
    fn drop(&mut self) {
        if self.file.is_some() {
            let _ = self.finish();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::env::{Env, PosixEnv};
    use crate::log::{LogReader, LogWriter, Reporter};

    /// Appends crossing chunk boundaries in uneven pieces.
    fn pieces() -> Vec<Vec<u8>> {
        (0..40u32)
            .map(|i| vec![i as u8; (i as usize * 7919) % 150_000 + 1])
            .collect()
    }

    #[test]
    fn close_and_drop_cut_the_file_to_what_was_written() {
        let dir = tempfile::tempdir().unwrap();
        let env = PosixEnv::new();
        for close in [true, false] {
            let path = dir.path().join(format!("{close}.log"));
            let mut file = env.new_log_file(&path).unwrap();
            let mut expected = Vec::new();
            for piece in pieces() {
                file.append(&piece).unwrap();
                file.flush().unwrap();
                expected.extend_from_slice(&piece);
            }
            assert!(expected.len() > 2 * CHUNK);
            file.sync().unwrap();
            if close {
                file.close().unwrap();
                assert!(file.append(b"x").is_err(), "append after close");
            } else {
                drop(file);
            }
            assert_eq!(fs::read(&path).unwrap(), expected);
        }
    }

    #[test]
    fn flushed_appends_are_in_the_file_at_once_with_a_zero_tail() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("live.log");
        let mut file = PosixEnv::new().new_log_file(&path).unwrap();
        file.append(b"abc").unwrap();
        file.flush().unwrap();
        let bytes = fs::read(&path).unwrap();
        assert_eq!(bytes.len(), CHUNK);
        assert_eq!(&bytes[..3], b"abc");
        assert!(bytes[3..].iter().all(|&b| b == 0));
    }

    struct Reports(std::sync::Arc<parking_lot::Mutex<Vec<String>>>);

    impl Reporter for Reports {
        fn corruption(&mut self, bytes: u64, reason: &Error) {
            self.0.lock().push(format!("{bytes} bytes: {reason}"));
        }
    }

    /// A crash leaves the zero tail in place: the log still reads back whole, with nothing
    /// reported as damage.
    #[test]
    fn a_log_left_unclosed_reads_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("crashed.log");
        let env = PosixEnv::new();
        let mut writer = LogWriter::new(env.new_log_file(&path).unwrap());
        let records = pieces();
        for record in &records {
            writer.add_record(record).unwrap();
        }
        // No close, no drop: as if the process had died here.
        std::mem::forget(writer);
        assert_eq!(fs::metadata(&path).unwrap().len() % CHUNK as u64, 0);

        let reports = std::sync::Arc::new(parking_lot::Mutex::new(Vec::new()));
        let file = env.new_sequential_file(&path).unwrap();
        let mut reader = LogReader::new(file, Some(Box::new(Reports(reports.clone()))), true, 0);
        let mut scratch = Vec::new();
        let mut read = Vec::new();
        while let Some(record) = reader.read_record(&mut scratch) {
            read.push(record.to_vec());
        }
        assert_eq!(read, records);
        assert!(reports.lock().is_empty(), "{:?}", reports.lock());
    }
}
