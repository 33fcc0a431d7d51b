//! The damage suite's value-file cases (format extension `value-separation`, docs/design.md
//! section 4.4): flipped bytes in a value and in a record's header, a torn value-file tail, and
//! a deleted value file, in the file tables point into and in the one the live log points
//! into; and what a paranoid open, a lenient open, reads, `check_db` and `repair` make of each.
//!
//! Every read gives back the value written, or nothing where recovery had to leave a write
//! out, or fails with `Error::Corruption` naming the damaged value file and the offset of the
//! record it needed: never a panic, never a wrong value, and keys whose values are elsewhere
//! (inline, or in the other value file) read back. A paranoid open refuses a live log pointing
//! to a damaged value, naming the value file and the record's offset; `check_db` names the
//! damaged value file and the table or log holding each pointer that no longer resolves. After
//! `repair`, which leaves out the entries whose value is lost, no read fails.
//!
//! The template (built once per run, copied for every case, on disk):
//! - first session: the `t` keys, every fourth value kept inline (under 200 bytes), the others
//!   (0.8-9 KB) in value file A; compacted into tables;
//! - second session: the `w` keys, the same mix, values in value file B, left in the live log.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod corruption;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::PathBuf;
use std::sync::OnceLock;

use corruption::{
    assert_check_finds, assert_corruption_in, copy_dir, file_names, log_key, table_key,
    table_value, value_for, varint, Damage,
};
use strata::tools::{check_db, CheckReport};
use strata::{Error, Options, ValueSeparation, DB};

const MIN: usize = 200;
const TABLE_KEYS: usize = 120;
const LOG_KEYS: usize = 60;

fn options(paranoid: bool) -> Options {
    Options {
        paranoid_checks: paranoid,
        value_separation: Some(ValueSeparation::new(MIN)),
        ..Options::default()
    }
}

/// Key `i`'s value: inline for every fourth key, else large enough for a value file, and
/// small enough that each session's values fit in one value file and the second session's in
/// its memtable (both at least 256 KiB in a database this small: `db/value_gc.rs`).
fn value(key: &[u8], i: usize) -> Vec<u8> {
    match i {
        _ if i % 4 == 0 => table_value(key, i, false),
        _ if i % 17 == 5 => value_for(key, 8_000 + i * 13, false),
        _ => value_for(key, 800 + (i * 37) % 1500, false),
    }
}

/// Where a separated value's record is.
#[derive(Debug, Clone)]
struct Record {
    file: String,
    offset: u64,
    size: u64,
}

struct Template {
    _dir: tempfile::TempDir,
    path: PathBuf,
    expected: BTreeMap<Vec<u8>, Vec<u8>>,
    /// The records of the separated values, by key.
    records: BTreeMap<Vec<u8>, Record>,
    /// Value file A (the `t` keys') and B (the `w` keys').
    file_a: String,
    file_b: String,
    /// The live log, holding the `w` keys.
    log_name: String,
}

/// The records of a value file: (offset, size, key), decoded from its bytes.
fn map_value_file(bytes: &[u8]) -> Vec<(u64, u64, Vec<u8>)> {
    let mut out = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let offset = (bytes.len() - rest.len()) as u64;
        let mut header = &rest[4..];
        let key_len = varint(&mut header) as usize;
        let value_len = varint(&mut header) as usize;
        let header_len = rest.len() - header.len();
        let size = header_len + key_len + value_len;
        out.push((offset, size as u64, header[..key_len].to_vec()));
        rest = &rest[size..];
    }
    out
}

fn template() -> &'static Template {
    static TEMPLATE: OnceLock<Template> = OnceLock::new();
    TEMPLATE.get_or_init(build_template)
}

fn build_template() -> Template {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut expected = BTreeMap::new();
    let create = Options {
        create_if_missing: true,
        ..options(false)
    };
    let db = DB::open(&path, create).unwrap();
    for i in 0..TABLE_KEYS {
        let key = table_key('t', i);
        let value = value(&key, i);
        db.put(&key, &value).unwrap();
        expected.insert(key, value);
    }
    db.compact_range(None, None).unwrap();
    drop(db);
    let db = DB::open(&path, options(false)).unwrap();
    for i in 0..LOG_KEYS {
        let key = log_key(i);
        let value = value(&key, i);
        db.put(&key, &value).unwrap();
        expected.insert(key, value);
    }
    drop(db);

    let names = file_names(&path);
    let vlogs: Vec<&String> = names.iter().filter(|n| n.ends_with(".vlog")).collect();
    assert_eq!(vlogs.len(), 2, "one value file a session: {names:?}");
    let mut records = BTreeMap::new();
    for name in &vlogs {
        for (offset, size, key) in map_value_file(&fs::read(path.join(name)).unwrap()) {
            let file = name.to_string();
            assert!(records.insert(key, Record { file, offset, size }).is_none());
        }
    }
    let separated = expected.iter().filter(|(_, v)| v.len() >= MIN).count();
    assert_eq!(
        records.len(),
        separated,
        "every large value once, in a value file"
    );
    let file_a = records[&table_key('t', 1)].file.clone();
    let file_b = records[&log_key(1)].file.clone();
    assert_ne!(file_a, file_b);
    let logs: Vec<&String> = names
        .iter()
        .filter(|n| n.ends_with(".log") && fs::metadata(path.join(n)).unwrap().len() > 0)
        .collect();
    assert_eq!(logs.len(), 1, "the live log holds the w keys: {names:?}");
    Template {
        _dir: dir,
        log_name: logs[0].clone(),
        path,
        expected,
        records,
        file_a,
        file_b,
    }
}

