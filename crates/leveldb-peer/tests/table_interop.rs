//! Strata's table format against real LevelDB 1.23, both ways.
//!
//! - LevelDB → Strata: every live `.ldb` of databases LevelDB wrote (small and large; Snappy on
//!   and off; bloom filter on and off; decimal, long-shared-prefix and binary keys; empty values,
//!   values over a 4 KiB block and over 32 KiB; level-0 and compacted tables) is opened by
//!   Strata's table reader (the `testing` helpers, not the engine) and:
//!   - every entry is exactly the write the fixture made with that sequence number, in strict
//!     internal-key order (forward and backward scans agree);
//!   - the union of all tables' entries plus the live write-ahead log, newest sequence winning,
//!     is exactly the fixture's final model;
//!   - a point lookup of each user key in a table finds that table's newest entry for it, and
//!     lookups of keys the table lacks find nothing; where the table has a filter, the filter
//!     alone rules out more than 90% of the absent keys inside the table's key range;
//!   - with compression off, Strata's table builder, given the entries read, rebuilds the file
//!     byte for byte (blocks, index, filter block, metaindex, footer) — so Strata's bloom
//!     filters are LevelDB's, bit for bit, under the name LevelDB looks for;
//!   - an unfinished `.ldb` outside the live manifest (left by a compaction that closing the
//!     database cut short) is rejected as corrupt, never a panic.
//! - Strata → LevelDB: tables written by Strata's table builder (Snappy on and off, filter on
//!   and off, several block sizes and restart intervals, big values, shared prefixes, binary
//!   keys, tombstones and several versions of a key) are placed in an empty directory as
//!   `NNNNNN.ldb`; LevelDB's repairer takes every one of them as it is (its log counts each
//!   table's entries, the files are left byte-identical), and LevelDB then reads every key back
//!   exactly by forward and backward scans and by point gets (checksums verified, bloom filter
//!   on and off), absent and deleted keys not found. For the groups whose tables do not overlap,
//!   LevelDB runs no compaction, so every read went through Strata's bytes.
//!
//! Each test prints the counts it cross-checked (`cargo test -- --nocapture` shows them).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use leveldb_peer::fixtures::{
    build_db_with_writes, read_all, Fixture, FixtureOp, FixtureSpec, KeyOrder, KeyShape, ValueSizes,
};
use leveldb_peer::{repair, LevelDb, LevelDbOptions};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use strata::testing::{
    build_table, decode_block, decode_footer, read_block_at, read_log_file, version_edit_fields,
    write_batch_from_contents, write_batch_sequence, LogRecords, TableFile,
};
use strata::{BatchOp, CompressionType, PosixEnv};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;
/// Internal key → value, as a table holds them.
type Entries = Vec<(Vec<u8>, Vec<u8>)>;

// Format facts, spelled out here rather than taken from Strata so a wrong constant there shows.
/// Value type byte of an internal key's trailer: a deletion marker.
const TYPE_DELETION: u8 = 0;
/// Value type byte of an internal key's trailer: a value.
const TYPE_VALUE: u8 = 1;
/// Block trailer type byte: stored raw.
const BLOCK_RAW: u8 = 0;
/// Block trailer type byte: Snappy-compressed.
const BLOCK_SNAPPY: u8 = 1;
/// Table footer length.
const FOOTER_LEN: usize = 48;
/// Name under which the metaindex lists LevelDB's built-in bloom filter.
const BLOOM_META_KEY: &[u8] = b"filter.leveldb.BuiltinBloomFilter2";

const BLOCK_SIZE: usize = 4096;
const RESTART_INTERVAL: usize = 16;
const BLOOM_BITS: usize = 10;

/// An internal key split by the format's rules: user key, then `(sequence << 8) | type` as a
/// little-endian `u64`.
fn parse_ikey(ikey: &[u8]) -> (&[u8], u64, u8) {
    assert!(ikey.len() >= 8, "internal key of {} bytes", ikey.len());
    let (user, trailer) = ikey.split_at(ikey.len() - 8);
    let trailer = u64::from_le_bytes(trailer.try_into().unwrap());
    (user, trailer >> 8, (trailer & 0xff) as u8)
}

fn make_ikey(user: &[u8], seq: u64, kind: u8) -> Vec<u8> {
    let mut k = user.to_vec();
    k.extend_from_slice(&((seq << 8) | u64::from(kind)).to_le_bytes());
    k
}

/// Newest version of each user key seen so far: its sequence and value (`None`: deleted).
#[derive(Default)]
struct Resolved(BTreeMap<Vec<u8>, (u64, Option<Vec<u8>>)>);

