//! Every tool command of the `strata` binary, run as a user would: through the built binary,
//! on directories it creates itself.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn strata(args: &[&str]) -> Output {
    strata_with_stdin(args, None)
}

fn strata_with_stdin(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run strata");
    if let Some(input) = stdin {
        // The command may exit without reading (a closed pipe is then no failure of ours).
        let _ = child.stdin.take().unwrap().write_all(input);
    }
    child.wait_with_output().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

/// Runs `args` and asserts exit code `code`; returns stdout.
fn expect(code: i32, args: &[&str]) -> String {
    let output = strata(args);
    assert_eq!(
        output.status.code(),
        Some(code),
        "strata {args:?}\nstdout: {}\nstderr: {}",
        stdout(&output),
        stderr(&output)
    );
    stdout(&output)
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn every_command_has_help() {
    let top = expect(0, &["--help"]);
    for command in [
        "dump",
        "check",
        "load",
        "export",
        "get",
        "put",
        "delete",
        "scan",
        "stats",
        "compact",
        "checkpoint",
        "repair",
        "destroy",
    ] {
        assert!(top.contains(command), "{command} missing from:\n{top}");
        let help = expect(0, &[command, "--help"]);
        assert!(help.contains("Usage: strata"), "{command}: {help}");
    }
}

#[test]
fn put_get_delete_and_scan() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let db = s(&db);
    expect(0, &["put", db, "b\\x00", "bin\\xffvalue"]);
    expect(0, &["put", db, "a", "tab\there"]);
    expect(0, &["put", "--hex", db, "6331", "00ff"]); // "c1"
    expect(0, &["put", "--sync", db, "c2", "two"]);
    expect(0, &["put", db, "d", "gone soon"]);

    assert_eq!(expect(0, &["get", db, "b\\x00"]), "bin\\xffvalue\n");
    assert_eq!(expect(0, &["get", "--hex", db, "6331"]), "00ff\n");
    let raw = strata(&["get", "--raw", db, "b\\x00"]);
    assert_eq!(raw.stdout, b"bin\xffvalue");
    let missing = strata(&["get", db, "nope"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(stderr(&missing).contains("'nope' not found"));
    assert_eq!(strata(&["get", db, "bad\\q"]).status.code(), Some(2));

    expect(0, &["delete", db, "d", "never-there"]);
    assert_eq!(strata(&["get", db, "d"]).status.code(), Some(1));

    assert_eq!(
        expect(0, &["scan", db]),
        "a\ttab\\there\nb\\x00\tbin\\xffvalue\nc1\t\\x00\\xff\nc2\ttwo\n"
    );
    assert_eq!(
        expect(0, &["scan", db, "--prefix", "c", "--keys-only"]),
        "c1\nc2\n"
    );
    assert_eq!(
        expect(0, &["scan", db, "--reverse", "--limit", "2", "--keys-only"]),
        "c2\nc1\n"
    );
    assert_eq!(
        expect(
            0,
            &["scan", db, "--start", "b", "--end", "c2", "--keys-only"]
        ),
        "b\\x00\nc1\n"
    );
    assert_eq!(
        expect(0, &["scan", db, "--hex", "--start", "63", "--limit", "1"]),
        "6331\t00ff\n"
    );
}

#[test]
fn commands_on_a_missing_database_fail_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("absent");
    for args in [
        vec!["get", s(&db), "k"],
        vec!["scan", s(&db)],
        vec!["stats", s(&db)],
        vec!["check", s(&db)],
        vec!["export", s(&db)],
    ] {
        let output = strata(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(stderr(&output).starts_with("strata: "), "{args:?}");
    }
    assert!(!db.exists(), "reading commands must not create a database");
}

#[test]
fn load_object_and_json_lines_then_export_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let object = dir.path().join("pairs.json");
    std::fs::write(&object, r#"{"k1": "first", "k2": "v2", "k1": "last wins"}"#).unwrap();
    let lines = dir.path().join("pairs.jsonl");
    std::fs::write(
        &lines,
        "{\"key\": \"k3\", \"value\": \"v3\"}\n{\"value\": \"v4\", \"key\": \"k4\"}\n",
    )
    .unwrap();
    let db = dir.path().join("db");
    let out = expect(
        0,
        &[
            "load",
            s(&db),
            s(&object),
            s(&lines),
            "--batch",
            "1",
            "--sync",
        ],
    );
    assert!(out.starts_with("loaded 5 pairs ("), "{out}");
    assert!(out.contains(" s ("), "{out}");
    let piped = strata_with_stdin(
        &["load", s(&db), "-", "--format", "lines"],
        Some(b"{\"key\": \"k5\", \"value\": \"from stdin\"}"),
    );
    assert_eq!(piped.status.code(), Some(0), "{}", stderr(&piped));

    assert_eq!(expect(0, &["get", s(&db), "k1"]), "last wins\n");
    assert_eq!(
        expect(0, &["export", s(&db), "--start", "k2", "--end", "k5"]),
        "{\"key\":\"k2\",\"value\":\"v2\"}\n{\"key\":\"k3\",\"value\":\"v3\"}\n{\"key\":\"k4\",\"value\":\"v4\"}\n"
    );

    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"k\": \"v\",\n \"n\": 5}").unwrap();
    let output = strata(&["load", s(&db), s(&bad)]);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(message.contains("bad.json"), "{message}");
    assert!(message.contains("line 2"), "{message}");
}

#[test]
fn export_and_load_round_trip_binary_data() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("source");
    for i in 0..60u32 {
        let key = format!("\\x{:02x}\\x00key{i}", i % 256);
        let value = format!("\\xff\\n\"{i}\\\\");
        expect(0, &["put", s(&source), &key, &value]);
        if i == 20 {
            expect(0, &["compact", s(&source)]);
        }
    }
    let utf8 = strata(&["export", s(&source)]);
    assert_eq!(utf8.status.code(), Some(2), "binary data cannot be utf8");
    assert!(stderr(&utf8).contains("use the hex or base64 encoding"));

    for encoding in ["base64", "hex"] {
        let file = dir.path().join(format!("dump.{encoding}.jsonl"));
        let out = expect(
            0,
            &["export", s(&source), "--encoding", encoding, "-o", s(&file)],
        );
        assert!(out.starts_with("exported 60 pairs"), "{out}");
        let target = dir.path().join(format!("target-{encoding}"));
        expect(0, &["load", s(&target), s(&file), "--encoding", encoding]);
        assert_eq!(
            expect(0, &["scan", "--hex", s(&target)]),
            expect(0, &["scan", "--hex", s(&source)]),
            "{encoding}"
        );
        let again = expect(0, &["export", s(&target), "--encoding", encoding]);
        assert_eq!(again, std::fs::read_to_string(&file).unwrap());
    }
}

#[test]
fn stats_compact_and_check_a_sound_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let json: String = (0..2000)
        .map(|i| {
            format!(
                "{{\"key\": \"key{i:05}\", \"value\": \"{}\"}}\n",
                "v".repeat(100)
            )
        })
        .collect();
    let file = dir.path().join("pairs.jsonl");
    std::fs::write(&file, json).unwrap();
    expect(0, &["load", s(&db), s(&file)]);

    let compacted = expect(
        0,
        &[
            "compact",
            s(&db),
            "--start",
            "key00000",
            "--end",
            "key99999",
        ],
    );
    assert!(compacted.starts_with("compacted in "), "{compacted}");
    let stats = expect(0, &["stats", s(&db)]);
    for name in [
        "leveldb.num-files-at-level0: ",
        "leveldb.num-files-at-level6: ",
        "leveldb.stats:\n",
        "leveldb.sstables:\n",
        "leveldb.approximate-memory-usage: ",
    ] {
        assert!(stats.contains(name), "{name} missing:\n{stats}");
    }
    assert_eq!(
        expect(
            0,
            &["stats", s(&db), "--property", "leveldb.num-files-at-level0"]
        ),
        "0\n"
    );
    assert_eq!(
        strata(&["stats", s(&db), "--property", "nope"])
            .status
            .code(),
        Some(1)
    );

    let report = expect(0, &["check", s(&db)]);
    assert!(report.starts_with("checked MANIFEST-"), "{report}");
    assert!(report.trim_end().ends_with("no problems found"), "{report}");
}

