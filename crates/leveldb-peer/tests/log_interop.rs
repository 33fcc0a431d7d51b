//! Strata's log format, write batches and version edits against real LevelDB 1.23, both ways.
//!
//! - LevelDB → Strata: databases written by LevelDB (fixtures of several shapes) have every
//!   `.log` read by Strata's log reader and every record decoded as a write batch: no damage
//!   reported, sequence numbers contiguous, each record exactly the write the fixture made, and
//!   Strata's encoder rebuilding the same bytes. Every `MANIFEST-*` decodes record for record
//!   with Strata's version-edit decoder (and re-encodes to the same bytes), names the bytewise
//!   comparator, and lists exactly the `.ldb` files on disk with their sizes.
//! - Strata → LevelDB: a log written by Strata's log writer (batches sized so records end 0..=7
//!   bytes before a block boundary, inside one block and spanning two or three) is recovered
//!   by LevelDB with every key and value exact, once beside a Strata-written manifest and
//!   `CURRENT`, once through LevelDB's repairer.
//! - Torn tails: the same log cut inside a record recovers, in LevelDB and in Strata's reader
//!   alike, as exactly the records before the cut.
//!
//! Each test prints the counts it cross-checked (`cargo test -- --nocapture` shows them).

// Test helpers outside `#[test]` functions fail loudly on any error, like the tests themselves.
#![allow(clippy::expect_used)]

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use leveldb_peer::fixtures::{
    build_db_with_writes, read_all, FixtureOp, FixtureSpec, KeyOrder, KeyShape, ValueSizes,
};
use leveldb_peer::{repair, LevelDb, LevelDbOptions};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use strata::testing::{
    encode_version_edit, read_log_file, read_log_records, version_edit_fields,
    write_batch_contents, write_batch_from_contents, write_batch_sequence,
    write_batch_set_sequence, write_log_file, EditFields, LogRecords,
};
use strata::{BatchOp, PosixEnv, WriteBatch};

/// Log block size (the format's, not taken from Strata so that a wrong constant there shows).
const BLOCK: usize = 32 * 1024;
/// Physical record header: checksum, length, type.
const HEADER: usize = 7;
/// Write batch header: sequence and count.
const BATCH_HEADER: usize = 12;
const COMPARATOR: &str = "leveldb.BytewiseComparator";

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn apply(model: &mut Model, op: &FixtureOp) {
    match op {
        FixtureOp::Put { key, value } => {
            model.insert(key.clone(), value.clone());
        }
        FixtureOp::Delete { key } => {
            model.remove(key);
        }
    }
}

fn model_of<'a>(writes: impl IntoIterator<Item = &'a Vec<FixtureOp>>) -> Model {
    let mut model = Model::new();
    for op in writes.into_iter().flatten() {
        apply(&mut model, op);
    }
    model
}

/// Strata's encoding of `ops` as one batch starting at `sequence`.
fn strata_batch(ops: &[FixtureOp], sequence: u64) -> WriteBatch {
    let mut batch = WriteBatch::new();
    for op in ops {
        match op {
            FixtureOp::Put { key, value } => batch.put(key, value),
            FixtureOp::Delete { key } => batch.delete(key),
        }
    }
    write_batch_set_sequence(&mut batch, sequence);
    batch
}

/// The updates of a decoded batch; any decoding error fails the test.
fn batch_ops(batch: &WriteBatch, what: &str) -> Vec<FixtureOp> {
    batch
        .iter()
        .map(|op| match op {
            Ok(BatchOp::Put { key, value }) => FixtureOp::Put {
                key: key.to_vec(),
                value: value.to_vec(),
            },
            Ok(BatchOp::Delete { key }) => FixtureOp::Delete { key: key.to_vec() },
            Ok(other) => panic!("{what}: a LevelDB log holds {other:?}"),
            Err(e) => panic!("{what}: batch does not decode: {e}"),
        })
        .collect()
}

/// Where each record of a log sits, computed from the format's rules alone.
#[derive(Debug, Default)]
struct Layout {
    /// Per record: file offset of its first header, offset just past its last fragment, and
    /// its number of fragments.
    spans: Vec<(usize, usize, usize)>,
    /// File length the writer leaves.
    len: usize,
}

