//! Garbage collection of value files (format extension `value-separation`, docs/design.md
//! section 4.4): keeping the value files' total size within a fixed multiple of the value
//! bytes readers may still read, with no option to tune.
//!
//! Accounting (`value_files::delete_unreferenced`, after every flush and compaction): each
//! value file's size, and its *live* bytes: the record bytes of the pointers of the current
//! state that are the newest entry of their key or that a snapshot may read (one merged pass
//! over the memtables and tables, which hold keys and small pointers only). [`plan`] compares
//! the totals against the [`Levels`] of the database's size: once the files hold more than
//! `collect` times the live bytes, the files with the largest share of garbage (size less
//! live bytes) are chosen for collection until what would remain without them is at most
//! `down_to` times, or until they hold a `copy_share` of the live bytes (relocated copies
//! exist beside the originals until those go). A file less than half garbage costs more than
//! a byte copied per byte reclaimed: it is chosen only while the files hold more than `any`
//! times the live bytes (the write amplification of collection falls steeply with the garbage
//! share of what it collects, and so with the level the files are kept at).
//! The file being appended to is never chosen (it is closed first when its garbage is what
//! keeps the files above the threshold: [`cut_current_file`]), nor one an older state (an
//! open iterator or read) still reaches: its values would be copied while it stays for that
//! reader.
//!
//! Rewriting ([`pick_compaction`], before any other compaction): every table of the current
//! version pointing into a chosen file (each table's pointers are known per file). When an
//! upper level holds keys of the table's range, that level's files there are compacted into
//! the next level first, so the entries newer ones shadow are dropped, not relocated; a
//! level-0 table goes to level 1; then the table is rewritten in place (its outputs stay in
//! its level, `compaction::picker::compact_range_in_place`).
//!
//! Relocation ([`Relocation`]): every compaction, chosen or not, copies the value of each entry
//! it writes whose pointer names a file being collected to the current value file of
//! `Lane::Relocations` (files of their own, apart from those new values go to: see
//! `vlog::Lane`) and writes the new pointer under the same key and sequence number, so
//! snapshots and hidden versions read exactly what they read before. The relocated values are
//! synced before the compaction's tables are installed, so an installed pointer always names a
//! durable value; a crash before the install leaves the copies as garbage of that file, and the
//! old pointers in place.
//!
//! A chosen file is deleted like any other, once no entry of any live super version points
//! into it (`value_files.rs`): iterators and reads holding older versions keep it meanwhile.
//!
//! Keeping up: writes wait (as for a full level 0) while the files hold more than
//! `writes_wait` times the live bytes and tables are left to rewrite (or the pass
//! deleting the chosen files runs: [`Collection::writes_wait`]), and the memtable is flushed
//! once per plan then (so garbage that memtable entries shadow can be compacted away); and
//! when the oldest snapshot is released past entries it alone kept live
//! ([`Collection::replan_at`]), the background thread redoes the plan before more writes are
//! taken. Plans are only as fresh as the last pass, which can lag the writes on a busy
//! machine: writes also wait for a new plan once what they appended since the last one could
//! take the files past `grown` times ([`Collection::outgrown`]), and once
//! writes stop a background thread flushes the memtable a plan waits for
//! (`write::switch_memtable_for_collection`). A memtable is full once the values separated
//! from its pointers pass a sixteenth of the live bytes ([`memtable_value_limit`];
//! `MemTable::separated_bytes`), so superseded values waiting in memtables for a flush stay
//! a small share; files are cut at a sixteenth of the live bytes ([`value_file_size`]), so the
//! file being written holds little and a collection's unit is small.
//! tests/value_separation_gc.rs measures the bound.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use parking_lot::Mutex;

use super::{value_files, DbInner, DbState};
use crate::compaction::{picker, Compaction};
use crate::error::Result;
use crate::util::internal_key::{ParsedInternalKey, ValueType};
use crate::version::NUM_LEVELS;
use crate::vlog::{Lane, StoredValue, ValuePointer};

/// Collection's levels, as multiples of the live bytes (numerators over 100), for a database
/// of some size: [`Levels::of`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Levels {
    /// Collection starts when the value files hold more than this.
    pub(crate) collect: u64,
    /// Files are chosen until what remains without them is at most this.
    pub(crate) down_to: u64,
    /// Files less than half garbage are chosen only while the files hold more than this:
    /// below it, only files at least half garbage.
    pub(crate) any: u64,
    /// The chosen files hold at most this fraction (1 / it) of the live bytes (beyond the
    /// first file): their copies exist beside them until they go, so this bounds that
    /// overshoot.
    pub(crate) copy_share: u64,
    /// Writes wait for garbage collection while the value files hold more than this and
    /// tables are left to rewrite.
    pub(crate) writes_wait: u64,
    /// Writes also wait for a new plan once what they appended since the last one could take
    /// the files past this: see [`Collection::outgrown`].
    pub(crate) grown: u64,
    /// Growth of at least this fraction (1 / it) of the live bytes is allowed between plans.
    pub(crate) least_room: u64,
    /// Whether the room between plans is counted as if each byte appended had also taken a
    /// live byte away: see [`Collection::headroom`].
    pub(crate) room_margin: bool,
}

