//! [`PosixEnv`]: the real file system, through `std::fs` and, for the `LOCK` file, `fcntl`.
//!
//! - Sequential and random reads go straight to the kernel (no user-space buffer: callers read
//!   whole 32 KiB log blocks or whole table blocks); random reads are positional (`pread`), so one
//!   open table serves many threads without a seek lock.
//! - Random-access files hold no descriptor once mapped (up to [`MAX_MAPPED_FILES`] at once);
//!   files that are not mapped keep theirs only while a process-wide budget of a fifth of
//!   `RLIMIT_NOFILE` lasts (LevelDB's rule), and beyond it open themselves for each read. So a
//!   database of thousands of tables, or several databases, open under a low descriptor limit.
//! - Writers keep a 64 KiB user-space buffer so the many small appends of the log and table
//!   writers become few `write` calls; an append larger than the buffer goes to the file directly.
//!   `sync` is `fdatasync`. Write-ahead logs are written through a memory map instead
//!   (`posix/mapped_log.rs`, on x86-64 and AArch64): no system call per append.
//! - `lock_file` takes a write record lock over the whole file with `fcntl`, the kind of lock
//!   LevelDB takes, so a LevelDB process and a Strata process keep each other out. On Linux it
//!   is an open-file-description lock (`F_OFD_SETLK`): such locks conflict with LevelDB's
//!   classic `F_SETLK` locks across processes *and within one process*, and closing another
//!   descriptor of the file does not drop them. Elsewhere it is a classic `F_SETLK` lock, which
//!   belongs to the process: a second lock from this process would silently succeed, and
//!   closing *any* descriptor of the file drops it. For both kinds a process-wide set of locked
//!   paths refuses a second lock from this process, the set is checked before the file is
//!   opened, and a held lock is closed before its path leaves the set. The engine must not open
//!   the `LOCK` file otherwise.

use std::collections::BTreeSet;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
#[cfg(target_os = "linux")]
use std::time::Duration;
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;

use super::{Env, FileLock, RandomAccessFile, SequentialFile, WritableFile};
use crate::error::{Error, Result};

#[cfg(target_os = "linux")]
mod growing;
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(crate) mod mapped_log;

/// Size of a writer's user-space buffer.
const WRITE_BUFFER_SIZE: usize = 64 * 1024;

/// The real file system.
///
/// Stateless and free to create: every `PosixEnv` shares the process-wide table of held locks.
/// Thread-safe.
#[derive(Debug, Default, Clone, Copy)]
pub struct PosixEnv;

impl PosixEnv {
    /// The POSIX environment.
    pub fn new() -> PosixEnv {
        PosixEnv
    }
}

/// `op path` as an error context.
fn context(op: &str, path: &Path) -> String {
    format!("{op} {}", path.display())
}

/// Microseconds since the UNIX epoch (0 if the clock is before it).
pub(super) fn wall_clock_micros() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

fn open_read(path: &Path) -> Result<File> {
    File::open(path).map_err(|e| Error::io(context("open", path), e))
}

impl Env for PosixEnv {
    fn new_sequential_file(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        let file = open_read(path)?;
        Ok(Box::new(PosixSequentialFile {
            file,
            path: path.to_path_buf(),
        }))
    }

    fn new_random_access_file(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        let file = open_read(path)?;
        if let Some(permit) = MAPPED.take() {
            if let Some(mapped) = MappedFile::map(&file, path, Some(permit)) {
                return Ok(Arc::new(mapped));
            }
        }
        let file = DESCRIPTORS.take().map(|permit| (file, Some(permit)));
        Ok(Arc::new(PosixRandomAccessFile {
            file,
            path: path.to_path_buf(),
        }))
    }

    /// Maps the file whatever the count of mapped files (a mapping holds no descriptor; the
    /// kernel's `vm.max_map_count`, 65530 by default, bounds them), else keeps its descriptor
    /// outside the budget.
    fn new_held_random_access_file(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        let file = open_read(path)?;
        if let Some(mapped) = MappedFile::map(&file, path, None) {
            return Ok(Arc::new(mapped));
        }
        Ok(Arc::new(PosixRandomAccessFile {
            file: Some((file, None)),
            path: path.to_path_buf(),
        }))
    }

    /// On Linux, maps the file past its end while a mapping and a descriptor permit last
    /// (`posix/growing.rs`); else opens it as `new_random_access_file` does.
    fn new_growing_random_access_file(
        &self,
        path: &Path,
        capacity: u64,
    ) -> Result<Arc<dyn RandomAccessFile>> {
        #[cfg(target_os = "linux")]
        if let Some(file) = growing::GrowingFile::open(path, capacity)? {
            return Ok(Arc::new(file));
        }
        let _ = capacity;
        self.new_random_access_file(path)
    }