/// Places a record of `len` payload bytes in a log that holds `offset` bytes, as the format
/// says a writer must: returns the offset of its first header, the offset just past it, and
/// its number of fragments.
fn place(mut offset: usize, len: usize) -> (usize, usize, usize) {
    let mut left = len;
    let mut start = None;
    let mut fragments = 0;
    loop {
        let room = BLOCK - offset % BLOCK;
        if room < HEADER {
            offset += room; // zero-filled trailer
            continue;
        }
        start.get_or_insert(offset);
        let take = left.min(room - HEADER);
        offset += HEADER + take;
        left -= take;
        fragments += 1;
        if left == 0 {
            return (start.unwrap_or(offset), offset, fragments);
        }
    }
}

impl Layout {
    fn of(record_lens: impl IntoIterator<Item = usize>) -> Layout {
        let mut layout = Layout::default();
        for len in record_lens {
            let span = place(layout.len, len);
            layout.len = span.1;
            layout.spans.push(span);
        }
        layout
    }

    fn fragmented(&self) -> usize {
        self.spans.iter().filter(|s| s.2 > 1).count()
    }

    /// Per tail length 0..=7: how many records left that few bytes in their last block,
    /// as (records in one fragment, records in several).
    fn short_tails(&self) -> [(usize, usize); 8] {
        let mut tails = [(0, 0); 8];
        for &(_, end, fragments) in &self.spans {
            let tail = (BLOCK - end % BLOCK) % BLOCK;
            if let Some(slot) = tails.get_mut(tail) {
                if fragments == 1 {
                    slot.0 += 1;
                } else {
                    slot.1 += 1;
                }
            }
        }
        tails
    }
}

/// Files of `dir` named `NNNNNN.<suffix>`, by number, with their sizes.
fn numbered_files(dir: &Path, suffix: &str) -> BTreeMap<u64, (PathBuf, u64)> {
    let mut files = BTreeMap::new();
    for entry in fs::read_dir(dir).expect("list dir") {
        let entry = entry.expect("dir entry");
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(suffix) else {
            continue;
        };
        let number: u64 = stem.parse().expect("numbered file");
        let size = entry.metadata().expect("metadata").len();
        files.insert(number, (entry.path(), size));
    }
    files
}

fn manifests(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut found: Vec<_> = fs::read_dir(dir)
        .expect("list dir")
        .map(|e| e.expect("dir entry"))
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with("MANIFEST-").then(|| (name, e.path()))
        })
        .collect();
    found.sort();
    found
}

/// Reads a log file through Strata's reader over the POSIX env; damage fails the test. Also
/// checks that the file is exactly as long as the format says those records make it.
fn read_clean_log(path: &Path) -> (Vec<Vec<u8>>, Layout) {
    let LogRecords { records, reports } = read_log_file(&PosixEnv::new(), path).expect("open log");
    assert!(reports.is_empty(), "{}: {reports:?}", path.display());
    let layout = Layout::of(records.iter().map(Vec::len));
    let size = fs::metadata(path).expect("metadata").len();
    assert_eq!(
        layout.len as u64,
        size,
        "{}: records and file length disagree",
        path.display()
    );
    (records, layout)
}

#[derive(Debug, Default)]
struct Counts {
    dbs: usize,
    logs: usize,
    log_records: usize,
    log_ops: usize,
    log_bytes: u64,
    fragmented_records: usize,
    manifests: usize,
    manifest_records: usize,
    tables_added: usize,
    tables_deleted: usize,
    live_tables: usize,
}

impl Counts {
    fn add(&mut self, other: &Counts) {
        self.dbs += other.dbs;
        self.logs += other.logs;
        self.log_records += other.log_records;
        self.log_ops += other.log_ops;
        self.log_bytes += other.log_bytes;
        self.fragmented_records += other.fragmented_records;
        self.manifests += other.manifests;
        self.manifest_records += other.manifest_records;
        self.tables_added += other.tables_added;
        self.tables_deleted += other.tables_deleted;
        self.live_tables += other.live_tables;
    }
}

/// What the live manifest says.
#[derive(Debug)]
struct ManifestFacts {
    log_number: u64,
    last_sequence: u64,
    tables: usize,
}