impl Levels {
    /// From [`SMALL_DATABASE`] live bytes on: garbage gathers further before it is collected,
    /// so the files collection copies from are more garbage (at 1.10x the whole allowance of
    /// garbage was less than two files, and the files chosen a quarter garbage).
    pub(crate) const LARGE: Levels = Levels {
        collect: 120,
        down_to: 113,
        any: 125,
        copy_share: 20,
        writes_wait: 128,
        grown: 145,
        least_room: 16,
        room_margin: true,
    };

    /// Under [`SMALL_DATABASE`] live bytes, where [`MIN_VALUE_FILE_SIZE`] (the file being
    /// written, a memtable's superseded values, the growth allowed between plans) is more than
    /// a sixteenth of the live bytes, and the margin to the bound must take it: the levels of
    /// a large database took 1.7 MB of 256-300 B values past 1.5x in 15 of 45 runs of a
    /// review (up to 2.6x) against 2 of 47 with these.
    pub(crate) const SMALL: Levels = Levels {
        collect: 110,
        down_to: 103,
        any: 115,
        copy_share: 10,
        writes_wait: 120,
        grown: 135,
        least_room: 8,
        room_margin: false,
    };

    /// The levels for `referenced` live bytes.
    pub(crate) fn of(referenced: u64) -> &'static Levels {
        if referenced >= SMALL_DATABASE {
            &Levels::LARGE
        } else {
            &Levels::SMALL
        }
    }
}

/// Live bytes from which a database takes [`Levels::LARGE`]: where [`MIN_VALUE_FILE_SIZE`] is
/// a sixteenth of them.
const SMALL_DATABASE: u64 = 16 * MIN_VALUE_FILE_SIZE;
/// Smallest size a value file is cut at, the fewest separated bytes a memtable takes, and the
/// least growth writes allow themselves between plans. Each is a share of the live bytes a
/// small database's bound must absorb: at 1 MiB, databases under about 5 MB of live value
/// bytes went past 1.5x (a review's stress runs: 800 keys of about 4 KB, 2 of 8 runs, up to
/// 1.9x); at 256 KiB, 400 keys (1.7 MB) went past in 3 of 60 runs of another review (up to
/// 1.6x), in small databases right after a reader's release.
const MIN_VALUE_FILE_SIZE: u64 = 256 << 10;

/// Record bytes per value file.
pub(crate) type Refs = BTreeMap<u64, u64>;

/// What readers of the current state may still read in the value files (see
/// `value_files::needed`).
#[derive(Debug, Default)]
pub(crate) struct Needed {
    /// Record bytes per file of the pointers some reader may read.
    pub(crate) live: Refs,
    /// The lowest sequence number of a newer entry that only a snapshot keeps a pointer
    /// needed for.
    pub(crate) replan_at: Option<u64>,
    /// Pointers (file, offset) no reader can read: shadowed by a newer entry every reader sees.
    pub(crate) dead: HashSet<(u64, u64)>,
}

/// What garbage collection is doing; kept in the state (under its mutex).
#[derive(Debug, Default)]
pub(crate) struct Collection {
    /// Value files being collected: compactions relocate the values they point to.
    pub(crate) files: BTreeSet<u64>,
    /// Tables of the current version pointing into those files, still to rewrite.
    pub(crate) tables: BTreeSet<u64>,
    /// Those of `tables` a rewrite in place reclaims space with: holding a pointer into those
    /// files that some reader may read (the rewrite relocates it) or one a newer entry in the
    /// same table hides from every reader (the rewrite drops it). The others hold only garbage
    /// there that entries outside them hide (in a memtable when no upper level holds them);
    /// they wait for those entries to be compacted down onto them, which drops the garbage.
    pub(crate) relocating: BTreeSet<u64>,
    /// Pointers into those files no reader can read: never relocated.
    pub(crate) dead: Arc<HashSet<(u64, u64)>>,
    /// Whether the files held more than `writes_wait` ([`Levels`]) times the live bytes.
    pub(crate) over_bound: bool,
    /// Whether a memtable flush was asked for this plan ([`Collection::wants_flush`]).
    pub(crate) flush_asked: bool,
    /// The live bytes the plan counted.
    pub(crate) referenced: u64,
    /// A reader released an older state: value files only it reached may go now (the
    /// background thread looks, `DbState::note_released_readers`).
    pub(crate) sweep: bool,
    /// Whether the pass that made the plan found value files that states older than the
    /// current one (held by iterators and reads) reach. Only then can a reader's release free
    /// a file or make one collectable: every change of the files the current state reaches
    /// (a flush, a compaction) is followed by a pass of its own, which sees the replaced
    /// state while a reader still holds it. That pass also looks itself whether the older
    /// states it saw were released by its end: another thread may have noted the release
    /// first, under the plan before, which may have found none (`value_files.rs`). Without
    /// the flag, the release that follows every flush and compaction (the state they
    /// replaced, which no reader held) redid the plan, and writes over the bound waited for
    /// that: in `strata bench`'s 8 KiB `leveledmix`, 71 waits, a tenth of a second of 1.25.
    pub(crate) older_states_hold: bool,
    /// The oldest sequence number a reader may read at from which entries counted live only
    /// for a snapshot would be garbage: once the oldest snapshot is released past it, the
    /// plan is redone before more writes.
    pub(crate) replan_at: Option<u64>,
    /// The job redoing the plan (kept by each new plan).
    pub(crate) replan: Replan,
    /// The value files as the pass that made the plan listed them (a pass that could not plan
    /// still updates it).
    pub(crate) listing: Listing,
    /// Whether an idle background thread asked for this plan to be redone because writes
    /// stopped with the files past the bound ([`Collection::redo_at_rest`]): once per plan.
    pub(crate) redone_at_rest: bool,
}

