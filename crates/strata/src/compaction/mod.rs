//! Compactions: what to compact (picking, in `picker`) and the description of one compaction
//! that a background thread runs.
//!
//! A compaction merges `inputs[0]` (files of `level`) with the files of `level + 1` they
//! overlap (`inputs[1]`) and writes new files to `level + 1`, cut so that no output overlaps
//! too much of `level + 2` (the "grandparents"), which would make its own compaction costly.
//! An *in-place* compaction (`compact_range` on the deepest level holding a range, when
//! compactions have more to reclaim than shadowed entries: range tombstones, expired values, a
//! compaction filter) rewrites files of `level` into `level` itself: `inputs[1]` stays empty
//! and the grandparents are the files of `level + 1`.
//! `filter`: the user's compaction filter and the reclaiming of expired values. `running`: the
//! compactions in flight, which a new one must not meet.

pub(crate) mod filter;
pub(crate) mod picker;
pub(crate) mod running;

use std::cmp::Ordering;
use std::sync::Arc;

use crate::range_del::Fragment;
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
    /// Where the outputs go: `level + 1`, or `level` for an in-place compaction.
    pub(crate) output_level: usize,
    /// Why it runs.
    pub(crate) trigger: Trigger,
    pub(crate) max_output_file_size: u64,
    pub(crate) input_version: Arc<Version>,
    pub(crate) edit: VersionEdit,
    /// `[files of level, overlapping files of level + 1]`.
    pub(crate) inputs: [Vec<FileRef>; 2],
    /// Files of `output_level + 1` overlapping the compaction's key range.
    pub(crate) grandparents: Vec<FileRef>,
}

/// Why a compaction runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trigger {
    /// A level over its budget, or too many level-0 files; and `compact_range`.
    Size,
    /// A file that reads had to look past too often.
    Seek,
}

impl Compaction {
    /// The most key ranges this compaction is merged in, of the `configured` maximum. A
    /// seek-triggered compaction is not urgent, and the reads that asked for it run meanwhile:
    /// it stays on the background thread alone rather than take their core.
    pub(crate) fn max_parts(&self, configured: usize) -> usize {
        match self.trigger {
            Trigger::Size => configured,
            Trigger::Seek => configured.min(1),
        }
    }