impl Resolved {
    fn add(&mut self, user: &[u8], seq: u64, value: Option<&[u8]>) {
        match self.0.get_mut(user) {
            Some((old, _)) if *old > seq => {}
            Some(slot) => {
                assert!(
                    slot.0 < seq || slot.1.as_deref() == value,
                    "sequence {seq} carries two different entries"
                );
                *slot = (seq, value.map(<[u8]>::to_vec));
            }
            None => {
                self.0
                    .insert(user.to_vec(), (seq, value.map(<[u8]>::to_vec)));
            }
        }
    }

    fn live(&self) -> Model {
        self.0
            .iter()
            .filter_map(|(k, (_, v))| v.as_ref().map(|v| (k.clone(), v.clone())))
            .collect()
    }

    fn deleted(&self) -> impl Iterator<Item = &Vec<u8>> {
        self.0
            .iter()
            .filter(|(_, (_, v))| v.is_none())
            .map(|(k, _)| k)
    }
}

fn read_varint(bytes: &mut &[u8]) -> u64 {
    let mut out = 0u64;
    for shift in (0..64).step_by(7) {
        let (&b, rest) = bytes.split_first().expect("varint ends early");
        *bytes = rest;
        out |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return out;
        }
    }
    panic!("varint too long");
}

/// What a table holds besides its entries, read through Strata's block decoders with the
/// handles decoded here: the trailer type byte of each data block, and the metaindex keys.
struct Layout {
    raw_blocks: usize,
    snappy_blocks: usize,
    meta_keys: Vec<Vec<u8>>,
}

fn layout(table: &[u8]) -> Layout {
    let footer = &table[table.len() - FOOTER_LEN..];
    let footer = decode_footer(footer).expect("footer");
    let index = read_block_at(table, footer.index, true).expect("index block");
    let (mut raw_blocks, mut snappy_blocks) = (0, 0);
    for (_, handle) in decode_block(index).expect("index entries") {
        let mut h = handle.as_slice();
        let (off, size) = (read_varint(&mut h), read_varint(&mut h));
        assert!(h.is_empty(), "index value is exactly a block handle");
        match table[usize::try_from(off + size).unwrap()] {
            BLOCK_RAW => raw_blocks += 1,
            BLOCK_SNAPPY => snappy_blocks += 1,
            other => panic!("block type {other}"),
        }
    }
    let meta = read_block_at(table, footer.metaindex, true).expect("metaindex block");
    let meta_keys = decode_block(meta)
        .expect("metaindex entries")
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    Layout {
        raw_blocks,
        snappy_blocks,
        meta_keys,
    }
}

/// Files of `dir` named `NNNNNN.<suffix>`, by number.
fn numbered_files(dir: &Path, suffix: &str) -> BTreeMap<u64, PathBuf> {
    let mut files = BTreeMap::new();
    for entry in fs::read_dir(dir).expect("list dir") {
        let entry = entry.expect("dir entry");
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(stem) = name.strip_suffix(suffix) {
            files.insert(stem.parse().expect("numbered file"), entry.path());
        }
    }
    files
}

/// The tables the live manifest (named by `CURRENT`) lists, decoded by Strata, all present on
/// disk: the union of their entries (and the log's) is the database. Also returns the `.ldb`
/// files the manifest does not list: the unfinished output of a compaction that closing the
/// database cut short, which LevelDB deletes at the next open.
fn live_tables(dir: &Path) -> (BTreeMap<u64, PathBuf>, BTreeMap<u64, PathBuf>) {
    let current = fs::read_to_string(dir.join("CURRENT")).expect("CURRENT");
    let manifest = dir.join(current.trim_end());
    let LogRecords { records, reports } =
        read_log_file(&PosixEnv::new(), &manifest).expect("manifest");
    assert!(reports.is_empty(), "{reports:?}");
    let mut live = BTreeSet::new();
    for record in records {
        let edit = version_edit_fields(&record).expect("version edit");
        for (_, number) in edit.deleted_files {
            assert!(live.remove(&number), "deletes absent table {number}");
        }
        for file in edit.new_files {
            assert!(live.insert(file.number), "adds table {} twice", file.number);
        }
    }
    let (on_disk, orphans): (BTreeMap<_, _>, BTreeMap<_, _>) = numbered_files(dir, ".ldb")
        .into_iter()
        .partition(|(number, _)| live.contains(number));
    assert_eq!(
        live,
        on_disk.keys().copied().collect::<BTreeSet<_>>(),
        "live tables missing on disk"
    );
    (on_disk, orphans)
}

#[derive(Debug, Default)]
struct ReadCounts {
    dbs: usize,
    tables: usize,
    tables_with_filter: usize,
    raw_blocks: usize,
    snappy_blocks: usize,
    /// Blocks LevelDB stored raw although Snappy was on (it did not save enough).
    raw_blocks_with_snappy_on: usize,
    entries: usize,
    tombstones: usize,
    largest_value: usize,
    values_over_32k: usize,
    empty_values: usize,
    wal_records: usize,
    wal_ops: usize,
    model_keys: usize,
    present_lookups: usize,
    absent_lookups: usize,
    /// Absent lookups inside a filtered table's key range (the filter is always consulted).
    filter_probes: usize,
    filter_excluded: usize,
    plain_tables_rebuilt_identical: usize,
    snappy_tables_rebuilt_identical: usize,
    snappy_tables_rebuilt: usize,
    /// `.ldb` files outside the live manifest (an aborted compaction's output) that Strata
    /// rejected as corrupt (unfinished) or read whole (every entry still exact).
    orphans_rejected: usize,
    orphans_read: usize,
}

