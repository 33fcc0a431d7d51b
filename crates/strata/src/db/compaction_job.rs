//! Running one compaction: merge the inputs, drop what no reader can see, write new tables to
//! the next level, and install the result.
//!
//! An entry is dropped when a newer entry for the same user key hides it from every reader:
//! no live snapshot reads at a sequence number from the entry's up to before the newer one's
//! (`snapshot::hidden_by_newer`; LevelDB drops only entries the oldest snapshot sees shadowed,
//! and keeps every version written after it), or when it is a deletion visible to every reader
//! and no deeper level can hold the key (nothing left for it to hide). Entries
//! whose keys cannot be parsed are kept, so corruption is never silently erased.
//!
//! Input blocks are always read with their checksums verified, whatever `paranoid_checks`
//! says: a compaction rewrites what it reads under fresh checksums, so an unverified damaged
//! block would come out looking sound, and later verified reads would return the damage as
//! data. A compaction that meets damage fails (the background error then stops writes until
//! the database is repaired), as in LevelDB when damage breaks a block's structure.
//!
//! The merge runs without the state mutex. When no thread of its own flushes memtables
//! (`max_background_jobs = 1`, `background::merges_flush`), it flushes the immutable memtable
//! between entries if one appeared, so writers never wait for a long compaction.
//!
//! With value separation, an entry whose pointer names a value file being garbage collected is
//! written with its value relocated (`db/value_gc.rs`), synced before the outputs are
//! installed.
//!
//! Range tombstones (format extension `range-deletes`) of the inputs go to the outputs, each
//! output holding the part between its first key and the next output's (see `range_del` for
//! how a table's key range covers them). An entry older than a tombstone every reader sees is
//! dropped; a tombstone is dropped when a newer one every reader sees covers the same keys, or
//! when every reader sees it and no deeper level holds any of its keys. Outputs are cut only
//! between user keys, so the cut between two outputs is a user key both sides agree on.
//!
//! A compaction of at least [`MIN_BYTES_PER_SUBCOMPACTION`] per part is cut into key ranges
//! (at most `Options::max_subcompactions`, at input files' largest user keys, so no user key's
//! entries are split) merged in parallel: the background thread merges the first range, scoped
//! threads the others, each with its own [`KeyCursor`] and its own output tables. When merges
//! flush, only the background thread flushes the immutable memtable: between its range's
//! entries, then while it waits for the other ranges. A range that panics (a bug) fails like one that errs. The
//! ranges partition the merged input in internal-key order, so together they write exactly
//! what one merge would; only where output tables are cut differs. One edit installs every
//! range's tables, or, when any range fails, none and they are all removed.

use std::collections::HashMap;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::MutexGuard;

use super::background::merges_flush;
use super::edits::apply_edit;
use super::flush::compact_memtable;
use super::panics::{panic_error, panics_as_errors};
use super::value_gc::Relocation;
use super::{DbInner, DbState, LevelStats};
use crate::compaction::filter::{Rewrite, Rewrites};
use crate::compaction::{Compaction, KeyCursor};
use crate::error::{Error, Result};
use crate::filename::table_file_name;
use crate::iter::merging::merging_iterator;
use crate::iter::InternalIterator;
use crate::range_del::{clip, cover, Fragment, Fragments, RangeTombstone};
use crate::snapshot::hidden_by_newer;
use crate::table::builder::TableBuilder;
use crate::table::reader::Table;
use crate::table::{BlockReads, TableOptions};
use crate::util::internal_key::{
    internal_key, lookup_key, parse_internal_key, user_key, ValueType, MAX_SEQUENCE,
};
use crate::version::edit::FileMetaData;
use crate::version::level_iter::{LevelFiles, LevelIter};
use crate::version::version::total_file_size;

/// A compaction is cut into parallel key ranges only when each gets at least this many bytes
/// of input, in units of the output table size: smaller ones are not worth a thread.
const MIN_BYTES_PER_SUBCOMPACTION: u64 = 2;

/// A table being written by the compaction.
struct Output {
    meta: FileMetaData,
    builder: TableBuilder,
}