/// The newest table file (`*.ldb`) of a database directory: live after a compaction.
fn a_table(db: &Path) -> std::path::PathBuf {
    let mut tables: Vec<_> = std::fs::read_dir(db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ldb"))
        .collect();
    tables.sort();
    tables.pop().expect("a table")
}

#[test]
fn check_and_dump_report_a_flipped_byte() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    for i in 0..50 {
        expect(0, &["put", s(&db), &format!("key{i:03}"), "value"]);
    }
    expect(0, &["compact", s(&db)]);
    let table = a_table(&db);
    let mut bytes = std::fs::read(&table).unwrap();
    bytes[5] ^= 0x40;
    std::fs::write(&table, bytes).unwrap();

    let name = table.file_name().unwrap().to_str().unwrap();
    let report = expect(1, &["check", s(&db)]);
    assert!(report.contains("1 problem found:"), "{report}");
    assert!(
        report.contains(&format!(
            "{name} at offset 0: data block 0: block checksum mismatch"
        )),
        "{report}"
    );
    let dump = strata(&["dump", s(&table)]);
    assert_eq!(dump.status.code(), Some(1));
    assert!(stdout(&dump).contains("corruption at offset 0: data block 0: block checksum mismatch"));
    assert!(stderr(&dump).contains("1 damaged part in"));
    // Unverified, the damaged block is decoded for what it still holds.
    let unverified = stdout(&strata(&["dump", "--no-verify", s(&table)]));
    assert!(unverified.contains("data block 0 at 0 ("), "{unverified}");
    assert!(!unverified.contains("checksum mismatch"), "{unverified}");
}

