//! Internals exposed to fuzz targets, benches and interop tests (feature `testing`).
//! Not part of the stable API.

use std::path::Path;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::env::vec_files::{VecSink, VecSource};
use crate::env::{Env, SequentialFile};
use crate::error::{Error, Result};
use crate::log::{LogReader, LogWriter, Reporter};
use crate::version::edit::VersionEdit;
use crate::version::NUM_LEVELS;
use crate::write_batch::WriteBatch;

/// Collects a log reader's reports as readable lines.
struct CollectReports(Arc<Mutex<Vec<String>>>);

impl Reporter for CollectReports {
    fn corruption(&mut self, bytes: u64, reason: &Error) {
        self.0
            .lock()
            .push(format!("{bytes} bytes dropped: {reason}"));
    }
}

/// Reads every logical record of a log file's bytes (checksums verified), returning the records
/// and one line per reported corruption.
pub fn read_log_records(bytes: &[u8]) -> (Vec<Vec<u8>>, Vec<String>) {
    read_all_records(Box::new(VecSource::new(bytes.to_vec())))
}

/// Like [`read_log_records`], reading the log file at `path` through `env`.
pub fn read_log_file(env: &dyn Env, path: &Path) -> Result<(Vec<Vec<u8>>, Vec<String>)> {
    Ok(read_all_records(env.new_sequential_file(path)?))
}

fn read_all_records(file: Box<dyn SequentialFile>) -> (Vec<Vec<u8>>, Vec<String>) {
    let reports = Arc::new(Mutex::new(Vec::new()));
    let mut reader = LogReader::new(
        file,
        Some(Box::new(CollectReports(reports.clone()))),
        true,
        0,
    );
    let mut records = Vec::new();
    let mut scratch = Vec::new();
    while let Some(record) = reader.read_record(&mut scratch) {
        records.push(record.to_vec());
    }
    drop(reader);
    let reports = std::mem::take(&mut *reports.lock());
    (records, reports)
}

/// The bytes of a log file holding `records` in order.
pub fn write_log_records(records: &[&[u8]]) -> Vec<u8> {
    let sink = VecSink::new();
    let mut writer = LogWriter::new(Box::new(sink.clone()));
    for record in records {
        // The in-memory sink never fails.
        let _ = writer.add_record(record);
    }
    sink.contents()
}

/// Writes a new log file at `path` through `env` holding `records` in order, synced and closed.
pub fn write_log_file(env: &dyn Env, path: &Path, records: &[&[u8]]) -> Result<()> {
    let mut writer = LogWriter::new(env.new_writable_file(path)?);
    for record in records {
        writer.add_record(record)?;
    }
    writer.sync()?;
    writer.close()
}

/// A table a version edit adds, in plain public fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditNewFile {
    /// Level the table joins.
    pub level: usize,
    /// File number (`NNNNNN.ldb`).
    pub number: u64,
    /// File size in bytes.
    pub file_size: u64,
    /// Smallest internal key.
    pub smallest: Vec<u8>,
    /// Largest internal key.
    pub largest: Vec<u8>,
}

/// Every field of a version edit, in plain public fields, for tests that build or inspect
/// manifests. Converts losslessly to and from the engine's `VersionEdit`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EditFields {
    /// Comparator name.
    pub comparator: Option<String>,
    /// Log number.
    pub log_number: Option<u64>,
    /// Previous log number.
    pub prev_log_number: Option<u64>,
    /// Next file number.
    pub next_file_number: Option<u64>,
    /// Last sequence number.
    pub last_sequence: Option<u64>,
    /// Compaction pointers: (level, internal key).
    pub compact_pointers: Vec<(usize, Vec<u8>)>,
    /// Deleted tables: (level, file number), ascending.
    pub deleted_files: Vec<(usize, u64)>,
    /// Added tables, in edit order.
    pub new_files: Vec<EditNewFile>,
}

/// Decodes a version edit (a manifest record's payload) into its fields.
pub fn version_edit_fields(bytes: &[u8]) -> Result<EditFields> {
    let edit = VersionEdit::decode(bytes)?;
    Ok(EditFields {
        comparator: edit.comparator,
        log_number: edit.log_number,
        prev_log_number: edit.prev_log_number,
        next_file_number: edit.next_file_number,
        last_sequence: edit.last_sequence,
        compact_pointers: edit.compact_pointers,
        deleted_files: edit.deleted_files.into_iter().collect(),
        new_files: edit
            .new_files
            .into_iter()
            .map(|(level, f)| EditNewFile {
                level,
                number: f.number,
                file_size: f.file_size,
                smallest: f.smallest,
                largest: f.largest,
            })
            .collect(),
    })
}

