use std::sync::Arc;

use super::*;
use crate::env::Env;
use crate::log::HEADER_SIZE;
use crate::tools::test_db::{put, write_table_with, TestDb};
use crate::util::bloom::FilterPolicy;
use crate::util::internal_key::{internal_key, ValueType};
use crate::write_batch::WriteBatch;

fn run(db: &TestDb) -> CheckReport {
    let options = Options {
        env: db.env.clone(),
        ..Options::default()
    };
    check_db(&db.dir, &options).unwrap()
}

/// The problems as `file@offset: message` strings.
fn problems(report: &CheckReport) -> Vec<String> {
    report.problems.iter().map(|p| p.to_string()).collect()
}

fn assert_one_problem(report: &CheckReport, file: &str, offset: Option<u64>, text: &str) {
    assert_eq!(report.problems.len(), 1, "{report}");
    let problem = &report.problems[0];
    assert_eq!(problem.file, file, "{report}");
    assert_eq!(problem.offset, offset, "{report}");
    assert!(problem.message.contains(text), "{report}");
}

#[test]
fn a_sound_database_has_no_problems() {
    let db = TestDb::new();
    let report = run(&db);
    assert!(report.is_ok(), "{report}");
    assert_eq!(report.manifest.as_deref(), Some("MANIFEST-000002"));
    assert_eq!(report.manifest_records, 2);
    assert_eq!((report.tables, report.entries), (2, 63));
    assert!(report.blocks > 4);
    assert_eq!((report.logs, report.log_records), (1, 2));
    assert!(report.notes.is_empty(), "{report}");
    let text = report.to_string();
    assert!(text.starts_with("checked MANIFEST-000002 (2 records), 2 tables ("));
    assert!(
        text.ends_with("1 log (2 records)\nno problems found"),
        "{text}"
    );
}

#[test]
fn finds_a_flipped_byte_in_a_table() {
    let db = TestDb::new();
    db.flip_byte("000004.ldb", 10);
    let report = run(&db);
    assert_one_problem(
        &report,
        "000004.ldb",
        Some(0),
        "data block 0: block checksum mismatch",
    );
    assert!(report
        .to_string()
        .contains("1 problem found:\n  000004.ldb at offset 0: "));
}

#[test]
fn finds_a_flipped_byte_in_a_log() {
    let db = TestDb::new();
    db.flip_byte("000003.log", 35); // inside the second record
    let report = run(&db);
    assert_one_problem(&report, "000003.log", Some(29), "checksum mismatch");
}

#[test]
fn finds_a_flipped_byte_in_the_manifest() {
    let db = TestDb::new();
    db.flip_byte("MANIFEST-000002", 9);
    let report = run(&db);
    let found = problems(&report);
    assert!(
        found[0].starts_with("MANIFEST-000002 at offset 0: checksum mismatch"),
        "{report}"
    );
}

#[test]
fn finds_a_missing_table() {
    let db = TestDb::new();
    db.env.remove_file(&db.path("000005.ldb")).unwrap();
    let report = run(&db);
    assert_one_problem(
        &report,
        "MANIFEST-000002",
        None,
        "table 000005.ldb (level 0, ",
    );
    assert!(report.problems[0].message.ends_with("bytes) is missing"));
}

#[test]
fn finds_a_size_that_differs_from_the_manifest() {
    let mut db = TestDb::new();
    db.edits[1].new_files[0].1.file_size += 1;
    db.write_manifest();
    let report = run(&db);
    assert_one_problem(&report, "000004.ldb", None, "the manifest says");
}

#[test]
fn finds_keys_that_differ_from_the_manifest() {
    let mut db = TestDb::new();
    db.edits[1].new_files[1].1.smallest = internal_key(b"0", 70, ValueType::Value);
    db.edits[1].new_files[0].1.largest = internal_key(b"k059", 61, ValueType::Value);
    db.write_manifest();
    let found = problems(&run(&db));
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found[0].starts_with("000004.ldb: last key 'k059"),
        "{found:?}"
    );
    assert!(
        found[1].starts_with("000005.ldb: first key 'a"),
        "{found:?}"
    );
}

#[test]
fn finds_overlapping_tables_above_level_zero() {
    let mut db = TestDb::new();
    db.edits[1].new_files[1].0 = 1; // 000005 (a..z) next to 000004 (k000..k059)
    db.write_manifest();
    let report = run(&db);
    assert_one_problem(
        &report,
        "MANIFEST-000002",
        None,
        "level 1: table 5 (up to 'z' @ 72)",
    );
}

#[test]
fn finds_sequences_above_the_last_sequence() {
    let mut db = TestDb::new();
    db.edits[1].last_sequence = Some(59);
    db.write_manifest();
    let found = problems(&run(&db));
    assert_eq!(found.len(), 4, "{found:?}");
    assert!(found[0].contains("key 'k059' has sequence 60, above the manifest's last sequence 59"));
}

