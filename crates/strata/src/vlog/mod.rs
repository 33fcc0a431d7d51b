//! Value files: values stored beside the tree (format extension `value-separation`,
//! docs/design.md section 4.4), and the pointers the tree holds in their place.
//!
//! A value file `NNNNNN.vlog` is a sequence of records, appended and never rewritten:
//!
//! ```text
//! record  := crc       fixed32   masked CRC32C of everything after it in the record
//!            key_len   varint32
//!            value_len varint32
//!            key       key_len bytes      (the user key: garbage collection finds the entry)
//!            value     value_len bytes    (the value as stored: raw, or Snappy-compressed)
//! ```
//!
//! An entry of value type 4 (`ValueType::ValuePointer`) holds a pointer to a record:
//!
//! ```text
//! pointer := file    varint64   value file number
//!            offset  varint64   file offset of the record
//!            length  varint32   the value's length (what `DB::head` reports)
//!            crc     fixed32    the record's crc, as the record stores it
//!            [stored varint32]  only for a compressed value (format extension
//!                               `value-compression`): the record's value_len, the
//!                               raw-Snappy encoding of the `length`-byte value
//! ```
//!
//! Without `stored`, the record's value is the value itself (value_len = `length`). The
//! record's size follows from the entry's user key and its value_len. Reading a pointer
//! ([`reader::ValueFiles::read`]) checks the record against it before returning a byte, and a
//! compressed value's decompressed length against `length`. A value is stored compressed only
//! when that saves at least 1/8 of it (as table blocks are), so `stored` < `length`.
//!
//! Files: `writer.rs` (appending records, syncing, starting files), `reader.rs` (reading
//! records by pointer, with the checks).
//!
//! A database appends to two files at a time, one per [`Lane`]: the values its writes separate,
//! and the values garbage collection relocates. Nothing on disk tells them apart.

pub(crate) mod reader;
pub(crate) mod writer;

use crate::error::Error;
use crate::extension::Extension;
use crate::util::coding::{
    decode_fixed32, get_varint32, get_varint64, put_fixed32, put_varint32, put_varint64,
};
use crate::util::{crc, snappy};

/// Whose values a value file receives. Each lane appends to a file of its own, with a writer of
/// its own: relocated values (cold ones, which outlive the writes around them) are not mixed
/// into the files new values fill (which the next overwrites turn into garbage), and syncing
/// relocated values before a compaction installs its tables neither waits for nor holds up
/// the writes' appends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lane {
    /// Values the database's writes separate.
    Writes = 0,
    /// Values garbage collection relocates.
    Relocations = 1,
}

impl Lane {
    /// Both lanes, in the order of their index (`lane as usize`).
    pub(crate) const ALL: [Lane; 2] = [Lane::Writes, Lane::Relocations];
}

/// Bytes of a record's crc. On-disk: never change.
pub(crate) const CRC_LEN: usize = 4;

/// Most bytes a record's header takes: the crc and two varint32 lengths (used by the tools'
/// walk over value files).
#[cfg(any(test, feature = "tools"))]
pub(crate) const MAX_HEADER_LEN: usize = CRC_LEN + 5 + 5;

/// Where a separated value is: what a type-4 entry holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ValuePointer {
    /// Number of the value file.
    pub(crate) file: u64,
    /// File offset of the record.
    pub(crate) offset: u64,
    /// Length of the value.
    pub(crate) length: u32,
    /// The record's masked crc.
    pub(crate) crc: u32,
    /// For a value stored Snappy-compressed: the bytes the record stores.
    pub(crate) stored: Option<u32>,
}

impl ValuePointer {
    /// Appends the pointer's encoding to `dst`.
    pub(crate) fn encode_to(&self, dst: &mut Vec<u8>) {
        put_varint64(dst, self.file);
        put_varint64(dst, self.offset);
        put_varint32(dst, self.length);
        put_fixed32(dst, self.crc);
        if let Some(stored) = self.stored {
            put_varint32(dst, stored);
        }
    }

