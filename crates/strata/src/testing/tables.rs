//! Whole tables over the bytewise comparator: built from entries, opened from bytes, read back
//! in both directions, and looked up with the bloom filter as a database uses it.

use std::sync::Arc;

use super::forward_entries;
use crate::env::vec_files::{VecFile, VecSink};
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::table::builder::TableBuilder;
use crate::table::format::CompressionType;
use crate::table::reader::Table;
use crate::table::{BlockReads, TableOptions};
use crate::util::bloom::{BloomFilterPolicy, FilterPolicy};
use crate::util::comparator::BytewiseComparator;
use crate::util::internal_key::{self, parse_internal_key, InternalKeyComparator, ValueType};

/// The largest sequence number an internal key holds (56 bits).
pub const MAX_SEQUENCE: u64 = internal_key::MAX_SEQUENCE;

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
        range_deletions: false,
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
        let out = forward_entries(&mut it)?;
        let mut back = 0;
        it.seek_to_last();
        while it.valid() {
            back += 1;
            let expected = out.len().checked_sub(back).and_then(|i| out.get(i));
            if expected.map(|(k, v)| (&k[..], &v[..])) != Some((it.key(), it.value())) {
                return Err(Error::corruption(
                    "backward iteration disagrees with forward iteration",
                ));
            }
            it.prev();
        }
        it.status()?;
        if back != out.len() {
            return Err(Error::corruption(
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
pub fn table_get(bytes: Vec<u8>, filter_bits: Option<usize>, user_key: &[u8]) -> Result<TableGet> {
    TableFile::open(bytes, filter_bits)?.get(user_key)
}
