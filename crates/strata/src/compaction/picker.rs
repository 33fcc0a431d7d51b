//! Choosing what to compact.
//!
//! Size-triggered compactions (a level over its budget, or too many level-0 files) come
//! before seek-triggered ones (a file read past too often); levels are tried by how much they
//! need compaction, most first. Within a level, the file that overlaps the fewest bytes of the
//! next level for its own size is taken first (the least rewritten per byte moved down); equal
//! ratios rotate through the key space using the level's compact pointer. The chosen inputs are
//! then widened: all level-0 files that overlap, boundary files that share a user key with an
//! input (a user key's versions must never be split between levels), and more files of the
//! level when that adds no file of the next level.
//!
//! Beside compactions in flight ([`Running`]): files they take do not count toward their
//! level's need, a pick never conflicts with them, and within a level the next file that can
//! start is taken. A level-0 compaction that cannot start (another one runs, or it needs files
//! a running compaction holds) holds its files back from the levels tried after it (`held`):
//! writers stall on level 0, so a compaction of a less needy level must not keep it waiting
//! longer. Picking changes nothing: the compact pointer a pick moves is in its edit, and
//! recorded when the compaction starts ([`VersionSet::record_compact_pointers`]).

use std::cmp::Ordering;
use std::collections::HashSet;
use std::sync::Arc;

use super::running::Running;
use super::{expanded_compaction_byte_limit, Compaction, Trigger};
use crate::util::internal_key::{user_key, InternalKeyComparator};
use crate::version::policy::{max_bytes_for_level, L0_COMPACTION_TRIGGER};
use crate::version::version::{find_file_by_user_key, total_file_size, FileRef, Version};
use crate::version::version_set::VersionSet;
use crate::version::NUM_LEVELS;

/// Most candidate files of one level a pick builds a compaction for before giving up on the
/// level: each costs a walk over the next level's files, under the state mutex.
const MAX_CANDIDATES_PER_LEVEL: usize = 32;

/// True when the current version wants a compaction.
pub(crate) fn needs_compaction(version: &Version) -> bool {
    version.compaction_score >= 1.0 || version.seek_candidate.lock().is_some()
}

/// How much `level` needs compaction, not counting the files compactions in flight take:
/// level 0 by its file count over the trigger, deeper levels by bytes over their budget (the
/// version's own score, `version/policy.rs`, counts every file).
fn score(version: &Version, level: usize, running: &Running) -> f64 {
    let waiting = version.files[level]
        .iter()
        .filter(|f| !running.being_compacted(f.number()));
    if level == 0 {
        waiting.count() as f64 / L0_COMPACTION_TRIGGER as f64
    } else {
        waiting.fold(0u64, |sum, f| sum.saturating_add(f.meta.file_size)) as f64
            / max_bytes_for_level(level)
    }
}

/// Picks the next automatic compaction that can start beside those in `running` and takes no
/// file of `held`, if any is needed. A level-0 compaction that cannot start adds its files to
/// `held` (see the module documentation).
pub(crate) fn pick_compaction(
    vset: &VersionSet,
    running: &Running,
    held: &mut HashSet<u64>,
) -> Option<Compaction> {
    let version = vset.current();
    if !needs_compaction(version) {
        return None; // no level's score, with every file counted, reaches 1
    }
    let mut levels: Vec<(f64, usize)> = (0..NUM_LEVELS - 1)
        .map(|level| (score(version, level, running), level))
        .filter(|&(score, _)| score >= 1.0)
        .collect();
    // Most needed first; a stable sort keeps the shallower of equal levels first.
    levels.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (_, level) in levels {
        let picked = if level == 0 {
            pick_level0(vset, running, held)
        } else {
            pick_in_level(vset, level, running, held)
        };
        if picked.is_some() {
            return picked;
        }
    }
    pick_seek_compaction(vset, running, held)
}

/// Whether `c` may start now: it conflicts with no compaction in flight and takes no file
/// held back for another.
pub(crate) fn can_start(c: &Compaction, running: &Running, held: &HashSet<u64>) -> bool {
    !running.conflicts(c)
        && !c
            .inputs
            .iter()
            .flatten()
            .any(|f| held.contains(&f.number()))
}