/// Runs compaction `c` (entered in `DbState::compactions` by its caller), installing its
/// outputs on success. While one with a compaction filter runs, from before its merge until its outputs are installed (or given up),
/// `DbState::filtering_compactions` counts it, so snapshots taken meanwhile keep their view
/// (`DB::snapshot`).
pub(crate) fn run(
    db: &Arc<DbInner>,
    state: &mut MutexGuard<'_, DbState>,
    c: &mut Compaction,
) -> Result<()> {
    let filtering = db.options.compaction_filter.is_some();
    state.filtering_compactions += usize::from(filtering);
    let relocation = Relocation::new(db, state);
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        run_and_install(db, state, c, &relocation)
    }));
    // Releases the value files the relocated values went to (taking the value writer's lock,
    // never taken with the state mutex held, then the state mutex), after a panic too: its
    // unwinding holds the state mutex again by here.
    MutexGuard::unlocked(state, || drop(relocation));
    state.filtering_compactions -= usize::from(filtering);
    result.unwrap_or_else(|panic| panic::resume_unwind(panic))
}

fn run_and_install(
    db: &Arc<DbInner>,
    state: &mut MutexGuard<'_, DbState>,
    c: &mut Compaction,
    relocation: &Relocation<'_>,
) -> Result<()> {
    let start = db.env.now_micros();
    db.info_log.log(format_args!("compacting {}", c.summary()));
    let smallest_snapshot = state.smallest_snapshot(&db.snapshots);
    let snapshots = db.snapshots.pinned();
    // Read under the state mutex, as snapshots are pinned: the filter may be asked about no
    // entry a snapshot taken before now can see.
    let newest_snapshot = db.snapshots.newest().unwrap_or(0);
    let rewrites = Rewrites {
        now: db.options.expiring_keys.then(|| db.env.now_micros()),
        filter: db
            .options
            .compaction_filter
            .as_deref()
            .map(|filter| (filter, newest_snapshot)),
    };
    let (outputs, result) = MutexGuard::unlocked(state, || {
        let (outputs, result) = merge(db, c, (smallest_snapshot, &snapshots), rewrites, relocation);
        // Relocated values are durable before any pointer to them is installed.
        (outputs, result.and_then(|()| relocation.sync()))
    });

    let mut stats = LevelStats {
        micros: db.env.now_micros().saturating_sub(start),
        ..LevelStats::default()
    };
    for files in &c.inputs {
        let read = total_file_size(files);
        stats.bytes_read = stats.bytes_read.saturating_add(read);
    }
    stats.bytes_written = outputs.iter().map(|m| m.file_size).sum();
    state.stats[c.output_level].add(&stats);

    let numbers: Vec<u64> = outputs.iter().map(|m| m.number).collect();
    if let Err(e) = result {
        // The merge failed, so no edit names the outputs: they can go.
        db.info_log.log(format_args!("compaction failed: {e}"));
        for number in numbers {
            state.pending_outputs.remove(&number);
            let _ = db.env.remove_file(&table_file_name(&db.dir, number));
        }
        return Err(e);
    }
    c.add_input_deletions();
    let output_level = c.output_level;
    for meta in outputs {
        c.edit.new_files.push((output_level, meta));
    }
    let result = apply_edit(db, state, &mut c.edit);
    for number in &numbers {
        state.pending_outputs.remove(number);
    }
    if let Err(e) = result {
        // The edit may have reached the manifest: the outputs stay (the background error now
        // set keeps them from being deleted as obsolete; the next open sorts them out).
        db.info_log.log(format_args!("compaction failed: {e}"));
        return Err(e);
    }
    relocation.installed();
    db.info_log.log(format_args!(
        "compacted to: {} ({} bytes read, {} written)",
        state.versions.level_summary(),
        stats.bytes_read,
        stats.bytes_written
    ));
    Ok(())
}

