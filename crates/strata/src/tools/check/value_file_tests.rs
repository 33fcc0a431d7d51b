//! `check` on databases with value files (`value_files.rs`), on the hand-built
//! [`TestDb::with_value_files`] and on one the engine wrote.

use std::path::Path;
use std::sync::Arc;

use super::*;
use crate::env::{Env, MemEnv};
use crate::tools::test_db::TestDb;

fn run(db: &TestDb) -> CheckReport {
    let options = Options {
        env: db.env.clone(),
        ..Options::default()
    };
    check_db(&db.dir, &options).unwrap()
}

/// Asserts `report` lists a problem in `file` at `offset` whose message holds each of `parts`.
fn assert_problem(report: &CheckReport, file: &str, offset: Option<u64>, parts: &[&str]) {
    let found = report.problems.iter().any(|p| {
        p.file == file && p.offset == offset && parts.iter().all(|part| p.message.contains(part))
    });
    assert!(
        found,
        "no problem in {file} at {offset:?} with {parts:?}:\n{report}"
    );
}

/// Offset of the log's third record, the batch putting `big2`'s pointer.
const BIG2_RECORD: u64 = 58;

fn truncate(db: &TestDb, name: &str, len: usize) {
    let bytes = db.read(name);
    db.write(name, &bytes[..len]);
}

#[test]
fn a_database_with_value_files_checks_clean_and_counts_the_bytes_pointers_name() {
    let db = TestDb::with_value_files();
    let report = run(&db);
    assert!(report.is_ok(), "{report}");
    assert_eq!((report.value_files, report.value_records), (1, 3));
    assert_eq!((report.value_pointers, report.value_file_bytes), (2, 832));
    // big1 and big2; the record of `gone` is garbage.
    assert_eq!(report.value_bytes_named, 311 + 411);
    assert!(report.notes.is_empty(), "{report}");
    assert!(
        report.to_string().contains(
            "\n1 value file (3 records, 832 bytes), 2 value pointers naming 722 bytes of them \
             (space amplification 1.15x)\n"
        ),
        "{report}"
    );
}

#[test]
fn a_database_without_value_files_says_nothing_of_them() {
    let report = run(&TestDb::new());
    assert!(report.is_ok(), "{report}");
    assert_eq!(
        (
            report.value_files,
            report.value_pointers,
            report.value_file_bytes
        ),
        (0, 0, 0)
    );
    assert!(!report.to_string().contains("value"), "{report}");
}

#[test]
fn a_flipped_value_byte_is_found_in_the_value_file_and_at_the_pointer_naming_it() {
    // In the value of big1, which the table points to.
    let db = TestDb::with_value_files();
    db.flip_byte("000006.vlog", 100);
    let report = run(&db);
    assert_eq!(report.problems.len(), 2, "{report}");
    let checksum = "value record checksum mismatch";
    assert_problem(&report, "000006.vlog", Some(0), &[checksum]);
    assert_problem(
        &report,
        "000007.ldb",
        Some(0),
        &[
            "key 'big1' points to 000006.vlog at 0 (300 value bytes, crc 0x",
            "checksum mismatch; reads of it fail",
        ],
    );

    // In the value of big2, which the log's third record points to.
    let db = TestDb::with_value_files();
    db.flip_byte("000006.vlog", 500);
    let report = run(&db);
    assert_eq!(report.problems.len(), 2, "{report}");
    assert_problem(&report, "000006.vlog", Some(311), &[checksum]);
    assert_problem(
        &report,
        "000003.log",
        Some(BIG2_RECORD),
        &[
            "key 'big2' points to 000006.vlog at 311 (400 value bytes",
            "checksum mismatch; recovery ends the log there",
        ],
    );
}

#[test]
fn a_damaged_record_length_costs_that_record_alone() {
    // big1's key length (offset 4) made 0x41: the walk goes on at big2, which a pointer names.
    let db = TestDb::with_value_files();
    let mut bytes = db.read("000006.vlog");
    bytes[4] = 0x41;
    db.write("000006.vlog", &bytes);
    let report = run(&db);
    assert_eq!(report.problems.len(), 2, "{report}");
    assert_problem(&report, "000006.vlog", Some(0), &["value record"]);
    assert_problem(&report, "000007.ldb", Some(0), &["key 'big1' points to"]);
    assert_eq!(report.value_records, 2, "{report}");
    assert_eq!(report.value_bytes_named, 411, "{report}");
}

