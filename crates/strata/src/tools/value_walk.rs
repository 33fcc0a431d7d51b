//! Walks every record of a value file, for `dump` and `check` (layout in `vlog/mod.rs`).
//!
//! A value file has no block structure to resynchronise on: each record's header gives the
//! length of the next. So the walk goes record by record from offset 0, and:
//! - a record whose crc does not match is reported ([`ValueItem::Damage`]) and skipped by the
//!   lengths its header gives (damaged lengths then misplace what follows, which shows as
//!   more damage);
//! - a header that does not parse ends the walk: the rest of the file is reported as damage;
//! - a record running past the end of the file ends it too ([`ValueItem::Tail`]): what an
//!   append cut short by a crash leaves, or a damaged length.
//!
//! A caller that knows where records start (`check`: the offsets live pointers name) hands
//! them over: after damage, the walk goes on at the next known start rather than where the
//! damaged lengths say (unless they say a known start), so one damaged length costs one
//! region, and a record running past the end with known starts after it is damage, not a
//! torn tail.
//!
//! Lengths are checked against the file's size before a record's buffer is allocated, so a
//! damaged length never allocates more than the file holds. Nothing read panics.

use std::path::Path;
use std::sync::Arc;

use crate::env::{read_fully, Env, RandomAccessFile};
use crate::error::{Error, Result};
use crate::vlog::{decode_header, decode_record, parse_record, Record, MAX_HEADER_LEN};

/// One thing met while walking a value file, in file order.
pub(crate) enum ValueItem<'a> {
    /// A whole record of `size` bytes at `offset` (its crc verified when the walk verifies).
    Record {
        offset: u64,
        size: u64,
        record: Record<'a>,
    },
    /// `bytes` bytes of damage: `error` is a corruption naming the file and the offset where
    /// they start. The walk goes on after them (they may reach the end of the file).
    Damage { error: Error, bytes: u64 },
    /// The last item: the `bytes` bytes from `offset` to the end of the file are not a whole
    /// record.
    Tail { offset: u64, bytes: u64 },
}

/// What lies at an offset of a value file, as far as the record lengths tell.
enum Next {
    /// A record of this many bytes, read into the buffer (not checked yet).
    Record(u64),
    /// The rest of the file is not a whole record.
    Tail,
    /// The header there does not parse.
    BadHeader,
}

/// A value file open for reading records at given offsets.
struct ValueFileReader {
    file: Arc<dyn RandomAccessFile>,
    size: u64,
    /// The bytes of the last record read.
    buf: Vec<u8>,
}

impl ValueFileReader {
    fn open(env: &dyn Env, path: &Path) -> Result<ValueFileReader> {
        Ok(ValueFileReader {
            size: env.file_size(path)?,
            file: env.new_random_access_file(path)?,
            buf: Vec::new(),
        })
    }

    /// Reads what lies at `offset` (below the file's size), a record into `self.buf`.
    fn read(&mut self, offset: u64) -> Result<Next> {
        let left = self.size - offset;
        let mut header = [0u8; MAX_HEADER_LEN];
        let want = header
            .len()
            .min(usize::try_from(left).unwrap_or(usize::MAX));
        let read = read_fully(&*self.file, offset, &mut header[..want])?;
        let Some((header_len, key_len, value_len)) = decode_header(&header[..read]) else {
            return Ok(if read < MAX_HEADER_LEN {
                Next::Tail
            } else {
                Next::BadHeader
            });
        };
        let size = (header_len + key_len) as u64 + value_len as u64;
        let Some(len) = usize::try_from(size).ok().filter(|_| size <= left) else {
            return Ok(Next::Tail);
        };
        self.buf.resize(len, 0);
        // Short when the file shrank while it was read.
        let read = read_fully(&*self.file, offset, &mut self.buf)?;
        Ok(if read < len {
            Next::Tail
        } else {
            Next::Record(size)
        })
    }
}

