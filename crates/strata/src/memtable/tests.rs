//! Behaviour of the memtable: lookups at snapshots, iteration order against a model, concurrent
//! readers during writes, memory accounting, extreme sizes.

use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering as AtomicOrdering};
use std::sync::Arc;

use proptest::prelude::*;

use super::*;
use crate::util::comparator::{BytewiseComparator, ReverseBytewiseComparator};
use crate::util::internal_key::{internal_key, parse_internal_key, MAX_SEQUENCE};

fn icmp() -> InternalKeyComparator {
    InternalKeyComparator::new(BytewiseComparator::shared())
}

/// A memtable as the database makes one, with a key filter: small enough that the filter
/// fills up in the larger tests, so lookups meet both its answers.
fn new_mem() -> Arc<MemTable> {
    Arc::new(MemTable::for_buffer(icmp(), 64 << 10))
}

/// What a lookup found, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
enum MemGet {
    Found(Vec<u8>),
    Deleted,
    Absent,
}

fn lookup(mem: &MemTable, user_key: &[u8], sequence: u64) -> MemGet {
    match mem.get(user_key, sequence) {
        None => MemGet::Absent,
        Some(entry) if entry.value_type == ValueType::Deletion => MemGet::Deleted,
        Some(entry) => MemGet::Found(entry.value.to_vec()),
    }
}

/// All entries in forward order as (internal key, value).
fn forward(mem: &Arc<MemTable>) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut it = mem.iter();
    let mut out = Vec::new();
    it.seek_to_first();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    out
}

fn backward(mem: &Arc<MemTable>) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut it = mem.iter();
    let mut out = Vec::new();
    it.seek_to_last();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    out
}

#[test]
fn empty_memtable() {
    let mem = new_mem();
    assert!(mem.is_empty());
    assert_eq!(mem.len(), 0);
    assert_eq!(lookup(&mem, b"a", MAX_SEQUENCE), MemGet::Absent);
    assert_eq!(lookup(&mem, b"", 0), MemGet::Absent);
    let mut it = mem.iter();
    assert!(!it.valid());
    it.seek_to_first();
    assert!(!it.valid());
    it.seek_to_last();
    assert!(!it.valid());
    it.seek(&internal_key(b"a", 5, ValueType::Value));
    assert!(!it.valid());
    assert!(it.status().is_ok());
    // The head node already lives in the first block.
    assert!(mem.approximate_memory_usage() > 0);
}

#[test]
fn get_sees_newest_version_at_each_snapshot() {
    let mem = new_mem();
    mem.add(10, ValueType::Value, b"k", b"v10");
    mem.add(20, ValueType::Deletion, b"k", b"");
    mem.add(30, ValueType::Value, b"k", b"v30");
    mem.add(15, ValueType::Value, b"j", b"j15");
    mem.add(25, ValueType::Value, b"l", b"l25");
    assert_eq!(mem.len(), 5);
    assert!(!mem.is_empty());

    assert_eq!(lookup(&mem, b"k", 9), MemGet::Absent);
    assert_eq!(lookup(&mem, b"k", 10), MemGet::Found(b"v10".to_vec()));
    assert_eq!(lookup(&mem, b"k", 19), MemGet::Found(b"v10".to_vec()));
    assert_eq!(lookup(&mem, b"k", 20), MemGet::Deleted);
    assert_eq!(lookup(&mem, b"k", 29), MemGet::Deleted);
    assert_eq!(lookup(&mem, b"k", 30), MemGet::Found(b"v30".to_vec()));
    assert_eq!(
        lookup(&mem, b"k", MAX_SEQUENCE),
        MemGet::Found(b"v30".to_vec())
    );

    assert_eq!(lookup(&mem, b"j", 14), MemGet::Absent);
    assert_eq!(lookup(&mem, b"j", 15), MemGet::Found(b"j15".to_vec()));
    assert_eq!(lookup(&mem, b"l", 24), MemGet::Absent);
    assert_eq!(lookup(&mem, b"l", 100), MemGet::Found(b"l25".to_vec()));
    // Neighbours and prefixes are not matches.
    assert_eq!(lookup(&mem, b"", MAX_SEQUENCE), MemGet::Absent);
    assert_eq!(lookup(&mem, b"kk", MAX_SEQUENCE), MemGet::Absent);
    assert_eq!(lookup(&mem, b"m", MAX_SEQUENCE), MemGet::Absent);
}

