//! Unit tests of the compactions in flight: which compactions may run side by side, and where
//! a flush may go beside them.

use std::sync::Arc;

use super::Running;
use crate::compaction::Compaction;
use crate::util::comparator::BytewiseComparator;
use crate::util::internal_key::{internal_key, InternalKeyComparator, ValueType};
use crate::version::edit::FileMetaData;
use crate::version::version::{FileRef, LiveFile, Version};

fn icmp() -> InternalKeyComparator {
    InternalKeyComparator::new(BytewiseComparator::shared())
}

/// A table `number` holding user keys `smallest..=largest`.
fn file(number: u64, smallest: &str, largest: &str) -> FileRef {
    Arc::new(LiveFile::new(FileMetaData {
        number,
        file_size: 1 << 20,
        smallest: internal_key(smallest.as_bytes(), 100, ValueType::Value),
        largest: internal_key(largest.as_bytes(), 1, ValueType::Value),
    }))
}

/// A compaction of `upper` (files of `level`) with `lower` (files of `level + 1`) into
/// `level + 1`.
fn compaction(level: usize, upper: Vec<FileRef>, lower: Vec<FileRef>) -> Compaction {
    let version = Arc::new(Version::new(icmp(), Default::default()));
    let mut c = Compaction::new(level, 2 << 20, version);
    c.inputs = [upper, lower];
    c
}

/// A compaction of files of `level` into `level` itself.
fn in_place(level: usize, files: Vec<FileRef>) -> Compaction {
    let version = Arc::new(Version::new(icmp(), Default::default()));
    let mut c = Compaction::in_place(level, 2 << 20, version);
    c.inputs[0] = files;
    c
}

#[test]
fn compactions_sharing_a_file_conflict() {
    let mut running = Running::new(icmp());
    let _id = running.start(&compaction(
        1,
        vec![file(1, "a", "c")],
        vec![file(2, "a", "f")],
    ));
    assert!(running.being_compacted(1) && running.being_compacted(2));
    assert!(!running.being_compacted(3));
    // Another compaction of level 2 taking #2, the running one's output-level input.
    assert!(running.conflicts(&compaction(2, vec![file(2, "a", "f")], vec![])));
    // Level 0 into level 1 wanting #1, the running one's input.
    assert!(running.conflicts(&compaction(
        0,
        vec![file(9, "b", "b")],
        vec![file(1, "a", "c")]
    )));
}

#[test]
fn compactions_into_one_level_conflict_only_where_their_ranges_meet() {
    let mut running = Running::new(icmp());
    let _id = running.start(&compaction(
        1,
        vec![file(1, "d", "f")],
        vec![file(2, "c", "g")],
    ));
    // Also into level 2: [a, b] stays clear of [c, g]; [a, c] and [g, h] share a key with it.
    assert!(!running.conflicts(&compaction(1, vec![file(3, "a", "b")], vec![])));
    assert!(running.conflicts(&compaction(1, vec![file(3, "a", "c")], vec![])));
    assert!(running.conflicts(&compaction(1, vec![file(4, "g", "h")], vec![])));
    // An in-place rewrite of level 2 writes there too; one of level 3 does not.
    assert!(running.conflicts(&in_place(2, vec![file(5, "e", "e")])));
    assert!(!running.conflicts(&in_place(3, vec![file(5, "e", "e")])));
    assert!(!running.conflicts(&in_place(2, vec![file(5, "h", "k")])));
}

#[test]
fn level_zero_into_one_runs_beside_deeper_levels_whatever_the_keys() {
    let mut running = Running::new(icmp());
    let _id = running.start(&compaction(
        2,
        vec![file(1, "a", "z")],
        vec![file(2, "a", "z")],
    ));
    let level0 = compaction(
        0,
        vec![file(10, "a", "z"), file(11, "c", "q")],
        vec![file(3, "a", "m"), file(4, "n", "z")],
    );
    assert!(!running.conflicts(&level0));
    let _id = running.start(&level0);
    // Level 1 into 2 takes files level 0 into 1 took, or writes where level 2 into 3 reads:
    // it meets neither only with files of its own, and it writes into level 2 where the
    // running compaction of level 2 does not write.
    assert!(running.conflicts(&compaction(1, vec![file(3, "a", "m")], vec![])));
    assert!(!running.conflicts(&compaction(1, vec![file(5, "zz", "zzz")], vec![])));
}

#[test]
fn two_level_zero_compactions_never_run_together() {
    let mut running = Running::new(icmp());
    let id = running.start(&compaction(0, vec![file(10, "a", "c")], vec![]));
    let other = compaction(0, vec![file(11, "x", "z")], vec![]);
    assert!(running.conflicts(&other), "disjoint, but both of level 0");
    running.finish(id);
    assert!(!running.conflicts(&other));
    assert!(!running.being_compacted(10));
}

#[test]
fn nothing_lands_over_or_above_a_flushed_table_whose_edit_is_being_written() {
    let mut running = Running::new(icmp());
    let _id = running.start_flush(2, b"f", b"h");
    assert!(!running.being_compacted(0), "a flush takes no file");
    // Into level 2 over the table; into level 1 above the newer table.
    assert!(running.conflicts(&compaction(1, vec![file(1, "g", "g")], vec![])));
    assert!(running.conflicts(&compaction(0, vec![file(2, "a", "z")], vec![])));
    // Below it, or beside it: fine.
    assert!(!running.conflicts(&compaction(2, vec![file(3, "a", "z")], vec![])));
    assert!(!running.conflicts(&compaction(0, vec![file(2, "a", "e")], vec![])));
    // A flush is no compaction of level 0.
    assert!(!running.conflicts(&compaction(0, vec![file(4, "x", "y")], vec![])));
}

#[test]
fn a_flush_stays_above_the_output_of_every_compaction_whose_range_it_meets() {
    let mut running = Running::new(icmp());
    assert_eq!(running.flush_level(b"a", b"z", 2), 2, "nothing in flight");
    let _deep = running.start(&in_place(2, vec![file(1, "c", "e"), file(2, "k", "m")]));
    // Between the rewrite's inputs: level 1 at most.
    assert_eq!(running.flush_level(b"g", b"h", 2), 1);
    assert_eq!(running.flush_level(b"n", b"p", 2), 2, "past its range");
    let level0 = running.start(&compaction(0, vec![file(10, "h", "j")], vec![]));
    assert_eq!(running.flush_level(b"g", b"h", 2), 0);
    assert_eq!(running.flush_level(b"a", b"b", 2), 2);
    running.finish(level0);
    assert_eq!(running.flush_level(b"g", b"h", 2), 1);
    // Another flush in flight bounds nothing (there is one at a time).
    let _flush = running.start_flush(2, b"a", b"z");
    assert_eq!(running.flush_level(b"a", b"b", 2), 2);
}