impl Template {
    fn record(&self, key: &[u8]) -> &Record {
        &self.records[key]
    }

    /// The separated `prefix` keys (`t` or `w`) with index `from` or above.
    fn separated_from(&self, prefix: u8, from: usize) -> BTreeSet<Vec<u8>> {
        self.records
            .keys()
            .filter(|k| k[0] == prefix && index(k) >= from)
            .cloned()
            .collect()
    }

    /// Every `w` key with index `from` or above (what recovery drops from the batch of key
    /// `from` on).
    fn log_keys_from(&self, from: usize) -> BTreeSet<Vec<u8>> {
        (from..LOG_KEYS).map(log_key).collect()
    }
}

fn index(key: &[u8]) -> usize {
    std::str::from_utf8(&key[1..]).unwrap().parse().unwrap()
}

fn shown(key: &[u8]) -> String {
    String::from_utf8_lossy(key).into_owned()
}

/// Asserts `e` is a corruption naming value file `file` at the offset of the record of one of
/// `keys`.
fn assert_names_a_record(t: &Template, e: &Error, file: &str, keys: &BTreeSet<Vec<u8>>) {
    assert_corruption_in(e, file, None);
    let offset = e.corruption_details().and_then(|c| c.offset);
    assert!(
        keys.iter().any(|k| Some(t.record(k).offset) == offset),
        "{e}: not at the offset of a record of {:?}",
        keys.iter().map(|k| shown(k)).collect::<Vec<_>>()
    );
}

/// Reads every key (get, one get_many, a scan) and asserts each gives its value, or nothing
/// for keys in `lost`, or a corruption naming `file` at the key's record offset for keys in
/// `failing`, and that keys in `failing` do fail. Returns how many keys read absent.
fn check_reads(
    t: &Template,
    db: &DB,
    lost: &BTreeSet<Vec<u8>>,
    failing: &BTreeSet<Vec<u8>>,
    file: &str,
) -> usize {
    let mut absent = 0;
    for (key, value) in &t.expected {
        match db.get(key) {
            Ok(Some(v)) => {
                assert!(!failing.contains(key), "{} read back", shown(key));
                assert!(&v == value, "wrong value read for {}", shown(key));
            }
            Ok(None) => {
                assert!(lost.contains(key), "{} is missing", shown(key));
                absent += 1;
            }
            Err(e) => {
                assert!(failing.contains(key), "reading {} failed: {e}", shown(key));
                assert_names_a_record(t, &e, file, &BTreeSet::from([key.clone()]));
            }
        }
    }
    let keys: Vec<&[u8]> = t.expected.keys().map(Vec::as_slice).collect();
    match db.get_many(&keys) {
        Ok(values) => {
            assert!(failing.is_empty(), "get_many read damaged values");
            for (key, got) in keys.iter().zip(values) {
                match got {
                    Some(v) => assert!(v == t.expected[*key], "get_many: {}", shown(key)),
                    None => assert!(lost.contains(*key), "get_many: {} missing", shown(key)),
                }
            }
        }
        Err(e) => assert_names_a_record(t, &e, file, failing),
    }
    let mut it = db.iter();
    it.seek_to_first();
    let mut seen = 0;
    while it.valid() {
        let key = it.key().to_vec();
        assert!(
            t.expected.get(&key).map(Vec::as_slice) == Some(it.value()),
            "scan: {}",
            shown(&key)
        );
        seen += 1;
        it.next();
    }
    match it.status() {
        Ok(()) => {
            assert!(failing.is_empty(), "the scan read past damaged values");
            assert_eq!(seen + absent, t.expected.len(), "the scan missed keys");
        }
        Err(e) => assert_names_a_record(t, &e, file, failing),
    }
    absent
}