/// The level-0 compaction: from the first file after the compact pointer, every level-0 file
/// overlapping it. When it cannot start, its files are held back.
fn pick_level0(
    vset: &VersionSet,
    running: &Running,
    held: &mut HashSet<u64>,
) -> Option<Compaction> {
    let version = vset.current();
    let first = version.files[0].get(pointer_index(vset, 0))?;
    let mut c = Compaction::new(0, vset.options.max_file_size, Arc::clone(version));
    c.inputs[0] = level0_inputs(version, first)?;
    setup_other_inputs(&mut c, running);
    if can_start(&c, running, held) {
        return Some(c);
    }
    held.extend(c.inputs.iter().flatten().map(|f| f.number()));
    None
}

/// A compaction of `level` (1 or deeper) into the next one, from the file that can start now
/// and overlaps the fewest bytes of the next level for its own size: the cheapest compaction
/// per byte moved down. Equal ratios go in the order of the compact pointer's rotation.
fn pick_in_level(
    vset: &VersionSet,
    level: usize,
    running: &Running,
    held: &HashSet<u64>,
) -> Option<Compaction> {
    let version = vset.current();
    let files = &version.files[level];
    let (before, after) = files.split_at(pointer_index(vset, level));
    let mut candidates: Vec<(f64, &FileRef)> = after
        .iter()
        .chain(before)
        .filter(|f| !running.being_compacted(f.number()) && !held.contains(&f.number()))
        .map(|f| (overlap_ratio(version, level, f), f))
        .collect();
    candidates.sort_by(|a, b| a.0.total_cmp(&b.0)); // stable: rotation order among equals
    candidates
        .into_iter()
        .map(|(_, file)| file)
        .take(MAX_CANDIDATES_PER_LEVEL)
        .find_map(|file| {
            let mut c = Compaction::new(level, vset.options.max_file_size, Arc::clone(version));
            c.inputs[0].push(Arc::clone(file));
            setup_other_inputs(&mut c, running);
            can_start(&c, running, held).then_some(c)
        })
}

/// Bytes of the files of `level + 1` that overlap `file` (of `level`), over `file`'s own size
/// (at least 1 byte). A binary search and a walk over the overlapping files.
fn overlap_ratio(version: &Version, level: usize, file: &FileRef) -> f64 {
    let icmp = version.icmp();
    let next = &version.files[level + 1];
    let first = find_file_by_user_key(icmp, next, file.smallest_user_key());
    let overlapping = next
        .get(first..)
        .unwrap_or(&[])
        .iter()
        .take_while(|f| {
            icmp.compare_user(f.smallest_user_key(), file.largest_user_key()) != Ordering::Greater
        })
        .fold(0u64, |sum, f| sum.saturating_add(f.meta.file_size));
    overlapping as f64 / file.meta.file_size.max(1) as f64
}

/// A seek-triggered compaction of the current version's seek candidate, if it can start.
fn pick_seek_compaction(
    vset: &VersionSet,
    running: &Running,
    held: &HashSet<u64>,
) -> Option<Compaction> {
    let version = vset.current();
    let (level, file) = version.seek_candidate.lock().clone()?;
    if level + 1 >= NUM_LEVELS {
        return None;
    }
    let mut c = Compaction::new(level, vset.options.max_file_size, Arc::clone(version));
    c.trigger = Trigger::Seek;
    c.inputs[0] = if level == 0 {
        level0_inputs(version, &file)?
    } else {
        vec![file]
    };
    setup_other_inputs(&mut c, running);
    can_start(&c, running, held).then_some(c)
}

/// Index of the first file of `level` after the level's compact pointer; 0 (the first file)
/// when none is.
fn pointer_index(vset: &VersionSet, level: usize) -> usize {
    let version = vset.current();
    let icmp = version.icmp();
    let pointer = &vset.compact_pointers[level];
    version.files[level]
        .iter()
        .position(|f| {
            pointer.is_empty() || icmp.compare(&f.meta.largest, pointer) == Ordering::Greater
        })
        .unwrap_or(0)
}

/// Every level-0 file overlapping `first`, transitively (level-0 files overlap one another).
fn level0_inputs(version: &Version, first: &FileRef) -> Option<Vec<FileRef>> {
    let (smallest, largest) = Compaction::range_of(version.icmp(), std::iter::once(first))?;
    Some(version.overlapping_inputs(0, Some(user_key(&smallest)), Some(user_key(&largest))))
}

