//! Table round trips: builder to reader, through in-memory files (and a mapped one).

use std::sync::Arc;

use proptest::prelude::*;

use super::builder::TableBuilder;
use super::format::CompressionType;
use super::format::{block_trailer, read_footer, BlockHandle, Footer, FOOTER_LEN};
use super::reader::{ReadBudget, RecentBlock, Table, PRINTS_AFTER};
use super::BlockReads;
use super::TableOptions;
use crate::env::vec_files::{VecFile, VecSink};
use crate::env::{Env, PosixEnv};
use crate::iter::InternalIterator;
use crate::table::block_cache::BlockCache;
use crate::util::bloom::BloomFilterPolicy;
use crate::util::comparator::BytewiseComparator;
use crate::util::internal_key::{internal_key, user_key, InternalKeyComparator, ValueType};

pub(super) fn options(compression: CompressionType, filter: bool) -> TableOptions {
    TableOptions {
        icmp: InternalKeyComparator::new(BytewiseComparator::shared()),
        block_size: 1024,
        block_restart_interval: 16,
        compression,
        filter_policy: filter.then(|| Arc::new(BloomFilterPolicy::new(10)) as _),
        block_cache: None,
        paranoid_checks: false,
        range_deletions: false,
    }
}

pub(super) type Entries = Vec<(Vec<u8>, Vec<u8>)>;

pub(super) fn build(opts: &TableOptions, entries: &Entries) -> Vec<u8> {
    let out = VecSink::new();
    let mut b = TableBuilder::new(opts.clone(), Box::new(out.clone()));
    for (k, v) in entries {
        b.add(k, v).unwrap();
    }
    assert_eq!(b.num_entries(), entries.len() as u64);
    let size = b.finish().unwrap();
    let bytes = out.contents();
    assert_eq!(size, bytes.len() as u64);
    assert_eq!(b.file_size(), size);
    bytes
}

fn open(opts: &TableOptions, bytes: Vec<u8>) -> crate::error::Result<Arc<Table>> {
    let len = bytes.len() as u64;
    Table::open(
        opts.clone(),
        Arc::new(VecFile::new(bytes)),
        len,
        "000042.ldb".to_string(),
    )
}

/// Internal keys `key00000...` with sequence numbers, a few deletions, compressible values.
fn sample(n: usize, value_len: usize) -> Entries {
    (0..n)
        .map(|i| {
            let t = if i % 10 == 3 {
                ValueType::Deletion
            } else {
                ValueType::Value
            };
            let key = internal_key(format!("key{:06}", i * 2).as_bytes(), 1000 + i as u64, t);
            let value = format!("value-{i}-").repeat(value_len / 8 + 1).into_bytes();
            (key, value[..value_len.min(value.len())].to_vec())
        })
        .collect()
}

pub(super) fn scan_forward(table: &Arc<Table>) -> Entries {
    let mut it = table.iter(BlockReads::default());
    let mut out = Vec::new();
    it.seek_to_first();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().unwrap();
    out
}

fn scan_backward(table: &Arc<Table>) -> Entries {
    let mut it = table.iter(BlockReads::default());
    let mut out = Vec::new();
    it.seek_to_last();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    it.status().unwrap();
    out.reverse();
    out
}

fn get(table: &Table, user: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    get_spending(table, user, &mut ReadBudget::default())
}

/// [`get`] as one step of a read that has spent `budget` so far (see [`ReadBudget`]).
fn get_spending(table: &Table, user: &[u8], budget: &mut ReadBudget) -> Option<(Vec<u8>, Vec<u8>)> {
    let lookup = internal_key(
        user,
        crate::util::internal_key::MAX_SEQUENCE,
        ValueType::Value,
    );
    let (mut scratch, mut recent) = (Vec::new(), RecentBlock::default());
    let found = table.get_in(
        BlockReads::default(),
        &lookup,
        &mut scratch,
        &mut recent,
        budget,
        |k, v| (k.to_vec(), v.to_vec()),
    );
    found.unwrap()
}

