//! [`FaultEnv`]: an [`Env`] wrapper that injects I/O errors and simulates power loss, for the
//! reliability tests (feature `testing`).
//!
//! Every call is delegated to an inner `Env` (normally a [`MemEnv`](super::MemEnv)); the wrapper
//! counts operations, fails the ones it was told to, and remembers what is durable.
//!
//! # Error injection
//!
//! Operations are counted by [`OpKind`] (its variants say which calls count), every attempt,
//! failed or not ([`FaultEnv::op_count`]). [`FaultEnv::fail_after`] fails exactly the `n`th
//! operation of a kind from now (`n = 1`: the next one), once; [`FaultEnv::fail_always`] fails
//! every one until [`FaultEnv::clear_faults`]. A kind holds one rule; a new one replaces it.
//!
//! An injected failure is an `Error::Io` whose context names the operation and the path and ends
//! in `(injected fault)`; its source is EIO ([`InjectedError::Io`]) or ENOSPC
//! ([`InjectedError::NoSpace`]: raw os error 28, kind `StorageFull`). A failed operation has no
//! effect, except that an append failed with [`InjectedError::ShortWrite`] first writes the first
//! half of its data (rounded down), then fails with EIO; on other kinds `ShortWrite` is plain EIO.
//! [`InjectedError::Panic`] makes the operation panic instead, as a bug would.
//! A failed `sync` makes nothing durable. [`FaultEnv::injected_faults`] lists every failure
//! injected so far, with its kind, path and the thread that met it.
//!
//! # Crashes
//!
//! [`FaultEnv::crash_after`] kills the process after the `n`th operation of a kind: that
//! operation happens, and from then on every operation through this env (counted ones, plus
//! `create_dir`, `skip`, `flush` and `close`) fails with EIO and a context ending in
//! `(process crashed)`, changing nothing, until power loss or [`FaultEnv::clear_faults`]
//! revives the process. [`FaultEnv::crash_now`] kills it at once. Metadata queries
//! (`file_exists`, `children`, `file_size`) still answer. A test crashes the process, drops
//! the database (nothing it does on the way out reaches the files), simulates power loss and
//! reopens: the crash point can be any operation, also inside a flush, a compaction or a
//! manifest write. With concurrent threads, the operation that fires the rule may complete
//! after another thread's operation was refused: as if it had run first.
//!
//! # Power-loss model
//!
//! [`FaultEnv::simulate_power_loss`] rewrites the inner env to what a machine losing power now
//! could show after reboot:
//! - **File data.** A file is an inode: it keeps its identity across renames, and while open
//!   after removal. Its synced length is its length at its last successful `sync` (`flush` and
//!   `close` sync nothing). Of a file with bytes past its synced length, the synced bytes
//!   survive and the rest is, by [`PowerLossMode`], dropped, cut at a random point, or replaced
//!   by random garbage of random length (at least one byte, at most as many as were unsynced).
//!   A write-ahead log made by `new_log_file` is what the real file system's memory-mapped log
//!   would show instead (`namespace::cut_mapped`): each unsynced 4 KiB page kept or zeroed on
//!   its own (all zeroed under `DropUnsynced`), and maybe zeros up to its block's end.
//!   `new_writable_file` on an existing file truncates it durably at once: its old contents
//!   never come back (a pessimistic choice; LevelDB's layout gives every log, table and
//!   manifest a fresh number, so a file still needed is never truncated).
//! - **Directory entries.** A directory's durable listing is its files at its last successful
//!   `sync_dir`. After power loss each directory holds exactly its durable listing: files created
//!   since are gone, renamed files are back under their old names (a file a rename replaced comes
//!   back too), removed files come back. A file that comes back has its data cut as above.
//!   A directory is tracked from the first file creation, rename, removal, lock or `sync_dir`
//!   in it through this env; the files already there are then taken as durable, data and entry.
//! - **The process dies.** Every handle opened before (writers and readers) fails from then on
//!   and every lock taken through this env is released.
//!
//! Cuts are decided per file, in path order, from one generator seeded by the caller: one history
//! and one seed always give the same files.
//!
//! Limits of the model:
//! - Directories themselves are always durable (`create_dir` and `remove_dir` are not undone,
//!   and a directory's `rename` is durable at once, taking its files' listings along with
//!   their durability as it was); subdirectories are ignored by the listings.
//! - A rename across directories is a removal from one listing and a creation in the other:
//!   syncing only one directory can lose the file or show it twice after power loss, which a
//!   journaling file system would not do. The engine renames within one directory.
//! - A removed file comes back only while its contents are still reachable: an open reader is
//!   kept on it from its removal (or replacement by a rename) until its directory is synced.
//! - Paths are compared lexically after folding `.` and `..`; over a `PosixEnv` one file spelled
//!   two ways (relative and absolute, or through a symlink) is two files.
//! - `unlock_file` cannot report a failure of the inner env's unlock (the inner lock is dropped,
//!   which releases it).
//! - Every change must go through this env once it wraps the inner one; reading the inner env
//!   directly is fine. Appends are flushed to the inner env at once, so "unsynced" always means
//!   "in the file but not durable", never "in a user-space buffer".
//!
//! Thread-safe; clones share one state. Metadata operations and appends are serialized by one
//! mutex (this is a test tool, not a fast path).