    fn new_writable_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(|e| Error::io(context("create", path), e))?;
        Ok(Box::new(PosixWritableFile::new(file, path)))
    }

    /// Through a memory map (`posix/mapped_log.rs`); on a file system that cannot map the
    /// file, with `write` as [`Env::new_writable_file`] does.
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    fn new_log_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(|e| Error::io(context("create", path), e))?;
        Ok(match mapped_log::MappedLogFile::new(file, path) {
            Ok(log) => Box::new(log),
            Err(file) => Box::new(PosixWritableFile::new(file, path)),
        })
    }

    fn new_appendable_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        let file = OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .map_err(|e| Error::io(context("open for append", path), e))?;
        Ok(Box::new(PosixWritableFile::new(file, path)))
    }

    fn file_exists(&self, path: &Path) -> bool {
        fs::metadata(path).is_ok()
    }

    fn children(&self, dir: &Path) -> Result<Vec<String>> {
        let ctx = || context("list", dir);
        let mut names = Vec::new();
        for entry in fs::read_dir(dir).map_err(|e| Error::io(ctx(), e))? {
            let entry = entry.map_err(|e| Error::io(ctx(), e))?;
            // Names Strata writes are ASCII; a foreign non-UTF-8 name is listed lossily.
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
        Ok(names)
    }

    fn remove_file(&self, path: &Path) -> Result<()> {
        fs::remove_file(path).map_err(|e| Error::io(context("remove", path), e))
    }

    fn create_dir(&self, dir: &Path) -> Result<()> {
        fs::create_dir_all(dir).map_err(|e| Error::io(context("create directory", dir), e))
    }

    fn remove_dir(&self, dir: &Path) -> Result<()> {
        fs::remove_dir(dir).map_err(|e| Error::io(context("remove directory", dir), e))
    }

    fn file_size(&self, path: &Path) -> Result<u64> {
        fs::metadata(path)
            .map(|m| m.len())
            .map_err(|e| Error::io(context("stat", path), e))
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        fs::rename(from, to)
            .map_err(|e| Error::io(format!("rename {} to {}", from.display(), to.display()), e))
    }

    fn link_file(&self, from: &Path, to: &Path) -> Result<()> {
        fs::hard_link(from, to)
            .map_err(|e| Error::io(format!("link {} to {}", from.display(), to.display()), e))
    }

    fn lock_file(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        PosixFileLock::acquire(path).map(|lock| Box::new(lock) as Box<dyn FileLock>)
    }

    fn unlock_file(&self, lock: Box<dyn FileLock>) -> Result<()> {
        // Dropping a `PosixFileLock` releases it (see its `Drop`).
        drop(lock);
        Ok(())
    }

    fn sync_dir(&self, dir: &Path) -> Result<()> {
        let ctx = || context("sync directory", dir);
        let handle = File::open(dir).map_err(|e| Error::io(ctx(), e))?;
        handle.sync_all().map_err(|e| Error::io(ctx(), e))
    }

    fn now_micros(&self) -> u64 {
        wall_clock_micros()
    }

    /// Adds 10 to the thread's nice value (at most 19: `BACKGROUND_NICE`), which needs no
    /// privilege; a failure leaves the priority as it was. Linux only: elsewhere `nice` would
    /// lower the whole process, so other systems keep the default, which does nothing.
    #[cfg(target_os = "linux")]
    fn lower_thread_priority(&self) {
        // SAFETY: the call takes an integer and touches no memory of ours; on Linux it
        // changes the calling thread's nice value only.
        let _ = unsafe { libc::nice(BACKGROUND_NICE) };
    }

    /// Nice 19 for the calling thread (and those it starts), which needs no privilege; a
    /// failure leaves the priority as it was. Linux only, as `lower_thread_priority`.
    ///
    /// Not `SCHED_IDLE`, which this was first: a thread of that policy gets next to no time
    /// while the writer and the compactions keep both processors busy, and in 10M random
    /// writes here up to 166 retired logs waited for it, deleted but still open and mapped
    /// (the process's peak RSS 186 MiB, against 69 MiB at nice 19, where at most 8 waited,
    /// with as many batches over 10x the median; in 10M sorted writes nice 19 left 12-15 of
    /// them where `SCHED_IDLE` left 7-13, a difference near the runs' spread).
    #[cfg(target_os = "linux")]
    fn lowest_thread_priority(&self) {
        // SAFETY: the call takes integers and touches no memory of ours; on Linux, `who` 0
        // with `PRIO_PROCESS` is the calling thread.
        let _ = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, LOWEST_NICE) };
    }

    /// The calling thread's time slice, its policy and nice value kept (Linux 6.12's
    /// `sched_setattr` takes a slice for a thread of the normal policy, between 0.1 and
    /// 100 ms, 0 for the default; earlier kernels ignore it). A failure leaves the thread as
    /// it was.
    #[cfg(target_os = "linux")]
    fn set_thread_time_slice(&self, slice: Duration) {
        // SAFETY: `errno` is the calling thread's; reading and writing it touches nothing else.
        let errno = || unsafe { libc::__errno_location() };
        // SAFETY: see `errno`.
        unsafe { *errno() = 0 };
        // SAFETY: the call takes integers and touches no memory of ours; `who` 0 with
        // `PRIO_PROCESS` is the calling thread on Linux.
        let nice = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
        // SAFETY: see `errno`.
        if nice == -1 && unsafe { *errno() } != 0 {
            return;
        }
        let attr = libc::sched_attr {
            size: std::mem::size_of::<libc::sched_attr>() as u32,
            sched_policy: 0,
            sched_flags: libc::SCHED_FLAG_KEEP_POLICY as u64,
            sched_nice: nice,
            sched_priority: 0,
            sched_runtime: u64::try_from(slice.as_nanos()).unwrap_or(u64::MAX),
            sched_deadline: 0,
            sched_period: 0,
        };
        // SAFETY: the kernel reads `attr` (its `size` bytes, all initialized) during the call
        // and keeps no reference to it; `pid` 0 is the calling thread.
        let _ = unsafe { libc::syscall(libc::SYS_sched_setattr, 0, &attr, 0) };
    }
}

/// How much lower than the application's threads [`PosixEnv::lower_thread_priority`] puts a
/// thread: +10 gives it about a tenth of a core shared with a busy thread of nice 0. In 10M
/// random writes in batches of 1000 here (two cores), it left 11-26 batches over 10x the
/// median where compaction threads at the writer's priority left 47-61: they preempted the
/// writer for a scheduler tick (4 ms) or two at a time.
#[cfg(target_os = "linux")]
const BACKGROUND_NICE: libc::c_int = 10;

