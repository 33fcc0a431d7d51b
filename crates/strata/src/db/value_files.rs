//! The database's side of value separation (format extension `value-separation`,
//! docs/design.md section 4.4): which values go to value files, keeping each pointer from
//! becoming durable before its value, and resolving pointers for reads.
//!
//! Order of writes: [`separate`] appends a batch's large values (to the files of
//! `Lane::Writes`) before the batch (holding pointers in their place) is queued for the log;
//! [`sync`] of that lane runs before every log sync and before a flush records its table, so a
//! durable pointer always names a durable value; recovery checks every replayed pointer
//! ([`check_replayed`]) and syncs the files it read. Garbage collection relocates values to the
//! files of `Lane::Relocations` and syncs that lane before a compaction installs its tables
//! (`value_gc::Relocation`): relocated pointers only ever reach tables.
//!
//! Deleting value files ([`delete_unreferenced`]): a value file is deleted only when no entry
//! of any live super version — the current one, and every older one an iterator, a read or a
//! snapshot still holds — points into it (every entry, hidden versions included, is looked
//! at), and no write is appending to it or has appended to it without its pointers being in a
//! memtable yet. The order of the checks makes that sound without holding a lock throughout:
//! 1. Under both lanes' writer locks: the value files in the directory, less those in use. A
//!    file created later is not listed; a listed file not in use is never appended to again
//!    (only each lane's current file is, and a lane starts files in number order).
//! 2. Under the state mutex: the live super versions. A pointer into a listed file that is in
//!    no memtable or table of theirs cannot appear later: writes since step 1 point into newer
//!    files, and flushes and compactions only copy pointers from those memtables and tables.
//! 3. Without locks: the pointers of those memtables (which only grow) and tables (read once
//!    each and remembered: tables never change), and the deletions.
//!
//! Locks: a lane's writer ([`ValueLane`]) is never taken with the state mutex held, and the
//! state mutex never while holding one (a writer allocates a file number first, then takes the
//! writer), since the log's mutex is taken under the state mutex and the writes' writer under
//! the log's. When both writers are held, the relocations' is taken first: a relocation holds it
//! through its sync, and the writes' held meanwhile would stop every write's append. [`sync`]
//! may wait (on the lane's `retired_synced`, under the log's mutex when a synced write calls
//! it) for a thread syncing retired value files: between taking them and reporting them
//! synced, that thread takes no lock but that writer's.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use parking_lot::{Condvar, Mutex, MutexGuard};

use super::value_gc::{self, Listing, Needed, Refs};
use super::{DbInner, SuperVersion};
use crate::env::Env;
use crate::error::{Error, Result};
use crate::filename::{parse_own_file_name, value_file_name, FileType};
use crate::iter::merging::merging_iterator;
use crate::iter::InternalIterator;
use crate::snapshot::hidden_by_newer;
use crate::table::format::CompressionType;
use crate::table::BlockReads;
use crate::util::entry::Stored;
use crate::util::internal_key::{parse_internal_key, ParsedInternalKey, ValueType};
use crate::vlog::reader::ValueFiles;
use crate::vlog::writer::{Handoff, ValueFileWriter};
use crate::vlog::{Lane, StoredValue, ValuePointer};
use crate::write_batch::{BatchOp, WriteBatch};

/// The value files one lane (`vlog::Lane`) appends to: its writer, locked by one append or
/// sync at a time, and the condition variable signalled (with that lock) when retired files
/// of the lane handed out to be synced are ([`sync`]).
pub(crate) struct ValueLane {
    writer: Mutex<ValueFileWriter>,
    retired_synced: Condvar,
}

impl ValueLane {
    /// `lane`'s files, cut at `file_size` bytes. The relocations' writer batches its appends
    /// and starts writeback as its files grow (`Handoff::Batched`, `vlog/writer.rs`): nothing
    /// reads a relocated value before the compaction that copied it syncs it and installs its
    /// tables, and writes waiting for garbage collection wait for that compaction. In `strata
    /// bench`'s 8 KiB `leveledmix`, a `write` per relocated value took a fifth of the
    /// compacting thread's time, and the sync took 7-12 ms without writeback, 3-5 with it. The
    /// writes' values are read as soon as their pointers are in the memtable, and they are
    /// appended on the writing thread, where a writeback request cost a put about 300 µs every
    /// MiB (the mix's p99.9 went from about 110 µs to 300).
    pub(crate) fn new(lane: Lane, file_size: u64) -> ValueLane {
        let handoff = match lane {
            Lane::Writes => Handoff::Immediate,
            Lane::Relocations => Handoff::Batched,
        };
        ValueLane {
            writer: Mutex::new(ValueFileWriter::new(file_size, handoff)),
            retired_synced: Condvar::new(),
        }
    }
}

