//! Internal keys: a user key followed by an 8-byte trailer that makes every version unique.
//!
//! ```text
//! internal key := user_key ++ fixed64_le((sequence << 8) | value_type)
//! value_type   := 0 deletion | 1 value                                   (LevelDB's)
//!               | 2 expiring value   (extension expiring-keys: the value is
//!                                     fixed64 expires_at ++ the user's value)
//!               | 3 range deletion   (extension range-deletes: only in range-deletion blocks
//!                                     and table bounds, see `range_del`)
//!               | 4 value pointer    (extension value-separation: the value is a pointer
//!                                     to the user's value in a value file, see `vlog`)
//! ```
//!
//! Internal keys order by user key ascending (the user comparator), then by sequence descending,
//! then by type descending, so the newest version of a key is met first. A *lookup key* for a
//! read at sequence `s` is `user_key ++ (s << 8 | VALUE)`: seeking to it lands on the newest
//! version visible at `s`.

use std::cmp::Ordering;
use std::sync::Arc;

use super::coding::decode_fixed64;
use super::comparator::{compare_bytes, Comparator, BYTEWISE_NAME};

/// A write's sequence number; 56 bits are available.
pub(crate) type SequenceNumber = u64;

/// Largest sequence number that fits in an internal key's trailer.
pub(crate) const MAX_SEQUENCE: SequenceNumber = (1 << 56) - 1;

/// Length of the trailer after the user key.
pub(crate) const TRAILER_LEN: usize = 8;

/// What an internal key records. On-disk: never change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub(crate) enum ValueType {
    Deletion = 0,
    Value = 1,
    /// A value with an expiry time (extension `expiring-keys`; see `util/expiry.rs`).
    ExpiringValue = 2,
    /// The start of a range tombstone (extension `range-deletes`; see `range_del`).
    RangeDeletion = 3,
    /// A pointer to the value in a value file (extension `value-separation`; see `vlog`).
    ValuePointer = 4,
}

impl ValueType {
    pub(crate) fn from_byte(byte: u8) -> Option<ValueType> {
        match byte {
            0 => Some(ValueType::Deletion),
            1 => Some(ValueType::Value),
            2 => Some(ValueType::ExpiringValue),
            3 => Some(ValueType::RangeDeletion),
            4 => Some(ValueType::ValuePointer),
            _ => None,
        }
    }
}

/// The type used in lookup keys: the highest, so a seek lands before every entry of that
/// sequence number.
pub(crate) const VALUE_TYPE_FOR_SEEK: ValueType = ValueType::ValuePointer;

/// The type of the keys a table's index block gets from `find_shortest_separator` and
/// `find_short_successor`: LevelDB's (its highest type), so tables stay byte for byte
/// LevelDB's. Any type is right there: a separator's user key is no entry's. On-disk: never
/// change.
const SEPARATOR_TYPE: ValueType = ValueType::Value;

pub(crate) fn pack_trailer(sequence: SequenceNumber, value_type: ValueType) -> u64 {
    debug_assert!(sequence <= MAX_SEQUENCE);
    (sequence << 8) | value_type as u64
}

/// Appends `user_key ++ trailer` to `dst`.
pub(crate) fn append_internal_key(
    dst: &mut Vec<u8>,
    user_key: &[u8],
    sequence: SequenceNumber,
    value_type: ValueType,
) {
    dst.reserve(user_key.len() + TRAILER_LEN);
    dst.extend_from_slice(user_key);
    dst.extend_from_slice(&pack_trailer(sequence, value_type).to_le_bytes());
}

/// An owned, encoded internal key.
pub(crate) fn internal_key(user_key: &[u8], sequence: SequenceNumber, t: ValueType) -> Vec<u8> {
    let mut key = Vec::with_capacity(user_key.len() + TRAILER_LEN);
    append_internal_key(&mut key, user_key, sequence, t);
    key
}

/// The three parts of a decoded internal key, borrowing the user key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ParsedInternalKey<'a> {
    pub(crate) user_key: &'a [u8],
    pub(crate) sequence: SequenceNumber,
    pub(crate) value_type: ValueType,
}

/// Splits an internal key; `None` when it is shorter than the trailer or has an unknown type.
pub(crate) fn parse_internal_key(key: &[u8]) -> Option<ParsedInternalKey<'_>> {
    let split = key.len().checked_sub(TRAILER_LEN)?;
    let trailer = decode_fixed64(&key[split..])?;
    let value_type = ValueType::from_byte((trailer & 0xff) as u8)?;
    Some(ParsedInternalKey {
        user_key: &key[..split],
        sequence: trailer >> 8,
        value_type,
    })
}