#[test]
fn iteration_is_user_key_ascending_then_sequence_descending() {
    let mem = new_mem();
    mem.add(1, ValueType::Value, b"b", b"b1");
    mem.add(3, ValueType::Value, b"a", b"a3");
    mem.add(2, ValueType::Deletion, b"b", b"");
    mem.add(4, ValueType::Value, b"a", b"a4");
    let expected = vec![
        (internal_key(b"a", 4, ValueType::Value), b"a4".to_vec()),
        (internal_key(b"a", 3, ValueType::Value), b"a3".to_vec()),
        (internal_key(b"b", 2, ValueType::Deletion), Vec::new()),
        (internal_key(b"b", 1, ValueType::Value), b"b1".to_vec()),
    ];
    assert_eq!(forward(&mem), expected);
    let mut reversed = expected.clone();
    reversed.reverse();
    assert_eq!(backward(&mem), reversed);

    let mut it = mem.iter();
    it.seek(&internal_key(b"a", 3, ValueType::Value));
    assert_eq!(it.key(), &expected[1].0[..]);
    it.prev();
    assert_eq!(it.key(), &expected[0].0[..]);
    it.prev();
    assert!(!it.valid());
    // A lookup key past every version of "a" lands on "b"'s newest.
    it.seek(&internal_key(b"a", 2, ValueType::Value));
    assert_eq!(it.key(), &expected[2].0[..]);
    it.seek(&internal_key(b"c", MAX_SEQUENCE, ValueType::Value));
    assert!(!it.valid());
}

#[test]
fn iterator_outlives_the_memtable_handle() {
    let mem = new_mem();
    mem.add(1, ValueType::Value, b"key", b"value");
    let mut it = mem.iter();
    drop(mem);
    it.seek_to_first();
    assert_eq!(it.key(), &internal_key(b"key", 1, ValueType::Value)[..]);
    assert_eq!(it.value(), b"value");
}

#[test]
fn empty_keys_and_values() {
    let mem = new_mem();
    mem.add(1, ValueType::Value, b"", b"");
    mem.add(2, ValueType::Value, b"", b"x");
    mem.add(3, ValueType::Value, b"a", b"");
    assert_eq!(lookup(&mem, b"", 1), MemGet::Found(Vec::new()));
    assert_eq!(lookup(&mem, b"", 2), MemGet::Found(b"x".to_vec()));
    assert_eq!(lookup(&mem, b"a", 3), MemGet::Found(Vec::new()));
    let keys: Vec<_> = forward(&mem).into_iter().map(|(k, _)| k).collect();
    assert_eq!(
        keys,
        vec![
            internal_key(b"", 2, ValueType::Value),
            internal_key(b"", 1, ValueType::Value),
            internal_key(b"a", 3, ValueType::Value),
        ]
    );
}

#[test]
fn large_values_round_trip() {
    let mem = new_mem();
    let big: Vec<u8> = (0..1 << 20).map(|i: u32| (i % 251) as u8).collect();
    let big_key = vec![b'k'; 100_000];
    mem.add(1, ValueType::Value, b"a", b"small");
    mem.add(2, ValueType::Value, b"big", &big);
    mem.add(3, ValueType::Value, &big_key, &big);
    mem.add(4, ValueType::Value, b"z", b"small");
    assert_eq!(lookup(&mem, b"big", 2), MemGet::Found(big.clone()));
    assert_eq!(lookup(&mem, &big_key, 3), MemGet::Found(big.clone()));
    assert_eq!(lookup(&mem, b"a", 4), MemGet::Found(b"small".to_vec()));
    assert_eq!(lookup(&mem, b"z", 4), MemGet::Found(b"small".to_vec()));
    assert!(mem.approximate_memory_usage() >= 2 << 20);
    let entries = forward(&mem);
    assert_eq!(entries.len(), 4);
    assert_eq!(entries[1].1, big);
    assert_eq!(entries[2].0, internal_key(&big_key, 3, ValueType::Value));
}

