//! Compactions: what to compact (picking, in `picker`) and the description of one compaction
//! that the background worker runs.
//!
//! A compaction merges `inputs[0]` (files of `level`) with the files of `level + 1` they
//! overlap (`inputs[1]`) and writes new files to `level + 1`, cut so that no output overlaps
//! too much of `level + 2` (the "grandparents"), which would make its own compaction costly.

pub(crate) mod picker;

use std::cmp::Ordering;
use std::sync::Arc;

use crate::util::internal_key::InternalKeyComparator;
use crate::version::edit::VersionEdit;
use crate::version::version::{total_file_size, FileRef, Version};
use crate::version::NUM_LEVELS;

/// Output files overlapping more than this many bytes of grandparents are cut early.
pub(crate) fn max_grandparent_overlap_bytes(max_file_size: u64) -> u64 {
    10 * max_file_size
}

/// Most bytes a compaction may grow to when its level inputs are expanded.
pub(crate) fn expanded_compaction_byte_limit(max_file_size: u64) -> u64 {
    25 * max_file_size
}

/// One compaction: its inputs and what it needs to decide where outputs end and which entries
/// can be dropped.
pub(crate) struct Compaction {
    pub(crate) level: usize,
    pub(crate) max_output_file_size: u64,
    pub(crate) input_version: Arc<Version>,
    pub(crate) edit: VersionEdit,
    /// `[files of level, overlapping files of level + 1]`.
    pub(crate) inputs: [Vec<FileRef>; 2],
    /// Files of `level + 2` overlapping the compaction's key range.
    pub(crate) grandparents: Vec<FileRef>,
}

impl Compaction {
    pub(crate) fn new(level: usize, max_file_size: u64, input_version: Arc<Version>) -> Compaction {
        Compaction {
            level,
            max_output_file_size: max_file_size,
            input_version,
            edit: VersionEdit::default(),
            inputs: Default::default(),
            grandparents: Vec::new(),
        }
    }

    fn icmp(&self) -> &InternalKeyComparator {
        self.input_version.icmp()
    }

    /// A compaction that can move its single input file down a level without rewriting it.
    pub(crate) fn is_trivial_move(&self) -> bool {
        self.inputs[0].len() == 1
            && self.inputs[1].is_empty()
            && total_file_size(&self.grandparents)
                <= max_grandparent_overlap_bytes(self.max_output_file_size)
    }

    /// Records the deletion of every input in the edit.
    pub(crate) fn add_input_deletions(&mut self) {
        for (which, files) in self.inputs.iter().enumerate() {
            for f in files {
                self.edit.delete_file(self.level + which, f.number());
            }
        }
    }

