//! The `Env`: every byte of file-system I/O the engine does goes through this trait.
//!
//! Implementations: [`PosixEnv`] (the real file system; the `LOCK` file is taken with
//! `fcntl(F_SETLK)` so a LevelDB process and a Strata process exclude each other) and
//! [`MemEnv`] (a process-local, in-memory file system for tests and transient stores).
//! Wrappers (fault injection, I/O accounting) implement `Env` by delegating to an inner `Env`,
//! so the engine never knows which one it runs on.
//!
//! Contracts every implementation keeps:
//! - `new_writable_file` creates or truncates; `new_appendable_file` creates or appends.
//! - A `WritableFile`'s `append`ed bytes reach the operating system (survive a process crash)
//!   once `flush` returns; they survive power loss once `sync` returns. Dropping a writer
//!   without `close` flushes but does not sync.
//! - A file created, linked or renamed survives power loss only after `sync_dir` on its
//!   directory.
//! - `rename` moves a file, or a whole directory to a name that does not exist yet.
//! - `link_file` gives an existing file a second name (a hard link). An `Env` that cannot
//!   answers `Error::NotSupported` (the default), and callers copy the file instead.
//! - `lock_file` fails with an error naming the file when another holder (this process or any
//!   other) has the lock; the lock is released by `unlock_file`, by dropping the [`FileLock`], or
//!   when the process exits.
//! - Failures are `Error::Io` whose context names the operation and the path; a missing file or
//!   directory gives an `io::ErrorKind::NotFound` source.
//! - Methods are safe to call from many threads at once.

#[cfg(test)]
pub(crate) mod conformance;
#[cfg(feature = "testing")]
pub(crate) mod fault;
mod logger;
mod mem;
pub(crate) mod posix;
mod read_only;
#[cfg(any(test, feature = "testing"))]
pub(crate) mod vec_files;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::error::Result;

pub use logger::Logger;
pub use mem::MemEnv;
pub use posix::PosixEnv;
pub(crate) use read_only::ReadOnlyEnv;

/// A file read from start to end (log and manifest replay).
pub trait SequentialFile: Send {
    /// Reads up to `buf.len()` bytes; returns how many were read, fewer only at the end of the
    /// file (0 there).
    fn read(&mut self, buf: &mut [u8]) -> Result<usize>;
    /// Skips `n` bytes forward (past the end is allowed and leaves the file at its end).
    fn skip(&mut self, n: u64) -> Result<()>;
}

/// A file read at arbitrary offsets by many threads at once (tables).
pub trait RandomAccessFile: Send + Sync {
    /// Reads up to `buf.len()` bytes at `offset`; returns how many were read, fewer only at the
    /// end of the file.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize>;

    /// The whole file as one slice, when it is memory-mapped: reads then copy from the
    /// mapping (or decompress straight out of it) instead of making a system call. `None` (the
    /// default) sends every read through [`read_at`](Self::read_at).
    fn mapped(&self) -> Option<&[u8]> {
        None
    }

    /// The bytes [`mapped`](Self::mapped) lends, as a handle that keeps the mapping alive: a
    /// table reads the blocks stored uncompressed in place there instead of copying them onto
    /// the heap (as LevelDB does with a mapped table), keeping its index, filter and metaindex
    /// blocks for as long as it is open. Only for a file whose mapped bytes never change.
    /// `None` (the default) makes the table copy them.
    fn shared(&self) -> Option<bytes::Bytes> {
        None
    }

    /// Whether reading the `len` bytes at `offset` would wait for no disk: they are in memory
    /// (an in-memory file; pages of a mapped file the operating system holds). `false` (the
    /// default) when that cannot be told; reads with `ReadOptions::memory_only` then leave
    /// them to a read that may wait.
    fn in_memory(&self, offset: u64, len: usize) -> bool {
        let _ = (offset, len);
        false
    }

    /// Tells the file that the `len` bytes at `offset` will not be read again soon (a
    /// background scan has passed them): a mapped file drops their pages from the process's
    /// resident memory (the operating system keeps them cached, and a later read maps them
    /// again), so a compaction reading a large mapped table does not pile up resident memory.
    /// Nothing (the default) for other files.
    fn release(&self, offset: u64, len: u64) {
        let _ = (offset, len);
    }
}