/// The nice value of [`PosixEnv::lowest_thread_priority`]: Linux's lowest.
#[cfg(target_os = "linux")]
const LOWEST_NICE: libc::c_int = 19;

/// Reads into `buf` with `read_once` until it is full or `read_once` reports end of file;
/// retries interrupted calls.
fn read_full(
    buf: &mut [u8],
    mut read_once: impl FnMut(&mut [u8], usize) -> io::Result<usize>,
) -> io::Result<usize> {
    let mut filled = 0;
    while let Some(rest) = buf.get_mut(filled..).filter(|r| !r.is_empty()) {
        match read_once(rest, filled) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

struct PosixSequentialFile {
    file: File,
    path: PathBuf,
}

impl SequentialFile for PosixSequentialFile {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        let file = &mut self.file;
        read_full(buf, |rest, _| file.read(rest))
            .map_err(|e| Error::io(context("read", &self.path), e))
    }

    fn skip(&mut self, n: u64) -> Result<()> {
        let ctx = || context("skip in", &self.path);
        let pos = self
            .file
            .stream_position()
            .map_err(|e| Error::io(ctx(), e))?;
        let len = self.file.metadata().map_err(|e| Error::io(ctx(), e))?.len();
        let target = pos.saturating_add(n).min(len.max(pos));
        self.file
            .seek(SeekFrom::Start(target))
            .map(drop)
            .map_err(|e| Error::io(ctx(), e))
    }
}

/// A file read with `pread`: through a descriptor it keeps while one of the
/// [`DESCRIPTORS`] permits lasts (or outside the budget, for a held file), else through a
/// descriptor opened for each read.
struct PosixRandomAccessFile {
    file: Option<(File, Option<Permit>)>,
    path: PathBuf,
}

impl RandomAccessFile for PosixRandomAccessFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        match &self.file {
            Some((file, _)) => pread(file, &self.path, offset, buf),
            None => pread(&open_read(&self.path)?, &self.path, offset, buf),
        }
    }
}

/// Reads `buf.len()` bytes of `file` at `offset`, fewer only at its end.
fn pread(file: &File, path: &Path, offset: u64, buf: &mut [u8]) -> Result<usize> {
    read_full(buf, |rest, filled| {
        let at = offset
            .checked_add(filled as u64)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "offset overflows"))?;
        file.read_at(rest, at)
    })
    .map_err(|e| Error::io(format!("read {} at {offset}", path.display()), e))
}

/// Most files mapped at once; beyond this, files are read with `pread` (LevelDB's limit on
/// 64-bit systems too, which keeps address-space use bounded with many open tables).
const MAX_MAPPED_FILES: usize = 1000;

/// Mapping permits, process-wide.
static MAPPED: Permits = Permits::new(|| MAX_MAPPED_FILES);

/// Permits to keep a descriptor open for reads of a file that is not mapped: a fifth of the
/// soft `RLIMIT_NOFILE` (at least one), as LevelDB budgets them, read once per process.
static DESCRIPTORS: Permits = Permits::new(|| {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `getrlimit` writes the limit into the struct it is given, which lives across the
    // call.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0
        || limit.rlim_cur == libc::RLIM_INFINITY
    {
        return usize::MAX;
    }
    usize::try_from(limit.rlim_cur / 5)
        .unwrap_or(usize::MAX)
        .max(1)
});

/// A process-wide count of permits, bounded by a limit computed on first use.
struct Permits {
    taken: std::sync::atomic::AtomicUsize,
    limit: std::sync::OnceLock<usize>,
    compute_limit: fn() -> usize,
}

