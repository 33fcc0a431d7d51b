//! User-key ordering: the [`Comparator`] trait and LevelDB's bytewise comparator.
//!
//! A comparator's `name` is recorded in the manifest and checked at every open, so a database is
//! never read under a different order than it was written with. Changing how a named comparator
//! orders keys corrupts every database that used it.

use std::cmp::Ordering;
use std::sync::Arc;

/// A total order over user keys.
///
/// Thread safety: shared by every thread of a database; implementations must be `Send + Sync`
/// and pure (the same inputs always give the same answer).
pub trait Comparator: Send + Sync {
    /// The name stored in the manifest, e.g. `leveldb.BytewiseComparator`.
    fn name(&self) -> &str;

    /// Three-way comparison of two user keys.
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering;

    /// If `start < limit`, may shorten `start` to any key in `[start, limit)`. Used to keep index
    /// keys short; leaving `start` unchanged is always correct.
    fn find_shortest_separator(&self, start: &mut Vec<u8>, limit: &[u8]) {
        let _ = (start, limit);
    }

    /// May change `key` to any key `>= key`. Leaving it unchanged is always correct.
    fn find_short_successor(&self, key: &mut Vec<u8>) {
        let _ = key;
    }
}

impl std::fmt::Debug for dyn Comparator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Comparator({})", self.name())
    }
}

/// Lexicographic order of unsigned bytes; LevelDB's default (`leveldb.BytewiseComparator`).
#[derive(Debug, Default, Clone, Copy)]
pub struct BytewiseComparator;

/// The name LevelDB records for [`BytewiseComparator`]. On-disk: never change.
pub(crate) const BYTEWISE_NAME: &str = "leveldb.BytewiseComparator";

/// How many leading 8-byte words [`compare_bytes`] compares itself before handing the rest to
/// `memcmp`: keys are mostly short, and a call to `memcmp` costs more than comparing them.
const INLINE_WORDS: usize = 4;

/// Bytewise order of `a` and `b`, exactly as `a.cmp(b)`, faster on short keys: their first
/// words are compared as big-endian integers (whose order is the bytes' order) without a call.
#[inline]
pub(crate) fn compare_bytes(mut a: &[u8], mut b: &[u8]) -> Ordering {
    for _ in 0..INLINE_WORDS {
        match (a.split_first_chunk::<8>(), b.split_first_chunk::<8>()) {
            (Some((x, a_rest)), Some((y, b_rest))) => {
                if x != y {
                    return u64::from_be_bytes(*x).cmp(&u64::from_be_bytes(*y));
                }
                a = a_rest;
                b = b_rest;
            }
            _ => {
                // Under 8 bytes left in one of them.
                for (x, y) in a.iter().zip(b) {
                    if x != y {
                        return x.cmp(y);
                    }
                }
                return a.len().cmp(&b.len());
            }
        }
    }
    a.cmp(b)
}

impl BytewiseComparator {
    /// A shared handle to the bytewise comparator.
    pub fn shared() -> Arc<dyn Comparator> {
        Arc::new(BytewiseComparator)
    }
}

impl Comparator for BytewiseComparator {
    fn name(&self) -> &str {
        BYTEWISE_NAME
    }

    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        compare_bytes(a, b)
    }

    fn find_shortest_separator(&self, start: &mut Vec<u8>, limit: &[u8]) {
        let shared = start.iter().zip(limit).take_while(|(a, b)| a == b).count();
        if shared >= start.len().min(limit.len()) {
            return; // one is a prefix of the other
        }
        let byte = start[shared];
        if byte < 0xff && byte + 1 < limit[shared] {
            start[shared] = byte + 1;
            start.truncate(shared + 1);
            debug_assert!(self.compare(start, limit) == Ordering::Less);
        }
    }

    fn find_short_successor(&self, key: &mut Vec<u8>) {
        if let Some(pos) = key.iter().position(|&b| b != 0xff) {
            key[pos] += 1;
            key.truncate(pos + 1);
        }
        // All 0xff: leave unchanged.
    }
}

/// Bytewise order reversed, for tests that show code orders keys through the comparator it
/// is given rather than by their bytes.
#[cfg(test)]
pub(crate) struct ReverseBytewiseComparator;

#[cfg(test)]
impl Comparator for ReverseBytewiseComparator {
    fn name(&self) -> &str {
        "strata.test.ReverseBytewise"
    }
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        b.cmp(a)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::{prop_oneof, Just};

    use super::*;

    fn separator(start: &[u8], limit: &[u8]) -> Vec<u8> {
        let mut s = start.to_vec();
        BytewiseComparator.find_shortest_separator(&mut s, limit);
        s
    }

    fn successor(key: &[u8]) -> Vec<u8> {
        let mut k = key.to_vec();
        BytewiseComparator.find_short_successor(&mut k);
        k
    }

    #[test]
    fn separator_shortens_when_room() {
        assert_eq!(separator(b"abcdefg", b"abzzz"), b"abd");
        assert_eq!(separator(b"foo", b"foobar"), b"foo"); // prefix
        assert_eq!(separator(b"abc1", b"abc2"), b"abc1"); // adjacent bytes
        assert_eq!(separator(b"a\xffz", b"b"), b"a\xffz");
    }

    #[test]
    fn successor_shortens() {
        assert_eq!(successor(b"abc"), b"b");
        assert_eq!(successor(b"\xff\xffq"), b"\xff\xffr");
        assert_eq!(successor(b"\xff\xff"), b"\xff\xff");
        assert_eq!(successor(b""), b"");
    }

    proptest::proptest! {
        #[test]
        fn separator_lies_in_range(a in proptest::collection::vec(0u8..4, 0..6), b in proptest::collection::vec(0u8..4, 0..6)) {
            let (lo, hi) = if a < b { (a, b) } else { (b, a) };
            let s = separator(&lo, &hi);
            proptest::prop_assert!(s >= lo);
            if lo < hi { proptest::prop_assert!(s < hi); }
            proptest::prop_assert!(successor(&lo) >= lo);
        }

        /// A shared prefix of any length (past the inline words too) and short tails of a
        /// small alphabet, so that keys often tie for many words and differ in any byte or
        /// only in length.
        #[test]
        fn compare_bytes_orders_as_slices_do(
            prefix in proptest::collection::vec(proptest::num::u8::ANY, 0..48),
            a_tail in proptest::collection::vec(prop_oneof![Just(0u8), Just(1), Just(0x80), Just(0xff)], 0..12),
            b_tail in proptest::collection::vec(prop_oneof![Just(0u8), Just(1), Just(0x80), Just(0xff)], 0..12),
        ) {
            let a = [prefix.as_slice(), &a_tail].concat();
            let b = [prefix.as_slice(), &b_tail].concat();
            proptest::prop_assert_eq!(compare_bytes(&a, &b), a.cmp(&b));
            proptest::prop_assert_eq!(compare_bytes(&b, &a), b.cmp(&a));
            proptest::prop_assert_eq!(compare_bytes(&a, &a), Ordering::Equal);
        }
    }
}