#[test]
fn memory_usage_grows_with_entries() {
    let mem = new_mem();
    let start = mem.approximate_memory_usage();
    let mut last = start;
    let mut grew = 0;
    for i in 0..20_000u32 {
        mem.add(
            u64::from(i),
            ValueType::Value,
            &i.to_be_bytes(),
            &[7u8; 100],
        );
        let now = mem.approximate_memory_usage();
        assert!(now >= last, "usage went down");
        grew += usize::from(now > last);
        last = now;
    }
    // 20k entries of ~150 bytes: at least the payload, in many steps.
    assert!(last - start >= 20_000 * (4 + 8 + 100));
    assert!(grew > 10);
}

#[test]
fn writer_guard_batches_inserts() {
    let mem = new_mem();
    {
        let mut writer = mem.writer();
        for i in 0..100u64 {
            writer.add(i + 1, ValueType::Value, format!("{i:03}").as_bytes(), b"v");
        }
        // Readers are not blocked by the held writer lock.
        assert_eq!(lookup(&mem, b"042", 100), MemGet::Found(b"v".to_vec()));
        assert_eq!(mem.len(), 100);
    }
    mem.add(101, ValueType::Deletion, b"042", b"");
    assert_eq!(lookup(&mem, b"042", 101), MemGet::Deleted);
}

#[test]
fn custom_user_comparator_orders_entries() {
    let mem = Arc::new(MemTable::new(InternalKeyComparator::new(Arc::new(
        ReverseBytewiseComparator,
    ))));
    for (seq, key) in [b"a", b"c", b"b"].iter().enumerate() {
        mem.add(seq as u64 + 1, ValueType::Value, *key, *key);
    }
    let users: Vec<Vec<u8>> = forward(&mem)
        .into_iter()
        .map(|(k, _)| crate::util::internal_key::user_key(&k).to_vec())
        .collect();
    assert_eq!(users, vec![b"c".to_vec(), b"b".to_vec(), b"a".to_vec()]);
    assert_eq!(lookup(&mem, b"b", 10), MemGet::Found(b"b".to_vec()));
}

/// Orders keys ignoring ASCII case: different bytes can be one key.
struct IgnoringCase;

impl crate::util::comparator::Comparator for IgnoringCase {
    fn name(&self) -> &str {
        "test.IgnoringCase"
    }
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        a.to_ascii_lowercase().cmp(&b.to_ascii_lowercase())
    }
}

#[test]
fn a_key_its_comparator_calls_equal_to_an_entry_in_other_bytes_finds_it() {
    // The key filter hashes bytes, so a memtable whose order is not bytewise keeps none.
    let mem = MemTable::for_buffer(InternalKeyComparator::new(Arc::new(IgnoringCase)), 4 << 20);
    assert_eq!(mem.filter_memory(), 0);
    mem.add(1, ValueType::Value, b"Key", b"v");
    assert_eq!(lookup(&mem, b"kEY", 5), MemGet::Found(b"v".to_vec()));
    assert_eq!(lookup(&mem, b"kEYs", 5), MemGet::Absent);
}

/// Ignores ASCII case, under the bytewise comparator's name (a C, Python or Java comparator
/// may be named anything).
struct IgnoringCaseNamedBytewise;

impl crate::util::comparator::Comparator for IgnoringCaseNamedBytewise {
    fn name(&self) -> &str {
        crate::util::comparator::BYTEWISE_NAME
    }
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        IgnoringCase.compare(a, b)
    }
}