    /// A compaction of `level` into `level + 1`.
    pub(crate) fn new(level: usize, max_file_size: u64, input_version: Arc<Version>) -> Compaction {
        Compaction {
            level,
            output_level: level + 1,
            trigger: Trigger::Size,
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

    /// A compaction of `level` into `level` itself.
    pub(crate) fn in_place(
        level: usize,
        max_file_size: u64,
        input_version: Arc<Version>,
    ) -> Compaction {
        Compaction {
            output_level: level,
            ..Compaction::new(level, max_file_size, input_version)
        }
    }

    /// A compaction that can move its single input file down a level without rewriting it.
    pub(crate) fn is_trivial_move(&self) -> bool {
        self.output_level > self.level
            && self.inputs[0].len() == 1
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
            "{}@{} + {}@{} files [{}] + [{}] to level {}",
            self.inputs[0].len(),
            self.level,
            self.inputs[1].len(),
            self.level + 1,
            names(&self.inputs[0]),
            names(&self.inputs[1]),
            self.output_level
        )
    }

    /// The comparator of the input version.
    pub(crate) fn comparator(&self) -> InternalKeyComparator {
        self.icmp().clone()
    }

    /// Up to `parts - 1` user keys, strictly increasing, that cut the inputs into `parts` key
    /// ranges of about equal input bytes: range `i` holds the user keys from cut `i - 1` (if
    /// any, inclusive) to cut `i` (if any, exclusive). The cuts are input files' largest keys
    /// (a cut is a user key, so no user key's entries are split between ranges). Fewer cuts
    /// (none) when the inputs do not divide that finely.
    ///
    /// `bytes_up_to(file, user_key)` estimates how many of `file`'s bytes hold keys up to
    /// `user_key`, for a key inside the file's range (a table's approximate offset): a level-0
    /// file spans most of the key space, and counting all its bytes at its largest key would
    /// put every cut near the top.
    pub(crate) fn split_points(
        &self,
        parts: usize,
        mut bytes_up_to: impl FnMut(&FileRef, &[u8]) -> u64,
    ) -> Vec<Vec<u8>> {
        let icmp = self.icmp();
        let files: Vec<&FileRef> = self.inputs.iter().flatten().collect();
        let mut candidates: Vec<&[u8]> = files.iter().map(|f| f.largest_user_key()).collect();
        candidates.sort_by(|a, b| icmp.compare_user(a, b));
        candidates.dedup_by(|a, b| icmp.compare_user(a, b) == Ordering::Equal);
        // The largest key ends the last range; it cuts nothing.
        candidates.pop();
        // Sizes come from the manifest: saturate rather than overflow.
        let total = files
            .iter()
            .fold(0u64, |sum, f| sum.saturating_add(f.meta.file_size));
        let share = u64::try_from(parts).unwrap_or(u64::MAX);
        let mut cuts: Vec<Vec<u8>> = Vec::new();
        for key in candidates {
            if cuts.len() + 1 >= parts {
                break;
            }
            let below: u64 = files
                .iter()
                .map(|f| {
                    if icmp.compare_user(key, f.largest_user_key()) != Ordering::Less {
                        f.meta.file_size
                    } else if icmp.compare_user(key, f.smallest_user_key()) == Ordering::Less {
                        0
                    } else {
                        bytes_up_to(f, key).min(f.meta.file_size)
                    }
                })
                .fold(0u64, u64::saturating_add);
            let wanted = u64::try_from(cuts.len() + 1).unwrap_or(u64::MAX);
            if below.saturating_mul(share) >= total.saturating_mul(wanted) {
                cuts.push(key.to_vec());
            }
        }
        cuts
    }
}

impl Compaction {
    /// The range tombstones of `fragments` (the inputs', sorted) that the output keeps for
    /// readers at or after `smallest_snapshot`: per fragment, a tombstone older than a newer
    /// one every reader sees goes (the newer one hides all it hides), and so does one every
    /// reader sees when no level below the output holds any of its keys (the entries it hides
    /// in the inputs are dropped with it, and there are none further down).
    pub(crate) fn surviving_tombstones(
        &self,
        fragments: Vec<Fragment>,
        smallest_snapshot: u64,
    ) -> Vec<Fragment> {
        let mut kept = Vec::with_capacity(fragments.len());
        for mut fragment in fragments {
            let base = self.is_base_level_for_range(&fragment.start, &fragment.end);
            let mut seen_by_all = false;
            fragment.sequences.retain(|&sequence| {
                if seen_by_all {
                    return false;
                }
                seen_by_all = sequence <= smallest_snapshot;
                !(seen_by_all && base)
            });
            if !fragment.sequences.is_empty() {
                kept.push(fragment);
            }
        }
        kept
    }

