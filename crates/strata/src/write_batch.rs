//! [`WriteBatch`]: an atomic group of updates, kept in the byte form the write-ahead log stores.
//!
//! Layout (all integers little-endian), the payload of one WAL record:
//!
//! ```text
//! sequence: fixed64   sequence number of the first record (set by the write path)
//! count:    fixed32   number of records
//! records:  count x one of
//!   0 key                     delete
//!   1 key value               put
//!   2 start end               range deletion of [start, end)      (extension range-deletes)
//!   3 key value expires_at    put of a value that expires         (extension expiring-keys)
//!   4 key value ttl           put with a time to live, unresolved (never in a log)
//!   5 key pointer             put of a value kept in a value file (extension
//!                             value-separation; only the write path makes it)
//! ```
//!
//! Keys, values and range bounds are length-prefixed (a varint32 length, then the bytes);
//! `expires_at` is a fixed64 of microseconds since the Unix epoch (the `Env`'s clock) at and
//! after which the value is gone, and `ttl` a fixed64 of microseconds. Tags 0 and 1 are
//! LevelDB's; tags 2 and 3 are format extensions (docs/design.md, section 4) that only a
//! database recording the extension holds. Tag 4 is what [`WriteBatch::put_with_ttl`] records:
//! the write path turns it into tag 3 with the time of the write before the batch is logged.
//!
//! A new batch is the 12-byte header of zeros. Records take sequence numbers `sequence`,
//! `sequence + 1`, ... in order, one each (a range deletion too). Building a batch never fails;
//! decoding ([`WriteBatch::iterate`], [`WriteBatch::iter`]) checks every record and the count
//! and reports a bad batch as `Error::Corruption` with the byte offset within the batch, never
//! panicking.
//!
//! Keys and values longer than `u32::MAX` bytes cannot be encoded: `put`/`delete` of one records
//! nothing and marks the batch, and decoding it then fails with `InvalidArgument`.

use std::time::Duration;

use crate::error::{Error, Result};
use crate::extension::{Extension, Extensions};
use crate::util::coding::{
    decode_fixed32, decode_fixed64, get_fixed64, get_length_prefixed, put_fixed64,
    put_length_prefixed,
};

/// Size of the header: sequence (8) and count (4). On-disk: never change.
pub(crate) const HEADER_SIZE: usize = 12;
/// Offset of the count within the header. On-disk: never change.
const COUNT_OFFSET: usize = 8;
/// Record tag of a deletion. On-disk: never change.
const TAG_DELETE: u8 = 0;
/// Record tag of a put. On-disk: never change.
const TAG_PUT: u8 = 1;
/// Record tag of a range deletion (extension `range-deletes`). On-disk: never change.
const TAG_DELETE_RANGE: u8 = 2;
/// Record tag of a put of a value that expires (extension `expiring-keys`). On-disk: never
/// change.
const TAG_PUT_EXPIRING: u8 = 3;
/// Record tag of a put with a time to live not yet turned into an expiry time: only in batches
/// not yet written, never in a log.
const TAG_PUT_TTL: u8 = 4;
/// Record tag of a put whose value is in a value file: the record holds the pointer
/// (extension `value-separation`; see `vlog`). On-disk: never change.
const TAG_PUT_SEPARATED: u8 = 5;

/// An atomic group of updates, applied all or nothing by a write.
///
/// Not synchronized: share it by reference or clone it. Invariant: `rep` is at least
/// `HEADER_SIZE` (12) bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteBatch {
    rep: Vec<u8>,
    /// Set when a key or value too long to encode was dropped.
    oversized: bool,
    /// The format extensions the records added through the API use. (A batch decoded from a
    /// log does not know; `check_logged_batch` looks at its records.)
    extensions: Extensions,
    /// Set when a record added through the API is a put with a time to live (tag 4).
    has_ttl: bool,
}