/// Merges the compaction's inputs, in parallel key ranges when it is large enough. Returns
/// every output table started (finished or not, so the caller can remove them on error) and
/// the first error met.
fn merge(
    db: &Arc<DbInner>,
    c: &Compaction,
    (smallest_snapshot, snapshots): (u64, &[u64]),
    rewrites: Rewrites<'_>,
    relocation: &Relocation<'_>,
) -> (Vec<FileMetaData>, Result<()>) {
    let ranges = key_ranges(db, c);
    if ranges.len() > 1 {
        db.info_log.log(format_args!(
            "merging {} key ranges in parallel",
            ranges.len()
        ));
    }
    let tombstones = match input_tombstones(db, c) {
        Ok(tombstones) => tombstones,
        Err(e) => return (Vec::new(), Err(e)),
    };
    let failed = AtomicBool::new(false);
    // Ranges still being merged on other threads. Each, when done, counts itself out under the
    // state mutex and wakes the background thread, which may be waiting for them on `bg_work`.
    let running = AtomicUsize::new(0);
    let run = |range: &KeyRange, flushes: bool| {
        let mut outputs = Vec::new();
        // A panic (a bug) fails the range like an error does: its outputs are known, so they
        // are removed with the others, and the other ranges stop early.
        let result = panics_as_errors("a compaction range", || {
            merge_range(
                db,
                c,
                Bounds {
                    smallest_snapshot,
                    snapshots,
                    tombstones: &tombstones,
                    range,
                    rewrites,
                    relocation,
                },
                flushes,
                &failed,
                &mut outputs,
            )
        });
        if result.is_err() {
            failed.store(true, Ordering::Release);
        }
        (outputs, result)
    };
    let Some((first, others)) = ranges.split_first() else {
        return (Vec::new(), Ok(()));
    };
    let parts: Vec<(Vec<FileMetaData>, Result<()>)> = std::thread::scope(|scope| {
        let spawned: Vec<_> = others
            .iter()
            .map(|range| {
                running.fetch_add(1, Ordering::AcqRel);
                let handle = std::thread::Builder::new()
                    .name("strata-bg-sub".into())
                    .spawn_scoped(scope, || {
                        let part = run(range, false);
                        let _state = db.state.lock();
                        running.fetch_sub(1, Ordering::AcqRel);
                        db.bg_work.notify_all();
                        part
                    });
                if handle.is_err() {
                    running.fetch_sub(1, Ordering::AcqRel);
                }
                (range, handle)
            })
            .collect();
        let flushes = merges_flush(db);
        let mut parts = vec![run(first, flushes)];
        let mut handles = Vec::new();
        for (range, handle) in spawned {
            match handle {
                Ok(handle) => handles.push(handle),
                // No thread to spare: merge the range here (this thread may flush).
                Err(_) => parts.push(run(range, flushes)),
            }
        }
        if flushes && !handles.is_empty() {
            let flushed = panics_as_errors("a flush during a compaction", || {
                flush_while_waiting(db, &running, &failed)
            });
            if flushed.is_err() {
                failed.store(true, Ordering::Release); // the other ranges stop early
            }
            parts.push((Vec::new(), flushed));
        }
        for handle in handles {
            parts.push(handle.join().unwrap_or_else(|payload| {
                (
                    Vec::new(),
                    Err(panic_error("a compaction range", &*payload)),
                )
            }));
        }
        parts
    });
    let mut outputs = Vec::new();
    let mut result = Ok(());
    for (part_outputs, part_result) in parts {
        outputs.extend(part_outputs);
        if result.is_ok() {
            result = part_result;
        }
    }
    (outputs, result)
}

/// The key ranges compaction `c` is merged in: one, or up to `max_subcompactions` when its
/// input is large enough, cut where the input bytes divide evenly.
fn key_ranges(db: &DbInner, c: &Compaction) -> Vec<KeyRange> {
    let input_bytes = c.inputs.iter().fold(0u64, |sum, files| {
        sum.saturating_add(total_file_size(files))
    });
    let per_part = MIN_BYTES_PER_SUBCOMPACTION.saturating_mul(c.max_output_file_size.max(1));
    let parts = usize::try_from(input_bytes / per_part)
        .unwrap_or(usize::MAX)
        .min(c.max_parts(db.options.max_subcompactions));
    // A table that cannot be opened counts as holding nothing below a key (the merge will
    // report it); the estimate only balances the ranges. Each table is looked up once,
    // however many candidate cuts ask about it (a small table cache could otherwise reopen
    // it per candidate).
    let mut tables: HashMap<u64, Option<Arc<Table>>> = HashMap::new();
    let cuts = c.split_points(parts, |file, user_key| {
        tables
            .entry(file.number())
            .or_insert_with(|| {
                db.table_cache
                    .find_table(file.number(), file.meta.file_size)
                    .ok()
            })
            .as_ref()
            .map_or(0, |table| {
                table.approximate_offset_of(&last_key_of(user_key))
            })
    });
    (0..=cuts.len())
        .map(|i| KeyRange {
            from: i.checked_sub(1).map(|j| cuts[j].clone()),
            to: cuts.get(i).cloned(),
        })
        .collect()
}

