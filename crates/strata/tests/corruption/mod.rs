//! Shared by the corruption tests: a database with every file kind, maps of where each key's
//! bytes live in its files (decoded from the formats, not asked of the engine), damage to apply,
//! and the checks of what opening, reading, `repair` and `check_db` make of the damage.
//!
//! The template database (built once per test binary, copied for every case) holds:
//! - two tables, `a` keys and `b` keys (`TABLE_KEYS` each, ~150-byte values, bloom filter),
//!   written and compacted before the log keys: uncompressed in [`template`], Snappy-compressed
//!   in [`snappy_template`];
//! - one write-ahead log holding the `w` keys (`LOG_KEYS` single-put batches of 0.8-2.3 KB,
//!   every 17th one ~70 KB so that it spans three blocks), never flushed;
//! - `MANIFEST-NNNNNN` and `CURRENT`.
//!
//! Every key is written once, so a read either returns its one value, or nothing, or an error:
//! "wrong data" is any other value.

#![allow(dead_code)] // each test binary uses its own part

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use strata::testing::{decode_block, decode_footer, read_block_at, BlockSpan};
use strata::tools::{check_db, CheckReport};
use strata::{BloomFilterPolicy, CompressionType, Error, Options, ReadOptions, DB};

pub const TABLE_KEYS: usize = 1500;
pub const LOG_KEYS: usize = 150;
/// Log block size (on-disk constant of the log format).
pub const LOG_BLOCK: u64 = 32 * 1024;

pub fn table_key(prefix: char, i: usize) -> Vec<u8> {
    format!("{prefix}{i:06}").into_bytes()
}

pub fn log_key(i: usize) -> Vec<u8> {
    format!("w{i:06}").into_bytes()
}

/// A value unique to its key, so a value read back under another key (or altered) shows:
/// pseudo-random bytes, or (`compressible`) the key repeated.
pub fn value_for(key: &[u8], len: usize, compressible: bool) -> Vec<u8> {
    let seed = key
        .iter()
        .fold(17u32, |h, &b| h.wrapping_mul(31) ^ u32::from(b));
    let mut out = key.to_vec();
    out.push(b'=');
    let mut x = seed;
    while out.len() < len {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        out.push(if compressible {
            key[out.len() % key.len()]
        } else {
            (x >> 16) as u8
        });
    }
    out
}

pub fn table_value(key: &[u8], i: usize, compressible: bool) -> Vec<u8> {
    value_for(key, 120 + (i * 7) % 60, compressible)
}

pub fn log_value(key: &[u8], i: usize) -> Vec<u8> {
    let len = if i % 17 == 5 {
        70_000 + i * 13
    } else {
        800 + (i * 37) % 1500
    };
    value_for(key, len, false)
}

/// Options every case opens with (the template's layout options, and the filter it was built
/// with, so reads use it).
pub fn options(paranoid: bool) -> Options {
    Options {
        paranoid_checks: paranoid,
        compression: CompressionType::None,
        filter_policy: Some(Arc::new(BloomFilterPolicy::new(10))),
        ..Options::default()
    }
}

/// Where one log record's bytes are.
#[derive(Debug, Clone)]
pub struct LogRecord {
    pub key: Vec<u8>,
    /// Header of the first fragment.
    pub start: u64,
    /// Just past the last fragment.
    pub end: u64,
}

/// Reads that verify checksums.
pub fn verified() -> ReadOptions {
    ReadOptions {
        verify_checksums: true,
        ..ReadOptions::default()
    }
}

/// File offset of `needle` in `range` of the file at `path`, which must hold it once there.
pub fn find_in_file(path: &Path, range: Range<u64>, needle: &[u8]) -> u64 {
    let bytes = fs::read(path).unwrap();
    let bytes = &bytes[range.start as usize..range.end as usize];
    let mut at = bytes
        .windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle);
    let (offset, _) = at.next().expect("bytes not found");
    assert!(at.next().is_none(), "bytes found twice");
    range.start + offset as u64
}

/// The offset of a byte in the middle of `key`'s value in the first table of `t`.
fn value_byte(t: &Template, key: &[u8]) -> u64 {
    let value = &t.expected[key];
    let table = &t.tables[0];
    find_in_file(&t.path.join(&table.name), 0..table.size, value) + value.len() as u64 / 2
}