/// One permit of a [`Permits`] pool; given back when dropped.
struct Permit(&'static Permits);

impl Permits {
    const fn new(compute_limit: fn() -> usize) -> Permits {
        Permits {
            taken: std::sync::atomic::AtomicUsize::new(0),
            limit: std::sync::OnceLock::new(),
            compute_limit,
        }
    }

    fn take(&'static self) -> Option<Permit> {
        use std::sync::atomic::Ordering;
        let limit = *self.limit.get_or_init(self.compute_limit);
        let taken = self.taken.fetch_add(1, Ordering::Relaxed);
        if taken < limit {
            Some(Permit(self))
        } else {
            self.taken.fetch_sub(1, Ordering::Relaxed);
            None
        }
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.0
            .taken
            .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// A file mapped into memory as it was when opened, holding no descriptor. Reads past the
/// mapping (the file grew since) open the file for that read.
struct MappedFile {
    map: Arc<Mapping>,
    path: PathBuf,
}

/// A mapping with its [`MAPPED`] permit (`None` for a held file, mapped outside the count),
/// shared by the file and the blocks kept in it ([`RandomAccessFile::shared`]): the permit is
/// given back when the last of them lets the mapping go.
struct Mapping {
    map: memmap2::Mmap,
    _permit: Option<Permit>,
}

impl std::ops::Deref for Mapping {
    type Target = memmap2::Mmap;

    fn deref(&self) -> &memmap2::Mmap {
        &self.map
    }
}

impl MappedFile {
    /// `file` (opened on `path`) mapped as it is now; `None` when it cannot be mapped (an empty
    /// file, or the kernel refuses), and the caller reads it with `pread`.
    fn map(file: &File, path: &Path, permit: Option<Permit>) -> Option<MappedFile> {
        // SAFETY: the mapping is only read, within its length (`read_at`). The engine maps
        // tables, and a read-only handle or a checkpoint live logs; the tools also map logs and
        // manifests, perhaps of a live database. Strata never rewrites or shrinks any of them:
        // each is created under a fresh number, logs and manifests are only appended to, and
        // files are retired by unlinking, which leaves a mapping valid (UNSAFE.md lists the
        // exceptions). A file truncated behind our back could fault, as it would for LevelDB,
        // which maps tables the same way.
        let map = unsafe { memmap2::Mmap::map(file) }.ok()?;
        // The mapping keeps the contents; the caller's descriptor may close.
        Some(MappedFile {
            map: Arc::new(Mapping {
                map,
                _permit: permit,
            }),
            path: path.to_path_buf(),
        })
    }
}

/// A file's mapping as the owner of the [`bytes::Bytes`] a table reads its uncompressed blocks
/// in place from ([`RandomAccessFile::shared`]): it stays mapped while any of them is held.
struct SharedMapping(Arc<Mapping>);

impl AsRef<[u8]> for SharedMapping {
    fn as_ref(&self) -> &[u8] {
        &self.0.map
    }
}

impl RandomAccessFile for MappedFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let in_map = usize::try_from(offset)
            .ok()
            .and_then(|start| Some(start..start.checked_add(buf.len())?))
            .and_then(|range| self.map.get(range));
        match in_map {
            Some(bytes) => {
                buf.copy_from_slice(bytes);
                Ok(buf.len())
            }
            None => pread(&open_read(&self.path)?, &self.path, offset, buf),
        }
    }

    fn mapped(&self) -> Option<&[u8]> {
        Some(&self.map)
    }

    fn shared(&self) -> Option<bytes::Bytes> {
        Some(bytes::Bytes::from_owner(SharedMapping(Arc::clone(
            &self.map,
        ))))
    }

    fn in_memory(&self, offset: u64, len: usize) -> bool {
        usize::try_from(offset)
            .ok()
            .and_then(|start| Some(start..start.checked_add(len)?))
            .and_then(|range| self.map.get(range))
            .is_some_and(resident)
    }

    fn release(&self, offset: u64, len: u64) {
        // The pages from the one holding `offset` to the last one the range covers whole, in
        // the mapping: a scan going forward has read the bytes before `offset` in its page too,
        // and may not be done with the page the range ends inside.
        let page = page_size() as u64;
        let map_len = self.map.len() as u64;
        let start = offset.min(map_len) / page * page;
        let end = offset.saturating_add(len).min(map_len) / page * page;
        if start < end {
            // SAFETY: the mapping is a shared, read-only map of a file Strata never rewrites or
            // shrinks (see `MappedFile::map`): dropping its pages only unmaps them from this
            // process, and the next read of those addresses maps the same bytes again from the
            // page cache or the disk, so slices into the mapping stay valid and unchanged. The
            // range lies inside the mapping (checked above). A failure changes nothing.
            let _ = unsafe {
                self.map.unchecked_advise_range(
                    memmap2::UncheckedAdvice::DontNeed,
                    start as usize,
                    (end - start) as usize,
                )
            };
        }
    }
}

/// Whether every page of `bytes` (a part of a mapping) is in memory, so reading it waits for
/// no disk (`mincore`); false when the kernel cannot tell.
fn resident(bytes: &[u8]) -> bool {
    if bytes.is_empty() {
        return true;
    }
    let page = page_size();
    let first = bytes.as_ptr() as usize & !(page - 1);
    let end = bytes.as_ptr() as usize + bytes.len();
    let pages = (end - first).div_ceil(page);
    let mut status: smallvec::SmallVec<[u8; 16]> = smallvec::smallvec![0; pages];
    // SAFETY: `first..end` covers `bytes` rounded down to its page: a mapping starts on a page
    // boundary, so those pages all belong to the mapping `bytes` borrows, which stays mapped
    // for the call. mincore only reads the page tables and writes one byte per page of that
    // range into `status`, which has exactly that many.
    let done =
        unsafe { libc::mincore(first as *mut libc::c_void, end - first, status.as_mut_ptr()) };
    done == 0 && status.iter().all(|page| page & 1 == 1)
}

/// The size of a memory page.
fn page_size() -> usize {
    static PAGE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *PAGE.get_or_init(|| {
        // SAFETY: sysconf takes an integer and reads no memory of ours.
        let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        usize::try_from(size)
            .ok()
            .filter(|s| s.is_power_of_two())
            .unwrap_or(4096)
    })
}

/// A buffered appender. `file` is `None` once closed.
struct PosixWritableFile {
    file: Option<File>,
    buf: Vec<u8>,
    path: PathBuf,
    /// Where the next [`WritableFile::start_writeback`] starts: the end of the range the last
    /// one asked for.
    writeback_from: u64,
}

impl PosixWritableFile {
    fn new(file: File, path: &Path) -> PosixWritableFile {
        PosixWritableFile {
            file: Some(file),
            buf: Vec::with_capacity(WRITE_BUFFER_SIZE),
            path: path.to_path_buf(),
            writeback_from: 0,
        }
    }

    fn open_file(&mut self, op: &str) -> Result<&mut File> {
        match &mut self.file {
            Some(file) => Ok(file),
            None => Err(Error::io(
                context(op, &self.path),
                io::Error::other("file is closed"),
            )),
        }
    }

    fn write_direct(&mut self, data: &[u8]) -> Result<()> {
        let file = self.open_file("write")?;
        file.write_all(data)
            .map_err(|e| Error::io(context("write", &self.path), e))
    }

    /// Writes the buffer out. The buffer is emptied even on failure: after a failed write the
    /// file's tail is unknown and the caller must treat the file as broken.
    fn flush_buffer(&mut self) -> Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let buf = std::mem::take(&mut self.buf);
        let result = self.write_direct(&buf);
        self.buf = buf;
        self.buf.clear();
        result
    }
}