/// One update of a batch, as [`WriteBatch::iter`] yields it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BatchOp<'a> {
    /// Set `key` to `value`.
    Put {
        /// The key.
        key: &'a [u8],
        /// The value.
        value: &'a [u8],
    },
    /// Remove `key`.
    Delete {
        /// The key.
        key: &'a [u8],
    },
    /// Remove every key `k` with `start <= k < end` (see [`WriteBatch::delete_range`]).
    DeleteRange {
        /// The first key removed.
        start: &'a [u8],
        /// The first key past the range, kept.
        end: &'a [u8],
    },
    /// Set `key` to `value` for `ttl` from the write on (see [`WriteBatch::put_with_ttl`]).
    PutWithTtl {
        /// The key.
        key: &'a [u8],
        /// The value.
        value: &'a [u8],
        /// How long the value lives.
        ttl: Duration,
    },
    /// Set `key` to `value` until `expires_at_micros`, microseconds since the Unix epoch: what
    /// a [`PutWithTtl`](BatchOp::PutWithTtl) becomes when the batch is written.
    PutExpiring {
        /// The key.
        key: &'a [u8],
        /// The value.
        value: &'a [u8],
        /// When the value is gone.
        expires_at_micros: u64,
    },
    /// Set `key` to the value `pointer` names in a value file: what the write path makes of a
    /// large put on a database with [`Options::value_separation`](crate::Options).
    PutSeparated {
        /// The key.
        key: &'a [u8],
        /// Where the value is (an encoding of the engine's own).
        pointer: &'a [u8],
    },
}

/// Receives the updates of a batch, in order, from [`WriteBatch::iterate`].
///
/// The updates of format extensions have default methods that refuse them: `iterate` then
/// fails with `NotSupported` at that update, so a handler that does not know them never drops
/// one silently.
pub trait WriteBatchHandler {
    /// A put of `key` to `value`.
    fn put(&mut self, key: &[u8], value: &[u8]);
    /// A deletion of `key`.
    fn delete(&mut self, key: &[u8]);
    /// A deletion of the keys in `[start, end)`.
    fn delete_range(&mut self, start: &[u8], end: &[u8]) -> Result<()> {
        let _ = (start, end);
        Err(unhandled("a range deletion"))
    }
    /// A put of `key` to `value` for `ttl` from the write on.
    fn put_with_ttl(&mut self, key: &[u8], value: &[u8], ttl: Duration) -> Result<()> {
        let _ = (key, value, ttl);
        Err(unhandled("a put with a time to live"))
    }
    /// A put of `key` to `value` until `expires_at_micros` (microseconds since the Unix epoch).
    fn put_expiring(&mut self, key: &[u8], value: &[u8], expires_at_micros: u64) -> Result<()> {
        let _ = (key, value, expires_at_micros);
        Err(unhandled("a put of an expiring value"))
    }
    /// A put of `key` to the value `pointer` names in a value file.
    fn put_separated(&mut self, key: &[u8], pointer: &[u8]) -> Result<()> {
        let _ = (key, pointer);
        Err(unhandled("a put of a separated value"))
    }
}

fn unhandled(what: &str) -> Error {
    Error::NotSupported(format!(
        "the write batch handler does not take {what} (WriteBatchHandler's default method)"
    ))
}

impl Default for WriteBatch {
    fn default() -> WriteBatch {
        WriteBatch::new()
    }
}

/// A duration in microseconds, saturating at `u64::MAX` (about 584,000 years).
fn duration_micros(duration: Duration) -> u64 {
    u64::try_from(duration.as_micros()).unwrap_or(u64::MAX)
}

/// True when `value` can be length-prefixed with a varint32.
fn encodable(value: &[u8]) -> bool {
    u32::try_from(value.len()).is_ok()
}

/// True when `key` fits too once the engine appends its 8-byte sequence trailer (the
/// internal key must still fit a varint32 length in memtables and tables).
fn key_encodable(key: &[u8]) -> bool {
    key.len()
        .checked_add(8)
        .is_some_and(|n| u32::try_from(n).is_ok())
}

impl WriteBatch {
    /// An empty batch.
    pub fn new() -> WriteBatch {
        WriteBatch {
            rep: vec![0; HEADER_SIZE],
            oversized: false,
            extensions: Extensions::NONE,
            has_ttl: false,
        }
    }

    /// An empty batch with room for about `bytes` bytes of updates without reallocating.
    pub fn with_capacity(bytes: usize) -> WriteBatch {
        let mut rep = Vec::with_capacity(HEADER_SIZE + bytes);
        rep.resize(HEADER_SIZE, 0);
        WriteBatch {
            rep,
            oversized: false,
            extensions: Extensions::NONE,
            has_ttl: false,
        }
    }