#[test]
fn a_comparator_named_bytewise_keeps_the_filter_and_the_skiplist_agreeing() {
    // The filter is kept when the comparator is *named* bytewise (`is_bytewise` goes by the
    // name). That is sound only while the memtable then compares keys as bytes whatever the
    // comparator's `compare` says: a lookup finds an entry exactly when one compares equal
    // under the memtable's own order.
    let icmp = InternalKeyComparator::new(Arc::new(IgnoringCaseNamedBytewise));
    assert!(icmp.is_bytewise());
    let mem = Arc::new(MemTable::for_buffer(icmp.clone(), 64 << 10));
    assert!(mem.filter_memory() > 0);
    for (i, key) in [&b"Key"[..], b"other", b"OTHER2"].into_iter().enumerate() {
        mem.add(i as u64 + 1, ValueType::Value, key, key);
    }
    let entries = forward(&mem);
    for probe in [
        &b"Key"[..],
        b"kEY",
        b"KEY",
        b"other",
        b"OTHER",
        b"other2",
        b"absent",
    ] {
        let equal = entries.iter().find(|(k, _)| {
            icmp.compare_user(crate::util::internal_key::user_key(k), probe)
                .is_eq()
        });
        let want = equal.map_or(MemGet::Absent, |(_, v)| MemGet::Found(v.clone()));
        assert_eq!(
            lookup(&mem, probe, MAX_SEQUENCE),
            want,
            "{}",
            probe.escape_ascii()
        );
    }
}

#[test]
fn a_filtered_memtable_answers_as_one_without_a_filter() {
    let filtered = MemTable::for_buffer(icmp(), 64 << 10);
    assert_eq!(filtered.filter_memory(), 2 << 10);
    let plain = MemTable::new(icmp());
    for i in 0..2000u64 {
        let key = scrambled_key(i);
        filtered.add(i + 1, ValueType::Value, &key, &key);
        plain.add(i + 1, ValueType::Value, &key, &key);
    }
    for i in 0..4000u64 {
        let key = scrambled_key(i);
        let found = lookup(&plain, &key, MAX_SEQUENCE);
        assert_eq!(found == MemGet::Absent, i >= 2000);
        assert_eq!(lookup(&filtered, &key, MAX_SEQUENCE), found, "key {i}");
        // The memtable switches on its entries alone, filter or not.
        assert_eq!(
            filtered.approximate_memory_usage(),
            plain.approximate_memory_usage()
        );
    }
}

// ---- model-based -------------------------------------------------------------------------------

/// Model key: user key ascending, then trailer descending, like the internal key order.
type ModelKey = (Vec<u8>, Reverse<u64>);

fn model_internal_key(k: &ModelKey) -> Vec<u8> {
    let mut key = k.0.clone();
    key.extend_from_slice(&k.1 .0.to_le_bytes());
    key
}

#[derive(Debug, Clone)]
enum Move {
    Next,
    Prev,
    Seek(Vec<u8>, u64),
    First,
    Last,
}

fn user_key_strategy() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(0u8..4, 0..4)
}

fn move_strategy() -> impl Strategy<Value = Move> {
    prop_oneof![
        3 => Just(Move::Next),
        3 => Just(Move::Prev),
        2 => (user_key_strategy(), 0u64..80).prop_map(|(k, s)| Move::Seek(k, s)),
        1 => Just(Move::First),
        1 => Just(Move::Last),
    ]
}

