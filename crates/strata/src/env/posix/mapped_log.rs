//! The write-ahead log written through a shared memory map ([`PosixEnv::new_log_file`]): an
//! append is a copy into the page cache, without a system call.
//!
//! # Layout of the file while it is written
//!
//! The file grows one log block (32 KiB, `log/mod.rs`; the log writer says how much of the
//! block is left) at a time, with `ftruncate`, over space reserved ahead of its end with
//! `fallocate(FALLOC_FL_KEEP_SIZE)` [`RESERVE_AHEAD`] bytes at a time (so a full disk is an
//! error at the append that needs the block, never a `SIGBUS` at a store), and is mapped in
//! windows of [`WINDOW`] bytes, each holding the whole block being written. Its size is the
//! written length (after a write past the end, below) or the end of the block holding it: the
//! zeros after the written bytes never reach past the current block. `close` (or drop) cuts
//! the file to the written length, which also frees the space reserved beyond it, so a
//! database closed cleanly leaves exactly the bytes a plain writer (and LevelDB) would. A
//! killed process leaves the reserved space allocated past the file's end, invisible to
//! readers, until the log is deleted.
//!
//! Reserving a block at a time cost one `fallocate` per block, 4-5 µs alone and tens of µs
//! beside a flush (the file system's journal). With one per [`RESERVE_AHEAD`] instead, 10M
//! writes took 0.42-0.43 µs each in `fillseq` against 0.49, and 1.41-1.46 in `fillrandom`
//! against 1.49-1.51 (two runs of each, this machine).
//!
//! # Page faults
//!
//! A store into a page not yet in the page cache faults, and the kernel's default for a
//! mapped file is to read ahead around the fault: on this machine's ext4 (kernel 6.18) the
//! first store into a freshly grown block took about 68 µs to read ahead its zeros, the
//! block's other pages 2 µs each, where faulting the eight pages one by one takes about 3.6 µs
//! each (a probe that grows a file a block at a time and stores a byte per page). So each
//! window is advised `MADV_RANDOM`, which turns readahead off for it: one append in about 30
//! pays a few µs, instead of one in about 250 paying 70 (which was `fillseq`'s p99.9).
//!
//! # What a process crash can leave: the publication protocol
//!
//! A killed process leaves every store it made in the page cache, and the next reader (Strata
//! or LevelDB 1.23, with or without paranoid checks) must find either a whole record or the
//! log's clean end where each record goes. [`WritableFile::append_record`] receives the bytes
//! of one whole record (its fragments, after any trailer of the block before); of them, the
//! part that fits in the current block (the reserved zeros) is written through the map, the
//! rest past the end of the file with `pwrite`:
//! 1. When the file ends at the write position, it is grown to the end of the block holding
//!    that position, over reserved space: the file then ends in zeros, which both readers take
//!    for the end of the log.
//! 2. The in-block part is copied into the zeros *except its first 8 bytes* (a record header
//!    and the byte after it): the header stays zero, and a zero header is where both readers
//!    stop, whatever part of the copy was done and in whatever order — LevelDB skips the rest
//!    of the block and meets the end of the file, since the file ends with the block;
//!    Strata's write-ahead log reader takes it for the end (`log/reader.rs`).
//! 3. The header is published by one 8-byte store (one instruction, [`store_word`]): the
//!    header and the payload byte after it, or, when fewer than 8 bytes are left in the block,
//!    the 8 bytes ending at the block's end. The word's other bytes are rewritten with the
//!    value they hold already. A kill lands between two instructions, so it leaves the header
//!    all zero or all written, never torn, and a written header after its whole payload.
//! 4. What did not fit in the block (a record's later fragments, or a record after a short
//!    block trailer) is written with `pwrite` *past the end of the file*, which grows as the
//!    kernel copies: a kill during it leaves the file cut inside those bytes, a torn tail both
//!    readers take for the end of the log. The file is not grown past them until the next
//!    `append_record`, so a published first fragment is never followed by zeros.
//!
//! [`WritableFile::append`] (the pieces of a record too large to stage whole) does the same
//! without step 1, so zeros never follow a part of a record either.
//!
//! A power loss is different: the kernel writes unsynced pages back in any order, so zeros or
//! a torn record may precede records written later. Only synced bytes are promised (`sync` is
//! `fdatasync`), and after a gap or damage recovery replays only batches that continue the
//! sequence numbers exactly (`db/log_continuity.rs`), so it replays a prefix of the writes.
//!
//! # Where a store could fail
//!
//! A store into a map cannot return an error: where `write` would fail, it raises `SIGBUS`.
//! Space is reserved before any store (above), so a full disk is an append's error (a disk
//! with room for the block but not for the stretch ahead still takes the block). A file
//! system where that reservation means nothing — one without `fallocate`, or a copy-on-write
//! one (btrfs, ZFS, bcachefs), where overwriting needs new space — gets no mapped log: the
//! log is appended with `write` there ([`MappedLogFile::new`] gives the file back). Left: a
//! file system that shuts itself down after an I/O error (ext4 `errors=remount-ro`) may refuse
//! a store into a page written back since its last store — as it would the `write`.
//!
//! # Sync
//!
//! `fdatasync` of the file. `msync(MS_SYNC)` over the dirty range would reach the same kernel
//! operation (on Linux it is `vfs_fsync_range` with `datasync` set), over the same dirty pages:
//! it adds nothing. Either makes durable the metadata needed to read the synced bytes back —
//! the file size that `ftruncate` or `pwrite` set and the blocks allocated — so no
//! separate `fsync` is needed when the file grew.
//!
//! [`PosixEnv::new_log_file`]: super::PosixEnv

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use memmap2::{Advice, MmapMut, MmapOptions};

