//! The read path: point lookups and iterators over memtable, immutable memtable and tables.
//!
//! A read takes no lock: it loads the published [`SuperVersion`](super::SuperVersion) and the
//! sequence number to read at (`db/published.rs`), or a snapshot's, and everything after runs
//! on immutable data.

use std::borrow::Cow;
use std::sync::Arc;

use arc_swap::Guard;

use super::iterator::DbIterator;
use super::published::ViewGuard;
use super::value_files;
use super::{DbInner, SuperVersion};
use crate::error::{Error, Result};
use crate::iter::db_iter::DbIter;
use crate::iter::merging::merging_iterator;
use crate::iter::InternalIterator;
use crate::options::ReadOptions;
use crate::range_del::Fragments;
use crate::table::BlockReads;
use crate::util::entry::Stored;
use crate::util::internal_key::lookup_key;
use crate::version::get_many::{BatchSources, BatchedLookup};
use crate::version::level_iter::{LevelFiles, LevelIter};
use crate::version::memtable_read::memtables_get;
use crate::version::version::{PointRead, SeekCharge, TableLookup};
use crate::version::NUM_LEVELS;

/// The state to read and the sequence number to read it at: the snapshot's, or the latest.
/// A read-only handle's snapshot brings the state it was taken on (see `snapshot.rs`); other
/// reads load the published state without the state mutex (`db/published.rs`).
#[inline]
fn read_view(db: &DbInner, options: &ReadOptions) -> (View, u64) {
    let pinned = options
        .snapshot
        .as_ref()
        .and_then(|snapshot| snapshot.view_in(&db.snapshots))
        .and_then(|view| view.downcast::<SuperVersion>().ok());
    let (latest, last_sequence) = match pinned {
        Some(view) => (View::Pinned(view), 0),
        None => {
            let (guard, sequence) = db.published.load();
            (View::Latest(guard), sequence)
        }
    };
    let sequence = options.snapshot_sequence().unwrap_or(last_sequence);
    (latest, sequence)
}

/// A read's hold on the state it reads: a snapshot's own, or the latest one loaded.
enum View {
    Pinned(Arc<SuperVersion>),
    Latest(ViewGuard),
}

impl std::ops::Deref for View {
    type Target = SuperVersion;

    fn deref(&self) -> &SuperVersion {
        match self {
            View::Pinned(view) => view,
            View::Latest(guard) => guard,
        }
    }
}

impl View {
    /// The state as an `Arc` of its own, for an iterator to keep.
    fn into_arc(self) -> Arc<SuperVersion> {
        match self {
            View::Pinned(view) => view,
            View::Latest(guard) => Guard::into_inner(guard),
        }
    }
}

/// The user's value from what a point read found: a pointer's is read from its value file,
/// unless the read must not wait for the disk (`ReadOptions::memory_only`).
#[inline]
fn resolve<'a>(
    db: &DbInner,
    options: &ReadOptions,
    key: &[u8],
    stored: Stored<'a>,
) -> Result<Cow<'a, [u8]>> {
    if options.memory_only && matches!(stored, Stored::Pointer(_)) {
        return Err(value_file_read_would_block(key));
    }
    value_files::resolve(db, key, stored)
}

/// What a read that must not wait for the disk gets for a value kept in a value file.
#[cold]
pub(super) fn value_file_read_would_block(key: &[u8]) -> Error {
    Error::WouldBlock(format!(
        "the value of '{}' is in a value file",
        key.escape_ascii()
    ))
}

/// The time reads judge expiring values by: the `Env`'s clock when the database uses expiring
/// keys, else 0 (no clock read; no value expires, as none can).
pub(super) fn read_clock(db: &DbInner) -> u64 {
    if db.options.expiring_keys {
        db.env.now_micros()
    } else {
        0
    }
}

/// The value of `key` as of the read options' snapshot (or now).
pub(crate) fn get(db: &Arc<DbInner>, options: &ReadOptions, key: &[u8]) -> Result<Option<Vec<u8>>> {
    point_read(db, options, key, false, |stored| {
        resolve(db, options, key, stored).map(Cow::into_owned)
    })
}