struct Case {
    name: &'static str,
    compression: bool,
    bloom: bool,
    spec: FixtureSpec,
}

fn values(
    len: std::ops::RangeInclusive<usize>,
    empty: f64,
    large: f64,
    large_len: std::ops::RangeInclusive<usize>,
) -> ValueSizes {
    ValueSizes {
        len,
        empty_fraction: empty,
        large_fraction: large,
        large_len,
    }
}

fn leveldb_cases() -> Vec<Case> {
    let base = FixtureSpec::default();
    vec![
        Case {
            name: "small, compacted, live WAL",
            compression: true,
            bloom: false,
            spec: FixtureSpec {
                seed: 21,
                num_keys: 200,
                compact_at_end: true,
                live_wal_ops: 40,
                ..base.clone()
            },
        },
        Case {
            name: "small, plain, bloom",
            compression: false,
            bloom: true,
            spec: FixtureSpec {
                seed: 22,
                num_keys: 300,
                compact_at_end: true,
                ..base.clone()
            },
        },
        Case {
            name: "large, shuffled, level-0 and level-1 tables",
            compression: true,
            bloom: true,
            spec: FixtureSpec {
                seed: 23,
                num_keys: 24_000,
                values: values(1..=200, 0.05, 0.01, 4097..=20_000),
                batch_size: 4,
                ..base.clone()
            },
        },
        Case {
            name: "large, sequential, plain, compacted",
            compression: false,
            bloom: false,
            spec: FixtureSpec {
                seed: 24,
                num_keys: 20_000,
                order: KeyOrder::Sequential,
                values: values(1..=150, 0.05, 0.01, 4097..=12_000),
                compact_at_end: true,
                live_wal_ops: 200,
                ..base.clone()
            },
        },
        Case {
            name: "200-byte shared prefixes",
            compression: true,
            bloom: true,
            spec: FixtureSpec {
                seed: 25,
                num_keys: 5000,
                keys: KeyShape::SharedPrefix { prefix_len: 200 },
                compact_at_end: true,
                ..base.clone()
            },
        },
        Case {
            name: "1000-byte shared prefixes, plain, level 0",
            compression: false,
            bloom: false,
            spec: FixtureSpec {
                seed: 26,
                num_keys: 1500,
                keys: KeyShape::SharedPrefix { prefix_len: 1000 },
                ..base.clone()
            },
        },
        Case {
            name: "binary keys, batched",
            compression: true,
            bloom: true,
            spec: FixtureSpec {
                seed: 27,
                num_keys: 5000,
                keys: KeyShape::Binary,
                batch_size: 8,
                compact_at_end: true,
                live_wal_ops: 100,
                ..base.clone()
            },
        },
        Case {
            name: "binary keys, plain, bloom, level 0",
            compression: false,
            bloom: true,
            spec: FixtureSpec {
                seed: 28,
                num_keys: 3000,
                keys: KeyShape::Binary,
                ..base.clone()
            },
        },
        Case {
            name: "empty values and values over 32 KiB",
            compression: true,
            bloom: true,
            spec: FixtureSpec {
                seed: 29,
                num_keys: 400,
                values: values(0..=50, 0.25, 0.35, 4097..=70_000),
                compact_at_end: true,
                ..base.clone()
            },
        },
        Case {
            name: "empty values and values over 32 KiB, plain",
            compression: false,
            bloom: false,
            spec: FixtureSpec {
                seed: 30,
                num_keys: 300,
                values: values(0..=50, 0.25, 0.35, 33_000..=70_000),
                live_wal_ops: 30,
                ..base
            },
        },
    ]
}

fn leveldb_options(compression: bool, bloom: bool) -> LevelDbOptions {
    LevelDbOptions {
        write_buffer_size: Some(64 << 10),
        block_size: Some(BLOCK_SIZE),
        block_restart_interval: Some(RESTART_INTERVAL),
        compression,
        bloom_bits: bloom.then_some(BLOOM_BITS as i32),
        ..LevelDbOptions::default()
    }
}

/// The fixture's operation with sequence number `seq` (operation `seq - 1` in write order).
fn op_at<'f>(ops: &[&'f FixtureOp], seq: u64) -> &'f FixtureOp {
    usize::try_from(seq)
        .ok()
        .and_then(|s| s.checked_sub(1))
        .and_then(|i| ops.get(i))
        .unwrap_or_else(|| panic!("sequence {seq} was never written"))
}

