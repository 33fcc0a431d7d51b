//! Tests of [`DbIter`](super::DbIter): hand-written direction-change cases and a model check
//! against the visible state of random histories.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use proptest::prelude::*;

use super::*;
use crate::iter::merging::merging_iterator;
use crate::iter::vec_iter::VecIter;
use crate::util::comparator::{BytewiseComparator, Comparator, ReverseBytewiseComparator};
use crate::util::internal_key::internal_key;

fn bytewise() -> InternalKeyComparator {
    InternalKeyComparator::new(BytewiseComparator::shared())
}

type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// The internal entry of one write: a put with a value or a delete.
fn entry(key: &[u8], sequence: SequenceNumber, value: Option<&[u8]>) -> (Vec<u8>, Vec<u8>) {
    match value {
        Some(v) => (internal_key(key, sequence, ValueType::Value), v.to_vec()),
        None => (internal_key(key, sequence, ValueType::Deletion), Vec::new()),
    }
}

/// Writes as `(key, sequence, value or None for a delete)`, all in one child.
fn writes(list: &[(&str, u64, Option<&str>)]) -> Entries {
    list.iter()
        .map(|&(k, s, v)| entry(k.as_bytes(), s, v.map(str::as_bytes)))
        .collect()
}

fn db_iter_over(
    icmp: &InternalKeyComparator,
    children: Vec<Entries>,
    sequence: SequenceNumber,
    lower: Option<&str>,
    upper: Option<&str>,
) -> DbIter {
    let children = children
        .into_iter()
        .map(|e| Box::new(VecIter::new(icmp.clone(), e)) as Box<dyn InternalIterator>)
        .collect();
    DbIter::new(
        merging_iterator(icmp.clone(), children),
        icmp.clone(),
        sequence,
        lower.map(|b| b.as_bytes().to_vec()),
        upper.map(|b| b.as_bytes().to_vec()),
    )
}

fn db_iter(entries: Entries, sequence: SequenceNumber) -> DbIter {
    db_iter_over(&bytewise(), vec![entries], sequence, None, None)
}

/// The current `key=value`, or `-` when not valid.
fn at(it: &DbIter) -> String {
    if !it.valid() {
        return "-".to_owned();
    }
    format!(
        "{}={}",
        String::from_utf8_lossy(it.key()),
        String::from_utf8_lossy(it.value())
    )
}

fn scan_forward(it: &mut DbIter) -> Vec<String> {
    let mut out = Vec::new();
    it.seek_to_first();
    while it.valid() {
        out.push(at(it));
        it.next();
    }
    out
}

fn scan_backward(it: &mut DbIter) -> Vec<String> {
    let mut out = Vec::new();
    it.seek_to_last();
    while it.valid() {
        out.push(at(it));
        it.prev();
    }
    out
}

#[test]
fn shows_the_newest_visible_version_of_live_keys() {
    let data = writes(&[
        ("a", 1, Some("a1")),
        ("a", 2, Some("a2")),
        ("b", 3, Some("b3")),
        ("b", 4, None),
        ("c", 5, Some("c5")),
        ("c", 7, Some("c7")),
    ]);
    let mut it = db_iter(data.clone(), 6);
    assert_eq!(scan_forward(&mut it), ["a=a2", "c=c5"]);
    assert_eq!(scan_backward(&mut it), ["c=c5", "a=a2"]);
    let mut it = db_iter(data.clone(), 3);
    assert_eq!(scan_forward(&mut it), ["a=a2", "b=b3"]);
    assert_eq!(scan_backward(&mut it), ["b=b3", "a=a2"]);
    let mut it = db_iter(data.clone(), MAX_SEQUENCE);
    assert_eq!(scan_forward(&mut it), ["a=a2", "c=c7"]);
    let mut it = db_iter(data, 0);
    assert!(scan_forward(&mut it).is_empty());
    assert!(scan_backward(&mut it).is_empty());
    assert!(it.status().is_ok());
}

#[test]
fn prev_after_seek_onto_a_key_with_newer_hidden_versions() {
    let data = writes(&[
        ("a", 1, Some("a1")),
        ("b", 2, Some("b2")),
        ("b", 5, Some("b5")),
        ("b", 6, None),
        ("c", 3, Some("c3")),
    ]);
    let mut it = db_iter(data, 4);
    it.seek(b"b");
    assert_eq!(at(&it), "b=b2");
    it.prev();
    assert_eq!(at(&it), "a=a1");
    it.next();
    assert_eq!(at(&it), "b=b2");
    it.next();
    assert_eq!(at(&it), "c=c3");
    it.prev();
    assert_eq!(at(&it), "b=b2");
    it.prev();
    assert_eq!(at(&it), "a=a1");
    it.prev();
    assert_eq!(at(&it), "-");
}