#[test]
fn finds_manifest_edits_that_do_not_fit() {
    let mut db = TestDb::new();
    db.edits[1].delete_file(3, 99);
    db.edits[0].add_file(
        2,
        5,
        10,
        internal_key(b"a", 1, ValueType::Value),
        internal_key(b"b", 1, ValueType::Value),
    );
    db.edits[1].next_file_number = Some(5);
    db.edits[0].comparator = Some("other.Comparator".into());
    db.write_manifest();
    let found = problems(&run(&db));
    let expect = [
        "MANIFEST-000002 at offset 55: edit adds table 5 to level 0, but it is already at level 2",
        "edit deletes table 99 from level 3, where it is not",
        "written with comparator other.Comparator, checked with leveldb.BytewiseComparator",
        "table 5 is not below the next file number",
    ];
    for (i, text) in expect.iter().enumerate() {
        assert!(found.iter().any(|p| p.contains(text)), "{i}: {found:?}");
    }
}

#[test]
fn finds_a_bad_current() {
    let db = TestDb::new();
    db.env.remove_file(&db.path("CURRENT")).unwrap();
    let report = run(&db);
    assert_one_problem(&report, "CURRENT", None, "missing");
    // Without a manifest every table and log is still verified.
    assert_eq!((report.tables, report.logs, report.entries), (2, 1, 63));

    db.write("CURRENT", b"MANIFEST-000009\n");
    assert_one_problem(
        &run(&db),
        "CURRENT",
        None,
        "names MANIFEST-000009, which does not exist",
    );
    db.write("CURRENT", b"MANIFEST-000002");
    assert_one_problem(&run(&db), "CURRENT", None, "newline");
    db.write("CURRENT", b"LOCK\n");
    assert_one_problem(
        &run(&db),
        "CURRENT",
        Some(0),
        "'LOCK' is not a manifest name",
    );
}

#[test]
fn obsolete_files_are_notes_not_problems() {
    let db = TestDb::new();
    db.write("000001.log", b"garbage that is not a log");
    db.write("000009.ldb", b"not a table");
    let report = run(&db);
    assert!(report.is_ok(), "{report}");
    assert_eq!(report.notes.len(), 2, "{report}");
    assert!(report
        .to_string()
        .contains("note: 000009.ldb is not in the manifest"));
}

/// Names itself like LevelDB's bloom filter but writes filters that reject every key.
struct RejectAll;

impl FilterPolicy for RejectAll {
    fn name(&self) -> &str {
        "leveldb.BuiltinBloomFilter2"
    }
    fn create_filter(&self, _keys: &[&[u8]], dst: &mut Vec<u8>) {
        dst.extend_from_slice(&[0; 8]);
        dst.push(6);
    }
    fn key_may_match(&self, _key: &[u8], _filter: &[u8]) -> bool {
        false
    }
}

#[test]
fn finds_a_filter_that_rejects_a_key_its_block_holds() {
    let db = TestDb::new();
    let entries = vec![put("a", 70, "first"), put("z", 72, "last")];
    write_table_with(
        &*db.env,
        &db.path("000005.ldb"),
        &entries,
        Arc::new(RejectAll),
    );
    let report = run(&db);
    let found = problems(&report);
    assert!(
        found.iter().any(|p| p.starts_with(
            "000005.ldb at offset 0: data block 0: the filter rejects key 'a', which the block holds"
        )),
        "{report}"
    );
}

#[test]
fn a_garbage_table_is_one_problem() {
    let db = TestDb::new();
    db.write("000005.ldb", &[7u8; 100]);
    let report = run(&db);
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.file == "000005.ldb" && p.message.contains("bad magic number")),
        "{report}"
    );
}

#[test]
fn a_database_written_by_the_engine_checks_clean() {
    use crate::db::DB;
    let env = Arc::new(crate::env::MemEnv::new());
    let options = Options {
        env: env.clone(),
        create_if_missing: true,
        write_buffer_size: 32 << 10,
        filter_policy: Some(Arc::new(crate::util::bloom::BloomFilterPolicy::new(10))),
        ..Options::default()
    };
    let dir = std::path::Path::new("/engine");
    {
        let db = DB::open(dir, options.clone()).unwrap();
        for i in 0..3000u32 {
            let key = format!("key{:06}", (i * 7919) % 3000);
            db.put(key.as_bytes(), &[b'v'; 40]).unwrap();
            if i % 10 == 0 {
                db.delete(format!("key{:06}", i / 2).as_bytes()).unwrap();
            }
        }
        db.compact_range(None, Some(b"key001000")).unwrap();
        db.put(b"tail", b"in the log").unwrap();
    }
    let report = check_db(dir, &options).unwrap();
    assert!(report.is_ok(), "{report}");
    assert!(report.tables >= 1 && report.entries > 1000, "{report}");
    assert!(report.logs >= 1 && report.log_records >= 1, "{report}");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    #[test]
    fn check_reports_any_damage_without_panicking(
        file in 0usize..5,
        at in proptest::prelude::any::<proptest::sample::Index>(),
        byte in proptest::prelude::any::<u8>(),
    ) {
        let db = TestDb::new();
        let name = ["000004.ldb", "000005.ldb", "000003.log", "MANIFEST-000002", "CURRENT"][file];
        let mut bytes = db.read(name);
        let i = at.index(bytes.len());
        let changed = bytes[i] != byte;
        bytes[i] = byte;
        db.write(name, &bytes);
        let report = run(&db);
        // Every byte of the manifest and CURRENT is checked. In a log, damage that makes the
        // rest look like a write cut short by a crash is a note (recovery drops such a tail
        // too). In tables, the footer's padding and a filter's spare bits go unchecked.
        let torn = report.notes.iter().any(|n| n.contains("not a complete record"));
        match name {
            _ if !changed => {}
            "000003.log" => proptest::prop_assert!(!report.is_ok() || torn, "{i}: {report}"),
            "MANIFEST-000002" | "CURRENT" => {
                proptest::prop_assert!(!report.is_ok(), "{name}[{i}] = {byte}: {report}");
            }
            _ => {}
        }
    }
}

