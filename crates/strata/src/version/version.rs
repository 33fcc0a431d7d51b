//! A `Version`: the immutable set of live tables, per level, at one point in time.
//!
//! Invariants:
//! - Level 0 files may overlap one another; they are kept newest first (highest file number
//!   first), which is the order reads must consult them in.
//! - Files of every level >= 1 are sorted by smallest key and do not overlap.
//!
//! Thread safety: a `Version` never changes once built and is shared as `Arc<Version>` by the
//! version set, readers and iterators; holding the `Arc` keeps its files from being deleted.
//! The only mutable parts are the per-file seek budgets and the seek-compaction candidate,
//! both updated atomically by readers.

use std::cmp::Ordering;
use std::sync::atomic::{AtomicI64, Ordering as AtomicOrdering};
use std::sync::Arc;

use parking_lot::Mutex;

use super::edit::FileMetaData;
use super::table_cache::TableCache;
use super::NUM_LEVELS;
use crate::error::{Error, Result};
use crate::table::reader::{ReadBudget, RecentBlock, Table};
use crate::table::BlockReads;
use crate::util::entry::{visible, Stored};
use crate::util::internal_key::{
    parse_internal_key, trailer, user_key, InternalKeyComparator, SequenceNumber,
};

/// A table file as a version sees it: its metadata plus the reads it may still absorb before a
/// seek-triggered compaction is asked for.
#[derive(Debug)]
pub(crate) struct LiveFile {
    pub(crate) meta: FileMetaData,
    /// Decremented by reads that had to look past this file; at zero the file becomes the
    /// seek-compaction candidate.
    pub(crate) allowed_seeks: AtomicI64,
}

impl LiveFile {
    pub(crate) fn new(meta: FileMetaData) -> LiveFile {
        // One seek costs about as much as compacting 16 KiB (LevelDB's reasoning: a 1 MB
        // compaction does ~25 MB of I/O, a seek ~10 ms ~ 40 KB of transfer); at least 100.
        let allowed = (meta.file_size / 16384).max(100) as i64;
        LiveFile {
            meta,
            allowed_seeks: AtomicI64::new(allowed),
        }
    }

    pub(crate) fn number(&self) -> u64 {
        self.meta.number
    }

    pub(crate) fn smallest_user_key(&self) -> &[u8] {
        user_key(&self.meta.smallest)
    }

    pub(crate) fn largest_user_key(&self) -> &[u8] {
        user_key(&self.meta.largest)
    }
}

/// Shared handle to a live file.
pub(crate) type FileRef = Arc<LiveFile>;

/// The outcome of a point lookup in the tables of a version.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum TableLookup {
    /// The key's value (the user's bytes — empty for a [`PointRead::presence_only`] read — or a
    /// pointer to them).
    Found(Stored<'static>),
    /// The key is deleted, deleted by a range tombstone, or expired.
    Deleted,
    Absent,
    /// The entry where the key should be does not parse as an internal key.
    Corrupt,
}

/// What a point lookup brings to the tables from the sources above them.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PointRead {
    /// The newest range tombstone covering the key at the read's sequence in the memtables.
    pub(crate) covered: Option<SequenceNumber>,
    /// The read's time (microseconds since the Unix epoch), for expiring values.
    pub(crate) now: u64,
    /// Only whether the key has a value is asked: a value found is not copied out
    /// ([`TableLookup::Found`] then holds an empty value, or the pointer, never resolved).
    pub(crate) presence_only: bool,
}

/// What a lookup learned about file reads, for seek-triggered compaction.
///
/// LevelDB charges a seek to the first file a lookup consults whenever it goes on to another
/// file, so that a file read past often enough is compacted into the level below: its reads
/// cost a disk seek each. Strata charges the first file whose data block the lookup searched,
/// when it goes on to another file. A file whose filter answered (or below whose last block
/// the key lies) cost the lookup no block read, so a compaction would save it nothing: read-only
/// work with filters sets off such compactions only for the filters' false positives (about
/// 1% of lookups at 10 bits per key), not for every lookup that passes a file.
#[derive(Debug, Default)]
pub(crate) struct SeekCharge {
    /// The first file whose data block was searched, when the lookup went on to another file.
    pub(crate) file: Option<(usize, FileRef)>,
}