/// Checks every manifest in `dir` with Strata's reader and decoder, and the live one (named by
/// `CURRENT`) against the tables on disk.
fn check_manifests(dir: &Path, counts: &mut Counts) -> ManifestFacts {
    let current = fs::read_to_string(dir.join("CURRENT")).expect("CURRENT");
    let live = current
        .strip_suffix('\n')
        .expect("CURRENT ends in a newline");
    let mut facts = None;
    let found = manifests(dir);
    assert!(!found.is_empty(), "{}: no manifest", dir.display());
    for (name, path) in found {
        let (records, layout) = read_clean_log(&path);
        assert!(!records.is_empty(), "{name}: empty manifest");
        counts.manifests += 1;
        counts.manifest_records += records.len();
        counts.fragmented_records += layout.fragmented();
        let edits: Vec<EditFields> = records
            .iter()
            .enumerate()
            .map(|(i, record)| {
                let edit = version_edit_fields(record)
                    .unwrap_or_else(|e| panic!("{name} record {i}: {e}"));
                let again = encode_version_edit(&edit).expect("encode edit");
                assert_eq!(&again, record, "{name} record {i}: re-encoding differs");
                edit
            })
            .collect();
        counts.tables_added += edits.iter().map(|e| e.new_files.len()).sum::<usize>();
        counts.tables_deleted += edits.iter().map(|e| e.deleted_files.len()).sum::<usize>();
        if name == live {
            facts = Some(check_live_manifest(dir, &name, &edits));
        }
    }
    let facts = facts.unwrap_or_else(|| panic!("CURRENT names a missing manifest: {live}"));
    counts.live_tables += facts.tables;
    facts
}

fn check_live_manifest(dir: &Path, name: &str, edits: &[EditFields]) -> ManifestFacts {
    assert_eq!(
        edits.first().and_then(|e| e.comparator.as_deref()),
        Some(COMPARATOR),
        "{name}: first edit names the comparator"
    );
    let mut tables: BTreeMap<(usize, u64), u64> = BTreeMap::new();
    let (mut log_number, mut next_file, mut last_sequence) = (None, None, None);
    for (i, edit) in edits.iter().enumerate() {
        if let Some(c) = &edit.comparator {
            assert_eq!(c, COMPARATOR, "{name} record {i}");
        }
        log_number = edit.log_number.or(log_number);
        next_file = edit.next_file_number.or(next_file);
        last_sequence = edit.last_sequence.or(last_sequence);
        for entry in &edit.deleted_files {
            assert!(
                tables.remove(entry).is_some(),
                "{name} record {i}: deletes absent table {entry:?}"
            );
        }
        for f in &edit.new_files {
            assert!(
                f.smallest.len() >= 8 && f.largest.len() >= 8,
                "{name} record {i}: table {} has short keys",
                f.number
            );
            let before = tables.insert((f.level, f.number), f.file_size);
            assert!(
                before.is_none(),
                "{name} record {i}: adds {} twice",
                f.number
            );
        }
    }
    let log_number = log_number.expect("manifest sets a log number");
    let next_file = next_file.expect("manifest sets the next file number");
    let last_sequence = last_sequence.expect("manifest sets the last sequence");

    let listed: BTreeMap<u64, u64> = tables.iter().map(|(&(_, n), &s)| (n, s)).collect();
    assert_eq!(
        listed.len(),
        tables.len(),
        "{name}: a table sits on two levels"
    );
    let on_disk: BTreeMap<u64, u64> = numbered_files(dir, ".ldb")
        .into_iter()
        .map(|(n, (_, size))| (n, size))
        .collect();
    assert_eq!(listed, on_disk, "{name}: live tables vs .ldb files on disk");
    for &number in listed.keys() {
        assert!(number < next_file, "{name}: table {number} >= next file");
    }
    for &number in numbered_files(dir, ".log").keys() {
        assert!(
            number >= log_number && number < next_file,
            "{name}: log {number} outside [{log_number}, {next_file})"
        );
    }
    ManifestFacts {
        log_number,
        last_sequence,
        tables: listed.len(),
    }
}

