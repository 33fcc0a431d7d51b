//! Batched point lookups through a read view's memtables and the tables of its version
//! (`DB::get_many`).
//!
//! Contract: the answer for each key is exactly what a single lookup would give it (the
//! memtables first, newest first, then [`Version::get`]: the same files consulted in the same
//! order, the same range tombstones joined, the same expiry decision). What a batch saves:
//! the lookups go through the tree level by level, level 0
//! file by file, so each table is found in the table cache once per run of keys it holds
//! rather than once per key; keys come in ascending order, so keys that fall in the same data
//! block follow one another and the block is read once for all of them
//! ([`Table::get_in`]); and each table's filter is asked before any block of it is read.
//!
//! Threads: with `parallel`, a batch of at least twice [`GET_MANY_KEYS_PER_THREAD`] keys is
//! cut into runs of contiguous sorted keys (that many or a few more each) and offered to the
//! engine's helper threads ([`helpers`]: one per core but the caller's, kept awake a moment
//! between batches). The caller and the helpers claim runs in turn; each run goes through
//! the memtables and then the tree as above on its own (runs share nothing but the
//! memtables and the table and block caches, so every answer is the same as on one thread),
//! which leaves the caller only sorting the keys and collecting the answers. When the caller has no run left to claim, it takes
//! each run back: a run a helper is looking up it waits for; a run a helper claimed but has
//! not started it looks up itself. So the caller never waits for a helper to wake, and a
//! batch no helper reaches costs only the offer. A panic in a run (a user comparator's) is
//! raised on the caller.

use std::cmp::Ordering;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
use std::sync::Arc;
use std::thread;

use parking_lot::Mutex;

use self::helpers::{Batch, Helpers};

use super::memtable_read::memtables_get;
use super::table_cache::TableCache;
use super::version::{find_file, FileRef, PointRead, SeekCharge, TableLookup, Version};
use super::NUM_LEVELS;
use crate::error::Result;
use crate::memtable::MemTable;
use crate::table::reader::{ReadBudget, RecentBlock, Table};
use crate::table::BlockReads;
use crate::util::internal_key::{user_key, SequenceNumber};

mod helpers;

/// Fewest keys of a run a `get_many` lets another thread look up: handing a run over costs
/// about as much as a few lookups of cached blocks, and neighbouring keys cut into two runs
/// may read the block they share twice.
pub const GET_MANY_KEYS_PER_THREAD: usize = 16;

/// One key of a batched lookup.
pub(crate) struct BatchedLookup {
    /// The user key with the read's sequence trailer.
    pub(crate) lookup_key: Vec<u8>,
    /// How to read the key (the memtables' covering tombstone joins it).
    pub(crate) read: PointRead,
    /// The answer once a memtable or table decides it; `None` when none does.
    pub(crate) result: Option<TableLookup>,
    /// The first file whose data block was searched for this key, and the one charged a
    /// seek (see [`SeekCharge`]).
    searched: Option<(usize, FileRef)>,
    pub(crate) charge: SeekCharge,
}

impl BatchedLookup {
    pub(crate) fn new(lookup_key: Vec<u8>, read: PointRead) -> BatchedLookup {
        BatchedLookup {
            lookup_key,
            read,
            result: None,
            searched: None,
            charge: SeekCharge::default(),
        }
    }

    /// Notes that another file is consulted for this key: the file whose block was searched
    /// in vain before, if any, is charged a seek.
    fn consulting(&mut self) {
        if self.charge.file.is_none() {
            self.charge.file = self.searched.take();
        }
    }

    /// Notes that a data block of `file` of `level` was searched for this key.
    fn searched(&mut self, level: usize, file: &FileRef) {
        if self.charge.file.is_none() && self.searched.is_none() {
            self.searched = Some((level, Arc::clone(file)));
        }
    }
}

/// What a batch reads besides its version's tables.
pub(crate) struct BatchSources {
    /// The read view's memtables, newest first.
    pub(crate) memtables: Vec<Arc<MemTable>>,
    /// The sequence number the batch reads at.
    pub(crate) sequence: SequenceNumber,
    pub(crate) table_cache: Arc<TableCache>,
}

/// One run of a batch's sorted keys (see the module documentation).
struct Run {
    lookups: Vec<BatchedLookup>,
    /// `None` until looked up; then how it went (`Err`: a panic's payload).
    outcome: Option<thread::Result<Result<()>>>,
}

/// A batch's runs, shared by the caller and the helpers.
struct SharedRuns {
    version: Arc<Version>,
    sources: BatchSources,
    reads: BlockReads,
    runs: Vec<Mutex<Run>>,
    /// The next run to claim (claims past the end find nothing).
    next: AtomicUsize,
}

impl Batch for SharedRuns {
    fn claim_runs(&self) {
        while let Some(run) = self
            .runs
            .get(self.next.fetch_add(1, AtomicOrdering::Relaxed))
        {
            self.look_up(&mut run.lock());
        }
    }

    fn has_unclaimed(&self) -> bool {
        self.next.load(AtomicOrdering::Relaxed) < self.runs.len()
    }
}

impl SharedRuns {
    /// Looks `run` up, unless it has been.
    fn look_up(&self, run: &mut Run) {
        if run.outcome.is_none() {
            let lookups = &mut run.lookups;
            run.outcome = Some(panic::catch_unwind(AssertUnwindSafe(|| {
                self.version
                    .get_many_on_this_thread(self.reads, lookups, &self.sources)
            })));
        }
    }
}