impl WritableFile for PosixWritableFile {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.open_file("append to")?;
        let room = WRITE_BUFFER_SIZE - self.buf.len();
        if data.len() <= room {
            self.buf.extend_from_slice(data);
            return Ok(());
        }
        // Top the buffer up so it goes out as one full write, then buffer or write the rest.
        let (head, tail) = data.split_at(room);
        self.buf.extend_from_slice(head);
        self.flush_buffer()?;
        if tail.len() < WRITE_BUFFER_SIZE {
            self.buf.extend_from_slice(tail);
            Ok(())
        } else {
            self.write_direct(tail)
        }
    }

    fn flush(&mut self) -> Result<()> {
        self.open_file("flush")?;
        self.flush_buffer()
    }

    fn sync(&mut self) -> Result<()> {
        self.flush()?;
        let file = self.open_file("sync")?;
        file.sync_data()
            .map_err(|e| Error::io(context("sync", &self.path), e))
    }

    /// Asks for the writeback of the whole pages written since the last call: the last page,
    /// which the next append may write into again, is left for later (a page under writeback
    /// makes a write into it wait on some devices and filesystems). The request's own failure
    /// is ignored: it is a hint, the bytes are in the page cache once the flush succeeded, and
    /// an error of the writeback itself is still reported by the next sync (asked with
    /// `SYNC_FILE_RANGE_WRITE` alone, the kernel leaves the descriptor's record of writeback
    /// errors for `fdatasync` to report; with a `WAIT_*` flag added it would not, and the
    /// error would then have to fail the file).
    #[cfg(target_os = "linux")]
    fn start_writeback(&mut self) -> Result<()> {
        self.flush()?;
        let from = self.writeback_from;
        let file = self.open_file("start writeback of")?;
        let Ok(metadata) = file.metadata() else {
            return Ok(());
        };
        let end = metadata.len() & !(page_size() as u64 - 1);
        let (Ok(offset), Ok(len)) = (
            libc::off64_t::try_from(from),
            libc::off64_t::try_from(end.saturating_sub(from)),
        ) else {
            return Ok(());
        };
        if len == 0 {
            return Ok(());
        }
        // SAFETY: the descriptor is open while `file` is borrowed; the call takes integers
        // only and touches no memory of ours.
        unsafe {
            libc::sync_file_range(file.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE);
        }
        self.writeback_from = end;
        Ok(())
    }

    fn close(&mut self) -> Result<()> {
        self.open_file("close")?;
        let result = self.flush_buffer();
        self.file = None;
        result
    }
}

impl Drop for PosixWritableFile {
    fn drop(&mut self) {
        if self.file.is_some() {
            let _ = self.flush_buffer();
        }
    }
}

/// Canonical paths of the files this process holds record locks on.
static LOCKED_FILES: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());

/// The name under which `path` is kept in [`LOCKED_FILES`], found without opening the file
/// (opening and closing it would drop a lock this process already holds).
fn lock_key(path: &Path) -> io::Result<PathBuf> {
    match fs::canonicalize(path) {
        Ok(key) => Ok(key),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let name = path
                .file_name()
                .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?;
            Ok(fs::canonicalize(super::parent_dir(path))?.join(name))
        }
        Err(e) => Err(e),
    }
}

/// The `fcntl` command that sets a record lock without waiting; see the module documentation.
#[cfg(target_os = "linux")]
const LOCK_COMMAND: libc::c_int = libc::F_OFD_SETLK;
#[cfg(not(target_os = "linux"))]
const LOCK_COMMAND: libc::c_int = libc::F_SETLK;