/// [`get`], with the value lent to `read` rather than returned: not copied when it is in a
/// memtable.
pub(crate) fn get_with<R>(
    db: &Arc<DbInner>,
    options: &ReadOptions,
    key: &[u8],
    read: impl FnOnce(&[u8]) -> R,
) -> Result<Option<R>> {
    point_read(db, options, key, false, |stored| {
        resolve(db, options, key, stored).map(|value| read(&value))
    })
}

/// The length of the value of `key` as of the read options' snapshot (or now), from the tree
/// alone: a value kept in a value file is not read.
pub(crate) fn head(db: &Arc<DbInner>, options: &ReadOptions, key: &[u8]) -> Result<Option<u64>> {
    point_read(db, options, key, false, |stored| {
        value_files::stored_len(key, &stored)
    })
}

/// Whether `key` has a value as of the read options' snapshot (or now), without copying it
/// (nor reading a value file).
pub(crate) fn contains(db: &Arc<DbInner>, options: &ReadOptions, key: &[u8]) -> Result<bool> {
    Ok(point_read(db, options, key, true, |_| Ok(()))?.is_some())
}

/// What the tree holds for `key` as of the read options' snapshot (or now) — its value or a
/// pointer to it; with `presence_only` an empty value when it has one in the tree — handed
/// to `answer` while the state it was found in is still held, so the value file a pointer
/// names stays until `answer` has read it (a file is deleted once no held state reaches it).
fn point_read<T>(
    db: &Arc<DbInner>,
    options: &ReadOptions,
    key: &[u8],
    presence_only: bool,
    answer: impl FnOnce(Stored<'_>) -> Result<T>,
) -> Result<Option<T>> {
    let (view, sequence) = read_view(db, options);
    let mut read = PointRead {
        covered: None,
        now: read_clock(db),
        presence_only,
    };
    if let Some(found) = memtables_get(view.memtables(), key, sequence, &mut read)? {
        return found.map(answer).transpose();
    }
    let lookup = lookup_key(key, sequence);
    let mut charge = SeekCharge::default();
    let found = view.version.get(
        options.block_reads(),
        &lookup,
        read,
        &db.table_cache,
        &mut charge,
    )?;
    if view.version.charge_seek(charge) {
        let _state = db.state.lock();
        db.bg_work.notify_all();
    }
    match found {
        TableLookup::Found(stored) => answer(stored).map(Some),
        TableLookup::Deleted | TableLookup::Absent | TableLookup::Corrupt => Ok(None),
    }
}

/// The values of `keys` as of the read options' snapshot (or now), in the caller's order: one
/// view and one clock reading for the whole batch, so the answers are those of one moment.
/// The keys are looked up sorted and each distinct key once, in runs of neighbouring keys
/// that go through the memtables and then the tables level by level (`version/get_many/`).
pub(crate) fn get_many<K: AsRef<[u8]>>(
    db: &Arc<DbInner>,
    options: &ReadOptions,
    keys: &[K],
) -> Result<Vec<Option<Vec<u8>>>> {
    batched_read(db, options, keys, false)
}

/// For each of `keys`, whether it has a value, as [`get_many`] reads them but without copying
/// any value.
pub(crate) fn contains_many<K: AsRef<[u8]>>(
    db: &Arc<DbInner>,
    options: &ReadOptions,
    keys: &[K],
) -> Result<Vec<bool>> {
    let found = batched_read(db, options, keys, true)?;
    Ok(found.iter().map(Option::is_some).collect())
}

/// [`get_many`], or with `presence_only` empty vectors for the keys that have values.
fn batched_read<K: AsRef<[u8]>>(
    db: &Arc<DbInner>,
    options: &ReadOptions,
    keys: &[K],
    presence_only: bool,
) -> Result<Vec<Option<Vec<u8>>>> {
    let (view, sequence) = read_view(db, options);
    let now = read_clock(db);
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by(|&a, &b| db.icmp.compare_user(keys[a].as_ref(), keys[b].as_ref()));
    // Each distinct key once: `slot[i]` is where key `i`'s answer is decided.
    let mut slot = vec![0; keys.len()];
    let mut lookups: Vec<BatchedLookup> = Vec::with_capacity(keys.len());
    // The caller position of a key of each lookup.
    let mut lookup_keys = Vec::with_capacity(keys.len());
    let mut previous: Option<&[u8]> = None;
    for &i in &order {
        let key = keys[i].as_ref();
        if previous.is_some_and(|p| db.icmp.compare_user(p, key) == std::cmp::Ordering::Equal) {
            slot[i] = lookups.len() - 1;
            continue;
        }
        previous = Some(key);
        slot[i] = lookups.len();
        let read = PointRead {
            covered: None,
            now,
            presence_only,
        };
        lookups.push(BatchedLookup::new(lookup_key(key, sequence), read));
        lookup_keys.push(i);
    }
    let lookups = view.version.get_many(
        options.block_reads(),
        lookups,
        BatchSources {
            memtables: view.memtables().cloned().collect(),
            sequence,
            table_cache: Arc::clone(&db.table_cache),
        },
        options.get_many_parallel,
    )?;
    let mut compaction_wanted = false;
    let answers: Vec<Option<Stored<'static>>> = lookups
        .into_iter()
        .map(|lookup| {
            compaction_wanted |= view.version.charge_seek(lookup.charge);
            match lookup.result {
                Some(TableLookup::Found(stored)) => Some(stored),
                _ => None,
            }
        })
        .collect();
    if compaction_wanted {
        let _state = db.state.lock();
        db.bg_work.notify_all();
    }
    // Pointers are resolved in key order, each distinct key once; not at all for presence.
    let mut values = Vec::with_capacity(answers.len());
    for (answer, &i) in answers.into_iter().zip(&lookup_keys) {
        values.push(
            answer
                .map(|stored| match presence_only {
                    true => Ok(Vec::new()),
                    false => resolve(db, options, keys[i].as_ref(), stored).map(Cow::into_owned),
                })
                .transpose()?,
        );
    }
    // Each distinct key's value goes to its last caller position; earlier ones get copies.
    let mut last_use = vec![usize::MAX; values.len()];
    for (i, &s) in slot.iter().enumerate() {
        last_use[s] = i;
    }
    Ok(slot
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            if last_use[s] == i {
                values[s].take()
            } else {
                values[s].clone()
            }
        })
        .collect())
}

