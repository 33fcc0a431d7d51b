//! [`HookEnv`]: an `Env` over the real file system that runs a hook once, just before a chosen
//! open reaches the file system, so a test can stage a race deterministically (the writer
//! deletes a file between the moment the reader learns of it and the moment it opens it).

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use strata::{Env, FileLock, PosixEnv, RandomAccessFile, SequentialFile, WritableFile};

/// Which opens a hook waits for, and what it does then (given the path being opened).
type Hook = (
    Box<dyn Fn(&Path) -> bool + Send>,
    Box<dyn FnOnce(&Path) + Send>,
);

/// An env over the real file system that runs a hook (once) just before a matching open.
pub struct HookEnv {
    inner: PosixEnv,
    hook: Mutex<Option<Hook>>,
    /// How many times a hook ran.
    pub fired: AtomicUsize,
}

impl HookEnv {
    pub fn new() -> Arc<HookEnv> {
        Arc::new(HookEnv {
            inner: PosixEnv::new(),
            hook: Mutex::new(None),
            fired: AtomicUsize::new(0),
        })
    }

    /// Runs `hook` (once) just before the next open `matches` accepts, on the thread that
    /// makes it.
    pub fn arm(
        &self,
        matches: impl Fn(&Path) -> bool + Send + 'static,
        hook: impl FnOnce(&Path) + Send + 'static,
    ) {
        *self.hook.lock() = Some((Box::new(matches), Box::new(hook)));
    }

    fn before_open(&self, path: &Path) {
        let mut slot = self.hook.lock();
        if slot.as_ref().is_some_and(|(matches, _)| matches(path)) {
            let (_, hook) = slot.take().unwrap();
            drop(slot);
            hook(path);
            self.fired.fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl Env for HookEnv {
    fn new_sequential_file(&self, path: &Path) -> strata::Result<Box<dyn SequentialFile>> {
        self.before_open(path);
        self.inner.new_sequential_file(path)
    }
    fn new_random_access_file(&self, path: &Path) -> strata::Result<Arc<dyn RandomAccessFile>> {
        self.before_open(path);
        self.inner.new_random_access_file(path)
    }
    fn new_writable_file(&self, path: &Path) -> strata::Result<Box<dyn WritableFile>> {
        self.inner.new_writable_file(path)
    }
    fn new_appendable_file(&self, path: &Path) -> strata::Result<Box<dyn WritableFile>> {
        self.inner.new_appendable_file(path)
    }
    fn file_exists(&self, path: &Path) -> bool {
        self.inner.file_exists(path)
    }
    fn children(&self, dir: &Path) -> strata::Result<Vec<String>> {
        self.inner.children(dir)
    }
    fn remove_file(&self, path: &Path) -> strata::Result<()> {
        self.inner.remove_file(path)
    }
    fn create_dir(&self, dir: &Path) -> strata::Result<()> {
        self.inner.create_dir(dir)
    }
    fn remove_dir(&self, dir: &Path) -> strata::Result<()> {
        self.inner.remove_dir(dir)
    }
    fn file_size(&self, path: &Path) -> strata::Result<u64> {
        self.inner.file_size(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> strata::Result<()> {
        self.inner.rename(from, to)
    }
    fn lock_file(&self, path: &Path) -> strata::Result<Box<dyn FileLock>> {
        self.inner.lock_file(path)
    }
    fn unlock_file(&self, lock: Box<dyn FileLock>) -> strata::Result<()> {
        self.inner.unlock_file(lock)
    }
    fn sync_dir(&self, dir: &Path) -> strata::Result<()> {
        self.inner.sync_dir(dir)
    }
    fn now_micros(&self) -> u64 {
        self.inner.now_micros()
    }
}