mod namespace;
mod rules;
#[cfg(test)]
mod tests;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::Mutex;

use self::namespace::{Entry, Namespace, NodeId, SplitMix64};
pub use self::rules::{CrashPoint, InjectedFault};
use self::rules::{Faults, Verdict};
use super::{normalize_path, Env, FileLock, RandomAccessFile, SequentialFile, WritableFile};
use crate::error::{Error, Result};

/// A kind of operation that is counted and can be failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// Opening a file: `new_sequential_file`, `new_random_access_file`, `new_writable_file`,
    /// `new_appendable_file`.
    Open,
    /// `SequentialFile::read` and `RandomAccessFile::read_at` (not `skip`).
    Read,
    /// `WritableFile::append`.
    Append,
    /// `WritableFile::sync`.
    Sync,
    /// `Env::rename`.
    Rename,
    /// `Env::remove_file` and `Env::remove_dir`.
    Remove,
    /// `Env::lock_file`.
    Lock,
    /// `Env::sync_dir`.
    SyncDir,
}

impl OpKind {
    /// Every kind, in declaration order.
    pub const ALL: [OpKind; 8] = [
        OpKind::Open,
        OpKind::Read,
        OpKind::Append,
        OpKind::Sync,
        OpKind::Rename,
        OpKind::Remove,
        OpKind::Lock,
        OpKind::SyncDir,
    ];
}

/// Number of [`OpKind`]s.
const KINDS: usize = OpKind::ALL.len();

/// The error an injected failure reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InjectedError {
    /// A generic I/O error (EIO).
    Io,
    /// The device is full (ENOSPC).
    NoSpace,
    /// An append writes the first half of its data, then fails with EIO.
    ShortWrite,
    /// The operation panics, as a bug in the code around it would.
    Panic,
}

/// What [`FaultEnv::simulate_power_loss`] does with a file's unsynced bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PowerLossMode {
    /// They are lost: the file ends at its synced length.
    DropUnsynced,
    /// A random prefix of them survives (possibly none, possibly all).
    TornTail,
    /// They are replaced by 1 to as-many random bytes.
    GarbageTail,
}

/// An `Env` that injects failures and simulates power loss; see the module documentation for
/// the model.
///
/// Thread-safe. Clones share one state (the fault rules, the counters and the durability
/// records), so a test can hand one clone to the database and keep another.
#[derive(Clone)]
pub struct FaultEnv {
    shared: Arc<Shared>,
}

struct Shared {
    inner: Arc<dyn Env>,
    /// Bumped by each power loss; a handle opened in an older epoch is dead.
    epoch: AtomicU64,
    faults: Mutex<Faults>,
    state: Mutex<State>,
}

/// The durability records and the locks held through this env.
#[derive(Default)]
struct State {
    files: Namespace,
    locks: Vec<Weak<LockSlot>>,
}

/// The inner lock behind a [`FaultFileLock`]; emptied when released.
type LockSlot = Mutex<Option<Box<dyn FileLock>>>;

impl FaultEnv {
    /// Wraps `inner`. No fault is armed; files already in `inner` count as durable.
    pub fn new(inner: Arc<dyn Env>) -> FaultEnv {
        FaultEnv {
            shared: Arc::new(Shared {
                inner,
                epoch: AtomicU64::new(0),
                faults: Mutex::default(),
                state: Mutex::default(),
            }),
        }
    }

    /// The wrapped env.
    pub fn inner(&self) -> &Arc<dyn Env> {
        &self.shared.inner
    }