/// Encodes `fields` as the engine's `VersionEdit` encodes an edit (a manifest record's payload).
/// Fails with `InvalidArgument` for a level outside the tree.
pub fn encode_version_edit(fields: &EditFields) -> Result<Vec<u8>> {
    let levels = fields
        .compact_pointers
        .iter()
        .map(|(level, _)| *level)
        .chain(fields.deleted_files.iter().map(|(level, _)| *level))
        .chain(fields.new_files.iter().map(|f| f.level));
    for level in levels {
        if level >= NUM_LEVELS {
            return Err(Error::InvalidArgument(format!(
                "level {level} is not below {NUM_LEVELS}"
            )));
        }
    }
    let mut edit = VersionEdit::new();
    if let Some(name) = &fields.comparator {
        edit.set_comparator_name(name);
    }
    edit.log_number = fields.log_number;
    edit.prev_log_number = fields.prev_log_number;
    edit.next_file_number = fields.next_file_number;
    edit.last_sequence = fields.last_sequence;
    for (level, key) in &fields.compact_pointers {
        edit.set_compact_pointer(*level, key.clone());
    }
    for &(level, number) in &fields.deleted_files {
        edit.delete_file(level, number);
    }
    for f in &fields.new_files {
        edit.add_file(
            f.level,
            f.number,
            f.file_size,
            f.smallest.clone(),
            f.largest.clone(),
        );
    }
    let mut out = Vec::new();
    edit.encode(&mut out);
    Ok(out)
}

/// Decodes a version edit (a manifest record's payload) into its readable form.
pub fn decode_version_edit(bytes: &[u8]) -> Result<String> {
    VersionEdit::decode(bytes).map(|edit| edit.to_string())
}

/// A write batch from its encoded form (a WAL record's payload); see `WriteBatch`'s layout.
pub fn write_batch_from_contents(bytes: Vec<u8>) -> Result<WriteBatch> {
    WriteBatch::from_contents(bytes)
}

/// The encoded form of `batch`: header and records, as the WAL stores it.
pub fn write_batch_contents(batch: &WriteBatch) -> &[u8] {
    batch.contents()
}

/// The sequence number in `batch`'s header.
pub fn write_batch_sequence(batch: &WriteBatch) -> u64 {
    batch.sequence()
}

/// Sets the sequence number in `batch`'s header.
pub fn write_batch_set_sequence(batch: &mut WriteBatch, sequence: u64) {
    batch.set_sequence(sequence);
}

pub use crate::env::fault::{
    CrashPoint, FaultEnv, InjectedError, InjectedFault, OpKind, PowerLossMode,
};

pub mod fuzz;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_helpers_round_trip_and_report() {
        let big = vec![3u8; 70_000];
        let mut bytes = write_log_records(&[b"a", b"", &big]);
        let (records, reports) = read_log_records(&bytes);
        assert_eq!(records, vec![b"a".to_vec(), Vec::new(), big]);
        assert!(reports.is_empty());
        bytes[7] ^= 1;
        let (records, reports) = read_log_records(&bytes);
        assert!(records.is_empty());
        assert!(reports[0].contains("checksum mismatch"), "{reports:?}");
    }

    #[test]
    fn log_file_helpers_round_trip_through_an_env() {
        let env = crate::env::MemEnv::new();
        let path = Path::new("/db/000003.log");
        env.create_dir(Path::new("/db")).unwrap();
        let big = vec![9u8; 40_000];
        write_log_file(&env, path, &[b"x", &big]).unwrap();
        let (records, reports) = read_log_file(&env, path).unwrap();
        assert_eq!(records, vec![b"x".to_vec(), big]);
        assert!(reports.is_empty(), "{reports:?}");
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
}

pub use self::table::{
    build_block, build_table, decode_block, decode_footer, filter_block_may_match, internal_key,
    read_block_at, read_table_entries, table_get, TableEntry, TableFile, TableGet,
};

