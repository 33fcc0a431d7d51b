//! `dump` of value files, and of tables and logs holding value pointers, on the hand-built
//! [`TestDb::with_value_files`].

use serde_json::Value;

use super::*;
use crate::tools::test_db::TestDb;

fn dump(db: &TestDb, name: &str, options: DumpOptions) -> (String, DumpSummary) {
    let options = DumpOptions {
        env: db.env.clone(),
        ..options
    };
    let mut out = Vec::new();
    let summary = dump_file(&db.path(name), &options, &mut out).unwrap();
    (String::from_utf8(out).unwrap(), summary)
}

fn text(db: &TestDb, name: &str) -> (String, DumpSummary) {
    dump(db, name, DumpOptions::default())
}

fn json(db: &TestDb, name: &str) -> Vec<Value> {
    let options = DumpOptions {
        format: DumpFormat::Json,
        ..DumpOptions::default()
    };
    let (text, _) = dump(db, name, options);
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// The masked crc `000006.vlog` stores for the record at `offset`.
fn crc_at(db: &TestDb, offset: usize) -> u32 {
    let bytes = db.read("000006.vlog");
    u32::from_le_bytes(bytes[offset..offset + 4].try_into().unwrap())
}

#[test]
fn a_value_file_is_dumped_record_by_record() {
    let db = TestDb::with_value_files();
    let (out, summary) = text(&db, "000006.vlog");
    assert_eq!(summary.kind, Some(FileKind::ValueFile));
    assert_eq!((summary.records, summary.problems), (3, 0));
    let expected = format!(
        "offset 0: 'big1' => 300 value bytes (311 bytes, crc {:#010x} ok)\n\
         offset 311: 'big2' => 400 value bytes (411 bytes, crc {:#010x} ok)\n\
         offset 722: 'gone' => 100 value bytes (110 bytes, crc {:#010x} ok)\n\
         3 records, 0 damaged parts\n",
        crc_at(&db, 0),
        crc_at(&db, 311),
        crc_at(&db, 722)
    );
    assert_eq!(out, expected);

    let lines = json(&db, "000006.vlog");
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[1]["type"], "record");
    assert_eq!(lines[1]["offset"], 311);
    assert_eq!(lines[1]["size"], 411);
    assert_eq!(lines[1]["key"], "big2");
    assert_eq!(lines[1]["value_length"], 400);
    assert_eq!(lines[1]["crc"], crc_at(&db, 311));
    assert_eq!(lines[1]["checksum"], "ok");
    assert_eq!(lines[3]["type"], "summary");
}

#[test]
fn damage_in_a_value_file_is_shown_where_it_is_and_the_dump_goes_on() {
    let db = TestDb::with_value_files();
    db.flip_byte("000006.vlog", 500);
    let (out, summary) = text(&db, "000006.vlog");
    assert_eq!((summary.records, summary.problems), (2, 1));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[1],
        "corruption at offset 311: value record checksum mismatch (411 bytes)"
    );
    assert!(lines[2].starts_with("offset 722: 'gone'"), "{out}");

    // Without verification the damaged record is shown as it reads.
    let options = DumpOptions {
        verify_checksums: false,
        ..DumpOptions::default()
    };
    let (out, summary) = dump(&db, "000006.vlog", options);
    assert_eq!((summary.records, summary.problems), (3, 0));
    assert!(out.contains("offset 311: 'big2' => 400 value bytes (411 bytes, crc 0x"));
    assert!(out.contains(" not verified)"), "{out}");

    // A torn last record.
    let bytes = db.read("000006.vlog");
    db.write("000006.vlog", &bytes[..780]);
    let (out, summary) = text(&db, "000006.vlog");
    assert_eq!(summary.problems, 2);
    assert!(
        out.contains("corruption at offset 722: the last 58 bytes are not a complete record"),
        "{out}"
    );
}

#[test]
fn tables_and_logs_show_value_pointers_decoded() {
    let db = TestDb::with_value_files();
    let (out, summary) = text(&db, "000007.ldb");
    assert_eq!(summary.problems, 0);
    let pointer = format!(
        "  'big1' @ 68 : 4 => pointer to 000006.vlog at 0 (300 value bytes, crc {:#010x})",
        crc_at(&db, 0)
    );
    assert!(out.lines().any(|line| line == pointer), "{out}");
    assert!(out.contains("  'small' @ 69 : 1 => 'inline'"), "{out}");
    let entries: Vec<Value> = json(&db, "000007.ldb")
        .into_iter()
        .filter(|l| l["type"] == "entry")
        .collect();
    assert_eq!(entries[0]["key"]["value_type"], "put-pointer");
    assert_eq!(entries[0]["pointer"]["file"], 6);
    assert_eq!(entries[0]["pointer"]["length"], 300);
    assert!(entries[0].get("value").is_none());
    assert_eq!(entries[1]["value"], "inline");

    let (out, _) = text(&db, "000003.log");
    let pointer = format!(
        "  put-pointer 'big2' @ 76 => pointer to 000006.vlog at 311 (400 value bytes, crc \
         {:#010x})",
        crc_at(&db, 311)
    );
    assert!(out.lines().any(|line| line == pointer), "{out}");
    let batches = json(&db, "000003.log");
    let op = &batches[2]["ops"][0];
    assert_eq!(op["op"], "put-pointer");
    assert_eq!(op["pointer"]["offset"], 311);
    assert_eq!(op["pointer"]["crc"], crc_at(&db, 311));
    assert!(op.get("value").is_none());
}

#[test]
fn a_value_file_is_recognised_by_its_contents() {
    let db = TestDb::with_value_files();
    db.write("values.bin", &db.read("000006.vlog"));
    let kind = detect_file_kind(&*db.env, &db.path("values.bin")).unwrap();
    assert_eq!(kind, FileKind::ValueFile);
    // Its first record damaged, it is not.
    db.flip_byte("values.bin", 20);
    assert!(detect_file_kind(&*db.env, &db.path("values.bin")).is_err());
    assert_eq!("vlog".parse::<FileKind>().unwrap(), FileKind::ValueFile);
    assert_eq!(FileKind::ValueFile.to_string(), "vlog");
}