/// The table last used by a run of lookups, with the block it read last.
struct RecentTable {
    number: u64,
    table: Arc<Table>,
    block: RecentBlock,
}

impl Version {
    /// Looks every key of `lookups` up in `sources`' memtables and then this version's tables,
    /// with `parallel` helped by the helper threads (see the module documentation); `lookups`
    /// are sorted by user key and hold each user key once. Returns them in the same order, each holding its answer (`result`,
    /// `None` meaning absent) and its seek charge. Of several runs that fail, the error of the
    /// first in key order is returned.
    pub(crate) fn get_many(
        self: &Arc<Self>,
        reads: BlockReads,
        mut lookups: Vec<BatchedLookup>,
        sources: BatchSources,
        parallel: bool,
    ) -> Result<Vec<BatchedLookup>> {
        let helpers = match Helpers::get() {
            Some(helpers) if parallel && lookups.len() >= 2 * GET_MANY_KEYS_PER_THREAD => helpers,
            _ => {
                self.get_many_on_this_thread(reads, &mut lookups, &sources)?;
                return Ok(lookups);
            }
        };
        let total = lookups.len();
        // Runs of `total / count` keys, or one more.
        let count = total / GET_MANY_KEYS_PER_THREAD;
        let mut keys = lookups.into_iter();
        let runs: Vec<Mutex<Run>> = (0..count)
            .map(|i| {
                let size = total * (i + 1) / count - total * i / count;
                Mutex::new(Run {
                    lookups: keys.by_ref().take(size).collect(),
                    outcome: None,
                })
            })
            .collect();
        let shared = Arc::new(SharedRuns {
            version: Arc::clone(self),
            sources,
            reads,
            runs,
            next: AtomicUsize::new(0),
        });
        let batch: Arc<dyn Batch> = shared.clone();
        let wanted = (count - 1).min(helpers.threads());
        helpers.post(&batch, wanted);
        shared.claim_runs();
        helpers.withdraw(&batch);
        let mut answered = Vec::with_capacity(total);
        let mut result = Ok(());
        for run in &shared.runs {
            let mut run = run.lock();
            shared.look_up(&mut run);
            if let Some(outcome) = run.outcome.take() {
                let outcome = outcome.unwrap_or_else(|payload| panic::resume_unwind(payload));
                result = result.and(outcome);
            }
            answered.append(&mut run.lookups);
        }
        result.map(|()| answered)
    }

    /// [`Version::get_many`] on the calling thread.
    fn get_many_on_this_thread(
        &self,
        reads: BlockReads,
        lookups: &mut [BatchedLookup],
        sources: &BatchSources,
    ) -> Result<()> {
        for lookup in lookups.iter_mut() {
            let key = user_key(&lookup.lookup_key);
            let decided =
                memtables_get(&sources.memtables, key, sources.sequence, &mut lookup.read)?;
            lookup.result = decided.map(|value| {
                value.map_or(TableLookup::Deleted, |stored| {
                    TableLookup::Found(stored.into_owned())
                })
            });
        }
        let table_cache = &*sources.table_cache;
        let mut scratch = Vec::new();
        let covers = |file: &FileRef, ukey: &[u8]| {
            self.icmp().compare_user(ukey, file.smallest_user_key()) != Ordering::Less
                && self.icmp().compare_user(ukey, file.largest_user_key()) != Ordering::Greater
        };
        // Level 0: every file whose range covers a key, newest file first for every key. Each
        // deeper level: the one file that may hold a key's version at its sequence.
        let passes = self.files[0]
            .iter()
            .map(|file| (0, std::slice::from_ref(file)))
            .chain((1..NUM_LEVELS).map(|level| (level, self.files[level].as_slice())));
        for (level, files) in passes {
            let mut recent = None;
            for lookup in lookups.iter_mut().filter(|l| l.result.is_none()) {
                let index = match level {
                    0 => 0,
                    _ => find_file(self.icmp(), files, &lookup.lookup_key),
                };
                let Some(file) = files
                    .get(index)
                    .filter(|file| covers(file, user_key(&lookup.lookup_key)))
                else {
                    continue;
                };
                self.visit(
                    level,
                    file,
                    lookup,
                    reads,
                    table_cache,
                    &mut recent,
                    &mut scratch,
                )?;
            }
        }
        Ok(())
    }

    /// Looks `lookup` up in `file`, reusing the table (and its last block) `recent` holds
    /// when it is that file.
    #[allow(clippy::too_many_arguments)] // the batch's shared state, passed down one level
    fn visit(
        &self,
        level: usize,
        file: &FileRef,
        lookup: &mut BatchedLookup,
        reads: BlockReads,
        table_cache: &TableCache,
        recent: &mut Option<RecentTable>,
        scratch: &mut Vec<u8>,
    ) -> Result<()> {
        lookup.consulting();
        let recent = match recent {
            Some(r) if r.number == file.number() => r,
            _ => recent.insert(RecentTable {
                number: file.number(),
                table: table_cache.find_table_for(reads, file.number(), file.meta.file_size)?,
                block: RecentBlock::default(),
            }),
        };
        lookup.result = self.get_in_table(
            &recent.table,
            file.number(),
            reads,
            &lookup.lookup_key,
            &mut lookup.read,
            scratch,
            &mut recent.block,
            // A batch is timed as a whole: any of its lookups may build a table's aid.
            &mut ReadBudget::default(),
        )?;
        if recent.block.searched() {
            lookup.searched(level, file);
        }
        Ok(())
    }
}