    /// Adds a put of `key` to `value`.
    pub fn put(&mut self, key: &[u8], value: &[u8]) {
        if !key_encodable(key) || !encodable(value) {
            self.oversized = true;
            return;
        }
        self.rep.push(TAG_PUT);
        put_length_prefixed(&mut self.rep, key);
        put_length_prefixed(&mut self.rep, value);
        self.set_count(self.count().wrapping_add(1));
    }

    /// Adds a deletion of `key`.
    pub fn delete(&mut self, key: &[u8]) {
        if !key_encodable(key) {
            self.oversized = true;
            return;
        }
        self.rep.push(TAG_DELETE);
        put_length_prefixed(&mut self.rep, key);
        self.set_count(self.count().wrapping_add(1));
    }

    /// Adds a deletion of every key `k` with `start <= k < end` in the comparator's order: one
    /// record, whatever the number of keys it deletes. A range deletion is an extension of
    /// LevelDB's format: writing the batch fails with `NotSupported` unless the database was
    /// opened with `Options::range_deletes`, and with `InvalidArgument` when `start` is after
    /// `end` (`start == end` deletes nothing).
    pub fn delete_range(&mut self, start: &[u8], end: &[u8]) {
        if !key_encodable(start) || !key_encodable(end) {
            self.oversized = true;
            return;
        }
        self.rep.push(TAG_DELETE_RANGE);
        put_length_prefixed(&mut self.rep, start);
        put_length_prefixed(&mut self.rep, end);
        self.set_count(self.count().wrapping_add(1));
        self.extensions.insert(Extension::RangeDeletes);
    }

    /// Adds a put of `key` to `value` that expires `ttl` after the write: from then on no read,
    /// iterator or `get_many` returns it (the key reads as deleted, its older values too), and
    /// compactions reclaim its space. The time comes from the database's `Env`
    /// ([`Env::now_micros`](crate::Env::now_micros)) when the batch is written. Expiring keys
    /// are an extension of LevelDB's format: writing the batch fails with `NotSupported` unless
    /// the database was opened with `Options::expiring_keys`.
    pub fn put_with_ttl(&mut self, key: &[u8], value: &[u8], ttl: Duration) {
        if !key_encodable(key) || !encodable(value) {
            self.oversized = true;
            return;
        }
        self.rep.push(TAG_PUT_TTL);
        put_length_prefixed(&mut self.rep, key);
        put_length_prefixed(&mut self.rep, value);
        put_fixed64(&mut self.rep, duration_micros(ttl));
        self.set_count(self.count().wrapping_add(1));
        self.extensions.insert(Extension::ExpiringKeys);
        self.has_ttl = true;
    }

    /// Removes every update (and the sequence number), keeping the allocation.
    pub fn clear(&mut self) {
        self.rep.clear();
        self.rep.resize(HEADER_SIZE, 0);
        self.oversized = false;
        self.extensions = Extensions::NONE;
        self.has_ttl = false;
    }

    /// Number of updates.
    pub fn len(&self) -> usize {
        self.count() as usize
    }

    /// True when the batch holds no update.
    pub fn is_empty(&self) -> bool {
        self.count() == 0
    }

    /// Size of the encoded batch in bytes (what the write-ahead log will store).
    pub fn approximate_size(&self) -> usize {
        self.rep.len()
    }

    /// Adds every update of `other` after this batch's own.
    pub fn append(&mut self, other: &WriteBatch) {
        self.set_count(self.count().wrapping_add(other.count()));
        self.rep.extend_from_slice(other.records());
        self.oversized |= other.oversized;
        self.extensions = self.extensions.union(other.extensions);
        self.has_ttl |= other.has_ttl;
    }

    /// Hands every update, in order, to `handler`.
    ///
    /// Fails with `Corruption` (offset within the batch) on a malformed record or a count that
    /// does not match the records; the updates before the bad one have been handed over by then.
    pub fn iterate(&self, handler: &mut dyn WriteBatchHandler) -> Result<()> {
        for op in self.iter() {
            match op? {
                BatchOp::Put { key, value } => handler.put(key, value),
                BatchOp::Delete { key } => handler.delete(key),
                BatchOp::DeleteRange { start, end } => handler.delete_range(start, end)?,
                BatchOp::PutWithTtl { key, value, ttl } => handler.put_with_ttl(key, value, ttl)?,
                BatchOp::PutExpiring {
                    key,
                    value,
                    expires_at_micros,
                } => handler.put_expiring(key, value, expires_at_micros)?,
                BatchOp::PutSeparated { key, pointer } => handler.put_separated(key, pointer)?,
            }
        }
        Ok(())
    }