/// A compaction of `level` restricted to user keys in `[begin, end]` (`None` = open), for
/// `compact_range`. Returns `None` when nothing in the level overlaps. It may conflict with a
/// compaction in flight: the caller checks before starting it.
pub(crate) fn compact_range(
    vset: &VersionSet,
    running: &Running,
    level: usize,
    begin: Option<&[u8]>,
    end: Option<&[u8]>,
) -> Option<Compaction> {
    let version = Arc::clone(vset.current());
    let mut inputs = version.overlapping_inputs(level, begin, end);
    if inputs.is_empty() {
        return None;
    }
    let max_file_size = vset.options.max_file_size;
    // Bound the work of one step: levels >= 1 are compacted a chunk at a time (the caller
    // loops). Level 0 must be taken whole since its files overlap.
    if level > 0 {
        let limit = max_file_size;
        let mut total = 0;
        let keep = inputs
            .iter()
            .position(|f| {
                total = f.meta.file_size.saturating_add(total);
                total >= limit
            })
            .map_or(inputs.len(), |i| i + 1);
        inputs.truncate(keep);
    }
    let mut compaction = Compaction::new(level, max_file_size, version);
    compaction.inputs[0] = inputs;
    setup_other_inputs(&mut compaction, running);
    Some(compaction)
}

/// An in-place compaction of `level` (1 or deeper) for `compact_range`: a run of neighbouring
/// files of the level, from the first one named in `files` that overlaps `[begin, end]`,
/// rewritten into the level itself. `None` when no file of `files` is left in the level there
/// (each step replaces the files it takes with new ones, which `files` does not name, so the
/// caller's loop ends).
///
/// The run is contiguous in the level and takes the neighbours that share a user key with it
/// on either side, so its outputs (which hold only the inputs' keys and tombstones) overlap no
/// other file of the level, and the newest entry of every input user key is among the inputs.
pub(crate) fn compact_range_in_place(
    version: &Arc<Version>,
    max_file_size: u64,
    level: usize,
    (begin, end): (Option<&[u8]>, Option<&[u8]>),
    files: &HashSet<u64>,
) -> Option<Compaction> {
    if level == 0 {
        return None;
    }
    let icmp = version.icmp().clone();
    let first = version
        .overlapping_inputs(level, begin, end)
        .into_iter()
        .find(|f| files.contains(&f.number()))?;
    let level_files = &version.files[level];
    let first = level_files
        .iter()
        .position(|f| f.number() == first.number())?;
    let mut start = first;
    while start > 0
        && icmp.compare_user(
            level_files[start - 1].largest_user_key(),
            level_files[start].smallest_user_key(),
        ) == Ordering::Equal
    {
        start -= 1;
    }
    let mut inputs: Vec<FileRef> = level_files[start..=first].to_vec();
    let mut total = total_file_size(&inputs);
    for f in &level_files[first + 1..] {
        if !files.contains(&f.number()) || total >= max_file_size {
            break;
        }
        total = f.meta.file_size.saturating_add(total);
        inputs.push(Arc::clone(f));
    }
    add_boundary_inputs(&icmp, level_files, &mut inputs);
    let (smallest, largest) = Compaction::range_of(&icmp, &inputs)?;
    let mut compaction = Compaction::in_place(level, max_file_size, Arc::clone(version));
    if level + 1 < NUM_LEVELS {
        compaction.grandparents = version.overlapping_inputs(
            level + 1,
            Some(user_key(&smallest)),
            Some(user_key(&largest)),
        );
    }
    compaction.inputs[0] = inputs;
    Some(compaction)
}