/// Tables and their parts: build from entries, read back, look up, decode raw blocks.
mod table {
    use std::sync::Arc;

    use crate::env::vec_files::{VecFile, VecSink};
    use crate::error::Result;
    use crate::iter::InternalIterator;
    use crate::table::block::{Block, KeyOrder};
    use crate::table::block_builder::BlockBuilder;
    use crate::table::builder::TableBuilder;
    use crate::table::filter_block::FilterBlockReader;
    use crate::table::format::CompressionType;
    use crate::table::format::{read_block, BlockHandle, Footer};
    use crate::table::reader::Table;
    use crate::table::BlockReads;
    use crate::table::TableOptions;
    use crate::util::bloom::{BloomFilterPolicy, FilterPolicy};
    use crate::util::comparator::BytewiseComparator;
    use crate::util::internal_key::{
        self, parse_internal_key, InternalKeyComparator, ValueType, MAX_SEQUENCE,
    };

    /// An internal key: `user_key` + 8-byte trailer `(seq << 8) | type` (1 = value, 0 = deletion).
    pub fn internal_key(user_key: &[u8], seq: u64, is_value: bool) -> Vec<u8> {
        let t = if is_value {
            ValueType::Value
        } else {
            ValueType::Deletion
        };
        internal_key::internal_key(user_key, seq, t)
    }

    fn options(
        compression: CompressionType,
        block_size: usize,
        restart_interval: usize,
        filter_bits: Option<usize>,
    ) -> TableOptions {
        TableOptions {
            icmp: InternalKeyComparator::new(BytewiseComparator::shared()),
            block_size,
            block_restart_interval: restart_interval,
            compression,
            filter_policy: filter_bits
                .map(|bits| Arc::new(BloomFilterPolicy::new(bits)) as Arc<dyn FilterPolicy>),
            block_cache: None,
            paranoid_checks: false,
        }
    }

    /// Builds a table (bytewise comparator) from internal-key entries in increasing order, with
    /// a bloom filter of `filter_bits` bits per key when given.
    pub fn build_table(
        entries: &[(Vec<u8>, Vec<u8>)],
        compression: CompressionType,
        block_size: usize,
        restart_interval: usize,
        filter_bits: Option<usize>,
    ) -> Result<Vec<u8>> {
        let out = VecSink::new();
        let opts = options(compression, block_size, restart_interval, filter_bits);
        let mut builder = TableBuilder::new(opts, Box::new(out.clone()));
        for (key, value) in entries {
            builder.add(key, value)?;
        }
        builder.finish()?;
        Ok(out.contents())
    }

    /// A table opened from bytes (bytewise comparator, no block cache).
    pub struct TableFile {
        table: Arc<Table>,
    }

    /// The newest entry of a user key found by [`TableFile::get`].
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct TableEntry {
        /// The entry's sequence number.
        pub sequence: u64,
        /// False for a deletion marker.
        pub is_value: bool,
        /// The value (empty for a deletion marker).
        pub value: Vec<u8>,
    }