/// The value files' total size when a pass listed them, and the bytes appended to value files
/// by then (`DbInner::value_bytes_appended`): with the count now, what was appended since.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Listing {
    pub(crate) total: u64,
    pub(crate) appended: u64,
}

/// The background job that redoes the plan once a reader or a snapshot was released
/// ([`Collection::stale`]); one at a time (`db/background.rs`).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Replan {
    /// The job runs.
    pub(crate) running: bool,
    /// Writes wait until it has run: it was asked for by a released snapshot, or by a released
    /// reader while the files are over the bound (what writes waited for until it started).
    pub(crate) writes_wait: bool,
}

impl Collection {
    /// Whether the plan is out of date: a snapshot it counted entries live for, or a reader of
    /// an older state, was released (`smallest_snapshot` is the oldest sequence number a
    /// reader may read at now).
    pub(crate) fn stale(&self, smallest_snapshot: u64) -> bool {
        self.sweep || self.snapshot_released(|| smallest_snapshot)
    }

    /// Whether a snapshot the plan counted entries live for was released (writes then wait
    /// for a new plan). `smallest_snapshot` is asked only when the plan counted one: every
    /// write asks this, and the answer takes the snapshot list's lock.
    pub(crate) fn snapshot_released(&self, smallest_snapshot: impl FnOnce() -> u64) -> bool {
        self.replan_at.is_some_and(|at| smallest_snapshot() >= at)
    }

    /// Whether writes should wait for garbage collection: the value files are over
    /// `writes_wait` ([`Levels`]) and collection is under way: rewriting tables would reclaim
    /// space, or (`replanning`) a pass that deletes the chosen files and redoes this plan is
    /// running. Background threads of their own flush memtables while others rewrite, so
    /// writes are not slowed by collection otherwise: without the second clause they went on
    /// between the last rewrite of a plan and the deletions of its files.
    pub(crate) fn writes_wait(&self, replanning: bool) -> bool {
        self.over_bound && (!self.tables.is_empty() || (replanning && !self.files.is_empty()))
    }

    /// Whether the bytes appended to value files since the plan's listing (`appended` is the
    /// count now) may have taken the files past `grown` ([`Levels`]) times the live
    /// bytes ([`Collection::headroom`]): writes then wait for the next plan. Plans are redone
    /// after every flush and compaction, but on a busy machine the pass doing it can lag the
    /// writes by many memtables (a reproduced 1.6x). Growth of at least a sixteenth of the
    /// live bytes (a memtable's worth; an eighth in a small database) and
    /// [`MIN_VALUE_FILE_SIZE`] is always allowed, so files an older state pins, or a small
    /// database, do not make every write wait for a flush.
    pub(crate) fn outgrown(&self, appended: u64) -> bool {
        let grown = appended.saturating_sub(self.listing.appended);
        let least = self.referenced / self.levels().least_room;
        grown > self.headroom().max(least).max(MIN_VALUE_FILE_SIZE)
    }