/// A user iterator over every source, as of the read options' snapshot (or now); with
/// `read_values` false it never reads a value file (see [`DbIterator::keys_only`]).
pub(crate) fn new_iterator(
    db: &Arc<DbInner>,
    options: &ReadOptions,
    read_values: bool,
) -> DbIterator {
    let (view, sequence) = read_view(db, options);
    let version = &view.version;
    // The memtables, each level-0 table, one cursor per other non-empty level.
    let sources =
        2 + version.files[0].len() + version.files[1..].iter().filter(|f| !f.is_empty()).count();
    let mut children: Vec<Box<dyn InternalIterator>> = Vec::with_capacity(sources);
    // Per source of range tombstones, the first child older than it (`DbIter`'s skips).
    let mut older_from = SourceOrder::default();
    children.push(Box::new(view.mem.iter()));
    if let Some(imm) = &view.imm {
        children.push(Box::new(imm.iter()));
    }
    older_from.tables = children.len();
    let block_reads = options.block_reads();
    for file in &version.files[0] {
        match db
            .table_cache
            .iter(block_reads, file.number(), file.meta.file_size)
        {
            Ok(iter) => children.push(Box::new(iter)),
            Err(e) => children.push(Box::new(crate::iter::ErrorIter::new(e))),
        }
    }
    for (level, files) in version.files.iter().enumerate().skip(1) {
        older_from.levels[level] = children.len();
        if !files.is_empty() {
            children.push(Box::new(LevelIter::new(
                db.icmp.clone(),
                LevelFiles::Level(Arc::clone(version), level),
                Arc::clone(&db.table_cache),
                block_reads,
            )));
        }
    }
    let tombstones = if db.options.range_deletes {
        range_tombstones(db, block_reads, &view, &older_from).unwrap_or_else(|e| {
            // A table whose tombstones cannot be read: the iterator fails with why.
            children.push(Box::new(crate::iter::ErrorIter::new(e)));
            Vec::new()
        })
    } else {
        Vec::new()
    };
    let merged = merging_iterator(db.icmp.clone(), children);
    let mut iter = DbIter::new(
        merged,
        db.icmp.clone(),
        sequence,
        options.lower_bound.clone(),
        options.upper_bound.clone(),
    );
    iter.set_range_tombstones(tombstones);
    if db.options.expiring_keys {
        iter.set_clock(Arc::clone(&db.env));
    }
    // Reads sampled while iterating charge seeks, so hot overlapping ranges get compacted.
    let version = Arc::clone(&view.version);
    let weak_db = Arc::downgrade(db);
    iter.set_read_sampler(
        Box::new(move |internal_key, _bytes| {
            if version.record_read_sample(internal_key) {
                if let Some(db) = weak_db.upgrade() {
                    let _state = db.state.lock();
                    db.bg_work.notify_all();
                }
            }
        }),
        db.env.now_micros() ^ sequence,
    );
    let value_files = read_values.then(|| Arc::clone(&db.value_files));
    DbIterator::new(iter, view.into_arc(), value_files, options.memory_only)
}