#[test]
fn round_trip_all_configurations() {
    for compression in [CompressionType::None, CompressionType::Snappy] {
        for filter in [false, true] {
            for value_len in [0, 10, 3000] {
                let opts = options(compression, filter);
                let entries = sample(300, value_len);
                let table = open(&opts, build(&opts, &entries)).unwrap();
                assert_eq!(table.has_filter(), filter);
                assert_eq!(scan_forward(&table), entries, "{compression:?} {filter}");
                assert_eq!(scan_backward(&table), entries);

                for (k, v) in &entries {
                    let found = get(&table, user_key(k)).unwrap();
                    assert_eq!((&found.0, &found.1), (k, v));
                    // Seek lands on every key too.
                    let mut it = table.iter(BlockReads::default());
                    it.seek(k);
                    assert_eq!(it.key(), &k[..]);
                }
                // Missing keys between and after the present ones: the next entry or nothing
                // (filtered out when a filter is there and rules them out).
                for i in 0..300 {
                    let missing = format!("key{:06}", i * 2 + 1);
                    if let Some((k, _)) = get(&table, missing.as_bytes()) {
                        assert_ne!(user_key(&k), missing.as_bytes());
                    }
                }
                assert_eq!(get(&table, b"zzz"), None);
            }
        }
    }
}

#[test]
fn snappy_makes_compressible_tables_smaller() {
    let entries = sample(500, 100);
    let plain = build(&options(CompressionType::None, false), &entries);
    let snappy = build(&options(CompressionType::Snappy, false), &entries);
    assert!(
        snappy.len() * 2 < plain.len(),
        "{} vs {}",
        snappy.len(),
        plain.len()
    );
}

#[test]
fn filter_excludes_absent_keys_without_reading_blocks() {
    let opts = options(CompressionType::Snappy, true);
    let entries = sample(1000, 20);
    let table = open(&opts, build(&opts, &entries)).unwrap();
    let mut excluded = 0;
    for i in 0..1000 {
        let missing = internal_key(
            format!("key{:06}", i * 2 + 1).as_bytes(),
            5,
            ValueType::Value,
        );
        if !table.filter_may_match(&missing).unwrap() {
            excluded += 1;
            let got = table
                .get(BlockReads::default(), &missing, |_, _| ())
                .unwrap();
            assert_eq!(got, None);
        }
    }
    assert!(
        excluded > 950,
        "only {excluded} of 1000 absent keys excluded"
    );
    for (k, _) in &entries {
        assert!(table.filter_may_match(k).unwrap());
    }
    // A table read with a differently named (or no) policy ignores the filter.
    let mut other = opts.clone();
    other.filter_policy = None;
    let bytes = build(&opts, &entries);
    assert!(!open(&other, bytes).unwrap().has_filter());
}

#[test]
fn empty_table() {
    for filter in [false, true] {
        let opts = options(CompressionType::Snappy, filter);
        let table = open(&opts, build(&opts, &Vec::new())).unwrap();
        assert!(scan_forward(&table).is_empty());
        assert!(scan_backward(&table).is_empty());
        assert_eq!(get(&table, b"a"), None);
        let mut it = table.iter(BlockReads::default());
        it.seek(b"anything");
        assert!(!it.valid());
        it.status().unwrap();
    }
}

#[test]
fn one_entry_larger_than_a_block() {
    let opts = options(CompressionType::Snappy, true);
    let entries = vec![
        (internal_key(b"a", 1, ValueType::Value), vec![1u8; 100]),
        (internal_key(b"b", 1, ValueType::Value), vec![7u8; 100_000]),
        (internal_key(b"c", 1, ValueType::Value), Vec::new()),
    ];
    let table = open(&opts, build(&opts, &entries)).unwrap();
    assert_eq!(scan_forward(&table), entries);
    assert_eq!(get(&table, b"b").unwrap().1.len(), 100_000);
}