/// The range tombstones of every input table of `c`, merged (empty without the extension).
fn input_tombstones(db: &DbInner, c: &Compaction) -> Result<Fragments> {
    let mut lists = Vec::new();
    if db.options.range_deletes {
        for file in c.inputs.iter().flatten() {
            let table = db
                .table_cache
                .find_table(file.number(), file.meta.file_size)?;
            if let Some(tombstones) = table.range_tombstones() {
                lists.push(Arc::clone(tombstones));
            }
        }
    }
    Ok(Fragments::merge(&db.icmp, lists.iter().map(|t| &**t)))
}

/// Waits, on the background thread, until no other range is running, flushing the immutable
/// memtable whenever one appears meanwhile: writers may be waiting for that flush, and the
/// background thread's own range may end long before the others. No flush once a range has
/// failed (the compaction is void; the background error will stop writes). Returns at once the
/// error of a failed flush (the compaction then fails, and the caller stops the other ranges).
fn flush_while_waiting(
    db: &Arc<DbInner>,
    running: &AtomicUsize,
    failed: &AtomicBool,
) -> Result<()> {
    let mut state = db.state.lock();
    while running.load(Ordering::Acquire) > 0 {
        if state.imm.is_some()
            && !failed.load(Ordering::Acquire)
            && !db.shutting_down.load(Ordering::Acquire)
        {
            compact_memtable(db, &mut state)?;
        } else {
            // Woken by a range counting itself out, a writer leaving a memtable to flush, or
            // the database closing; each changes what is checked here under the mutex.
            db.bg_work.wait(&mut state);
        }
    }
    Ok(())
}

/// A part of a compaction's merged input: the user keys from `from` (inclusive; from the
/// start when `None`) to `to` (exclusive; to the end when `None`), every entry of each.
struct KeyRange {
    from: Option<Vec<u8>>,
    to: Option<Vec<u8>>,
}

/// What decides which entries and tombstones one key range keeps.
struct Bounds<'a> {
    /// Oldest sequence number a reader may read at.
    smallest_snapshot: u64,
    /// Every snapshot's sequence number, oldest first.
    snapshots: &'a [u64],
    /// The range tombstones of every input.
    tombstones: &'a Fragments,
    range: &'a KeyRange,
    /// Expired values reclaimed, and the user's compaction filter.
    rewrites: Rewrites<'a>,
    /// Values moved out of value files being collected (`db/value_gc.rs`).
    relocation: &'a Relocation<'a>,
}

/// The last internal key any entry of `user_key` can have (sequence 0, the lowest type).
fn last_key_of(user_key: &[u8]) -> Vec<u8> {
    internal_key(user_key, 0, ValueType::Deletion)
}

