//! [`HookEnv`]: an [`Env`] wrapper that calls a hook before every operation, so a test can
//! fail, delay or hold back exactly the I/O it aims at (Pebble's `errorfs` works this way).
//!
//! The hook is given an [`EnvCall`] — the operation ([`EnvOp`]) and its path — on the thread
//! about to do it, before the operation reaches the inner env: for the env's own methods and for
//! every method of the files opened through it (reads, skips, appends, flushes, writeback
//! requests, syncs, closes; the flush a writeback request makes reaches the inner file without
//! a `Flush` call of its own).
//! What the hook does decides the operation's fate:
//! - it returns `Ok(())`: the operation goes ahead;
//! - it returns `Err(e)`: the operation is not done, and fails with `e`;
//! - it sleeps, or waits on a lock or a condition variable: the operation is delayed, or held
//!   until something else lets the hook return;
//! - it panics: the operation panics, as a bug in the code around it would.
//!
//! Not hooked: `file_exists` and `now_micros` (they cannot fail; they only answer questions),
//! and dropping a file or a lock. Files opened through the env never show a memory mapping
//! ([`RandomAccessFile::mapped`] is `None`), so every read goes through `read_at` and the hook.
//!
//! Thread-safe: the hook is called from every thread that uses the env, concurrently; clones
//! share one hook.

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::env::{Env, FileLock, RandomAccessFile, SequentialFile, WritableFile};
use crate::error::Result;

/// An operation a [`HookEnv`] is about to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EnvOp {
    /// [`Env::new_sequential_file`].
    NewSequentialFile,
    /// [`Env::new_random_access_file`] and [`Env::new_held_random_access_file`].
    NewRandomAccessFile,
    /// [`Env::new_writable_file`].
    NewWritableFile,
    /// [`Env::new_appendable_file`].
    NewAppendableFile,
    /// [`Env::children`].
    Children,
    /// [`Env::remove_file`].
    RemoveFile,
    /// [`Env::create_dir`].
    CreateDir,
    /// [`Env::remove_dir`].
    RemoveDir,
    /// [`Env::file_size`].
    FileSize,
    /// [`Env::rename`] (the call's `to` is the target).
    Rename,
    /// [`Env::lock_file`].
    LockFile,
    /// [`Env::unlock_file`] (the path is the lock's).
    UnlockFile,
    /// [`Env::sync_dir`].
    SyncDir,
    /// [`SequentialFile::read`].
    Read,
    /// [`SequentialFile::skip`].
    Skip,
    /// [`RandomAccessFile::read_at`].
    ReadAt,
    /// [`WritableFile::append`].
    Append,
    /// [`WritableFile::flush`].
    Flush,
    /// [`WritableFile::sync`].
    Sync,
    /// [`WritableFile::start_writeback`].
    StartWriteback,
    /// [`WritableFile::close`].
    Close,
}

/// What the hook is told about an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnvCall<'a> {
    /// The operation.
    pub op: EnvOp,
    /// The path it works on: the file or directory, the file a file operation was opened on,
    /// the source of a rename.
    pub path: &'a Path,
    /// The target of a rename; `None` for every other operation.
    pub to: Option<&'a Path>,
}

/// The hook a [`HookEnv`] calls before each operation.
type Hook = dyn Fn(&EnvCall<'_>) -> Result<()> + Send + Sync;

/// An `Env` that calls a hook before every operation, on its own methods and on the files it
/// opens; see the module documentation.
///
/// Thread-safe; clones share the inner env and the hook.
#[derive(Clone)]
pub struct HookEnv {
    inner: Arc<dyn Env>,
    hook: Arc<Hook>,
}

impl HookEnv {
    /// Wraps `inner`, calling `hook` before every operation.
    pub fn new(
        inner: Arc<dyn Env>,
        hook: impl Fn(&EnvCall<'_>) -> Result<()> + Send + Sync + 'static,
    ) -> HookEnv {
        HookEnv {
            inner,
            hook: Arc::new(hook),
        }
    }

    /// The wrapped env.
    pub fn inner(&self) -> &Arc<dyn Env> {
        &self.inner
    }

    fn before(&self, op: EnvOp, path: &Path) -> Result<()> {
        (self.hook)(&EnvCall { op, path, to: None })
    }

    /// `file` wrapped so that its operations call the hook too.
    fn hooked<F>(&self, path: &Path, file: F) -> Hooked<F> {
        Hooked {
            hook: Arc::clone(&self.hook),
            path: path.to_path_buf(),
            file,
        }
    }
}

impl std::fmt::Debug for HookEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HookEnv").finish_non_exhaustive()
    }
}

impl Env for HookEnv {
    fn new_sequential_file(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        self.before(EnvOp::NewSequentialFile, path)?;
        let file = self.inner.new_sequential_file(path)?;
        Ok(Box::new(self.hooked(path, file)))
    }