    /// Result of a point lookup.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct TableGet {
        /// The newest entry for the user key, if the table has one.
        pub found: Option<TableEntry>,
        /// True when the bloom filter ruled the key out (no data block was read).
        pub filtered: bool,
    }

    impl TableFile {
        /// Opens `bytes` as a table, using a bloom filter policy of `filter_bits` if given (the
        /// table's filter is used only when its name matches, as in a database).
        pub fn open(bytes: Vec<u8>, filter_bits: Option<usize>) -> Result<TableFile> {
            let opts = options(CompressionType::None, 4096, 16, filter_bits);
            let len = bytes.len() as u64;
            let table = Table::open(opts, Arc::new(VecFile::new(bytes)), len, "table".into())?;
            Ok(TableFile { table })
        }

        /// True when the table has a filter the reader uses.
        pub fn has_filter(&self) -> bool {
            self.table.has_filter()
        }

        /// Every internal key/value pair in order, checksums verified; also walks backwards
        /// and fails if the two directions disagree.
        pub fn entries(&self) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
            let read = BlockReads {
                verify_checksums: true,
                ..BlockReads::default()
            };
            let mut it = self.table.iter(read);
            let mut out = Vec::new();
            it.seek_to_first();
            while it.valid() {
                out.push((it.key().to_vec(), it.value().to_vec()));
                it.next();
            }
            it.status()?;
            let mut back = 0;
            it.seek_to_last();
            while it.valid() {
                back += 1;
                let expected = out.len().checked_sub(back).and_then(|i| out.get(i));
                if expected.map(|(k, v)| (&k[..], &v[..])) != Some((it.key(), it.value())) {
                    return Err(crate::error::Error::corruption(
                        "backward iteration disagrees with forward iteration",
                    ));
                }
                it.prev();
            }
            it.status()?;
            if back != out.len() {
                return Err(crate::error::Error::corruption(
                    "backward iteration saw a different number of entries",
                ));
            }
            Ok(out)
        }

        /// Looks `user_key` up at the newest sequence.
        pub fn get(&self, user_key: &[u8]) -> Result<TableGet> {
            let lookup = internal_key::lookup_key(user_key, MAX_SEQUENCE);
            let read = BlockReads {
                verify_checksums: true,
                ..BlockReads::default()
            };
            if !self.table.filter_may_match(&lookup)? {
                return Ok(TableGet {
                    found: None,
                    filtered: true,
                });
            }
            let found = self.table.get(read, &lookup, |key, value| {
                parse_internal_key(key)
                    .filter(|parsed| parsed.user_key == user_key)
                    .map(|parsed| TableEntry {
                        sequence: parsed.sequence,
                        is_value: parsed.value_type == ValueType::Value,
                        value: value.to_vec(),
                    })
            })?;
            Ok(TableGet {
                found: found.flatten(),
                filtered: false,
            })
        }
    }

    /// All internal key/value pairs of a table in order (checksums verified).
    pub fn read_table_entries(
        bytes: Vec<u8>,
        filter_bits: Option<usize>,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        TableFile::open(bytes, filter_bits)?.entries()
    }

    /// Point lookup of `user_key` in the table `bytes`.
    pub fn table_get(
        bytes: Vec<u8>,
        filter_bits: Option<usize>,
        user_key: &[u8],
    ) -> Result<TableGet> {
        TableFile::open(bytes, filter_bits)?.get(user_key)
    }

    /// Builds one block of bytewise-ordered entries (keys increasing).
    pub fn build_block(entries: &[(Vec<u8>, Vec<u8>)], restart_interval: usize) -> Vec<u8> {
        let mut b = BlockBuilder::new(restart_interval);
        for (k, v) in entries {
            b.add(k, v);
        }
        b.finish().to_vec()
    }

    /// Decodes a block of bytewise-ordered entries, walking it forwards, backwards and seeking
    /// to each key; errors on corruption.
    pub fn decode_block(bytes: Vec<u8>) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let block = Arc::new(Block::new(bytes, 0)?);
        let mut it = block.iter(KeyOrder::Bytewise);
        let mut out = Vec::new();
        it.seek_to_first();
        while it.valid() {
            out.push((it.key().to_vec(), it.value().to_vec()));
            it.next();
        }
        it.status()?;
        it.seek_to_last();
        while it.valid() {
            it.prev();
        }
        for (k, _) in &out {
            it.seek(k);
        }
        it.status()?;
        Ok(out)
    }

    /// Decodes a 48-byte footer: `(metaindex offset, size, index offset, size)`.
    pub fn decode_footer(bytes: &[u8]) -> Result<(u64, u64, u64, u64)> {
        let f = Footer::decode(bytes, 0)?;
        Ok((
            f.metaindex.offset,
            f.metaindex.size,
            f.index.offset,
            f.index.size,
        ))
    }

    /// Reads the block at `offset`/`size` of `file` (contents + trailer), decompressing it.
    pub fn read_block_at(file: &[u8], offset: u64, size: u64, verify: bool) -> Result<Vec<u8>> {
        let f = VecFile::new(file.to_vec());
        read_block(
            &f,
            file.len() as u64,
            &BlockHandle::new(offset, size),
            verify,
        )
    }

    /// Asks a filter block (bloom policy with `bits_per_key`) whether `user_key` may be in the
    /// data block at `block_offset`.
    pub fn filter_block_may_match(
        data: Vec<u8>,
        bits_per_key: usize,
        block_offset: u64,
        user_key: &[u8],
    ) -> bool {
        FilterBlockReader::new(Arc::new(BloomFilterPolicy::new(bits_per_key)), data)
            .key_may_match(block_offset, user_key)
    }
}