#[test]
fn seek_past_the_end_then_walk_back() {
    let data = writes(&[("a", 1, Some("1")), ("b", 2, Some("2")), ("c", 3, None)]);
    let mut it = db_iter(data, 10);
    it.seek(b"bb");
    assert_eq!(at(&it), "-");
    it.seek(b"z");
    assert_eq!(at(&it), "-");
    it.seek_to_last();
    assert_eq!(at(&it), "b=2");
    it.prev();
    assert_eq!(at(&it), "a=1");
    it.next();
    assert_eq!(at(&it), "b=2");
    it.next();
    assert_eq!(at(&it), "-");
}

#[test]
fn next_after_prev_reaches_the_first_key() {
    let data = writes(&[
        ("a", 1, Some("1")),
        ("b", 2, Some("2")),
        ("c", 3, Some("3")),
    ]);
    let mut it = db_iter(data, 10);
    it.seek_to_last();
    it.prev();
    it.prev();
    // The inner iterator has run off the front while gathering "a".
    assert_eq!(at(&it), "a=1");
    it.next();
    assert_eq!(at(&it), "b=2");
    it.prev();
    assert_eq!(at(&it), "a=1");
    it.prev();
    assert_eq!(at(&it), "-");
    it.seek_to_first();
    assert_eq!(at(&it), "a=1");
    it.prev();
    assert_eq!(at(&it), "-");
}

#[test]
fn deleted_keys_at_the_edges() {
    let data = writes(&[
        ("a", 1, None),
        ("b", 2, Some("2")),
        ("c", 3, Some("3")),
        ("d", 4, Some("4")),
        ("d", 5, None),
    ]);
    let mut it = db_iter(data, 10);
    assert_eq!(scan_forward(&mut it), ["b=2", "c=3"]);
    assert_eq!(scan_backward(&mut it), ["c=3", "b=2"]);
    it.seek_to_first();
    it.prev();
    assert_eq!(at(&it), "-");
    it.seek_to_last();
    it.next();
    assert_eq!(at(&it), "-");
    it.seek(b"a");
    assert_eq!(at(&it), "b=2");
    it.seek(b"d");
    assert_eq!(at(&it), "-");
    it.seek(b"c");
    it.prev();
    it.prev();
    assert_eq!(at(&it), "-");
}

#[test]
fn many_versions_of_one_key() {
    // Versions of "k" alternate put (odd sequences) and delete (even), between two
    // neighbours that never change.
    let mut data = vec![entry(b"a", 1, Some(b"a")), entry(b"z", 1, Some(b"z"))];
    for seq in 2..=200u64 {
        let value = format!("k{seq}");
        data.push(entry(b"k", seq, (seq % 2 == 1).then_some(value.as_bytes())));
    }
    for snapshot in [1, 2, 3, 100, 101, 199, 200, 201] {
        let mut it = db_iter(data.clone(), snapshot);
        let newest = snapshot.min(200);
        let live = newest % 2 == 1 && newest >= 3;
        let k = format!("k=k{newest}");
        let forward: Vec<String> = if live {
            vec!["a=a".into(), k.clone(), "z=z".into()]
        } else {
            vec!["a=a".into(), "z=z".into()]
        };
        assert_eq!(scan_forward(&mut it), forward, "snapshot {snapshot}");
        let mut backward = forward.clone();
        backward.reverse();
        assert_eq!(scan_backward(&mut it), backward, "snapshot {snapshot}");
        // Turn around on and next to "k".
        it.seek(b"k");
        if live {
            assert_eq!(at(&it), k);
            it.prev();
            assert_eq!(at(&it), "a=a");
            it.next();
            assert_eq!(at(&it), k);
            it.next();
            assert_eq!(at(&it), "z=z");
            it.prev();
            assert_eq!(at(&it), k);
        } else {
            assert_eq!(at(&it), "z=z");
            it.prev();
            assert_eq!(at(&it), "a=a");
            it.next();
            assert_eq!(at(&it), "z=z");
        }
    }
}

