use std::collections::BTreeMap;

use proptest::prelude::*;

use super::*;
use strata::BatchOp;

type Pairs = Vec<(Vec<u8>, Vec<u8>)>;

/// Loads `input`, returning the puts in order and the summary.
fn load(input: &str, options: &LoadOptions) -> Result<(Pairs, LoadSummary)> {
    let mut puts = Vec::new();
    let summary = load_json(input.as_bytes(), options, &mut |batch| {
        for op in batch.iter() {
            match op? {
                BatchOp::Put { key, value } => puts.push((key.to_vec(), value.to_vec())),
                other => panic!("load only puts, not {other:?}"),
            }
        }
        Ok(())
    })?;
    Ok((puts, summary))
}

fn pairs(list: &[(&str, &str)]) -> Pairs {
    list.iter()
        .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
        .collect()
}

fn message(result: Result<impl std::fmt::Debug>) -> String {
    match result {
        Err(Error::InvalidArgument(m)) => m,
        other => panic!("expected an invalid-argument error, got {other:?}"),
    }
}

#[test]
fn object_keeps_duplicates_in_order_so_the_last_wins() {
    let input = r#"{"a": "1", "b": "2", "a": "3"}"#;
    let (puts, summary) = load(input, &LoadOptions::default()).unwrap();
    assert_eq!(puts, pairs(&[("a", "1"), ("b", "2"), ("a", "3")]));
    assert_eq!((summary.pairs, summary.bytes, summary.batches), (3, 6, 1));
    let last_wins: BTreeMap<_, _> = puts.into_iter().collect();
    assert_eq!(last_wins[&b"a"[..]], b"3");
}

#[test]
fn json_lines_are_recognised_with_fields_in_either_order() {
    let input = "{\"key\": \"k1\", \"value\": \"v1\"}\n\
                 {\"value\": \"v2\", \"key\": \"k2\"}\n\n  {\"key\":\"k1\",\"value\":\"\"}\n";
    let (puts, summary) = load(input, &LoadOptions::default()).unwrap();
    assert_eq!(puts, pairs(&[("k1", "v1"), ("k2", "v2"), ("k1", "")]));
    assert_eq!(summary.pairs, 3);
}