use super::context;
use crate::env::WritableFile;
use crate::error::{Error, Result};

#[cfg(any(test, feature = "testing"))]
pub(crate) mod crash_points;

/// Without the `testing` feature every step of a write runs.
#[cfg(not(any(test, feature = "testing")))]
mod crash_points {
    pub(super) fn step() -> bool {
        true
    }

    pub(super) fn alive() -> bool {
        true
    }

    pub(super) fn pwrite_prefix(_offset: u64, data: &[u8]) -> &[u8] {
        data
    }

    pub(super) fn copy_torn(_target: &mut [u8], _source: &[u8]) {}

    pub(super) fn refuse_reservation() -> Option<std::io::Error> {
        None
    }

    pub(super) fn reserve_ahead(
        from: u64,
        to: u64,
        reserve: impl FnOnce(u64, u64) -> std::io::Result<u64>,
    ) -> std::io::Result<u64> {
        reserve(from, to)
    }
}

/// Bytes mapped at a time: far more than a log block.
pub(crate) const WINDOW: u64 = 1 << 20;

/// Bytes of space reserved past the file's end at a time: a multiple of a log block.
const RESERVE_AHEAD: u64 = 1 << 20;

/// Alignment of a window's file offset: a multiple of every page size.
const WINDOW_ALIGN: u64 = 64 << 10;

/// Bytes of the store that publishes a header (a header is 7).
const WORD: usize = 8;

/// See the module documentation.
///
/// Thread safety: owned by one `LogWriter`; `&mut self` serialises every call.
/// Invariant: `len <= size`, and `size` is `len` or the end of the log block holding `len`.
pub(super) struct MappedLogFile {
    /// `None` once closed.
    file: Option<File>,
    path: PathBuf,
    /// The window being written and its file offset.
    map: Option<(MmapMut, u64)>,
    /// Bytes written.
    len: u64,
    /// The file's size.
    size: u64,
    /// The space reserved for the file.
    reservation: Reservation,
}

/// The space reserved for a log file: to `end` (past the file's size when reserved ahead),
/// [`RESERVE_AHEAD`] bytes at a time while `ahead`, until a disk too full for that makes the
/// log reserve block by block.
#[derive(Clone, Copy)]
struct Reservation {
    end: u64,
    ahead: bool,
}