    /// Fails the `n`th operation of `kind` from now (`n = 1`, or 0: the next one) with `error`,
    /// once. Replaces any rule for `kind`.
    pub fn fail_after(&self, kind: OpKind, n: u64, error: InjectedError) {
        self.shared
            .faults
            .lock()
            .set_rule(kind, Some(n.max(1)), error);
    }

    /// Fails every operation of `kind` with `error` until [`FaultEnv::clear_faults`]. Replaces
    /// any rule for `kind`.
    pub fn fail_always(&self, kind: OpKind, error: InjectedError) {
        self.shared.faults.lock().set_rule(kind, None, error);
    }

    /// Kills the process after the `n`th operation of `kind` from now (`n = 1`, or 0: the
    /// next one): that operation happens (or fails, if a failure rule says so), every later
    /// operation fails. See the module documentation. Replaces any crash rule.
    pub fn crash_after(&self, kind: OpKind, n: u64) {
        self.crash_after_matching(kind, n, |_| true);
    }

    /// Like [`FaultEnv::crash_after`], counting only the operations on paths `filter` accepts
    /// (for a rename, the target), so a crash can be aimed at one kind of file.
    pub fn crash_after_matching(
        &self,
        kind: OpKind,
        n: u64,
        filter: impl Fn(&Path) -> bool + Send + 'static,
    ) {
        self.shared
            .faults
            .lock()
            .set_crash(kind, n, Box::new(filter));
    }

    /// Kills the process now: every later operation fails.
    pub fn crash_now(&self) {
        self.shared.faults.lock().crash_now();
    }

    /// `Some` once the process is dead, holding the operation after which a crash rule killed
    /// it (`None` inside when [`FaultEnv::crash_now`] did).
    pub fn crash_point(&self) -> Option<Option<CrashPoint>> {
        self.shared.faults.lock().crash_point()
    }

    /// Disarms every rule, the crash rule included, and brings a crashed process back to life.
    pub fn clear_faults(&self) {
        self.shared.faults.lock().clear();
    }

    /// Operations of `kind` attempted through this env (and its clones) since it was created,
    /// including the failed ones.
    pub fn op_count(&self, kind: OpKind) -> u64 {
        self.shared.faults.lock().count(kind)
    }

    /// Every failure injected by a rule since this env was created, in order (not the
    /// failures of a dead process).
    pub fn injected_faults(&self) -> Vec<InjectedFault> {
        self.shared.faults.lock().injected().to_vec()
    }

    /// Loses power: rewrites the inner env to the durable state, cutting unsynced data by
    /// `mode` with cut points drawn from `rng_seed`; kills every open handle and releases every
    /// lock. A crashed process is revived (the machine reboots); failure rules stay armed.
    /// See the module documentation for the model. Fails only if the inner env fails.
    pub fn simulate_power_loss(&self, mode: PowerLossMode, rng_seed: u64) -> Result<()> {
        let inner = &*self.shared.inner;
        let mut state = self.shared.state.lock();
        self.shared.epoch.fetch_add(1, Ordering::SeqCst);
        self.shared.faults.lock().revive();
        for slot in std::mem::take(&mut state.locks) {
            let held = slot.upgrade().and_then(|slot| slot.lock().take());
            if let Some(lock) = held {
                // The inner lock is released by its drop even if this reports a failure.
                let _ = inner.unlock_file(lock);
            }
        }
        state
            .files
            .power_loss(inner, mode, &mut SplitMix64::new(rng_seed))
    }
}

impl std::fmt::Debug for FaultEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let counts = self.shared.faults.lock().counts();
        f.debug_struct("FaultEnv")
            .field("epoch", &self.shared.epoch.load(Ordering::SeqCst))
            .field("op_counts", &counts)
            .finish_non_exhaustive()
    }
}

/// The error an injected failure of `op` on `path` reports.
fn injected(error: InjectedError, op: &str, path: &Path) -> Error {
    let source = match error {
        InjectedError::NoSpace => io::Error::from_raw_os_error(libc::ENOSPC),
        InjectedError::Io | InjectedError::ShortWrite => io::Error::from_raw_os_error(libc::EIO),
        InjectedError::Panic => panic!("{op} {} (injected panic)", path.display()),
    };
    Error::io(format!("{op} {} (injected fault)", path.display()), source)
}

