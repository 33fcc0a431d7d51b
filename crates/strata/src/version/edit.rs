//! Version edits: the difference between two versions, and the payload of each manifest record.
//!
//! An edit is encoded as a sequence of tagged fields, each a varint32 tag followed by the
//! field's value. Any field may be absent; the list fields repeat once per entry:
//!
//! ```text
//! tag 1  comparator         length-prefixed name
//! tag 2  log number         varint64
//! tag 9  prev log number    varint64
//! tag 3  next file number   varint64
//! tag 4  last sequence      varint64
//! tag 5  compact pointer    varint32 level, length-prefixed internal key
//! tag 6  deleted file       varint32 level, varint64 file number
//! tag 7  new file           varint32 level, varint64 file number, varint64 file size,
//!                           length-prefixed smallest internal key,
//!                           length-prefixed largest internal key
//! ```
//!
//! "Length-prefixed" is a varint32 length then that many bytes. Levels are below
//! [`NUM_LEVELS`]. Tag 8 (references to values stored outside tables, from LevelDB's early days)
//! is not supported. The encoder writes fields in the order listed, as LevelDB 1.23 does, so an
//! edit encodes to the same bytes in both; the decoder accepts them in any order and lets a
//! repeated scalar field override the earlier one.

use std::collections::BTreeSet;
use std::fmt;

use super::NUM_LEVELS;
use crate::error::{Error, Result};
use crate::util::coding::{
    get_length_prefixed, get_varint32, get_varint64, put_length_prefixed, put_varint32,
    put_varint64,
};
use crate::util::internal_key::{debug_internal_key, TRAILER_LEN};

// Field tags. On-disk: never change.
const TAG_COMPARATOR: u32 = 1;
const TAG_LOG_NUMBER: u32 = 2;
const TAG_NEXT_FILE_NUMBER: u32 = 3;
const TAG_LAST_SEQUENCE: u32 = 4;
const TAG_COMPACT_POINTER: u32 = 5;
const TAG_DELETED_FILE: u32 = 6;
const TAG_NEW_FILE: u32 = 7;
/// Large value references: written by very old LevelDB releases only; rejected.
const TAG_LARGE_VALUE_REF: u32 = 8;
const TAG_PREV_LOG_NUMBER: u32 = 9;

/// A table file as a version lists it: plain data, shared between versions by the version set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileMetaData {
    /// The file number (`NNNNNN.ldb`).
    pub(crate) number: u64,
    /// The file's size in bytes.
    pub(crate) file_size: u64,
    /// Smallest internal key in the table.
    pub(crate) smallest: Vec<u8>,
    /// Largest internal key in the table.
    pub(crate) largest: Vec<u8>,
}

/// The changes that turn one version into the next. Every field is optional or may be empty.
///
/// Thread safety: plain data; built by one thread, then applied and logged under the version
/// set's lock.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct VersionEdit {
    /// Name of the user comparator (recorded in a manifest's first edit).
    pub(crate) comparator: Option<String>,
    /// Logs numbered below this hold nothing the tables do not.
    pub(crate) log_number: Option<u64>,
    /// The log being compacted when an older release wrote it; 0 nowadays.
    pub(crate) prev_log_number: Option<u64>,
    /// The next file number to hand out.
    pub(crate) next_file_number: Option<u64>,
    /// The last sequence number used.
    pub(crate) last_sequence: Option<u64>,
    /// Per level, the internal key where the next compaction of that level starts.
    pub(crate) compact_pointers: Vec<(usize, Vec<u8>)>,
    /// Tables removed, as (level, file number).
    pub(crate) deleted_files: BTreeSet<(usize, u64)>,
    /// Tables added, with their level.
    pub(crate) new_files: Vec<(usize, FileMetaData)>,
}

impl VersionEdit {
    /// Removes table `number` from `level`.
    pub(crate) fn delete_file(&mut self, level: usize, number: u64) {
        debug_assert!(level < NUM_LEVELS);
        self.deleted_files.insert((level, number));
    }

