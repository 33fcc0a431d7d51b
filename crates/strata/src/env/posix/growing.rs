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

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::{open_read, pread, Permit, DESCRIPTORS, MAPPED};
use crate::env::RandomAccessFile;
use crate::error::{Error, Result};

/// A growing file mapped `capacity` bytes long; see the module documentation.
pub(super) struct GrowingFile {
    map: memmap2::Mmap,
    /// Kept open for `fstat` and for reads the mapping cannot serve.
    file: File,
    /// A length the file has been seen to have: it only grows, so every byte below it is
    /// the file's (a cache of `fstat`; any thread may raise it).
    seen: AtomicU64,
    path: PathBuf,
    _permits: (Permit, Permit),
}

impl GrowingFile {
    /// `path` mapped `capacity` bytes long, holding a mapping and a descriptor permit; `None`
    /// when either permit is out or the kernel refuses the mapping (the caller reads the file
    /// as any other).
    pub(super) fn open(path: &Path, capacity: u64) -> Result<Option<GrowingFile>> {
        let file = open_read(path)?;
        let Some(len) = usize::try_from(capacity).ok().filter(|&len| len > 0) else {
            return Ok(None);
        };
        let (Some(mapped), Some(descriptor)) = (MAPPED.take(), DESCRIPTORS.take()) else {
            return Ok(None);
        };
        let seen = file
            .metadata()
            .map_err(|e| Error::io(format!("stat {}", path.display()), e))?
            .len();
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

    /// Whether the `len` bytes at `offset` lie in the file, asking its length when they reach
    /// past the length last seen.
    fn holds(&self, offset: u64, len: usize) -> Result<bool> {
        let Some(end) = offset.checked_add(len as u64) else {
            return Ok(false);
        };
        if end <= self.seen.load(Ordering::Relaxed) {
            return Ok(true);
        }
        let now = self
            .file
            .metadata()
            .map_err(|e| Error::io(format!("stat {}", self.path.display()), e))?
            .len();
        self.seen.fetch_max(now, Ordering::Relaxed);
        Ok(end <= now)
    }
}

impl RandomAccessFile for GrowingFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let in_map = usize::try_from(offset)
            .ok()
            .and_then(|start| Some(start..start.checked_add(buf.len())?))
            .filter(|range| range.end <= self.map.len());
        match in_map {
            Some(range) if self.holds(offset, buf.len())? => {
                buf.copy_from_slice(&self.map[range]);
                Ok(buf.len())
            }
            _ => pread(&self.file, &self.path, offset, buf),
        }
    }
}