/// A copy of `t` with a byte flipped in the middle of one value: that of the fourth key of
/// data block 5 of the first table, which is returned with the copy.
pub fn copy_with_a_damaged_value(t: &Template) -> (Copy, &[u8]) {
    let table = &t.tables[0];
    let copy = t.copy();
    let key = &table.data[5].1[3];
    Damage::Flip(value_byte(t, key)).apply(&copy.path.join(&table.name));
    (copy, key)
}

/// The names of the table files in `dir`.
pub fn table_files(dir: &Path) -> BTreeSet<String> {
    file_names(dir)
        .into_iter()
        .filter(|n| n.ends_with(".ldb"))
        .collect()
}

/// The layout of one table file, decoded from its footer, index and metaindex.
#[derive(Debug, Clone)]
pub struct TableMap {
    pub name: String,
    pub size: u64,
    /// Data blocks in order, with the user keys each holds.
    pub data: Vec<(BlockSpan, Vec<Vec<u8>>)>,
    /// Data blocks stored Snappy-compressed.
    pub compressed_blocks: usize,
    pub filter: BlockSpan,
    pub metaindex: BlockSpan,
    pub index: BlockSpan,
}

impl TableMap {
    pub fn footer(&self) -> Range<u64> {
        self.size - 48..self.size
    }

    pub fn keys(&self) -> BTreeSet<Vec<u8>> {
        self.data
            .iter()
            .flat_map(|(_, keys)| keys.clone())
            .collect()
    }
}

/// The pristine template and what is in it.
pub struct Template {
    _dir: tempfile::TempDir,
    pub path: PathBuf,
    /// Every key and its one value.
    pub expected: BTreeMap<Vec<u8>, Vec<u8>>,
    pub log_name: String,
    pub log: Vec<LogRecord>,
    pub log_size: u64,
    /// The table holding the `a` keys, then the one holding the `b` keys.
    pub tables: Vec<TableMap>,
    pub manifest_name: String,
    /// Manifest records: (header offset, end).
    pub manifest: Vec<(u64, u64)>,
}

/// The template with uncompressed tables.
pub fn template() -> &'static Template {
    static TEMPLATE: OnceLock<Template> = OnceLock::new();
    TEMPLATE.get_or_init(|| build_template(CompressionType::None))
}

/// The template with Snappy-compressed tables.
pub fn snappy_template() -> &'static Template {
    static TEMPLATE: OnceLock<Template> = OnceLock::new();
    TEMPLATE.get_or_init(|| build_template(CompressionType::Snappy))
}

fn build_template(compression: CompressionType) -> Template {
    let compressible = compression != CompressionType::None;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut expected = BTreeMap::new();
    {
        let db = DB::open(
            &path,
            Options {
                create_if_missing: true,
                compression,
                ..options(false)
            },
        )
        .unwrap();
        for prefix in ['a', 'b'] {
            for i in 0..TABLE_KEYS {
                let key = table_key(prefix, i);
                let value = table_value(&key, i, compressible);
                db.put(&key, &value).unwrap();
                expected.insert(key, value);
            }
            db.compact_range(None, None).unwrap();
        }
        for i in 0..LOG_KEYS {
            let key = log_key(i);
            let value = log_value(&key, i);
            db.put(&key, &value).unwrap();
            expected.insert(key, value);
        }
    }
    let names = file_names(&path);
    let logs: Vec<&String> = names
        .iter()
        .filter(|n| n.ends_with(".log") && fs::metadata(path.join(n)).unwrap().len() > 0)
        .collect();
    assert_eq!(logs.len(), 1, "one log holds the w keys: {names:?}");
    let log_name = logs[0].clone();
    let log_bytes = fs::read(path.join(&log_name)).unwrap();
    let log = map_log(&log_bytes);
    assert_eq!(log.len(), LOG_KEYS);
    assert!(log.iter().zip(0..).all(|(r, i)| r.key == log_key(i)));

    let mut tables: Vec<TableMap> = names
        .iter()
        .filter(|n| n.ends_with(".ldb"))
        .map(|n| map_table(&path, n))
        .collect();
    assert_eq!(tables.len(), 2, "one table per key range: {names:?}");
    tables.sort_by(|x, y| x.data[0].1[0].cmp(&y.data[0].1[0]));
    for (table, prefix) in tables.iter().zip(['a', 'b']) {
        let want: BTreeSet<Vec<u8>> = (0..TABLE_KEYS).map(|i| table_key(prefix, i)).collect();
        assert_eq!(table.keys(), want);
        assert!(table.data.len() > 20, "{} data blocks", table.data.len());
        let all = if compressible { table.data.len() } else { 0 };
        assert_eq!(table.compressed_blocks, all, "compressed blocks");
    }

    let current = fs::read_to_string(path.join("CURRENT")).unwrap();
    let manifest_name = current.trim_end().to_owned();
    let manifest = map_log_records(&fs::read(path.join(&manifest_name)).unwrap())
        .into_iter()
        .map(|(start, end, _)| (start, end))
        .collect::<Vec<_>>();
    assert!(manifest.len() >= 3, "manifest records: {manifest:?}");
    Template {
        _dir: dir,
        path,
        expected,
        log_name,
        log_size: log_bytes.len() as u64,
        log,
        tables,
        manifest_name,
        manifest,
    }
}