/// The error every operation of a crashed process reports.
fn dead(op: &str, path: &Path) -> Error {
    Error::io(
        format!("{op} {} (process crashed)", path.display()),
        io::Error::from_raw_os_error(libc::EIO),
    )
}

impl Shared {
    /// Counts an operation of `kind` and fails it if a rule says so or the process is dead.
    fn check(&self, kind: OpKind, op: &str, path: &Path) -> Result<()> {
        match self.faults.lock().on_op(kind, path) {
            Verdict::Proceed => Ok(()),
            Verdict::Fail(error) => Err(injected(error, op, path)),
            Verdict::Dead => Err(dead(op, path)),
        }
    }

    /// Fails an operation that is not counted if the process is dead.
    fn refuse_if_dead(&self, op: &str, path: &Path) -> Result<()> {
        if self.faults.lock().is_dead() {
            return Err(dead(op, path));
        }
        Ok(())
    }

    /// Fails if a power loss happened since `epoch`.
    fn alive(&self, epoch: u64, op: &str, path: &Path) -> Result<()> {
        if self.epoch.load(Ordering::SeqCst) == epoch {
            return Ok(());
        }
        Err(Error::io(
            format!("{op} {}", path.display()),
            io::Error::other("handle opened before a simulated power loss"),
        ))
    }

    /// Opens a writer on `path`, recording the file as created (or truncated; `mapped`: as a
    /// write-ahead log written through a memory map, see [`namespace::cut_mapped`]).
    fn open_writer(
        self: &Arc<Self>,
        path: &Path,
        truncate: bool,
        mapped: bool,
    ) -> Result<Box<dyn WritableFile>> {
        let op = if truncate {
            "create"
        } else {
            "open for append"
        };
        self.check(OpKind::Open, op, path)?;
        let mut state = self.state.lock();
        let entry = Entry::of(path);
        if let Some(entry) = &entry {
            state.files.track(&*self.inner, &entry.dir);
        }
        let file = if truncate {
            self.inner.new_writable_file(path)?
        } else {
            self.inner.new_appendable_file(path)?
        };
        let node = entry.map(|entry| match state.files.file(&entry) {
            Some(id) => {
                if let Some(node) = state.files.node_mut(id).filter(|_| truncate) {
                    node.len = 0;
                    node.synced = 0;
                    node.mapped = mapped;
                }
                id
            }
            None => {
                let len = self.inner.file_size(path).unwrap_or(0);
                let id = state.files.create(&entry, len);
                if let Some(node) = state.files.node_mut(id) {
                    node.mapped = mapped;
                }
                id
            }
        });
        Ok(Box::new(FaultWritableFile {
            shared: Arc::clone(self),
            inner: file,
            node,
            epoch: self.epoch.load(Ordering::SeqCst),
            path: path.to_path_buf(),
        }))
    }
}

impl FaultEnv {
    /// A random-access file of `path`, opened by `open` on the inner env, that fails as faults
    /// direct.
    fn random_access(
        &self,
        path: &Path,
        open: impl FnOnce(&dyn Env) -> Result<Arc<dyn RandomAccessFile>>,
    ) -> Result<Arc<dyn RandomAccessFile>> {
        self.shared.check(OpKind::Open, "open", path)?;
        let epoch = self.shared.epoch.load(Ordering::SeqCst);
        let inner = open(&*self.shared.inner)?;
        Ok(Arc::new(FaultRandomAccessFile {
            shared: Arc::clone(&self.shared),
            inner,
            epoch,
            path: path.to_path_buf(),
        }))
    }
}

impl Env for FaultEnv {
    fn new_sequential_file(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        self.shared.check(OpKind::Open, "open", path)?;
        let epoch = self.shared.epoch.load(Ordering::SeqCst);
        let inner = self.shared.inner.new_sequential_file(path)?;
        Ok(Box::new(FaultSequentialFile {
            shared: Arc::clone(&self.shared),
            inner,
            epoch,
            path: path.to_path_buf(),
        }))
    }

    fn new_random_access_file(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        self.random_access(path, |inner| inner.new_random_access_file(path))
    }

    fn new_held_random_access_file(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        self.random_access(path, |inner| inner.new_held_random_access_file(path))
    }