#[test]
fn detection_falls_back_to_an_object_of_pairs() {
    for (input, expect) in [
        (r#"{"key": "x"}"#, vec![("key", "x")]),
        (
            r#"{"value": "y", "other": "z"}"#,
            vec![("value", "y"), ("other", "z")],
        ),
        (
            r#"{"key": "a", "key": "b"}"#,
            vec![("key", "a"), ("key", "b")],
        ),
        (
            r#"{"key": "a", "value": "b", "c": "d", "e": "f"}"#,
            vec![("key", "a"), ("value", "b"), ("c", "d"), ("e", "f")],
        ),
        ("{}", vec![]),
        ("  \n", vec![]),
    ] {
        let (puts, _) = load(input, &LoadOptions::default()).unwrap();
        assert_eq!(puts, pairs(&expect), "{input}");
    }
    // The ambiguous one-record object: auto reads it as JSON Lines; naming the format decides.
    let input = r#"{"key": "x", "value": "y"}"#;
    assert_eq!(
        load(input, &LoadOptions::default()).unwrap().0,
        pairs(&[("x", "y")])
    );
    let object = LoadOptions {
        format: InputFormat::Object,
        ..LoadOptions::default()
    };
    assert_eq!(
        load(input, &object).unwrap().0,
        pairs(&[("key", "x"), ("value", "y")])
    );
}

#[test]
fn encodings_decode_keys_and_values() {
    let hex = LoadOptions {
        encoding: Encoding::Hex,
        ..LoadOptions::default()
    };
    let (puts, _) = load(r#"{"00ff": "6869"}"#, &hex).unwrap();
    assert_eq!(puts, vec![(vec![0, 0xff], b"hi".to_vec())]);
    let base64 = LoadOptions {
        encoding: Encoding::Base64,
        ..LoadOptions::default()
    };
    let (puts, _) = load(r#"{"key": "AP8=", "value": ""}"#, &base64).unwrap();
    assert_eq!(puts, vec![(vec![0, 0xff], vec![])]);

    let err = message(load("{\"aa\": \"01\",\n \"zz\": \"00\"}", &hex));
    assert!(err.contains("key \"zz\": bad hex digit"), "{err}");
    assert!(err.contains("line 2"), "{err}");
}

#[test]
fn malformed_input_is_reported_with_its_position() {
    let lines = LoadOptions {
        format: InputFormat::Lines,
        ..LoadOptions::default()
    };
    for (input, options, expect) in [
        (
            r#"{"a": 1}"#,
            LoadOptions::default(),
            "invalid type: integer",
        ),
        (r#"["a"]"#, LoadOptions::default(), "expected a JSON object"),
        (r#"{"a": "1""#, LoadOptions::default(), "EOF while parsing"),
        (
            "{\"key\": \"k\", \"value\": \"v\"}\n{\"key\": \"k\"}",
            LoadOptions::default(),
            "missing field `value`",
        ),
        (
            r#"{"key": "k", "value": "v", "x": "y"}"#,
            lines.clone(),
            "unexpected field \"x\"",
        ),
        (
            r#"{"key": "k", "key": "v"}"#,
            lines.clone(),
            "field \"key\" given twice",
        ),
        (
            r#"{"a": "1"} x"#,
            LoadOptions::default(),
            "expected value at line 1 column 12",
        ),
    ] {
        let err = message(load(input, &options));
        assert!(err.contains(expect), "{input}: {err}");
    }
}

#[test]
fn batches_close_by_count_and_by_bytes() {
    let input: String = (0..2500)
        .map(|i| format!("{{\"key\": \"k{i}\", \"value\": \"v\"}}\n"))
        .collect();
    let (puts, summary) = load(&input, &LoadOptions::default()).unwrap();
    assert_eq!((puts.len(), summary.batches), (2500, 3));

    let big = "x".repeat(1000);
    let input: String = (0..10)
        .map(|i| format!("{{\"key\": \"k{i}\", \"value\": \"{big}\"}}\n"))
        .collect();
    let options = LoadOptions {
        batch_bytes: 2500,
        ..LoadOptions::default()
    };
    let (_, summary) = load(&input, &options).unwrap();
    assert_eq!(summary.batches, 4, "three pairs fill a 2500-byte batch");
}

#[test]
fn a_failed_write_stops_the_load_with_that_error() {
    let mut calls = 0;
    let options = LoadOptions {
        batch_size: 1,
        ..LoadOptions::default()
    };
    let result = load_json(&br#"{"a": "1", "b": "2"}"#[..], &options, &mut |_| {
        calls += 1;
        Err(Error::io("disk", std::io::Error::other("full")))
    });
    assert!(matches!(result, Err(Error::Io { .. })), "{result:?}");
    assert_eq!(calls, 1);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn any_binary_pairs_round_trip_through_json_lines(
        input in proptest::collection::vec(
            (proptest::collection::vec(any::<u8>(), 0..20),
             proptest::collection::vec(any::<u8>(), 0..40)),
            0..20),
        base64 in any::<bool>(),
    ) {
        let encoding = if base64 { Encoding::Base64 } else { Encoding::Hex };
        let mut text = String::new();
        for (key, value) in &input {
            let (mut k, mut v) = (String::new(), String::new());
            encoding.encode_into(key, &mut k).unwrap();
            encoding.encode_into(value, &mut v).unwrap();
            text.push_str(&serde_json::json!({"key": k, "value": v}).to_string());
            text.push('\n');
        }
        let options = LoadOptions { encoding, batch_size: 3, ..LoadOptions::default() };
        let (puts, summary) = load(&text, &options).unwrap();
        prop_assert_eq!(summary.pairs, input.len() as u64);
        prop_assert_eq!(puts, input);
    }

    #[test]
    fn arbitrary_input_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = load_json(&bytes[..], &LoadOptions::default(), &mut |_| Ok(()));
    }
}