/// The user-key part of an internal key. Keys shorter than a trailer (only possible from corrupt
/// input, which decoders reject) yield an empty user key rather than a panic.
#[inline]
pub(crate) fn user_key(internal_key: &[u8]) -> &[u8] {
    internal_key
        .get(..internal_key.len().wrapping_sub(TRAILER_LEN))
        .unwrap_or(&[])
}

/// The packed `(sequence << 8) | type` trailer, or 0 for a too-short key.
#[inline]
pub(crate) fn trailer(internal_key: &[u8]) -> u64 {
    internal_key
        .len()
        .checked_sub(TRAILER_LEN)
        .and_then(|at| decode_fixed64(&internal_key[at..]))
        .unwrap_or(0)
}

/// Orders internal keys: user key ascending by the user comparator, then trailer descending.
///
/// Thread safety: immutable, shared freely. The bytewise comparator is recognised by name and
/// compared inline, which keeps dynamic dispatch off the hottest loop of the engine.
#[derive(Clone)]
pub(crate) struct InternalKeyComparator {
    user: Arc<dyn Comparator>,
    bytewise: bool,
}

impl std::fmt::Debug for InternalKeyComparator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "InternalKeyComparator({})", self.user.name())
    }
}

impl InternalKeyComparator {
    pub(crate) fn new(user: Arc<dyn Comparator>) -> InternalKeyComparator {
        let bytewise = user.name() == BYTEWISE_NAME;
        InternalKeyComparator { user, bytewise }
    }

    /// The user comparator is the bytewise one.
    pub(crate) fn is_bytewise(&self) -> bool {
        self.bytewise
    }

    pub(crate) fn user_comparator(&self) -> &Arc<dyn Comparator> {
        &self.user
    }

    /// Compares two user keys with the user comparator.
    #[inline]
    pub(crate) fn compare_user(&self, a: &[u8], b: &[u8]) -> Ordering {
        if self.bytewise {
            compare_bytes(a, b)
        } else {
            self.user.compare(a, b)
        }
    }

    /// Compares two encoded internal keys.
    #[inline]
    pub(crate) fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        self.compare_user(user_key(a), user_key(b))
            .then_with(|| trailer(b).cmp(&trailer(a)))
    }

    /// Shortens `start` towards `limit` on the user-key part, keeping it a valid internal key
    /// that sorts in `[start, limit)`.
    pub(crate) fn find_shortest_separator(&self, start: &mut Vec<u8>, limit: &[u8]) {
        let user_start = user_key(start);
        let user_limit = user_key(limit);
        let mut shortened = user_start.to_vec();
        self.user
            .find_shortest_separator(&mut shortened, user_limit);
        // A user comparator's separator is checked, not trusted: one outside
        // `(start, limit)` would send lookups to the wrong block. It is then ignored.
        if shortened.len() < user_start.len()
            && self.compare_user(user_start, &shortened) == Ordering::Less
            && self.compare_user(&shortened, user_limit) == Ordering::Less
        {
            // The user key grew in order: the earliest trailer keeps it before any real entry.
            append_internal_key_raw(&mut shortened, pack_trailer(MAX_SEQUENCE, SEPARATOR_TYPE));
            *start = shortened;
        }
    }

    /// Replaces `key` by a short internal key `>=` it.
    pub(crate) fn find_short_successor(&self, key: &mut Vec<u8>) {
        let user = user_key(key);
        let mut successor = user.to_vec();
        self.user.find_short_successor(&mut successor);
        if successor.len() < user.len() && self.compare_user(user, &successor) == Ordering::Less {
            append_internal_key_raw(&mut successor, pack_trailer(MAX_SEQUENCE, SEPARATOR_TYPE));
            *key = successor;
        }
    }
}

fn append_internal_key_raw(dst: &mut Vec<u8>, trailer: u64) {
    dst.extend_from_slice(&trailer.to_le_bytes());
}

/// Displays an internal key as `'user key' @ sequence : type`, bytes outside printable ASCII
/// escaped; a key that does not parse is shown whole and marked.
pub(crate) fn debug_internal_key(key: &[u8]) -> impl std::fmt::Display + '_ {
    DisplayInternalKey(key)
}