/// Checks that the entry `(user, seq, kind, value)` is exactly the write with sequence `seq`.
fn check_is_write(ops: &[&FixtureOp], user: &[u8], seq: u64, kind: u8, value: &[u8], what: &str) {
    match op_at(ops, seq) {
        FixtureOp::Put { key, value: v } => {
            assert!(
                kind == TYPE_VALUE && key == user && v == value,
                "{what}: sequence {seq} is not the put written"
            );
        }
        FixtureOp::Delete { key } => {
            assert!(
                kind == TYPE_DELETION && key == user && value.is_empty(),
                "{what}: sequence {seq} is not the delete written"
            );
        }
    }
}

/// Reads one LevelDB-written table with Strata and checks it as the module doc says.
fn check_leveldb_table(
    case: &Case,
    path: &Path,
    ops: &[&FixtureOp],
    model: &Model,
    resolved: &mut Resolved,
    counts: &mut ReadCounts,
) {
    let what = format!("{}: {}", case.name, path.display());
    let bytes = fs::read(path).expect("read table");
    let bits = case.bloom.then_some(BLOOM_BITS);
    let table = TableFile::open(bytes.clone(), bits).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(table.has_filter(), case.bloom, "{what}: filter");
    let entries = table
        .entries()
        .unwrap_or_else(|e| panic!("{what}: scan: {e}"));
    assert!(!entries.is_empty(), "{what}: empty table");

    // Every entry, in strict internal-key order, is the write of its sequence number.
    let mut newest: BTreeMap<&[u8], (u64, u8, &[u8])> = BTreeMap::new();
    let mut previous: Option<(&[u8], u64)> = None;
    for (ikey, value) in &entries {
        let (user, seq, kind) = parse_ikey(ikey);
        if let Some((p_user, p_seq)) = previous {
            assert!(
                p_user < user || (p_user == user && p_seq > seq),
                "{what}: entries out of order at sequence {seq}"
            );
        }
        previous = Some((user, seq));
        check_is_write(ops, user, seq, kind, value, &what);
        resolved.add(user, seq, (kind == TYPE_VALUE).then_some(value.as_slice()));
        newest.entry(user).or_insert((seq, kind, value));
        counts.tombstones += usize::from(kind == TYPE_DELETION);
        counts.empty_values += usize::from(kind == TYPE_VALUE && value.is_empty());
        counts.values_over_32k += usize::from(value.len() > 32 << 10);
        counts.largest_value = counts.largest_value.max(value.len());
    }
    counts.entries += entries.len();

    // Point lookups: each user key finds this table's newest entry for it.
    for (&user, &(seq, kind, value)) in &newest {
        let got = table
            .get(user)
            .unwrap_or_else(|e| panic!("{what}: get: {e}"));
        let found = got
            .found
            .unwrap_or_else(|| panic!("{what}: present key not found"));
        assert!(!got.filtered, "{what}: the filter ruled out a present key");
        assert_eq!(
            (found.sequence, found.is_value, found.value.as_slice()),
            (seq, kind == TYPE_VALUE, value),
            "{what}: lookup returned another entry"
        );
        counts.present_lookups += 1;
    }

    // Absent keys: just after each key (inside the key range), and keys held elsewhere.
    let last = *newest.keys().next_back().expect("non-empty");
    let mut absent: Vec<Vec<u8>> = newest
        .keys()
        .map(|k| [*k, &[0u8][..]].concat())
        .filter(|k| !newest.contains_key(k.as_slice()))
        .collect();
    absent.extend(
        model
            .keys()
            .filter(|k| !newest.contains_key(k.as_slice()))
            .step_by(7)
            .take(300)
            .cloned(),
    );
    for key in &absent {
        let got = table
            .get(key)
            .unwrap_or_else(|e| panic!("{what}: get: {e}"));
        assert_eq!(got.found, None, "{what}: absent key found");
        counts.absent_lookups += 1;
        if !case.bloom {
            assert!(!got.filtered, "{what}: no filter, yet a key was filtered");
        } else if key.as_slice() < last {
            counts.filter_probes += 1;
            counts.filter_excluded += usize::from(got.filtered);
        }
    }

    let shape = layout(&bytes);
    counts.raw_blocks += shape.raw_blocks;
    counts.snappy_blocks += shape.snappy_blocks;
    if case.compression {
        counts.raw_blocks_with_snappy_on += shape.raw_blocks;
    } else {
        assert_eq!(shape.snappy_blocks, 0, "{what}: compressed block");
    }
    let filter_named = shape.meta_keys.iter().any(|k| k == BLOOM_META_KEY);
    assert_eq!(filter_named, case.bloom, "{what}: metaindex");

    // With compression off the bytes are fully determined by the entries and the options.
    let compression = if case.compression {
        CompressionType::Snappy
    } else {
        CompressionType::None
    };
    let rebuilt = build_table(&entries, compression, BLOCK_SIZE, RESTART_INTERVAL, bits)
        .unwrap_or_else(|e| panic!("{what}: rebuild: {e}"));
    if case.compression {
        // Snappy encoders may legally differ; only counted.
        counts.snappy_tables_rebuilt += 1;
        counts.snappy_tables_rebuilt_identical += usize::from(rebuilt == bytes);
    } else {
        assert!(rebuilt == bytes, "{what}: Strata builds different bytes");
        counts.plain_tables_rebuilt_identical += 1;
    }
    counts.tables += 1;
    counts.tables_with_filter += usize::from(case.bloom);
}

