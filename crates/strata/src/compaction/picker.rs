//! Choosing what to compact.
//!
//! Size-triggered compactions (a level over its budget, or too many level-0 files) come
//! before seek-triggered ones (a file read past too often). Within a level, compactions rotate
//! through the key space using the level's compact pointer. The chosen inputs are then
//! widened: all level-0 files that overlap, boundary files that share a user key with an input
//! (a user key's versions must never be split between levels), and more files of the level
//! when that adds no file of the next level.

use std::cmp::Ordering;
use std::collections::HashSet;
use std::sync::Arc;

use super::{expanded_compaction_byte_limit, Compaction, Trigger};
use crate::util::internal_key::{user_key, InternalKeyComparator};
use crate::version::version::{total_file_size, FileRef, Version};
use crate::version::version_set::VersionSet;
use crate::version::NUM_LEVELS;

/// True when the current version wants a compaction.
pub(crate) fn needs_compaction(version: &Version) -> bool {
    version.compaction_score >= 1.0 || version.seek_candidate.lock().is_some()
}

/// Picks the next automatic compaction, if any is needed.
pub(crate) fn pick_compaction(vset: &mut VersionSet) -> Option<Compaction> {
    let version = Arc::clone(vset.current());
    let icmp = version.icmp().clone();
    let max_file_size = vset.options.max_file_size;
    let mut compaction;
    if version.compaction_score >= 1.0 {
        let level = version.compaction_level;
        if level + 1 >= NUM_LEVELS {
            return None;
        }
        compaction = Compaction::new(level, max_file_size, Arc::clone(&version));
        // The first file after the compact pointer, wrapping to the first file.
        let pointer = &vset.compact_pointers[level];
        let first = version.files[level]
            .iter()
            .find(|f| {
                pointer.is_empty() || icmp.compare(&f.meta.largest, pointer) == Ordering::Greater
            })
            .or_else(|| version.files[level].first())?;
        compaction.inputs[0].push(Arc::clone(first));
    } else {
        let (level, file) = version.seek_candidate.lock().clone()?;
        if level + 1 >= NUM_LEVELS {
            return None;
        }
        compaction = Compaction::new(level, max_file_size, Arc::clone(&version));
        compaction.trigger = Trigger::Seek;
        compaction.inputs[0].push(file);
    }

    if compaction.level == 0 {
        // Level-0 files overlap: take every one that overlaps the chosen range.
        let (smallest, largest) = Compaction::range_of(&icmp, &compaction.inputs[0])?;
        compaction.inputs[0] =
            version.overlapping_inputs(0, Some(user_key(&smallest)), Some(user_key(&largest)));
    }
    setup_other_inputs(vset, &mut compaction);
    Some(compaction)
}

/// A compaction of `level` restricted to user keys in `[begin, end]` (`None` = open), for
/// `compact_range`. Returns `None` when nothing in the level overlaps.
pub(crate) fn compact_range(
    vset: &mut VersionSet,
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
    setup_other_inputs(vset, &mut compaction);
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
/// level, tries to take more of `level` for free, and records the grandparents and the new
/// compact pointer.
fn setup_other_inputs(vset: &mut VersionSet, compaction: &mut Compaction) {
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

    // The next compaction of this level starts after this one's largest key. Recorded now
    // (not when the compaction finishes) so a failed compaction does not retry forever.
    let largest = Compaction::range_of(&icmp, &compaction.inputs[0])
        .map(|(_, l)| l)
        .unwrap_or(largest);
    vset.compact_pointers[level].clone_from(&largest);
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