#[test]
fn bounds_clamp_seeks_and_end_iteration() {
    let mut data = Vec::new();
    for (i, key) in ["a", "b", "c", "d", "e", "f"].iter().enumerate() {
        data.push(entry(key.as_bytes(), i as u64 + 1, Some(key.as_bytes())));
    }
    let mut it = db_iter_over(&bytewise(), vec![data.clone()], 100, Some("b"), Some("e"));
    assert_eq!(scan_forward(&mut it), ["b=b", "c=c", "d=d"]);
    assert_eq!(scan_backward(&mut it), ["d=d", "c=c", "b=b"]);
    it.seek(b"a");
    assert_eq!(at(&it), "b=b");
    it.prev();
    assert_eq!(at(&it), "-");
    it.seek(b"e");
    assert_eq!(at(&it), "-");
    it.seek(b"d");
    it.next();
    assert_eq!(at(&it), "-");
    it.seek_to_last();
    it.prev();
    it.prev();
    assert_eq!(at(&it), "b=b");
    it.next();
    assert_eq!(at(&it), "c=c");

    // Bounds that fall between keys, and an empty range.
    let mut it = db_iter_over(&bytewise(), vec![data.clone()], 100, Some("bb"), Some("dd"));
    assert_eq!(scan_forward(&mut it), ["c=c", "d=d"]);
    assert_eq!(scan_backward(&mut it), ["d=d", "c=c"]);
    let mut it = db_iter_over(&bytewise(), vec![data], 100, Some("c"), Some("c"));
    assert!(scan_forward(&mut it).is_empty());
    assert!(scan_backward(&mut it).is_empty());
}

#[test]
fn an_unparseable_key_stops_with_corruption() {
    let mut bad_type = b"b".to_vec();
    bad_type.extend_from_slice(&((7u64 << 8) | 7).to_le_bytes());
    let mut data = writes(&[("a", 1, Some("1")), ("c", 3, Some("3"))]);
    data.push((bad_type, b"x".to_vec()));

    let mut it = db_iter(data.clone(), 10);
    it.seek_to_first();
    assert_eq!(at(&it), "a=1");
    it.next();
    assert_eq!(at(&it), "-");
    assert!(matches!(it.status(), Err(Error::Corruption(_))));
    // Sticky: later seeks leave it invalid.
    it.seek(b"c");
    assert!(!it.valid());
    it.seek_to_last();
    assert!(!it.valid());

    // Backward, the entry before a key must be read to know the key's newest version:
    // "c" cannot be confirmed, and neither can "d" be left for it.
    let mut it = db_iter(data.clone(), 10);
    it.seek_to_last();
    assert!(!it.valid());
    assert!(matches!(it.status(), Err(Error::Corruption(_))));
    data.extend(writes(&[("d", 4, Some("4"))]));
    let mut it = db_iter(data, 10);
    it.seek_to_last();
    assert_eq!(at(&it), "d=4");
    it.prev();
    assert!(!it.valid());
    assert!(matches!(it.status(), Err(Error::Corruption(_))));

    // A key too short to hold a trailer.
    let mut it = db_iter(vec![(b"short".to_vec(), Vec::new())], 10);
    it.seek_to_first();
    assert!(!it.valid());
    assert!(matches!(it.status(), Err(Error::Corruption(_))));
}

#[test]
fn inner_errors_are_reported() {
    let icmp = bytewise();
    let data = writes(&[
        ("a", 1, Some("1")),
        ("b", 2, Some("2")),
        ("c", 3, Some("3")),
    ]);
    let inner = Box::new(VecIter::new(icmp.clone(), data).fail_at(1));
    let mut it = DbIter::new(inner, icmp, 10, None, None);
    it.seek_to_first();
    assert_eq!(at(&it), "a=1");
    it.next();
    assert!(!it.valid());
    assert!(matches!(it.status(), Err(Error::Corruption(_))));
}

#[test]
fn read_sampler_fires_about_once_per_mib() {
    let value = vec![b'v'; 1000];
    let data: Entries = (0..4096u32)
        .map(|i| entry(format!("key{i:06}").as_bytes(), 1, Some(&value)))
        .collect();
    let entry_bytes = data[0].0.len() + data[0].1.len();
    let total = data.len() * entry_bytes;
    let samples = Arc::new(Mutex::new(Vec::new()));
    let mut it = db_iter(data, 10);
    let seen = Arc::clone(&samples);
    it.set_read_sampler(
        Box::new(move |ikey, bytes| {
            if let Ok(mut seen) = seen.lock() {
                seen.push((ikey.to_vec(), bytes));
            }
        }),
        42,
    );
    assert_eq!(scan_forward(&mut it).len(), 4096);
    let samples = samples.lock().map(|s| s.clone()).unwrap_or_default();
    // Gaps are at most 2 MiB, so ~4 MiB read gives at least two samples.
    let mib = total as f64 / READ_SAMPLE_PERIOD as f64;
    assert!(
        samples.len() >= 2,
        "{} samples over {mib:.1} MiB",
        samples.len()
    );
    assert!(
        samples.len() <= 20,
        "{} samples over {mib:.1} MiB",
        samples.len()
    );
    for (ikey, bytes) in samples {
        assert_eq!(bytes, entry_bytes);
        assert!(parse_internal_key(&ikey).is_some());
    }
}

#[test]
fn iterators_can_move_between_threads() {
    fn assert_send<T: Send>() {}
    assert_send::<DbIter>();
    assert_send::<crate::iter::merging::MergingIterator>();
}