/// An unfinished table outside the live manifest is not part of the database; Strata must
/// reject it as corrupt without panicking, or, if LevelDB got to finish it, read it exactly.
fn check_orphan(case: &Case, path: &Path, ops: &[&FixtureOp], counts: &mut ReadCounts) {
    let what = format!("{}: orphan {}", case.name, path.display());
    let bytes = fs::read(path).expect("read table");
    let read = TableFile::open(bytes, case.bloom.then_some(BLOOM_BITS)).and_then(|t| t.entries());
    match read {
        Ok(entries) => {
            for (ikey, value) in &entries {
                let (user, seq, kind) = parse_ikey(ikey);
                check_is_write(ops, user, seq, kind, value, &what);
            }
            counts.orphans_read += 1;
        }
        Err(e) => {
            assert!(e.is_corruption(), "{what}: {e}");
            counts.orphans_rejected += 1;
        }
    }
}

/// Replays every `.log` in `dir` with Strata's log reader and batch decoder into `resolved`,
/// each operation checked against the write of its sequence number.
fn replay_wals(dir: &Path, ops: &[&FixtureOp], resolved: &mut Resolved, counts: &mut ReadCounts) {
    for path in numbered_files(dir, ".log").values() {
        let LogRecords { records, reports } =
            read_log_file(&PosixEnv::new(), path).expect("open log");
        assert!(reports.is_empty(), "{}: {reports:?}", path.display());
        for record in records {
            let batch = write_batch_from_contents(record).expect("batch");
            let first = write_batch_sequence(&batch);
            for (seq, op) in (first..).zip(batch.iter()) {
                let what = format!("{} sequence {seq}", path.display());
                match op.expect("batch op") {
                    BatchOp::Put { key, value } => {
                        check_is_write(ops, key, seq, TYPE_VALUE, value, &what);
                        resolved.add(key, seq, Some(value));
                    }
                    BatchOp::Delete { key } => {
                        check_is_write(ops, key, seq, TYPE_DELETION, &[], &what);
                        resolved.add(key, seq, None);
                    }
                    other => panic!("{what}: a LevelDB log holds {other:?}"),
                }
                counts.wal_ops += 1;
            }
            counts.wal_records += 1;
        }
    }
}

fn check_leveldb_db(case: &Case, dir: &Path, fixture: &Fixture, counts: &mut ReadCounts) {
    let ops: Vec<&FixtureOp> = fixture.writes.iter().flatten().collect();
    let (tables, orphans) = live_tables(dir);
    assert!(!tables.is_empty(), "{}: no tables", case.name);
    for path in orphans.values() {
        check_orphan(case, path, &ops, counts);
    }
    let mut resolved = Resolved::default();
    for path in tables.values() {
        check_leveldb_table(case, path, &ops, &fixture.model, &mut resolved, counts);
    }
    replay_wals(dir, &ops, &mut resolved, counts);
    assert!(
        resolved.live() == fixture.model,
        "{}: tables + WAL hold {} live keys, the model {}",
        case.name,
        resolved.live().len(),
        fixture.model.len()
    );
    counts.model_keys += fixture.model.len();
    counts.dbs += 1;
}

#[test]
fn strata_reads_every_table_leveldb_writes() {
    let root = tempfile::tempdir().expect("tempdir");
    let mut counts = ReadCounts::default();
    for (i, case) in leveldb_cases().iter().enumerate() {
        let dir = root.path().join(format!("db{i}"));
        let opts = leveldb_options(case.compression, case.bloom);
        let fixture = build_db_with_writes(&dir, &opts, &case.spec).expect("fixture");
        let before = counts.tables;
        check_leveldb_db(case, &dir, &fixture, &mut counts);
        println!(
            "{}: {} tables, {} live keys",
            case.name,
            counts.tables - before,
            fixture.model.len()
        );
    }
    println!("LevelDB → Strata tables: {counts:#?}");

    // The cases really cover what they claim.
    // (The exact number of tables depends on LevelDB's background-compaction timing.)
    assert!(counts.tables >= 25, "{} tables", counts.tables);
    assert!(counts.tables_with_filter > 0 && counts.tables_with_filter < counts.tables);
    assert!(counts.snappy_blocks > 0 && counts.raw_blocks_with_snappy_on > 0);
    assert!(counts.tombstones > 0 && counts.empty_values > 0 && counts.values_over_32k > 0);
    assert!(counts.wal_ops > 0);
    assert!(counts.plain_tables_rebuilt_identical > 0);
    assert!(
        counts.filter_probes > 1000,
        "{} probes",
        counts.filter_probes
    );
    assert!(
        counts.filter_excluded * 10 > counts.filter_probes * 9,
        "the filter ruled out only {} of {} absent keys",
        counts.filter_excluded,
        counts.filter_probes
    );
}