    /// Key range `[smallest, largest]` (internal keys) covered by the given files.
    pub(crate) fn range_of<'f>(
        icmp: &InternalKeyComparator,
        files: impl IntoIterator<Item = &'f FileRef>,
    ) -> Option<(Vec<u8>, Vec<u8>)> {
        let mut range: Option<(&[u8], &[u8])> = None;
        for f in files {
            range = Some(match range {
                None => (&f.meta.smallest, &f.meta.largest),
                Some((lo, hi)) => (
                    if icmp.compare(&f.meta.smallest, lo) == Ordering::Less {
                        &f.meta.smallest
                    } else {
                        lo
                    },
                    if icmp.compare(&f.meta.largest, hi) == Ordering::Greater {
                        &f.meta.largest
                    } else {
                        hi
                    },
                ),
            });
        }
        range.map(|(lo, hi)| (lo.to_vec(), hi.to_vec()))
    }

    /// One-line description for the info log.
    pub(crate) fn summary(&self) -> String {
        let names = |files: &[FileRef]| {
            files
                .iter()
                .map(|f| f.number().to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        format!(
            "{}@{} + {}@{} files [{}] + [{}]",
            self.inputs[0].len(),
            self.level,
            self.inputs[1].len(),
            self.level + 1,
            names(&self.inputs[0]),
            names(&self.inputs[1])
        )
    }

    /// The comparator of the input version.
    pub(crate) fn comparator(&self) -> InternalKeyComparator {
        self.icmp().clone()
    }

    /// Up to `parts - 1` user keys, strictly increasing, that cut the inputs into `parts` key
    /// ranges of about equal input bytes: range `i` holds the user keys above cut `i - 1` (if
    /// any) and up to cut `i` (if any) inclusive. The cuts are input files' largest keys, so
    /// no user key's entries are split between ranges. Fewer cuts (none) when the inputs do
    /// not divide that finely.
    pub(crate) fn split_points(&self, parts: usize) -> Vec<Vec<u8>> {
        let icmp = self.icmp();
        let mut files: Vec<&FileRef> = self.inputs.iter().flatten().collect();
        files.sort_by(|a, b| icmp.compare_user(a.largest_user_key(), b.largest_user_key()));
        let total: u64 = files.iter().map(|f| f.meta.file_size).sum();
        let Some((last, rest)) = files.split_last() else {
            return Vec::new();
        };
        let mut cuts: Vec<Vec<u8>> = Vec::new();
        let mut bytes = 0u64;
        for f in rest {
            bytes = bytes.saturating_add(f.meta.file_size);
            let wanted = u64::try_from(cuts.len() + 1).unwrap_or(u64::MAX);
            let share = u64::try_from(parts).unwrap_or(u64::MAX);
            let key = f.largest_user_key();
            let above_previous = cuts
                .last()
                .is_none_or(|c| icmp.compare_user(key, c) == Ordering::Greater);
            let below_last = icmp.compare_user(key, last.largest_user_key()) == Ordering::Less;
            if cuts.len() + 1 < parts
                && bytes.saturating_mul(share) >= total.saturating_mul(wanted)
                && above_previous
                && below_last
            {
                cuts.push(key.to_vec());
            }
        }
        cuts
    }
}

/// Where one merge over a compaction's inputs has got to in the levels below the output level.
/// It answers the two questions the merge asks of each key, and must see keys in increasing
/// order; a compaction split into key ranges merged in parallel gives each range its own.
#[derive(Default)]
pub(crate) struct KeyCursor {
    grandparent_index: usize,
    seen_key: bool,
    overlapped_bytes: u64,
    /// Per level >= level + 2, a cursor into its files for `is_base_level_for_key`.
    level_ptrs: [usize; NUM_LEVELS],
}

impl KeyCursor {
    /// True when no level below `c`'s output level can hold `user_key`, so a deletion of it
    /// can be dropped once no snapshot needs it.
    pub(crate) fn is_base_level_for_key(&mut self, c: &Compaction, user_key: &[u8]) -> bool {
        let icmp = c.icmp();
        for level in c.level + 2..NUM_LEVELS {
            let files = &c.input_version.files[level];
            while let Some(f) = files.get(self.level_ptrs[level]) {
                if icmp.compare_user(user_key, f.largest_user_key()) != Ordering::Greater {
                    if icmp.compare_user(user_key, f.smallest_user_key()) != Ordering::Less {
                        return false; // the key falls in this file's range
                    }
                    break;
                }
                self.level_ptrs[level] += 1;
            }
        }
        true
    }

    /// True when the current output should be closed before adding `internal_key`, because
    /// it already overlaps too many of `c`'s grandparent bytes.
    pub(crate) fn should_stop_before(&mut self, c: &Compaction, internal_key: &[u8]) -> bool {
        let icmp = c.icmp();
        while let Some(g) = c.grandparents.get(self.grandparent_index) {
            if icmp.compare(internal_key, &g.meta.largest) != Ordering::Greater {
                break;
            }
            if self.seen_key {
                self.overlapped_bytes = g.meta.file_size.saturating_add(self.overlapped_bytes);
            }
            self.grandparent_index += 1;
        }
        self.seen_key = true;
        if self.overlapped_bytes > max_grandparent_overlap_bytes(c.max_output_file_size) {
            self.overlapped_bytes = 0;
            true
        } else {
            false
        }
    }
}
