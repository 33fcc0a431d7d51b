//! Unit tests of a version's file lookups (`find_file`, `find_file_by_user_key`,
//! `overlap_in_level`, `overlapping_inputs`) and of the compaction policy's scores; their
//! hand-made tables and versions serve the compaction picker's tests too.

use std::sync::Arc;

use super::edit::FileMetaData;
use super::policy::{max_bytes_for_level, set_compaction_score, L0_COMPACTION_TRIGGER};
use super::version::{find_file, find_file_by_user_key, FileRef, LiveFile, Version};
use super::NUM_LEVELS;
use crate::util::comparator::BytewiseComparator;
use crate::util::internal_key::{internal_key, InternalKeyComparator, ValueType, MAX_SEQUENCE};

pub(crate) fn icmp() -> InternalKeyComparator {
    InternalKeyComparator::new(BytewiseComparator::shared())
}

/// A file holding user keys `smallest..=largest` (written at sequences 100 and 1).
pub(crate) fn file(number: u64, smallest: &str, largest: &str, size: u64) -> FileRef {
    Arc::new(LiveFile::new(FileMetaData {
        number,
        file_size: size,
        smallest: internal_key(smallest.as_bytes(), 100, ValueType::Value),
        largest: internal_key(largest.as_bytes(), 1, ValueType::Value),
    }))
}

/// A version holding `levels` (level, files).
pub(crate) fn version(levels: Vec<(usize, Vec<FileRef>)>) -> Version {
    let mut files: [Vec<FileRef>; NUM_LEVELS] = Default::default();
    for (level, level_files) in levels {
        files[level] = level_files;
    }
    Version::new(icmp(), files)
}

pub(crate) fn numbers(files: &[FileRef]) -> Vec<u64> {
    files.iter().map(|f| f.number()).collect()
}

/// A sorted, non-overlapping level: [b..d] [f..h] [j..l].
fn level() -> Vec<FileRef> {
    vec![
        file(1, "b", "d", 10),
        file(2, "f", "h", 10),
        file(3, "j", "l", 10),
    ]
}

#[test]
fn find_file_by_user_key_returns_the_first_file_ending_at_or_after_the_key() {
    let files = level();
    let find = |key: &str| find_file_by_user_key(&icmp(), &files, key.as_bytes());
    assert_eq!(find("a"), 0);
    assert_eq!(find("b"), 0);
    assert_eq!(find("d"), 0);
    assert_eq!(find("e"), 1, "a gap goes to the next file");
    assert_eq!(find("l"), 2);
    assert_eq!(find("m"), 3, "past every file");
    assert_eq!(find_file_by_user_key(&icmp(), &[], b"a"), 0);
}

#[test]
fn find_file_orders_versions_of_one_user_key_by_sequence() {
    let files = level();
    let find = |key: &str, sequence| {
        find_file(
            &icmp(),
            &files,
            &internal_key(key.as_bytes(), sequence, ValueType::Value),
        )
    };
    // File 1 ends at (d, 1): (d, 5) sorts before it, (d, 0) after it.
    assert_eq!(find("d", 5), 0);
    assert_eq!(find("d", 1), 0);
    assert_eq!(find("d", 0), 1);
    assert_eq!(find("a", MAX_SEQUENCE), 0);
    assert_eq!(find("z", MAX_SEQUENCE), 3);
}

#[test]
fn overlap_in_level_sees_ranges_touching_any_file() {
    let v = version(vec![
        (0, vec![file(4, "m", "p", 1), file(5, "a", "c", 1)]),
        (1, level()),
    ]);
    let overlaps = |level, lo: Option<&str>, hi: Option<&str>| {
        v.overlap_in_level(level, lo.map(str::as_bytes), hi.map(str::as_bytes))
    };
    assert!(overlaps(1, Some("c"), Some("e")));
    assert!(
        overlaps(1, Some("d"), Some("d")),
        "a range ending on a file's last key"
    );
    assert!(!overlaps(1, Some("e"), Some("e")), "a gap between files");
    assert!(!overlaps(1, Some("m"), None));
    assert!(!overlaps(1, None, Some("a")));
    assert!(overlaps(1, None, None));
    // Level 0 files are checked one by one, in any order.
    assert!(overlaps(0, Some("o"), Some("z")));
    assert!(overlaps(0, Some("b"), Some("b")));
    assert!(!overlaps(0, Some("d"), Some("l")));
    assert!(!overlaps(2, None, None), "an empty level");
}