    /// The plan's levels.
    fn levels(&self) -> &'static Levels {
        Levels::of(self.referenced)
    }

    /// The most bytes writes can append after the plan's listing: in a small database, what
    /// keeps the files within `grown` times the live bytes the plan counted; in a large one, the
    /// largest `g` with `total + g <= grown * (live - g)`, as if each byte appended had also
    /// taken a live byte away. That is a margin, not a model of overwrites (an overwrite by a
    /// value as large leaves the live bytes as they were): it takes in what the plan's count of
    /// live bytes no longer sees (readers and snapshots released since, superseded values in
    /// memtables). Without it, at the large levels, the test's files ran at 1.38-1.40x when the
    /// engine counted 1.24-1.30x; with it, 1.33-1.35x.
    fn headroom(&self) -> u64 {
        let levels = self.levels();
        let ratio = u128::from(levels.grown);
        let within = (u128::from(self.referenced) * ratio)
            .saturating_sub(u128::from(self.listing.total) * 100);
        let room = if levels.room_margin {
            within / (100 + ratio)
        } else {
            within / 100
        };
        u64::try_from(room).unwrap_or(u64::MAX)
    }

    /// Whether the plan should be redone now that writes stopped (`appended` is the count of bytes
    /// appended, unchanged for a while): once per plan, when what was appended since its listing
    /// may have taken the files past `grown` ([`Levels`]) times the live bytes, with no room
    /// allowed. Writes allow themselves [`Collection::outgrown`]'s room of at least
    /// [`MIN_VALUE_FILE_SIZE`], a large share of a small database's live bytes, and once they stop
    /// no flush or compaction redoes the plan (one rested at 2.1x). Asked for by an idle background
    /// thread, not by the writes: a writer alone ends every write with none behind it, and a plan
    /// whose files an open iterator keeps over the bound was redone, a merged read of every table,
    /// at each of its writes.
    pub(crate) fn redo_at_rest(&self, appended: u64) -> bool {
        let grown = appended.saturating_sub(self.listing.appended);
        !self.redone_at_rest && grown > 0 && grown > self.headroom()
    }

    /// Whether the memtable should be flushed now, once for this plan: the value files are
    /// over `writes_wait` ([`Levels`]) with files chosen whose remaining pointers may be shadowed
    /// by memtable entries (their garbage goes once those are compacted down).
    pub(crate) fn wants_flush(&mut self) -> bool {
        let wanted = self.flush_wanted();
        self.flush_asked |= wanted;
        wanted
    }

    /// Whether [`Collection::wants_flush`] would ask for the flush, without asking.
    pub(crate) fn flush_wanted(&self) -> bool {
        self.over_bound && !self.files.is_empty() && !self.flush_asked
    }
}

/// Whether `total` is more than `ratio` (over 100) times `referenced` bytes.
fn above(total: u64, referenced: u64, ratio: u64) -> bool {
    u128::from(total) * 100 > u128::from(referenced) * u128::from(ratio)
}

/// The size value files are cut at, given the live bytes and the option's maximum: a
/// sixteenth of the live bytes, within `[MIN_VALUE_FILE_SIZE, maximum]`.
pub(crate) fn value_file_size(referenced: u64, maximum: u64) -> u64 {
    (referenced / 16).clamp(MIN_VALUE_FILE_SIZE.min(maximum), maximum)
}

/// Whether the value file being written must be closed so it can be collected: the files
/// (`files`: number, size, and whether another reason keeps them from collection) hold more
/// than `collect` ([`Levels`]) times the live bytes, collecting every other file could not bring
/// them down to `down_to` times, and the file being written holds at least a quarter
/// of a file's size (`cut_at`) of garbage, or the garbage that alone keeps the files above
/// `writes_wait` times. Without this a database whose writes stop (or whose overwrites
/// all land in one file) could rest above the bound for good; with the quarter, a file is not
/// closed over a few bytes, and the second reason covers small databases, whose files are far
/// from full (one rested at 1.5004x with 128 KiB of garbage in a 1 MiB file).
///
/// `current` is the file being written and the record bytes appended to it whose pointers
/// were not in a memtable when the files were listed: those are live, not garbage (counted as
/// garbage, a write in progress closed the files of a small database one after another).
/// `also_written` are the other files being written (the other lane's, `value_files::Lane`),
/// whose pending bytes `live` counts: when their garbage and this file's together keep the
/// files above `writes_wait`, this one is closed if it holds any. Judged each alone, two files
/// being written with about 54 KB of garbage each left a small database at rest at 1.51x for
/// good (a test's 312 KB of files for 204 KB live: without either file's garbage, still 1.26x).
pub(crate) fn cut_current_file(
    current: (u64, u64),
    also_written: &[u64],
    files: &[(u64, u64, bool)],
    total: u64,
    live: &Refs,
    cut_at: u64,
) -> bool {
    let (current, pending) = current;
    let referenced = live.values().sum::<u64>() + pending;
    let garbage = |number: u64, size: u64| size.saturating_sub(*live.get(&number).unwrap_or(&0));
    let levels = Levels::of(referenced);
    if !above(total, referenced, levels.collect) {
        return false;
    }
    let mut others = 0;
    let mut mine = 0;
    let mut theirs = 0;
    for &(number, size, held) in files {
        if number == current {
            mine = garbage(number, size).saturating_sub(pending);
        } else if also_written.contains(&number) {
            theirs += garbage(number, size);
        } else if !held {
            others += garbage(number, size);
        }
    }
    let collectable = total - others;
    let keeps_above = mine > 0
        && above(collectable, referenced, levels.writes_wait)
        && !above(collectable - mine - theirs, referenced, levels.writes_wait);
    above(collectable, referenced, levels.down_to) && (mine >= cut_at / 4 || keeps_above)
}