    /// The updates in order. After an error (see [`WriteBatch::iterate`]) the iterator ends.
    pub fn iter(&self) -> impl Iterator<Item = Result<BatchOp<'_>>> + '_ {
        BatchIter {
            rest: self.rep.get(HEADER_SIZE..).unwrap_or_default(),
            total: self.rep.len(),
            declared: self.count(),
            seen: 0,
            state: if self.oversized {
                IterState::Oversized
            } else {
                IterState::Records
            },
        }
    }

    /// True when a key or value too long to encode was dropped: the batch must not be written.
    pub(crate) fn is_oversized(&self) -> bool {
        self.oversized
    }

    /// The format extensions the records added through the API use.
    pub(crate) fn extensions(&self) -> Extensions {
        self.extensions
    }

    /// This batch with every put with a time to live (tag 4) turned into a put that expires
    /// at the time `now_micros` gives plus its time to live (tag 3, saturating): what the write
    /// path logs.
    /// Other records are copied unchanged. `None` when the batch holds no such put.
    pub(crate) fn with_expiry_times(
        &self,
        now_micros: impl FnOnce() -> u64,
    ) -> Result<Option<WriteBatch>> {
        if !self.has_ttl {
            return Ok(None);
        }
        let now_micros = now_micros();
        self.rebuilt(|out, op| match op {
            BatchOp::PutWithTtl { key, value, ttl } => {
                out.put_expiring(key, value, now_micros.saturating_add(duration_micros(ttl)))
            }
            other => out.push_op(other),
        })
        .map(Some)
    }

    /// This batch with the value of every put of at least `min_value_size` bytes replaced by
    /// a pointer (tag 5): `store` is given those puts' keys and values, in order, and returns
    /// their pointers' encodings in the same order. `None` when the batch holds no such put.
    pub(crate) fn with_separated_values(
        &self,
        min_value_size: usize,
        store: impl FnOnce(&[(&[u8], &[u8])]) -> Result<Vec<Vec<u8>>>,
    ) -> Result<Option<WriteBatch>> {
        let mut large = Vec::new();
        for op in self.iter() {
            if let BatchOp::Put { key, value } = op? {
                if value.len() >= min_value_size {
                    large.push((key, value));
                }
            }
        }
        if large.is_empty() {
            return Ok(None);
        }
        let pointers = store(&large)?;
        if pointers.len() != large.len() {
            return Err(Error::InvalidArgument(format!(
                "{} values were stored for {} separated puts",
                pointers.len(),
                large.len()
            )));
        }
        let mut pointers = pointers.into_iter();
        self.rebuilt(|out, op| match op {
            BatchOp::Put { key, value } if value.len() >= min_value_size => {
                let pointer = pointers.next().unwrap_or_default();
                out.put_separated(key, &pointer);
            }
            other => out.push_op(other),
        })
        .map(Some)
    }