/// Reads every live `.log` in `dir` with Strata and checks it against the writes the fixture
/// made. Returns the index of the first write the logs hold (`writes.len()` if none).
fn check_wals(
    dir: &Path,
    writes: &[Vec<FixtureOp>],
    model: &Model,
    log_number: u64,
    counts: &mut Counts,
) -> usize {
    // Sequence number of each write's first operation.
    let mut starts = Vec::with_capacity(writes.len());
    let mut sequence = 1u64;
    for write in writes {
        starts.push(sequence);
        sequence += write.len() as u64;
    }

    let mut first_write = None;
    let mut next_write = None;
    let mut next_sequence = None;
    let mut replayed: Option<Model> = None;
    for (number, (path, size)) in numbered_files(dir, ".log") {
        assert!(number >= log_number);
        let (records, layout) = read_clean_log(&path);
        counts.logs += 1;
        counts.log_bytes += size;
        counts.fragmented_records += layout.fragmented();
        for (i, record) in records.into_iter().enumerate() {
            let what = format!("{} record {i}", path.display());
            let batch =
                write_batch_from_contents(record.clone()).unwrap_or_else(|e| panic!("{what}: {e}"));
            let sequence = write_batch_sequence(&batch);
            if let Some(expected) = next_sequence {
                assert_eq!(
                    sequence, expected,
                    "{what}: sequence follows the previous record"
                );
            }
            next_sequence = Some(sequence + batch.len() as u64);
            let w = starts
                .binary_search(&sequence)
                .unwrap_or_else(|_| panic!("{what}: sequence {sequence} starts no write"));
            match next_write {
                Some(expected) => assert_eq!(w, expected, "{what}: records skip or repeat"),
                None => first_write = Some(w),
            }
            let ops = batch_ops(&batch, &what);
            assert_eq!(ops.len(), batch.len(), "{what}: count vs records");
            assert!(ops == writes[w], "{what}: operations differ from write {w}");
            let again = strata_batch(&ops, sequence);
            assert!(
                write_batch_contents(&again) == record.as_slice(),
                "{what}: Strata encodes the batch differently"
            );
            let model = replayed.get_or_insert_with(|| model_of(&writes[..w]));
            for op in &ops {
                apply(model, op);
            }
            next_write = Some(w + 1);
            counts.log_records += 1;
            counts.log_ops += ops.len();
        }
    }
    match first_write {
        Some(first) => {
            assert_eq!(
                next_write,
                Some(writes.len()),
                "the logs end with the last write"
            );
            assert!(
                replayed.as_ref() == Some(model),
                "replaying the logs over the earlier writes gives the fixture's model"
            );
            first
        }
        None => writes.len(),
    }
}

struct Case {
    name: &'static str,
    opts: LevelDbOptions,
    spec: FixtureSpec,
    /// Records spanning blocks are expected in the logs.
    spans_blocks: bool,
}

fn leveldb_cases() -> Vec<Case> {
    let plain = |len: std::ops::RangeInclusive<usize>, large_fraction, large_len| ValueSizes {
        len,
        empty_fraction: 0.05,
        large_fraction,
        large_len,
    };
    vec![
        Case {
            name: "small, one op a record",
            opts: LevelDbOptions::default(),
            spec: FixtureSpec {
                seed: 11,
                num_keys: 300,
                ..FixtureSpec::default()
            },
            spans_blocks: false,
        },
        Case {
            name: "batched, shared prefixes, WAL of many blocks",
            opts: LevelDbOptions::default(),
            spec: FixtureSpec {
                seed: 12,
                num_keys: 10_000,
                keys: KeyShape::SharedPrefix { prefix_len: 40 },
                values: plain(1..=100, 0.01, 4097..=8000),
                batch_size: 16,
                ..FixtureSpec::default()
            },
            spans_blocks: true,
        },
        Case {
            name: "binary keys, values over 32 KiB",
            opts: LevelDbOptions::default(),
            spec: FixtureSpec {
                seed: 13,
                num_keys: 250,
                keys: KeyShape::Binary,
                order: KeyOrder::Sequential,
                values: plain(0..=100, 0.12, 33_000..=90_000),
                batch_size: 3,
                ..FixtureSpec::default()
            },
            spans_blocks: true,
        },
        Case {
            name: "compacted tables, live WAL with large values",
            opts: LevelDbOptions {
                write_buffer_size: Some(1 << 20),
                ..LevelDbOptions::default()
            },
            spec: FixtureSpec {
                seed: 14,
                num_keys: 20_000,
                values: plain(1..=100, 0.01, 33_000..=60_000),
                batch_size: 8,
                compact_at_end: true,
                live_wal_ops: 600,
                ..FixtureSpec::default()
            },
            spans_blocks: true,
        },
        Case {
            name: "many flushes, compacted, empty live WAL",
            opts: LevelDbOptions {
                write_buffer_size: Some(64 * 1024),
                compression: false,
                ..LevelDbOptions::default()
            },
            spec: FixtureSpec {
                seed: 15,
                num_keys: 5000,
                keys: KeyShape::Binary,
                compact_at_end: true,
                ..FixtureSpec::default()
            },
            spans_blocks: false,
        },
    ]
}