// ---------------------------------------------------------------------------------------------
// Strata → LevelDB

/// A table for Strata to write.
struct TableSpec {
    number: u64,
    compression: CompressionType,
    filter: bool,
    block_size: usize,
    restart_interval: usize,
    entries: Entries,
}

/// Hands out increasing sequence numbers so that a higher-numbered table holds only newer
/// entries: LevelDB's point reads on level 0 trust the newest file that has a key.
struct Seq(u64);

/// Turns `(user key, value or deletion)` operations, oldest first, into a table's sorted
/// entries: sequences in operation order, then internal-key order (user key ascending,
/// sequence descending).
fn entries_of(ops: Vec<(Vec<u8>, Option<Vec<u8>>)>, seq: &mut Seq) -> Entries {
    let mut entries: Vec<(Vec<u8>, u64, Option<Vec<u8>>)> = ops
        .into_iter()
        .map(|(user, value)| {
            seq.0 += 1;
            (user, seq.0, value)
        })
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    entries
        .into_iter()
        .map(|(user, s, value)| match value {
            Some(v) => (make_ikey(&user, s, TYPE_VALUE), v),
            None => (make_ikey(&user, s, TYPE_DELETION), Vec::new()),
        })
        .collect()
}

/// A value of `len` bytes: half compressible (a short repeated pattern), half random.
fn value(rng: &mut StdRng, len: usize) -> Vec<u8> {
    if rng.gen_bool(0.5) {
        let pattern: [u8; 5] = rng.gen();
        pattern.iter().copied().cycle().take(len).collect()
    } else {
        let mut v = vec![0u8; len];
        rng.fill(v.as_mut_slice());
        v
    }
}

fn sized(rng: &mut StdRng, empty: f64, len: std::ops::RangeInclusive<usize>) -> Vec<u8> {
    if rng.gen_bool(empty) {
        Vec::new()
    } else {
        let n = rng.gen_range(len);
        value(rng, n)
    }
}

fn table(
    number: u64,
    compression: CompressionType,
    filter: bool,
    block_size: usize,
    restart_interval: usize,
    entries: Entries,
) -> TableSpec {
    TableSpec {
        number,
        compression,
        filter,
        block_size,
        restart_interval,
        entries,
    }
}

/// Three tables over disjoint key ranges: decimal, long shared prefixes, binary keys.
fn disjoint_group(rng: &mut StdRng, seq: &mut Seq) -> Vec<TableSpec> {
    use CompressionType::{None as Plain, Snappy};
    let decimal = (0..3000)
        .map(|i| {
            (
                format!("a/{i:06}").into_bytes(),
                Some(sized(rng, 0.1, 1..=300)),
            )
        })
        .collect();
    let prefix: Vec<u8> = b"b/tenant-0042/collection/objects/"
        .iter()
        .copied()
        .cycle()
        .take(250)
        .collect();
    let shared = (0..1500)
        .map(|i| {
            let key = [&prefix[..], format!("{i:06}").as_bytes()].concat();
            (key, Some(sized(rng, 0.05, 1..=120)))
        })
        .collect();
    let mut binary: Vec<(Vec<u8>, Option<Vec<u8>>)> = (0u32..2000)
        .map(|i| {
            let head_len = rng.gen_range(0..=8);
            let mut key = vec![0xc0];
            key.extend((0..head_len).map(|_| rng.gen::<u8>()));
            key.extend_from_slice(&i.to_be_bytes());
            (key, Some(sized(rng, 0.2, 0..=100)))
        })
        .collect();
    binary.sort();
    vec![
        table(5, Snappy, true, BLOCK_SIZE, 16, entries_of(decimal, seq)),
        table(7, Plain, true, BLOCK_SIZE, 16, entries_of(shared, seq)),
        table(9, Snappy, false, 1024, 4, entries_of(binary, seq)),
    ]
}