/// A write's appends to a value file: the file stays in use (never deleted) until this is
/// dropped, once the write's pointers are in a memtable or the write failed.
pub(super) struct PendingValues<'a> {
    db: &'a DbInner,
    file: u64,
    /// Record bytes appended.
    bytes: u64,
}

impl Drop for PendingValues<'_> {
    fn drop(&mut self) {
        done(self.db, Lane::Writes, &[(self.file, self.bytes)]);
    }
}

/// Reports appends (value file, record bytes) to `lane`'s files done: their pointers reached a
/// memtable or a table, or never will. When one was the last pending in a file collection
/// wants (`ValueFileWriter::want_when_done`), the plan is redone: writes may have stopped, and
/// no flush or compaction would redo it (a small database rested at 2.6x).
pub(super) fn done(db: &DbInner, lane: Lane, appends: &[(u64, u64)]) {
    let mut wanted = false;
    {
        let mut writer = db.value_lane(lane).writer.lock();
        for &(file, bytes) in appends {
            wanted |= writer.done(file, bytes);
        }
    }
    if wanted {
        db.state.lock().value_gc.sweep = true;
        db.bg_work.notify_all();
    }
}

/// `batch` with its large values (per `Options::value_separation`) appended to the current
/// value file, compressed per its `compression` (before the writer's lock is taken), and
/// replaced by pointers; `None` when nothing is separated. The records' bytes count toward
/// the limit on separated values of the memtable the pointers go into
/// (`MemTable::separated_bytes`).
pub(super) fn separate<'a>(
    db: &'a DbInner,
    batch: &WriteBatch,
) -> Result<Option<(WriteBatch, PendingValues<'a>)>> {
    let Some(separation) = db.options.value_separation else {
        return Ok(None);
    };
    let mut pending = None;
    let separated = batch.with_separated_values(separation.min_value_size, |large| {
        let compressed: Vec<Option<Vec<u8>>> = large
            .iter()
            .map(|(_, value)| compress(separation.compression, value))
            .collect();
        let stored: Vec<(&[u8], StoredValue<'_>)> = large
            .iter()
            .zip(&compressed)
            .map(|(&(key, value), compressed)| {
                let stored = match compressed {
                    Some(bytes) => StoredValue {
                        bytes,
                        raw_len: Some(value.len() as u32),
                    },
                    None => StoredValue::raw(value),
                };
                (key, stored)
            })
            .collect();
        let pointers = append(db, Lane::Writes, &stored)?;
        let bytes: u64 = pointers
            .iter()
            .zip(large)
            .map(|(p, (key, _))| p.record_size(key.len()))
            .sum();
        pending = pointers.first().map(|p| PendingValues {
            db,
            file: p.file,
            bytes,
        });
        Ok(pointers.iter().map(|p| p.encode()).collect())
    })?;
    Ok(separated.zip(pending))
}

thread_local! {
    /// Each writing thread's Snappy encoder: its hash table is allocated once, not for every
    /// value (about 0.5 µs of the 3.6 an 8 KiB value took to compress).
    static ENCODER: RefCell<snap::raw::Encoder> = RefCell::new(snap::raw::Encoder::new());
}

/// `value` Snappy-compressed when `compression` asks for it and that saves at least 1/8 of it
/// (as table blocks are); `None` to store it as it is.
fn compress(compression: CompressionType, value: &[u8]) -> Option<Vec<u8>> {
    if compression != CompressionType::Snappy {
        return None;
    }
    // A fresh encoder where the thread's is gone (a write from a thread-local destructor that
    // runs after the encoder's) or in use.
    let fresh = || snap::raw::Encoder::new().compress_vec(value);
    let compressed = ENCODER
        .try_with(|encoder| match encoder.try_borrow_mut() {
            Ok(mut encoder) => encoder.compress_vec(value),
            Err(_) => fresh(),
        })
        .unwrap_or_else(|_| fresh())
        .ok()?;
    (compressed.len() < value.len() - value.len() / 8).then_some(compressed)
}

/// Appends one record per `(key, value)` to `lane`'s current value file (starting one when
/// needed) with one write, and returns their pointers in order. The file stays in use until
/// the caller reports the append done ([`done`]).
///
/// A failed append or sync leaves the file's tail unknown, and the writer failing every later
/// append: it becomes the background error, so every later write fails too, as after a failed
/// log write (a write of small values only would not meet the writer). A file that could not
/// be created leaves nothing behind: the next write tries again.
pub(super) fn append(
    db: &DbInner,
    lane: Lane,
    entries: &[(&[u8], StoredValue<'_>)],
) -> Result<Vec<ValuePointer>> {
    let appended = append_to_current(db, lane, entries);
    if let Err(e) = &appended {
        let failed = db.value_lane(lane).writer.lock().has_failed();
        if failed {
            db.state.lock().bg_error.get_or_insert_with(|| e.clone());
            db.bg_done.notify_all();
        }
    }
    appended
}

/// [`append`]'s work.
fn append_to_current(
    db: &DbInner,
    lane: Lane,
    entries: &[(&[u8], StoredValue<'_>)],
) -> Result<Vec<ValuePointer>> {
    let writer = &db.value_lane(lane).writer;
    loop {
        {
            let mut writer = writer.lock();
            if !writer.needs_file() {
                let (pointers, written) = writer.append(entries.iter().copied())?;
                db.value_bytes_appended
                    .fetch_add(written, Ordering::Release);
                return Ok(pointers);
            }
        }
        // A number allocated here and not used (another writer started a file meanwhile)
        // is simply skipped.
        let number = db.state.lock().versions.new_file_number();
        let mut writer = writer.lock();
        if writer.needs_file() {
            writer.start(&*db.env, &db.dir, number)?;
            db.value_files.appending(lane, number, writer.file_size());
        }
    }
}

/// Makes every value appended to `lane`'s files so far durable: the retired files (those the
/// next file replaced: `vlog/writer.rs`) up to the file current now, synced without the
/// writer's lock so that appends go on meanwhile, and then that file. Retired files another
/// thread is syncing are waited for: they may hold values appended before this call. A panic
/// while syncing them (an env's) is reported as their failure, so no sync waits for them for
/// ever.
pub(super) fn sync(db: &DbInner, lane: Lane) -> Result<()> {
    let ValueLane {
        writer,
        retired_synced,
    } = db.value_lane(lane);
    let mut writer = writer.lock();
    let up_to = writer.current().map_or(u64::MAX, |(number, _)| number);
    loop {
        if let Some(retired) = writer.take_retired(up_to)? {
            let numbers = retired.numbers();
            let synced = MutexGuard::unlocked(&mut writer, || {
                super::panics::panics_as_errors("syncing replaced value files", || {
                    retired.sync(&*db.env, &db.dir)
                })
            });
            writer.retired_synced(&numbers, &synced);
            retired_synced.notify_all();
            synced?;
        } else if writer.retired_syncing(up_to) {
            retired_synced.wait(&mut writer);
        } else {
            return writer.sync_current(&*db.env, &db.dir, up_to);
        }
    }
}

/// The user's value from what a point read found: borrowed as found, or read from its value
/// file.
#[inline]
pub(super) fn resolve<'a>(db: &DbInner, key: &[u8], stored: Stored<'a>) -> Result<Cow<'a, [u8]>> {
    match stored {
        Stored::Value(value) => Ok(value),
        Stored::Pointer(pointer) => db.value_files.read(key, &pointer).map(Cow::Owned),
    }
}

/// The length of the user's value from what a point read found, without reading a value
/// file.
pub(super) fn stored_len(key: &[u8], stored: &Stored) -> Result<u64> {
    match stored {
        Stored::Value(value) => Ok(value.len() as u64),
        Stored::Pointer(pointer) => pointer_len(key, pointer),
    }
}

/// The value length a pointer (of the entry of `key`) records.
pub(super) fn pointer_len(key: &[u8], pointer: &[u8]) -> Result<u64> {
    ValuePointer::decode(pointer)
        .map(|p| u64::from(p.length))
        .ok_or_else(|| ValuePointer::malformed(key, pointer))
}

/// Checks that every pointer of a batch read back from a log names its value, and syncs each
/// value file the first time it is met (`synced` holds those done): the replayed pointers
/// may reach a table, their values must be durable first. A pointer whose value is missing
/// or damaged fails with the corruption error.
/// Recovery and repair (`db/repair.rs`) both check so (`files` reads the value files of
/// `dir`).
pub(super) fn check_replayed(
    env: &dyn Env,
    dir: &Path,
    files: &ValueFiles,
    batch: &WriteBatch,
    synced: &mut HashSet<u64>,
) -> Result<()> {
    for op in batch.iter() {
        if let BatchOp::PutSeparated { key, pointer } = op? {
            files.read(key, pointer)?;
            if let Some(file) = ValuePointer::decode(pointer).map(|p| p.file) {
                if synced.insert(file) {
                    let mut handle = env.new_appendable_file(&value_file_name(dir, file))?;
                    handle.sync()?;
                }
            }
        }
    }
    Ok(())
}

/// The value files each table's pointers name, with the record bytes named in each, read once
/// per table (tables never change) and kept while the table is live.
#[derive(Default)]
pub(crate) struct TableRefs {
    tables: Mutex<HashMap<u64, Arc<Refs>>>,
}

/// The value pointer of the entry `parsed` holding `value`, if it holds one. A pointer that
/// does not parse names a file no one can tell: it fails, so nothing is deleted on its account.
fn pointer_of(parsed: &ParsedInternalKey<'_>, value: &[u8]) -> Result<Option<ValuePointer>> {
    if parsed.value_type != ValueType::ValuePointer {
        return Ok(None);
    }
    ValuePointer::decode(value)
        .map(Some)
        .ok_or_else(|| ValuePointer::malformed(parsed.user_key, value))
}

/// Adds the pointers of every entry `iter` yields to `refs`.
fn add_pointers(iter: &mut dyn InternalIterator, refs: &mut Refs) -> Result<()> {
    iter.seek_to_first();
    while iter.valid() {
        if let Some(parsed) = parse_internal_key(iter.key()) {
            if let Some(pointer) = pointer_of(&parsed, iter.value())? {
                *refs.entry(pointer.file).or_default() +=
                    pointer.record_size(parsed.user_key.len());
            }
        }
        iter.next();
    }
    iter.status()
}

/// What readers of `view` may still read in the value files: per file, the record bytes of
/// the pointers that are the newest entry of their key or that a snapshot of `snapshots`
/// (oldest first) may read (`snapshot::hidden_by_newer`: compactions keep exactly those), and
/// the lowest sequence number of a
/// newer entry that only a snapshot keeps such a pointer needed for (once the oldest snapshot
/// is past it, the pointer is garbage), and the other pointers (file, offset): garbage. One
/// merged pass over the view's memtables and tables.
fn needed(db: &DbInner, view: &SuperVersion, snapshots: &[u64]) -> Result<Needed> {
    let reads = BlockReads::background_scan();
    let mut children: Vec<Box<dyn InternalIterator>> = Vec::new();
    for mem in [Some(&view.mem), view.imm.as_ref()].into_iter().flatten() {
        children.push(Box::new(mem.iter()));
    }
    for file in view.version.files.iter().flatten() {
        let table = db
            .table_cache
            .iter(reads, file.number(), file.meta.file_size)?;
        children.push(Box::new(table));
    }
    let mut iter = merging_iterator(db.icmp.clone(), children);
    let mut found = Needed::default();
    // The user key of the previous entry, and its sequence number.
    let mut previous: Option<(Vec<u8>, u64)> = None;
    iter.seek_to_first();
    while iter.valid() {
        if let Some(parsed) = parse_internal_key(iter.key()) {
            let newer = previous
                .as_ref()
                .filter(|(key, _)| db.icmp.compare_user(key, parsed.user_key).is_eq())
                .map(|&(_, sequence)| sequence);
            if let Some(pointer) = pointer_of(&parsed, iter.value())? {
                // As compactions judge it: they drop a pointer no reader can read.
                let shadowed =
                    newer.is_some_and(|newer| hidden_by_newer(snapshots, parsed.sequence, newer));
                if shadowed {
                    found.dead.insert((pointer.file, pointer.offset));
                } else {
                    *found.live.entry(pointer.file).or_default() +=
                        pointer.record_size(parsed.user_key.len());
                    if let Some(sequence) = newer {
                        found.replan_at =
                            Some(found.replan_at.map_or(sequence, |at| at.min(sequence)));
                    }
                }
            }
            match &mut previous {
                Some((key, sequence)) => {
                    key.clear();
                    key.extend_from_slice(parsed.user_key);
                    *sequence = parsed.sequence;
                }
                None => previous = Some((parsed.user_key.to_vec(), parsed.sequence)),
            }
        }
        iter.next();
    }
    iter.status()?;
    Ok(found)
}

/// Whether rewriting table `number` in place reclaims space in `files`: it holds a pointer
/// into one of them that is not `dead` (the rewrite relocates it), or a `dead` one whose
/// newer entry is in the table too (the rewrite drops it: entries of a key in upper levels
/// and memtables are newer than the table's, so that entry is the one hiding it). A table
/// holding only pointers there that entries outside it hide waits for those entries to be
/// compacted down onto it instead: rewriting it alone would drop nothing.
fn rewrite_reclaims(
    db: &DbInner,
    (number, size): (u64, u64),
    files: &BTreeSet<u64>,
    dead: &HashSet<(u64, u64)>,
) -> Result<bool> {
    let reads = BlockReads::background_scan();
    let mut iter = db.table_cache.iter(reads, number, size)?;
    // The user key of the previous entry of the table.
    let mut previous: Vec<u8> = Vec::new();
    let mut first = true;
    iter.seek_to_first();
    while iter.valid() {
        if let Some(parsed) = parse_internal_key(iter.key()) {
            if let Some(pointer) = pointer_of(&parsed, iter.value())? {
                if files.contains(&pointer.file) {
                    let hidden_here =
                        !first && db.icmp.compare_user(&previous, parsed.user_key).is_eq();
                    if !dead.contains(&(pointer.file, pointer.offset)) || hidden_here {
                        // A block that failed to read before this one is still an error.
                        iter.status()?;
                        return Ok(true);
                    }
                }
            }
            previous.clear();
            previous.extend_from_slice(parsed.user_key);
            first = false;
        }
        iter.next();
    }
    iter.status()?;
    Ok(false)
}

/// The pointers of every entry of `view` (both memtables and every table, hidden versions
/// included), added to `refs`; `seen` collects the tables' numbers.
fn add_view(
    db: &DbInner,
    view: &SuperVersion,
    refs: &mut Refs,
    seen: &mut HashMap<u64, Arc<Refs>>,
) -> Result<()> {
    for mem in [Some(&view.mem), view.imm.as_ref()].into_iter().flatten() {
        add_pointers(&mut mem.iter(), refs)?;
    }
    for file in view.version.files.iter().flatten() {
        let number = file.number();
        let cached = db.table_value_refs.tables.lock().get(&number).cloned();
        let table = match cached {
            Some(table) => table,
            None => {
                let reads = BlockReads::background_scan();
                let mut table = Refs::new();
                let mut iter = db.table_cache.iter(reads, number, file.meta.file_size)?;
                add_pointers(&mut iter, &mut table)?;
                let table = Arc::new(table);
                db.table_value_refs
                    .tables
                    .lock()
                    .insert(number, Arc::clone(&table));
                table
            }
        };
        for (&vlog, &bytes) in table.iter() {
            *refs.entry(vlog).or_default() += bytes;
        }
        seen.insert(number, table);
    }
    Ok(())
}

/// Writes out what the lanes' files hold in their buffers (`Handoff::Batched`: values of a
/// compaction that did not install its tables), when the database closes: before its lock is
/// released, so that no write to its files follows that.
pub(super) fn write_out(db: &DbInner) {
    for lane in Lane::ALL {
        db.value_lane(lane).writer.lock().write_out();
    }
}

/// Runs `f` with both lanes' writers locked (indexed by `Lane`), the relocations' taken first
/// (see the module documentation).
fn with_writers<T>(db: &DbInner, f: impl FnOnce([&ValueFileWriter; 2]) -> T) -> T {
    let relocations = db.value_lane(Lane::Relocations).writer.lock();
    let writes = db.value_lane(Lane::Writes).writer.lock();
    f([&*writes, &*relocations])
}

/// The file each lane's writer appends to, with the bytes appended to it: its size on disk
/// may not show them all yet (`Handoff::Batched`).
fn appending(writers: [&ValueFileWriter; 2]) -> Vec<(u64, u64)> {
    writers.iter().filter_map(|w| w.current()).collect()
}

/// Every value file of the database in the directory with its size (one deleted meanwhile
/// left out): its size on disk, or the bytes appended to it when `appending` (the files the
/// writers append to, [`appending`]) says more. Taken with the writers locked, that is the
/// current file's exact size; taken before the listing, a file the writer has since retired
/// (and written out) has grown on disk past what `appending` says.
fn listed(db: &DbInner, appending: &[(u64, u64)]) -> Result<Vec<(u64, u64)>> {
    let mut files = Vec::new();
    for name in db.env.children(&db.dir)? {
        if let Some((number, FileType::ValueFile)) = parse_own_file_name(&name) {
            let path = value_file_name(&db.dir, number);
            let appended = appending.iter().find(|&&(n, _)| n == number).map(|f| f.1);
            match db.env.file_size(&path) {
                Ok(size) => files.push((number, size.max(appended.unwrap_or(0)))),
                Err(_) if !db.env.file_exists(&path) => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(files)
}

/// Deletes the value files nothing can reach any more (see the module documentation), then
/// plans garbage collection (`value_gc::plan`) from what is left and sets the size value files
/// are cut at. Does nothing on a database without value separation, on a read-only handle, or
/// after a background error. A failure to list the directory or to read a memtable or table
/// deletes nothing and is returned: the caller makes it a background error, as a compaction's
/// would be, so it surfaces in a later call rather than leave collection stopped unseen.
pub(super) fn delete_unreferenced(db: &DbInner) -> Result<()> {
    if db.options.value_separation.is_none() || db.read_only.is_some() {
        return Ok(());
    }
    // Every value file with its size, and whether it is in use; the bytes appended by then,
    // which the listed sizes include; and each lane's file being written, with the bytes of
    // its appends not in a memtable or table yet (live, though no state points to them).
    let (files, appended, writing) = with_writers(db, |writers| {
        let files: Vec<(u64, u64, bool)> = listed(db, &appending(writers))?
            .into_iter()
            .map(|(number, size)| {
                let in_use = writers.iter().any(|writer| writer.in_use(number));
                (number, size, in_use)
            })
            .collect();
        let writing = Lane::ALL.map(|lane| {
            let writer = writers[lane as usize];
            writer
                .current()
                .map(|(number, _)| (number, writer.pending_bytes(number)))
        });
        Ok::<_, Error>((
            files,
            db.value_bytes_appended.load(Ordering::Acquire),
            writing,
        ))
    })?;
    // A pass that cannot plan still tells writes what the files held (so they do not wait
    // for a plan that is not coming: `Collection::outgrown`).
    let listing = Listing {
        total: files.iter().map(|&(_, size, _)| size).sum(),
        appended,
    };
    let listed_only = |e| {
        db.info_log
            .log(format_args!("value files: not collected: {e}"));
        db.state.lock().value_gc.listing = listing;
        e
    };
    let (current, views, snapshots) = {
        let state = db.state.lock();
        if state.bg_error.is_some() {
            return Ok(());
        }
        (
            state.super_version(),
            state.live_super_versions(),
            db.snapshots.pinned(),
        )
    };
    // What every live view points to (the current one's tables noted), and what readers of
    // the current one may still read.
    let mut reachable = Refs::new();
    // What only older states (held by iterators and reads) reach.
    let mut pinned = Refs::new();
    let mut seen = HashMap::new();
    let added = add_view(db, &current, &mut reachable, &mut seen).and_then(|()| {
        let current_tables = seen.clone();
        for view in views.iter().filter(|view| !Arc::ptr_eq(view, &current)) {
            add_view(db, view, &mut pinned, &mut seen)?;
        }
        Ok((current_tables, needed(db, &current, &snapshots)?))
    });
    for (&file, &bytes) in &pinned {
        *reachable.entry(file).or_default() += bytes;
    }
    // Older states released while this pass held them are noted below, once it lets go.
    // Another thread may note such a release first (an idle compaction thread, a write),
    // under the previous plan, which may have found no older state: the pass looks itself.
    let older_seen: Vec<std::sync::Weak<SuperVersion>> = views
        .iter()
        .filter(|view| !Arc::ptr_eq(view, &current))
        .map(Arc::downgrade)
        .collect();
    drop(views);
    let (current_tables, needed) = added.map_err(listed_only)?;
    *db.table_value_refs.tables.lock() = seen;
    let mut kept = Vec::new();
    for (number, size, in_use) in files {
        if in_use || reachable.contains_key(&number) {
            kept.push((number, size, in_use));
            continue;
        }
        db.value_files.forget(number);
        let path = value_file_name(&db.dir, number);
        match db.env.remove_file(&path) {
            Ok(()) => db
                .info_log
                .log(format_args!("deleted value file {}", path.display())),
            // Left for a later pass, out of the plan and the bound: chosen for collection, a
            // file with nothing to relocate would have every write ask for a flush.
            Err(e) => db
                .info_log
                .log(format_args!("deleting value file {}: {e}", path.display())),
        }
    }
    let total = kept.iter().map(|&(_, size, _)| size).sum();
    let mut held: Vec<(u64, u64, bool)> = kept
        .iter()
        .map(|&(number, size, in_use)| (number, size, in_use || pinned.contains_key(&number)))
        .collect();
    for lane in Lane::ALL {
        let Some(cut) = cut_current(db, lane, &writing, &held, total, &needed) else {
            continue;
        };
        for file in kept.iter_mut().filter(|f| f.0 == cut) {
            file.2 = false;
        }
        // Collectable by the next lane's decision, unless an older state reaches it.
        for file in held.iter_mut().filter(|f| f.0 == cut) {
            file.2 = pinned.contains_key(&cut);
        }
    }
    // Files an older state still reaches are not chosen: their live values would be copied
    // while the originals stay for that reader.
    let collectable: Vec<(u64, u64)> = kept
        .iter()
        .filter(|&&(number, _, in_use)| !in_use && !pinned.contains_key(&number))
        .map(|&(number, size, _)| (number, size))
        .collect();
    if let Some(separation) = db.options.value_separation {
        let live: u64 = needed.live.values().sum();
        db.mem_separated_limit
            .store(value_gc::memtable_value_limit(live), Ordering::Relaxed);
        let cut_at = value_gc::value_file_size(live, separation.file_size);
        for lane in Lane::ALL {
            db.value_lane(lane).writer.lock().set_file_size(cut_at);
        }
    }
    let collecting = db.state.lock().value_gc.files.clone();
    let mut plan = value_gc::plan(&collectable, total, &needed, &current_tables, &collecting);
    // The tables whose rewrite in place reclaims space (`rewrite_reclaims`).
    let sizes: HashMap<u64, u64> = current
        .version
        .files
        .iter()
        .flatten()
        .map(|f| (f.number(), f.meta.file_size))
        .collect();
    for &table in &plan.tables {
        let Some(&size) = sizes.get(&table) else {
            continue;
        };
        match rewrite_reclaims(db, (table, size), &plan.files, &needed.dead) {
            Ok(true) => {
                plan.relocating.insert(table);
            }
            Ok(false) => {}
            Err(e) => return Err(listed_only(e)),
        }
    }
    let mut state = db.state.lock();
    if plan.files != state.value_gc.files {
        db.info_log.log(format_args!(
            "value files: collecting {:?} ({total} bytes held, {} referenced)",
            plan.files, plan.referenced
        ));
    }
    if !plan.tables.is_empty() {
        db.bg_work.notify_all();
    }
    plan.replan = state.value_gc.replan;
    // A reader released while this pass ran, or whose state only this pass still held: the
    // files only it reached are looked at again, if this pass found any that older states
    // reach.
    plan.older_states_hold = !pinned.is_empty();
    state.value_gc.older_states_hold = plan.older_states_hold;
    state.note_released_readers();
    if plan.older_states_hold && older_seen.iter().any(|view| view.strong_count() == 0) {
        state.value_gc.sweep = true;
    }
    plan.sweep = state.value_gc.sweep;
    plan.listing = Listing { total, appended };
    state.value_gc = plan;
    Ok(())
}

/// Closes `lane`'s value file being written when its garbage is what keeps the files above
/// the collection threshold (`value_gc::cut_current_file`): writes (or relocations) may have
/// stopped, and a file being written is never collected. Returns the closed file's number
/// once nothing pending points into it.
/// `writing`: per lane, the file being written when the files were listed, with the bytes of
/// its appends not in a memtable or table then (the other lane's are live too); `held`: each
/// file with its size and whether it is kept from collection (in use, or reached by an older
/// state).
fn cut_current(
    db: &DbInner,
    lane: Lane,
    writing: &[Option<(u64, u64)>; 2],
    held: &[(u64, u64, bool)],
    total: u64,
    needed: &Needed,
) -> Option<u64> {
    let current = writing[lane as usize]?;
    let mut writer = db.value_lane(lane).writer.lock();
    let (number, _) = writer.current()?;
    if number != current.0 {
        // Replaced since: the listing says nothing of the new file.
        return None;
    }
    let cut_at = db
        .options
        .value_separation
        .map(|s| value_gc::value_file_size(needed.live.values().sum(), s.file_size))?;
    let mut live = needed.live.clone();
    let mut also_written = Vec::new();
    for &(file, pending) in writing.iter().flatten().filter(|w| w.0 != number) {
        *live.entry(file).or_default() += pending;
        also_written.push(file);
    }
    let cut =
        |current| value_gc::cut_current_file(current, &also_written, held, total, &live, cut_at);
    if !cut(current) {
        if current.1 > 0 && cut((number, 0)) {
            // Closed but for a write in progress: looked at again once it is done.
            writer.want_when_done(number);
        }
        return None;
    }
    match writer.close_current(&*db.env, &db.dir) {
        Ok(()) => {
            db.info_log.log(format_args!(
                "value files: closed value file {number} to collect it"
            ));
            if writer.in_use(number) {
                // Chosen once the appends pending in it are done.
                writer.want_when_done(number);
                return None;
            }
            Some(number)
        }
        Err(e) => {
            db.info_log.log(format_args!(
                "value files: closing {number} to collect it: {e}"
            ));
            None
        }
    }
}

/// Property `strata.value-files.<what>`: `total-bytes` (the value files' sizes),
/// `live-bytes` (the record bytes the current state's entries point to, hidden versions
/// included), `space-amplification` (their ratio) and `relocated-bytes` (record bytes garbage
/// collection copied since the database opened); `None` for another name.
pub(super) fn property(db: &DbInner, what: &str) -> Option<Result<String>> {
    let total = || -> Result<u64> {
        // The writers are not held through the listing: that would hold up appends.
        let files = listed(db, &with_writers(db, appending))?;
        Ok(files.iter().map(|(_, size)| size).sum())
    };
    let live = || -> Result<u64> {
        let view = db.published.view();
        let mut refs = Refs::new();
        add_view(db, &view, &mut refs, &mut HashMap::new())?;
        Ok(refs.values().sum())
    };
    Some(match what {
        "total-bytes" => total().map(|t| t.to_string()),
        "live-bytes" => live().map(|l| l.to_string()),
        "relocated-bytes" => Ok(db.relocated_bytes.load(Ordering::Relaxed).to_string()),
        "space-amplification" => total().and_then(|t| {
            let l = live()?;
            Ok(if l == 0 {
                "0".to_owned()
            } else {
                format!("{:.3}", t as f64 / l as f64)
            })
        }),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_relocations_lane_batches_its_appends() {
        let writes = ValueLane::new(Lane::Writes, 1 << 20);
        let relocations = ValueLane::new(Lane::Relocations, 1 << 20);
        assert_eq!(writes.writer.lock().handoff(), Handoff::Immediate);
        assert_eq!(relocations.writer.lock().handoff(), Handoff::Batched);
    }

    /// A relocated value still in the buffer of the relocations' file counts in the value
    /// files' total, as the garbage collection's listing sees it, before the file's size on
    /// disk shows it.
    #[test]
    fn the_listing_counts_relocated_bytes_not_yet_written_out() {
        let dir = tempfile::tempdir().unwrap();
        let options = crate::options::Options {
            create_if_missing: true,
            value_separation: Some(crate::options::ValueSeparation::new(100)),
            ..Default::default()
        };
        let db = crate::db::DB::open(dir.path(), options).unwrap();
        let inner = &*db.inner;
        let total = || property(inner, "total-bytes").unwrap().unwrap();
        assert_eq!(total(), "0");
        let value = [7u8; 1000];
        let moved = append(
            inner,
            Lane::Relocations,
            &[(b"k", StoredValue::raw(&value))],
        )
        .unwrap();
        let bytes = moved[0].record_size(1);
        let on_disk = std::fs::metadata(value_file_name(dir.path(), moved[0].file))
            .unwrap()
            .len();
        assert!(
            on_disk < bytes,
            "the record is still buffered ({on_disk} bytes on disk)"
        );
        assert_eq!(total(), bytes.to_string());
        done(inner, Lane::Relocations, &[(moved[0].file, bytes)]);
    }
}
