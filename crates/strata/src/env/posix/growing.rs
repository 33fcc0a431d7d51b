//! A file another part of this process is appending to, mapped once past its end
//! ([`PosixEnv::new_growing_random_access_file`]): reads of what is appended after the mapping
//! was made need no new mapping, and no system call beyond an `fstat` the first time a read
//! reaches past the length last seen.
//!
//! A shared mapping may be longer than its file. The pages past the end of the file are
//! address space only; once the file grows over them they show its bytes (the page cache
//! backs both the mapping and `write`), but touching a page that lies wholly past the end of
//! the file raises `SIGBUS`. So a read copies from the mapping only below a length the file
//! was seen to have (`fstat` on the descriptor this reader keeps), and the file must never
//! shrink while the reader lives: value files, its users, are only appended to and retired by
//! unlinking, which leaves a mapping valid (UNSAFE.md). A read past the mapping's capacity,
//! or past the file's end, goes through `pread`, which reads what there is.
//!
//! Linux only: the kernel keeps `write` and a shared mapping of the same file coherent (one
//! page cache backs both), so a page mapped before a later append shows it. POSIX does not
//! promise that (OpenBSD, without a unified buffer cache, does not), and a stale page would
//! read as a damaged value; elsewhere `PosixEnv` opens the file as any other.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::{context, open_read, pread, Permit, DESCRIPTORS, MAPPED};
use crate::env::RandomAccessFile;
use crate::error::{Error, Result};

/// A growing file mapped `capacity` bytes long; see the module documentation.
pub(super) struct GrowingFile {
    map: memmap2::Mmap,
    /// Kept open for `fstat` and for reads the mapping cannot serve.
    file: File,
    /// A length the file has been seen to have: it only grows, so every byte below it is
    /// the file's (a cache of `fstat`; any thread may raise it, and one that reads a length
    /// another raised also sees the bytes that thread saw below it).
    seen: AtomicU64,
    path: PathBuf,
    _permits: (Permit, Permit),
}

impl GrowingFile {
    /// `path` mapped `capacity` bytes long, holding a mapping and a descriptor permit; `None`
    /// when either permit is out or the kernel refuses the mapping (the caller reads the file
    /// as any other).
    pub(super) fn open(path: &Path, capacity: u64) -> Result<Option<GrowingFile>> {
        let Some(len) = usize::try_from(capacity).ok().filter(|&len| len > 0) else {
            return Ok(None);
        };
        let (Some(mapped), Some(descriptor)) = (MAPPED.take(), DESCRIPTORS.take()) else {
            return Ok(None);
        };
        let file = open_read(path)?;
        let seen = length(&file, path)?;
        // SAFETY: a shared, read-only mapping; `read_at` copies from it only below a length
        // the file was seen to have, and the file never shrinks while this reader lives (the
        // module documentation), so every byte it touches lies in the file. The pages past
        // the file's end are never touched until the file has grown over them.
        let Ok(map) = (unsafe { memmap2::MmapOptions::new().len(len).map(&file) }) else {
            return Ok(None);
        };
        Ok(Some(GrowingFile {
            map,
            file,
            seen: AtomicU64::new(seen),
            path: path.to_path_buf(),
            _permits: (mapped, descriptor),
        }))
    }

    /// Whether the file holds its first `end` bytes, asking its length when `end` is past
    /// the length last seen.
    fn holds(&self, end: u64) -> Result<bool> {
        if end <= self.seen.load(Ordering::Acquire) {
            return Ok(true);
        }
        let now = length(&self.file, &self.path)?;
        self.seen.fetch_max(now, Ordering::AcqRel);
        Ok(end <= now)
    }
}

/// The length of `file` (opened on `path`) now.
fn length(file: &File, path: &Path) -> Result<u64> {
    file.metadata()
        .map(|m| m.len())
        .map_err(|e| Error::io(context("stat", path), e))
}

