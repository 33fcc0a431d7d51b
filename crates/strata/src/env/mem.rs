//! [`MemEnv`]: a process-local, in-memory file system, for tests and transient stores.
//!
//! Paths are normalized lexically (`.` dropped, `..` folded, trailing separators ignored), never
//! against the working directory: `db/./x` and `db/x` are one file, `/db/x` is another. The roots
//! `/` and the empty relative path always exist. Like a real file system, a file can only be
//! created in an existing directory; unlike `mkdir`, `create_dir` also creates missing parents.
//!
//! A file is shared contents (`Arc<RwLock<Vec<u8>>>`), like an inode: readers and writers opened on
//! it keep working after it is removed or renamed, and appends are visible to readers at once (an
//! in-memory `flush` has nothing to do). `sync` and `sync_dir` are no-ops: nothing here survives
//! the process. `rename` moves a file, or a directory with everything in it to a new name;
//! `link_file` gives a file a second name sharing its contents. Locks live in a table of this
//! `MemEnv`; they are released by `unlock_file` or by dropping the lock.
//!
//! The clock is the wall clock until a test stops it ([`MemEnv::set_clock`]) and moves it by
//! hand ([`MemEnv::advance_clock`]): expiring keys then expire exactly when the test says.

use std::collections::{HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use super::{normalize_path, Env, FileLock, RandomAccessFile, SequentialFile, WritableFile};
use crate::error::{Error, Result};

type Contents = Arc<RwLock<Vec<u8>>>;

/// An in-memory file system.
///
/// Thread-safe. Clones share one file system (the state sits behind an `Arc`), so a clone is a
/// cheap handle; two `MemEnv::new()` are unrelated file systems.
#[derive(Clone, Default)]
pub struct MemEnv {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    state: Mutex<FsState>,
    /// Normalized paths of the held locks; shared with each lock so dropping it can release it.
    locks: Arc<Mutex<HashSet<PathBuf>>>,
    /// The stopped clock's time (microseconds since the Unix epoch); `None`: the wall clock.
    clock: Mutex<Option<u64>>,
}

/// The namespace. Invariant: every key of `files` and `dirs` is normalized, and its parent is
/// a root or in `dirs`.
#[derive(Default)]
struct FsState {
    files: HashMap<PathBuf, Contents>,
    dirs: HashSet<PathBuf>,
}

impl FsState {
    fn is_dir(&self, path: &Path) -> bool {
        is_root(path) || self.dirs.contains(path)
    }

    fn file(&self, path: &Path, op: &str) -> Result<Contents> {
        match self.files.get(path) {
            Some(contents) => Ok(Arc::clone(contents)),
            None => Err(not_found(op, path)),
        }
    }

    /// Fails unless `path` may name a new file or directory: its parent is a directory and `path`
    /// itself is not a directory.
    fn check_creatable(&self, path: &Path, op: &str) -> Result<()> {
        if self.is_dir(path) {
            return Err(io_error(
                op,
                path,
                io::ErrorKind::IsADirectory,
                "is a directory",
            ));
        }
        match path.parent() {
            Some(parent) if !self.is_dir(parent) => Err(not_found(op, parent)),
            _ => Ok(()),
        }
    }

    /// Fails if `path` names an existing file or directory.
    fn check_absent(&self, path: &Path, op: &str) -> Result<()> {
        if self.files.contains_key(path) || self.is_dir(path) {
            return Err(io_error(op, path, io::ErrorKind::AlreadyExists, "exists"));
        }
        Ok(())
    }

    /// Moves directory `from`, and every file and directory below it, to `to`, which must not
    /// exist (nor lie inside `from`).
    fn rename_dir(&mut self, from: &Path, to: &Path, op: &str) -> Result<()> {
        self.check_absent(to, op)?;
        self.check_creatable(to, op)?;
        if to.starts_with(from) {
            return Err(io_error(
                op,
                to,
                io::ErrorKind::InvalidInput,
                "a directory cannot move into itself",
            ));
        }
        let moved = |path: &Path| Some(normalize_path(&to.join(path.strip_prefix(from).ok()?)));
        let files: Vec<PathBuf> = self
            .files
            .keys()
            .filter(|p| p.starts_with(from))
            .cloned()
            .collect();
        for old in files {
            if let (Some(new), Some(contents)) = (moved(&old), self.files.remove(&old)) {
                self.files.insert(new, contents);
            }
        }
        let dirs: Vec<PathBuf> = self
            .dirs
            .iter()
            .filter(|p| p.starts_with(from))
            .cloned()
            .collect();
        for old in dirs {
            self.dirs.remove(&old);
            if let Some(new) = moved(&old) {
                self.dirs.insert(new);
            }
        }
        Ok(())
    }

    /// The contents of `path`, created empty if missing and emptied if `truncate`.
    fn open_for_write(&mut self, path: PathBuf, truncate: bool, op: &str) -> Result<Contents> {
        if let Some(contents) = self.files.get(&path) {
            if truncate {
                contents.write().clear();
            }
            return Ok(Arc::clone(contents));
        }
        self.check_creatable(&path, op)?;
        let contents = Contents::default();
        self.files.insert(path, Arc::clone(&contents));
        Ok(contents)
    }
}

impl MemEnv {
    /// An empty in-memory file system.
    pub fn new() -> MemEnv {
        MemEnv::default()
    }

    /// Stops the clock at `micros` since the Unix epoch: [`Env::now_micros`] returns it
    /// until the clock is set or advanced again. `None` goes back to the wall clock.
    pub fn set_clock(&self, micros: Option<u64>) {
        *self.inner.clock.lock() = micros;
    }

    /// Moves the clock forward by `by`, stopping it first (at the wall clock's time) if it
    /// runs.
    pub fn advance_clock(&self, by: std::time::Duration) {
        let mut clock = self.inner.clock.lock();
        let now = clock.unwrap_or_else(super::posix::wall_clock_micros);
        let by = u64::try_from(by.as_micros()).unwrap_or(u64::MAX);
        *clock = Some(now.saturating_add(by));
    }
}

impl std::fmt::Debug for MemEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.inner.state.lock();
        f.debug_struct("MemEnv")
            .field("files", &state.files.len())
            .field("dirs", &state.dirs.len())
            .finish()
    }
}

