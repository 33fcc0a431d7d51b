//! Choosing what to compact.
//!
//! Size-triggered compactions (a level over its budget, or too many level-0 files) come
//! before seek-triggered ones (a file read past too often). Within a level, compactions rotate
//! through the key space using the level's compact pointer. The chosen inputs are then
//! widened: all level-0 files that overlap, boundary files that share a user key with an input
//! (a user key's versions must never be split between levels), and more files of the level
//! when that adds no file of the next level.

use std::cmp::Ordering;
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