    /// A copy of this batch (its sequence number and count too) whose records `rewrite` adds,
    /// given each of this batch's in order.
    fn rebuilt(&self, mut rewrite: impl FnMut(&mut WriteBatch, BatchOp<'_>)) -> Result<WriteBatch> {
        let mut out = WriteBatch::with_capacity(self.rep.len());
        out.rep.truncate(0);
        out.rep.extend_from_slice(&self.rep[..HEADER_SIZE]);
        out.extensions = self.extensions;
        for op in self.iter() {
            rewrite(&mut out, op?);
        }
        out.set_count(self.count());
        Ok(out)
    }

    /// Adds `op` as it is.
    fn push_op(&mut self, op: BatchOp<'_>) {
        match op {
            BatchOp::Put { key, value } => self.put(key, value),
            BatchOp::Delete { key } => self.delete(key),
            BatchOp::DeleteRange { start, end } => self.delete_range(start, end),
            BatchOp::PutWithTtl { key, value, ttl } => self.put_with_ttl(key, value, ttl),
            BatchOp::PutExpiring {
                key,
                value,
                expires_at_micros,
            } => self.put_expiring(key, value, expires_at_micros),
            BatchOp::PutSeparated { key, pointer } => self.put_separated(key, pointer),
        }
    }

    /// Adds a put whose value is in a value file at `pointer` (tag 5).
    pub(crate) fn put_separated(&mut self, key: &[u8], pointer: &[u8]) {
        self.rep.push(TAG_PUT_SEPARATED);
        put_length_prefixed(&mut self.rep, key);
        put_length_prefixed(&mut self.rep, pointer);
        self.set_count(self.count().wrapping_add(1));
        self.extensions.insert(Extension::ValueSeparation);
    }

    /// Adds a put of a value that expires at `expires_at_micros` (tag 3).
    pub(crate) fn put_expiring(&mut self, key: &[u8], value: &[u8], expires_at_micros: u64) {
        self.rep.push(TAG_PUT_EXPIRING);
        put_length_prefixed(&mut self.rep, key);
        put_length_prefixed(&mut self.rep, value);
        put_fixed64(&mut self.rep, expires_at_micros);
        self.set_count(self.count().wrapping_add(1));
        self.extensions.insert(Extension::ExpiringKeys);
    }

    /// The encoded batch: header and records.
    pub(crate) fn contents(&self) -> &[u8] {
        &self.rep
    }

    /// The encoded records, without the header.
    pub(crate) fn records(&self) -> &[u8] {
        self.rep.get(HEADER_SIZE..).unwrap_or_default()
    }

    /// A batch from its encoded form (a WAL record's payload). Only the header's length is
    /// checked here; the records are checked as they are decoded.
    pub(crate) fn from_contents(contents: Vec<u8>) -> Result<WriteBatch> {
        if contents.len() < HEADER_SIZE {
            return Err(Error::corruption_at(
                0,
                format!(
                    "write batch of {} bytes is shorter than its {HEADER_SIZE}-byte header",
                    contents.len()
                ),
            ));
        }
        Ok(WriteBatch {
            rep: contents,
            oversized: false,
            extensions: Extensions::NONE,
            has_ttl: false,
        })
    }

    /// Sequence number of the first update.
    pub(crate) fn sequence(&self) -> u64 {
        decode_fixed64(&self.rep).unwrap_or(0)
    }

    #[cfg(any(test, feature = "testing"))]
    pub(crate) fn set_sequence(&mut self, sequence: u64) {
        if let Some(field) = self.rep.get_mut(..COUNT_OFFSET) {
            field.copy_from_slice(&sequence.to_le_bytes());
        }
    }

    /// The record count stored in the header.
    pub(crate) fn count(&self) -> u32 {
        self.rep
            .get(COUNT_OFFSET..)
            .and_then(decode_fixed32)
            .unwrap_or(0)
    }

    pub(crate) fn set_count(&mut self, count: u32) {
        if let Some(field) = self.rep.get_mut(COUNT_OFFSET..HEADER_SIZE) {
            field.copy_from_slice(&count.to_le_bytes());
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IterState {
    /// The batch dropped an unencodable update: report it, then end.
    Oversized,
    /// Decoding records.
    Records,
    /// Finished or failed.
    Done,
}

/// Iterator over the updates of a [`WriteBatch`]; see [`WriteBatch::iter`].
struct BatchIter<'a> {
    /// The records not yet decoded.
    rest: &'a [u8],
    /// Length of the whole batch, to turn `rest` into offsets.
    total: usize,
    /// Count from the header.
    declared: u32,
    /// Records decoded so far.
    seen: u64,
    state: IterState,
}

impl<'a> BatchIter<'a> {
    fn offset(&self) -> u64 {
        (self.total - self.rest.len()) as u64
    }

    /// Decodes the record at the front of `rest`, or checks the count at the end.
    fn decode(&mut self) -> Result<Option<BatchOp<'a>>> {
        let start = self.offset();
        let Some((&tag, mut cursor)) = self.rest.split_first() else {
            if self.seen != u64::from(self.declared) {
                return Err(Error::corruption_at(
                    COUNT_OFFSET as u64,
                    format!(
                        "write batch header counts {} records but holds {}",
                        self.declared, self.seen
                    ),
                ));
            }
            return Ok(None);
        };
        let truncated = |what: &str| {
            Error::corruption_at(start, format!("write batch record with truncated {what}"))
        };
        let op = match tag {
            TAG_PUT => {
                let key = get_length_prefixed(&mut cursor).ok_or_else(|| truncated("put key"))?;
                let value =
                    get_length_prefixed(&mut cursor).ok_or_else(|| truncated("put value"))?;
                BatchOp::Put { key, value }
            }
            TAG_DELETE => {
                let key =
                    get_length_prefixed(&mut cursor).ok_or_else(|| truncated("delete key"))?;
                BatchOp::Delete { key }
            }
            TAG_DELETE_RANGE => {
                let start = get_length_prefixed(&mut cursor)
                    .ok_or_else(|| truncated("range deletion start"))?;
                let end = get_length_prefixed(&mut cursor)
                    .ok_or_else(|| truncated("range deletion end"))?;
                BatchOp::DeleteRange { start, end }
            }
            TAG_PUT_EXPIRING | TAG_PUT_TTL => {
                let key = get_length_prefixed(&mut cursor).ok_or_else(|| truncated("put key"))?;
                let value =
                    get_length_prefixed(&mut cursor).ok_or_else(|| truncated("put value"))?;
                let micros = get_fixed64(&mut cursor).ok_or_else(|| truncated("put time"))?;
                if tag == TAG_PUT_TTL {
                    BatchOp::PutWithTtl {
                        key,
                        value,
                        ttl: Duration::from_micros(micros),
                    }
                } else {
                    BatchOp::PutExpiring {
                        key,
                        value,
                        expires_at_micros: micros,
                    }
                }
            }
            TAG_PUT_SEPARATED => {
                let key = get_length_prefixed(&mut cursor).ok_or_else(|| truncated("put key"))?;
                let pointer =
                    get_length_prefixed(&mut cursor).ok_or_else(|| truncated("value pointer"))?;
                BatchOp::PutSeparated { key, pointer }
            }
            other => {
                return Err(Error::corruption_at(
                    start,
                    format!("write batch record with unknown tag {other}"),
                ))
            }
        };
        self.rest = cursor;
        self.seen += 1;
        Ok(Some(op))
    }
}

impl<'a> Iterator for BatchIter<'a> {
    type Item = Result<BatchOp<'a>>;

    fn next(&mut self) -> Option<Result<BatchOp<'a>>> {
        match self.state {
            IterState::Done => None,
            IterState::Oversized => {
                self.state = IterState::Done;
                Some(Err(Error::InvalidArgument(
                    "write batch dropped a key or value longer than 4 GiB".to_string(),
                )))
            }
            IterState::Records => {
                let item = self.decode().transpose();
                if !matches!(item, Some(Ok(_))) {
                    self.state = IterState::Done;
                }
                item
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// An owned update: (is put, key, value).
    type Op = (bool, Vec<u8>, Vec<u8>);

    /// Records what a handler is given, as owned ops.
    #[derive(Default)]
    struct Recorder(Vec<Op>);

    impl WriteBatchHandler for Recorder {
        fn put(&mut self, key: &[u8], value: &[u8]) {
            self.0.push((true, key.to_vec(), value.to_vec()));
        }
        fn delete(&mut self, key: &[u8]) {
            self.0.push((false, key.to_vec(), Vec::new()));
        }
    }

    fn recorded(batch: &WriteBatch) -> Result<Vec<Op>> {
        let mut recorder = Recorder::default();
        batch.iterate(&mut recorder)?;
        Ok(recorder.0)
    }

    fn corruption_offset(err: &Error) -> Option<u64> {
        err.corruption_details().and_then(|c| c.offset)
    }

    #[test]
    fn new_batch_is_a_zero_header() {
        let batch = WriteBatch::new();
        assert_eq!(batch.contents(), &[0u8; 12]);
        assert!(batch.is_empty());
        assert_eq!(batch.len(), 0);
        assert_eq!(batch.approximate_size(), 12);
        assert_eq!(WriteBatch::default(), batch);
        assert!(recorded(&batch).unwrap().is_empty());
    }

    #[test]
    fn encoding_matches_leveldb_bytes() {
        let mut batch = WriteBatch::new();
        batch.put(b"foo", b"bar");
        batch.delete(b"box");
        batch.set_sequence(0x0102_0304_0506_0708);
        let mut expected = vec![8, 7, 6, 5, 4, 3, 2, 1, 2, 0, 0, 0];
        expected.extend_from_slice(&[1, 3, b'f', b'o', b'o', 3, b'b', b'a', b'r']);
        expected.extend_from_slice(&[0, 3, b'b', b'o', b'x']);
        assert_eq!(batch.contents(), &expected[..]);
        assert_eq!(batch.sequence(), 0x0102_0304_0506_0708);
        assert_eq!(batch.count(), 2);
        assert_eq!(batch.len(), 2);
    }

    #[test]
    fn iterate_and_iter_agree_in_order() {
        let mut batch = WriteBatch::new();
        batch.put(b"k1", b"v1");
        batch.delete(b"k2");
        batch.put(b"", b"");
        let ops: Vec<BatchOp<'_>> = batch.iter().collect::<Result<_>>().unwrap();
        assert_eq!(
            ops,
            [
                BatchOp::Put {
                    key: b"k1",
                    value: b"v1"
                },
                BatchOp::Delete { key: b"k2" },
                BatchOp::Put {
                    key: b"",
                    value: b""
                },
            ]
        );
        assert_eq!(
            recorded(&batch).unwrap(),
            [
                (true, b"k1".to_vec(), b"v1".to_vec()),
                (false, b"k2".to_vec(), vec![]),
                (true, vec![], vec![]),
            ]
        );
    }

    #[test]
    fn clear_resets_everything() {
        let mut batch = WriteBatch::new();
        batch.put(b"a", b"b");
        batch.set_sequence(99);
        batch.clear();
        assert_eq!(batch, WriteBatch::new());
    }

    #[test]
    fn append_concatenates_and_keeps_own_sequence() {
        let mut a = WriteBatch::new();
        a.set_sequence(200);
        a.put(b"a", b"1");
        let mut b = WriteBatch::new();
        b.set_sequence(100);
        b.delete(b"b");
        b.put(b"c", b"3");
        a.append(&b);
        assert_eq!(a.sequence(), 200);
        assert_eq!(a.len(), 3);
        assert_eq!(
            recorded(&a).unwrap(),
            [
                (true, b"a".to_vec(), b"1".to_vec()),
                (false, b"b".to_vec(), vec![]),
                (true, b"c".to_vec(), b"3".to_vec()),
            ]
        );
        a.append(&WriteBatch::new());
        assert_eq!(a.len(), 3);
    }

    #[test]
    fn from_contents_rejects_a_short_header() {
        for len in 0..HEADER_SIZE {
            let err = WriteBatch::from_contents(vec![0; len]).unwrap_err();
            assert!(err.is_corruption());
        }
        let batch = WriteBatch::from_contents(vec![0; HEADER_SIZE]).unwrap();
        assert!(batch.is_empty());
    }

    #[test]
    fn count_mismatch_is_corruption_at_the_count() {
        let mut batch = WriteBatch::new();
        batch.put(b"a", b"b");
        batch.set_count(2);
        let err = recorded(&batch).unwrap_err();
        assert!(err.is_corruption());
        assert_eq!(corruption_offset(&err), Some(8));
        batch.set_count(0);
        assert_eq!(corruption_offset(&recorded(&batch).unwrap_err()), Some(8));
    }

    #[test]
    fn bad_tag_is_corruption_at_its_record() {
        let mut batch = WriteBatch::new();
        batch.put(b"a", b"b");
        let mut bytes = batch.contents().to_vec();
        bytes.push(7);
        let batch = WriteBatch::from_contents(bytes).unwrap();
        let mut iter = batch.iter();
        assert!(matches!(iter.next(), Some(Ok(BatchOp::Put { .. }))));
        let err = iter.next().unwrap().unwrap_err();
        assert_eq!(corruption_offset(&err), Some(17));
        assert!(err.to_string().contains("unknown tag 7"), "{err}");
        assert!(iter.next().is_none());
    }

    #[test]
    fn truncated_records_are_corruption() {
        let mut batch = WriteBatch::new();
        batch.delete(b"first");
        batch.put(b"key", b"value");
        let full = batch.contents().to_vec();
        let second_record = 12 + 1 + 1 + 5;
        for cut in second_record + 1..full.len() {
            let batch = WriteBatch::from_contents(full[..cut].to_vec()).unwrap();
            let err = recorded(&batch).unwrap_err();
            assert_eq!(
                corruption_offset(&err),
                Some(second_record as u64),
                "cut {cut}"
            );
            assert!(err.to_string().contains("truncated"), "{err}");
        }
    }

    #[test]
    fn handler_sees_records_before_the_bad_one() {
        let mut batch = WriteBatch::new();
        batch.put(b"ok", b"1");
        let mut bytes = batch.contents().to_vec();
        bytes.extend_from_slice(&[TAG_DELETE, 10, b'x']);
        let batch = WriteBatch::from_contents(bytes).unwrap();
        let mut recorder = Recorder::default();
        assert!(batch.iterate(&mut recorder).is_err());
        assert_eq!(recorder.0, [(true, b"ok".to_vec(), b"1".to_vec())]);
    }

    #[test]
    fn a_dropped_oversized_update_fails_decoding() {
        // A 4 GiB key cannot be built in a test; mark the batch as `put` would.
        let mut batch = WriteBatch::new();
        batch.put(b"a", b"b");
        batch.oversized = true;
        let err = recorded(&batch).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)));
        let mut other = WriteBatch::new();
        other.append(&batch);
        assert!(matches!(
            other.iter().next(),
            Some(Err(Error::InvalidArgument(_)))
        ));
        other.clear();
        assert!(recorded(&other).unwrap().is_empty());
    }

    fn op_strategy() -> impl Strategy<Value = Op> {
        (
            any::<bool>(),
            proptest::collection::vec(any::<u8>(), 0..40),
            proptest::collection::vec(any::<u8>(), 0..300),
        )
            .prop_map(|(put, k, v)| (put, k, if put { v } else { Vec::new() }))
    }

    fn build(ops: &[Op]) -> WriteBatch {
        let mut batch = WriteBatch::new();
        for (put, key, value) in ops {
            if *put {
                batch.put(key, value);
            } else {
                batch.delete(key);
            }
        }
        batch
    }

    proptest! {
        #[test]
        fn round_trips_through_contents(
            ops in proptest::collection::vec(op_strategy(), 0..30),
            sequence in any::<u64>(),
        ) {
            let mut batch = build(&ops);
            batch.set_sequence(sequence);
            let decoded = WriteBatch::from_contents(batch.contents().to_vec()).unwrap();
            prop_assert_eq!(decoded.sequence(), sequence);
            prop_assert_eq!(decoded.len(), ops.len());
            prop_assert_eq!(recorded(&decoded).unwrap(), ops);
        }

        #[test]
        fn append_equals_building_in_one(
            a in proptest::collection::vec(op_strategy(), 0..10),
            b in proptest::collection::vec(op_strategy(), 0..10),
        ) {
            let mut left = build(&a);
            left.append(&build(&b));
            let all: Vec<_> = a.iter().chain(b.iter()).cloned().collect();
            let whole = build(&all);
            prop_assert_eq!(left.contents(), whole.contents());
        }

        #[test]
        fn decoding_arbitrary_bytes_never_panics(
            bytes in proptest::collection::vec(any::<u8>(), 0..200),
        ) {
            if let Ok(batch) = WriteBatch::from_contents(bytes.clone()) {
                let _ = recorded(&batch);
                for op in batch.iter() {
                    if let Err(err) = op {
                        let offset = corruption_offset(&err).unwrap();
                        prop_assert!(offset <= bytes.len() as u64);
                    }
                }
            } else {
                prop_assert!(bytes.len() < HEADER_SIZE);
            }
        }

        #[test]
        fn decoding_mutated_batches_never_panics(
            ops in proptest::collection::vec(op_strategy(), 1..10),
            flips in proptest::collection::vec((any::<proptest::sample::Index>(), any::<u8>()), 1..4),
            cut in any::<proptest::sample::Index>(),
        ) {
            let mut bytes = build(&ops).contents().to_vec();
            for (at, byte) in flips {
                let i = at.index(bytes.len());
                bytes[i] ^= byte;
            }
            let keep = HEADER_SIZE + cut.index(bytes.len() - HEADER_SIZE + 1);
            bytes.truncate(keep);
            let batch = WriteBatch::from_contents(bytes).unwrap();
            let ok = batch.iter().filter(|op| op.is_ok()).count();
            prop_assert!(ok <= batch.approximate_size());
            let _ = recorded(&batch);
        }
    }
}
