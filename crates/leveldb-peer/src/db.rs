//! [`LevelDb`]: an open LevelDB database, and [`LevelDbSnapshot`], a frozen view of one.

use std::ffi::{CStr, CString};
use std::path::Path;
use std::ptr::{self, NonNull};

use libc::{c_char, c_int, size_t};

use crate::error::{path_to_cstring, ErrSlot, MallocBuf};
use crate::options::{NativeOptions, ReadOpts, WriteOpts};
use crate::{ffi, LevelDbBatch, LevelDbIter, LevelDbOptions};

/// An open LevelDB 1.23 database. Closed on drop.
///
/// `Send + Sync`: LevelDB documents its `DB` as safe to share between threads without outside
/// locking, so every method takes `&self` and threads may call them concurrently. Iterators and
/// snapshots borrow the database, so it cannot close under them.
pub struct LevelDb {
    db: NonNull<ffi::leveldb_t>,
    /// Prebuilt read options for each `(fill_cache, verify_checksums)` pair, in the order
    /// `(false, false), (true, false), (false, true), (true, true)`; reads allocate nothing.
    reads: [ReadOpts; 4],
    /// Prebuilt write options: `[no sync, sync]`.
    writes: [WriteOpts; 2],
    /// Owns the cache and filter policy LevelDB points at; dropped after `db` is closed.
    _options: NativeOptions,
}

impl LevelDb {
    /// Opens (or, with `create_if_missing`, creates) the database in directory `path`.
    pub fn open(path: impl AsRef<Path>, opts: &LevelDbOptions) -> Result<LevelDb, String> {
        let options = NativeOptions::new(opts)?;
        let name = path_to_cstring(path.as_ref())?;
        let mut err = ErrSlot::new();
        // SAFETY: `options` and `name` are live for the call; `err` is a null slot.
        let raw = unsafe { ffi::leveldb_open(options.as_ptr(), name.as_ptr(), err.as_out()) };
        err.check()?;
        let db = NonNull::new(raw).ok_or("leveldb_open returned null without an error")?;
        let reads = [
            ReadOpts::new(false, false),
            ReadOpts::new(true, false),
            ReadOpts::new(false, true),
            ReadOpts::new(true, true),
        ];
        Ok(LevelDb {
            db,
            reads,
            writes: [WriteOpts::new(false), WriteOpts::new(true)],
            _options: options,
        })
    }

    /// Sets `key` to `value`; with `sync`, the log is synced before returning.
    pub fn put(&self, key: &[u8], value: &[u8], sync: bool) -> Result<(), String> {
        let mut err = ErrSlot::new();
        // SAFETY: `db` is open; the slices are valid for their lengths during the call and
        // LevelDB copies them; `err` is a null slot.
        unsafe {
            ffi::leveldb_put(
                self.db.as_ptr(),
                self.write_opts(sync),
                key.as_ptr().cast::<c_char>(),
                key.len(),
                value.as_ptr().cast::<c_char>(),
                value.len(),
                err.as_out(),
            );
        }
        err.check()
    }

    /// Removes `key` (not an error if it is absent).
    pub fn delete(&self, key: &[u8], sync: bool) -> Result<(), String> {
        let mut err = ErrSlot::new();
        // SAFETY: as in `put`.
        unsafe {
            ffi::leveldb_delete(
                self.db.as_ptr(),
                self.write_opts(sync),
                key.as_ptr().cast::<c_char>(),
                key.len(),
                err.as_out(),
            );
        }
        err.check()
    }

    /// Applies every operation of `batch` atomically.
    pub fn write(&self, batch: &LevelDbBatch, sync: bool) -> Result<(), String> {
        let mut err = ErrSlot::new();
        // SAFETY: `db` and the batch are live. LevelDB writes the sequence number into the
        // batch's header; no other thread can touch the batch meanwhile since `LevelDbBatch`
        // is not `Sync`, and its memory is C-owned, so no Rust reference aliases the write.
        unsafe {
            ffi::leveldb_write(
                self.db.as_ptr(),
                self.write_opts(sync),
                batch.as_ptr(),
                err.as_out(),
            )
        };
        err.check()
    }

    /// The value of `key`, or `None` if absent. Fills the block cache, skips checksum checks
    /// (LevelDB's read defaults).
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, String> {
        self.get_with(key, true, false)
    }

    /// The value of `key` with explicit read flags.
    pub fn get_with(
        &self,
        key: &[u8],
        fill_cache: bool,
        verify_checksums: bool,
    ) -> Result<Option<Vec<u8>>, String> {
        let read = self.read_opts(fill_cache, verify_checksums);
        // SAFETY: `read` belongs to this open database.
        unsafe { self.get_raw(read, key) }
    }