#[test]
fn overlapping_inputs_of_a_sorted_level_are_the_files_touching_the_range() {
    let v = version(vec![(1, level())]);
    let inputs = |lo: Option<&str>, hi: Option<&str>| {
        numbers(&v.overlapping_inputs(1, lo.map(str::as_bytes), hi.map(str::as_bytes)))
    };
    assert_eq!(inputs(Some("c"), Some("g")), vec![1, 2]);
    assert_eq!(inputs(Some("e"), Some("e")), Vec::<u64>::new());
    assert_eq!(inputs(Some("h"), None), vec![2, 3]);
    assert_eq!(inputs(None, None), vec![1, 2, 3]);
}

#[test]
fn overlapping_inputs_of_level_zero_widen_the_range_transitively() {
    // [a..c] overlaps [c..f], which overlaps [e..h]; [x..z] overlaps none of them.
    let v = version(vec![(
        0,
        vec![
            file(7, "e", "h", 1),
            file(8, "x", "z", 1),
            file(9, "c", "f", 1),
            file(10, "a", "c", 1),
        ],
    )]);
    let mut inputs = numbers(&v.overlapping_inputs(0, Some(b"a"), Some(b"a")));
    inputs.sort_unstable();
    assert_eq!(inputs, vec![7, 9, 10], "a..a reaches e..h through c..f");
    let mut inputs = numbers(&v.overlapping_inputs(0, Some(b"g"), Some(b"g")));
    inputs.sort_unstable();
    assert_eq!(inputs, vec![7, 9, 10], "and back down from g");
    assert_eq!(numbers(&v.overlapping_inputs(0, Some(b"y"), None)), vec![8]);
    assert!(v.overlapping_inputs(0, Some(b"i"), Some(b"w")).is_empty());
}

#[test]
fn level_zero_scores_by_file_count_and_deeper_levels_by_bytes() {
    let mb = 1 << 20;
    assert_eq!(max_bytes_for_level(1), 10.0 * mb as f64);
    assert_eq!(max_bytes_for_level(2), 100.0 * mb as f64);
    assert_eq!(max_bytes_for_level(5), 100_000.0 * mb as f64);

    let score = |levels| {
        let mut v = version(levels);
        set_compaction_score(&mut v);
        (v.compaction_level, v.compaction_score)
    };
    assert_eq!(score(vec![]), (0, 0.0), "an empty tree needs nothing");
    let l0: Vec<FileRef> = (0..L0_COMPACTION_TRIGGER as u64)
        .map(|n| file(n + 1, "a", "z", 1))
        .collect();
    assert_eq!(
        score(vec![(0, l0.clone())]),
        (0, 1.0),
        "the trigger scores 1"
    );
    // 15 MiB at level 1 (1.5) outweighs the four level-0 files (1.0)...
    let big = vec![file(20, "a", "m", 15 * mb)];
    assert_eq!(score(vec![(0, l0.clone()), (1, big.clone())]), (1, 1.5));
    // ...and 150 MiB at level 2 scores the same 1.5: the first level wins a tie.
    let deeper = vec![file(21, "a", "m", 150 * mb)];
    assert_eq!(score(vec![(1, big), (2, deeper)]), (1, 1.5));
    // The last level is never scored: nothing is below it to compact into.
    let last = vec![file(22, "a", "m", u64::MAX)];
    assert_eq!(score(vec![(NUM_LEVELS - 1, last)]).0, 0);
}
