use std::sync::Arc;

use proptest::prelude::*;
use serde_json::Value;

use super::manifest::edit_text;
use super::*;
use crate::env::MemEnv;
use crate::tools::test_db::TestDb;
use crate::util::internal_key::internal_key;
use crate::version::edit::VersionEdit;

fn dump(db: &TestDb, name: &str, format: DumpFormat, show: Show) -> (String, DumpSummary) {
    let options = DumpOptions {
        format,
        show,
        env: db.env.clone(),
        ..DumpOptions::default()
    };
    let mut out = Vec::new();
    let summary = dump_file(&db.path(name), &options, &mut out).unwrap();
    (String::from_utf8(out).unwrap(), summary)
}

fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn log_dump_shows_each_batch_with_sequences() {
    let db = TestDb::new();
    let (text, summary) = dump(&db, "000003.log", DumpFormat::Text, Show::Escaped);
    assert_eq!(
        text,
        "offset 0: batch sequence 73, 2 ops\n\
         \x20 put 'w1' @ 73 => 'v1'\n\
         \x20 del 'a' @ 74\n\
         offset 29: batch sequence 75, 1 ops\n\
         \x20 put 'w\\x00\\xff' @ 75 => 'bin\\x01'\n\
         2 records, 0 damaged parts\n"
    );
    assert_eq!(summary.kind, Some(FileKind::Log));
    assert_eq!((summary.records, summary.problems), (2, 0));

    let (text, _) = dump(&db, "000003.log", DumpFormat::Json, Show::Hex);
    let lines = json_lines(&text);
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[2]["type"], "summary");
    assert_eq!(lines[2]["records"], 2);
    assert_eq!(lines[1]["type"], "batch");
    assert_eq!(lines[1]["offset"], 29);
    assert_eq!(lines[1]["sequence"], 75);
    assert_eq!(lines[1]["ops"][0]["key"], "7700ff");
    assert_eq!(lines[1]["ops"][0]["value"], "62696e01");
    assert_eq!(lines[0]["ops"][1]["op"], "del");
    assert!(lines[0]["ops"][1].get("value").is_none());
}

#[test]
fn log_dump_reports_a_bad_checksum_and_goes_on() {
    let db = TestDb::new();
    // A byte of the first record's payload.
    db.flip_byte("000003.log", 20);
    let (text, summary) = dump(&db, "000003.log", DumpFormat::Text, Show::Escaped);
    assert_eq!(summary.problems, 1);
    assert_eq!(
        summary.records, 0,
        "the checksum error drops the rest of the block"
    );
    assert!(
        text.starts_with("corruption at offset 0: checksum mismatch"),
        "{text}"
    );
}

#[test]
fn manifest_dump_prints_every_edit() {
    let db = TestDb::new();
    let (text, summary) = dump(&db, "MANIFEST-000002", DumpFormat::Text, Show::Escaped);
    assert_eq!(summary.kind, Some(FileKind::Manifest));
    assert_eq!(summary.records, 2);
    assert!(text.starts_with(
        "offset 0: VersionEdit {\n  Comparator: leveldb.BytewiseComparator\n  LogNumber: 3\n"
    ));
    assert!(text.contains("  AddFile: 1 4 "), "{text}");
    assert!(text.contains("'k000' @ 1 : 1 .. 'k059' @ 60 : 1"), "{text}");

    let (text, _) = dump(&db, "MANIFEST-000002", DumpFormat::Json, Show::Escaped);
    let lines = json_lines(&text);
    assert_eq!(lines[0]["comparator"], "leveldb.BytewiseComparator");
    assert_eq!(lines[1]["last_sequence"], 72);
    let added = &lines[1]["new_files"][1];
    assert_eq!(added["level"], 0);
    assert_eq!(added["number"], 5);
    assert_eq!(added["smallest"]["user_key"], "a");
    assert_eq!(added["largest"]["sequence"], 72);
    assert_eq!(added["largest"]["value_type"], "put");
}

#[test]
fn manifest_text_is_the_edit_display_when_escaped() {
    let mut edit = VersionEdit::new();
    edit.set_comparator_name("c");
    edit.log_number = Some(1);
    edit.prev_log_number = Some(0);
    edit.next_file_number = Some(9);
    edit.last_sequence = Some(5);
    edit.set_compact_pointer(2, internal_key(b"p\x00", 3, ValueType::Value));
    edit.delete_file(1, 4);
    edit.add_file(
        3,
        7,
        100,
        internal_key(b"a", 1, ValueType::Deletion),
        internal_key(b"\xff", 2, ValueType::Value),
    );
    assert_eq!(edit_text(&edit, Show::Escaped), edit.to_string());
    assert!(edit_text(&edit, Show::Hex).contains("CompactPointer: 2 '7000' @ 3 : 1"));
}