#[test]
fn approximate_offsets_grow_with_keys() {
    let opts = options(CompressionType::None, false);
    let entries = sample(1000, 100);
    let bytes = build(&opts, &entries);
    let len = bytes.len() as u64;
    let table = open(&opts, bytes).unwrap();
    let first = table.approximate_offset_of(&entries[0].0);
    let middle = table.approximate_offset_of(&entries[500].0);
    let past = table.approximate_offset_of(&internal_key(b"zzz", 1, ValueType::Value));
    assert_eq!(first, 0);
    assert!(
        middle > len / 3 && middle < 2 * len / 3,
        "{middle} of {len}"
    );
    assert!(past > len * 9 / 10 && past < len);
}

#[test]
fn block_cache_is_used_and_fill_cache_false_skips_it() {
    let mut opts = options(CompressionType::Snappy, false);
    let cache = BlockCache::new(1 << 20);
    opts.block_cache = Some(Arc::clone(&cache));
    let entries = sample(200, 50);
    let table = open(&opts, build(&opts, &entries)).unwrap();
    let no_fill = BlockReads {
        fill_cache: false,
        ..BlockReads::default()
    };
    let mut it = table.iter(no_fill);
    it.seek_to_first();
    while it.valid() {
        it.next();
    }
    assert_eq!(cache.total_charge(), 0);
    assert_eq!(scan_forward(&table), entries);
    let charged = cache.total_charge();
    assert!(charged > 0);
    // A second table gets its own key space.
    let table2 = open(&opts, build(&opts, &sample(10, 5))).unwrap();
    assert_eq!(scan_forward(&table2).len(), 10);
    assert!(cache.total_charge() > charged);
    assert_eq!(
        get(&table, user_key(&entries[7].0)).unwrap().1,
        entries[7].1
    );
}

#[test]
fn corrupt_block_is_caught_by_verify_checksums() {
    let opts = options(CompressionType::None, false);
    let entries = sample(200, 50);
    let mut bytes = build(&opts, &entries);
    // Flip a byte inside a value of the first data block (not a length: the block still decodes).
    let at = bytes.windows(8).position(|w| w == b"value-0-").unwrap();
    bytes[at + 2] ^= 0x01;
    let table = open(&opts, bytes.clone()).unwrap();
    // Without verification the damaged value reads back (damaged).
    assert_ne!(scan_forward(&table), entries);

    let verify = BlockReads {
        verify_checksums: true,
        ..BlockReads::default()
    };
    let mut it = table.iter(verify);
    it.seek_to_first();
    let err = it.status().unwrap_err();
    let c = err.corruption_details().unwrap();
    assert_eq!(c.file.as_deref(), Some("000042.ldb"));
    assert_eq!(c.offset, Some(0));
    assert!(c.reason.contains("checksum"), "{err}");
    // The iterator skipped the bad block and goes on with the next.
    assert!(it.valid());

    let lookup = internal_key(user_key(&entries[0].0), 2000, ValueType::Value);
    let err = table.get(verify, &lookup, |_, _| ()).unwrap_err();
    assert!(err.is_corruption());

    // Paranoid tables verify every read.
    let mut paranoid = opts.clone();
    paranoid.paranoid_checks = true;
    let table = open(&paranoid, bytes).unwrap();
    assert!(table
        .get(BlockReads::default(), &lookup, |_, _| ())
        .unwrap_err()
        .is_corruption());
}

#[test]
fn short_and_bad_files_are_corruption_naming_the_file() {
    let opts = options(CompressionType::Snappy, false);
    for bytes in [vec![], vec![0u8; 47], vec![0u8; 48], vec![0u8; 1000]] {
        let err = open(&opts, bytes).unwrap_err();
        let c = err.corruption_details().unwrap();
        assert_eq!(c.file.as_deref(), Some("000042.ldb"));
    }
    // A footer whose index handle points past the end.
    let good = build(&opts, &sample(10, 10));
    let mut bad = good.clone();
    let footer_at = bad.len() - FOOTER_LEN;
    let mut handles = Vec::new();
    BlockHandle::new(0, 5).encode_to(&mut handles);
    BlockHandle::new(1 << 40, 100).encode_to(&mut handles);
    bad[footer_at..footer_at + handles.len()].copy_from_slice(&handles);
    let err = open(&opts, bad).unwrap_err();
    assert!(err.to_string().contains("000042.ldb"), "{err}");
}