impl MappedLogFile {
    /// A writer for `file`, which must be empty and open for reading and writing. Gives the file
    /// back when its file system cannot promise that stores into the map find space (see
    /// [`reservable`]) or cannot map it: the caller then appends with `write`, which reports
    /// what a store into a map could only meet with a `SIGBUS`.
    pub(super) fn new(file: File, path: &Path) -> std::result::Result<MappedLogFile, File> {
        if !reservable(&file) {
            return Err(file);
        }
        match map_window(&file, 0) {
            Ok(map) => Ok(MappedLogFile {
                file: Some(file),
                path: path.to_path_buf(),
                map: Some((map, 0)),
                len: 0,
                size: 0,
                reservation: Reservation {
                    end: 0,
                    ahead: true,
                },
            }),
            Err(_) => Err(file),
        }
    }

    fn open_file(&self, op: &str) -> Result<&File> {
        self.file
            .as_ref()
            .ok_or_else(|| Error::io(context(op, &self.path), io::Error::other("file is closed")))
    }

    /// A mapped window holding the file's bytes `start..end` (mapping one if needed; `end -
    /// start` is far below a window), and the window's file offset.
    fn window(&mut self, start: u64, end: u64) -> Result<(&mut MmapMut, u64)> {
        let covered = self
            .map
            .as_ref()
            .is_some_and(|(_, at)| *at <= start && end <= *at + WINDOW);
        if !covered {
            self.map = None;
            let at = start - start % WINDOW_ALIGN;
            let map = map_window(self.open_file("map")?, at)
                .map_err(|e| Error::io(context("map", &self.path), e))?;
            self.map = Some((map, at));
        }
        match self.map.as_mut() {
            Some((map, at)) => Ok((map, *at)),
            None => Err(Error::io(
                context("map", &self.path),
                io::Error::other("no window mapped"),
            )),
        }
    }

    /// Step 1: grows the file to the end of the block holding the write position, `block_left`
    /// bytes on, over space reserved first (see the module documentation). Called only when the
    /// file ends at the write position (`size == len`).
    fn reserve_block(&mut self, block_left: usize) -> Result<()> {
        let end = self.len + block_left as u64;
        if !crash_points::step() || end == self.len {
            return Ok(());
        }
        let file = self.open_file("reserve space in")?;
        let fail = |e| Error::io(context("reserve space in", &self.path), e);
        let mut reservation = self.reservation;
        reservation.cover(file, self.len, end).map_err(fail)?;
        // Grows the file (`end` is past `len`): a same-size `ftruncate` would free the space
        // reserved past the end.
        file.set_len(end).map_err(fail)?;
        self.reservation = reservation;
        self.size = end;
        Ok(())
    }