    fn new_random_access_file(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        self.before(EnvOp::NewRandomAccessFile, path)?;
        let file = self.inner.new_random_access_file(path)?;
        Ok(Arc::new(self.hooked(path, file)))
    }

    fn new_held_random_access_file(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        self.before(EnvOp::NewRandomAccessFile, path)?;
        let file = self.inner.new_held_random_access_file(path)?;
        Ok(Arc::new(self.hooked(path, file)))
    }

    fn new_writable_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        self.before(EnvOp::NewWritableFile, path)?;
        let file = self.inner.new_writable_file(path)?;
        Ok(Box::new(self.hooked(path, file)))
    }

    /// Hooked as [`EnvOp::NewWritableFile`]: a log is a new writable file to a hook.
    fn new_log_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        self.before(EnvOp::NewWritableFile, path)?;
        let file = self.inner.new_log_file(path)?;
        Ok(Box::new(self.hooked(path, file)))
    }

    fn new_appendable_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        self.before(EnvOp::NewAppendableFile, path)?;
        let file = self.inner.new_appendable_file(path)?;
        Ok(Box::new(self.hooked(path, file)))
    }

    fn file_exists(&self, path: &Path) -> bool {
        self.inner.file_exists(path)
    }

    fn children(&self, dir: &Path) -> Result<Vec<String>> {
        self.before(EnvOp::Children, dir)?;
        self.inner.children(dir)
    }

    fn remove_file(&self, path: &Path) -> Result<()> {
        self.before(EnvOp::RemoveFile, path)?;
        self.inner.remove_file(path)
    }

    fn create_dir(&self, dir: &Path) -> Result<()> {
        self.before(EnvOp::CreateDir, dir)?;
        self.inner.create_dir(dir)
    }

    fn remove_dir(&self, dir: &Path) -> Result<()> {
        self.before(EnvOp::RemoveDir, dir)?;
        self.inner.remove_dir(dir)
    }

    fn file_size(&self, path: &Path) -> Result<u64> {
        self.before(EnvOp::FileSize, path)?;
        self.inner.file_size(path)
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        (self.hook)(&EnvCall {
            op: EnvOp::Rename,
            path: from,
            to: Some(to),
        })?;
        self.inner.rename(from, to)
    }

    fn lock_file(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        self.before(EnvOp::LockFile, path)?;
        self.inner.lock_file(path)
    }

    fn unlock_file(&self, lock: Box<dyn FileLock>) -> Result<()> {
        self.before(EnvOp::UnlockFile, lock.path())?;
        self.inner.unlock_file(lock)
    }

    fn sync_dir(&self, dir: &Path) -> Result<()> {
        self.before(EnvOp::SyncDir, dir)?;
        self.inner.sync_dir(dir)
    }

    fn now_micros(&self) -> u64 {
        self.inner.now_micros()
    }

    fn lower_thread_priority(&self) {
        self.inner.lower_thread_priority()
    }

    fn lowest_thread_priority(&self) {
        self.inner.lowest_thread_priority()
    }

    fn set_thread_time_slice(&self, slice: Duration) {
        self.inner.set_thread_time_slice(slice)
    }
}

/// A file opened through a [`HookEnv`]: calls the hook, then the inner file.
struct Hooked<F> {
    hook: Arc<Hook>,
    path: PathBuf,
    file: F,
}

impl<F> Hooked<F> {
    fn before(&self, op: EnvOp) -> Result<()> {
        (self.hook)(&EnvCall {
            op,
            path: &self.path,
            to: None,
        })
    }
}

impl SequentialFile for Hooked<Box<dyn SequentialFile>> {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        self.before(EnvOp::Read)?;
        self.file.read(buf)
    }

    fn skip(&mut self, n: u64) -> Result<()> {
        self.before(EnvOp::Skip)?;
        self.file.skip(n)
    }
}

impl RandomAccessFile for Hooked<Arc<dyn RandomAccessFile>> {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        self.before(EnvOp::ReadAt)?;
        self.file.read_at(offset, buf)
    }

    fn in_memory(&self, offset: u64, len: usize) -> bool {
        self.file.in_memory(offset, len)
    }
}

impl WritableFile for Hooked<Box<dyn WritableFile>> {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.before(EnvOp::Append)?;
        self.file.append(data)
    }

    fn append_record(&mut self, data: &[u8], block_left: usize) -> Result<()> {
        self.before(EnvOp::Append)?;
        self.file.append_record(data, block_left)
    }

    fn flush(&mut self) -> Result<()> {
        self.before(EnvOp::Flush)?;
        self.file.flush()
    }

    fn sync(&mut self) -> Result<()> {
        self.before(EnvOp::Sync)?;
        self.file.sync()
    }

    fn start_writeback(&mut self) -> Result<()> {
        self.before(EnvOp::StartWriteback)?;
        self.file.start_writeback()
    }

    fn close(&mut self) -> Result<()> {
        self.before(EnvOp::Close)?;
        self.file.close()
    }
}