#[test]
fn finds_a_damaged_length_that_hides_the_last_manifest_edits() {
    let db = TestDb::new();
    // The high byte of the second record's length: the reader takes the rest of the file for
    // a record cut short by a crash, and would silently drop the edit that adds both tables.
    let first_len = u16::from_le_bytes([db.read("MANIFEST-000002")[4], 0]) as usize;
    db.flip_byte("MANIFEST-000002", 7 + first_len + 5);
    let report = run(&db);
    let offset = (7 + first_len) as u64;
    assert!(
        report.problems.iter().any(|p| p.file == "MANIFEST-000002"
            && p.offset == Some(offset)
            && p.message.contains("are not a complete record")),
        "{report}"
    );
}

/// Regression: a deleted live log loses the writes it held since the last flush, and check
/// said nothing.
#[test]
fn finds_a_missing_live_log() {
    let db = TestDb::new();
    db.env.remove_file(&db.path("000003.log")).unwrap();
    let report = run(&db);
    assert_one_problem(
        &report,
        "MANIFEST-000002",
        None,
        "log 000003.log, named by the manifest's log number, is missing",
    );
}

/// Regression: batches removed whole from a log (say a 32 KiB block cut out, with no record
/// crossing its edges) leave every remaining record sound; only the sequence numbers show the
/// gap, and check did not look.
#[test]
fn finds_a_gap_in_log_sequences() {
    let db = TestDb::new();
    let mut b1 = WriteBatch::new();
    b1.put(b"w1", b"v1");
    b1.set_sequence(73);
    let mut b2 = WriteBatch::new();
    b2.put(b"w2", b"v2");
    b2.set_sequence(80);
    let records = vec![b1.contents().to_vec(), b2.contents().to_vec()];
    crate::tools::test_db::write_log(&*db.env, &db.path("000003.log"), &records);
    let report = run(&db);
    let second = (HEADER_SIZE + records[0].len()) as u64;
    assert_one_problem(
        &report,
        "000003.log",
        Some(second),
        "batches with sequence numbers 74..80 are missing",
    );
}

#[test]
fn a_torn_log_tail_is_a_note() {
    let db = TestDb::new();
    let log = db.read("000003.log");
    db.write("000003.log", &log[..log.len() - 2]);
    let report = run(&db);
    assert!(report.is_ok(), "{report}");
    assert_eq!(report.log_records, 1);
    assert!(report.notes[0].starts_with("000003.log: the last 27 bytes, from offset 29, are not"));
}

#[test]
fn a_database_with_range_deletes_and_expiring_keys_checks_clean() {
    let env: Arc<dyn Env> = Arc::new(crate::env::MemEnv::new());
    let dir = std::path::Path::new("/extensions");
    let options = Options {
        env: Arc::clone(&env),
        create_if_missing: true,
        range_deletes: true,
        expiring_keys: true,
        ..Options::default()
    };
    {
        let db = crate::DB::open(dir, options.clone()).unwrap();
        for i in 0..200u32 {
            db.put(format!("k{i:04}").as_bytes(), b"v").unwrap();
        }
        db.delete_range(b"k0050", b"k0150").unwrap();
        db.put_with_ttl(b"t", b"v", std::time::Duration::from_secs(60))
            .unwrap();
        db.compact_range(None, Some(b"k0100")).unwrap();
        // A tombstone-only table whose bounds come from its tombstone alone.
        db.delete_range(b"x", b"z").unwrap();
        db.compact_range(Some(b"x"), Some(b"z")).unwrap();
        db.delete_range(b"k0000", b"k0010").unwrap();
    }
    let report = check_db(dir, &options).unwrap();
    assert!(report.is_ok(), "{report}");
}