#[test]
fn restart_interval_one_and_small_blocks() {
    let mut opts = options(CompressionType::Snappy, true);
    opts.block_restart_interval = 1;
    opts.block_size = 64;
    let entries = sample(400, 30);
    let table = open(&opts, build(&opts, &entries)).unwrap();
    assert_eq!(scan_forward(&table), entries);
    assert_eq!(scan_backward(&table), entries);
    // Walk back and forth across block boundaries.
    let mut it = table.iter(BlockReads::default());
    it.seek(&entries[200].0);
    for i in (0..200).rev() {
        it.prev();
        assert_eq!(it.key(), &entries[i].0[..]);
    }
    for entry in entries.iter().skip(1).take(50) {
        it.next();
        assert_eq!(it.key(), &entry.0[..]);
    }
}

/// The first lookups search the index block in full, the later ones through its restart
/// prints, built by the lookup after the first [`PRINTS_AFTER`], and its block offsets, built
/// by the lookup after that: all answer every present and absent key as the entries say.
#[test]
fn lookups_answer_alike_before_and_after_the_index_prints_are_built() {
    let opts = options(CompressionType::Snappy, false);
    let entries = sample(3000, 20);
    let table = open(&opts, build(&opts, &entries)).unwrap();
    let mut served = 0;
    for (key, value) in entries.iter().step_by(7).chain(&entries) {
        let user = user_key(key);
        let built = served > PRINTS_AFTER;
        let offsets = served > PRINTS_AFTER + 1;
        assert_eq!(table.has_index_aids(), (built, offsets), "after {served}");
        let got = get(&table, user).unwrap();
        assert_eq!((&got.0, &got.1), (key, value));
        // Between this key and the next (`key000004` < `key000004x` < `key000006`).
        let absent = [user, b"x"].concat();
        let next = get(&table, &absent).map(|(k, _)| k);
        let expected = entries
            .iter()
            .find(|(k, _)| user_key(k) > &absent[..])
            .map(|(k, _)| k);
        assert_eq!(next.as_ref(), expected);
        served += 2;
    }
    assert_eq!(table.has_index_aids(), (true, true));
}

/// The prints are built by the lookup after the first [`PRINTS_AFTER`] and the block offsets
/// by the one after it, never both by one; placed lookups find what the entries say.
#[test]
fn block_offsets_are_built_by_the_lookup_after_the_prints() {
    let opts = options(CompressionType::None, false);
    let entries = sample(2000, 20);
    let table = open(&opts, build(&opts, &entries)).unwrap();
    for served in 0..PRINTS_AFTER + 4 {
        let built = (served > PRINTS_AFTER, served > PRINTS_AFTER + 1);
        assert_eq!(table.has_index_aids(), built, "after {served}");
        let (key, value) = &entries[served * 97];
        assert_eq!(
            get(&table, user_key(key)),
            Some((key.clone(), value.clone()))
        );
    }
    assert_eq!(
        get(&table, b"a").map(|(k, _)| k),
        Some(entries[0].0.clone())
    );
    let between = [user_key(&entries[1000].0), b"x"].concat();
    assert_eq!(
        get(&table, &between).map(|(k, _)| k),
        Some(entries[1001].0.clone())
    );
}

/// One read builds at most one index aid, and none once it has opened a table (which
/// `TableCache::find_table_spending` records): the build waits for a later read. Every lookup
/// still answers as the entries say.
#[test]
fn a_read_that_opened_a_table_or_built_an_aid_leaves_the_next_build_to_a_later_read() {
    let opts = options(CompressionType::None, false);
    let entries = sample(2000, 20);
    let table = open(&opts, build(&opts, &entries)).unwrap();
    let lookup = |i: usize, budget: &mut ReadBudget| {
        let (key, value) = &entries[i * 97 % entries.len()];
        let got = get_spending(&table, user_key(key), budget);
        assert_eq!(got, Some((key.clone(), value.clone())), "entry {i}");
    };
    for i in 0..PRINTS_AFTER {
        lookup(i, &mut ReadBudget::default());
    }
    assert_eq!(table.has_index_aids(), (false, false));
    // The table is due its prints, but this read has opened another table.
    let mut read = ReadBudget::default();
    read.spend();
    lookup(1, &mut read);
    assert_eq!(table.has_index_aids(), (false, false));
    // The next read builds them, and leaves the offsets to the one after.
    let mut read = ReadBudget::default();
    lookup(2, &mut read);
    assert_eq!(table.has_index_aids(), (true, false));
    lookup(3, &mut read);
    assert_eq!(table.has_index_aids(), (true, false));
    lookup(4, &mut ReadBudget::default());
    assert_eq!(table.has_index_aids(), (true, true));
}