#[test]
fn strata_reads_leveldb_logs_and_manifests() {
    let mut total = Counts::default();
    for case in leveldb_cases() {
        let mut counts = Counts::default();
        let dir = tempfile::tempdir().expect("tempdir");
        let fixture =
            build_db_with_writes(dir.path(), &case.opts, &case.spec).expect("build fixture");
        let facts = check_manifests(dir.path(), &mut counts);
        let first = check_wals(
            dir.path(),
            &fixture.writes,
            &fixture.model,
            facts.log_number,
            &mut counts,
        );
        counts.dbs += 1;
        let name = case.name;
        let main_ops: u64 = fixture.writes[..fixture.live_from]
            .iter()
            .map(|w| w.len() as u64)
            .sum();
        if case.spec.compact_at_end {
            assert!(facts.tables > 0, "{name}: compaction leaves tables");
            assert_eq!(
                first, fixture.live_from,
                "{name}: the log holds the live tail"
            );
            assert_eq!(
                facts.last_sequence, main_ops,
                "{name}: manifest's last sequence"
            );
        } else {
            assert_eq!(facts.tables, 0, "{name}: nothing was flushed");
            assert_eq!(first, 0, "{name}: the log holds every write");
        }
        if case.spans_blocks {
            assert!(
                counts.fragmented_records > 0,
                "{name}: some record spans blocks"
            );
        }
        println!("LevelDB -> Strata, {name}: {counts:?}");
        total.add(&counts);
    }
    println!("LevelDB -> Strata, all: {total:?}");
}

/// Batches for a Strata-written log: record sizes chosen so records end 0..=7 bytes before a
/// block boundary (in one fragment, across one boundary, across two), mixed with ordinary
/// batches of puts and deletes and some large ones.
struct LogPlan {
    rng: StdRng,
    writes: Vec<Vec<FixtureOp>>,
    records: Vec<Vec<u8>>,
    next_sequence: u64,
    /// Bytes the log holds so far.
    offset: usize,
    next_key: usize,
}

impl LogPlan {
    fn new(seed: u64) -> LogPlan {
        LogPlan {
            rng: StdRng::seed_from_u64(seed),
            writes: Vec::new(),
            records: Vec::new(),
            next_sequence: 1,
            offset: 0,
            next_key: 0,
        }
    }

    fn push(&mut self, ops: Vec<FixtureOp>) {
        let batch = strata_batch(&ops, self.next_sequence);
        self.next_sequence += ops.len() as u64;
        let record = write_batch_contents(&batch).to_vec();
        self.offset = place(self.offset, record.len()).1;
        self.records.push(record);
        self.writes.push(ops);
    }

    fn fresh_key(&mut self) -> Vec<u8> {
        self.next_key += 1;
        format!("key{:06}", self.next_key).into_bytes()
    }

    /// An already written key, or a fresh one.
    fn some_key(&mut self) -> Vec<u8> {
        if self.next_key == 0 || self.rng.gen_bool(0.3) {
            return self.fresh_key();
        }
        let i = self.rng.gen_range(1..=self.next_key);
        format!("key{i:06}").into_bytes()
    }

    fn value(&mut self, len: usize) -> Vec<u8> {
        let byte: u8 = self.rng.gen();
        let mut value = vec![byte; len];
        if let Some(last) = value.last_mut() {
            *last = self.rng.gen();
        }
        value
    }