fn is_root(path: &Path) -> bool {
    path.as_os_str().is_empty() || path.parent().is_none()
}

fn io_error(op: &str, path: &Path, kind: io::ErrorKind, message: &str) -> Error {
    Error::io(
        format!("{op} {}", path.display()),
        io::Error::new(kind, message),
    )
}

fn not_found(op: &str, path: &Path) -> Error {
    io_error(
        op,
        path,
        io::ErrorKind::NotFound,
        "no such file or directory",
    )
}

impl Env for MemEnv {
    fn new_sequential_file(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        let contents = self
            .inner
            .state
            .lock()
            .file(&normalize_path(path), "open")?;
        Ok(Box::new(MemSequentialFile { contents, pos: 0 }))
    }

    fn new_random_access_file(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        let contents = self
            .inner
            .state
            .lock()
            .file(&normalize_path(path), "open")?;
        Ok(Arc::new(MemRandomAccessFile { contents }))
    }

    fn new_writable_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        let contents =
            self.inner
                .state
                .lock()
                .open_for_write(normalize_path(path), true, "create")?;
        Ok(Box::new(MemWritableFile::new(contents, path)))
    }

    fn new_appendable_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        let contents = self.inner.state.lock().open_for_write(
            normalize_path(path),
            false,
            "open for append",
        )?;
        Ok(Box::new(MemWritableFile::new(contents, path)))
    }

    fn file_exists(&self, path: &Path) -> bool {
        let path = normalize_path(path);
        let state = self.inner.state.lock();
        state.files.contains_key(&path) || state.is_dir(&path)
    }

    fn children(&self, dir: &Path) -> Result<Vec<String>> {
        let dir = normalize_path(dir);
        let state = self.inner.state.lock();
        if !state.is_dir(&dir) {
            return Err(not_found("list", &dir));
        }
        let names = state
            .files
            .keys()
            .chain(state.dirs.iter())
            .filter(|entry| entry.parent() == Some(dir.as_path()))
            .filter_map(|entry| entry.file_name())
            .map(|name| name.to_string_lossy().into_owned())
            .collect();
        Ok(names)
    }

    fn remove_file(&self, path: &Path) -> Result<()> {
        let path = normalize_path(path);
        match self.inner.state.lock().files.remove(&path) {
            Some(_) => Ok(()),
            None => Err(not_found("remove", &path)),
        }
    }

    fn create_dir(&self, dir: &Path) -> Result<()> {
        let dir = normalize_path(dir);
        let mut state = self.inner.state.lock();
        // No missing ancestor may already be a file.
        let missing: Vec<PathBuf> = dir
            .ancestors()
            .take_while(|a| !state.is_dir(a))
            .map(Path::to_path_buf)
            .collect();
        if let Some(file) = missing.iter().find(|a| state.files.contains_key(*a)) {
            return Err(io_error(
                "create directory",
                file,
                io::ErrorKind::AlreadyExists,
                "a file of that name exists",
            ));
        }
        for ancestor in missing {
            state.dirs.insert(ancestor.to_path_buf());
        }
        Ok(())
    }

    fn remove_dir(&self, dir: &Path) -> Result<()> {
        let dir = normalize_path(dir);
        let mut state = self.inner.state.lock();
        if !state.dirs.contains(&dir) {
            return Err(not_found("remove directory", &dir));
        }
        let has_entries = state
            .files
            .keys()
            .chain(state.dirs.iter())
            .any(|entry| entry.parent() == Some(dir.as_path()));
        if has_entries {
            return Err(io_error(
                "remove directory",
                &dir,
                io::ErrorKind::DirectoryNotEmpty,
                "directory not empty",
            ));
        }
        state.dirs.remove(&dir);
        Ok(())
    }

    fn file_size(&self, path: &Path) -> Result<u64> {
        let contents = self
            .inner
            .state
            .lock()
            .file(&normalize_path(path), "stat")?;
        let len = contents.read().len();
        Ok(len as u64)
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        let (from, to) = (normalize_path(from), normalize_path(to));
        let op = format!("rename {} to", from.display());
        let mut state = self.inner.state.lock();
        if state.dirs.contains(&from) {
            return state.rename_dir(&from, &to, &op);
        }
        let contents = state.file(&from, "rename")?;
        if from == to {
            return Ok(());
        }
        state.check_creatable(&to, &op)?;
        state.files.remove(&from);
        state.files.insert(to, contents);
        Ok(())
    }

    fn link_file(&self, from: &Path, to: &Path) -> Result<()> {
        let (from, to) = (normalize_path(from), normalize_path(to));
        let op = format!("link {} to", from.display());
        let mut state = self.inner.state.lock();
        let contents = state.file(&from, "link")?;
        state.check_absent(&to, &op)?;
        state.check_creatable(&to, &op)?;
        state.files.insert(to, contents);
        Ok(())
    }

    fn lock_file(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        let key = normalize_path(path);
        // The file exists while locked, as on a real file system.
        self.inner
            .state
            .lock()
            .open_for_write(key.clone(), false, "lock")?;
        if !self.inner.locks.lock().insert(key.clone()) {
            return Err(io_error(
                "lock",
                path,
                io::ErrorKind::WouldBlock,
                "already held by this process",
            ));
        }
        Ok(Box::new(MemFileLock {
            table: Arc::clone(&self.inner.locks),
            key,
            path: path.to_path_buf(),
        }))
    }

    fn unlock_file(&self, lock: Box<dyn FileLock>) -> Result<()> {
        // Dropping a `MemFileLock` releases it.
        drop(lock);
        Ok(())
    }

    fn sync_dir(&self, dir: &Path) -> Result<()> {
        let dir = normalize_path(dir);
        if self.inner.state.lock().is_dir(&dir) {
            Ok(())
        } else {
            Err(not_found("sync directory", &dir))
        }
    }

    fn now_micros(&self) -> u64 {
        self.inner
            .clock
            .lock()
            .unwrap_or_else(super::posix::wall_clock_micros)
    }
}