    fn new_writable_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        self.shared.open_writer(path, true, false)
    }

    /// A writable file of the inner env that power loss treats as the real file system's
    /// mapped write-ahead log (see the module documentation).
    fn new_log_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        self.shared.open_writer(path, true, true)
    }

    fn new_appendable_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        self.shared.open_writer(path, false, false)
    }

    fn file_exists(&self, path: &Path) -> bool {
        self.shared.inner.file_exists(path)
    }

    fn children(&self, dir: &Path) -> Result<Vec<String>> {
        self.shared.inner.children(dir)
    }

    fn remove_file(&self, path: &Path) -> Result<()> {
        self.shared.check(OpKind::Remove, "remove", path)?;
        let inner = &*self.shared.inner;
        let mut state = self.shared.state.lock();
        let Some(entry) = Entry::of(path) else {
            return inner.remove_file(path);
        };
        state.files.track(inner, &entry.dir);
        let keeper = keeper(&state.files, inner, &entry, path);
        inner.remove_file(path)?;
        if let Some(id) = state.files.unlink(&entry) {
            state.files.park(id, keeper);
        }
        Ok(())
    }

    fn create_dir(&self, dir: &Path) -> Result<()> {
        self.shared.refuse_if_dead("create directory", dir)?;
        self.shared.inner.create_dir(dir)
    }

    fn remove_dir(&self, dir: &Path) -> Result<()> {
        self.shared.check(OpKind::Remove, "remove directory", dir)?;
        self.shared.inner.remove_dir(dir)
    }

    fn file_size(&self, path: &Path) -> Result<u64> {
        self.shared.inner.file_size(path)
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        let op = format!("rename {} to", from.display());
        self.shared.check(OpKind::Rename, &op, to)?;
        let inner = &*self.shared.inner;
        let mut state = self.shared.state.lock();
        if inner.children(from).is_ok() {
            inner.rename(from, to)?;
            state
                .files
                .rename_dir(&normalize_path(from), &normalize_path(to));
            return Ok(());
        }
        let (source, target) = (Entry::of(from), Entry::of(to));
        for entry in [&source, &target].into_iter().flatten() {
            state.files.track(inner, &entry.dir);
        }
        if source == target {
            return inner.rename(from, to);
        }
        let keeper = target
            .as_ref()
            .and_then(|target| keeper(&state.files, inner, target, to));
        inner.rename(from, to)?;
        let moved = source.and_then(|source| state.files.unlink(&source));
        match (target, moved) {
            (Some(target), moved) => {
                // A source the records do not know (written around this env) is a new file.
                let id = moved.unwrap_or_else(|| {
                    let len = inner.file_size(to).unwrap_or(0);
                    state.files.new_file(len)
                });
                if let Some(replaced) = state.files.link(&target, id) {
                    state.files.park(replaced, keeper);
                }
            }
            (None, Some(id)) => state.files.park(id, None),
            (None, None) => {}
        }
        Ok(())
    }

    fn lock_file(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        self.shared.check(OpKind::Lock, "lock", path)?;
        let inner = &self.shared.inner;
        let mut state = self.shared.state.lock();
        let entry = Entry::of(path);
        if let Some(entry) = &entry {
            state.files.track(&**inner, &entry.dir);
        }
        let lock = inner.lock_file(path)?;
        // Locking creates a missing file.
        if let Some(entry) = entry.filter(|entry| state.files.file(entry).is_none()) {
            state.files.create(&entry, 0);
        }
        let slot = Arc::new(Mutex::new(Some(lock)));
        state.locks.retain(|held| held.strong_count() > 0);
        state.locks.push(Arc::downgrade(&slot));
        Ok(Box::new(FaultFileLock {
            path: path.to_path_buf(),
            slot,
            inner: Arc::clone(inner),
        }))
    }

    fn unlock_file(&self, lock: Box<dyn FileLock>) -> Result<()> {
        // Dropping a `FaultFileLock` gives the inner lock back to the inner env.
        drop(lock);
        Ok(())
    }

    fn sync_dir(&self, dir: &Path) -> Result<()> {
        self.shared.check(OpKind::SyncDir, "sync directory", dir)?;
        let inner = &*self.shared.inner;
        let mut state = self.shared.state.lock();
        let dir_key = normalize_path(dir);
        state.files.track(inner, &dir_key);
        inner.sync_dir(dir)?;
        state.files.sync_dir(&dir_key);
        Ok(())
    }

    fn now_micros(&self) -> u64 {
        self.shared.inner.now_micros()
    }

    fn lower_thread_priority(&self) {
        self.shared.inner.lower_thread_priority()
    }

    fn lowest_thread_priority(&self) {
        self.shared.inner.lowest_thread_priority()
    }

    fn set_thread_time_slice(&self, slice: Duration) {
        self.shared.inner.set_thread_time_slice(slice)
    }
}