// --- Model check ---------------------------------------------------------------------

/// User keys written: prefixes, a zero byte and a high byte meet.
const KEYS: [&[u8]; 7] = [b"", b"a", b"a\0", b"ab", b"b", b"ba", b"\xff"];
/// Seek targets and bounds: the keys and the gaps between them.
const TARGETS: [&[u8]; 11] = [
    b"",
    b"a",
    b"a\0",
    b"aa",
    b"ab",
    b"b",
    b"b\0",
    b"ba",
    b"c",
    b"\xff",
    b"\xff\xff",
];

#[derive(Debug, Clone)]
enum Op {
    First,
    Last,
    Seek(usize),
    Next,
    Prev,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => Just(Op::First),
        1 => Just(Op::Last),
        2 => (0..TARGETS.len()).prop_map(Op::Seek),
        4 => Just(Op::Next),
        4 => Just(Op::Prev),
    ]
}

/// `(key index, is a put, child)` per write; write `i` has sequence `i + 1`.
fn history() -> impl Strategy<Value = Vec<(usize, bool, usize)>> {
    prop::collection::vec(
        (0..KEYS.len(), prop::bool::weighted(0.65), 0..4usize),
        0..60,
    )
}

proptest! {
    #[test]
    fn random_moves_match_the_visible_state(
        history in history(),
        snapshot in 0..64u64,
        lower in prop::option::weighted(0.3, 0..TARGETS.len()),
        upper in prop::option::weighted(0.3, 0..TARGETS.len()),
        reverse in any::<bool>(),
        ops in prop::collection::vec(op(), 1..60),
    ) {
        let user: Arc<dyn Comparator> = if reverse {
            Arc::new(ReverseBytewiseComparator)
        } else {
            BytewiseComparator::shared()
        };
        let icmp = InternalKeyComparator::new(Arc::clone(&user));
        let lower = lower.map(|i| TARGETS[i]);
        let upper = upper.map(|i| TARGETS[i]);

        let mut children: Vec<Entries> = vec![Vec::new(); 4];
        let mut latest: HashMap<&[u8], Option<Vec<u8>>> = HashMap::new();
        for (i, &(key, put, child)) in history.iter().enumerate() {
            let sequence = i as u64 + 1;
            let value = format!("{key}@{sequence}").into_bytes();
            let value = put.then_some(value);
            children[child].push(entry(KEYS[key], sequence, value.as_deref()));
            if sequence <= snapshot {
                latest.insert(KEYS[key], value);
            }
        }
        let in_bounds = |k: &[u8]| {
            lower.is_none_or(|l| user.compare(k, l) != Ordering::Less)
                && upper.is_none_or(|u| user.compare(k, u) == Ordering::Less)
        };
        let mut visible: Entries = latest
            .into_iter()
            .filter_map(|(k, v)| Some((k.to_vec(), v?)))
            .filter(|(k, _)| in_bounds(k))
            .collect();
        visible.sort_by(|a, b| user.compare(&a.0, &b.0));

        let inner = merging_iterator(
            icmp.clone(),
            children
                .into_iter()
                .map(|e| Box::new(VecIter::new(icmp.clone(), e)) as Box<dyn InternalIterator>)
                .collect(),
        );
        let mut it = DbIter::new(
            inner,
            icmp,
            snapshot,
            lower.map(<[u8]>::to_vec),
            upper.map(<[u8]>::to_vec),
        );
        let mut pos: Option<usize> = None;
        for op in ops {
            match op {
                Op::First => {
                    it.seek_to_first();
                    pos = (!visible.is_empty()).then_some(0);
                }
                Op::Last => {
                    it.seek_to_last();
                    pos = visible.len().checked_sub(1);
                }
                Op::Seek(t) => {
                    it.seek(TARGETS[t]);
                    let p = visible
                        .partition_point(|(k, _)| user.compare(k, TARGETS[t]) == Ordering::Less);
                    pos = (p < visible.len()).then_some(p);
                }
                Op::Next => {
                    let Some(p) = pos else { continue };
                    it.next();
                    pos = Some(p + 1).filter(|&p| p < visible.len());
                }
                Op::Prev => {
                    let Some(p) = pos else { continue };
                    it.prev();
                    pos = p.checked_sub(1);
                }
            }
            match pos {
                None => prop_assert!(!it.valid(), "after {:?}: expected the end, at {}", op, at(&it)),
                Some(p) => {
                    prop_assert!(it.valid(), "after {:?}: expected {:?}", op, visible[p]);
                    prop_assert_eq!(it.key(), &visible[p].0[..]);
                    prop_assert_eq!(it.value(), &visible[p].1[..]);
                }
            }
        }
        prop_assert!(it.status().is_ok());
    }
}