    /// A batch of 1..=6 puts (some empty values, one in ten large) and deletes.
    fn ordinary(&mut self) {
        let n = self.rng.gen_range(1..=6);
        let mut ops = Vec::with_capacity(n);
        for _ in 0..n {
            let key = self.some_key();
            if self.rng.gen_bool(0.25) {
                ops.push(FixtureOp::Delete { key });
            } else {
                let len = match self.rng.gen_range(0..10) {
                    0 => 0,
                    1 => self.rng.gen_range(20_000..=70_000),
                    _ => self.rng.gen_range(1..=300),
                };
                let value = self.value(len);
                ops.push(FixtureOp::Put { key, value });
            }
        }
        self.push(ops);
    }

    /// One put whose batch is exactly `size` bytes, if that is possible.
    fn sized_put(&mut self, size: usize) -> Option<Vec<FixtureOp>> {
        let key = self.fresh_key();
        let fixed = BATCH_HEADER + 1 + varint_len(key.len()) + key.len();
        for len_bytes in 1..=3 {
            let Some(value_len) = size.checked_sub(fixed + len_bytes) else {
                continue;
            };
            if varint_len(value_len) == len_bytes {
                let value = self.value(value_len);
                return Some(vec![FixtureOp::Put { key, value }]);
            }
        }
        self.next_key -= 1;
        None
    }

    /// Adds a record whose last fragment ends `tail` bytes before a block boundary, after
    /// crossing `boundaries` block boundaries. Returns false if no batch has that size.
    fn end_with_tail(&mut self, tail: usize, boundaries: usize) -> bool {
        let mut at = self.offset % BLOCK;
        if BLOCK - at < HEADER {
            at = 0; // the writer zero-fills the rest of this block first
        }
        let size = if boundaries == 0 {
            (BLOCK - tail).checked_sub(at + HEADER)
        } else {
            let first = BLOCK - at - HEADER;
            let middles = (boundaries - 1) * (BLOCK - HEADER);
            Some(first + middles + BLOCK - tail - HEADER)
        };
        match size.and_then(|size| self.sized_put(size)) {
            Some(ops) => {
                self.push(ops);
                true
            }
            None => false,
        }
    }

    /// The plan used by the Strata → LevelDB tests.
    fn standard() -> LogPlan {
        let mut plan = LogPlan::new(7);
        for _ in 0..40 {
            plan.ordinary();
        }
        for tail in 0..=7 {
            for boundaries in 0..=2 {
                if !plan.end_with_tail(tail, boundaries) {
                    // Too little room left in this block: move well into the next one.
                    assert!(plan.end_with_tail(BLOCK - 1000, 1));
                    assert!(plan.end_with_tail(tail, boundaries));
                }
                for _ in 0..plan.rng.gen_range(0..=3) {
                    plan.ordinary();
                }
            }
        }
        for _ in 0..40 {
            plan.ordinary();
        }
        plan
    }

    fn model(&self, records: usize) -> Model {
        model_of(&self.writes[..records])
    }

    fn record_refs(&self) -> Vec<&[u8]> {
        self.records.iter().map(Vec::as_slice).collect()
    }
}

fn varint_len(mut n: usize) -> usize {
    let mut len = 1;
    while n >= 0x80 {
        n >>= 7;
        len += 1;
    }
    len
}

const LOG_NUMBER: u64 = 3;

/// A manifest as Strata writes it for a new database whose only data is log `LOG_NUMBER`:
/// the comparator, then the log/file/sequence numbers, then a compaction pointer on a key
/// large enough that its record spans two blocks.
fn strata_manifest_records() -> Vec<Vec<u8>> {
    let mut pointer = vec![b'p'; 40_000];
    pointer.extend_from_slice(&((5u64 << 8) | 1).to_le_bytes());
    let edits = [
        EditFields {
            comparator: Some(COMPARATOR.to_string()),
            ..EditFields::default()
        },
        EditFields {
            log_number: Some(LOG_NUMBER),
            prev_log_number: Some(0),
            next_file_number: Some(LOG_NUMBER + 1),
            last_sequence: Some(0),
            ..EditFields::default()
        },
        EditFields {
            compact_pointers: vec![(2, pointer)],
            ..EditFields::default()
        },
    ];
    edits
        .iter()
        .map(|e| encode_version_edit(e).expect("encode edit"))
        .collect()
}

