use std::cmp::Ordering;
use std::sync::Arc;

use proptest::prelude::*;

use super::*;
use crate::util::comparator::{BytewiseComparator, ReverseBytewiseComparator};
use crate::util::internal_key::InternalKeyComparator;

fn icmp() -> InternalKeyComparator {
    InternalKeyComparator::new(BytewiseComparator::shared())
}

fn tombstone(start: &[u8], end: &[u8], sequence: u64) -> RangeTombstone {
    RangeTombstone {
        start: start.to_vec(),
        end: end.to_vec(),
        sequence,
    }
}

/// The newest tombstone at or below `read` covering `key`, by brute force.
fn naive(
    icmp: &InternalKeyComparator,
    tombstones: &[RangeTombstone],
    key: &[u8],
    read: u64,
) -> Option<u64> {
    tombstones
        .iter()
        .filter(|t| {
            icmp.compare_user(&t.start, key) != Ordering::Greater
                && icmp.compare_user(key, &t.end) == Ordering::Less
                && t.sequence <= read
        })
        .map(|t| t.sequence)
        .max()
}

fn check_shape(icmp: &InternalKeyComparator, fragments: &Fragments) -> Result<(), TestCaseError> {
    for f in fragments.fragments() {
        prop_assert_eq!(icmp.compare_user(&f.start, &f.end), Ordering::Less);
        prop_assert!(!f.sequences.is_empty());
        prop_assert!(f.sequences.windows(2).all(|w| w[0] > w[1]));
    }
    for pair in fragments.fragments().windows(2) {
        prop_assert_ne!(
            icmp.compare_user(&pair[0].end, &pair[1].start),
            Ordering::Greater
        );
    }
    Ok(())
}

#[test]
fn overlapping_tombstones_are_cut_at_every_bound() {
    let f = Fragments::new(
        &icmp(),
        vec![
            tombstone(b"c", b"g", 5),
            tombstone(b"a", b"e", 9),
            tombstone(b"x", b"x", 7), // empty: covers nothing
        ],
    );
    let got: Vec<(&[u8], &[u8], Vec<u64>)> = f
        .fragments()
        .iter()
        .map(|f| (f.start.as_slice(), f.end.as_slice(), f.sequences.clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            (&b"a"[..], &b"c"[..], vec![9]),
            (b"c", b"e", vec![9, 5]),
            (b"e", b"g", vec![5]),
        ]
    );
    assert_eq!(f.newest_covering(b"d", 100), Some(9));
    assert_eq!(f.newest_covering(b"d", 8), Some(5));
    assert_eq!(f.newest_covering(b"d", 4), None);
    assert_eq!(f.newest_covering(b"g", 100), None, "the end is not deleted");
    assert_eq!(f.newest_covering(b"x", 100), None);
}

#[test]
fn touching_tombstones_of_one_sequence_join() {
    let f = Fragments::new(
        &icmp(),
        vec![tombstone(b"a", b"c", 3), tombstone(b"c", b"e", 3)],
    );
    assert_eq!(f.fragments().len(), 1);
    assert_eq!(f.fragments()[0].end, b"e");
}

#[test]
fn the_comparator_decides_the_order() {
    let reverse = InternalKeyComparator::new(Arc::new(ReverseBytewiseComparator));
    // In reverse order "z" comes first: [z, a) holds every key between them.
    let f = Fragments::new(&reverse, vec![tombstone(b"z", b"a", 4)]);
    assert_eq!(f.newest_covering(b"m", 10), Some(4));
    assert_eq!(f.newest_covering(b"a", 10), None);
    // And [a, z) is empty there.
    assert!(Fragments::new(&reverse, vec![tombstone(b"a", b"z", 4)]).is_empty());
}

#[test]
fn entries_round_trip_and_others_are_refused() {
    let t = tombstone(b"from", b"to", 42);
    assert_eq!(
        RangeTombstone::from_entry(&t.entry_key(), b"to").unwrap(),
        t
    );
    let value = internal_key(b"from", 42, ValueType::Value);
    assert!(RangeTombstone::from_entry(&value, b"to")
        .unwrap_err()
        .is_corruption());
    assert!(RangeTombstone::from_entry(b"short", b"")
        .unwrap_err()
        .is_corruption());
}