    /// The pointer's encoding.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(24);
        self.encode_to(&mut out);
        out
    }

    /// Decodes a pointer that is exactly `src`; `None` when it does not parse.
    pub(crate) fn decode(mut src: &[u8]) -> Option<ValuePointer> {
        let file = get_varint64(&mut src)?;
        let offset = get_varint64(&mut src)?;
        let length = get_varint32(&mut src)?;
        let crc = decode_fixed32(src)?;
        let mut rest = src.get(CRC_LEN..)?;
        let stored = if rest.is_empty() {
            None
        } else {
            let stored = get_varint32(&mut rest)?;
            if !rest.is_empty() {
                return None;
            }
            Some(stored)
        };
        Some(ValuePointer {
            file,
            offset,
            length,
            crc,
            stored,
        })
    }

    /// The value whose record stores `stored` (the record matched to this pointer): `stored`
    /// itself, or for a compressed value its decompression, which must be `length` bytes.
    /// `Err` says why a compressed value is damaged.
    pub(crate) fn value_of(&self, stored: Vec<u8>) -> std::result::Result<Vec<u8>, String> {
        let Some(stored_len) = self.stored else {
            return Ok(stored);
        };
        // Checked before a buffer of `length` bytes is allocated: a damaged pointer may claim
        // up to 4 GiB.
        if stored_len >= self.length {
            return Err(format!(
                "compressed value of {stored_len} bytes is no shorter than its length {}",
                self.length
            ));
        }
        snappy::decompress_exact(&stored, self.length as usize)
    }

    /// The value's length as the tools show it: `5000 value bytes`, and for a compressed
    /// value `5000 value bytes, 2600 stored`.
    #[cfg(any(test, feature = "tools"))]
    pub(crate) fn length_shown(&self) -> String {
        match self.stored {
            None => format!("{} value bytes", self.length),
            Some(stored) => format!("{} value bytes, {stored} stored", self.length),
        }
    }

    /// The format extensions an entry holding the pointer `raw` uses: `value-separation`, and
    /// `value-compression` too when it names a compressed value.
    pub(crate) fn extensions(raw: &[u8]) -> &'static [Extension] {
        if ValuePointer::decode(raw).is_some_and(|p| p.stored.is_some()) {
            &[Extension::ValueSeparation, Extension::ValueCompression]
        } else {
            &[Extension::ValueSeparation]
        }
    }

    /// Bytes the record stores for the value: its compressed length, or its length.
    pub(crate) fn stored_len(&self) -> u32 {
        self.stored.unwrap_or(self.length)
    }

    /// The error for a pointer (of the entry of `key`) that does not parse.
    pub(crate) fn malformed(key: &[u8], pointer: &[u8]) -> Error {
        Error::corruption(format!(
            "the value pointer of key '{}' ({} bytes) does not parse",
            key.escape_ascii(),
            pointer.len()
        ))
    }

    /// Bytes of the record this pointer names, for an entry whose user key is `key_len`
    /// bytes.
    pub(crate) fn record_size(&self, key_len: usize) -> u64 {
        record_size(key_len, self.stored_len() as usize)
    }

    /// Why `record` (whose crc was verified) is not the record this pointer, the value of
    /// the entry of `user_key`, names: its crc is not the pointer's, or its key or value
    /// length are not the entry's. `None` when it is that record.
    pub(crate) fn mismatch(&self, user_key: &[u8], record: &Record<'_>) -> Option<String> {
        if record.crc != self.crc {
            return Some(format!(
                "value record is not the one the pointer names (crc {:#010x}, the pointer's \
                 {:#010x})",
                record.crc, self.crc
            ));
        }
        if record.key != user_key || record.value.len() != self.stored_len() as usize {
            return Some(format!(
                "value record holds key '{}' and {} value bytes, the entry key '{}' and {}",
                record.key.escape_ascii(),
                record.value.len(),
                user_key.escape_ascii(),
                self.stored_len()
            ));
        }
        None
    }
}

/// A value as a record stores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StoredValue<'a> {
    /// The record's value bytes.
    pub(crate) bytes: &'a [u8],
    /// For a Snappy-compressed value: its length once decompressed.
    pub(crate) raw_len: Option<u32>,
}