#[test]
fn table_dump_shows_structure_and_every_entry() {
    let db = TestDb::new();
    let (text, summary) = dump(&db, "000005.ldb", DumpFormat::Text, Show::Escaped);
    assert_eq!(summary.kind, Some(FileKind::Table));
    assert_eq!((summary.records, summary.problems), (3, 0));
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("footer: metaindex at "), "{text}");
    assert!(lines[1].starts_with("meta 'filter.leveldb.BuiltinBloomFilter2' => block at "));
    assert!(lines[2].starts_with("filter 'leveldb.BuiltinBloomFilter2': "));
    assert!(
        lines[2].ends_with(", 1 filters, base_lg 11"),
        "{}",
        lines[2]
    );
    assert!(
        lines[3].starts_with("index 'z' @ 72 : 1 => block at 0 ("),
        "{}",
        lines[3]
    );
    assert!(lines[4].starts_with("data block 0 at 0 ("), "{}", lines[4]);
    assert_eq!(lines[5], "  'a' @ 70 : 1 => 'first'");
    assert_eq!(lines[6], "  'k010' @ 71 : 0 => ''");
    assert_eq!(lines[7], "  'z' @ 72 : 1 => 'last'");
    assert!(lines[8].starts_with("1 data blocks, 3 entries, "));

    // The bigger table spans several blocks, Snappy-compressed.
    let (text, summary) = dump(&db, "000004.ldb", DumpFormat::Json, Show::Escaped);
    assert_eq!(summary.records, 60);
    let lines = json_lines(&text);
    let blocks: Vec<&Value> = lines.iter().filter(|l| l["type"] == "block").collect();
    assert!(blocks.len() > 3);
    assert!(blocks.iter().any(|b| b["compression"] == "snappy"));
    let entries: Vec<&Value> = lines.iter().filter(|l| l["type"] == "entry").collect();
    assert_eq!(entries.len(), 60);
    assert_eq!(entries[59]["key"]["user_key"], "k059");
    assert_eq!(entries[59]["key"]["sequence"], 60);
    let summary_line = lines.last().unwrap();
    assert_eq!(summary_line["type"], "summary");
    assert_eq!(summary_line["entries"], 60);
}

#[test]
fn table_dump_reports_a_damaged_block_and_shows_the_others() {
    let db = TestDb::new();
    db.flip_byte("000004.ldb", 10);
    let (text, summary) = dump(&db, "000004.ldb", DumpFormat::Text, Show::Escaped);
    assert_eq!(summary.problems, 1);
    assert!(
        text.contains("corruption at offset 0: data block 0: block checksum mismatch"),
        "{text}"
    );
    assert!(summary.records > 40, "other blocks are still dumped");
    assert!(text.contains("'k059' @ 60 : 1"));
}

#[test]
fn current_and_content_recognition() {
    let db = TestDb::new();
    let (text, summary) = dump(&db, "CURRENT", DumpFormat::Text, Show::Escaped);
    assert_eq!(text, "MANIFEST-000002\n");
    assert_eq!(summary.kind, Some(FileKind::Current));

    // Renamed files are recognised by their contents.
    for (name, kind) in [
        ("000004.ldb", FileKind::Table),
        ("MANIFEST-000002", FileKind::Manifest),
        ("000003.log", FileKind::Log),
        ("CURRENT", FileKind::Current),
    ] {
        db.write("renamed.bin", &db.read(name));
        assert_eq!(
            detect_file_kind(&*db.env, &db.path("renamed.bin")).unwrap(),
            kind,
            "{name}"
        );
    }
    db.write("junk", b"this is not a database file at all");
    let err = detect_file_kind(&*db.env, &db.path("junk")).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    let options = DumpOptions {
        env: db.env.clone(),
        ..DumpOptions::default()
    };
    assert!(dump_file(&db.path("missing.log"), &options, &mut Vec::new()).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn dumping_arbitrary_bytes_never_panics(
        bytes in proptest::collection::vec(any::<u8>(), 0..400),
        kind in 0usize..5,
    ) {
        let env = Arc::new(MemEnv::new());
        env.create_dir(std::path::Path::new("/d")).unwrap();
        let path = std::path::Path::new("/d/f");
        crate::env::write_file(&*env, path, &bytes, false).unwrap();
        let kinds = [
            FileKind::Log,
            FileKind::Table,
            FileKind::Manifest,
            FileKind::Current,
            FileKind::ValueFile,
        ];
        let options = DumpOptions {
            kind: Some(kinds[kind]),
            env,
            ..DumpOptions::default()
        };
        let _ = dump_file(path, &options, &mut Vec::new());
        let options = DumpOptions { kind: None, format: DumpFormat::Json, ..options };
        let _ = dump_file(path, &options, &mut Vec::new());
    }

    #[test]
    fn dumping_a_mutated_table_never_panics(at in 0usize..2000, byte in any::<u8>()) {
        let db = TestDb::new();
        let mut bytes = db.read("000004.ldb");
        let len = bytes.len();
        bytes[at % len] = byte;
        db.write("000004.ldb", &bytes);
        let options = DumpOptions { env: db.env.clone(), ..DumpOptions::default() };
        let summary = dump_file(&db.path("000004.ldb"), &options, &mut Vec::new());
        prop_assert!(summary.is_ok());
    }
}

#[test]
fn log_dump_reports_an_incomplete_last_record() {
    let db = TestDb::new();
    let log = db.read("000003.log");
    db.write("000003.log", &log[..log.len() - 2]);
    let (text, summary) = dump(&db, "000003.log", DumpFormat::Text, Show::Escaped);
    assert_eq!((summary.records, summary.problems), (1, 1));
    assert!(
        text.contains("corruption at offset 29: the last 27 bytes are not a complete record"),
        "{text}"
    );
}