    /// # Safety
    /// `read` is a live read options object whose snapshot, if any, belongs to this database
    /// and is unreleased.
    unsafe fn get_raw(
        &self,
        read: *const ffi::leveldb_readoptions_t,
        key: &[u8],
    ) -> Result<Option<Vec<u8>>, String> {
        let mut err = ErrSlot::new();
        let mut len: size_t = 0;
        // SAFETY: `db` is open, `read` is live (caller), the key is valid for its length during
        // the call, `err` is a null slot.
        let data = unsafe {
            ffi::leveldb_get(
                self.db.as_ptr(),
                read,
                key.as_ptr().cast::<c_char>(),
                key.len(),
                &mut len,
                err.as_out(),
            )
        };
        // SAFETY: `leveldb_get` returns null or a `malloc`ed buffer of `len` bytes, now ours.
        let value = unsafe { MallocBuf::from_raw(data, len) };
        err.check()?;
        Ok((!value.is_null()).then(|| value.as_bytes().to_vec()))
    }

    /// An iterator over the latest state, with LevelDB's default read flags. Unpositioned:
    /// call a `seek*` first.
    pub fn iter(&self) -> LevelDbIter<'_> {
        self.iter_with(true, false)
    }

    /// An iterator with explicit read flags (e.g. `fill_cache = false` for a bulk scan).
    pub fn iter_with(&self, fill_cache: bool, verify_checksums: bool) -> LevelDbIter<'_> {
        let read = self.read_opts(fill_cache, verify_checksums);
        // SAFETY: `read` belongs to this open database; the iterator borrows `self`.
        unsafe { self.iter_raw(read) }
    }

    /// # Safety
    /// As for `get_raw`; additionally the caller ties the returned lifetime to whatever keeps
    /// the snapshot alive.
    unsafe fn iter_raw<'i>(&self, read: *const ffi::leveldb_readoptions_t) -> LevelDbIter<'i> {
        // SAFETY: `db` is open and `read` live (caller). LevelDB copies the read options.
        let raw = unsafe { ffi::leveldb_create_iterator(self.db.as_ptr(), read) };
        let Some(raw) = NonNull::new(raw) else {
            panic!("leveldb_create_iterator returned null");
        };
        // SAFETY: a fresh iterator owned by no one else; lifetime per the caller's contract.
        unsafe { LevelDbIter::from_raw(raw) }
    }

    /// A consistent, frozen view of the database as of now. Released on drop.
    pub fn snapshot(&self) -> LevelDbSnapshot<'_> {
        // SAFETY: `db` is open.
        let snap = unsafe { ffi::leveldb_create_snapshot(self.db.as_ptr()) };
        assert!(!snap.is_null(), "leveldb_create_snapshot returned null");
        // SAFETY: the snapshot stays unreleased until `LevelDbSnapshot::drop`, after `read`
        // is last used.
        let read = unsafe { ReadOpts::with_snapshot(snap) };
        LevelDbSnapshot {
            db: self,
            snap,
            read,
        }
    }

    /// The value of a LevelDB property (`leveldb.stats`, `leveldb.num-files-at-level<N>`,
    /// `leveldb.sstables`, `leveldb.approximate-memory-usage`), or `None` if unknown.
    pub fn property(&self, name: &str) -> Option<String> {
        let name = CString::new(name).ok()?;
        // SAFETY: `db` is open and `name` NUL-terminated.
        let data = unsafe { ffi::leveldb_property_value(self.db.as_ptr(), name.as_ptr()) };
        // SAFETY: null or a `malloc`ed string, now ours; its length is not needed, it is read
        // as a C string below.
        let owned = unsafe { MallocBuf::from_raw(data, 0) };
        if owned.is_null() {
            return None;
        }
        // SAFETY: non-null, NUL-terminated, alive until `owned` drops at the end of the scope.
        let text = unsafe { CStr::from_ptr(data) };
        Some(text.to_string_lossy().into_owned())
    }

    /// Compacts the key range `[start, limit]` down the levels; `None` bounds are open.
    /// Blocks until done.
    pub fn compact_range(&self, start: Option<&[u8]>, limit: Option<&[u8]>) {
        let (start_ptr, start_len) = optional_key(start);
        let (limit_ptr, limit_len) = optional_key(limit);
        // SAFETY: `db` is open; each bound is null (open bound, which LevelDB's C layer turns
        // into "no bound") or a slice valid for its length during the call.
        unsafe {
            ffi::leveldb_compact_range(self.db.as_ptr(), start_ptr, start_len, limit_ptr, limit_len)
        };
    }

    /// LevelDB's estimate of the file bytes used by each `[start, end)` range.
    ///
    /// Panics if there are more than `i32::MAX` ranges.
    pub fn approximate_sizes(&self, ranges: &[(&[u8], &[u8])]) -> Vec<u64> {
        let count = c_int::try_from(ranges.len())
            .unwrap_or_else(|_| panic!("too many ranges: {}", ranges.len()));
        let starts: Vec<*const c_char> = ranges
            .iter()
            .map(|(s, _)| s.as_ptr().cast::<c_char>())
            .collect();
        let start_lens: Vec<size_t> = ranges.iter().map(|(s, _)| s.len()).collect();
        let limits: Vec<*const c_char> = ranges
            .iter()
            .map(|(_, l)| l.as_ptr().cast::<c_char>())
            .collect();
        let limit_lens: Vec<size_t> = ranges.iter().map(|(_, l)| l.len()).collect();
        let mut sizes = vec![0u64; ranges.len()];
        // SAFETY: `db` is open; all five arrays hold exactly `count` elements; every key pointer
        // is valid for its length during the call (borrowed from `ranges`).
        unsafe {
            ffi::leveldb_approximate_sizes(
                self.db.as_ptr(),
                count,
                starts.as_ptr(),
                start_lens.as_ptr(),
                limits.as_ptr(),
                limit_lens.as_ptr(),
                sizes.as_mut_ptr(),
            );
        }
        sizes
    }

    fn read_opts(
        &self,
        fill_cache: bool,
        verify_checksums: bool,
    ) -> *const ffi::leveldb_readoptions_t {
        let [plain, fill, verify, both] = &self.reads;
        let chosen = match (fill_cache, verify_checksums) {
            (false, false) => plain,
            (true, false) => fill,
            (false, true) => verify,
            (true, true) => both,
        };
        chosen.as_ptr()
    }

    fn write_opts(&self, sync: bool) -> *const ffi::leveldb_writeoptions_t {
        let [no_sync, with_sync] = &self.writes;
        if sync {
            with_sync.as_ptr()
        } else {
            no_sync.as_ptr()
        }
    }
}