/// Opens `bytes` as a table twice, reading its meta blocks as copies and as a mapped file's
/// shared bytes, and walks, seeks and looks up in each: nothing may panic.
fn exercise(opts: &TableOptions, bytes: Vec<u8>) {
    let len = bytes.len() as u64;
    for file in [VecFile::new(bytes.clone()), VecFile::sharing(bytes)] {
        if let Ok(table) = Table::open(opts.clone(), Arc::new(file), len, "000042.ldb".into()) {
            exercise_table(&table);
        }
    }
}

fn exercise_table(table: &Arc<Table>) {
    let verify = BlockReads {
        verify_checksums: false,
        ..BlockReads::default()
    };
    let mut it = table.iter(verify);
    let mut steps = 0;
    it.seek_to_first();
    while it.valid() && steps < 5000 {
        it.next();
        steps += 1;
    }
    steps = 0;
    it.seek_to_last();
    while it.valid() && steps < 5000 {
        it.prev();
        steps += 1;
    }
    let _ = it.status();
    // Enough lookups to build the index prints, so damaged index blocks meet placed lookups.
    let probes = [&b"key000010"[..], b"", b"zz", b"key000011", b"key0000105"];
    for probe in probes.iter().cycle().take(2 * PRINTS_AFTER + probes.len()) {
        let lookup = internal_key(probe, 1 << 40, ValueType::Value);
        it.seek(&lookup);
        let _ = table.get(verify, &lookup, |k, v| (k.len(), v.len()));
        let _ = table.approximate_offset_of(&lookup);
    }
}

proptest! {
    #[test]
    fn arbitrary_files_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        exercise(&options(CompressionType::Snappy, true), bytes);
    }

    #[test]
    fn mutated_tables_never_panic(flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8),
                                  truncate in proptest::option::of(any::<usize>()),
                                  compression in prop_oneof![Just(CompressionType::None), Just(CompressionType::Snappy)]) {
        let mut opts = options(compression, true);
        opts.block_size = 128;
        let mut bytes = build(&opts, &sample(40, 12));
        let len = bytes.len();
        for (at, x) in flips {
            // Half the flips land in the last 200 bytes: index, metaindex, filter and footer.
            let at = if at % 2 == 0 { at % len } else { len - 1 - at % 200.min(len) };
            bytes[at] ^= x;
        }
        if let Some(t) = truncate {
            if t % 4 == 0 {
                bytes.truncate(t % (len + 1));
            }
        }
        exercise(&opts, bytes);
    }

    #[test]
    fn random_entries_round_trip(keys in proptest::collection::btree_map(
                                     proptest::collection::vec(0u8..5, 0..10),
                                     proptest::collection::vec(any::<u8>(), 0..40), 0..150),
                                 block_size in 32usize..600,
                                 interval in 1usize..20) {
        let mut opts = options(CompressionType::Snappy, true);
        opts.block_size = block_size;
        opts.block_restart_interval = interval;
        let entries: Entries = keys
            .into_iter()
            .map(|(k, v)| (internal_key(&k, 7, ValueType::Value), v))
            .collect();
        let table = open(&opts, build(&opts, &entries)).unwrap();
        prop_assert_eq!(scan_forward(&table), entries.clone());
        prop_assert_eq!(scan_backward(&table), entries.clone());
        for (k, v) in &entries {
            let found = get(&table, user_key(k));
            prop_assert_eq!(found, Some((k.clone(), v.clone())));
        }
    }
}