/// Three tables of values over a block and over 32 KiB, mixed with empty ones.
fn big_value_group(rng: &mut StdRng, seq: &mut Seq) -> Vec<TableSpec> {
    use CompressionType::{None as Plain, Snappy};
    let a = (0..60)
        .map(|i| {
            (
                format!("big/{i:04}").into_bytes(),
                Some(sized(rng, 0.0, 4097..=70_000)),
            )
        })
        .collect();
    let b = (0..40)
        .map(|i| {
            (
                format!("big2/{i:04}").into_bytes(),
                Some(sized(rng, 0.0, 30_000..=100_000)),
            )
        })
        .collect();
    let c = (0..200)
        .map(|i| {
            let v = if i % 2 == 0 {
                Vec::new()
            } else {
                sized(rng, 0.0, 33_000..=40_000)
            };
            (format!("bj/{i:04}").into_bytes(), Some(v))
        })
        .collect();
    vec![
        table(11, Snappy, true, BLOCK_SIZE, 16, entries_of(a, seq)),
        table(12, Plain, false, BLOCK_SIZE, 1, entries_of(b, seq)),
        table(13, Plain, true, 16 << 10, 16, entries_of(c, seq)),
    ]
}

/// Four tables over one key range, each newer than the last: overwrites, deletion markers
/// (also of keys never written), several versions of a key inside one table, re-puts of
/// deleted keys. Four level-0 files make LevelDB compact them, reading Strata's tables whole.
fn overlap_group(rng: &mut StdRng, seq: &mut Seq) -> Vec<TableSpec> {
    use CompressionType::{None as Plain, Snappy};
    let key = |i: usize| format!("k{i:05}").into_bytes();
    let first = (0..2000)
        .map(|i| (key(i), Some(sized(rng, 0.05, 0..=200))))
        .collect();
    let mut second = Vec::new();
    for i in 0..2000 {
        if i % 7 == 0 {
            second.push((key(i), Some(sized(rng, 0.0, 1..=50)))); // older version
        }
        if i % 5 == 0 {
            second.push((key(i), None));
        } else if i % 3 == 0 {
            second.push((key(i), Some(sized(rng, 0.1, 0..=200))));
        }
    }
    let mut third = Vec::new();
    for i in 0..2000 {
        if i % 4 == 0 {
            third.push((
                [key(i), b"x".to_vec()].concat(),
                Some(sized(rng, 0.1, 0..=80)),
            ));
        }
        if i % 10 == 0 {
            third.push((key(i), Some(sized(rng, 0.1, 0..=80)))); // re-put after a delete
        }
        if i % 13 == 0 {
            third.push(([key(i), b"never".to_vec()].concat(), None));
        }
    }
    let mut fourth = Vec::new();
    for _ in 0..800 {
        let k = key(rng.gen_range(0..2100));
        let v = rng.gen_bool(0.7).then(|| sized(rng, 0.1, 0..=6000));
        fourth.push((k, v));
    }
    vec![
        table(3, Snappy, true, BLOCK_SIZE, 16, entries_of(first, seq)),
        table(4, Plain, true, BLOCK_SIZE, 16, entries_of(second, seq)),
        table(6, Plain, false, BLOCK_SIZE, 1, entries_of(third, seq)),
        table(8, Snappy, true, 2048, 8, entries_of(fourth, seq)),
    ]
}

#[derive(Debug, Default)]
struct WriteCounts {
    groups: usize,
    tables: usize,
    tables_with_filter: usize,
    snappy_tables: usize,
    entries: usize,
    tombstones: usize,
    values_over_32k: usize,
    model_keys: usize,
    leveldb_scanned: usize,
    leveldb_gets_present: usize,
    leveldb_gets_deleted: usize,
    leveldb_gets_absent: usize,
}

fn leveldb_open(dir: &Path, bloom: bool) -> LevelDb {
    let opts = LevelDbOptions {
        paranoid_checks: true,
        bloom_bits: bloom.then_some(BLOOM_BITS as i32),
        ..LevelDbOptions::default()
    };
    LevelDb::open(dir, &opts).expect("LevelDB opens the repaired directory")
}

/// Every key of `db` scanned backwards (checksums verified).
fn scan_backward(db: &LevelDb) -> Vec<Vec<u8>> {
    let mut keys = Vec::new();
    let mut it = db.iter_with(false, true);
    it.seek_to_last();
    while it.valid() {
        keys.push(it.key().to_vec());
        it.prev();
    }
    it.status().expect("backward scan");
    keys.reverse();
    keys
}

/// Reads everything back from LevelDB: scans both ways and gets of every live, deleted and
/// absent key.
fn check_leveldb_reads(db: &LevelDb, resolved: &Resolved, what: &str, counts: &mut WriteCounts) {
    let model = resolved.live();
    let all = read_all(db).unwrap_or_else(|e| panic!("{what}: scan: {e}"));
    assert!(
        all == model,
        "{what}: LevelDB holds {} keys, expected {}",
        all.len(),
        model.len()
    );
    assert!(
        scan_backward(db) == model.keys().cloned().collect::<Vec<_>>(),
        "{what}: backward scan differs"
    );
    counts.leveldb_scanned += all.len();
    for (k, v) in &model {
        let got = db.get_with(k, true, true).expect("get");
        assert!(got.as_ref() == Some(v), "{what}: get of a live key");
        counts.leveldb_gets_present += 1;
    }
    for k in resolved.deleted() {
        assert_eq!(db.get_with(k, true, true).expect("get"), None, "{what}");
        counts.leveldb_gets_deleted += 1;
    }
    for k in model.keys() {
        let absent = [k.as_slice(), &[0u8][..]].concat();
        if !resolved.0.contains_key(&absent) {
            assert_eq!(db.get(&absent).expect("get"), None, "{what}: absent key");
            counts.leveldb_gets_absent += 1;
        }
    }
}