/// Writes Strata's manifest and `CURRENT` into `dir`.
fn write_strata_manifest(dir: &Path) {
    let manifest = strata_manifest_records();
    let refs: Vec<&[u8]> = manifest.iter().map(Vec::as_slice).collect();
    write_log_file(&PosixEnv::new(), &dir.join("MANIFEST-000002"), &refs).expect("manifest");
    fs::write(dir.join("CURRENT"), "MANIFEST-000002\n").expect("CURRENT");
}

fn log_path(dir: &Path) -> PathBuf {
    dir.join(format!("{LOG_NUMBER:06}.log"))
}

fn paranoid() -> LevelDbOptions {
    LevelDbOptions {
        paranoid_checks: true,
        ..LevelDbOptions::default()
    }
}

/// Opens `dir` with LevelDB and checks its contents are exactly `model`, through a scan and
/// through point reads.
fn leveldb_holds(dir: &Path, model: &Model, what: &str) {
    let db = LevelDb::open(dir, &paranoid()).unwrap_or_else(|e| panic!("{what}: open: {e}"));
    let all = read_all(&db).unwrap_or_else(|e| panic!("{what}: scan: {e}"));
    assert!(
        all == *model,
        "{what}: LevelDB holds {} keys, expected {}",
        all.len(),
        model.len()
    );
    for (k, v) in model.iter().step_by(7) {
        assert_eq!(db.get(k).expect("get").as_ref(), Some(v), "{what}");
    }
    assert_eq!(db.get(b"key999999").expect("get"), None, "{what}");
}

#[test]
fn leveldb_recovers_strata_logs_with_strata_manifest_and_by_repair() {
    let plan = LogPlan::standard();
    let layout = Layout::of(plan.records.iter().map(Vec::len));
    let tails = layout.short_tails();
    for (tail, (one, several)) in tails.iter().enumerate() {
        assert!(
            *one > 0 && *several > 0,
            "tail {tail}: records in one fragment {one}, spanning {several}"
        );
    }
    assert!(
        layout.spans.iter().any(|s| s.2 >= 3),
        "a record spans three blocks"
    );
    let model = plan.model(plan.records.len());
    assert!(model.len() > 100, "{} keys survive", model.len());
    let ops: usize = plan.writes.iter().map(Vec::len).sum();
    assert!(
        plan.writes
            .iter()
            .flatten()
            .any(|op| matches!(op, FixtureOp::Delete { .. })),
        "the plan deletes"
    );

    // (a) Strata's manifest, CURRENT and log, opened by LevelDB directly.
    let a = tempfile::tempdir().expect("tempdir");
    write_log_file(&PosixEnv::new(), &log_path(a.path()), &plan.record_refs()).expect("log");
    let log = fs::read(log_path(a.path())).expect("read log");
    assert_eq!(
        log.len(),
        layout.len,
        "Strata's writer lays records out as the format says"
    );
    assert_eq!(read_clean_log(&log_path(a.path())).0, plan.records);
    write_strata_manifest(a.path());
    let manifest = read_clean_log(&a.path().join("MANIFEST-000002"));
    assert_eq!(manifest.1.fragmented(), 1, "the pointer edit spans blocks");
    leveldb_holds(a.path(), &model, "Strata manifest + log");
    // LevelDB has turned the log into a table and written its own manifest: Strata reads it.
    let mut counts = Counts::default();
    let facts = check_manifests(a.path(), &mut counts);
    assert!(facts.tables >= 1, "recovery flushed the log into a table");
    assert_eq!(facts.last_sequence, ops as u64);
    leveldb_holds(a.path(), &model, "reopened");

    // Control: LevelDB does check those checksums; one flipped payload byte is refused.
    let bad = tempfile::tempdir().expect("tempdir");
    let mut flipped = log.clone();
    let (start, end, _) = layout.spans[plan.records.len() / 2];
    flipped[(start + end) / 2] ^= 0x20;
    write_strata_manifest(bad.path());
    fs::write(log_path(bad.path()), &flipped).expect("log");
    let err = LevelDb::open(bad.path(), &paranoid())
        .map(drop)
        .expect_err("a damaged record fails a paranoid open");
    assert!(err.contains("checksum"), "{err}");

    // (b) The log alone, turned into a table by LevelDB's repairer.
    let b = tempfile::tempdir().expect("tempdir");
    fs::write(log_path(b.path()), &log).expect("log");
    repair(b.path()).expect("repair");
    check_manifests(b.path(), &mut counts);
    leveldb_holds(b.path(), &model, "repaired");

    println!(
        "Strata -> LevelDB: 1 log of {} bytes, {} records ({} spanning blocks), {ops} ops, \
         short block tails (one fragment, spanning) {tails:?}; opened via Strata manifest and \
         via repair; LevelDB's manifests read back: {counts:?}",
        log.len(),
        plan.records.len(),
        layout.fragmented(),
    );
}