/// Copies bytes of `contents` from `offset` into `buf`; 0 past the end.
fn read_contents(contents: &Contents, offset: u64, buf: &mut [u8]) -> usize {
    let data = contents.read();
    let available = usize::try_from(offset)
        .ok()
        .and_then(|start| data.get(start..))
        .unwrap_or(&[]);
    let n = available.len().min(buf.len());
    buf[..n].copy_from_slice(&available[..n]);
    n
}

struct MemSequentialFile {
    contents: Contents,
    pos: u64,
}

impl SequentialFile for MemSequentialFile {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        let n = read_contents(&self.contents, self.pos, buf);
        self.pos += n as u64;
        Ok(n)
    }

    fn skip(&mut self, n: u64) -> Result<()> {
        let len = self.contents.read().len() as u64;
        self.pos = self.pos.saturating_add(n).min(len.max(self.pos));
        Ok(())
    }
}

struct MemRandomAccessFile {
    contents: Contents,
}

impl RandomAccessFile for MemRandomAccessFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        Ok(read_contents(&self.contents, offset, buf))
    }

    fn in_memory(&self, _offset: u64, _len: usize) -> bool {
        true
    }
}

/// An appender; `contents` is `None` once closed.
struct MemWritableFile {
    contents: Option<Contents>,
    path: PathBuf,
}