/// One case: damage to one value file and what it must cost.
struct Case {
    what: &'static str,
    file: String,
    damage: Damage,
    /// A paranoid open fails naming the file at this key's record.
    paranoid_refuses_at: Option<Vec<u8>>,
    /// Keys a lenient open may leave out (writes recovery drops).
    lost: BTreeSet<Vec<u8>>,
    /// Keys whose reads fail, naming the file and their record's offset.
    failing: BTreeSet<Vec<u8>>,
    /// Keys that must not read back.
    hit: BTreeSet<Vec<u8>>,
}

/// Applies the case to copies of the template and checks open, reads, `check_db` and
/// `repair`.
fn run(t: &Template, case: &Case, check: impl Fn(&CheckReport)) {
    let damaged = copy_dir(&t.path);
    case.damage.apply(&damaged.path.join(&case.file));
    let context = format!("{} ({})", case.what, case.file);

    check(&check_db(&copy_dir(&damaged.path).path, &options(false)).unwrap());

    let copy = copy_dir(&damaged.path);
    match (
        &case.paranoid_refuses_at,
        DB::open(&copy.path, options(true)),
    ) {
        (Some(key), Err(e)) => {
            assert_names_a_record(t, &e, &case.file, &BTreeSet::from([key.clone()]))
        }
        (Some(_), Ok(_)) => panic!("{context}: a paranoid open took a log naming a damaged value"),
        (None, Err(e)) => panic!("{context}: paranoid open failed: {e}"),
        (None, Ok(db)) => {
            check_reads(t, &db, &BTreeSet::new(), &case.failing, &case.file);
        }
    }

    let copy = copy_dir(&damaged.path);
    let db = DB::open(&copy.path, options(false)).unwrap_or_else(|e| panic!("{context}: {e}"));
    check_reads(t, &db, &case.lost, &case.failing, &case.file);
    for key in &case.hit {
        assert!(
            !matches!(db.get(key), Ok(Some(_))),
            "{context}: {} read back",
            shown(key)
        );
    }
    drop(db);

    // Repair cannot bring a damaged value back: it leaves out the entries naming one, so
    // every key reads back as written or not at all, and no read fails.
    let copy = copy_dir(&damaged.path);
    strata::repair(&copy.path, &options(false)).unwrap();
    let db = DB::open(&copy.path, options(true)).unwrap_or_else(|e| panic!("{context}: {e}"));
    let lost: BTreeSet<Vec<u8>> = case.lost.union(&case.failing).cloned().collect();
    check_reads(t, &db, &lost, &BTreeSet::new(), &case.file);
}

/// Asserts `report` lists exactly problems in `files`, at least one in each.
fn assert_problems_in(report: &CheckReport, files: &[&str]) {
    for file in files {
        assert_check_finds(report, file, None);
    }
    assert!(
        report
            .problems
            .iter()
            .all(|p| files.contains(&p.file.as_str())),
        "problems outside {files:?}:\n{report}"
    );
}

/// The table holding the pointer of `key`, as `check_db` names it.
fn problem_naming(report: &CheckReport, key: &[u8]) -> String {
    let needle = format!("key '{}' points to", shown(key));
    report
        .problems
        .iter()
        .find(|p| p.message.contains(&needle))
        .unwrap_or_else(|| panic!("no problem names the pointer of {}:\n{report}", shown(key)))
        .file
        .clone()
}

/// Damage to the record of `key` in value file A, which a table points to: reads of that
/// value fail, naming A and the record's offset, and nothing else is lost; `check_db` names A
/// at the record and the table holding the pointer.
fn damage_a_value_a_table_points_to(t: &Template, what: &'static str, key: &[u8], damage: Damage) {
    let record = t.record(key).clone();
    let case = Case {
        what,
        file: t.file_a.clone(),
        damage,
        paranoid_refuses_at: None,
        lost: BTreeSet::new(),
        failing: BTreeSet::from([key.to_vec()]),
        hit: BTreeSet::from([key.to_vec()]),
    };
    run(t, &case, |report| {
        assert_check_finds(report, &t.file_a, Some(&(record.offset..record.offset + 1)));
        let table = problem_naming(report, key);
        assert!(table.ends_with(".ldb"), "{report}");
        assert_problems_in(report, &[&t.file_a, &table]);
    });
}

/// Damage to the record of `key` in value file B, which the live log points to: a paranoid
/// open refuses, naming B and the record's offset; a lenient one ends the log's replay at that
/// batch; `check_db` names B at the record and the log.
fn damage_a_value_the_log_points_to(t: &Template, what: &'static str, key: &[u8], damage: Damage) {
    let record = t.record(key).clone();
    let case = Case {
        what,
        file: t.file_b.clone(),
        damage,
        paranoid_refuses_at: Some(key.to_vec()),
        lost: t.log_keys_from(index(key)),
        failing: BTreeSet::new(),
        hit: BTreeSet::from([key.to_vec()]),
    };
    run(t, &case, |report| {
        assert_check_finds(report, &t.file_b, Some(&(record.offset..record.offset + 1)));
        assert_eq!(problem_naming(report, key), t.log_name, "{report}");
        assert_problems_in(report, &[&t.file_b, &t.log_name]);
    });
}

