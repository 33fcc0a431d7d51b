//! Internals exposed to fuzz targets, benches and interop tests (feature `testing`).
//! Not part of the stable API.

use std::sync::Arc;

use parking_lot::Mutex;

use crate::error::{Error, Result};
use crate::log::vec_file::{VecSink, VecSource};
use crate::log::{LogReader, LogWriter, Reporter};
use crate::version::edit::VersionEdit;
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
    let reports = Arc::new(Mutex::new(Vec::new()));
    let mut reader = LogReader::new(
        Box::new(VecSource::new(bytes.to_vec())),
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

    use crate::error::Result;
    use crate::iter::InternalIterator;
    use crate::options::{CompressionType, ReadOptions};
    use crate::table::block::{Block, KeyOrder};
    use crate::table::block_builder::BlockBuilder;
    use crate::table::builder::TableBuilder;
    use crate::table::filter_block::FilterBlockReader;
    use crate::table::format::{read_block, BlockHandle, Footer};
    use crate::table::reader::Table;
    use crate::table::test_files::{SharedVecFile, VecFile};
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
        let out = SharedVecFile::new();
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
        pub sequence: u64,
        /// False for a deletion marker.
        pub is_value: bool,
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
            let read = ReadOptions {
                verify_checksums: true,
                ..ReadOptions::default()
            };
            let mut it = self.table.iter(&read);
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
            let read = ReadOptions {
                verify_checksums: true,
                ..ReadOptions::default()
            };
            if !self.table.filter_may_match(&lookup)? {
                return Ok(TableGet {
                    found: None,
                    filtered: true,
                });
            }
            let found = self.table.get(&read, &lookup, |key, value| {
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