#[test]
fn dump_reads_every_kind_of_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    expect(0, &["put", s(&db), "flushed", "at reopen"]);
    expect(0, &["put", s(&db), "k\\x01", "v\\x02"]);

    let mut kinds = Vec::new();
    for entry in std::fs::read_dir(&db).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        if name == "LOCK" || name.starts_with("LOG") {
            assert_eq!(strata(&["dump", s(&path)]).status.code(), Some(2), "{name}");
            continue;
        }
        let text = expect(0, &["dump", s(&path)]);
        let json = expect(0, &["dump", "--json", "--hex", s(&path)]);
        for line in json.lines() {
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            assert!(value["type"].is_string(), "{line}");
        }
        if name.ends_with(".log") {
            kinds.push("log");
            assert!(text.ends_with(" damaged parts\n"), "{text}");
            if text.contains("batch sequence") {
                assert!(text.contains("put 'k\\x01' @ 2 => 'v\\x02'"), "{text}");
                assert!(json.contains("\"key\":\"6b01\""), "{json}");
            }
        } else if name.ends_with(".ldb") {
            kinds.push("table");
            assert!(text.starts_with("footer: metaindex at "), "{text}");
        } else if name.starts_with("MANIFEST-") {
            kinds.push("manifest");
            assert!(text.contains("VersionEdit {"), "{text}");
        } else if name == "CURRENT" {
            kinds.push("current");
            assert!(text.starts_with("MANIFEST-"), "{text}");
        }
    }
    kinds.sort_unstable();
    kinds.dedup();
    assert_eq!(kinds, ["current", "log", "manifest", "table"]);

    // A renamed table is recognised by its contents; --kind overrides.
    let copy = dir.path().join("copy.bin");
    std::fs::copy(a_table(&db), &copy).unwrap();
    assert!(expect(0, &["dump", s(&copy)]).contains("'flushed' @ 1 : 1 => 'at reopen'"));
    // Read as a log, a table is bytes that form no complete record.
    let as_log = strata(&["dump", "--kind", "log", s(&copy)]);
    assert_eq!(as_log.status.code(), Some(1));
    assert!(stdout(&as_log).starts_with("corruption at offset 0: the last "));
    assert!(stdout(&as_log).ends_with("bytes are not a complete record (a write cut short, or damage)\n0 records, 1 damaged parts\n"));
}