impl MemWritableFile {
    fn new(contents: Contents, path: &Path) -> MemWritableFile {
        MemWritableFile {
            contents: Some(contents),
            path: path.to_path_buf(),
        }
    }

    fn open_contents(&self, op: &str) -> Result<&Contents> {
        self.contents
            .as_ref()
            .ok_or_else(|| io_error(op, &self.path, io::ErrorKind::Other, "file is closed"))
    }
}

impl WritableFile for MemWritableFile {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.open_contents("append to")?
            .write()
            .extend_from_slice(data);
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.open_contents("flush").map(drop)
    }

    fn sync(&mut self) -> Result<()> {
        self.open_contents("sync").map(drop)
    }

    fn close(&mut self) -> Result<()> {
        self.open_contents("close")?;
        self.contents = None;
        Ok(())
    }
}

/// A held lock of a [`MemEnv`]; dropping it releases it.
struct MemFileLock {
    table: Arc<Mutex<HashSet<PathBuf>>>,
    key: PathBuf,
    path: PathBuf,
}

impl FileLock for MemFileLock {
    fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for MemFileLock {
    fn drop(&mut self) {
        self.table.lock().remove(&self.key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conformance() {
        super::super::conformance::run_all(&MemEnv::new(), Path::new("/mem"));
    }

    #[test]
    fn conformance_on_a_relative_root() {
        super::super::conformance::run_all(&MemEnv::new(), Path::new("rel/db"));
    }

    #[test]
    fn paths_are_normalized() {
        let env = MemEnv::new();
        env.create_dir(Path::new("/a/b")).unwrap();
        super::super::write_file(&env, Path::new("/a/./b/../b/f"), b"x", false).unwrap();
        assert!(env.file_exists(Path::new("/a/b/f")));
        assert!(env.file_exists(Path::new("/a/b/f/")));
        assert_eq!(
            env.children(Path::new("/a/b/")).unwrap(),
            vec!["f".to_string()]
        );
    }

    #[test]
    fn clones_share_the_file_system_and_new_envs_do_not() {
        let env = MemEnv::new();
        let clone = env.clone();
        super::super::write_file(&env, Path::new("/f"), b"x", false).unwrap();
        assert!(clone.file_exists(Path::new("/f")));
        assert!(!MemEnv::new().file_exists(Path::new("/f")));
        let lock = clone.lock_file(Path::new("/LOCK")).unwrap();
        assert!(env.lock_file(Path::new("/LOCK")).is_err());
        drop(lock);
        env.lock_file(Path::new("/LOCK")).unwrap();
    }

    #[test]
    fn files_need_an_existing_directory() {
        let env = MemEnv::new();
        let err = env.new_writable_file(Path::new("/nodir/f")).err().unwrap();
        assert!(
            matches!(&err, Error::Io { source, .. } if source.kind() == io::ErrorKind::NotFound)
        );
        env.create_dir(Path::new("/file")).unwrap();
        assert!(env.new_writable_file(Path::new("/file")).is_err());
    }

    #[test]
    fn remove_dir_refuses_a_non_empty_directory() {
        let env = MemEnv::new();
        env.create_dir(Path::new("/d/e")).unwrap();
        assert!(env.remove_dir(Path::new("/d")).is_err());
        env.remove_dir(Path::new("/d/e")).unwrap();
        env.remove_dir(Path::new("/d")).unwrap();
        assert!(!env.file_exists(Path::new("/d")));
    }

    #[test]
    fn open_reader_survives_remove_and_rename() {
        let env = MemEnv::new();
        super::super::write_file(&env, Path::new("/a"), b"hello", false).unwrap();
        let reader = env.new_random_access_file(Path::new("/a")).unwrap();
        env.rename(Path::new("/a"), Path::new("/b")).unwrap();
        env.remove_file(Path::new("/b")).unwrap();
        let mut buf = [0u8; 5];
        assert_eq!(reader.read_at(0, &mut buf).unwrap(), 5);
        assert_eq!(&buf, b"hello");
    }
}
