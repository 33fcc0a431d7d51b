//! What a read makes of the newest entry of a user key it can see: a value, or nothing.
//!
//! The value of an entry of type 2 (expiring value, format extension `expiring-keys`) is laid
//! out as
//!
//! ```text
//! stored value := expires_at fixed64 (microseconds since the Unix epoch) ++ the user's value
//! ```
//!
//! and is gone — like a deletion, hiding every older entry of its key — at and after
//! `expires_at` by the `Env`'s clock. An entry older than the newest range tombstone covering its
//! key (at the read's sequence) is gone too. A value pointer (type 4, extension
//! `value-separation`) is a value whose bytes are in a value file: the reader resolves it
//! (`vlog`). Every read path (point lookups, `get_many`,
//! iterators) decides through [`visible`], so they agree.

use std::borrow::Cow;

use super::coding::{decode_fixed64, put_fixed64};
use super::internal_key::{SequenceNumber, ValueType};
use crate::error::{Error, Result};

/// Bytes of the expiry time in front of an expiring value. On-disk: never change.
pub(crate) const EXPIRY_LEN: usize = 8;

/// Appends the stored form of a value that expires at `expires_at` (microseconds).
pub(crate) fn encode_expiring(dst: &mut Vec<u8>, expires_at: u64, value: &[u8]) {
    dst.reserve(EXPIRY_LEN + value.len());
    put_fixed64(dst, expires_at);
    dst.extend_from_slice(value);
}

/// Splits a stored expiring value into its expiry time and the user's value; `None` when it is
/// too short to hold the expiry time.
pub(crate) fn split_expiring(stored: &[u8]) -> Option<(u64, &[u8])> {
    Some((decode_fixed64(stored)?, stored.get(EXPIRY_LEN..)?))
}

/// True when a value expiring at `expires_at` is gone at `now` (both microseconds).
pub(crate) fn expired(expires_at: u64, now: u64) -> bool {
    now >= expires_at
}

/// What a read sees of an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Visible<'a> {
    /// The key has this value (the user's bytes, without an expiry time).
    Value(&'a [u8]),
    /// The key has the value this pointer names in a value file (see `vlog`).
    Pointer(&'a [u8]),
    /// The key has no value: deleted, deleted by a range tombstone, or expired.
    Gone,
}

impl<'a> Visible<'a> {
    /// What a point read keeps of this, still borrowed from where the entry is (a table's
    /// lookup makes it owned): the value (empty when only the key's presence is asked) or
    /// pointer (a presence read never resolves it); `None` when gone.
    #[inline]
    pub(crate) fn to_stored(self, presence_only: bool) -> Option<Stored<'a>> {
        match self {
            Visible::Value(_) if presence_only => Some(Stored::Value(Cow::Borrowed(&[]))),
            Visible::Value(value) => Some(Stored::Value(Cow::Borrowed(value))),
            Visible::Pointer(pointer) => Some(Stored::Pointer(Cow::Borrowed(pointer))),
            Visible::Gone => None,
        }
    }
}

/// A value a point read found, borrowed from the memtable it is in or owned (copied out of a
/// table's block): the user's bytes, or a pointer to them in a value file that the database
/// layer resolves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stored<'a> {
    Value(Cow<'a, [u8]>),
    Pointer(Cow<'a, [u8]>),
}

impl Stored<'_> {
    /// The same, owning its bytes (a copy only of borrowed ones).
    pub(crate) fn into_owned(self) -> Stored<'static> {
        match self {
            Stored::Value(value) => Stored::Value(Cow::Owned(value.into_owned())),
            Stored::Pointer(pointer) => Stored::Pointer(Cow::Owned(pointer.into_owned())),
        }
    }
}

/// What a read at time `now` sees of the newest entry of a key it can see: `value_type`,
/// `sequence` and `stored` value, given the newest range tombstone covering the key at the
/// read's sequence (`covered`). A range deletion's type or an expiring value too short for its
/// expiry time is corruption (the caller adds where).
#[inline]
pub(crate) fn visible(
    value_type: ValueType,
    sequence: SequenceNumber,
    stored: &[u8],
    covered: Option<SequenceNumber>,
    now: u64,
) -> Result<Visible<'_>> {
    if covered.is_some_and(|tombstone| tombstone > sequence) {
        return Ok(Visible::Gone);
    }
    match value_type {
        ValueType::Value => Ok(Visible::Value(stored)),
        ValueType::ValuePointer => Ok(Visible::Pointer(stored)),
        ValueType::Deletion => Ok(Visible::Gone),
        ValueType::ExpiringValue => match split_expiring(stored) {
            Some((expires_at, _)) if expired(expires_at, now) => Ok(Visible::Gone),
            Some((_, value)) => Ok(Visible::Value(value)),
            None => Err(expiry_too_short(stored.len())),
        },
        ValueType::RangeDeletion => Err(range_deletion_among_entries()),
    }
}

/// `visible`'s errors, out of line: point reads inline `visible`, and these are never on
/// their path.
#[cold]
fn expiry_too_short(len: usize) -> Error {
    Error::corruption(format!(
        "expiring value of {len} bytes is too short for its expiry time"
    ))
}

#[cold]
fn range_deletion_among_entries() -> Error {
    Error::corruption("a range deletion's key among the entries")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expiring(expires_at: u64, value: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        encode_expiring(&mut out, expires_at, value);
        out
    }

    #[test]
    fn values_expire_at_their_time() {
        let stored = expiring(1_000, b"v");
        assert_eq!(split_expiring(&stored), Some((1_000, &b"v"[..])));
        let at = |now| visible(ValueType::ExpiringValue, 5, &stored, None, now).unwrap();
        assert_eq!(at(999), Visible::Value(b"v"));
        assert_eq!(at(1_000), Visible::Gone);
        assert_eq!(at(u64::MAX), Visible::Gone);
    }

    #[test]
    fn a_newer_tombstone_hides_an_entry_an_older_one_does_not() {
        for t in [ValueType::Value, ValueType::ExpiringValue] {
            let stored = if t == ValueType::Value {
                b"v".to_vec()
            } else {
                expiring(u64::MAX, b"v")
            };
            assert_eq!(visible(t, 5, &stored, Some(6), 0).unwrap(), Visible::Gone);
            assert_eq!(
                visible(t, 5, &stored, Some(4), 0).unwrap(),
                Visible::Value(b"v")
            );
            assert_eq!(
                visible(t, 5, &stored, None, 0).unwrap(),
                Visible::Value(b"v")
            );
        }
        assert_eq!(
            visible(ValueType::Deletion, 5, b"", None, 0).unwrap(),
            Visible::Gone
        );
    }

    #[test]
    fn malformed_entries_are_corruption() {
        for short in [&b""[..], b"1234567"] {
            let err = visible(ValueType::ExpiringValue, 1, short, None, 0).unwrap_err();
            assert!(err.is_corruption());
        }
        let err = visible(ValueType::RangeDeletion, 1, b"end", None, 0).unwrap_err();
        assert!(err.is_corruption());
    }
}