    /// Steps 2 and 3: writes `data`, which fits in the reserved bytes, through the map, its
    /// first 8 bytes (a record header and the byte after it) last.
    fn write_mapped(&mut self, data: &[u8]) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        let (offset, block_end) = (self.len, self.size);
        // The publishing word: from `offset`, or ending at the block's end if that is nearer.
        let word_start = offset.min(block_end.saturating_sub(WORD as u64));
        let (map, map_start) = self.window(word_start, block_end)?;
        // Inside the window: `window` covers `word_start..block_end`.
        let at = (offset - map_start) as usize;
        let word_at = (word_start - map_start) as usize;
        let head = data.len().min(WORD);
        if let (Some(target), Some(payload)) =
            (map.get_mut(at + head..at + data.len()), data.get(head..))
        {
            if !crash_points::step() {
                crash_points::copy_torn(target, payload);
                return Ok(());
            }
            target.copy_from_slice(payload);
        }
        if !crash_points::step() {
            return Ok(());
        }
        let Some(word) = map.get_mut(word_at..word_at + WORD) else {
            return Err(Error::io(
                context("append to", &self.path),
                io::Error::other("record outside the mapped window"),
            ));
        };
        let mut value = [0u8; WORD];
        value.copy_from_slice(word);
        value[at - word_at..at - word_at + head].copy_from_slice(&data[..head]);
        store_word(word, value);
        self.len += data.len() as u64;
        Ok(())
    }

    /// Step 4: writes `data` past the end of the file.
    fn write_past_end(&mut self, data: &[u8]) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        debug_assert!(self.len == self.size || !crash_points::alive());
        let data = crash_points::pwrite_prefix(self.len, data);
        let file = self.open_file("append to")?;
        file.write_all_at(data, self.len)
            .map_err(|e| Error::io(context("append to", &self.path), e))?;
        self.len += data.len() as u64;
        self.size = self.len;
        Ok(())
    }

    /// Writes `data`, reserving the `block_left` bytes to the end of the block first when
    /// given and nothing is reserved.
    fn write(&mut self, data: &[u8], block_left: Option<usize>) -> Result<()> {
        self.open_file("append to")?;
        if let Some(block_left) = block_left.filter(|_| self.size == self.len) {
            self.reserve_block(block_left)?;
        }
        // `size - len` is below a block.
        let room = (self.size - self.len) as usize;
        let (mapped, past_end) = data.split_at(data.len().min(room));
        self.write_mapped(mapped)?;
        self.write_past_end(past_end)
    }

    /// Unmaps the window and cuts the file to its written length.
    fn finish(&mut self) -> Result<()> {
        self.map = None;
        if !crash_points::alive() {
            return Ok(());
        }
        let file = self.open_file("close")?;
        file.set_len(self.len)
            .map_err(|e| Error::io(context("truncate", &self.path), e))
    }
}

/// `f_type` of the copy-on-write file systems (`statfs(2)`): btrfs, ZFS, bcachefs. There an
/// overwrite of allocated blocks needs new ones (btrfs: once the extent is shared with a
/// snapshot), so reserved space does not keep a store from failing — with a `SIGBUS`.
const COPY_ON_WRITE_FILE_SYSTEMS: [i64; 3] = [0x9123_683e, 0x2fc1_2fc1, 0xca45_1a4e];

/// Whether stores into a map of `file` can be given space first: its file system is not
/// copy-on-write and has `fallocate(2)` (the system call, not glibc's `posix_fallocate`, which
/// writes zeros where it is missing: that reserves nothing a later store can count on).
/// Probed once per log, reserving its first block without growing it.
fn reservable(file: &File) -> bool {
    // SAFETY: `statfs` is plain data, for which all zeros is a valid value.
    let mut stats: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: the descriptor is open while `file` is borrowed; `stats` is writable.
    if unsafe { libc::fstatfs(file.as_raw_fd(), &mut stats) } != 0 {
        return false;
    }
    #[allow(clippy::unnecessary_cast)] // `f_type`'s integer type differs between targets
    let fs_type = stats.f_type as i64;
    let probe =
        crash_points::refuse_reservation().map_or_else(|| reserve(file, 0, 1).map(drop), Err);
    mappable(fs_type, probe)
}

/// The decision [`reservable`] takes, given the file system's type and the probe's outcome.
fn mappable(fs_type: i64, probe: io::Result<()>) -> bool {
    probe.is_ok() && !COPY_ON_WRITE_FILE_SYSTEMS.contains(&fs_type)
}

impl Reservation {
    /// Reserves space for `file`, which ends at `len`, to `end` at least: up to the next
    /// multiple of [`RESERVE_AHEAD`] while `ahead`, else to `end`. A disk too full for the
    /// stretch ahead may still hold the block: the space the failed call allocated past the
    /// file's end (ext4 keeps it) is given back, and the log reserves block by block from then
    /// on, so a nearly full disk loses no more than a block to it.
    fn cover(&mut self, file: &File, len: u64, end: u64) -> io::Result<()> {
        if end <= self.end {
            return Ok(());
        }
        let from = self.end.max(len);
        self.end = if self.ahead {
            let stretch = end.next_multiple_of(RESERVE_AHEAD);
            crash_points::reserve_ahead(from, stretch, |from, to| reserve(file, from, to)).or_else(
                |_| {
                    file.set_len(len)?;
                    self.ahead = false;
                    reserve(file, len, end)
                },
            )?
        } else {
            reserve(file, from, end)?
        };
        Ok(())
    }
}