    /// Appends the encoding of this edit to `dst`.
    pub(crate) fn encode(&self, dst: &mut Vec<u8>) {
        if let Some(name) = &self.comparator {
            put_varint32(dst, TAG_COMPARATOR);
            put_length_prefixed(dst, name.as_bytes());
        }
        let scalars = [
            (TAG_LOG_NUMBER, self.log_number),
            (TAG_PREV_LOG_NUMBER, self.prev_log_number),
            (TAG_NEXT_FILE_NUMBER, self.next_file_number),
            (TAG_LAST_SEQUENCE, self.last_sequence),
        ];
        for (tag, value) in scalars {
            if let Some(value) = value {
                put_varint32(dst, tag);
                put_varint64(dst, value);
            }
        }
        // Levels are below NUM_LEVELS, so they fit a varint32.
        for (level, key) in &self.compact_pointers {
            put_varint32(dst, TAG_COMPACT_POINTER);
            put_varint32(dst, *level as u32);
            put_length_prefixed(dst, key);
        }
        for &(level, number) in &self.deleted_files {
            put_varint32(dst, TAG_DELETED_FILE);
            put_varint32(dst, level as u32);
            put_varint64(dst, number);
        }
        for (level, file) in &self.new_files {
            put_varint32(dst, TAG_NEW_FILE);
            put_varint32(dst, *level as u32);
            put_varint64(dst, file.number);
            put_varint64(dst, file.file_size);
            put_length_prefixed(dst, &file.smallest);
            put_length_prefixed(dst, &file.largest);
        }
    }

    /// Decodes an edit. Any malformed input is an `Error::Corruption` naming the field and the
    /// offset of its tag within `src`.
    pub(crate) fn decode(src: &[u8]) -> Result<VersionEdit> {
        let mut edit = VersionEdit::default();
        let mut input = src;
        while !input.is_empty() {
            let offset = (src.len() - input.len()) as u64;
            let bad =
                |field: &str| Error::corruption_at(offset, format!("version edit: bad {field}"));
            let tag = get_varint32(&mut input).ok_or_else(|| bad("tag"))?;
            match tag {
                TAG_COMPARATOR => {
                    let name = get_length_prefixed(&mut input).ok_or_else(|| bad("comparator"))?;
                    let name = std::str::from_utf8(name).map_err(|_| bad("comparator name"))?;
                    edit.comparator = Some(name.to_owned());
                }
                TAG_LOG_NUMBER => {
                    edit.log_number =
                        Some(get_varint64(&mut input).ok_or_else(|| bad("log number"))?);
                }
                TAG_PREV_LOG_NUMBER => {
                    edit.prev_log_number =
                        Some(get_varint64(&mut input).ok_or_else(|| bad("previous log number"))?);
                }
                TAG_NEXT_FILE_NUMBER => {
                    edit.next_file_number =
                        Some(get_varint64(&mut input).ok_or_else(|| bad("next file number"))?);
                }
                TAG_LAST_SEQUENCE => {
                    edit.last_sequence =
                        Some(get_varint64(&mut input).ok_or_else(|| bad("last sequence"))?);
                }
                TAG_COMPACT_POINTER => {
                    let level = get_level(&mut input).ok_or_else(|| bad("compaction pointer"))?;
                    let key =
                        get_internal_key(&mut input).ok_or_else(|| bad("compaction pointer"))?;
                    edit.compact_pointers.push((level, key.to_vec()));
                }
                TAG_DELETED_FILE => {
                    let entry = get_level(&mut input)
                        .zip(get_varint64(&mut input))
                        .ok_or_else(|| bad("deleted file"))?;
                    edit.deleted_files.insert(entry);
                }
                TAG_NEW_FILE => {
                    let file = get_new_file(&mut input).ok_or_else(|| bad("new-file entry"))?;
                    edit.new_files.push(file);
                }
                TAG_LARGE_VALUE_REF => {
                    return Err(Error::corruption_at(
                        offset,
                        "version edit: large value references (tag 8) are not supported",
                    ));
                }
                _ => {
                    return Err(Error::corruption_at(
                        offset,
                        format!("version edit: unknown tag {tag}"),
                    ));
                }
            }
        }
        Ok(edit)
    }
}

