//! [`ReadOnlyEnv`]: the `Env` of a database opened read-only, perhaps beside a live writer
//! (`DB::open_read_only`).
//!
//! Contract:
//! - Every call that would change the file system — creating, appending to, renaming, linking
//!   or removing a file, creating or removing a directory, taking a lock, syncing a directory —
//!   fails with `Error::NotSupported` naming the call and the path, before the inner `Env` is
//!   asked. Whatever the engine above it does, a read-only handle writes no byte to the
//!   directory and takes no lock there.
//! - Reads go to the inner `Env`, except that a file *pinned* with [`ReadOnlyEnv::pin`] is
//!   served from the handle opened when it was pinned. The writer deletes the tables it no
//!   longer needs; a pinned table stays readable (an open descriptor or mapping outlives the
//!   unlink) for as long as it is pinned, whatever the table cache closes and reopens meanwhile.
//!
//! Thread-safe: the pins sit behind a mutex taken only to look one up or change the set.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use super::{Env, FileLock, RandomAccessFile, SequentialFile, WritableFile};
use crate::error::{Error, Result};

/// An `Env` that refuses every change and serves pinned files from open handles.
pub(crate) struct ReadOnlyEnv {
    inner: Arc<dyn Env>,
    pins: Mutex<HashMap<PathBuf, Arc<dyn RandomAccessFile>>>,
}

/// The error every refused call returns.
fn refused(op: &str, path: &Path) -> Error {
    Error::NotSupported(format!(
        "{op} {}: the database is open read-only",
        path.display()
    ))
}

impl ReadOnlyEnv {
    pub(crate) fn new(inner: Arc<dyn Env>) -> ReadOnlyEnv {
        ReadOnlyEnv {
            inner,
            pins: Mutex::default(),
        }
    }

    /// Opens `path` and keeps the handle until [`ReadOnlyEnv::retain`] drops it; a path
    /// already pinned keeps its handle. Fails as opening it fails (a missing file gives an
    /// `io::ErrorKind::NotFound` source).
    pub(crate) fn pin(&self, path: &Path) -> Result<()> {
        if self.pins.lock().contains_key(path) {
            return Ok(());
        }
        let file = self.inner.new_held_random_access_file(path)?;
        self.pins.lock().entry(path.to_path_buf()).or_insert(file);
        Ok(())
    }

    /// Whether `path` is pinned.
    pub(crate) fn is_pinned(&self, path: &Path) -> bool {
        self.pins.lock().contains_key(path)
    }

    /// Drops the pins of the paths `keep` refuses.
    pub(crate) fn retain(&self, mut keep: impl FnMut(&Path) -> bool) {
        self.pins.lock().retain(|path, _| keep(path));
    }
}

impl Env for ReadOnlyEnv {
    fn new_sequential_file(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        self.inner.new_sequential_file(path)
    }

    fn new_random_access_file(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        if let Some(file) = self.pins.lock().get(path) {
            return Ok(Arc::clone(file));
        }
        self.inner.new_random_access_file(path)
    }

    fn new_held_random_access_file(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        self.inner.new_held_random_access_file(path)
    }

    fn new_writable_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        Err(refused("create", path))
    }

    fn new_appendable_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        Err(refused("open for append", path))
    }

    fn file_exists(&self, path: &Path) -> bool {
        self.inner.file_exists(path)
    }

    fn children(&self, dir: &Path) -> Result<Vec<String>> {
        self.inner.children(dir)
    }

    fn remove_file(&self, path: &Path) -> Result<()> {
        Err(refused("remove", path))
    }

    fn create_dir(&self, dir: &Path) -> Result<()> {
        Err(refused("create directory", dir))
    }

    fn remove_dir(&self, dir: &Path) -> Result<()> {
        Err(refused("remove directory", dir))
    }

    fn file_size(&self, path: &Path) -> Result<u64> {
        self.inner.file_size(path)
    }

    fn rename(&self, from: &Path, _to: &Path) -> Result<()> {
        Err(refused("rename", from))
    }

    fn link_file(&self, from: &Path, _to: &Path) -> Result<()> {
        Err(refused("link", from))
    }

    fn lock_file(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        Err(refused("lock", path))
    }

    fn unlock_file(&self, lock: Box<dyn FileLock>) -> Result<()> {
        Err(refused("unlock", lock.path()))
    }

    fn sync_dir(&self, dir: &Path) -> Result<()> {
        Err(refused("sync directory", dir))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::{read_file_to_vec, write_file, MemEnv};

    #[test]
    fn every_change_is_refused_and_reaches_nothing() {
        let mem = MemEnv::new();
        let dir = Path::new("/db");
        mem.create_dir(dir).unwrap();
        write_file(&mem, &dir.join("f"), b"data", false).unwrap();
        let env = ReadOnlyEnv::new(Arc::new(mem.clone()));
        let f = dir.join("f");
        let g = dir.join("g");
        let refusals: Vec<Result<()>> = vec![
            env.new_writable_file(&g).map(drop),
            env.new_appendable_file(&f).map(drop),
            env.remove_file(&f),
            env.create_dir(&dir.join("sub")),
            env.remove_dir(dir),
            env.rename(&f, &g),
            env.link_file(&f, &g),
            env.lock_file(&dir.join("LOCK")).map(drop),
            env.sync_dir(dir),
        ];
        for result in refusals {
            let err = result.expect_err("a change must be refused");
            assert!(matches!(err, Error::NotSupported(_)), "{err}");
            assert!(err.to_string().contains("read-only"), "{err}");
        }
        let mut names = mem.children(dir).unwrap();
        names.sort();
        assert_eq!(names, ["f"]);
        assert_eq!(read_file_to_vec(&env, &f).unwrap(), b"data");
    }

    #[test]
    fn a_pinned_file_outlives_its_removal_until_unpinned() {
        let mem = MemEnv::new();
        let path = Path::new("/t.ldb");
        write_file(&mem, path, b"table", false).unwrap();
        let env = ReadOnlyEnv::new(Arc::new(mem.clone()));
        env.pin(path).unwrap();
        mem.remove_file(path).unwrap();
        let file = env.new_random_access_file(path).unwrap();
        let mut buf = [0u8; 5];
        assert_eq!(file.read_at(0, &mut buf).unwrap(), 5);
        assert_eq!(&buf, b"table");
        env.retain(|_| false);
        assert!(!env.is_pinned(path));
        assert!(env.new_random_access_file(path).is_err());
        assert!(env.pin(path).is_err());
    }
}