proptest! {
    #[test]
    fn matches_btreemap_model(
        writes in proptest::collection::vec(
            (user_key_strategy(), any::<bool>(), proptest::collection::vec(any::<u8>(), 0..8)),
            0..60,
        ),
        moves in proptest::collection::vec(move_strategy(), 0..40),
        reads in proptest::collection::vec((user_key_strategy(), 0u64..80), 0..20),
    ) {
        let mem = new_mem();
        let mut model: BTreeMap<ModelKey, Vec<u8>> = BTreeMap::new();
        for (i, (key, is_delete, value)) in writes.iter().enumerate() {
            let seq = i as u64 + 1;
            let t = if *is_delete { ValueType::Deletion } else { ValueType::Value };
            mem.add(seq, t, key, value);
            model.insert((key.clone(), Reverse(pack_trailer(seq, t))), value.clone());
        }
        let expected: Vec<(Vec<u8>, Vec<u8>)> =
            model.iter().map(|(k, v)| (model_internal_key(k), v.clone())).collect();
        prop_assert_eq!(forward(&mem), expected.clone());
        let mut reversed = expected.clone();
        reversed.reverse();
        prop_assert_eq!(backward(&mem), reversed);
        prop_assert_eq!(mem.len(), expected.len());

        // Random cursor moves against a position in the model's sorted list.
        let mut it = mem.iter();
        let mut pos: Option<usize> = None;
        for m in &moves {
            match m {
                Move::Next if pos.is_some() => {
                    it.next();
                    pos = pos.map(|p| p + 1).filter(|&p| p < expected.len());
                }
                Move::Prev if pos.is_some() => {
                    it.prev();
                    pos = pos.and_then(|p| p.checked_sub(1));
                }
                Move::Next | Move::Prev => {}
                Move::Seek(user, seq) => {
                    let target = internal_key(user, *seq, VALUE_TYPE_FOR_SEEK);
                    it.seek(&target);
                    let icmp = icmp();
                    pos = expected.iter().position(|(k, _)| icmp.compare(k, &target) != Ordering::Less);
                }
                Move::First => {
                    it.seek_to_first();
                    pos = (!expected.is_empty()).then_some(0);
                }
                Move::Last => {
                    it.seek_to_last();
                    pos = expected.len().checked_sub(1);
                }
            }
            match pos {
                Some(p) => {
                    prop_assert!(it.valid());
                    prop_assert_eq!(it.key(), &expected[p].0[..]);
                    prop_assert_eq!(it.value(), &expected[p].1[..]);
                }
                None => prop_assert!(!it.valid()),
            }
        }

        // Lookups at snapshots: the newest version with sequence <= snapshot.
        for (user, snapshot) in &reads {
            let newest = model
                .range((user.clone(), Reverse(pack_trailer(*snapshot, VALUE_TYPE_FOR_SEEK)))..)
                .next()
                .filter(|((k, _), _)| k == user);
            let want = match newest {
                None => MemGet::Absent,
                Some(((_, Reverse(trailer)), value)) => {
                    if trailer & 0xff == ValueType::Deletion as u64 {
                        MemGet::Deleted
                    } else {
                        MemGet::Found(value.clone())
                    }
                }
            };
            prop_assert_eq!(lookup(&mem, user, *snapshot), want);
        }
    }

    /// Seeking with malformed targets (shorter than a trailer, unknown type) never panics.
    #[test]
    fn seek_with_arbitrary_bytes_is_safe(
        target in proptest::collection::vec(any::<u8>(), 0..20),
    ) {
        let mem = new_mem();
        for i in 0..50u8 {
            mem.add(u64::from(i) + 1, ValueType::Value, &[i % 7, i], &[i]);
        }
        let mut it = mem.iter();
        it.seek(&target);
        if it.valid() {
            prop_assert!(parse_internal_key(it.key()).is_some());
            it.prev();
        }
    }
}

// ---- concurrency -------------------------------------------------------------------------------

/// Key for entry number `i` of the concurrent test: a scrambled order of distinct user keys.
fn scrambled_key(i: u64) -> [u8; 8] {
    // Multiplication by an odd constant is a bijection on u64: distinct, out-of-order keys.
    i.wrapping_mul(0x9e37_79b9_7f4a_7c15).to_be_bytes()
}