fn get_level(input: &mut &[u8]) -> Option<usize> {
    let level = usize::try_from(get_varint32(input)?).ok()?;
    (level < NUM_LEVELS).then_some(level)
}

/// A length-prefixed internal key; too short to hold a trailer is malformed.
fn get_internal_key<'a>(input: &mut &'a [u8]) -> Option<&'a [u8]> {
    get_length_prefixed(input).filter(|key| key.len() >= TRAILER_LEN)
}

fn get_new_file(input: &mut &[u8]) -> Option<(usize, FileMetaData)> {
    let level = get_level(input)?;
    let number = get_varint64(input)?;
    let file_size = get_varint64(input)?;
    let smallest = get_internal_key(input)?.to_vec();
    let largest = get_internal_key(input)?.to_vec();
    Some((
        level,
        FileMetaData {
            number,
            file_size,
            smallest,
            largest,
        },
    ))
}

/// One field a line, in encoding order; used by `strata dump` on manifests.
impl fmt::Display for VersionEdit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "VersionEdit {{")?;
        if let Some(name) = &self.comparator {
            writeln!(f, "  Comparator: {name}")?;
        }
        let scalars = [
            ("LogNumber", self.log_number),
            ("PrevLogNumber", self.prev_log_number),
            ("NextFile", self.next_file_number),
            ("LastSeq", self.last_sequence),
        ];
        for (label, value) in scalars {
            if let Some(value) = value {
                writeln!(f, "  {label}: {value}")?;
            }
        }
        for (level, key) in &self.compact_pointers {
            writeln!(f, "  CompactPointer: {level} {}", debug_internal_key(key))?;
        }
        for (level, number) in &self.deleted_files {
            writeln!(f, "  DeleteFile: {level} {number}")?;
        }
        for (level, file) in &self.new_files {
            writeln!(
                f,
                "  AddFile: {level} {} {} {} .. {}",
                file.number,
                file.file_size,
                debug_internal_key(&file.smallest),
                debug_internal_key(&file.largest)
            )?;
        }
        write!(f, "}}")
    }
}

/// Setters used by tests and the `testing` helpers to build edits field by field.
#[cfg(any(test, feature = "testing"))]
impl VersionEdit {
    /// Adds table `number` of `file_size` bytes, holding internal keys `smallest..=largest`, at
    /// `level`.
    pub(crate) fn add_file(
        &mut self,
        level: usize,
        number: u64,
        file_size: u64,
        smallest: Vec<u8>,
        largest: Vec<u8>,
    ) {
        debug_assert!(level < NUM_LEVELS);
        self.new_files.push((
            level,
            FileMetaData {
                number,
                file_size,
                smallest,
                largest,
            },
        ));
    }

    pub(crate) fn new() -> VersionEdit {
        VersionEdit::default()
    }

    pub(crate) fn set_comparator_name(&mut self, name: &str) {
        self.comparator = Some(name.to_owned());
    }