/// The merge loop over one key range, run without the state mutex. Outputs started are
/// pushed to `outputs` even on error, so the caller can remove them. Stops early, without an
/// error of its own, once `failed` says another range failed.
fn merge_range(
    db: &Arc<DbInner>,
    c: &Compaction,
    bounds: Bounds<'_>,
    flushes: bool,
    failed: &AtomicBool,
    outputs: &mut Vec<FileMetaData>,
) -> Result<()> {
    let reads = BlockReads::background_scan();
    let Bounds {
        smallest_snapshot,
        snapshots,
        tombstones,
        range,
        rewrites,
        relocation,
    } = bounds;
    let mut input = input_iterator(db, c, reads)?;
    let table_options = db.options.table_options();
    let icmp = c.comparator();
    let mut cursor = KeyCursor::default();
    // The tombstones of this range that stay, and where the next output's share of them starts.
    let kept = c.surviving_tombstones(
        clip(
            &icmp,
            tombstones.fragments(),
            range.from.as_deref(),
            range.to.as_deref(),
        ),
        smallest_snapshot,
    );
    let mut tombstones_from = range.from.clone();

    let mut current: Option<Output> = None;
    // The current output is full: close it before the next user key.
    let mut cut_pending = false;
    let mut current_user_key: Option<Vec<u8>> = None;
    let mut last_sequence_for_key = MAX_SEQUENCE + 1;

    match &range.from {
        None => input.seek_to_first(),
        Some(from) => input.seek(&lookup_key(from, MAX_SEQUENCE)),
    }
    while input.valid() {
        if db.shutting_down.load(Ordering::Acquire) {
            return Err(Error::InvalidArgument(
                "database closed during compaction".into(),
            ));
        }
        if failed.load(Ordering::Acquire) {
            return Ok(()); // another range failed: the compaction is void
        }
        if flushes && db.has_imm.load(Ordering::Acquire) {
            // Writers may be waiting for this flush; it cannot wait for the compaction.
            let mut state = db.state.lock();
            compact_memtable(db, &mut state)?;
        }
        let key = input.key();
        if let Some(to) = &range.to {
            if icmp.compare_user(user_key(key), to) != std::cmp::Ordering::Less {
                break;
            }
        }
        let parsed = parse_internal_key(key);
        let first_of_key = parsed.is_some_and(|parsed| {
            current_user_key
                .as_deref()
                .is_none_or(|k| icmp.compare_user(parsed.user_key, k) != std::cmp::Ordering::Equal)
        });
        // Outputs end between user keys only, so their tombstones can be cut there too.
        if first_of_key && current.is_some() && (cut_pending || cursor.should_stop_before(c, key)) {
            if let Some(output) = current.take() {
                let cut = user_key(key);
                close_output(
                    db,
                    output,
                    outputs,
                    &kept,
                    tombstones_from.as_deref(),
                    Some(cut),
                )?;
                tombstones_from = Some(cut.to_vec());
            }
            cut_pending = false;
        }

        let mut drop = false;
        let mut rewrite = Rewrite::Keep;
        match parsed {
            None => {
                // Keep unparseable keys: hiding them would hide the corruption.
                current_user_key = None;
                last_sequence_for_key = MAX_SEQUENCE + 1;
            }
            Some(parsed) => {
                if first_of_key {
                    current_user_key = Some(parsed.user_key.to_vec());
                    last_sequence_for_key = MAX_SEQUENCE + 1;
                }
                if last_sequence_for_key <= MAX_SEQUENCE
                    && hidden_by_newer(snapshots, parsed.sequence, last_sequence_for_key)
                {
                    drop = true; // every reader that sees it sees a newer entry
                } else if parsed.value_type == ValueType::Deletion
                    && parsed.sequence <= smallest_snapshot
                    && cursor.is_base_level_for_key(c, parsed.user_key)
                {
                    drop = true; // nothing older remains for this deletion to hide
                } else if !tombstones.is_empty()
                    && tombstones
                        .covering(parsed.user_key)
                        .and_then(|f| f.newest_at(smallest_snapshot))
                        .is_some_and(|tombstone| tombstone > parsed.sequence)
                {
                    drop = true; // deleted by a range tombstone every reader sees
                }
                if !drop {
                    rewrite =
                        rewrites.rewrite(c.output_level, &parsed, input.value(), first_of_key);
                    if rewrite == Rewrite::Delete
                        && parsed.sequence <= smallest_snapshot
                        && cursor.is_base_level_for_key(c, parsed.user_key)
                    {
                        drop = true; // a deletion now, with nothing older left to hide
                    }
                }
                last_sequence_for_key = parsed.sequence;
            }
        }

        if !drop {
            if current.is_none() {
                let output = open_output(db, &table_options)?;
                outputs.push(output.meta.clone());
                current = Some(output);
            }
            if let Some(output) = current.as_mut() {
                let deletion;
                let relocated;
                let (key, value) = match (&rewrite, parsed) {
                    (Rewrite::Delete, Some(parsed)) => {
                        deletion =
                            internal_key(parsed.user_key, parsed.sequence, ValueType::Deletion);
                        (deletion.as_slice(), &[][..])
                    }
                    (Rewrite::Value(value), _) => (key, value.as_slice()),
                    (_, Some(parsed)) => {
                        relocated = relocation.relocate(&parsed, input.value())?;
                        (key, relocated.as_deref().unwrap_or(input.value()))
                    }
                    _ => (key, input.value()),
                };
                if output.builder.num_entries() == 0 {
                    output.meta.smallest = key.to_vec();
                }
                output.meta.largest.clear();
                output.meta.largest.extend_from_slice(key);
                output.builder.add(key, value)?;
                if output.builder.file_size() >= c.max_output_file_size {
                    cut_pending = true;
                }
            }
        }
        input.next();
    }
    input.status()?;
    // The rest of the range's tombstones go with the last output, or in one of their own.
    let to = range.to.as_deref();
    if current.is_none() && !clip(&icmp, &kept, tombstones_from.as_deref(), to).is_empty() {
        let output = open_output(db, &table_options)?;
        outputs.push(output.meta.clone());
        current = Some(output);
    }
    if let Some(output) = current.take() {
        close_output(db, output, outputs, &kept, tombstones_from.as_deref(), to)?;
    }
    Ok(())
}

