//! The bodies of Strata's fuzz targets, shared by the cargo-fuzz targets in `fuzz/` and by their
//! proptest twins in `crates/strata/tests/fuzz_twins.rs`, so the test command compiles and runs
//! every body even where no nightly toolchain is installed.
//!
//! Contract of every target: it takes arbitrary bytes, never fails on them, and panics only
//! when Strata broke a promise — a decoder panicked or looped, a round trip lost data, damage
//! went unreported where a checksum covers it, or the database disagreed with its model. Each
//! target reads its input twice:
//! - as the raw bytes of the format it fuzzes (a block, a table, a log...), which must decode to
//!   `Ok` or `Err` without panicking;
//! - as a recipe ([`arbitrary::Unstructured`]) for valid contents, which are encoded with the
//!   engine's own encoder, decoded back and compared, then damaged and decoded again, so the
//!   fuzzer reaches deep into the decoders instead of stopping at the first checksum.
//!
//! Running out of input ends a recipe early; it is not an error.

mod blocks;
mod db_ops;
mod log;
mod table;
mod value_file;
mod version_edit;
mod write_batch;

use arbitrary::{Result, Unstructured};

pub use self::blocks::{block, filter};
pub use self::db_ops::db_ops;
pub use self::log::log;
pub use self::table::table;
pub use self::value_file::value_file;
pub use self::version_edit::version_edit;
pub use self::write_batch::write_batch;

/// Up to `max_len` bytes taken from the input (fewer when it runs out).
fn bytes(u: &mut Unstructured<'_>, max_len: usize) -> Result<Vec<u8>> {
    let len = u.int_in_range(0..=max_len)?;
    let len = len.min(u.len());
    Ok(u.bytes(len)?.to_vec())
}

/// A key from a small alphabet, so keys share prefixes and repeat.
fn small_key(u: &mut Unstructured<'_>, max_len: usize) -> Result<Vec<u8>> {
    let len = u.int_in_range(0..=max_len)?;
    (0..len)
        .map(|_| Ok(b'a' + u.int_in_range(0..=3)?))
        .collect()
}

/// A value of a length drawn from a few size classes (empty, small, spanning blocks). Its bytes
/// are a cheap pattern seeded from the input, so big values cost only a few input bytes.
fn pattern_value(u: &mut Unstructured<'_>, large: usize) -> Result<Vec<u8>> {
    let len = match u.int_in_range(0..=9)? {
        0 => 0,
        1 => u.int_in_range(1..=large)?,
        _ => u.int_in_range(1..=48)?,
    };
    let seed: u8 = u.arbitrary()?;
    Ok((0..len)
        .map(|i| seed.wrapping_add((i % 251) as u8).wrapping_mul(31))
        .collect())
}

/// One way of damaging bytes.
#[derive(Debug, Clone, Copy)]
enum Damage {
    /// XOR one byte with a non-zero mask.
    Flip { at: usize, mask: u8 },
    /// Cut the bytes at `at`.
    Truncate { at: usize },
    /// Zero `len` bytes from `at`.
    Zero { at: usize, len: usize },
    /// Insert one byte at `at`.
    Insert { at: usize, byte: u8 },
}

impl Damage {
    fn arbitrary(u: &mut Unstructured<'_>, len: usize) -> Result<Damage> {
        let at = u.int_in_range(0..=len.saturating_sub(1))?;
        Ok(match u.int_in_range(0..=5)? {
            0 => Damage::Truncate { at },
            1 => Damage::Zero {
                at,
                len: u.int_in_range(1..=64)?,
            },
            2 => Damage::Insert {
                at,
                byte: u.arbitrary()?,
            },
            _ => Damage::Flip {
                at,
                mask: u.int_in_range(1..=255)?,
            },
        })
    }

    fn apply(self, bytes: &mut Vec<u8>) {
        match self {
            Damage::Flip { at, mask } => {
                if let Some(b) = bytes.get_mut(at) {
                    *b ^= mask;
                }
            }
            Damage::Truncate { at } => bytes.truncate(at),
            Damage::Zero { at, len } => {
                let end = at.saturating_add(len).min(bytes.len());
                if let Some(range) = bytes.get_mut(at..end) {
                    range.fill(0);
                }
            }
            Damage::Insert { at, byte } => bytes.insert(at.min(bytes.len()), byte),
        }
    }
}

/// Damages `bytes` in one to four places; returns the damage done.
fn damage(u: &mut Unstructured<'_>, bytes: &mut Vec<u8>) -> Result<Vec<Damage>> {
    let n = u.int_in_range(1..=4)?;
    let mut done = Vec::with_capacity(n);
    for _ in 0..n {
        let d = Damage::arbitrary(u, bytes.len())?;
        d.apply(bytes);
        done.push(d);
    }
    Ok(done)
}

/// True when `sub` appears in `all` in order (not necessarily contiguously).
fn is_subsequence<T: PartialEq>(sub: &[T], all: &[T]) -> bool {
    let mut rest = all.iter();
    sub.iter().all(|x| rest.any(|y| y == x))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subsequence_is_ordered() {
        assert!(is_subsequence(&[1, 3], &[1, 2, 3]));
        assert!(is_subsequence::<u8>(&[], &[]));
        assert!(!is_subsequence(&[3, 1], &[1, 2, 3]));
        assert!(!is_subsequence(&[1, 1], &[1, 2, 3]));
    }

    #[test]
    fn damage_changes_the_bytes_it_says() {
        let mut bytes = vec![7u8; 10];
        Damage::Flip { at: 2, mask: 1 }.apply(&mut bytes);
        assert_eq!(bytes[2], 6);
        Damage::Zero { at: 8, len: 64 }.apply(&mut bytes);
        assert_eq!(&bytes[7..], &[7, 0, 0]);
        Damage::Insert { at: 100, byte: 9 }.apply(&mut bytes);
        assert_eq!(bytes.len(), 11);
        assert_eq!(bytes[10], 9);
        Damage::Truncate { at: 3 }.apply(&mut bytes);
        assert_eq!(bytes, vec![7, 7, 6]);
    }

    #[test]
    fn targets_accept_empty_and_tiny_inputs() {
        for data in [&[][..], &[0], &[0xff; 3], &[1, 2, 3, 4, 5, 6, 7, 8, 9]] {
            block(data);
            filter(data);
            table(data);
            log(data);
            value_file(data);
            version_edit(data);
            write_batch(data);
            db_ops(data);
        }
    }
}