#[test]
fn repair_rebuilds_a_lost_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    for i in 0..20 {
        expect(0, &["put", s(&db), &format!("k{i}"), &format!("v{i}")]);
    }
    for entry in std::fs::read_dir(&db).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap();
        if name == "CURRENT" || name.starts_with("MANIFEST-") {
            std::fs::remove_file(&path).unwrap();
        }
    }
    assert_eq!(strata(&["get", s(&db), "k7"]).status.code(), Some(2));
    let out = expect(0, &["repair", s(&db)]);
    assert!(out.starts_with("repaired "), "{out}");
    assert_eq!(expect(0, &["get", s(&db), "k7"]), "v7\n");
    assert_eq!(
        expect(0, &["scan", "--keys-only", s(&db)]).lines().count(),
        20
    );
    expect(0, &["check", s(&db)]);
}

#[test]
fn destroy_needs_confirmation() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    expect(0, &["put", s(&db), "k", "v"]);
    // No terminal and no --yes: refused.
    let refused = strata(&["destroy", s(&db)]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(stderr(&refused).contains("pass --yes"));
    assert!(db.exists());
    // Piped input is not a terminal either, whatever it says.
    let piped = strata_with_stdin(&["destroy", s(&db)], Some(b"yes\n"));
    assert_eq!(piped.status.code(), Some(2));
    assert!(db.exists());

    let out = expect(0, &["destroy", "--yes", s(&db)]);
    assert!(out.starts_with("destroyed "), "{out}");
    assert!(!db.exists());
    assert_eq!(strata(&["destroy", "--yes", s(&db)]).status.code(), Some(2));
}

#[test]
fn checkpoint_of_a_closed_and_of_a_held_database() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("db");
    let db = strata::DB::open(
        &source,
        strata::Options {
            create_if_missing: true,
            write_buffer_size: 64 << 10,
            ..strata::Options::default()
        },
    )
    .unwrap();
    for i in 0..3000 {
        db.put(
            format!("key{i:04}").as_bytes(),
            format!("value{i}").as_bytes(),
        )
        .unwrap();
    }
    // Held by this process: the command needs --read-only.
    let held = dir.path().join("held");
    assert_eq!(
        strata(&["checkpoint", s(&source), s(&held)]).status.code(),
        Some(2)
    );
    assert!(!held.exists());
    let out = expect(0, &["checkpoint", "--read-only", s(&source), s(&held)]);
    assert!(out.starts_with("checkpoint of "), "{out}");
    drop(db);

    let closed = dir.path().join("closed");
    expect(0, &["checkpoint", s(&source), s(&closed)]);
    // The target exists now: refused.
    assert_eq!(
        strata(&["checkpoint", s(&source), s(&closed)])
            .status
            .code(),
        Some(2)
    );
    for copy in [&held, &closed] {
        expect(0, &["check", s(copy)]);
        assert_eq!(expect(0, &["get", s(copy), "key2999"]), "value2999\n");
        assert_eq!(
            expect(0, &["scan", "--keys-only", s(copy)]).lines().count(),
            3000
        );
    }
}

/// The files of `db` whose names end with `suffix`, sorted.
fn files_ending(db: &Path, suffix: &str) -> Vec<std::path::PathBuf> {
    let mut found: Vec<_> = std::fs::read_dir(db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_str().unwrap().ends_with(suffix))
        .collect();
    found.sort();
    found
}