fn level0_files(db: &LevelDb) -> usize {
    db.property("leveldb.num-files-at-level0")
        .expect("property")
        .parse()
        .expect("number")
}

/// Writes `tables` with Strata into an empty directory, repairs it with LevelDB and checks
/// LevelDB reads exactly what they hold. `no_compaction`: the tables do not overlap and are
/// too few for a level-0 compaction, so LevelDB must still serve every read from them.
fn check_group(name: &str, tables: &[TableSpec], no_compaction: bool, counts: &mut WriteCounts) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut resolved = Resolved::default();
    let mut written = BTreeMap::new();
    for t in tables {
        let bits = t.filter.then_some(BLOOM_BITS);
        let bytes = build_table(
            &t.entries,
            t.compression,
            t.block_size,
            t.restart_interval,
            bits,
        )
        .expect("Strata builds the table");
        for (ikey, value) in &t.entries {
            let (user, seq, kind) = parse_ikey(ikey);
            resolved.add(user, seq, (kind == TYPE_VALUE).then_some(value.as_slice()));
            counts.tombstones += usize::from(kind == TYPE_DELETION);
            counts.values_over_32k += usize::from(value.len() > 32 << 10);
        }
        let shape = layout(&bytes);
        let filter_named = shape.meta_keys.iter().any(|k| k == BLOOM_META_KEY);
        assert_eq!(
            filter_named, t.filter,
            "{name}: table {} metaindex",
            t.number
        );
        if t.compression == CompressionType::Snappy {
            assert!(shape.snappy_blocks > 0, "{name}: table {}", t.number);
            counts.snappy_tables += 1;
        }
        let path = dir.path().join(format!("{:06}.ldb", t.number));
        fs::write(&path, &bytes).expect("write table");
        written.insert(t.number, (path, bytes));
        counts.tables += 1;
        counts.tables_with_filter += usize::from(t.filter);
        counts.entries += t.entries.len();
    }

    repair(dir.path()).unwrap_or_else(|e| panic!("{name}: repair: {e}"));
    // The repairer took every table as it was: scanned whole, kept byte for byte.
    let log = fs::read_to_string(dir.path().join("LOG")).expect("repair LOG");
    for t in tables {
        let (path, bytes) = &written[&t.number];
        let line = format!("Table #{}: {} entries OK", t.number, t.entries.len());
        assert!(log.contains(&line), "{name}: LOG lacks {line:?}:\n{log}");
        assert!(
            fs::read(path).expect("table") == *bytes,
            "{name}: rewritten"
        );
    }

    let any_filter = tables.iter().any(|t| t.filter);
    for bloom in [any_filter, false] {
        let what = format!("{name} (LevelDB bloom filter {bloom})");
        let db = leveldb_open(dir.path(), bloom);
        check_leveldb_reads(&db, &resolved, &what, counts);
        if no_compaction {
            assert_eq!(level0_files(&db), tables.len(), "{what}: compacted");
            let listed = db.property("leveldb.sstables").expect("sstables");
            for t in tables {
                assert!(
                    listed.contains(&format!(" {}:", t.number)),
                    "{what}: table {} gone:\n{listed}",
                    t.number
                );
            }
        }
        if !any_filter {
            break;
        }
    }
    counts.model_keys += resolved.live().len();
    counts.groups += 1;
}

#[test]
fn leveldb_reads_tables_strata_writes() {
    let mut rng = StdRng::seed_from_u64(0x7ab1e);
    let mut seq = Seq(0);
    let mut counts = WriteCounts::default();
    let disjoint = disjoint_group(&mut rng, &mut seq);
    check_group("disjoint key ranges", &disjoint, true, &mut counts);
    let big = big_value_group(&mut rng, &mut seq);
    check_group("big values", &big, true, &mut counts);
    let overlap = overlap_group(&mut rng, &mut seq);
    check_group("overlapping versions", &overlap, false, &mut counts);
    println!("Strata → LevelDB tables: {counts:#?}");
    assert!(counts.tombstones > 0 && counts.values_over_32k > 0);
    assert!(counts.snappy_tables > 0 && counts.snappy_tables < counts.tables);
    assert!(counts.tables_with_filter > 0 && counts.tables_with_filter < counts.tables);
}