/// Widens `compaction.inputs[0]` at its boundaries, finds the overlapping files of the next
/// level, tries to take more of `level` for free (never a file a compaction in flight takes),
/// and records the grandparents and the new compact pointer (in the edit).
fn setup_other_inputs(compaction: &mut Compaction, running: &Running) {
    let version = Arc::clone(&compaction.input_version);
    let icmp = version.icmp().clone();
    let level = compaction.level;
    add_boundary_inputs(&icmp, &version.files[level], &mut compaction.inputs[0]);
    let Some((smallest, largest)) = Compaction::range_of(&icmp, &compaction.inputs[0]) else {
        return;
    };
    compaction.inputs[1] = version.overlapping_inputs(
        level + 1,
        Some(user_key(&smallest)),
        Some(user_key(&largest)),
    );
    add_boundary_inputs(&icmp, &version.files[level + 1], &mut compaction.inputs[1]);

    let (mut all_start, mut all_limit) = Compaction::range_of(
        &icmp,
        compaction.inputs[0].iter().chain(&compaction.inputs[1]),
    )
    .unwrap_or((smallest.clone(), largest.clone()));

    // Try to grow the level's inputs without changing the next level's inputs.
    let free = |files: &[FileRef]| !files.iter().any(|f| running.being_compacted(f.number()));
    if !compaction.inputs[1].is_empty() {
        let mut expanded0 = version.overlapping_inputs(
            level,
            Some(user_key(&all_start)),
            Some(user_key(&all_limit)),
        );
        add_boundary_inputs(&icmp, &version.files[level], &mut expanded0);
        let inputs1_size = total_file_size(&compaction.inputs[1]);
        let expanded0_size = total_file_size(&expanded0);
        if expanded0.len() > compaction.inputs[0].len()
            && free(&expanded0)
            && inputs1_size + expanded0_size
                < expanded_compaction_byte_limit(compaction.max_output_file_size)
        {
            if let Some((new_start, new_limit)) = Compaction::range_of(&icmp, &expanded0) {
                let mut expanded1 = version.overlapping_inputs(
                    level + 1,
                    Some(user_key(&new_start)),
                    Some(user_key(&new_limit)),
                );
                add_boundary_inputs(&icmp, &version.files[level + 1], &mut expanded1);
                if expanded1.len() == compaction.inputs[1].len() {
                    compaction.inputs[0] = expanded0;
                    compaction.inputs[1] = expanded1;
                    if let Some(range) = Compaction::range_of(
                        &icmp,
                        compaction.inputs[0].iter().chain(&compaction.inputs[1]),
                    ) {
                        (all_start, all_limit) = range;
                    }
                }
            }
        }
    }

    if level + 2 < NUM_LEVELS {
        compaction.grandparents = version.overlapping_inputs(
            level + 2,
            Some(user_key(&all_start)),
            Some(user_key(&all_limit)),
        );
    }

    // The next compaction of this level starts after this one's largest key. Recorded when
    // the compaction starts (not when it finishes) so a failed compaction does not retry
    // forever.
    let largest = Compaction::range_of(&icmp, &compaction.inputs[0])
        .map(|(_, l)| l)
        .unwrap_or(largest);
    compaction.edit.compact_pointers.push((level, largest));
}

/// Adds to `inputs` every file of `level_files` whose smallest key has the same user key as
/// the largest key of `inputs` but a smaller internal key (an older version). Leaving such a
/// file behind would let a newer version of the key sink below an older one.
pub(crate) fn add_boundary_inputs(
    icmp: &InternalKeyComparator,
    level_files: &[FileRef],
    inputs: &mut Vec<FileRef>,
) {
    let Some(mut largest) = inputs
        .iter()
        .map(|f| &f.meta.largest)
        .max_by(|a, b| icmp.compare(a, b))
        .cloned()
    else {
        return;
    };
    loop {
        let boundary = level_files
            .iter()
            .filter(|f| {
                icmp.compare(&f.meta.smallest, &largest) == Ordering::Greater
                    && icmp.compare_user(f.smallest_user_key(), user_key(&largest))
                        == Ordering::Equal
            })
            .min_by(|a, b| icmp.compare(&a.meta.smallest, &b.meta.smallest));
        match boundary {
            Some(file) if !inputs.iter().any(|f| f.number() == file.number()) => {
                largest.clone_from(&file.meta.largest);
                inputs.push(Arc::clone(file));
            }
            _ => return,
        }
    }
}

/// The level a freshly flushed table covering `[smallest, largest]` (user keys) should be
/// placed at: deeper than 0 when it overlaps nothing there, so sequential loads skip the
/// rewrites of level-0 compactions.
pub(crate) fn pick_level_for_memtable_output(
    version: &Version,
    smallest: &[u8],
    largest: &[u8],
    max_file_size: u64,
) -> usize {
    use crate::version::policy::MAX_MEM_COMPACT_LEVEL;
    let mut level = 0;
    if version.overlap_in_level(0, Some(smallest), Some(largest)) {
        return 0;
    }
    while level < MAX_MEM_COMPACT_LEVEL {
        if version.overlap_in_level(level + 1, Some(smallest), Some(largest)) {
            break;
        }
        if level + 2 < NUM_LEVELS {
            let overlaps = version.overlapping_inputs(level + 2, Some(smallest), Some(largest));
            if total_file_size(&overlaps) > super::max_grandparent_overlap_bytes(max_file_size) {
                break;
            }
        }
        level += 1;
    }
    level
}