impl<'a> StoredValue<'a> {
    /// A value stored as it is.
    pub(crate) fn raw(bytes: &'a [u8]) -> StoredValue<'a> {
        StoredValue {
            bytes,
            raw_len: None,
        }
    }
}

/// Bytes a varint32 of `value` takes.
fn varint_len(mut value: usize) -> usize {
    let mut len = 1;
    while value >= 0x80 {
        value >>= 7;
        len += 1;
    }
    len
}

/// Bytes of the record of a `key_len`-byte key and a `value_len`-byte value.
pub(crate) fn record_size(key_len: usize, value_len: usize) -> u64 {
    (CRC_LEN + varint_len(key_len) + varint_len(value_len) + key_len + value_len) as u64
}

/// Appends the record of `key` and `value` to `dst` and returns its masked crc. Both are
/// shorter than 4 GiB (a write batch cannot hold longer ones).
pub(crate) fn encode_record(dst: &mut Vec<u8>, key: &[u8], value: &[u8]) -> u32 {
    let start = dst.len();
    put_fixed32(dst, 0);
    put_varint32(dst, key.len() as u32);
    put_varint32(dst, value.len() as u32);
    dst.extend_from_slice(key);
    dst.extend_from_slice(value);
    let masked = crc::mask(crc::crc32c(&dst[start + CRC_LEN..]));
    dst[start..start + CRC_LEN].copy_from_slice(&masked.to_le_bytes());
    masked
}

/// A record decoded from its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Record<'a> {
    pub(crate) crc: u32,
    pub(crate) key: &'a [u8],
    pub(crate) value: &'a [u8],
}

/// Why record bytes did not decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RecordError {
    /// The bytes end before the record does.
    Truncated,
    /// The stored crc is not the crc of the rest.
    Checksum,
}

/// The lengths the header at the start of `src` gives: `(header_len, key_len, value_len)`,
/// the record being their sum of bytes. `None` when `src` ends inside the header, or (when
/// it holds `MAX_HEADER_LEN` bytes or more) the header does not parse.
pub(crate) fn decode_header(src: &[u8]) -> Option<(usize, usize, usize)> {
    let mut rest = src.get(CRC_LEN..)?;
    let key_len = get_varint32(&mut rest)? as usize;
    let value_len = get_varint32(&mut rest)? as usize;
    Some((src.len() - rest.len(), key_len, value_len))
}

/// Decodes the record at the start of `src`, checking its crc; returns it with its size.
pub(crate) fn decode_record(src: &[u8]) -> Result<(Record<'_>, usize), RecordError> {
    let (record, size) = parse_record(src)?;
    let body = src.get(CRC_LEN..size).ok_or(RecordError::Truncated)?;
    if crc::mask(crc::crc32c(body)) != record.crc {
        return Err(RecordError::Checksum);
    }
    Ok((record, size))
}