/// Where the sources of an iterator's merge start, in its child order: the memtable is child
/// 0 and the immutable memtable (if any) child 1, then the level-0 tables from `tables`, then
/// one child per non-empty deeper level, level `L`'s at `levels[L]` (where the next level's
/// would be when `L` is empty).
#[derive(Default)]
struct SourceOrder {
    tables: usize,
    levels: [usize; NUM_LEVELS],
}

impl SourceOrder {
    /// The first child whose entries are all older than the tombstones of level `level`
    /// where those cover (the levels' invariant: newer data above, tombstones included).
    fn older_than_level(&self, level: usize) -> usize {
        self.levels.get(level + 1).copied().unwrap_or(usize::MAX)
    }
}

/// Every source's range tombstones for an iterator, each list with the first child of the
/// merge that is older than it (see `SourceOrder`): the memtable's, the immutable memtable's,
/// then the tables', merged per level once per super version.
fn range_tombstones(
    db: &DbInner,
    reads: BlockReads,
    view: &SuperVersion,
    order: &SourceOrder,
) -> Result<Vec<(Arc<Fragments>, usize)>> {
    let mut lists: Vec<(Arc<Fragments>, usize)> = Vec::new();
    if let Some(tombstones) = view.mem.range_tombstones() {
        lists.push((tombstones, 1)); // every other source is older than the memtable
    }
    if let Some(tombstones) = view.imm.as_ref().and_then(|imm| imm.range_tombstones()) {
        lists.push((tombstones, order.tables));
    }
    let per_level = match view.table_tombstones.get() {
        Some(per_level) => Arc::clone(per_level),
        None => {
            let mut per_level = Vec::new();
            for (level, files) in view.version.files.iter().enumerate() {
                let mut per_table = Vec::new();
                for file in files {
                    let table =
                        db.table_cache
                            .find_table_for(reads, file.number(), file.meta.file_size)?;
                    if let Some(tombstones) = table.range_tombstones() {
                        per_table.push(Arc::clone(tombstones));
                    }
                }
                if !per_table.is_empty() {
                    let merged = Fragments::merge(&db.icmp, per_table.iter().map(|t| &**t));
                    per_level.push((level, Arc::new(merged)));
                }
            }
            Arc::clone(view.table_tombstones.get_or_init(|| per_level.into()))
        }
    };
    lists.extend(
        per_level
            .iter()
            .filter(|(_, tombstones)| !tombstones.is_empty())
            .map(|(level, tombstones)| (Arc::clone(tombstones), order.older_than_level(*level))),
    );
    Ok(lists)
}