/// Hands every record of the value file at `path` to `f`, in file order, with the damage
/// met on the way; checks each record's crc when `verify`. `starts`: offsets known to start
/// records, ascending (may be empty); see the module documentation. `Err` for an I/O error or
/// the first error `f` returns.
pub(crate) fn for_each_value_record(
    env: &dyn Env,
    path: &Path,
    verify: bool,
    starts: &[u64],
    f: &mut dyn FnMut(ValueItem<'_>) -> Result<()>,
) -> Result<()> {
    let mut reader = ValueFileReader::open(env, path)?;
    let size = reader.size;
    let damage =
        |offset: u64, reason: &str| Error::corruption_at(offset, reason).in_file(path.display());
    // The first known start after `offset`.
    let known_after = |offset: u64| {
        let at = starts.partition_point(|&s| s <= offset);
        starts.get(at).copied().filter(|&s| s < size)
    };
    let mut offset = 0u64;
    while offset < reader.size {
        let (reason, claimed) = match reader.read(offset)? {
            Next::Record(size) => {
                let decoded = if verify {
                    decode_record(&reader.buf)
                } else {
                    parse_record(&reader.buf)
                };
                if let Ok((record, _)) = decoded {
                    f(ValueItem::Record {
                        offset,
                        size,
                        record,
                    })?;
                    offset += size;
                    continue;
                }
                ("value record checksum mismatch", Some(size))
            }
            Next::Tail if known_after(offset).is_none() => {
                let bytes = reader.size - offset;
                return f(ValueItem::Tail { offset, bytes });
            }
            Next::Tail => ("value record runs past the end of the file", None),
            Next::BadHeader => ("value record header does not parse", None),
        };
        // Damage: go on where the lengths say when that is a known start (or nothing is
        // known), else at the next known start, else nowhere.
        let said = claimed.map(|size| offset + size);
        let next = match said {
            Some(next) if starts.is_empty() || starts.binary_search(&next).is_ok() => Some(next),
            _ => known_after(offset),
        };
        let end = next.unwrap_or(reader.size);
        let error = damage(offset, reason);
        f(ValueItem::Damage {
            error,
            bytes: end - offset,
        })?;
        offset = end;
    }
    Ok(())
}

/// Whether the file at `path` starts with a whole value record whose crc holds: how a value
/// file is told by its contents.
pub(crate) fn starts_with_a_value_record(env: &dyn Env, path: &Path) -> Result<bool> {
    let mut reader = ValueFileReader::open(env, path)?;
    if reader.size == 0 {
        return Ok(false);
    }
    Ok(matches!(reader.read(0)?, Next::Record(_)) && decode_record(&reader.buf).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::{write_file, MemEnv};
    use crate::vlog::encode_record;
    use proptest::prelude::*;

    /// What a walk met: `(offset, key or "!damage"/"!tail", bytes)`.
    fn walk(bytes: &[u8], verify: bool) -> Vec<(u64, String, u64)> {
        walk_knowing(bytes, verify, &[])
    }

    /// [`walk`] knowing where records start.
    fn walk_knowing(bytes: &[u8], verify: bool, starts: &[u64]) -> Vec<(u64, String, u64)> {
        let env = MemEnv::new();
        let path = Path::new("/000007.vlog");
        write_file(&env, path, bytes, false).unwrap();
        let mut items = Vec::new();
        for_each_value_record(&env, path, verify, starts, &mut |item| {
            items.push(match item {
                ValueItem::Record {
                    offset,
                    size,
                    record,
                } => (
                    offset,
                    String::from_utf8_lossy(record.key).into_owned(),
                    size,
                ),
                ValueItem::Damage { error, bytes } => {
                    let c = error.corruption_details().unwrap();
                    assert_eq!(c.file.as_deref(), Some("/000007.vlog"));
                    (c.offset.unwrap(), "!damage".into(), bytes)
                }
                ValueItem::Tail { offset, bytes } => (offset, "!tail".into(), bytes),
            });
            Ok(())
        })
        .unwrap();
        items
    }

    /// Three records `a`, `b`, `c` with values of 10, 200 and 30 bytes.
    fn three() -> Vec<u8> {
        let mut out = Vec::new();
        for (key, len) in [("a", 10), ("b", 200), ("c", 30)] {
            encode_record(&mut out, key.as_bytes(), &vec![b'v'; len]);
        }
        out
    }

    #[test]
    fn every_record_is_met_in_order() {
        let bytes = three();
        let got = walk(&bytes, true);
        assert_eq!(
            got,
            vec![
                (0, "a".into(), 17),
                (17, "b".into(), 208),
                (225, "c".into(), 37),
            ]
        );
        assert_eq!(262, bytes.len());
    }

    #[test]
    fn a_flipped_value_byte_is_damage_and_the_walk_goes_on() {
        let mut bytes = three();
        bytes[17 + 100] ^= 0x20;
        let got = walk(&bytes, true);
        assert_eq!(got[1], (17, "!damage".into(), 208));
        assert_eq!(got[2], (225, "c".into(), 37));
        // Unverified, the damaged record is shown as it is.
        assert_eq!(walk(&bytes, false)[1], (17, "b".into(), 208));
    }

    #[test]
    fn a_torn_last_record_is_the_tail() {
        let bytes = three();
        for cut in [226, 230, 261] {
            let got = walk(&bytes[..cut], true);
            assert_eq!(got.len(), 3, "cut {cut}");
            assert_eq!(got[2], (225, "!tail".into(), cut as u64 - 225));
        }
    }

    #[test]
    fn a_header_that_does_not_parse_is_damage_to_the_end() {
        let mut bytes = three();
        bytes[17 + 4..17 + 10].fill(0xff);
        let got = walk(&bytes, true);
        assert_eq!(got[1], (17, "!damage".into(), 245));
        assert_eq!(got.len(), 2);
    }

    #[test]
    fn known_record_starts_bound_the_damage_of_a_bad_length() {
        // key_len of `b` (at 17) flipped from 1 to 0x41: the lengths say nothing true.
        let mut bytes = three();
        bytes[17 + 4] = 0x41;
        let unknown = walk(&bytes, true);
        assert_eq!(unknown[1].0, 17);
        assert!(unknown[1].1.starts_with('!'), "{unknown:?}");
        assert!(unknown.iter().all(|(_, key, _)| key != "c"), "{unknown:?}");
        // Knowing `c` starts at 225, the damage is [17, 225) and `c` is found.
        let known = walk_knowing(&bytes, true, &[0, 225]);
        assert_eq!(
            known,
            vec![
                (0, "a".into(), 17),
                (17, "!damage".into(), 208),
                (225, "c".into(), 37),
            ]
        );
        // A value byte flipped: the lengths are right, and say a known start.
        let mut bytes = three();
        bytes[17 + 100] ^= 1;
        assert_eq!(walk_knowing(&bytes, true, &[225])[2], (225, "c".into(), 37));
        // A header that does not parse, or a length past the end, before a known start.
        for damaged in [0xff, 0x7f] {
            let mut bytes = three();
            bytes[17 + 4..17 + 10].fill(damaged);
            let got = walk_knowing(&bytes, true, &[225]);
            assert_eq!(got[1], (17, "!damage".into(), 208), "{damaged:#x}");
            assert_eq!(got[2], (225, "c".into(), 37));
        }
    }

    #[test]
    fn a_length_claiming_more_than_the_file_is_the_tail_with_no_allocation() {
        let mut bytes = Vec::new();
        encode_record(&mut bytes, b"k", b"v");
        // value_len 0xffffffff (five varint bytes) claims 4 GiB in a 19-byte file.
        let mut huge = vec![0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0x0f, b'k'];
        huge.extend_from_slice(&bytes);
        assert_eq!(walk(&huge, true), vec![(0, "!tail".into(), 19)]);
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200),
                                       verify in any::<bool>(),
                                       mut starts in proptest::collection::vec(0u64..220, 0..4)) {
            starts.sort_unstable();
            starts.dedup();
            let items = walk_knowing(&bytes, verify, &starts);
            // The items cover the file without overlap.
            let mut end = 0;
            for (offset, _, len) in &items {
                prop_assert_eq!(*offset, end);
                end += len;
            }
            prop_assert_eq!(end, bytes.len() as u64);
        }
    }
}