/// One immutable generation of the LSM tree's table layout.
#[derive(Debug)]
pub(crate) struct Version {
    pub(crate) files: [Vec<FileRef>; NUM_LEVELS],
    /// Level whose compaction is most needed, and how much (>= 1 means needed).
    pub(crate) compaction_level: usize,
    pub(crate) compaction_score: f64,
    /// A file whose seek budget ran out, with its level.
    pub(crate) seek_candidate: Mutex<Option<(usize, FileRef)>>,
    icmp: InternalKeyComparator,
}

impl Version {
    pub(crate) fn new(icmp: InternalKeyComparator, files: [Vec<FileRef>; NUM_LEVELS]) -> Version {
        Version {
            files,
            compaction_level: 0,
            compaction_score: -1.0,
            seek_candidate: Mutex::new(None),
            icmp,
        }
    }

    pub(crate) fn icmp(&self) -> &InternalKeyComparator {
        &self.icmp
    }

    pub(crate) fn num_files(&self, level: usize) -> usize {
        self.files.get(level).map_or(0, Vec::len)
    }

    pub(crate) fn level_bytes(&self, level: usize) -> u64 {
        self.files
            .get(level)
            .map_or(0, |files| total_file_size(files))
    }

    /// Looks `lookup_key` (user key + sequence trailer) up in the tables, newest data first.
    ///
    /// `read` carries what the newer sources (the memtables) found: the newest range tombstone
    /// covering the key at the read's sequence, if any, and the read's time for expiring
    /// values. Each table's own tombstones join it as the lookup goes down: an entry older
    /// than it is deleted, and a table that holds no entry of the key ends the lookup once a
    /// tombstone covers it (everything below is older still).
    pub(crate) fn get<'v>(
        &'v self,
        reads: BlockReads,
        lookup_key: &[u8],
        read: PointRead,
        table_cache: &TableCache,
        charge: &mut SeekCharge,
    ) -> Result<TableLookup> {
        let mut read = read;
        let mut searched: Option<(usize, &'v FileRef)> = None;
        let mut result = TableLookup::Absent;
        // One key buffer for every block this lookup searches.
        let mut scratch = Vec::with_capacity(lookup_key.len() + 16);
        // What this read has paid for of its tables' first-lookup work (see `ReadBudget`).
        let mut budget = ReadBudget::default();
        let mut visit = |level: usize, file: &'v FileRef| -> Result<bool> {
            if charge.file.is_none() {
                if let Some((level, previous)) = searched.take() {
                    // A block searched in vain: charge its file (see `SeekCharge`).
                    charge.file = Some((level, Arc::clone(previous)));
                }
            }
            let table = table_cache.find_table_spending(
                reads,
                file.number(),
                file.meta.file_size,
                &mut budget,
            )?;
            let mut recent = RecentBlock::default();
            let outcome = self.get_in_table(
                &table,
                file.number(),
                reads,
                lookup_key,
                &mut read,
                &mut scratch,
                &mut recent,
                &mut budget,
            )?;
            if recent.searched() && charge.file.is_none() {
                searched.get_or_insert((level, file));
            }
            match outcome {
                Some(found) => {
                    result = found;
                    Ok(false)
                }
                None => Ok(true),
            }
        };
        self.for_each_overlapping(lookup_key, &mut visit)?;
        Ok(result)
    }

    /// One step of a point lookup of `lookup_key`: what table `number` says of it. The
    /// table's range tombstones join `read.covered`; `Some` is the answer (the key's newest
    /// entry at the lookup's sequence, or `Deleted` when a tombstone covers it and the table
    /// holds no entry of it), `None` sends the lookup on to older tables. `scratch` is the
    /// lookup's key buffer, `recent` the block read last in this table (see
    /// [`Table::get_in`]).
    #[allow(clippy::too_many_arguments)] // the state of one lookup, each part reused by the caller
    pub(super) fn get_in_table(
        &self,
        table: &Table,
        number: u64,
        reads: BlockReads,
        lookup_key: &[u8],
        read: &mut PointRead,
        scratch: &mut Vec<u8>,
        recent: &mut RecentBlock,
        budget: &mut ReadBudget,
    ) -> Result<Option<TableLookup>> {
        let ukey = user_key(lookup_key);
        if let Some(tombstones) = table.range_tombstones() {
            let sequence = trailer(lookup_key) >> 8;
            read.covered = read.covered.max(tombstones.newest_covering(ukey, sequence));
        }
        let covered = read.covered;
        let outcome = table
            .get_in(reads, lookup_key, scratch, recent, budget, |key, value| {
                match parse_internal_key(key) {
                    Some(parsed)
                        if self.icmp.compare_user(parsed.user_key, ukey) == Ordering::Equal =>
                    {
                        Some(
                            match visible(
                                parsed.value_type,
                                parsed.sequence,
                                value,
                                covered,
                                read.now,
                            ) {
                                Ok(seen) => match seen.to_stored(read.presence_only) {
                                    Some(stored) => TableLookup::Found(stored.into_owned()),
                                    None => TableLookup::Deleted,
                                },
                                Err(_) => TableLookup::Corrupt,
                            },
                        )
                    }
                    Some(_) => None,
                    None => Some(TableLookup::Corrupt),
                }
            })?
            .flatten();
        match outcome {
            Some(TableLookup::Corrupt) => Err(Error::corruption(format!(
                "unparseable internal key while looking up '{}'",
                ukey.escape_ascii()
            ))
            .in_file(format!("table #{number}"))),
            Some(found) => Ok(Some(found)),
            None if covered.is_some() => Ok(Some(TableLookup::Deleted)),
            None => Ok(None),
        }
    }

    /// Calls `visit(level, file)` for every file that may hold the newest version of
    /// `internal_key`'s user key at or before its sequence, newest first, until `visit` returns
    /// `false`.
    ///
    /// In levels >= 1 the file is found by internal key: one user key's versions may be split
    /// between adjacent files, and only the internal key tells which of them holds the version
    /// visible at the sequence.
    fn for_each_overlapping<'a>(
        &'a self,
        internal_key: &[u8],
        visit: &mut dyn FnMut(usize, &'a FileRef) -> Result<bool>,
    ) -> Result<()> {
        let ukey = user_key(internal_key);
        // Level 0: every file whose range covers the key, newest first (already in that order).
        for file in &self.files[0] {
            if self.icmp.compare_user(ukey, file.smallest_user_key()) != Ordering::Less
                && self.icmp.compare_user(ukey, file.largest_user_key()) != Ordering::Greater
                && !visit(0, file)?
            {
                return Ok(());
            }
        }
        for level in 1..NUM_LEVELS {
            let files = &self.files[level];
            let index = find_file(&self.icmp, files, internal_key);
            if let Some(file) = files.get(index) {
                if self.icmp.compare_user(ukey, file.smallest_user_key()) != Ordering::Less
                    && !visit(level, file)?
                {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// Accounts a read sampled by an iterator at `internal_key`: when two or more files may
    /// hold its user key, the first pays a seek. Returns true when that made it the
    /// seek-compaction candidate.
    pub(crate) fn record_read_sample(&self, internal_key: &[u8]) -> bool {
        let mut first = None;
        let mut overlapping = 0;
        let _ = self.for_each_overlapping(internal_key, &mut |level, file| {
            overlapping += 1;
            if first.is_none() {
                first = Some((level, Arc::clone(file)));
            }
            Ok(overlapping < 2)
        });
        overlapping >= 2 && self.charge_seek(SeekCharge { file: first })
    }

    /// Records a seek charged to a file; returns true when that file just became the
    /// seek-compaction candidate.
    pub(crate) fn charge_seek(&self, charge: SeekCharge) -> bool {
        let Some((level, file)) = charge.file else {
            return false;
        };
        let remaining = file.allowed_seeks.fetch_sub(1, AtomicOrdering::Relaxed) - 1;
        if remaining <= 0 {
            let mut candidate = self.seek_candidate.lock();
            if candidate.is_none() {
                *candidate = Some((level, file));
                return true;
            }
        }
        false
    }

    /// True when some file of `level` overlaps the user-key range `[smallest, largest]`
    /// (`None` = unbounded).
    pub(crate) fn overlap_in_level(
        &self,
        level: usize,
        smallest: Option<&[u8]>,
        largest: Option<&[u8]>,
    ) -> bool {
        let files = &self.files[level];
        if level == 0 {
            return files
                .iter()
                .any(|f| !self.file_outside_range(f, smallest, largest));
        }
        let index = match smallest {
            Some(key) => find_file_by_user_key(&self.icmp, files, key),
            None => 0,
        };
        match files.get(index) {
            Some(file) => {
                !matches!(largest, Some(limit) if self.icmp.compare_user(limit, file.smallest_user_key()) == Ordering::Less)
            }
            None => false,
        }
    }

    fn file_outside_range(
        &self,
        file: &LiveFile,
        smallest: Option<&[u8]>,
        largest: Option<&[u8]>,
    ) -> bool {
        let after = smallest.is_some_and(|s| {
            self.icmp.compare_user(s, file.largest_user_key()) == Ordering::Greater
        });
        let before = largest
            .is_some_and(|l| self.icmp.compare_user(l, file.smallest_user_key()) == Ordering::Less);
        after || before
    }

    /// Files of `level` that overlap the user-key range `[begin, end]` (`None` = unbounded).
    /// For level 0 the range grows to cover every file that overlaps it, transitively, since
    /// level-0 files may overlap each other.
    pub(crate) fn overlapping_inputs(
        &self,
        level: usize,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
    ) -> Vec<FileRef> {
        let mut begin = begin.map(<[u8]>::to_vec);
        let mut end = end.map(<[u8]>::to_vec);
        let mut inputs = Vec::new();
        let mut i = 0;
        let files = &self.files[level];
        while i < files.len() {
            let file = &files[i];
            i += 1;
            if self.file_outside_range(file, begin.as_deref(), end.as_deref()) {
                continue;
            }
            inputs.push(Arc::clone(file));
            if level == 0 {
                // Widen the range and restart if this file sticks out of it.
                let lo = file.smallest_user_key();
                let hi = file.largest_user_key();
                if begin
                    .as_deref()
                    .is_some_and(|b| self.icmp.compare_user(lo, b) == Ordering::Less)
                {
                    begin = Some(lo.to_vec());
                    inputs.clear();
                    i = 0;
                } else if end
                    .as_deref()
                    .is_some_and(|e| self.icmp.compare_user(hi, e) == Ordering::Greater)
                {
                    end = Some(hi.to_vec());
                    inputs.clear();
                    i = 0;
                }
            }
        }
        inputs
    }

    /// A readable summary, one line per level (the `leveldb.sstables` property).
    pub(crate) fn debug_string(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        for (level, files) in self.files.iter().enumerate() {
            let _ = writeln!(out, "--- level {level} ---");
            for f in files {
                let _ = writeln!(
                    out,
                    " {}:{}[{} .. {}]",
                    f.number(),
                    f.meta.file_size,
                    crate::util::internal_key::debug_internal_key(&f.meta.smallest),
                    crate::util::internal_key::debug_internal_key(&f.meta.largest),
                );
            }
        }
        out
    }
}

/// Sum of the sizes of `files`, saturating: sizes come from the manifest, which may be damaged.
pub(crate) fn total_file_size(files: &[FileRef]) -> u64 {
    files
        .iter()
        .fold(0u64, |sum, f| sum.saturating_add(f.meta.file_size))
}

/// Index of the first file (of a sorted, non-overlapping level) whose largest user key is
/// `>= ukey`; `files.len()` when there is none.
pub(crate) fn find_file_by_user_key(
    icmp: &InternalKeyComparator,
    files: &[FileRef],
    ukey: &[u8],
) -> usize {
    files.partition_point(|f| icmp.compare_user(f.largest_user_key(), ukey) == Ordering::Less)
}

/// Index of the first file whose largest internal key is `>= ikey`.
pub(crate) fn find_file(icmp: &InternalKeyComparator, files: &[FileRef], ikey: &[u8]) -> usize {
    files.partition_point(|f| icmp.compare(&f.meta.largest, ikey) == Ordering::Less)
}