    /// Records where the next compaction of `level` starts (an internal key).
    pub(crate) fn set_compact_pointer(&mut self, level: usize, key: Vec<u8>) {
        debug_assert!(level < NUM_LEVELS);
        self.compact_pointers.push((level, key));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::internal_key::{internal_key, ValueType};
    use proptest::prelude::*;

    fn full_edit() -> VersionEdit {
        let mut edit = VersionEdit::new();
        edit.set_comparator_name("leveldb.BytewiseComparator");
        edit.log_number = Some(11);
        edit.prev_log_number = Some(0);
        edit.next_file_number = Some(1 << 40);
        edit.last_sequence = Some((1 << 56) - 1);
        edit.set_compact_pointer(2, internal_key(b"cp", 99, ValueType::Value));
        edit.delete_file(6, 3);
        edit.delete_file(0, 7);
        edit.add_file(
            0,
            12,
            4096,
            internal_key(b"a", 5, ValueType::Value),
            internal_key(b"z\xff", 9, ValueType::Deletion),
        );
        edit.add_file(
            6,
            u64::MAX,
            u64::MAX,
            internal_key(b"", 0, ValueType::Deletion),
            internal_key(b"zz", 1, ValueType::Value),
        );
        edit
    }

    fn encoded(edit: &VersionEdit) -> Vec<u8> {
        let mut buf = Vec::new();
        edit.encode(&mut buf);
        buf
    }

    fn corruption_reason(result: Result<VersionEdit>) -> String {
        match result {
            Err(Error::Corruption(c)) => c.to_string(),
            other => panic!("expected corruption, got {other:?}"),
        }
    }

    #[test]
    fn full_edit_round_trips() {
        let edit = full_edit();
        assert_eq!(VersionEdit::decode(&encoded(&edit)).unwrap(), edit);
        assert_eq!(VersionEdit::decode(&[]).unwrap(), VersionEdit::new());
        // Encoding appends.
        let mut buf = b"x".to_vec();
        edit.encode(&mut buf);
        assert_eq!(&buf[1..], encoded(&edit));
    }

    #[test]
    fn encoding_uses_leveldb_field_order_and_bytes() {
        let mut edit = VersionEdit::new();
        edit.add_file(
            1,
            5,
            300,
            internal_key(b"k", 1, ValueType::Value),
            internal_key(b"m", 2, ValueType::Value),
        );
        edit.delete_file(3, 4);
        edit.last_sequence = Some(7);
        edit.next_file_number = Some(6);
        edit.prev_log_number = Some(0);
        edit.log_number = Some(2);
        edit.set_comparator_name("c");
        let mut expected = vec![
            1, 1, b'c', 2, 2, 9, 0, 3, 6, 4, 7, 6, 3, 4, 7, 1, 5, 0xac, 0x02, 9,
        ];
        expected.extend_from_slice(&internal_key(b"k", 1, ValueType::Value));
        expected.push(9);
        expected.extend_from_slice(&internal_key(b"m", 2, ValueType::Value));
        assert_eq!(encoded(&edit), expected);
    }

    #[test]
    fn decodes_hand_built_bytes_in_any_order() {
        let key = internal_key(b"key", 3, ValueType::Value);
        let mut bytes = vec![4, 0x80, 0x01]; // last sequence 128
        bytes.extend_from_slice(&[5, 2, key.len() as u8]); // compact pointer at level 2
        bytes.extend_from_slice(&key);
        bytes.extend_from_slice(&[6, 1, 9]); // delete file 9 at level 1
        bytes.extend_from_slice(&[2, 1, 2, 3]); // log number 1, then overridden by 3
        let edit = VersionEdit::decode(&bytes).unwrap();
        assert_eq!(edit.last_sequence, Some(128));
        assert_eq!(edit.log_number, Some(3));
        assert_eq!(edit.compact_pointers, vec![(2, key)]);
        assert_eq!(edit.deleted_files, BTreeSet::from([(1, 9)]));
        assert_eq!(edit.comparator, None);
        assert!(edit.new_files.is_empty());
    }

    #[test]
    fn bad_fields_are_corruption_with_offset() {
        let reason = corruption_reason(VersionEdit::decode(&[2, 5, 6, 7, 1]));
        assert!(
            reason.contains("deleted file") && reason.contains("offset 2"),
            "{reason}"
        );
        let reason = corruption_reason(VersionEdit::decode(&[2, 5, 6, NUM_LEVELS as u8, 1]));
        assert!(reason.contains("deleted file"), "{reason}");
        let reason = corruption_reason(VersionEdit::decode(&[8, 0]));
        assert!(reason.contains("tag 8"), "{reason}");
        let reason = corruption_reason(VersionEdit::decode(&[3, 1, 10]));
        assert!(
            reason.contains("unknown tag 10") && reason.contains("offset 2"),
            "{reason}"
        );
        let reason = corruption_reason(VersionEdit::decode(&[1, 2, 0xff, 0xfe]));
        assert!(reason.contains("comparator name"), "{reason}");
        // A compaction pointer key too short to be an internal key.
        let reason = corruption_reason(VersionEdit::decode(&[5, 0, 3, b'a', b'b', b'c']));
        assert!(reason.contains("compaction pointer"), "{reason}");
        let reason = corruption_reason(VersionEdit::decode(&[0x80]));
        assert!(reason.contains("tag"), "{reason}");
    }

    #[test]
    fn every_truncation_fails_cleanly_or_ends_on_a_field() {
        let bytes = encoded(&full_edit());
        let mut field_ends = 0;
        for cut in 0..bytes.len() {
            let prefix = &bytes[..cut];
            match VersionEdit::decode(prefix) {
                // Ending exactly between fields is a valid, smaller edit.
                Ok(edit) => {
                    assert_eq!(encoded(&edit), prefix, "cut at {cut}");
                    field_ends += 1;
                }
                Err(e) => assert!(e.is_corruption(), "cut at {cut}: {e}"),
            }
        }
        // Empty, then after each of the 10 fields but the last.
        assert_eq!(field_ends, 10);
    }

    #[test]
    fn display_is_readable() {
        let text = full_edit().to_string();
        assert!(
            text.contains("Comparator: leveldb.BytewiseComparator"),
            "{text}"
        );
        assert!(text.contains("LogNumber: 11"), "{text}");
        assert!(text.contains("CompactPointer: 2 'cp' @ 99 : 1"), "{text}");
        assert!(text.contains("DeleteFile: 0 7"), "{text}");
        assert!(
            text.contains("AddFile: 0 12 4096 'a' @ 5 : 1 .. 'z\\xff' @ 9 : 0"),
            "{text}"
        );
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.first(), Some(&"VersionEdit {"));
        assert_eq!(lines.last(), Some(&"}"));
        assert_eq!(lines.len(), 2 + 10);
    }