/// Takes (`F_WRLCK`) or releases (`F_UNLCK`) a record lock over the whole of `file`, without
/// waiting.
fn fcntl_lock(file: &File, lock_type: libc::c_int) -> io::Result<()> {
    // SAFETY: `libc::flock` is a plain C struct for which all-zero bytes are a valid value.
    let mut request: libc::flock = unsafe { std::mem::zeroed() };
    // The narrowing casts are of small libc constants (F_WRLCK, F_UNLCK, SEEK_SET).
    request.l_type = lock_type as libc::c_short;
    request.l_whence = libc::SEEK_SET as libc::c_short;
    request.l_start = 0;
    request.l_len = 0; // to the end of the file, however long it grows
    request.l_pid = 0; // required by open-file-description locks
                       // SAFETY: the descriptor is open for as long as `file` is borrowed, and `request` is a valid
                       // `flock` that outlives the call; fcntl reads it and does not keep the pointer.
    let rc = unsafe {
        libc::fcntl(
            file.as_raw_fd(),
            LOCK_COMMAND,
            &request as *const libc::flock,
        )
    };
    if rc == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// A held `LOCK`: the open descriptor carrying the record lock and its key in
/// [`LOCKED_FILES`]. Dropping it releases the lock.
struct PosixFileLock {
    /// `None` only inside `drop`.
    file: Option<File>,
    path: PathBuf,
    key: PathBuf,
}

impl PosixFileLock {
    fn acquire(path: &Path) -> Result<PosixFileLock> {
        let ctx = || context("lock", path);
        let key = lock_key(path).map_err(|e| Error::io(ctx(), e))?;
        // Held across open and fcntl so two threads of this process cannot race for one file.
        let mut locked = LOCKED_FILES.lock();
        if locked.contains(&key) {
            return Err(Error::io(
                ctx(),
                io::Error::new(io::ErrorKind::WouldBlock, "already held by this process"),
            ));
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| Error::io(ctx(), e))?;
        if let Err(e) = fcntl_lock(&file, libc::F_WRLCK) {
            let e = match e.raw_os_error() {
                Some(libc::EAGAIN) | Some(libc::EACCES) => io::Error::new(
                    e.kind(),
                    format!("{e}; is another process using this database?"),
                ),
                _ => e,
            };
            return Err(Error::io(ctx(), e));
        }
        locked.insert(key.clone());
        Ok(PosixFileLock {
            file: Some(file),
            path: path.to_path_buf(),
            key,
        })
    }
}

impl FileLock for PosixFileLock {
    fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for PosixFileLock {
    fn drop(&mut self) {
        let mut locked = LOCKED_FILES.lock();
        if let Some(file) = self.file.take() {
            // Closing releases the record lock anyway; unlocking first is explicit and harmless.
            let _ = fcntl_lock(&file, libc::F_UNLCK);
            // The descriptor must be closed before the key leaves the set: once it has left,
            // another thread may lock the file again, and a later close would drop that lock.
            drop(file);
        }
        locked.remove(&self.key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_without_a_kept_descriptor_opens_itself_for_each_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        std::fs::write(&path, b"hello, tables").unwrap();
        let file = PosixRandomAccessFile {
            file: None,
            path: path.clone(),
        };
        let mut buf = [0u8; 6];
        assert_eq!(file.read_at(7, &mut buf).unwrap(), 6);
        assert_eq!(&buf, b"tables");
        std::fs::remove_file(&path).unwrap();
        let err = file.read_at(0, &mut buf).unwrap_err();
        assert!(err.to_string().contains("open"), "{err}");
    }

    #[test]
    fn a_mapped_file_tells_which_pages_are_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sparse");
        // A hole of 64 MiB (4 KiB pages): none of it is in the page cache until it is read,
        // and the kernel's read-ahead (8 MiB on some machines) stays far from its end.
        let pages = 16 * 1024;
        std::fs::File::create(&path)
            .unwrap()
            .set_len(pages * page_size() as u64)
            .unwrap();
        let file = PosixEnv::new().new_random_access_file(&path).unwrap();
        assert!(file.mapped().is_some());
        let page = page_size();
        assert!(
            !file.in_memory(0, 100),
            "an untouched hole is not in memory"
        );
        let mut buf = vec![0u8; 100];
        file.read_at(0, &mut buf).unwrap();
        assert!(file.in_memory(0, 100), "a page just read is in memory");
        assert!(file.in_memory(10, 0), "nothing to read is in memory");
        // Pages far from it (past the kernel's read-ahead) are not, nor is a range from the
        // page read to one of them.
        let far = (pages - 2) * page as u64;
        assert!(!file.in_memory(far, 20));
        assert!(!file.in_memory(0, far as usize + 20));
        // Ranges past the end of the mapping cannot be told.
        assert!(!file.in_memory(pages * page as u64 - 1, 2));
        assert!(!file.in_memory(u64::MAX, 1));
    }

    #[test]
    fn permits_run_out_at_their_limit_and_come_back() {
        static POOL: Permits = Permits::new(|| 2);
        let a = POOL.take().expect("first");
        let b = POOL.take().expect("second");
        assert!(POOL.take().is_none(), "the limit is 2");
        drop(a);
        let c = POOL.take().expect("a returned permit is taken again");
        drop((b, c));
    }

    /// Kilobytes of the mapping starting at `start` resident in this process.
    pub(super) fn resident_kib(start: *const u8) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let header = format!("{:x}-", start as usize);
        let mut lines = smaps.lines().skip_while(|line| !line.starts_with(&header));
        lines.next().expect("the mapping is listed");
        let rss = lines.find(|line| line.starts_with("Rss:")).unwrap();
        rss.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    #[test]
    fn a_released_range_of_a_mapped_file_leaves_the_resident_set_and_reads_back_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("table");
        let bytes: Vec<u8> = (0..4u32 << 20).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let file = PosixEnv::new().new_random_access_file(&path).unwrap();
        let mapped = file.mapped().expect("mapped");
        let sum = |m: &[u8]| m.iter().map(|&b| u64::from(b)).sum::<u64>();
        let expected = sum(&bytes);
        assert_eq!(sum(mapped), expected);
        assert!(resident_kib(mapped.as_ptr()) >= 4 << 10);
        // From the page holding the range's start to the last page it covers whole.
        let page_kib = page_size() as u64 >> 10;
        file.release(100, (2 << 20) - 100 + 10);
        let kept = resident_kib(mapped.as_ptr());
        assert!(
            (2 << 10..(2 << 10) + page_kib).contains(&kept),
            "{kept} KiB resident"
        );
        // Ranges past the mapping release nothing and do not overflow.
        file.release(u64::MAX, 1);
        file.release(u64::MAX - 100, 50);
        file.release(8 << 20, 1 << 20);
        assert_eq!(resident_kib(mapped.as_ptr()), kept);
        file.release(0, u64::MAX);
        assert_eq!(resident_kib(mapped.as_ptr()), 0);
        assert_eq!(
            sum(mapped),
            expected,
            "the bytes read back after the release"
        );
    }

    #[test]
    fn a_mapped_file_keeps_no_descriptor() {
        /// Descriptors of this process open on `path`.
        fn descriptors_on(path: &Path) -> usize {
            std::fs::read_dir("/proc/self/fd")
                .unwrap()
                .filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
                .filter(|target| target == path)
                .count()
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        std::fs::write(&path, vec![7u8; 10_000]).unwrap();
        let files: Vec<_> = (0..20)
            .map(|_| PosixEnv::new().new_random_access_file(&path).unwrap())
            .collect();
        assert!(files.iter().all(|f| f.mapped().is_some()));
        assert_eq!(descriptors_on(&path), 0);
        let mut buf = [0u8; 4];
        assert_eq!(
            files[0].read_at(9_998, &mut buf).unwrap(),
            2,
            "a short read at the end"
        );
    }
    use std::process::Command;

    /// Runs a child Python process that tries `lockf(LOCK_EX | LOCK_NB)` (an `fcntl(F_SETLK)`
    /// write lock on Linux) on `path`; true when it got the lock.
    fn other_process_can_lock(path: &Path) -> bool {
        let script = "import fcntl, os, sys\n\
                      fd = os.open(sys.argv[1], os.O_RDWR)\n\
                      try:\n    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n\
                      except OSError:\n    sys.exit(3)\n\
                      sys.exit(0)\n";
        let status = Command::new("/usr/bin/python3")
            .arg("-c")
            .arg(script)
            .arg(path)
            .status()
            .expect("run /usr/bin/python3");
        match status.code() {
            Some(0) => true,
            Some(3) => false,
            other => panic!("lock probe failed unexpectedly: {other:?}"),
        }
    }

    #[test]
    fn lock_is_seen_by_another_process() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("LOCK");
        let env = PosixEnv::new();
        let lock = env.lock_file(&path).unwrap();
        assert!(!other_process_can_lock(&path));
        env.unlock_file(lock).unwrap();
        assert!(other_process_can_lock(&path));
    }

    #[test]
    fn lock_held_by_another_process_fails_with_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("LOCK");
        fs::write(&path, b"").unwrap();
        // The child takes the lock, reports that it has it, and holds it until stdin closes.
        let script = "import fcntl, os, sys\n\
                      fd = os.open(sys.argv[1], os.O_RDWR)\n\
                      fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n\
                      print('locked', flush=True)\n\
                      sys.stdin.read()\n";
        let mut child = Command::new("/usr/bin/python3")
            .arg("-c")
            .arg(script)
            .arg(&path)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        std::io::BufRead::read_line(&mut out, &mut line).unwrap();
        assert_eq!(line.trim(), "locked");

        let env = PosixEnv::new();
        let err = env.lock_file(&path).err().expect("lock must fail");
        assert!(matches!(err, Error::Io { .. }));
        let message = err.to_string();
        assert!(message.contains(&path.display().to_string()), "{message}");
        assert!(message.contains("another process"), "{message}");

        drop(child.stdin.take());
        assert!(child.wait().unwrap().success());
        // A failed attempt leaves nothing behind in this process: the file can be locked now.
        let lock = env.lock_file(&path).unwrap();
        env.unlock_file(lock).unwrap();
    }

    #[test]
    fn lock_through_another_name_of_the_same_file_fails() {
        let dir = tempfile::tempdir().unwrap();
        let env = PosixEnv::new();
        let lock = env.lock_file(&dir.path().join("LOCK")).unwrap();
        let other_name = dir.path().join(".").join("LOCK");
        let err = env
            .lock_file(&other_name)
            .err()
            .expect("second lock must fail");
        assert!(
            err.to_string().contains("already held by this process"),
            "{err}"
        );
        // The failed attempt must not have dropped the real lock.
        assert!(!other_process_can_lock(&dir.path().join("LOCK")));
        env.unlock_file(lock).unwrap();
    }

    #[test]
    fn dropping_a_lock_releases_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("LOCK");
        let env = PosixEnv::new();
        drop(env.lock_file(&path).unwrap());
        assert!(other_process_can_lock(&path));
        let lock = env.lock_file(&path).unwrap();
        env.unlock_file(lock).unwrap();
    }

    #[test]
    fn small_appends_stay_buffered_until_flush() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let env = PosixEnv::new();
        let mut file = env.new_writable_file(&path).unwrap();
        file.append(b"abc").unwrap();
        assert_eq!(fs::metadata(&path).unwrap().len(), 0);
        file.flush().unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"abc");
    }

    #[test]
    fn appends_crossing_the_buffer_keep_their_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let env = PosixEnv::new();
        let mut expected = Vec::new();
        {
            let mut file = env.new_writable_file(&path).unwrap();
            for (i, len) in [10, WRITE_BUFFER_SIZE - 5, 7, 3 * WRITE_BUFFER_SIZE + 1, 1]
                .into_iter()
                .enumerate()
            {
                let chunk = vec![i as u8 + 1; len];
                file.append(&chunk).unwrap();
                expected.extend_from_slice(&chunk);
            }
            // Dropped without close: the buffer is flushed.
        }
        assert_eq!(fs::read(&path).unwrap(), expected);
    }

    #[test]
    fn writer_fails_after_close() {
        let dir = tempfile::tempdir().unwrap();
        let env = PosixEnv::new();
        let mut file = env.new_writable_file(&dir.path().join("f")).unwrap();
        file.append(b"x").unwrap();
        file.close().unwrap();
        assert!(matches!(file.append(b"y"), Err(Error::Io { .. })));
        assert!(matches!(file.sync(), Err(Error::Io { .. })));
        assert!(matches!(file.close(), Err(Error::Io { .. })));
        assert_eq!(fs::read(dir.path().join("f")).unwrap(), b"x");
    }

    /// The calling thread's nice value, from `/proc` (field 19 of its `stat`).
    #[cfg(target_os = "linux")]
    fn thread_nice() -> i32 {
        let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
        let (_, after_name) = stat.rsplit_once(')').unwrap();
        after_name
            .split_whitespace()
            .nth(16)
            .unwrap()
            .parse()
            .unwrap()
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn lower_thread_priority_lowers_the_calling_thread_only() {
        let before = thread_nice();
        let (lowered, started) = std::thread::spawn(|| {
            PosixEnv::new().lower_thread_priority();
            let lowered = thread_nice();
            (lowered, std::thread::spawn(thread_nice).join().unwrap())
        })
        .join()
        .unwrap();
        assert_eq!(lowered, (before + BACKGROUND_NICE).min(19));
        assert_eq!(started, lowered, "a thread it starts inherits the priority");
        assert_eq!(thread_nice(), before);
    }

    /// The calling thread's time slice in nanoseconds, as `sched_getattr` reports it (0 from
    /// a kernel before 6.12, which has no per-thread slices).
    #[cfg(target_os = "linux")]
    fn thread_slice() -> u64 {
        // SAFETY: all-zero bytes are a valid `sched_attr` (integers only).
        let mut attr: libc::sched_attr = unsafe { std::mem::zeroed() };
        let size = std::mem::size_of::<libc::sched_attr>() as libc::c_uint;
        // SAFETY: the kernel writes at most `size` bytes into `attr` during the call.
        let done = unsafe { libc::syscall(libc::SYS_sched_getattr, 0, &mut attr, size, 0) };
        assert_eq!(done, 0, "{}", std::io::Error::last_os_error());
        attr.sched_runtime
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn set_thread_time_slice_sets_the_calling_threads_and_keeps_its_priority() {
        // SAFETY: no arguments; returns the calling thread's policy.
        let policy = || unsafe { libc::sched_getscheduler(0) };
        let before = (policy(), thread_nice(), thread_slice());
        let slice = Duration::from_micros(7250);
        let (set, lowered, started) = std::thread::spawn(move || {
            let env = PosixEnv::new();
            env.set_thread_time_slice(slice);
            let set = (policy(), thread_nice(), thread_slice());
            // A nice value lowered after it keeps the slice.
            env.lower_thread_priority();
            let lowered = (thread_nice(), thread_slice());
            let started = std::thread::spawn(move || (thread_nice(), thread_slice()));
            (set, lowered, started.join().unwrap())
        })
        .join()
        .unwrap();
        if before.2 == 0 {
            // A kernel without per-thread slices: the call must change nothing.
            assert_eq!(set, before);
            return;
        }
        let slice = slice.as_nanos() as u64;
        assert_ne!(
            before.2, slice,
            "the default slice is the one set: nothing to tell"
        );
        assert_eq!(set, (before.0, before.1, slice), "policy and nice kept");
        assert_eq!(lowered, ((before.1 + BACKGROUND_NICE).min(19), slice));
        assert_eq!(started, lowered, "a thread it starts inherits the slice");
        assert_eq!((policy(), thread_nice(), thread_slice()), before);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn set_thread_time_slice_keeps_a_batch_policy_and_a_raised_nice() {
        // SAFETY: no arguments; returns the calling thread's policy.
        let policy = || unsafe { libc::sched_getscheduler(0) };
        let default_slice = thread_slice();
        let (kept, set, reset) = std::thread::spawn(move || {
            let param = libc::sched_param { sched_priority: 0 };
            // SAFETY: the kernel reads `param` during the call only; `pid` 0 is this thread,
            // and a normal thread may switch to `SCHED_BATCH` without privilege.
            assert_eq!(
                unsafe { libc::sched_setscheduler(0, libc::SCHED_BATCH, &param) },
                0
            );
            let env = PosixEnv::new();
            env.lower_thread_priority();
            let kept = (policy(), thread_nice());
            env.set_thread_time_slice(Duration::from_micros(7250));
            let set = (policy(), thread_nice(), thread_slice());
            env.set_thread_time_slice(Duration::ZERO);
            (kept, set, thread_slice())
        })
        .join()
        .unwrap();
        assert_eq!(kept.0, libc::SCHED_BATCH);
        assert_ne!(kept.1, 0, "the tests run at nice -10: nothing to tell");
        let slice = if default_slice == 0 { 0 } else { 7_250_000 };
        assert_eq!(set, (kept.0, kept.1, slice), "policy and nice kept");
        assert_eq!(reset, default_slice, "a zero slice is the default");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn lowest_thread_priority_lowers_the_calling_thread_only() {
        // SAFETY: no arguments; returns the calling thread's policy.
        let policy = || unsafe { libc::sched_getscheduler(0) };
        let before = (policy(), thread_nice());
        let (lowered, started) = std::thread::spawn(move || {
            PosixEnv::new().lowest_thread_priority();
            let lowered = (policy(), thread_nice());
            let started = std::thread::spawn(move || (policy(), thread_nice()));
            (lowered, started.join().unwrap())
        })
        .join()
        .unwrap();
        assert_eq!(lowered, (before.0, LOWEST_NICE), "nice 19, the policy kept");
        assert_eq!(started, lowered, "a thread it starts inherits the priority");
        assert_eq!((policy(), thread_nice()), before);
        assert_ne!(
            before.1, LOWEST_NICE,
            "the tests run at nice 19: nothing to tell"
        );
    }

    #[test]
    fn now_micros_is_wall_clock() {
        let now = PosixEnv::new().now_micros();
        // After 2020-01-01 and before 2100-01-01.
        assert!(now > 1_577_836_800_000_000 && now < 4_102_444_800_000_000);
    }

    #[test]
    fn conformance() {
        let dir = tempfile::tempdir().unwrap();
        super::super::conformance::run_all(&PosixEnv::new(), dir.path());
    }
}