#[test]
fn a_flipped_byte_in_a_value_tables_point_to_fails_reads_of_that_value_only() {
    let t = template();
    let key = table_key('t', 9);
    let record = t.record(&key).clone();
    for (what, at) in [
        ("a value byte", record.offset + record.size / 2),
        ("the last value byte", record.offset + record.size - 1),
        ("a crc byte", record.offset + 1),
        ("the key length", record.offset + 4),
    ] {
        damage_a_value_a_table_points_to(t, what, &key, Damage::Flip(at));
    }
}

#[test]
fn a_flipped_byte_in_a_value_the_log_points_to_ends_recovery_there() {
    let t = template();
    let key = log_key(21);
    let record = t.record(&key).clone();
    let flip = Damage::Flip(record.offset + record.size / 2);
    damage_a_value_the_log_points_to(t, "a value byte", &key, flip);
}

#[test]
fn a_torn_value_file_tail_costs_the_values_it_cut() {
    let t = template();
    // B's last record, which the log's last write points to, cut halfway (a power loss that
    // kept the log's record and not all of the value: never a synced write).
    let last = log_key(LOG_KEYS - 1);
    let record = t.record(&last).clone();
    let cut = Damage::Truncate(record.offset + record.size / 2);
    damage_a_value_the_log_points_to(t, "inside the log's last value", &last, cut);

    // A's last record, which a table points to: reads of it fail, naming the file.
    let last = table_key('t', TABLE_KEYS - 1);
    let cut = Damage::Truncate(t.record(&last).offset + 10);
    damage_a_value_a_table_points_to(t, "inside a table's last value", &last, cut);
}

#[test]
fn a_torn_tail_nothing_points_to_is_no_damage() {
    // What a crash in the middle of an append leaves when the write never reached the log.
    let t = template();
    let damaged = copy_dir(&t.path);
    let path = damaged.path.join(&t.file_b);
    let mut bytes = fs::read(&path).unwrap();
    let size = bytes.len() as u64;
    let mut torn = fs::read(damaged.path.join(&t.file_a)).unwrap();
    torn.truncate(30);
    bytes.extend_from_slice(&torn);
    fs::write(&path, bytes).unwrap();
    let report = check_db(&copy_dir(&damaged.path).path, &options(false)).unwrap();
    assert!(report.is_ok(), "{report}");
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.starts_with(&format!("{} at offset {size}: the last 30 bytes", t.file_b))),
        "{report}"
    );
    let db = DB::open(&damaged.path, options(true)).unwrap();
    assert_eq!(
        check_reads(t, &db, &BTreeSet::new(), &BTreeSet::new(), &t.file_b),
        0
    );
}

#[test]
fn a_deleted_value_file_fails_reads_of_its_values_and_keeps_every_other_key() {
    let t = template();
    // Tables point into A: their separated values fail, naming A; inline values and the
    // log's keys read back.
    let separated = t.separated_from(b't', 0);
    let case = Case {
        what: "the file the tables point into",
        file: t.file_a.clone(),
        damage: Damage::Delete,
        paranoid_refuses_at: None,
        lost: BTreeSet::new(),
        failing: separated.clone(),
        hit: separated,
    };
    run(t, &case, |report| {
        assert!(!report.is_ok(), "{report}");
        assert!(
            report.problems.iter().all(|p| p.file.ends_with(".ldb")
                && (p.message.contains("the value file is missing")
                    || p.message.contains("more problems"))),
            "{report}"
        );
    });

    // The log points into B: recovery ends the log at its first separated write.
    let first = log_key(1);
    let case = Case {
        what: "the file the log points into",
        file: t.file_b.clone(),
        damage: Damage::Delete,
        paranoid_refuses_at: Some(first.clone()),
        lost: t.log_keys_from(1),
        failing: BTreeSet::new(),
        hit: t.separated_from(b'w', 0),
    };
    run(t, &case, |report| {
        assert_problems_in(report, &[&t.log_name]);
        assert!(problem_naming(report, &first) == t.log_name, "{report}");
    });
}

#[test]
fn the_template_checks_clean() {
    let t = template();
    let report = check_db(&t.path, &options(false)).unwrap();
    assert!(report.is_ok(), "{report}");
    assert_eq!(report.value_files, 2, "{report}");
    assert_eq!(report.value_pointers as usize, t.records.len(), "{report}");
}