    fn arb_key() -> impl Strategy<Value = Vec<u8>> {
        (
            proptest::collection::vec(any::<u8>(), 0..12),
            0u64..1 << 56,
            any::<bool>(),
        )
            .prop_map(|(user, seq, live)| {
                let t = if live {
                    ValueType::Value
                } else {
                    ValueType::Deletion
                };
                internal_key(&user, seq, t)
            })
    }

    fn arb_edit() -> impl Strategy<Value = VersionEdit> {
        let level = 0..NUM_LEVELS;
        (
            proptest::option::of("[a-zA-Z.]{0,20}"),
            proptest::array::uniform4(proptest::option::of(any::<u64>())),
            proptest::collection::vec((level.clone(), arb_key()), 0..4),
            proptest::collection::btree_set((level.clone(), any::<u64>()), 0..4),
            proptest::collection::vec(
                (level, any::<u64>(), any::<u64>(), arb_key(), arb_key()),
                0..4,
            ),
        )
            .prop_map(
                |(comparator, [log, prev, next, last], pointers, deleted, added)| {
                    let mut edit = VersionEdit {
                        comparator,
                        log_number: log,
                        prev_log_number: prev,
                        next_file_number: next,
                        last_sequence: last,
                        compact_pointers: pointers,
                        deleted_files: deleted,
                        new_files: Vec::new(),
                    };
                    for (level, number, size, smallest, largest) in added {
                        edit.add_file(level, number, size, smallest, largest);
                    }
                    edit
                },
            )
    }

    proptest! {
        #[test]
        fn random_edits_round_trip(edit in arb_edit()) {
            let bytes = encoded(&edit);
            prop_assert_eq!(VersionEdit::decode(&bytes).unwrap(), edit);
        }

        #[test]
        fn arbitrary_bytes_decode_or_fail_cleanly(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            match VersionEdit::decode(&bytes) {
                // Whatever decodes re-encodes to no more bytes than it came from.
                Ok(edit) => prop_assert!(encoded(&edit).len() <= bytes.len()),
                Err(e) => prop_assert!(e.is_corruption()),
            }
        }

        #[test]
        fn mutated_edits_decode_or_fail_cleanly(
            edit in arb_edit(),
            mutations in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        ) {
            let mut bytes = encoded(&edit);
            prop_assume!(!bytes.is_empty());
            for (at, value) in &mutations {
                let i = at.index(bytes.len());
                bytes[i] = *value;
            }
            if let Err(e) = VersionEdit::decode(&bytes) {
                prop_assert!(e.is_corruption());
            }
        }
    }
}