pub fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

pub fn varint(bytes: &mut &[u8]) -> u64 {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&b, rest) = bytes.split_first().unwrap();
        *bytes = rest;
        value |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return value;
        }
    }
    panic!("varint too long")
}

fn handle(mut bytes: &[u8]) -> BlockSpan {
    let offset = varint(&mut bytes);
    let size = varint(&mut bytes);
    BlockSpan { offset, size }
}

fn map_table(dir: &Path, name: &str) -> TableMap {
    let bytes = fs::read(dir.join(name)).unwrap();
    let size = bytes.len() as u64;
    let footer = decode_footer(&bytes[bytes.len() - 48..]).unwrap();
    let block = |span: BlockSpan| decode_block(read_block_at(&bytes, span, true).unwrap()).unwrap();
    let (index, metaindex) = (footer.index, footer.metaindex);
    let data: Vec<(BlockSpan, Vec<Vec<u8>>)> = block(index)
        .into_iter()
        .map(|(_, h)| {
            let piece = handle(&h);
            let keys = block(piece)
                .into_iter()
                .map(|(k, _)| k[..k.len() - 8].to_vec())
                .collect();
            (piece, keys)
        })
        .collect();
    let filter = block(metaindex)
        .into_iter()
        .find(|(k, _)| k.starts_with(b"filter."))
        .map(|(_, h)| handle(&h))
        .unwrap();
    let compressed_blocks = data
        .iter()
        .filter(|(piece, _)| bytes[(piece.offset + piece.size) as usize] == 1)
        .count();
    TableMap {
        name: name.to_owned(),
        size,
        data,
        compressed_blocks,
        filter,
        metaindex,
        index,
    }
}

/// Logical records of a pristine log file: (first header offset, end, payload).
fn map_log_records(bytes: &[u8]) -> Vec<(u64, u64, Vec<u8>)> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    let mut open: Option<(usize, Vec<u8>)> = None;
    while pos + 7 <= bytes.len() {
        let left = LOG_BLOCK as usize - pos % LOG_BLOCK as usize;
        if left < 7 {
            pos += left;
            continue;
        }
        let len = usize::from(u16::from_le_bytes([bytes[pos + 4], bytes[pos + 5]]));
        let kind = bytes[pos + 6];
        let payload = &bytes[pos + 7..pos + 7 + len];
        let end = pos + 7 + len;
        match kind {
            1 => out.push((pos as u64, end as u64, payload.to_vec())),
            2 => open = Some((pos, payload.to_vec())),
            3 => open.as_mut().unwrap().1.extend_from_slice(payload),
            4 => {
                let (start, mut data) = open.take().unwrap();
                data.extend_from_slice(payload);
                out.push((start as u64, end as u64, data));
            }
            other => panic!("record type {other} in a pristine log"),
        }
        pos = end;
    }
    assert_eq!(pos, bytes.len(), "pristine log ends with a whole record");
    out
}