#[test]
fn damage_no_live_pointer_reaches_is_a_note() {
    let db = TestDb::with_value_files();
    db.flip_byte("000006.vlog", 722 + 50);
    let report = run(&db);
    assert!(report.is_ok(), "{report}");
    assert_eq!(
        report.notes,
        vec![
            "000006.vlog at offset 722: value record checksum mismatch (110 bytes no live \
             pointer names)"
                .to_owned()
        ]
    );
    // A torn last record (a crash during an append) is a note too.
    let db = TestDb::with_value_files();
    truncate(&db, "000006.vlog", 780);
    let report = run(&db);
    assert!(report.is_ok(), "{report}");
    assert_eq!((report.value_records, report.value_file_bytes), (2, 780));
    assert!(
        report.notes[0].starts_with("000006.vlog at offset 722: the last 58 bytes are not a"),
        "{report}"
    );
}

#[test]
fn a_torn_tail_a_pointer_names_is_a_problem_in_the_value_file_and_at_the_pointer() {
    let db = TestDb::with_value_files();
    truncate(&db, "000006.vlog", 500);
    let report = run(&db);
    assert_eq!(report.problems.len(), 2, "{report}");
    assert_problem(
        &report,
        "000006.vlog",
        Some(311),
        &["the last 189 bytes are not a complete record"],
    );
    assert_problem(
        &report,
        "000003.log",
        Some(BIG2_RECORD),
        &[
            "key 'big2' points to 000006.vlog at 311",
            "runs past the end of the value file",
        ],
    );
}

#[test]
fn a_deleted_value_file_leaves_every_pointer_into_it_dangling() {
    let db = TestDb::with_value_files();
    db.env.remove_file(&db.path("000006.vlog")).unwrap();
    let report = run(&db);
    assert_eq!(report.problems.len(), 2, "{report}");
    assert_problem(
        &report,
        "000007.ldb",
        Some(0),
        &[
            "key 'big1' points to 000006.vlog at 0",
            "the value file is missing; reads of it fail",
        ],
    );
    assert_problem(
        &report,
        "000003.log",
        Some(BIG2_RECORD),
        &[
            "key 'big2' points to 000006.vlog at 311",
            "the value file is missing",
        ],
    );
    assert_eq!((report.value_files, report.value_pointers), (0, 2));
}

#[test]
fn a_value_file_nothing_points_into_is_a_note() {
    let db = TestDb::with_value_files();
    db.write("000009.vlog", &db.read("000006.vlog"));
    let report = run(&db);
    assert!(report.is_ok(), "{report}");
    assert_eq!(report.value_files, 2);
    assert_eq!(
        report.notes,
        vec![
            "000009.vlog: no live table or log points into it (garbage the database deletes)"
                .to_owned()
        ]
    );
}

#[test]
fn one_value_file_is_checked_alone() {
    let db = TestDb::with_value_files();
    let options = Options {
        env: db.env.clone(),
        ..Options::default()
    };
    let path = db.path("000006.vlog");
    let report = check_value_file(&path, &options).unwrap();
    assert!(report.is_ok(), "{report}");
    assert_eq!((report.value_files, report.value_records), (1, 3));
    assert_eq!(
        report.to_string(),
        "1 value file (3 records, 832 bytes)\nno problems found"
    );
    // With no pointers to tell garbage from live records, any damage is a problem; a torn
    // tail stays a note.
    db.flip_byte("000006.vlog", 722 + 50);
    let report = check_value_file(&path, &options).unwrap();
    assert_eq!(report.problems.len(), 1, "{report}");
    assert_problem(
        &report,
        "000006.vlog",
        Some(722),
        &["value record checksum mismatch"],
    );
    truncate(&db, "000006.vlog", 780);
    let report = check_value_file(&path, &options).unwrap();
    assert!(report.is_ok(), "{report}");
    assert!(report.notes[0].starts_with("000006.vlog at offset 722: the last 58 bytes"));
    let missing = check_value_file(&db.path("000010.vlog"), &options).unwrap_err();
    assert!(missing.is_io_error(), "{missing}");
}