/// A file written by appending (logs, tables, manifests).
pub trait WritableFile: Send {
    /// Appends `data`. It may sit in a user-space buffer until `flush`.
    fn append(&mut self, data: &[u8]) -> Result<()>;
    /// Appends `data`: the log writer's bytes for one whole record (its fragments, after any
    /// trailer of the block before), starting `block_left` bytes (1 to 32 KiB) before the end of
    /// the log block they start in. A file made by [`Env::new_log_file`] may then show zeros
    /// after them up to that block's end at most (until the next append), which log readers take
    /// for the log's end, and a process crash at any instant of the call must leave the file
    /// ending, or showing a zero header, where readers take the log to end cleanly. The default
    /// is [`WritableFile::append`] (a crash leaves a prefix of `data`, then the file's end).
    fn append_record(&mut self, data: &[u8], block_left: usize) -> Result<()> {
        let _ = block_left;
        self.append(data)
    }
    /// Hands every appended byte to the operating system.
    fn flush(&mut self) -> Result<()>;
    /// Makes every appended byte durable (flushes first).
    fn sync(&mut self) -> Result<()>;
    /// Flushes, then asks the operating system to start writing every appended byte to the
    /// device without waiting for it, so that a later [`WritableFile::sync`] has less left to
    /// wait for. Makes nothing durable: only `sync` does. The default only flushes.
    fn start_writeback(&mut self) -> Result<()> {
        self.flush()
    }
    /// Flushes and closes; later calls fail.
    fn close(&mut self) -> Result<()>;
}

/// A held lock on a file; give it back to [`Env::unlock_file`]. Dropping it also releases it.
pub trait FileLock: Send + Sync {
    /// The locked file.
    fn path(&self) -> &Path;
}