/// The entries of the golden tables in `testdata/` (see its README).
fn golden_entries() -> Entries {
    let mut out = Vec::new();
    for i in 0..24u64 {
        let user = format!("k{:03}", i * 5).into_bytes();
        if i == 2 {
            out.push((internal_key(&user, 25, ValueType::Deletion), Vec::new()));
        }
        let value = vec![b'a' + (i % 3) as u8; (i * 3) as usize];
        out.push((internal_key(&user, i + 1, ValueType::Value), value));
    }
    out
}

#[test]
fn reads_leveldb_tables_and_writes_them_byte_for_byte() {
    let plain = include_bytes!("testdata/leveldb-1.23-plain-bloom.ldb").to_vec();
    let snappy = include_bytes!("testdata/leveldb-1.23-snappy-bloom.ldb").to_vec();
    let mut opts = options(CompressionType::None, true);
    opts.block_size = 1024; // LevelDB clips the requested 256 to its minimum, 1 KiB
    let expected = golden_entries();
    for bytes in [plain.clone(), snappy] {
        let table = open(&opts, bytes).unwrap();
        assert!(table.has_filter());
        let read = BlockReads {
            verify_checksums: true,
            ..BlockReads::default()
        };
        let mut it = table.iter(read);
        let mut got = Vec::new();
        it.seek_to_first();
        while it.valid() {
            got.push((it.key().to_vec(), it.value().to_vec()));
            it.next();
        }
        it.status().unwrap();
        assert_eq!(got, expected);
        assert_eq!(scan_backward(&table), expected);
        // The newest entry of k010 is its deletion.
        let (k, _) = get(&table, b"k010").unwrap();
        assert_eq!(k, internal_key(b"k010", 25, ValueType::Deletion));
        for (k, _) in &expected {
            assert!(table.filter_may_match(k).unwrap());
        }
        // Absent keys inside the key range: the filter rules out most. (Four-byte keys that
        // differ only in their last byte would not do: LevelDB's hash mixes that byte into the
        // high bits only, so in a 256-bit filter they probe the same bits.)
        let excluded = (0..115)
            .filter(|i| {
                let user = format!("k{i:03}-absent");
                let absent = internal_key(user.as_bytes(), 100, ValueType::Value);
                !table.filter_may_match(&absent).unwrap()
            })
            .count();
        assert!(excluded > 100, "{excluded} of 115 excluded");
    }
    // Without compression the bytes are fully determined by the format: ours must match.
    assert_eq!(build(&opts, &expected), plain);
}

/// A table file that records the ranges released through it.
struct Releases {
    file: VecFile,
    released: parking_lot::Mutex<Vec<(u64, u64)>>,
}

impl crate::env::RandomAccessFile for Releases {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> crate::error::Result<usize> {
        self.file.read_at(offset, buf)
    }

    fn release(&self, offset: u64, len: u64) {
        self.released.lock().push((offset, len));
    }
}

#[test]
fn a_compaction_scan_releases_the_blocks_it_has_read_in_steps_and_the_rest_when_dropped() {
    let opts = options(CompressionType::None, false);
    let entries = sample(12_000, 200);
    let bytes = build(&opts, &entries);
    let len = bytes.len() as u64;
    let file = Arc::new(Releases {
        file: VecFile::new(bytes),
        released: parking_lot::Mutex::new(Vec::new()),
    });
    let table = Table::open(opts, file.clone(), len, "000042.ldb".to_string()).unwrap();
    // Plain reads release nothing.
    assert_eq!(scan_forward(&table), entries);
    assert!(file.released.lock().is_empty());

    let mut it = table.iter(BlockReads::background_scan());
    it.seek_to_first();
    let mut seen = 0;
    let mut released_while_reading = 0;
    while it.valid() {
        assert_eq!(
            (it.key(), it.value()),
            (&entries[seen].0[..], &entries[seen].1[..])
        );
        seen += 1;
        // Never the block being read: what was released ends at or before its offset.
        let released = file.released.lock();
        let released_to = released.last().map_or(0, |&(offset, len)| offset + len);
        assert!(released_to <= table.approximate_offset_of(it.key()));
        released_while_reading = released.len();
        drop(released);
        it.next();
    }
    it.status().unwrap();
    drop(it);
    assert_eq!(seen, entries.len());
    let released = file.released.lock().clone();
    assert!(
        released_while_reading >= 2,
        "{} MiB of blocks read, {released_while_reading} released in steps",
        len >> 20
    );
    // In order, back to back from the first block, in steps of at least 256 KiB but the last.
    assert_eq!(released[0].0, 0);
    for pair in released.windows(2) {
        assert_eq!(pair[0].0 + pair[0].1, pair[1].0, "{released:?}");
    }
    for &(_, step) in &released[..released.len() - 1] {
        assert!(step >= 256 << 10, "{released:?}");
    }
    // Up to the end of the last data block, where (no filter) the metaindex block starts.
    let (offset, size) = *released.last().unwrap();
    let past_every_key = internal_key(b"z", 0, ValueType::Value);
    assert_eq!(offset + size, table.approximate_offset_of(&past_every_key));
}