/// Adds the tombstones of `kept` between the user keys `from` and `to` to `output`, widens its
/// key range over them, and finishes it.
fn close_output(
    db: &DbInner,
    mut output: Output,
    outputs: &mut [FileMetaData],
    kept: &[Fragment],
    from: Option<&[u8]>,
    to: Option<&[u8]>,
) -> Result<()> {
    let mine = clip(&db.icmp, kept, from, to);
    for fragment in &mine {
        for &sequence in &fragment.sequences {
            output.builder.add_range_tombstone(&RangeTombstone {
                start: fragment.start.clone(),
                end: fragment.end.clone(),
                sequence,
            })?;
        }
    }
    cover(
        &db.icmp,
        &mut output.meta.smallest,
        &mut output.meta.largest,
        &mine,
    );
    finish_output(db, output, outputs)
}

/// The merged view of the compaction's inputs: each level-0 file on its own, each deeper
/// level as one concatenating iterator.
fn input_iterator(
    db: &Arc<DbInner>,
    c: &Compaction,
    reads: BlockReads,
) -> Result<Box<dyn InternalIterator>> {
    let mut children: Vec<Box<dyn InternalIterator>> = Vec::new();
    for (which, files) in c.inputs.iter().enumerate() {
        if files.is_empty() {
            continue;
        }
        if c.level + which == 0 {
            for f in files {
                let iter = db.table_cache.iter(reads, f.number(), f.meta.file_size)?;
                children.push(Box::new(iter));
            }
        } else {
            children.push(Box::new(LevelIter::new(
                c.comparator(),
                LevelFiles::Owned(files.clone()),
                Arc::clone(&db.table_cache),
                reads,
            )));
        }
    }
    Ok(merging_iterator(c.comparator(), children))
}

fn open_output(db: &DbInner, options: &TableOptions) -> Result<Output> {
    let number = {
        let mut state = db.state.lock();
        let number = state.versions.new_file_number();
        state.pending_outputs.insert(number);
        number
    };
    let file = db
        .env
        .new_writable_file(&table_file_name(&db.dir, number))?;
    Ok(Output {
        meta: FileMetaData {
            number,
            file_size: 0,
            smallest: Vec::new(),
            largest: Vec::new(),
        },
        builder: TableBuilder::new(options.clone(), file),
    })
}

/// Finishes, syncs and verifies one output table.
fn finish_output(db: &DbInner, mut output: Output, outputs: &mut [FileMetaData]) -> Result<()> {
    let number = output.meta.number;
    let entries = output.builder.num_entries();
    let size = output.builder.finish()?;
    let mut file = output.builder.into_file();
    file.sync()?;
    file.close()?;
    output.meta.file_size = size;
    // Check the table opens and is readable before it is installed (its first block checked,
    // and not cached: the block cache is for what readers read).
    let mut check = db
        .table_cache
        .iter(BlockReads::checked_uncached(), number, size)?;
    check.seek_to_first();
    check.status()?;
    db.info_log.log(format_args!(
        "generated table #{number}: {entries} keys, {size} bytes"
    ));
    if let Some(last) = outputs.last_mut() {
        *last = output.meta;
    }
    Ok(())
}