/// The most separated value bytes a memtable takes, given the live bytes: a sixteenth of
/// them, at least [`MIN_VALUE_FILE_SIZE`].
pub(crate) fn memtable_value_limit(live: u64) -> u64 {
    (live / 16).max(MIN_VALUE_FILE_SIZE)
}

/// The next [`Collection`]: `files` are the value files with their sizes (those being written
/// to left out) and `total` the size of all; `needed` what readers of the current state may
/// still read; `tables` the current version's tables with the record bytes they point to per
/// file; `collecting` the files chosen before (those still present stay chosen: tables may be
/// left to rewrite, or a version still holds them). [`Collection::relocating`] and
/// [`Collection::listing`] are left for the caller to fill.
pub(crate) fn plan(
    files: &[(u64, u64)],
    total: u64,
    needed: &Needed,
    tables: &HashMap<u64, Arc<Refs>>,
    collecting: &BTreeSet<u64>,
) -> Collection {
    let live = &needed.live;
    let referenced: u64 = live.values().sum();
    let garbage = |number: u64, size: u64| size.saturating_sub(*live.get(&number).unwrap_or(&0));
    let mut chosen: BTreeSet<u64> = files
        .iter()
        .map(|&(number, _)| number)
        .filter(|number| collecting.contains(number))
        .collect();
    let levels = Levels::of(referenced);
    if above(total, referenced, levels.collect) {
        let mut remaining = total;
        // The live bytes chosen files hold: relocating copies them before the files go.
        let mut to_copy = 0u64;
        for &(number, size) in files.iter().filter(|(n, _)| chosen.contains(n)) {
            remaining -= garbage(number, size);
            to_copy += size - garbage(number, size);
        }
        // (garbage, size, number), the largest share of garbage first (the cheapest to
        // collect per byte reclaimed), then the most garbage.
        let mut candidates: Vec<(u64, u64, u64)> = files
            .iter()
            .filter(|(number, _)| !chosen.contains(number))
            .map(|&(number, size)| (garbage(number, size), size, number))
            .filter(|&(garbage, _, _)| garbage > 0)
            .collect();
        candidates.sort_unstable_by(|&(ga, sa, na), &(gb, sb, nb)| {
            (u128::from(gb) * u128::from(sa))
                .cmp(&(u128::from(ga) * u128::from(sb)))
                .then(gb.cmp(&ga))
                .then(na.cmp(&nb))
        });
        for (garbage, size, number) in candidates {
            let copied = size - garbage;
            let cheap = garbage >= copied;
            if !above(remaining, referenced, levels.down_to)
                || (!cheap && !above(remaining, referenced, levels.any))
                || (!chosen.is_empty() && to_copy + copied > referenced / levels.copy_share)
            {
                break;
            }
            chosen.insert(number);
            remaining -= garbage;
            to_copy += copied;
        }
    }
    let tables = tables
        .iter()
        .filter(|(_, refs)| refs.keys().any(|file| chosen.contains(file)))
        .map(|(&number, _)| number)
        .collect();
    let dead = needed
        .dead
        .iter()
        .filter(|(file, _)| chosen.contains(file))
        .copied()
        .collect();
    Collection {
        files: chosen,
        tables,
        relocating: BTreeSet::new(),
        dead: Arc::new(dead),
        over_bound: above(total, referenced, levels.writes_wait),
        flush_asked: false,
        referenced,
        replan_at: needed.replan_at,
        sweep: false,
        older_states_hold: false,
        replan: Replan::default(),
        listing: Listing::default(),
        redone_at_rest: false,
    }
}

/// The next compaction rewriting a table that points into a file being collected, if any:
/// when an upper level holds keys of its range, the compaction of that level's files there
/// into the next level (a level-0 table's is into level 1); else an in-place rewrite of the
/// table. Tables no longer in the current version are forgotten.
pub(crate) fn pick_compaction(state: &mut DbState) -> Option<Compaction> {
    let version = Arc::clone(state.versions.current());
    let max_file_size = state.versions.options.max_file_size;
    while let Some(&number) = state.value_gc.tables.first() {
        let found = (0..NUM_LEVELS).find_map(|level| {
            version.files[level]
                .iter()
                .find(|f| f.number() == number)
                .map(|f| (level, Arc::clone(f)))
        });
        let compaction = found.and_then(|(level, file)| {
            let (smallest, largest) = (file.smallest_user_key(), file.largest_user_key());
            // Newer entries of its keys in upper levels are merged down first, so that the
            // entries they shadow are dropped rather than relocated.
            let upper = (0..level).find(|&upper| {
                !version
                    .overlapping_inputs(upper, Some(smallest), Some(largest))
                    .is_empty()
            });
            if let Some(from) = upper.or((level == 0).then_some(0)) {
                picker::compact_range(
                    &state.versions,
                    &state.compactions,
                    from,
                    Some(smallest),
                    Some(largest),
                )
            } else if state.value_gc.relocating.contains(&number) {
                let tables: HashSet<u64> = state.value_gc.relocating.iter().copied().collect();
                picker::compact_range_in_place(
                    &version,
                    max_file_size,
                    level,
                    (Some(smallest), Some(largest)),
                    &tables,
                )
            } else {
                None // only garbage there, shadowed by memtable entries: after their flush
            }
        });
        match compaction {
            Some(c) => return Some(c),
            None => {
                state.value_gc.tables.remove(&number);
            }
        }
    }
    None
}

