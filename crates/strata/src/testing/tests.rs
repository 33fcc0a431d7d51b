//! The helpers round-trip what they write and report what they cannot read.

use std::path::Path;

use super::*;
use crate::env::{Env, MemEnv};
use crate::error::Error;
use crate::table::format::CompressionType;
use crate::version::NUM_LEVELS;

#[test]
fn log_helpers_round_trip_and_report() {
    let big = vec![3u8; 70_000];
    let mut bytes = write_log_records(&[b"a", b"", &big]);
    let read = read_log_records(&bytes);
    assert_eq!(read.records, vec![b"a".to_vec(), Vec::new(), big]);
    assert!(read.reports.is_empty());
    bytes[7] ^= 1;
    let read = read_log_records(&bytes);
    assert!(read.records.is_empty());
    assert!(
        read.reports[0].contains("checksum mismatch"),
        "{:?}",
        read.reports
    );
}

#[test]
fn log_file_helpers_round_trip_through_an_env() {
    let env = MemEnv::new();
    let path = Path::new("/db/000003.log");
    env.create_dir(Path::new("/db")).unwrap();
    let big = vec![9u8; 40_000];
    write_log_file(&env, path, &[b"x", &big]).unwrap();
    let read = read_log_file(&env, path).unwrap();
    assert_eq!(read.records, vec![b"x".to_vec(), big]);
    assert!(read.reports.is_empty(), "{:?}", read.reports);
    assert!(read_log_file(&env, Path::new("/db/missing.log")).is_err());
}

#[test]
fn edit_fields_round_trip_and_reject_bad_levels() {
    let key = |user: &[u8], seq: u64| {
        let mut k = user.to_vec();
        k.extend_from_slice(&((seq << 8) | 1).to_le_bytes());
        k
    };
    let fields = EditFields {
        comparator: Some("leveldb.BytewiseComparator".into()),
        log_number: Some(3),
        prev_log_number: Some(0),
        next_file_number: Some(4),
        last_sequence: Some(77),
        compact_pointers: vec![(1, key(b"m", 5))],
        deleted_files: vec![(0, 2), (3, 1)],
        new_files: vec![EditNewFile {
            level: 6,
            number: 9,
            file_size: 1234,
            smallest: key(b"a", 1),
            largest: key(b"z", 2),
        }],
    };
    let bytes = encode_version_edit(&fields).unwrap();
    assert_eq!(version_edit_fields(&bytes).unwrap(), fields);
    let bad = EditFields {
        deleted_files: vec![(NUM_LEVELS, 1)],
        ..EditFields::default()
    };
    assert!(matches!(
        encode_version_edit(&bad),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn version_edit_helper_prints_or_fails() {
    let text = decode_version_edit(&[2, 5]).unwrap();
    assert!(text.contains("LogNumber: 5"), "{text}");
    assert!(decode_version_edit(&[2]).unwrap_err().is_corruption());
}

#[test]
fn footer_and_blocks_are_found_where_the_footer_says() {
    let entries: Vec<(Vec<u8>, Vec<u8>)> = (0..300u64)
        .map(|i| {
            (
                internal_key(format!("k{i:04}").as_bytes(), i + 1, true),
                vec![b'v'; 40],
            )
        })
        .collect();
    let table = build_table(&entries, CompressionType::None, 1024, 16, None).unwrap();
    let footer = decode_footer(&table[table.len() - 48..]).unwrap();
    assert!(footer.metaindex.offset < footer.index.offset, "{footer:?}");
    assert_eq!(
        footer.index.offset + footer.index.size + 5 + 48,
        table.len() as u64,
        "the index block ends where the footer starts"
    );
    let index = decode_block(read_block_at(&table, footer.index, true).unwrap()).unwrap();
    assert!(index.len() > 5, "{} data blocks", index.len());
    let mut bad = table.clone();
    bad[footer.index.offset as usize] ^= 1;
    assert!(read_block_at(&bad, footer.index, true)
        .unwrap_err()
        .is_corruption());
    assert_eq!(read_table_entries(table, None).unwrap(), entries);
}