/// A reader on the file at `entry` (named `path`) if power loss must be able to bring it back
/// after it is unlinked.
fn keeper(
    files: &Namespace,
    inner: &dyn Env,
    entry: &Entry,
    path: &Path,
) -> Option<Arc<dyn RandomAccessFile>> {
    if files.needs_keeping(entry) {
        inner.new_random_access_file(path).ok()
    } else {
        None
    }
}

struct FaultSequentialFile {
    shared: Arc<Shared>,
    inner: Box<dyn SequentialFile>,
    epoch: u64,
    path: PathBuf,
}

impl SequentialFile for FaultSequentialFile {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        self.shared.check(OpKind::Read, "read", &self.path)?;
        self.shared.alive(self.epoch, "read", &self.path)?;
        self.inner.read(buf)
    }

    fn skip(&mut self, n: u64) -> Result<()> {
        self.shared.refuse_if_dead("skip in", &self.path)?;
        self.shared.alive(self.epoch, "skip in", &self.path)?;
        self.inner.skip(n)
    }
}

struct FaultRandomAccessFile {
    shared: Arc<Shared>,
    inner: Arc<dyn RandomAccessFile>,
    epoch: u64,
    path: PathBuf,
}

impl RandomAccessFile for FaultRandomAccessFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        self.shared.check(OpKind::Read, "read", &self.path)?;
        self.shared.alive(self.epoch, "read", &self.path)?;
        self.inner.read_at(offset, buf)
    }

    fn in_memory(&self, offset: u64, len: usize) -> bool {
        self.inner.in_memory(offset, len)
    }
}

/// A writer; `node` is the written file's inode (`None` for a path naming no file entry, or
/// once the inode was forgotten).
struct FaultWritableFile {
    shared: Arc<Shared>,
    inner: Box<dyn WritableFile>,
    node: Option<NodeId>,
    epoch: u64,
    path: PathBuf,
}

impl WritableFile for FaultWritableFile {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        const OP: &str = "append to";
        let verdict = self.shared.faults.lock().on_op(OpKind::Append, &self.path);
        let mut state = self.shared.state.lock();
        self.shared.alive(self.epoch, OP, &self.path)?;
        let (written, outcome) = match verdict {
            Verdict::Proceed => (data, Ok(())),
            Verdict::Fail(InjectedError::ShortWrite) => (
                data.split_at(data.len() / 2).0,
                Err(injected(InjectedError::ShortWrite, OP, &self.path)),
            ),
            Verdict::Fail(error) => return Err(injected(error, OP, &self.path)),
            Verdict::Dead => return Err(dead(OP, &self.path)),
        };
        self.inner.append(written)?;
        self.inner.flush()?;
        if let Some(node) = self.node.and_then(|id| state.files.node_mut(id)) {
            node.len += written.len() as u64;
        }
        outcome
    }

    fn flush(&mut self) -> Result<()> {
        self.shared.refuse_if_dead("flush", &self.path)?;
        self.shared.alive(self.epoch, "flush", &self.path)?;
        self.inner.flush()
    }

    fn sync(&mut self) -> Result<()> {
        self.shared.check(OpKind::Sync, "sync", &self.path)?;
        let mut state = self.shared.state.lock();
        self.shared.alive(self.epoch, "sync", &self.path)?;
        self.inner.sync()?;
        if let Some(node) = self.node.and_then(|id| state.files.node_mut(id)) {
            node.synced = node.len;
        }
        Ok(())
    }

    fn close(&mut self) -> Result<()> {
        self.shared.refuse_if_dead("close", &self.path)?;
        self.shared.alive(self.epoch, "close", &self.path)?;
        self.inner.close()
    }
}

/// A lock taken through a [`FaultEnv`]; dropping it (or power loss) releases the inner lock.
struct FaultFileLock {
    path: PathBuf,
    slot: Arc<LockSlot>,
    inner: Arc<dyn Env>,
}

impl FileLock for FaultFileLock {
    fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for FaultFileLock {
    fn drop(&mut self) {
        if let Some(lock) = self.slot.lock().take() {
            // Nowhere to report a failure from a drop; the inner lock is released by its own
            // drop in any case.
            let _ = self.inner.unlock_file(lock);
        }
    }
}