impl RandomAccessFile for GrowingFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let in_map = usize::try_from(offset)
            .ok()
            .and_then(|start| Some(start..start.checked_add(buf.len())?))
            .filter(|range| range.end <= self.map.len());
        match in_map {
            Some(range) if self.holds(range.end as u64)? => {
                buf.copy_from_slice(&self.map[range]);
                Ok(buf.len())
            }
            _ => pread(&self.file, &self.path, offset, buf),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::Arc;

    use super::super::tests::resident_kib;
    use super::*;

    /// What the reader is for: bytes appended after it was opened are copied out of its one
    /// mapping (its pages enter the resident set, the length seen follows the file), not
    /// read with `pread` (which leaves the mapping untouched).
    #[test]
    fn bytes_appended_after_open_are_read_from_the_mapping() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("000005.vlog");
        let mut writer = File::create(&path).unwrap();
        writer.write_all(&[1; 10]).unwrap();
        let file = GrowingFile::open(&path, 4 << 20).unwrap().expect("mapped");
        assert_eq!(file.seen.load(Ordering::Relaxed), 10);
        assert_eq!(resident_kib(file.map.as_ptr()), 0);
        let chunk: Vec<u8> = (0..256u32 << 10).map(|i| (i % 251) as u8).collect();
        writer.write_all(&chunk).unwrap();
        let mut buf = vec![0u8; chunk.len()];
        assert_eq!(file.read_at(10, &mut buf).unwrap(), chunk.len());
        assert_eq!(buf, chunk);
        assert_eq!(file.seen.load(Ordering::Relaxed), 10 + chunk.len() as u64);
        let resident = resident_kib(file.map.as_ptr());
        assert!(resident >= 200, "{resident} KiB of the mapping resident");
    }

    /// A file already longer than the capacity when opened (one append can be larger than
    /// the size files are cut at), and an empty one.
    #[test]
    fn a_file_longer_than_the_capacity_or_empty_reads_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("long");
        let bytes: Vec<u8> = (0..40_000u32).map(|i| (i % 253) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let file = GrowingFile::open(&path, 8192).unwrap().expect("mapped");
        for (at, len) in [
            (0, 40_000),
            (8000, 400),
            (8192, 100),
            (39_990, 20),
            (40_000, 8),
        ] {
            let mut buf = vec![0u8; len];
            let got = file.read_at(at as u64, &mut buf).unwrap();
            let want = &bytes[at.min(bytes.len())..(at + len).min(bytes.len())];
            assert_eq!(&buf[..got], want, "{at}+{len}");
        }
        let empty = dir.path().join("empty");
        std::fs::write(&empty, b"").unwrap();
        let file = GrowingFile::open(&empty, 1 << 20).unwrap().expect("mapped");
        assert_eq!(file.read_at(0, &mut [0u8; 8]).unwrap(), 0);
        assert_eq!(file.read_at(5000, &mut [0u8; 8]).unwrap(), 0);
        assert_eq!(file.read_at(0, &mut []).unwrap(), 0);
        std::fs::OpenOptions::new()
            .append(true)
            .open(&empty)
            .unwrap()
            .write_all(b"abc")
            .unwrap();
        let mut buf = [0u8; 8];
        assert_eq!(file.read_at(0, &mut buf).unwrap(), 3);
        assert_eq!(&buf[..3], b"abc");
        // A capacity of zero maps nothing: the caller reads the file as any other.
        assert!(GrowingFile::open(&empty, 0).unwrap().is_none());
    }

    /// Readers on other threads read each record as soon as the writer publishes its end,
    /// through the length another reader raised as well as through their own `fstat`.
    #[test]
    fn readers_on_other_threads_follow_a_writer() {
        const RECORD: usize = 1500;
        const RECORDS: u64 = 2000;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("grow");
        let mut writer = File::create(&path).unwrap();
        let file = Arc::new(GrowingFile::open(&path, 1 << 20).unwrap().expect("mapped"));
        let published = Arc::new(AtomicU64::new(0));
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let (file, published) = (Arc::clone(&file), Arc::clone(&published));
                std::thread::spawn(move || {
                    let mut buf = vec![0u8; RECORD];
                    let mut over = vec![0u8; 3 * RECORD];
                    loop {
                        let n = published.load(Ordering::Acquire);
                        if n > 0 {
                            let at = (n - 1) * RECORD as u64;
                            assert_eq!(file.read_at(at, &mut buf).unwrap(), RECORD);
                            assert!(buf.iter().all(|&b| b == (n % 256) as u8), "{n}");
                            // Past the end: short, whatever the writer does meanwhile.
                            let got = file.read_at(at, &mut over).unwrap();
                            assert!(got >= RECORD, "{n}: {got}");
                        }
                        if n == RECORDS {
                            break;
                        }
                    }
                })
            })
            .collect();
        for n in 1..=RECORDS {
            writer.write_all(&[(n % 256) as u8; RECORD]).unwrap();
            published.store(n, Ordering::Release);
        }
        for reader in readers {
            reader.join().unwrap();
        }
    }
}