#[test]
fn a_database_the_engine_wrote_with_value_separation_checks_clean() {
    let env: Arc<dyn Env> = Arc::new(MemEnv::new());
    let dir = Path::new("/separated");
    let options = Options {
        env: Arc::clone(&env),
        create_if_missing: true,
        write_buffer_size: 64 << 10,
        value_separation: Some(crate::ValueSeparation::new(200)),
        ..Options::default()
    };
    {
        let db = crate::DB::open(dir, options.clone()).unwrap();
        for round in 0..3u32 {
            for i in 0..300u32 {
                let len = if i % 3 == 0 {
                    50
                } else {
                    200 + (i as usize * 13) % 900
                };
                let value = vec![(i + round) as u8; len];
                db.put(format!("k{i:04}").as_bytes(), &value).unwrap();
            }
            if round == 1 {
                db.compact_range(None, None).unwrap();
            }
        }
    }
    let report = check_db(dir, &options).unwrap();
    assert!(report.is_ok(), "{report}");
    assert!(
        report.value_files >= 1 && report.value_records > 200,
        "{report}"
    );
    assert!(report.value_pointers >= 200, "{report}");
    let (named, total) = (report.value_bytes_named, report.value_file_bytes);
    assert!(named > 0 && named <= total, "{report}");
}

/// A database whose value files hold compressed values (extension `value-compression`), some
/// relocated by collection, checks clean with or without the options.
#[test]
fn a_database_with_compressed_values_checks_clean() {
    let env: Arc<dyn Env> = Arc::new(MemEnv::new());
    let dir = Path::new("/compressed");
    let options = Options {
        env: Arc::clone(&env),
        create_if_missing: true,
        write_buffer_size: 64 << 10,
        value_separation: Some(
            crate::ValueSeparation::new(200).with_compression(crate::CompressionType::Snappy),
        ),
        ..Options::default()
    };
    {
        let db = crate::DB::open(dir, options.clone()).unwrap();
        for round in 0..12u32 {
            for i in 0..300u32 {
                let len = 200 + (i as usize * 13) % 900;
                let value: Vec<u8> = (0..len)
                    .map(|j| (i + round + (j / 8) as u32) as u8)
                    .collect();
                db.put(format!("k{i:04}").as_bytes(), &value).unwrap();
            }
            if round % 4 == 1 {
                db.compact_range(None, None).unwrap();
            }
        }
        let relocated: u64 = db
            .property("strata.value-files.relocated-bytes")
            .unwrap()
            .parse()
            .unwrap();
        assert!(relocated > 0, "nothing relocated");
    }
    for opts in [
        options.clone(),
        Options {
            env: Arc::clone(&env),
            ..Options::default()
        },
    ] {
        let report = check_db(dir, &opts).unwrap();
        assert!(report.is_ok(), "{report}");
        assert!(report.value_pointers >= 300, "{report}");
        let (named, total) = (report.value_bytes_named, report.value_file_bytes);
        assert!(named > 0 && named <= total, "{report}");
    }
}

/// Data of an extension the manifest's marker does not record is a problem of the table or
/// log holding it: recovery refuses such a batch, and LevelDB would misread such a table.
#[test]
fn value_pointers_under_a_marker_without_the_extension_are_problems() {
    let mut db = TestDb::with_value_files();
    db.edits[0].set_comparator_name("leveldb.BytewiseComparator");
    db.write_manifest();
    let report = run(&db);
    assert_problem(
        &report,
        "000007.ldb",
        None,
        &[
            "holds value files (format extension `value-separation`)",
            "does not record",
        ],
    );
    assert_problem(
        &report,
        "000003.log",
        Some(BIG2_RECORD),
        &["the manifest does not record the `value-separation` format extension"],
    );
}
