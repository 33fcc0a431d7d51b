use std::path::Path;
use std::sync::Arc;

use super::*;
use crate::load::{load_json, LoadOptions};
use strata::{MemEnv, Options};

fn open(env: &Arc<MemEnv>, dir: &str) -> DB {
    let options = Options {
        env: env.clone(),
        create_if_missing: true,
        ..Options::default()
    };
    DB::open(Path::new(dir), options).unwrap()
}

fn range(start: Option<&[u8]>, end: Option<&[u8]>, prefix: Option<&[u8]>) -> KeyRange {
    KeyRange {
        start: start.map(<[u8]>::to_vec),
        end: end.map(<[u8]>::to_vec),
        prefix: prefix.map(<[u8]>::to_vec),
    }
}

#[test]
fn ranges_combine_start_end_and_prefix() {
    let v = |s: &[u8]| Some(s.to_vec());
    assert_eq!(range(None, None, None).bounds(), (None, None));
    assert_eq!(
        range(None, None, Some(b"ab")).bounds(),
        (v(b"ab"), v(b"ac"))
    );
    assert_eq!(
        range(None, None, Some(b"a\xff\xff")).bounds(),
        (v(b"a\xff\xff"), v(b"b"))
    );
    assert_eq!(
        range(None, None, Some(b"\xff")).bounds(),
        (v(b"\xff"), None)
    );
    assert_eq!(range(None, None, Some(b"")).bounds(), (v(b""), None));
    assert_eq!(
        range(Some(b"abc"), Some(b"b"), Some(b"ab")).bounds(),
        (v(b"abc"), v(b"ac"))
    );
    assert_eq!(
        range(Some(b"a"), Some(b"ab5"), Some(b"ab")).bounds(),
        (v(b"ab"), v(b"ab5"))
    );
}

fn keys_of(db: &DB, options: &ScanOptions) -> Vec<String> {
    let mut keys = Vec::new();
    scan(db, options, |k, _| {
        keys.push(String::from_utf8(k.to_vec()).unwrap());
        Ok(())
    })
    .unwrap();
    keys
}

#[test]
fn scan_honours_range_direction_and_limit() {
    let env = Arc::new(MemEnv::new());
    let db = open(&env, "/db");
    for key in ["a", "b1", "b2", "b3", "c"] {
        db.put(key.as_bytes(), b"v").unwrap();
    }
    db.delete(b"b2").unwrap();
    let all = ScanOptions::default();
    assert_eq!(keys_of(&db, &all), ["a", "b1", "b3", "c"]);
    let prefix = ScanOptions {
        range: range(None, None, Some(b"b")),
        ..ScanOptions::default()
    };
    assert_eq!(keys_of(&db, &prefix), ["b1", "b3"]);
    let reverse = ScanOptions {
        reverse: true,
        limit: Some(3),
        ..ScanOptions::default()
    };
    assert_eq!(keys_of(&db, &reverse), ["c", "b3", "b1"]);
    let window = ScanOptions {
        range: range(Some(b"b"), Some(b"c"), None),
        reverse: true,
        ..ScanOptions::default()
    };
    assert_eq!(keys_of(&db, &window), ["b3", "b1"]);
    let none = ScanOptions {
        limit: Some(0),
        ..ScanOptions::default()
    };
    assert!(keys_of(&db, &none).is_empty());
}

#[test]
fn export_then_load_round_trips_binary_data() {
    let env = Arc::new(MemEnv::new());
    let source = open(&env, "/src");
    let mut expected = Vec::new();
    for i in 0..300u32 {
        let key = [&i.to_be_bytes()[..], b"\x00\xff\n\"\\"].concat();
        let value: Vec<u8> = (0..(i % 50)).map(|j| (i * 7 + j) as u8).collect();
        source.put(&key, &value).unwrap();
        expected.push((key, value));
    }
    for encoding in [Encoding::Base64, Encoding::Hex] {
        let mut json = Vec::new();
        let options = ExportOptions {
            encoding,
            ..ExportOptions::default()
        };
        let summary = export_json(&source, &options, &mut json).unwrap();
        assert_eq!(summary.pairs, 300);
        assert_eq!(json.iter().filter(|&&b| b == b'\n').count(), 300);

        let target = open(&env, &format!("/dst-{encoding:?}"));
        let load = LoadOptions {
            encoding,
            batch_size: 64,
            ..LoadOptions::default()
        };
        let loaded = load_json(&json[..], &load, &mut |batch| target.write(batch)).unwrap();
        assert_eq!(loaded.pairs, 300);
        assert_eq!(loaded.bytes, summary.bytes);
        let mut got = Vec::new();
        scan(&target, &ScanOptions::default(), |k, v| {
            got.push((k.to_vec(), v.to_vec()));
            Ok(())
        })
        .unwrap();
        assert_eq!(got, expected, "{encoding:?}");
    }
}

#[test]
fn export_refuses_binary_as_utf8_and_honours_the_range() {
    let env = Arc::new(MemEnv::new());
    let db = open(&env, "/db");
    db.put(b"text", "héllo".as_bytes()).unwrap();
    db.put(b"tz", b"x").unwrap();
    db.put(b"z", b"\xff").unwrap();
    let mut out = Vec::new();
    let err = export_json(&db, &ExportOptions::default(), &mut out).unwrap_err();
    assert!(
        err.to_string().contains("'\\xff' is not valid UTF-8"),
        "{err}"
    );

    let mut out = Vec::new();
    let options = ExportOptions {
        range: range(None, None, Some(b"t")),
        encoding: Encoding::Utf8,
    };
    export_json(&db, &options, &mut out).unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "{\"key\":\"text\",\"value\":\"héllo\"}\n{\"key\":\"tz\",\"value\":\"x\"}\n"
    );
}

#[test]
fn properties_lists_every_level_and_the_summaries() {
    let env = Arc::new(MemEnv::new());
    let db = open(&env, "/db");
    db.put(b"k", b"v").unwrap();
    db.compact_range(None, None).unwrap();
    let props = properties(&db);
    let names: Vec<&str> = props.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names.len(), 10, "{names:?}");
    assert_eq!(names[0], "leveldb.num-files-at-level0");
    assert_eq!(names[9], "leveldb.approximate-memory-usage");
    let files: u64 = props[..7]
        .iter()
        .map(|(_, v)| v.parse::<u64>().unwrap())
        .sum();
    assert_eq!(files, 1, "{props:?}");
}