/// The records of a WAL of single-put batches, with their keys.
fn map_log(bytes: &[u8]) -> Vec<LogRecord> {
    map_log_records(bytes)
        .into_iter()
        .map(|(start, end, payload)| {
            // Header (12), tag, key length, key.
            assert_eq!(payload[12], 1, "a put");
            let mut rest = &payload[13..];
            let len = varint(&mut rest) as usize;
            LogRecord {
                key: rest[..len].to_vec(),
                start,
                end,
            }
        })
        .collect()
}

impl Template {
    /// Keys of the log records with a byte in `range`.
    pub fn log_keys_touching(&self, range: Range<u64>) -> BTreeSet<Vec<u8>> {
        self.log
            .iter()
            .filter(|r| r.start < range.end && range.start < r.end)
            .map(|r| r.key.clone())
            .collect()
    }

    /// Keys of the log records with a byte in one of the 32 KiB blocks `range` touches: what a
    /// damaged block can cost.
    pub fn log_keys_in_blocks_of(&self, range: Range<u64>) -> BTreeSet<Vec<u8>> {
        let first = range.start / LOG_BLOCK * LOG_BLOCK;
        let last = (range.end - 1) / LOG_BLOCK * LOG_BLOCK + LOG_BLOCK;
        self.log_keys_touching(first..last)
    }

    pub fn all_log_keys(&self) -> BTreeSet<Vec<u8>> {
        self.log.iter().map(|r| r.key.clone()).collect()
    }

    /// A fresh copy of the template in a new temporary directory.
    pub fn copy(&self) -> Copy {
        copy_dir(&self.path)
    }
}

/// A database directory owned by one check of one case.
pub struct Copy {
    _dir: tempfile::TempDir,
    pub path: PathBuf,
}

pub fn copy_dir(from: &Path) -> Copy {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    fs::create_dir(&path).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            fs::copy(entry.path(), path.join(entry.file_name())).unwrap();
        }
    }
    Copy { _dir: dir, path }
}

/// Damage to one file.
#[derive(Debug, Clone)]
pub enum Damage {
    /// XOR one byte with 0x41.
    Flip(u64),
    /// Overwrite a range with zeros.
    Zero(Range<u64>),
    /// Cut the file to this length.
    Truncate(u64),
    /// Remove a range, moving what follows back.
    Splice(Range<u64>),
    /// Remove the file.
    Delete,
}

impl Damage {
    /// The file offsets the damage concerns (where a reported offset may point).
    pub fn region(&self, file_size: u64) -> Range<u64> {
        match self {
            Damage::Flip(at) => *at..at + 1,
            Damage::Zero(r) | Damage::Splice(r) => r.clone(),
            Damage::Truncate(at) => *at..file_size,
            Damage::Delete => 0..file_size,
        }
    }

    pub fn verb(&self) -> &'static str {
        match self {
            Damage::Flip(_) => "flip",
            Damage::Zero(_) => "zero",
            Damage::Truncate(_) => "truncate",
            Damage::Splice(_) => "splice",
            Damage::Delete => "delete",
        }
    }

    pub fn apply(&self, path: &Path) {
        if let Damage::Delete = self {
            fs::remove_file(path).unwrap();
            return;
        }
        let mut bytes = fs::read(path).unwrap();
        match self {
            Damage::Flip(at) => bytes[*at as usize] ^= 0x41,
            Damage::Zero(r) => bytes[r.start as usize..r.end as usize].fill(0),
            Damage::Truncate(at) => bytes.truncate(*at as usize),
            Damage::Splice(r) => {
                bytes.drain(r.start as usize..r.end as usize);
            }
            Damage::Delete => unreachable!(),
        }
        fs::write(path, bytes).unwrap();
    }
}

/// The corruption details of `e`, asserting it is a corruption naming `file`, at an offset in
/// `region` when it carries one.
pub fn assert_corruption_in(e: &Error, file: &str, region: Option<&Range<u64>>) {
    let c = e
        .corruption_details()
        .unwrap_or_else(|| panic!("expected a corruption in {file}, got: {e}"));
    let named = c.file.as_deref().unwrap_or("");
    assert!(
        named.ends_with(file),
        "the error should name {file}, names {named:?}: {e}"
    );
    if let (Some(region), Some(offset)) = (region, c.offset) {
        assert!(
            region.contains(&offset),
            "offset {offset} of {e} is outside the damaged region {region:?}"
        );
    }
}