/// [`decode_record`] without the crc check: what the bytes say, intact or not (a dump that
/// does not verify shows damaged records so).
pub(crate) fn parse_record(src: &[u8]) -> Result<(Record<'_>, usize), RecordError> {
    let crc = decode_fixed32(src).ok_or(RecordError::Truncated)?;
    let (header, key_len, value_len) = decode_header(src).ok_or(RecordError::Truncated)?;
    let key_end = header.checked_add(key_len).ok_or(RecordError::Truncated)?;
    let size = key_end
        .checked_add(value_len)
        .ok_or(RecordError::Truncated)?;
    let key = src.get(header..key_end).ok_or(RecordError::Truncated)?;
    let value = src.get(key_end..size).ok_or(RecordError::Truncated)?;
    Ok((Record { crc, key, value }, size))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_record_is_laid_out_byte_by_byte() {
        let mut out = Vec::new();
        let crc = encode_record(&mut out, b"k", b"value");
        assert_eq!(&out[4..], b"\x01\x05kvalue");
        assert_eq!(out[..4], crc.to_le_bytes());
        assert_eq!(crc, crc::mask(crc::crc32c(b"\x01\x05kvalue")));
        assert_eq!(record_size(1, 5), out.len() as u64);
        let (record, size) = decode_record(&out).unwrap();
        assert_eq!(
            (record.key, record.value, record.crc, size),
            (&b"k"[..], &b"value"[..], crc, out.len())
        );
    }

    #[test]
    fn a_pointer_is_laid_out_byte_by_byte() {
        let pointer = ValuePointer {
            file: 300,
            offset: 5,
            length: 128,
            crc: 0x0403_0201,
            stored: None,
        };
        assert_eq!(pointer.encode(), b"\xac\x02\x05\x80\x01\x01\x02\x03\x04");
        assert_eq!(ValuePointer::decode(&pointer.encode()), Some(pointer));
        assert_eq!(
            ValuePointer::decode(b"\xac\x02\x05\x80\x01\x01\x02\x03"),
            None
        );
        // A compressed value's pointer ends with the stored length.
        let compressed = ValuePointer {
            stored: Some(5),
            ..pointer
        };
        assert_eq!(
            compressed.encode(),
            b"\xac\x02\x05\x80\x01\x01\x02\x03\x04\x05"
        );
        assert_eq!(ValuePointer::decode(&compressed.encode()), Some(compressed));
        assert_eq!(compressed.record_size(1), record_size(1, 5));
        // A stored length that does not parse, or bytes after it, are not a pointer.
        assert_eq!(
            ValuePointer::decode(b"\xac\x02\x05\x80\x01\x01\x02\x03\x04\x85"),
            None
        );
        assert_eq!(
            ValuePointer::decode(b"\xac\x02\x05\x80\x01\x01\x02\x03\x04\x05\x00"),
            None
        );
    }

    #[test]
    fn damaged_records_are_told_apart() {
        let mut out = Vec::new();
        encode_record(&mut out, b"key", &[9u8; 200]);
        for cut in 0..out.len() {
            assert_eq!(
                decode_record(&out[..cut]),
                Err(RecordError::Truncated),
                "cut {cut}"
            );
        }
        let mut flipped = out.clone();
        flipped[100] ^= 1;
        assert_eq!(decode_record(&flipped), Err(RecordError::Checksum));
        // Without the check, the damaged bytes are what the record says.
        let (record, size) = parse_record(&flipped).unwrap();
        assert_eq!(
            (record.key, record.value[90], size),
            (&b"key"[..], 8, out.len())
        );
    }

    #[test]
    fn a_header_is_incomplete_or_malformed() {
        let mut out = Vec::new();
        encode_record(&mut out, b"key", &[1u8; 300]);
        // crc, key_len 3 (one byte), value_len 300 (two bytes).
        assert_eq!(decode_header(&out), Some((7, 3, 300)));
        for cut in 0..7 {
            assert_eq!(decode_header(&out[..cut]), None, "cut {cut}");
        }
        // A length of more than five varint bytes never parses, however many bytes follow.
        let malformed = [0u8, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 1, 1, 1];
        assert_eq!(malformed.len(), MAX_HEADER_LEN);
        assert_eq!(decode_header(&malformed), None);
    }

    #[test]
    fn a_record_is_matched_against_its_pointer_and_entry() {
        let mut out = Vec::new();
        let crc = encode_record(&mut out, b"k", b"value");
        let (record, _) = decode_record(&out).unwrap();
        let pointer = ValuePointer {
            file: 1,
            offset: 0,
            length: 5,
            crc,
            stored: None,
        };
        assert_eq!(pointer.mismatch(b"k", &record), None);
        let other_crc = ValuePointer {
            crc: !crc,
            ..pointer
        };
        assert!(other_crc
            .mismatch(b"k", &record)
            .unwrap()
            .contains("not the one the pointer names"));
        assert!(pointer
            .mismatch(b"j", &record)
            .unwrap()
            .contains("holds key 'k' and 5 value bytes, the entry key 'j' and 5"));
        let longer = ValuePointer {
            length: 6,
            ..pointer
        };
        assert!(longer.mismatch(b"k", &record).is_some());
        // A compressed value's record stores `stored` bytes, whatever the value's length.
        let compressed = ValuePointer {
            length: 9,
            stored: Some(5),
            ..pointer
        };
        assert_eq!(compressed.mismatch(b"k", &record), None);
        let other = ValuePointer {
            stored: Some(4),
            ..compressed
        };
        assert!(other.mismatch(b"k", &record).is_some());
    }

    proptest! {
        #[test]
        fn records_round_trip(key in proptest::collection::vec(any::<u8>(), 0..300),
                              value in proptest::collection::vec(any::<u8>(), 0..300)) {
            let mut out = vec![7u8];
            let crc = encode_record(&mut out, &key, &value);
            prop_assert_eq!(out.len() as u64 - 1, record_size(key.len(), value.len()));
            let (record, size) = decode_record(&out[1..]).unwrap();
            prop_assert_eq!(size as u64, record_size(key.len(), value.len()));
            prop_assert_eq!(record, Record { crc, key: &key, value: &value });
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = decode_record(&bytes);
            let _ = parse_record(&bytes);
            let _ = decode_header(&bytes);
            let _ = ValuePointer::decode(&bytes);
        }
    }
}