#[test]
fn the_end_bound_sorts_before_every_entry_of_the_end() {
    let icmp = icmp();
    let bound = end_bound(b"k");
    for sequence in [0, 1, MAX_SEQUENCE - 1, MAX_SEQUENCE] {
        for t in [
            ValueType::Deletion,
            ValueType::Value,
            ValueType::ExpiringValue,
        ] {
            let entry = internal_key(b"k", sequence, t);
            assert_eq!(icmp.compare(&bound, &entry), Ordering::Less);
        }
    }
    let before = internal_key(b"j\xff", 0, ValueType::Deletion);
    assert_eq!(icmp.compare(&before, &bound), Ordering::Less);
}

fn tombstones_strategy() -> impl Strategy<Value = Vec<RangeTombstone>> {
    proptest::collection::vec((0u8..20, 0u8..20, 1u64..40), 0..24).prop_map(|v| {
        v.into_iter()
            .map(|(a, b, s)| tombstone(&[a], &[b], s))
            .collect()
    })
}

proptest! {
    #[test]
    fn lookups_match_brute_force(tombstones in tombstones_strategy()) {
        let icmp = icmp();
        let f = Fragments::new(&icmp, tombstones.clone());
        check_shape(&icmp, &f)?;
        for key in 0u8..21 {
            for read in [0u64, 5, 10, 20, 39, 100] {
                prop_assert_eq!(
                    f.newest_covering(&[key], read),
                    naive(&icmp, &tombstones, &[key], read),
                    "key {} read {}", key, read
                );
            }
        }
    }

    #[test]
    fn merging_and_rebuilding_keep_every_answer(
        a in tombstones_strategy(),
        b in tombstones_strategy(),
        lo in proptest::option::of(0u8..21),
        hi in proptest::option::of(0u8..21),
    ) {
        let icmp = icmp();
        let fa = Fragments::new(&icmp, a.clone());
        let fb = Fragments::new(&icmp, b.clone());
        let merged = Fragments::merge(&icmp, [&fa, &fb]);
        check_shape(&icmp, &merged)?;
        let all: Vec<RangeTombstone> = a.iter().chain(&b).cloned().collect();
        let rebuilt = Fragments::new(&icmp, merged.tombstones().collect());
        prop_assert_eq!(rebuilt.fragments(), merged.fragments());
        let lo = lo.map(|k| vec![k]);
        let hi = hi.map(|k| vec![k]);
        let clipped = Fragments::new(
            &icmp,
            clip(&icmp, merged.fragments(), lo.as_deref(), hi.as_deref())
                .into_iter()
                .flat_map(|f| {
                    f.sequences
                        .iter()
                        .map(|&s| tombstone(&f.start, &f.end, s))
                        .collect::<Vec<_>>()
                })
                .collect(),
        );
        for key in 0u8..21 {
            let inside = lo.as_ref().is_none_or(|l| [key].as_slice() >= l.as_slice())
                && hi.as_ref().is_none_or(|h| [key].as_slice() < h.as_slice());
            for read in [3u64, 17, 100] {
                let want = naive(&icmp, &all, &[key], read);
                prop_assert_eq!(merged.newest_covering(&[key], read), want);
                prop_assert_eq!(
                    clipped.newest_covering(&[key], read),
                    if inside { want } else { None }
                );
            }
        }
    }

    #[test]
    fn searches_from_a_hint_find_what_a_binary_search_finds(
        tombstones in tombstones_strategy(),
        keys in proptest::collection::vec(0u8..21, 0..40),
        order in 0u8..3,
        hint in 0usize..40,
    ) {
        let icmp = icmp();
        let f = Fragments::new(&icmp, tombstones);
        let mut keys = keys;
        match order {
            0 => keys.sort_unstable(),
            1 => keys.sort_unstable_by(|a, b| b.cmp(a)),
            _ => {} // any order: hints far off
        }
        let mut hint = hint;
        for key in keys {
            prop_assert_eq!(f.covering_near(&[key], &mut hint), f.covering(&[key]), "key {}", key);
            prop_assert!(hint <= f.fragments().len());
        }
    }
}