#[test]
fn value_files_through_load_export_get_check_and_dump() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("pairs.jsonl");
    let mut lines = String::new();
    for i in 0..300 {
        // Every other value is large enough to go to a value file.
        let len = if i % 2 == 0 { 10 } else { 150 + i };
        let value: String = (0..len)
            .map(|j| (b'a' + ((i + j) % 26) as u8) as char)
            .collect();
        lines.push_str(&format!("{{\"key\":\"k{i:04}\",\"value\":\"{value}\"}}\n"));
    }
    std::fs::write(&input, &lines).unwrap();

    // Without the option the database stays LevelDB's format: no value file.
    let plain = dir.path().join("plain");
    expect(0, &["load", s(&plain), s(&input)]);
    assert!(files_ending(&plain, ".vlog").is_empty());
    let report = expect(0, &["check", s(&plain)]);
    assert!(!report.contains("value"), "{report}");

    let db = dir.path().join("db");
    expect(0, &["load", s(&db), s(&input), "--value-separation", "100"]);
    let vlogs = files_ending(&db, ".vlog");
    assert_eq!(vlogs.len(), 1, "{vlogs:?}");
    // Every command opens it with the extension its manifest records.
    assert_eq!(expect(0, &["export", s(&db)]), lines);
    expect(0, &["put", s(&db), "added", &"z".repeat(5000)]);
    expect(0, &["compact", s(&db)]);
    assert_eq!(expect(0, &["get", s(&db), "k0001"]).len(), 152);
    let report = expect(0, &["check", s(&db)]);
    assert!(report.contains(" value pointers naming "), "{report}");
    assert!(report.trim_end().ends_with("no problems found"), "{report}");
    let vlog = &vlogs[0];
    let alone = expect(0, &["check", s(vlog)]);
    assert!(alone.starts_with("1 value file (150 records, "), "{alone}");
    let dump = expect(0, &["dump", s(vlog)]);
    assert!(
        dump.starts_with("offset 0: 'k0001' => 151 value bytes ("),
        "{dump}"
    );
    assert!(
        dump.trim_end().ends_with("150 records, 0 damaged parts"),
        "{dump}"
    );
    let table = expect(0, &["dump", s(&a_table(&db))]);
    let pointer = format!(
        "  'k0001' @ 2 : 4 => pointer to {} at 0 (151 value bytes, crc 0x",
        vlog.file_name().unwrap().to_str().unwrap()
    );
    assert!(table.contains(&pointer), "{table}");
    let output = strata(&["check", s(&a_table(&db))]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("check takes a database directory or a value file"));

    // A flipped byte in the value of k0001 (the first record): check names the value file
    // and the table's pointer, get a corruption naming the file and the offset, and export
    // stops on it rather than write a wrong value.
    let mut bytes = std::fs::read(vlog).unwrap();
    bytes[50] ^= 0x01;
    std::fs::write(vlog, bytes).unwrap();
    let name = vlog.file_name().unwrap().to_str().unwrap();
    let report = expect(1, &["check", s(&db)]);
    assert!(report.contains("2 problems found:"), "{report}");
    assert!(
        report.contains(&format!(
            "{name} at offset 0: value record checksum mismatch"
        )),
        "{report}"
    );
    assert!(
        report.contains(&format!(
            "key 'k0001' points to {name} at 0 (151 value bytes"
        )),
        "{report}"
    );
    let output = strata(&["get", s(&db), "k0001"]);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(
        message.contains("corruption: value record checksum mismatch"),
        "{message}"
    );
    assert!(
        message.contains(&format!("{name} at offset 0)")),
        "{message}"
    );
    assert_eq!(expect(0, &["get", s(&db), "k0003"]).len(), 154);
    let output = strata(&["export", s(&db)]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains(name), "{}", stderr(&output));
    let dump = strata(&["dump", s(vlog)]);
    assert_eq!(dump.status.code(), Some(1));
    assert!(stdout(&dump).contains("corruption at offset 0: value record checksum mismatch"));
}