fn optional_key(key: Option<&[u8]>) -> (*const c_char, size_t) {
    key.map_or((ptr::null(), 0), |k| (k.as_ptr().cast::<c_char>(), k.len()))
}

impl Drop for LevelDb {
    fn drop(&mut self) {
        // SAFETY: `db` is open and closed exactly once; no iterator or snapshot is alive since
        // they borrow `self`. The option handles are dropped after this, once LevelDB is done
        // with the cache and filter policy.
        unsafe { ffi::leveldb_close(self.db.as_ptr()) };
    }
}

// SAFETY: LevelDB's `DB` may be used from any thread and shared by concurrent threads without
// external synchronization (LevelDB's documented contract); the prebuilt options are only read.
unsafe impl Send for LevelDb {}
// SAFETY: as above.
unsafe impl Sync for LevelDb {}

/// A frozen view of a [`LevelDb`]: reads see the state at the moment it was taken.
/// Released on drop; borrows the database. `Send + Sync` like the database.
pub struct LevelDbSnapshot<'db> {
    db: &'db LevelDb,
    snap: *const ffi::leveldb_snapshot_t,
    /// Read options pinned to `snap`.
    read: ReadOpts,
}

impl LevelDbSnapshot<'_> {
    /// The value of `key` as of the snapshot.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, String> {
        // SAFETY: `read` pins `snap`, which belongs to `db` and is unreleased while `self` lives.
        unsafe { self.db.get_raw(self.read.as_ptr(), key) }
    }

    /// An iterator over the snapshot. Unpositioned: call a `seek*` first.
    pub fn iter(&self) -> LevelDbIter<'_> {
        // SAFETY: as in `get`; the iterator borrows `self`, so the snapshot outlives it.
        unsafe { self.db.iter_raw(self.read.as_ptr()) }
    }
}

impl Drop for LevelDbSnapshot<'_> {
    fn drop(&mut self) {
        // SAFETY: `snap` was created on this open database and is released once; no iterator
        // on it is alive since they borrow `self`.
        unsafe { ffi::leveldb_release_snapshot(self.db.db.as_ptr(), self.snap) };
    }
}

// SAFETY: a LevelDB snapshot is an immutable sequence-number marker that any thread may read
// through or release; the database itself is `Sync`.
unsafe impl Send for LevelDbSnapshot<'_> {}
// SAFETY: as above.
unsafe impl Sync for LevelDbSnapshot<'_> {}