struct DisplayInternalKey<'a>(&'a [u8]);

impl std::fmt::Display for DisplayInternalKey<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match parse_internal_key(self.0) {
            Some(key) => write!(
                f,
                "'{}' @ {} : {}",
                key.user_key.escape_ascii(),
                key.sequence,
                key.value_type as u8
            ),
            None => write!(f, "(bad internal key) '{}'", self.0.escape_ascii()),
        }
    }
}

/// A key for looking up `user_key` as of `sequence`.
pub(crate) fn lookup_key(user_key: &[u8], sequence: SequenceNumber) -> Vec<u8> {
    internal_key(user_key, sequence, VALUE_TYPE_FOR_SEEK)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::comparator::BytewiseComparator;

    fn icmp() -> InternalKeyComparator {
        InternalKeyComparator::new(BytewiseComparator::shared())
    }

    /// Bytewise order, but a separator that ignores `limit`: it returns a one-byte key above
    /// `start` (for `start = "b..."`, `"c"`), whatever the limit.
    struct CarelessSeparator;

    impl Comparator for CarelessSeparator {
        fn name(&self) -> &str {
            "test.CarelessSeparator"
        }
        fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
            a.cmp(b)
        }
        fn find_shortest_separator(&self, start: &mut Vec<u8>, _limit: &[u8]) {
            if let Some(&first) = start.first() {
                *start = vec![first.saturating_add(1)];
            }
        }
    }

    #[test]
    fn a_user_separator_outside_the_range_is_ignored() {
        let careless = InternalKeyComparator::new(Arc::new(CarelessSeparator));
        let start = internal_key(b"bbbb", 5, ValueType::Value);
        // "c" is past the limit "bz": taking it would put "bz"'s block behind a key above it.
        let mut key = start.clone();
        careless.find_shortest_separator(&mut key, &internal_key(b"bz", 9, ValueType::Value));
        assert_eq!(key, start);
        // Below a limit of "d", "c" separates and is taken.
        careless.find_shortest_separator(&mut key, &internal_key(b"d", 9, ValueType::Value));
        assert_eq!(user_key(&key), b"c");
        assert_eq!(careless.compare(&start, &key), Ordering::Less);
    }

    #[test]
    fn encode_parse_round_trip() {
        for (key, seq, t) in [
            (&b""[..], 1u64, ValueType::Value),
            (b"foo", MAX_SEQUENCE, ValueType::Deletion),
            (b"\xff\x00", 0, ValueType::Value),
        ] {
            let encoded = internal_key(key, seq, t);
            let parsed = parse_internal_key(&encoded).unwrap();
            assert_eq!(
                parsed,
                ParsedInternalKey {
                    user_key: key,
                    sequence: seq,
                    value_type: t
                }
            );
            assert_eq!(user_key(&encoded), key);
        }
        assert!(parse_internal_key(b"short").is_none());
        assert!(parse_internal_key(b"key\x07\0\0\0\0\0\0\0").is_none()); // type 7
    }

    #[test]
    fn order_is_user_key_then_newest_first() {
        let c = icmp();
        let a5 = internal_key(b"a", 5, ValueType::Value);
        let a4 = internal_key(b"a", 4, ValueType::Value);
        let a5d = internal_key(b"a", 5, ValueType::Deletion);
        let b1 = internal_key(b"b", 1, ValueType::Value);
        assert_eq!(c.compare(&a5, &a4), Ordering::Less);
        assert_eq!(c.compare(&a5, &a5d), Ordering::Less);
        assert_eq!(c.compare(&a4, &b1), Ordering::Less);
        assert_eq!(c.compare(&a4, &a4), Ordering::Equal);
    }

    #[test]
    fn separators_stay_between() {
        let c = icmp();
        let mut start = internal_key(b"foo", 100, ValueType::Value);
        let limit = internal_key(b"hello", 200, ValueType::Value);
        c.find_shortest_separator(&mut start, &limit);
        assert_eq!(user_key(&start), b"g");
        // Same user key: unchanged.
        let original = internal_key(b"foo", 100, ValueType::Value);
        let mut same = original.clone();
        c.find_shortest_separator(&mut same, &internal_key(b"foo", 5, ValueType::Value));
        assert_eq!(same, original);
        let mut succ = internal_key(b"foo", 100, ValueType::Value);
        c.find_short_successor(&mut succ);
        assert_eq!(user_key(&succ), b"g");
    }
}