/// Access to a file system. See the module documentation for the contract.
pub trait Env: Send + Sync {
    /// Opens `path` for reading from the start.
    fn new_sequential_file(&self, path: &Path) -> Result<Box<dyn SequentialFile>>;
    /// Opens `path` for positional reads.
    fn new_random_access_file(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>>;
    /// Opens `path` for positional reads, holding the bytes it has now for as long as the
    /// returned file lives, even once `path` is unlinked, and outside any budget
    /// [`Env::new_random_access_file`] keeps (so a file it opens may reopen `path` for a read):
    /// it fails up front when the file cannot be held. Bytes appended after the call may be read
    /// through `path`. A read-only handle pins the tables of the versions in use this way. The
    /// default is `new_random_access_file`, right for an env whose files never reopen by path.
    fn new_held_random_access_file(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        self.new_random_access_file(path)
    }
    /// Opens `path`, a file this process is appending to, for positional reads that stay
    /// cheap as it grows: [`PosixEnv`] maps it `capacity` bytes long, past its end, so
    /// records appended later are read from that one mapping (see `posix/growing.rs`). The
    /// file must never shrink while the returned file lives. The default is
    /// `new_random_access_file`.
    fn new_growing_random_access_file(
        &self,
        path: &Path,
        capacity: u64,
    ) -> Result<Arc<dyn RandomAccessFile>> {
        let _ = capacity;
        self.new_random_access_file(path)
    }
    /// Creates `path`, truncating it if it exists.
    fn new_writable_file(&self, path: &Path) -> Result<Box<dyn WritableFile>>;
    /// Creates the write-ahead log `path`, truncating it if it exists: a file of many small
    /// appends, each flushed at once, written only through a `LogWriter`. By default
    /// [`Env::new_writable_file`]; the POSIX Env writes it through a memory map (no system
    /// call per append), so until `close` its tail may be zeros.
    fn new_log_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        self.new_writable_file(path)
    }
    /// Opens `path` for appending, creating it if missing.
    fn new_appendable_file(&self, path: &Path) -> Result<Box<dyn WritableFile>>;
    /// True when `path` names an existing file or directory.
    fn file_exists(&self, path: &Path) -> bool;
    /// Names (not paths) of the entries of directory `dir`.
    fn children(&self, dir: &Path) -> Result<Vec<String>>;
    /// Removes the file `path`.
    fn remove_file(&self, path: &Path) -> Result<()>;
    /// Creates directory `dir` and any missing parents; succeeds if it already exists.
    fn create_dir(&self, dir: &Path) -> Result<()>;
    /// Removes the empty directory `dir`.
    fn remove_dir(&self, dir: &Path) -> Result<()>;
    /// Size of the file `path` in bytes.
    fn file_size(&self, path: &Path) -> Result<u64>;
    /// Atomically replaces `to` with `from`. A directory may be renamed to a name that does
    /// not exist.
    fn rename(&self, from: &Path, to: &Path) -> Result<()>;
    /// Makes `to` a second name of the existing file `from` (a hard link); `to` must not exist.
    /// The default answers `Error::NotSupported`: callers then copy the file.
    fn link_file(&self, from: &Path, to: &Path) -> Result<()> {
        Err(crate::error::Error::NotSupported(format!(
            "hard links ({} to {})",
            from.display(),
            to.display()
        )))
    }
    /// Takes an exclusive lock on `path`, creating it if missing.
    fn lock_file(&self, path: &Path) -> Result<Box<dyn FileLock>>;
    /// Releases a lock taken by [`Env::lock_file`].
    fn unlock_file(&self, lock: Box<dyn FileLock>) -> Result<()>;
    /// Makes the directory's entries (creations, renames, removals) durable.
    fn sync_dir(&self, dir: &Path) -> Result<()>;
    /// Microseconds since the Unix epoch: the wall clock. Statistics and the info log use
    /// it, and expiring keys (`DB::put_with_ttl`) expire by it, so an `Env` must not count
    /// from another point (a test may stop and move it, as `MemEnv` lets one).
    fn now_micros(&self) -> u64;
    /// Lowers the calling thread's CPU priority below the application's threads (RocksDB's
    /// `Env::LowerThreadPoolCPUPriority`), for the threads it starts too. Compaction threads
    /// call it when they start, so that where there are fewer cores than busy threads, a
    /// compaction waits for the processor rather than a write. The default does nothing;
    /// `PosixEnv` lowers it on Linux.
    fn lower_thread_priority(&self) {}
    /// Gives the calling thread (and those it starts) the lowest priority of the normal
    /// scheduling (not an idle policy, which busy processors starve), for work no operation
    /// waits for (closing the database does wait for it to end). The thread closing retired
    /// logs calls it: the last close of a deleted log frees its blocks, which on a file system
    /// mounted with `discard` is a discard the closing thread waits for piece by piece, and
    /// each completion woke it on the writer's processor, ahead of the writer (in 10M sorted
    /// writes in batches of 1000 here, most of the 56-95 batches over 10x the median waited
    /// so, 3 ms each, at memtable switches). It must not be starved either: each retired log
    /// it has not closed yet holds a descriptor, a mapping and the deleted file's blocks. The
    /// default does nothing; `PosixEnv` sets nice 19 on Linux.
    fn lowest_thread_priority(&self) {}
    /// Asks the scheduler to run the calling thread (and the threads it starts) in turns of
    /// `slice` on the processor. Background threads call it when they start, to decide how
    /// they share a busy processor with the application's threads (`db/background.rs`). The
    /// default does nothing; `PosixEnv` sets the thread's time slice on Linux (which honours
    /// it from 6.12 and ignores it before). `Duration::ZERO` asks for the scheduler's default.
    fn set_thread_time_slice(&self, slice: Duration) {
        let _ = slice;
    }
}

impl std::fmt::Debug for dyn Env {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Env")
    }
}

/// Reads the whole file at `path`.
pub(crate) fn read_file_to_vec(env: &dyn Env, path: &Path) -> Result<Vec<u8>> {
    let mut file = env.new_sequential_file(path)?;
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            return Ok(out);
        }
        out.extend_from_slice(&buf[..n]);
    }
}

/// Reads from `offset` of `file` until `buf` is full or the file ends; returns the number of
/// bytes read.
pub(crate) fn read_fully(
    file: &dyn RandomAccessFile,
    offset: u64,
    buf: &mut [u8],
) -> Result<usize> {
    let mut done = 0;
    while let Some(rest) = buf.get_mut(done..) {
        if rest.is_empty() {
            break;
        }
        let n = file.read_at(offset + done as u64, rest)?;
        if n == 0 {
            break;
        }
        done += n.min(rest.len());
    }
    Ok(done)
}

/// Writes `data` to `path` (truncating), optionally syncing it.
pub(crate) fn write_file(env: &dyn Env, path: &Path, data: &[u8], sync: bool) -> Result<()> {
    let mut file = env.new_writable_file(path)?;
    file.append(data)?;
    if sync {
        file.sync()?;
    }
    file.close()
}

/// `path` with `.` removed and `..` folded into its parent, lexically (a `..` above a root is
/// dropped): how the in-memory and fault-injecting Envs name files.
pub(crate) fn normalize_path(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The directory that holds `path` (or `.` for a bare name).
pub(crate) fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}