/// One compaction's relocation of values out of the files being collected; see the module
/// documentation. Shared by the compaction's key ranges.
pub(crate) struct Relocation<'a> {
    db: &'a DbInner,
    /// The files being collected when the compaction started.
    files: BTreeSet<u64>,
    /// Pointers into them no reader can read: not relocated.
    dead: Arc<HashSet<(u64, u64)>>,
    /// The value file and record bytes of each append made (each keeps its file in use until
    /// this is dropped).
    appended: Mutex<Vec<(u64, u64)>>,
}

impl<'a> Relocation<'a> {
    /// The relocation for a compaction starting now (with the state mutex held).
    pub(crate) fn new(db: &'a DbInner, state: &DbState) -> Relocation<'a> {
        Relocation {
            db,
            files: state.value_gc.files.clone(),
            dead: Arc::clone(&state.value_gc.dead),
            appended: Mutex::new(Vec::new()),
        }
    }

    /// The new pointer for the entry `parsed` holding `value`, when it points into a file
    /// being collected and a reader may read it: its record's value read (checked) and
    /// appended to the current value file as it is stored.
    pub(crate) fn relocate(
        &self,
        parsed: &ParsedInternalKey<'_>,
        value: &[u8],
    ) -> Result<Option<Vec<u8>>> {
        if parsed.value_type != ValueType::ValuePointer || self.files.is_empty() {
            return Ok(None);
        }
        let Some(pointer) = ValuePointer::decode(value) else {
            // Kept as it is: reads report the damage, naming the key.
            return Ok(None);
        };
        if !self.files.contains(&pointer.file)
            || self.dead.contains(&(pointer.file, pointer.offset))
        {
            return Ok(None);
        }
        // Copied as the record stores it: a compressed value stays compressed.
        let (pointer, stored) = self.db.value_files.read_stored(parsed.user_key, value)?;
        let stored = StoredValue {
            bytes: &stored,
            raw_len: pointer.stored.map(|_| pointer.length),
        };
        let moved = value_files::append(self.db, Lane::Relocations, &[(parsed.user_key, stored)])?;
        let Some(moved) = moved.first() else {
            return Ok(None);
        };
        let bytes = moved.record_size(parsed.user_key.len());
        self.appended.lock().push((moved.file, bytes));
        Ok(Some(moved.encode()))
    }

    /// Makes the relocated values durable (before the compaction's tables are installed).
    pub(crate) fn sync(&self) -> Result<()> {
        if self.appended.lock().is_empty() {
            return Ok(());
        }
        value_files::sync(self.db, Lane::Relocations)
    }

    /// Counts the relocated bytes in `strata.value-files.relocated-bytes`, once the
    /// compaction's tables are installed.
    pub(crate) fn installed(&self) {
        let bytes: u64 = self.appended.lock().iter().map(|&(_, bytes)| bytes).sum();
        self.db.relocated_bytes.fetch_add(bytes, Ordering::Relaxed);
    }
}

impl Drop for Relocation<'_> {
    fn drop(&mut self) {
        let appended = std::mem::take(self.appended.get_mut());
        if !appended.is_empty() {
            value_files::done(self.db, Lane::Relocations, &appended);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(pairs: &[(u64, u64)]) -> Refs {
        pairs.iter().copied().collect()
    }

    fn needed(live: Refs, replan_at: Option<u64>) -> Needed {
        Needed {
            live,
            replan_at,
            dead: HashSet::from([(1, 0), (3, 0)]),
        }
    }

    #[test]
    fn the_file_being_written_is_closed_only_when_its_garbage_keeps_the_files_above() {
        // File 3 is being written: 100 bytes, 10 live; files 1 and 2 are full and live.
        let live = refs(&[(1, 100), (2, 100), (3, 10)]);
        let files = [(1, 100, false), (2, 100, false), (3, 100, true)];
        assert!(cut_current_file((3, 0), &[], &files, 300, &live, 100));
        // Less than a quarter of a file's size of garbage, but what alone keeps the files
        // over the bound writes wait at (300 bytes for 210 live: 1.43x).
        assert!(cut_current_file((3, 0), &[], &files, 300, &live, 400));
        // ... unless most of it is a write's values not in the memtable yet (300 bytes for
        // 270 live: 1.11x).
        assert!(!cut_current_file((3, 60), &[], &files, 300, &live, 400));
        // Less than a quarter of a file's size of garbage, within that bound (1.11x): not
        // worth a new file.
        let within = refs(&[(1, 100), (2, 100), (3, 70)]);
        assert!(!cut_current_file((3, 0), &[], &files, 300, &within, 400));
        // Collecting file 1 would do: it is all garbage, the file being written holds 5 bytes.
        let files = [(1, 200, false), (2, 100, false), (3, 100, true)];
        let live = refs(&[(2, 100), (3, 95)]);
        assert!(!cut_current_file((3, 0), &[], &files, 400, &live, 4));
        // ... unless an older state keeps file 1.
        let held = [(1, 200, true), (2, 100, false), (3, 100, true)];
        assert!(cut_current_file((3, 0), &[], &held, 400, &live, 4));
        // ... but not over bytes a write is still adding.
        assert!(!cut_current_file((3, 5), &[], &held, 400, &live, 4));
        let files = [(1, 100, false), (2, 100, false), (3, 100, true)];
        // Within the threshold.
        let live = refs(&[(1, 100), (2, 100), (3, 80)]);
        assert!(!cut_current_file((3, 0), &[], &files, 300, &live, 40));
    }

    #[test]
    fn files_being_written_are_judged_by_their_garbage_together() {
        // Both lanes' files are being written (so held), each 54 bytes garbage: 312 bytes for
        // 204 live (1.53x), 1.26x without either one's garbage, 1.0x without both.
        let files = [(1, 112, true), (2, 200, true)];
        let live = refs(&[(1, 58), (2, 146)]);
        assert!(!cut_current_file((1, 0), &[], &files, 312, &live, 256));
        assert!(cut_current_file((1, 0), &[2], &files, 312, &live, 256));
        assert!(cut_current_file((2, 0), &[1], &files, 312, &live, 256));
        // Once file 1 is closed, collecting it leaves 1.26x, above the bound for file 2's
        // garbage alone: the other lane closes its file in the same pass.
        let closed = [(1, 112, false), (2, 200, true)];
        assert!(cut_current_file((2, 0), &[], &closed, 312, &live, 256));
        // A file being written with no garbage is not closed over the other's.
        let clean = refs(&[(1, 112), (2, 46)]);
        assert!(!cut_current_file((1, 0), &[2], &files, 312, &clean, 256));
        assert!(cut_current_file((2, 0), &[1], &files, 312, &clean, 256));
    }

    #[test]
    fn nothing_is_chosen_within_the_bound() {
        let files = [(1, 100), (2, 100)];
        let live = refs(&[(1, 95), (2, 95)]);
        let plan = plan(
            &files,
            200,
            &needed(live, None),
            &HashMap::new(),
            &BTreeSet::new(),
        );
        assert!(plan.files.is_empty());
        assert!(!plan.writes_wait(true));
    }

    const MIB: u64 = 1 << 20;

    /// `(file, bytes)` pairs with the bytes given in `unit`s.
    fn scaled(unit: u64, pairs: &[(u64, u64)]) -> Vec<(u64, u64)> {
        pairs.iter().map(|&(n, bytes)| (n, bytes * unit)).collect()
    }

    /// The files [`plan`] chooses, sizes and live bytes given in `unit`s.
    fn chosen_in(unit: u64, files: &[(u64, u64)], live: &[(u64, u64)]) -> BTreeSet<u64> {
        let files = scaled(unit, files);
        let total = files.iter().map(|&(_, size)| size).sum();
        let needed = needed(refs(&scaled(unit, live)), None);
        plan(&files, total, &needed, &HashMap::new(), &BTreeSet::new()).files
    }

    /// [`chosen_in`] MiB: a database large enough for the levels as they are.
    fn chosen(files: &[(u64, u64)], live: &[(u64, u64)]) -> BTreeSet<u64> {
        chosen_in(MIB, files, live)
    }

    #[test]
    fn collection_starts_lower_in_a_small_database() {
        assert_eq!(Levels::of(0), &Levels::SMALL);
        assert_eq!(Levels::of(4 * MIB - 1), &Levels::SMALL);
        assert_eq!(Levels::of(4 * MIB), &Levels::LARGE);
        // 1.2x, file 3 half garbage: within 1.20x for a large database, over 1.10x for one
        // of 1,000 KiB live.
        let files = [(3, 400), (4, 800)];
        let live = [(3, 200), (4, 800)];
        assert!(chosen(&files, &live).is_empty());
        assert_eq!(chosen_in(1 << 10, &files, &live), BTreeSet::from([3]));
    }

    #[test]
    fn the_largest_share_of_garbage_goes_first() {
        // 5,500 held for 4,450 live (1.24x). File 1 holds the most garbage (850 of 1,300),
        // file 2 the largest share (all of its 200). File 2 goes first; file 1 would then
        // make 450 to copy, over a twentieth of the live bytes.
        let files = [(1, 1300), (2, 200), (4, 4000)];
        let live = [(1, 450), (2, 0), (4, 4000)];
        assert_eq!(chosen(&files, &live), BTreeSet::from([2]));
    }

    #[test]
    fn files_mostly_live_are_chosen_only_above_the_higher_level() {
        // File 3 is 40% garbage: copying it costs 1.5 bytes per byte reclaimed.
        // 3,600 held for 2,800 live: 1.286x, over 1.25x.
        let files = [(3, 2000), (4, 1600)];
        assert_eq!(chosen(&files, &[(3, 1200), (4, 1600)]), BTreeSet::from([3]));
        // 4,400 held for 3,600 live: 1.222x, over 1.20x but within 1.25x.
        let files = [(3, 2000), (4, 2400)];
        assert!(chosen(&files, &[(3, 1200), (4, 2400)]).is_empty());
    }

    #[test]
    fn files_are_chosen_down_to_the_target() {
        // Garbage (MiB): #1 98, #2 92, #3 10, #4 40.
        let files = scaled(MIB, &[(1, 100), (2, 100), (3, 100), (4, 100), (5, 600)]);
        let live = refs(&scaled(MIB, &[(1, 2), (2, 8), (3, 90), (4, 60), (5, 600)]));
        let tables: HashMap<u64, Arc<Refs>> = [
            (10, Arc::new(refs(&[(1, 2 * MIB)]))),
            (11, Arc::new(refs(&[(3, 90 * MIB)]))),
            (12, Arc::new(refs(&[(2, 8 * MIB), (4, 60 * MIB)]))),
        ]
        .into_iter()
        .collect();
        let plan = plan(
            &files,
            1000 * MIB,
            &needed(live, Some(7)),
            &tables,
            &BTreeSet::new(),
        );
        // 1,000 held for 760 live (1.32x). Largest share of garbage first: #1 (2 to copy),
        // #2 (8); then 810 are held (1.07x), within 1.13x.
        assert_eq!(plan.files, BTreeSet::from([1, 2]));
        assert_eq!(plan.tables, BTreeSet::from([10, 12]));
        assert!(plan.writes_wait(false));
        assert!(plan.stale(7) && !plan.stale(6));
        // Only the chosen files' garbage pointers are kept, for relocation to skip.
        assert_eq!(*plan.dead, HashSet::from([(1, 0)]));
    }

    #[test]
    fn chosen_files_stay_chosen_while_present() {
        let files = [(2, 100)];
        let live = refs(&[(2, 100)]);
        let chosen = BTreeSet::from([1, 2]);
        let plan = plan(&files, 100, &needed(live, None), &HashMap::new(), &chosen);
        assert_eq!(plan.files, BTreeSet::from([2]));
        assert!(!plan.stale(u64::MAX));
    }

    #[test]
    fn writes_wait_for_a_plan_once_their_appends_could_pass_the_bound() {
        let collection = |referenced: u64, total: u64| Collection {
            referenced,
            listing: Listing {
                total,
                appended: 7 * MIB,
            },
            ..Collection::default()
        };
        // 245 MiB held for 245 live: 45 MiB more, each superseding a live byte, make 290 MiB
        // for 200 live, 1.45x.
        let plan = collection(245 * MIB, 245 * MIB);
        assert!(!plan.outgrown(7 * MIB + 45 * MIB));
        assert!(plan.outgrown(7 * MIB + 45 * MIB + 1));
        assert!(!plan.redo_at_rest(7 * MIB + 45 * MIB));
        assert!(plan.redo_at_rest(7 * MIB + 45 * MIB + 1));
        // Already past it (an older state pins files): a memtable's worth.
        let pinned = collection(100 * MIB, 150 * MIB);
        assert!(!pinned.outgrown(7 * MIB + 100 * MIB / 16));
        assert!(pinned.outgrown(7 * MIB + 100 * MIB / 16 + 1));
        assert!(pinned.redo_at_rest(7 * MIB + 1));
        // A small database: 256 KiB.
        let small = collection(MIB / 8, MIB / 8);
        assert!(!small.outgrown(7 * MIB + MIB / 4));
        assert!(small.outgrown(7 * MIB + MIB / 4 + 1));
    }

    #[test]
    fn value_files_are_cut_at_a_sixteenth_of_the_live_bytes() {
        assert_eq!(value_file_size(0, 64 << 20), 256 << 10);
        assert_eq!(value_file_size(320 << 20, 64 << 20), 20 << 20);
        assert_eq!(value_file_size(4 << 30, 64 << 20), 64 << 20);
        assert_eq!(value_file_size(0, 4096), 4096);
        assert_eq!(memtable_value_limit(0), 256 << 10);
        assert_eq!(memtable_value_limit(160 << 20), 10 << 20);
    }
}