/// What reading every key gave.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Reads {
    /// Keys read back with their value.
    pub intact: usize,
    /// Lost keys read as absent.
    pub absent: usize,
    /// Lost keys whose read failed with a corruption naming the damaged file.
    pub failed: usize,
}

/// Reads every key of `expected` with `read`, then scans the database. Asserts that no read
/// returns wrong data, that only keys in `lost` are missing or fail, and that every failure is
/// a corruption naming `file` (at an offset in `region`, when given).
pub fn check_reads(
    expected: &BTreeMap<Vec<u8>, Vec<u8>>,
    db: &DB,
    read: &ReadOptions,
    lost: &BTreeSet<Vec<u8>>,
    file: &str,
    region: Option<&Range<u64>>,
) -> Reads {
    let mut reads = Reads::default();
    for (key, value) in expected {
        let shown = String::from_utf8_lossy(key);
        match db.get_opt(read, key) {
            Ok(Some(v)) => {
                assert!(&v == value, "wrong value read for {shown}");
                reads.intact += 1;
            }
            Ok(None) => {
                assert!(
                    lost.contains(key),
                    "{shown} is missing, but was not damaged"
                );
                reads.absent += 1;
            }
            Err(e) => {
                assert!(
                    lost.contains(key),
                    "reading {shown}, not damaged, failed: {e}"
                );
                assert_corruption_in(&e, file, region);
                reads.failed += 1;
            }
        }
    }
    let mut it = db.iter_opt(read);
    it.seek_to_first();
    let mut seen = BTreeSet::new();
    while it.valid() {
        let shown = String::from_utf8_lossy(it.key()).into_owned();
        let value = expected.get(it.key());
        assert!(value.is_some(), "the scan returned {shown}, never written");
        assert!(
            value.map(Vec::as_slice) == Some(it.value()),
            "the scan returned a wrong value for {shown}"
        );
        seen.insert(it.key().to_vec());
        it.next();
    }
    match it.status() {
        Ok(()) => {
            for key in expected.keys().filter(|k| !lost.contains(*k)) {
                assert!(
                    seen.contains(key),
                    "the scan missed {}",
                    String::from_utf8_lossy(key)
                );
            }
        }
        Err(e) => assert_corruption_in(&e, file, region),
    }
    reads
}

/// Repairs a damaged copy, then opens it with paranoid checks and asserts that every key not
/// in `lost` is back, nothing reads wrong, and the repaired database checks clean. Returns how
/// many of the `lost` keys came back.
pub fn check_repair(t: &Template, damaged: &Path, lost: &BTreeSet<Vec<u8>>) -> usize {
    let copy = copy_dir(damaged);
    strata::repair(&copy.path, &options(false)).unwrap();
    let db = DB::open(&copy.path, options(true)).unwrap();
    let reads = check_reads(
        &t.expected,
        &db,
        &verified(),
        lost,
        "(no damage is left)",
        None,
    );
    assert_eq!(reads.failed, 0, "reads failed after repair");
    drop(db);
    let report = check_db(&copy.path, &options(false)).unwrap();
    assert!(
        report.is_ok(),
        "the repaired database is not clean: {report}"
    );
    reads.intact + lost.len() - t.expected.len()
}

/// Runs `check_db` on a damaged copy.
pub fn check(damaged: &Path) -> CheckReport {
    let copy = copy_dir(damaged);
    check_db(&copy.path, &options(false)).unwrap()
}

/// Asserts that `report` lists a problem in `file` (at an offset in `region`, when the problem
/// has an offset and a region is given).
pub fn assert_check_finds(report: &CheckReport, file: &str, region: Option<&Range<u64>>) {
    let found = report.problems.iter().any(|p| {
        p.file == file
            && match (region, p.offset) {
                (Some(region), Some(offset)) => region.contains(&offset),
                _ => true,
            }
    });
    assert!(
        found,
        "check did not report damage in {file} at {region:?}:\n{report}"
    );
}