/// `bytes` (a table whose index block is its last block) with the index block stored
/// Snappy-compressed, as LevelDB stores one when that saves an eighth of it.
fn with_snappy_index(bytes: &[u8]) -> Vec<u8> {
    let footer = read_footer(&VecFile::new(bytes.to_vec()), bytes.len() as u64).unwrap();
    let (offset, size) = (footer.index.offset as usize, footer.index.size as usize);
    let compressed = snap::raw::Encoder::new()
        .compress_vec(&bytes[offset..offset + size])
        .unwrap();
    assert!(
        compressed.len() < size - size / 8,
        "setup: the index compresses"
    );
    let mut out = bytes[..offset].to_vec();
    out.extend_from_slice(&compressed);
    out.extend_from_slice(&block_trailer(&compressed, CompressionType::Snappy));
    let index = BlockHandle::new(offset as u64, compressed.len() as u64);
    out.extend_from_slice(&Footer { index, ..footer }.encode());
    out
}

/// A table opened from a mapped file keeps its index and filter blocks in the mapping when they
/// are stored uncompressed — Strata stores them so whatever the data blocks' compression; a
/// Snappy index block, as LevelDB may write one, is decompressed into a copy — and answers
/// exactly as the same table read through copies does.
#[test]
fn a_mapped_table_keeps_its_uncompressed_meta_blocks_in_the_mapping() {
    let dir = tempfile::tempdir().unwrap();
    let entries = sample(3000, 100);
    for (compression, snappy_index) in [
        (CompressionType::None, false),
        (CompressionType::Snappy, false),
        (CompressionType::Snappy, true),
    ] {
        let opts = options(compression, true);
        let mut bytes = build(&opts, &entries);
        let len = bytes.len() as u64;
        let index = read_footer(&VecFile::new(bytes.clone()), len)
            .unwrap()
            .index;
        assert_eq!(bytes[(index.offset + index.size) as usize], 0, "stored raw");
        if snappy_index {
            bytes = with_snappy_index(&bytes);
        }
        let len = bytes.len() as u64;
        let path = dir.path().join("000042.ldb");
        std::fs::write(&path, &bytes).unwrap();
        let file = PosixEnv::new().new_random_access_file(&path).unwrap();
        assert!(file.shared().is_some(), "the file is mapped");

        let table = Table::open(opts.clone(), file, len, "000042.ldb".to_string()).unwrap();
        assert_eq!(
            table.meta_blocks_shared(),
            (!snappy_index, Some(true)),
            "{compression:?}"
        );
        assert!(scan_forward(&table) == entries);
        assert!(scan_backward(&table) == entries);
        for (k, v) in &entries {
            let found = get(&table, user_key(k)).unwrap();
            assert_eq!((&found.0, &found.1), (k, v));
        }
        let copied = open(&opts, bytes).unwrap();
        assert_eq!(copied.meta_blocks_shared(), (false, Some(false)));
        // The mapping outlives every other holder of the file while the table holds it.
        std::fs::remove_file(&path).unwrap();
        assert!(scan_forward(&table) == scan_forward(&copied));
    }
}