/// Cut points inside, at the edges of and between records, with the number of records that
/// stay whole.
fn cut_points(layout: &Layout) -> Vec<(usize, usize)> {
    let mut cuts = Vec::new();
    for (i, &(start, end, _)) in layout.spans.iter().enumerate() {
        for cut in [
            start + 1,
            start + HEADER - 1,
            start + HEADER,
            (start + end) / 2,
            end - 1,
        ] {
            if cut > start && cut < end {
                cuts.push((cut, i));
            }
        }
        // Every block boundary the record crosses.
        let mut boundary = (start / BLOCK + 1) * BLOCK;
        while boundary < end {
            cuts.push((boundary, i));
            boundary += BLOCK;
        }
        cuts.push((end, i + 1));
        if end % BLOCK > BLOCK - HEADER {
            cuts.push((end + 1, i + 1)); // inside the zero-filled trailer
        }
    }
    cuts.sort_unstable();
    cuts.dedup();
    cuts
}

#[test]
fn torn_strata_log_tail_recovers_the_same_prefix_in_leveldb_and_strata() {
    let plan = LogPlan::standard();
    let refs = plan.record_refs();
    let log = strata::testing::write_log_records(&refs);
    let layout = Layout::of(plan.records.iter().map(Vec::len));
    assert_eq!(log.len(), layout.len);
    let cuts: Vec<_> = cut_points(&layout)
        .into_iter()
        .filter(|&(cut, _)| cut <= log.len())
        .collect();

    // Strata's reader: every cut.
    for &(cut, whole) in &cuts {
        let LogRecords { records, reports } = read_log_records(&log[..cut]);
        assert!(reports.is_empty(), "cut at {cut}: {reports:?}");
        assert!(
            records.len() == whole && records[..] == plan.records[..whole],
            "cut at {cut}: Strata read {} records, expected {whole}",
            records.len()
        );
    }

    // LevelDB: a spread of cuts, mid-header, mid-payload, at and across block boundaries,
    // inside fragmented records.
    let interesting: Vec<(usize, usize)> = {
        let mut chosen = Vec::new();
        let fragmented: Vec<usize> = (0..layout.spans.len())
            .filter(|&i| layout.spans[i].2 >= 2)
            .collect();
        for &i in fragmented.iter().step_by(6).take(6) {
            let (start, end, _) = layout.spans[i];
            let boundary = (start / BLOCK + 1) * BLOCK;
            chosen.push((boundary, i)); // after the FIRST fragment
            chosen.push(((boundary + end) / 2, i)); // inside a later fragment
        }
        for i in [3, 20, 41, layout.spans.len() / 2] {
            let (start, end, _) = layout.spans[i];
            chosen.push((start + 3, i)); // mid-header
            chosen.push(((start + end) / 2, i)); // mid-payload
        }
        chosen.push((log.len() - 1, layout.spans.len() - 1));
        chosen
    };
    for &(cut, whole) in &interesting {
        let records = read_log_records(&log[..cut]).records;
        assert_eq!(records.len(), whole, "cut at {cut}: Strata's view");
        let dir = tempfile::tempdir().expect("tempdir");
        write_strata_manifest(dir.path());
        fs::write(log_path(dir.path()), &log[..cut]).expect("log");
        leveldb_holds(
            dir.path(),
            &plan.model(whole),
            &format!("log cut at {cut} of {}", log.len()),
        );
    }
    println!(
        "Torn tails: {} cut points read by Strata, {} of them recovered by LevelDB, over a log \
         of {} records / {} bytes",
        cuts.len(),
        interesting.len(),
        plan.records.len(),
        log.len()
    );
}