/// Reserves the bytes `from..to` of `file` (`fallocate(2)` keeping its size), and returns `to`.
fn reserve(file: &File, from: u64, to: u64) -> io::Result<u64> {
    let (Ok(start), Ok(len)) = (i64::try_from(from), i64::try_from(to - from)) else {
        return Err(io::Error::other("file too large"));
    };
    // SAFETY: the descriptor is open while `file` is borrowed; the call takes integers.
    let rc = unsafe { libc::fallocate(file.as_raw_fd(), libc::FALLOC_FL_KEEP_SIZE, start, len) };
    if rc == 0 {
        Ok(to)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Maps the [`WINDOW`] bytes of `file` from offset `start` (a multiple of [`WINDOW_ALIGN`]),
/// shared and writable, past the end of the file too (only a store there would fault), and
/// advised against readahead (see the module documentation).
fn map_window(file: &File, start: u64) -> io::Result<MmapMut> {
    // SAFETY: the mapping is shared with the file, and only the `MappedLogFile` owning it
    // changes the file while it is mapped: it stores only to bytes inside the file (reserved by
    // `reserve_block` first), and the file never shrinks below a mapped byte in use (`finish`,
    // the only truncation, drops the mapping first). Readers of the log read it through the
    // file, never through this mapping.
    let map = unsafe {
        MmapOptions::new()
            .offset(start)
            .len(WINDOW as usize)
            .map_mut(file)?
    };
    // Advice only: where the kernel refuses it, faults read ahead as by default.
    let _ = map.advise(Advice::Random);
    Ok(map)
}

impl WritableFile for MappedLogFile {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.write(data, None)
    }

    fn append_record(&mut self, data: &[u8], block_left: usize) -> Result<()> {
        self.write(data, Some(block_left))
    }

    fn flush(&mut self) -> Result<()> {
        // Stores into a shared map and `pwrite`s are in the page cache already.
        self.open_file("flush").map(|_| ())
    }

    fn sync(&mut self) -> Result<()> {
        let file = self.open_file("sync")?;
        if !crash_points::alive() {
            return Ok(());
        }
        file.sync_data()
            .map_err(|e| Error::io(context("sync", &self.path), e))
    }

    fn close(&mut self) -> Result<()> {
        let result = self.finish();
        self.file = None;
        result
    }
}

impl Drop for MappedLogFile {
    fn drop(&mut self) {
        if self.file.is_some() {
            let _ = self.finish();
        }
    }
}

/// Stores the 8 bytes `value` into `word` with a single store instruction, after every earlier
/// store of this thread: a process killed at any instant (signals are taken between
/// instructions) leaves the old 8 bytes or the new ones, never a mix, and never the new ones
/// without what was stored before. The `asm!` block is a compiler barrier (it may touch
/// memory), and the fence orders the earlier stores before it for other processors too (a
/// reader of the file on another core sees no header before its payload).
fn store_word(word: &mut [u8], value: [u8; WORD]) {
    debug_assert_eq!(word.len(), WORD);
    let value = u64::from_ne_bytes(value);
    let ptr = word.as_mut_ptr();
    std::sync::atomic::fence(std::sync::atomic::Ordering::Release);
    // SAFETY: `ptr` points to `WORD` writable bytes borrowed mutably (`word`); both
    // instructions accept any alignment for normal memory. One instruction, so the 8 bytes
    // are written all or not at all as far as a signal (and so a kill) can observe.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        std::arch::asm!(
            "mov qword ptr [{ptr}], {value}",
            ptr = in(reg) ptr,
            value = in(reg) value,
            options(nostack, preserves_flags),
        );
    }
    // SAFETY: as above.
    #[cfg(target_arch = "aarch64")]
    unsafe {
        std::arch::asm!(
            "str {value}, [{ptr}]",
            ptr = in(reg) ptr,
            value = in(reg) value,
            options(nostack, preserves_flags),
        );
    }
}

#[cfg(test)]
mod tests;