#[test]
fn readers_see_sorted_consistent_lists_while_one_writer_inserts() {
    const ENTRIES: u64 = 100_000;
    const READERS: usize = 4;
    let mem = new_mem();
    // Entries 0..published are known to be in the memtable.
    let published = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));
    // Readers and the writer start together, so passes overlap the inserts.
    let start = Arc::new(std::sync::Barrier::new(READERS + 1));

    let readers: Vec<_> = (0..READERS)
        .map(|r| {
            let mem = mem.clone();
            let published = published.clone();
            let done = done.clone();
            let start = start.clone();
            std::thread::spawn(move || {
                let icmp = icmp();
                let mut passes = 0;
                start.wait();
                let mut rng = r as u64 + 1;
                while !done.load(AtomicOrdering::Acquire) || passes < 2 {
                    let before = published.load(AtomicOrdering::Acquire) as u64;
                    let mut it = mem.iter();
                    // Seeks land exactly on entries inserted before the pass started.
                    for _ in 0..50 {
                        if before == 0 {
                            break;
                        }
                        rng ^= rng << 13;
                        rng ^= rng >> 7;
                        rng ^= rng << 17;
                        let i = rng % before;
                        let key = scrambled_key(i);
                        it.seek(&internal_key(&key, i + 1, ValueType::Value));
                        assert!(it.valid());
                        assert_eq!(crate::util::internal_key::user_key(it.key()), key);
                        assert_eq!(it.value(), &(i as u32).to_le_bytes());
                        assert_eq!(
                            lookup(&mem, &key, MAX_SEQUENCE),
                            MemGet::Found(it.value().to_vec())
                        );
                    }
                    // A full forward pass is strictly sorted and holds everything published.
                    let mut seen = HashSet::new();
                    let mut prev: Option<Vec<u8>> = None;
                    it.seek_to_first();
                    while it.valid() {
                        let key = it.key().to_vec();
                        let parsed = parse_internal_key(&key).expect("well-formed key");
                        assert_eq!(it.value(), &(parsed.sequence as u32 - 1).to_le_bytes());
                        if let Some(p) = &prev {
                            assert_eq!(icmp.compare(p, &key), Ordering::Less);
                        }
                        seen.insert(parsed.sequence - 1);
                        prev = Some(key);
                        it.next();
                    }
                    assert!(
                        (0..before).all(|i| seen.contains(&i)),
                        "reader {r} missed an entry"
                    );
                    // A backward walk over a stretch stays sorted.
                    it.seek_to_last();
                    let mut steps = 0;
                    let mut next_key: Option<Vec<u8>> = None;
                    while it.valid() && steps < 200 {
                        let key = it.key().to_vec();
                        if let Some(n) = &next_key {
                            assert_eq!(icmp.compare(&key, n), Ordering::Less);
                        }
                        next_key = Some(key);
                        it.prev();
                        steps += 1;
                    }
                    passes += 1;
                }
                passes
            })
        })
        .collect();
    start.wait();

    for i in 0..ENTRIES {
        mem.add(
            i + 1,
            ValueType::Value,
            &scrambled_key(i),
            &(i as u32).to_le_bytes(),
        );
        published.store(i as usize + 1, AtomicOrdering::Release);
    }
    done.store(true, AtomicOrdering::Release);
    for reader in readers {
        let passes = reader.join().expect("reader panicked");
        assert!(passes >= 2);
    }
    assert_eq!(mem.len(), ENTRIES as usize);
    assert_eq!(forward(&mem).len(), ENTRIES as usize);
}

#[test]
fn memtable_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<MemTable>();
    assert_send_sync::<MemTableIter>();
}

#[test]
fn range_tombstones_are_kept_beside_the_entries() {
    let mem = new_mem();
    assert!(mem.range_tombstones().is_none());
    assert!(mem.is_empty());
    let before = mem.approximate_memory_usage();
    {
        let mut writer = mem.writer();
        writer.add(1, ValueType::Value, b"b", b"v");
        writer.add_range_deletion(2, b"a", b"c");
    }
    assert_eq!(mem.len(), 2);
    assert!(mem.approximate_memory_usage() > before);
    let first = mem.range_tombstones().unwrap();
    assert_eq!(first.newest_covering(b"b", 2), Some(2));
    assert_eq!(first.newest_covering(b"b", 1), None);
    assert_eq!(first.newest_covering(b"c", 9), None);
    // Shared until the next tombstone, then rebuilt with it.
    assert!(Arc::ptr_eq(&first, &mem.range_tombstones().unwrap()));
    mem.writer().add_range_deletion(3, b"c", b"d");
    let second = mem.range_tombstones().unwrap();
    assert_eq!(second.newest_covering(b"c", 9), Some(3));
    assert_eq!(
        first.newest_covering(b"c", 9),
        None,
        "a taken set never changes"
    );
    // Point lookups do not consult tombstones: the entry is still there.
    assert_eq!(lookup(&mem, b"b", 9), MemGet::Found(b"v".to_vec()));
}

#[test]
fn a_memtable_of_only_tombstones_is_not_empty() {
    let mem = new_mem();
    mem.writer().add_range_deletion(1, b"a", b"z");
    assert!(!mem.is_empty());
    assert_eq!(forward(&mem), Vec::new());
}