#[cfg(test)]
mod beside_running_tests;

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::sync::Arc;

    use super::compact_range_in_place;
    use crate::util::comparator::BytewiseComparator;
    use crate::util::internal_key::{internal_key, InternalKeyComparator, ValueType};
    use crate::version::edit::FileMetaData;
    use crate::version::version::{FileRef, LiveFile, Version};

    const LEVEL: usize = 3;

    /// A table of 100 bytes from `smallest@from` to `largest@to`.
    fn file(number: u64, (smallest, from): (&[u8], u64), (largest, to): (&[u8], u64)) -> FileRef {
        Arc::new(LiveFile::new(FileMetaData {
            number,
            file_size: 100,
            smallest: internal_key(smallest, from, ValueType::Value),
            largest: internal_key(largest, to, ValueType::Value),
        }))
    }

    /// Level 3 holds #10 [a, c@5], #11 [c@4, e] (LevelDB splits a user key's versions between
    /// tables; Strata does not), #12 [f, h], #13 [i, k]; level 4 holds #20 [g, z].
    fn version() -> Arc<Version> {
        let mut files: [Vec<FileRef>; 7] = Default::default();
        files[LEVEL] = vec![
            file(10, (b"a", 9), (b"c", 5)),
            file(11, (b"c", 4), (b"e", 9)),
            file(12, (b"f", 9), (b"h", 9)),
            file(13, (b"i", 9), (b"k", 9)),
        ];
        files[LEVEL + 1] = vec![file(20, (b"g", 1), (b"z", 1))];
        Arc::new(Version::new(
            InternalKeyComparator::new(Arc::new(BytewiseComparator)),
            files,
        ))
    }

    fn numbers(files: &[FileRef]) -> Vec<u64> {
        files.iter().map(|f| f.number()).collect()
    }

    fn pick(limit: u64, range: (Option<&[u8]>, Option<&[u8]>), files: &[u64]) -> Option<Vec<u64>> {
        let files: HashSet<u64> = files.iter().copied().collect();
        let c = compact_range_in_place(&version(), limit, LEVEL, range, &files)?;
        assert_eq!((c.level, c.output_level), (LEVEL, LEVEL));
        assert!(c.inputs[1].is_empty());
        assert!(!c.is_trivial_move(), "an in-place compaction rewrites");
        Some(numbers(&c.inputs[0]))
    }

    #[test]
    fn a_run_takes_the_neighbours_sharing_its_boundary_keys() {
        // #11 alone would leave c@5 above c@4's rewrite: #10 comes too.
        assert_eq!(pick(1000, (None, None), &[11, 13]), Some(vec![10, 11]));
        // #10 alone: #11 holds older versions of its last key.
        assert_eq!(pick(1000, (None, None), &[10]), Some(vec![10, 11]));
    }

    #[test]
    fn a_run_is_contiguous_and_bounded_by_the_size_limit() {
        assert_eq!(pick(1000, (None, None), &[12, 13]), Some(vec![12, 13]));
        assert_eq!(pick(100, (None, None), &[12, 13]), Some(vec![12]));
        // #12 is not to be rewritten: the run stops before it, never skipping over it.
        assert_eq!(pick(1000, (None, None), &[10, 11, 13]), Some(vec![10, 11]));
    }

    #[test]
    fn the_range_and_the_file_set_bound_the_pick() {
        assert_eq!(pick(1000, (Some(b"i"), None), &[10, 13]), Some(vec![13]));
        assert_eq!(pick(1000, (Some(b"f"), Some(b"h")), &[10, 11, 13]), None);
        assert_eq!(pick(1000, (None, None), &[]), None);
        let files: HashSet<u64> = [10].into_iter().collect();
        assert!(compact_range_in_place(&version(), 1000, 0, (None, None), &files).is_none());
    }

    #[test]
    fn grandparents_are_the_next_levels_overlapping_files() {
        let files: HashSet<u64> = [12].into_iter().collect();
        let c = compact_range_in_place(&version(), 1000, LEVEL, (None, None), &files).unwrap();
        assert_eq!(numbers(&c.grandparents), vec![20]);
        let files: HashSet<u64> = [10].into_iter().collect();
        let c = compact_range_in_place(&version(), 1000, LEVEL, (None, None), &files).unwrap();
        assert!(c.grandparents.is_empty());
    }
}