    /// True when no level below the output level holds a file overlapping the user keys
    /// `[start, end]`.
    fn is_base_level_for_range(&self, start: &[u8], end: &[u8]) -> bool {
        (self.output_level + 1..NUM_LEVELS).all(|level| {
            !self
                .input_version
                .overlap_in_level(level, Some(start), Some(end))
        })
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
    /// Per level below the output level, a cursor into its files for `is_base_level_for_key`.
    level_ptrs: [usize; NUM_LEVELS],
}

impl KeyCursor {
    /// True when no level below `c`'s output level can hold `user_key`, so a deletion of it
    /// can be dropped once no snapshot needs it.
    pub(crate) fn is_base_level_for_key(&mut self, c: &Compaction, user_key: &[u8]) -> bool {
        let icmp = c.icmp();
        for level in c.output_level + 1..NUM_LEVELS {
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use proptest::prelude::*;

    use super::Compaction;
    use crate::util::comparator::{BytewiseComparator, Comparator, ReverseBytewiseComparator};
    use crate::util::internal_key::{internal_key, InternalKeyComparator, ValueType};
    use crate::version::edit::FileMetaData;
    use crate::version::version::{FileRef, LiveFile, Version};

    /// A table holding user keys `smallest..=largest` in `size` bytes.
    fn file(number: u64, smallest: &[u8], largest: &[u8], size: u64) -> FileRef {
        Arc::new(LiveFile::new(FileMetaData {
            number,
            file_size: size,
            smallest: internal_key(smallest, 1000, ValueType::Value),
            largest: internal_key(largest, 1, ValueType::Deletion),
        }))
    }

    fn compaction_with(
        user: Arc<dyn Comparator>,
        level0: Vec<FileRef>,
        level1: Vec<FileRef>,
    ) -> Compaction {
        let version = Arc::new(Version::new(
            InternalKeyComparator::new(user),
            Default::default(),
        ));
        let mut c = Compaction::new(0, 1 << 20, version);
        c.inputs = [level0, level1];
        c
    }

    fn compaction(level0: Vec<FileRef>, level1: Vec<FileRef>) -> Compaction {
        compaction_with(BytewiseComparator::shared(), level0, level1)
    }

    /// File sizes: mostly table-like, sometimes near `u64::MAX` (a manifest's sizes are
    /// whatever it says).
    /// Non-overlapping level-1 files, one per distinct generated key, with the sizes given.
    fn level1_files(generated: &[(u8, u64)]) -> Vec<FileRef> {
        let mut keys: Vec<u8> = generated.iter().map(|&(k, _)| k).collect();
        keys.sort_unstable();
        keys.dedup();
        keys.iter()
            .zip(generated.iter().map(|&(_, size)| size))
            .zip(1..)
            .map(|((&k, size), n)| file(n, &[b'a' + k], &[b'a' + k], size))
            .collect()
    }

    /// What any cuts of `all` into `parts` must be: at most `parts - 1`, strictly increasing,
    /// each some input's largest key and below the largest of them.
    fn check_cut_rules(
        cuts: &[Vec<u8>],
        all: &[FileRef],
        parts: usize,
        cmp: &dyn Comparator,
    ) -> Result<(), TestCaseError> {
        prop_assert!(
            cuts.len() <= parts.saturating_sub(1),
            "{} cuts for {parts} parts",
            cuts.len()
        );
        for pair in cuts.windows(2) {
            prop_assert!(
                cmp.compare(&pair[0], &pair[1]).is_lt(),
                "cuts not increasing: {cuts:?}"
            );
        }
        let largest = all
            .iter()
            .map(|f| f.largest_user_key())
            .max_by(|a, b| cmp.compare(a, b));
        for cut in cuts {
            prop_assert!(
                largest.is_some_and(|l| cmp.compare(cut, l).is_lt()),
                "cut {cut:?} at or past the largest key"
            );
            prop_assert!(
                all.iter().any(|f| f.largest_user_key() == cut.as_slice()),
                "cut {cut:?} is no input's largest key"
            );
        }
        Ok(())
    }

    fn file_size() -> impl Strategy<Value = u64> {
        prop_oneof![
            4 => 0u64..(4 << 20),
            1 => (u64::MAX - (4 << 20))..=u64::MAX,
            1 => any::<u64>(),
        ]
    }

    #[test]
    fn huge_file_sizes_do_not_overflow() {
        let half = u64::MAX / 2 + 1;
        let c = compaction(
            vec![file(10, b"a", b"z", half)],
            vec![
                file(1, b"a", b"f", half),
                file(2, b"g", b"m", u64::MAX),
                file(3, b"n", b"z", u64::MAX),
            ],
        );
        for parts in [2, 3, 4, usize::MAX] {
            let cuts = c.split_points(parts, |f, _| f.meta.file_size / 2);
            assert!(cuts.len() < parts, "{cuts:?}");
            assert!(
                cuts.iter()
                    .all(|k| k.as_slice() == b"f" || k.as_slice() == b"m"),
                "{cuts:?}"
            );
        }
    }

    #[test]
    fn no_cut_without_two_files() {
        assert!(compaction(vec![], vec![])
            .split_points(4, |_, _| 0)
            .is_empty());
        let one = compaction(vec![file(1, b"a", b"z", 100 << 20)], vec![]);
        for parts in 0..8 {
            assert!(
                one.split_points(parts, |_, _| 0).is_empty(),
                "parts {parts}"
            );
        }
    }

    #[test]
    fn one_part_or_none_means_no_cut() {
        let files = (0..8u8)
            .map(|i| file(u64::from(i), &[b'a' + 2 * i], &[b'b' + 2 * i], 1 << 20))
            .collect();
        let c = compaction(vec![], files);
        assert!(c.split_points(0, |_, _| 0).is_empty());
        assert!(c.split_points(1, |_, _| 0).is_empty());
    }

    #[test]
    fn equal_files_are_cut_into_equal_parts() {
        // Eight level-1 files of 1 MiB: a..b, c..d, ..., o..p.
        let files: Vec<FileRef> = (0..8u8)
            .map(|i| file(u64::from(i), &[b'a' + 2 * i], &[b'b' + 2 * i], 1 << 20))
            .collect();
        let c = compaction(vec![], files);
        assert_eq!(c.split_points(2, |_, _| 0), vec![b"h".to_vec()]);
        assert_eq!(
            c.split_points(4, |_, _| 0),
            vec![b"d".to_vec(), b"h".to_vec(), b"l".to_vec()]
        );
        // More parts than files: one cut after each file but the last.
        let cuts = c.split_points(16, |_, _| 0);
        assert_eq!(cuts.len(), 7, "{cuts:?}");
        assert!(!cuts.contains(&b"p".to_vec()), "the largest key is no cut");
    }

    #[test]
    fn files_spanning_the_key_space_are_spread_by_the_estimate() {
        // Four level-0 files over all of a..z and four level-1 files a..f, g..m, n..s, t..z,
        // 4 MiB each, bytes spread evenly over the keys: half the input lies at or below "m".
        let level0: Vec<FileRef> = (0..4).map(|n| file(10 + n, b"a", b"z", 4 << 20)).collect();
        let level1 = vec![
            file(1, b"a", b"f", 4 << 20),
            file(2, b"g", b"m", 4 << 20),
            file(3, b"n", b"s", 4 << 20),
            file(4, b"t", b"z", 4 << 20),
        ];
        let c = compaction(level0, level1);
        let even = |f: &FileRef, key: &[u8]| {
            let span = u64::from(f.largest_user_key()[0] - f.smallest_user_key()[0]) + 1;
            let upto = u64::from(key[0] - f.smallest_user_key()[0]) + 1;
            f.meta.file_size * upto / span
        };
        assert_eq!(c.split_points(2, even), vec![b"m".to_vec()]);
        // Counted only at their largest key, the level-0 files leave no key with half the
        // input at or below it: no cut at all.
        assert!(c.split_points(2, |_, _| 0).is_empty());
    }

    #[test]
    fn files_sharing_the_largest_key_give_no_cut() {
        let files = (0..6)
            .map(|i| file(i, &[b'a' + i as u8], b"z", 10 << 20))
            .collect();
        assert!(compaction(files, vec![])
            .split_points(4, |_, _| 0)
            .is_empty());
    }

    #[test]
    fn a_repeated_largest_key_is_cut_once() {
        // Two level-0 files end at "m" like a level-1 file: "m" may be cut at only once.
        let c = compaction(
            vec![file(10, b"a", b"m", 1 << 20), file(11, b"c", b"m", 1 << 20)],
            vec![
                file(1, b"a", b"f", 1 << 20),
                file(2, b"g", b"m", 1 << 20),
                file(3, b"n", b"z", 1 << 20),
            ],
        );
        let cuts = c.split_points(5, |_, _| 0);
        assert_eq!(cuts, vec![b"f".to_vec(), b"m".to_vec()]);
    }

    #[test]
    fn cuts_follow_the_comparator() {
        // Under the reverse order "z" sorts first and "a" last.
        let files: Vec<FileRef> = [b"z", b"s", b"m", b"g", b"a"]
            .iter()
            .zip(1..)
            .map(|(k, n)| file(n, *k, *k, 1 << 20))
            .collect();
        let c = compaction_with(Arc::new(ReverseBytewiseComparator), vec![], files);
        let cuts = c.split_points(5, |_, _| 0);
        assert_eq!(
            cuts,
            vec![b"z".to_vec(), b"s".to_vec(), b"m".to_vec(), b"g".to_vec()]
        );
    }

    proptest! {
        #[test]
        fn cuts_are_few_increasing_input_keys_below_the_largest(
            level0 in proptest::collection::vec((0u8..12, 0u8..12, 0u64..(4 << 20)), 0..6),
            level1 in proptest::collection::vec((0u8..12, 0u64..(4 << 20)), 0..10),
            parts in 0usize..12,
        ) {
            let level0: Vec<FileRef> = level0
                .iter()
                .zip(100..)
                .map(|(&(a, b, size), n)| file(n, &[b'a' + a.min(b)], &[b'a' + a.max(b)], size))
                .collect();
            let level1 = level1_files(&level1);
            let all: Vec<FileRef> = level0.iter().chain(&level1).cloned().collect();
            let c = compaction(level0, level1);
            let cuts = c.split_points(parts, |_, _| 0);
            if all.len() < 2 {
                prop_assert!(cuts.is_empty());
            }
            check_cut_rules(&cuts, &all, parts, &BytewiseComparator)?;
        }
            #[test]
        fn any_estimate_gives_few_increasing_cuts_inside_the_inputs(
            level0 in proptest::collection::vec((0u8..12, 0u8..12, file_size()), 0..6),
            level1 in proptest::collection::vec((0u8..12, file_size()), 0..10),
            parts in prop_oneof![0usize..12, Just(usize::MAX), any::<usize>()],
            reverse in any::<bool>(),
            estimates in proptest::collection::vec(
                prop_oneof![0u64..(8 << 20), Just(u64::MAX), any::<u64>()],
                1..16,
            ),
        ) {
            let user: Arc<dyn Comparator> = if reverse {
                Arc::new(ReverseBytewiseComparator)
            } else {
                BytewiseComparator::shared()
            };
            let cmp = Arc::clone(&user);
            let level0: Vec<FileRef> = level0
                .iter()
                .zip(100..)
                .map(|(&(a, b, size), n)| {
                    let (lo, hi) = if (cmp.compare(&[a], &[b])).is_le() { (a, b) } else { (b, a) };
                    file(n, &[b'a' + lo], &[b'a' + hi], size)
                })
                .collect();
            let level1 = level1_files(&level1);
            let all: Vec<FileRef> = level0.iter().chain(&level1).cloned().collect();
            let c = compaction_with(user, level0, level1);
            // An arbitrary estimate (also above the file's size), checked to be asked only
            // about keys inside the file's range below its largest key.
            let mut calls = 0usize;
            let mut outside = Vec::new();
            let mut estimate = |f: &FileRef, key: &[u8]| {
                if cmp.compare(key, f.smallest_user_key()).is_lt()
                    || cmp.compare(key, f.largest_user_key()).is_ge()
                {
                    outside.push((f.number(), key.to_vec()));
                }
                calls += 1;
                estimates[calls % estimates.len()]
            };
            let cuts = c.split_points(parts, &mut estimate);
            prop_assert!(outside.is_empty(), "estimate asked outside a file: {outside:?}");
            check_cut_rules(&cuts, &all, parts, &*cmp)?;
            // An estimate above a file's size counts as the whole file, no more.
            let mut calls = 0usize;
            let clamped = c.split_points(parts, |f: &FileRef, _: &[u8]| {
                calls += 1;
                estimates[calls % estimates.len()].min(f.meta.file_size)
            });
            prop_assert_eq!(clamped, cuts);
        }
    }
}
