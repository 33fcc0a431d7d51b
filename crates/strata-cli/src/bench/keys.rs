//! Keys and values as db_bench makes them, so figures compare with published ones.
//!
//! - Keys are the entry number as 16 zero-padded decimal digits (db_bench's `%016d`), so
//!   sequential numbers sort in sequential order. A *missing* key is a present one followed
//!   by `.` (db_bench's `readmissing`): it sorts right after its neighbour and is never written.
//! - Values are slices of one pool of bytes built to compress to about half under Snappy
//!   (db_bench's `--compression_ratio=0.5`): every 100-byte piece is 50 random printable bytes
//!   followed by the same 50 again. Snappy cannot shrink the random half (it has no entropy
//!   coder) and turns the repeat into one short copy. Each thread walks the pool from its own
//!   cursor, wrapping at the end, so consecutive values differ.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Bytes in a key.
pub const KEY_SIZE: usize = 16;

/// A reusable buffer holding one formatted key; formatting allocates nothing.
#[derive(Debug, Clone)]
pub struct KeyBuf {
    buf: [u8; KEY_SIZE + 1],
}

impl Default for KeyBuf {
    fn default() -> Self {
        KeyBuf::new()
    }
}

impl KeyBuf {
    pub fn new() -> Self {
        KeyBuf {
            buf: [b'0'; KEY_SIZE + 1],
        }
    }

    /// The key of entry `n`: `n` as 16 zero-padded decimal digits (the low 16 digits if
    /// `n` has more).
    pub fn key(&mut self, n: u64) -> &[u8] {
        self.fill(n);
        &self.buf[..KEY_SIZE]
    }

    /// A key that is never written: entry `n`'s key followed by `.`.
    pub fn missing(&mut self, n: u64) -> &[u8] {
        self.fill(n);
        self.buf[KEY_SIZE] = b'.';
        &self.buf[..]
    }

    fn fill(&mut self, mut n: u64) {
        for digit in self.buf[..KEY_SIZE].iter_mut().rev() {
            *digit = b'0' + (n % 10) as u8;
            n /= 10;
        }
    }
}

/// Bytes in one compressible piece of the value pool.
const PIECE: usize = 100;
/// Smallest pool (db_bench's 1 MiB), so values rarely repeat within a block.
const MIN_POOL: usize = 1 << 20;

/// Read-only pool of value bytes, shared by every thread and engine.
#[derive(Debug)]
pub struct ValuePool {
    data: Vec<u8>,
}

impl ValuePool {
    /// A pool of at least 1 MiB and at least `max_value` bytes, the same for a given `seed`.
    pub fn new(seed: u64, max_value: usize) -> Self {
        let size = MIN_POOL.max(max_value);
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut data = Vec::with_capacity(size + PIECE);
        let mut half = [0u8; PIECE / 2];
        while data.len() < size {
            for b in half.iter_mut() {
                *b = rng.gen_range(b' '..=b'~');
            }
            data.extend_from_slice(&half);
            data.extend_from_slice(&half);
        }
        data.truncate(size);
        ValuePool { data }
    }

    /// A cursor starting at the pool's beginning (db_bench starts every thread there too).
    pub fn cursor(&self) -> ValueCursor<'_> {
        ValueCursor { pool: self, pos: 0 }
    }

    /// The whole pool, for tests.
    #[cfg(test)]
    fn bytes(&self) -> &[u8] {
        &self.data
    }
}

/// One thread's position in a [`ValuePool`].
#[derive(Debug)]
pub struct ValueCursor<'p> {
    pool: &'p ValuePool,
    pos: usize,
}

impl<'p> ValueCursor<'p> {
    /// The next `len` bytes of the pool, wrapping to the start when they would run past its
    /// end. `len` must not exceed the pool size given at construction.
    pub fn next_value(&mut self, len: usize) -> &'p [u8] {
        let data = &self.pool.data;
        if self.pos + len > data.len() {
            self.pos = 0;
        }
        let start = self.pos;
        self.pos += len;
        &data[start..start + len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_sixteen_zero_padded_digits() {
        let mut k = KeyBuf::new();
        assert_eq!(k.key(0), b"0000000000000000");
        assert_eq!(k.key(42), b"0000000000000042");
        assert_eq!(k.key(9_999_999_999_999_999), b"9999999999999999");
    }

    #[test]
    fn missing_key_sorts_right_after_its_neighbour_and_before_the_next() {
        let mut k = KeyBuf::new();
        let present = k.key(7).to_vec();
        let missing = k.missing(7).to_vec();
        let next = k.key(8).to_vec();
        assert_eq!(missing, b"0000000000000007.");
        assert!(present < missing && missing < next);
        // Writing a plain key after a missing one does not keep the suffix.
        assert_eq!(k.key(9).len(), KEY_SIZE);
    }

    #[test]
    fn sequential_numbers_sort_in_order() {
        let mut k = KeyBuf::new();
        let keys: Vec<Vec<u8>> = (0..2000).map(|n| k.key(n * 37).to_vec()).collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn pool_compresses_to_about_half_under_snappy() {
        let pool = ValuePool::new(301, 100);
        let raw = pool.bytes();
        let mut encoder = snap::raw::Encoder::new();
        // Compress block-sized pieces, as a table does.
        let (mut before, mut after) = (0usize, 0usize);
        for chunk in raw.chunks(4096) {
            let compressed = encoder.compress_vec(chunk).unwrap_or_default();
            before += chunk.len();
            after += compressed.len();
        }
        let ratio = after as f64 / before as f64;
        assert!((0.45..0.6).contains(&ratio), "ratio {ratio}");
    }

    #[test]
    fn pool_bytes_are_printable_and_seeded() {
        let a = ValuePool::new(7, 10);
        let b = ValuePool::new(7, 10);
        let c = ValuePool::new(8, 10);
        assert_eq!(a.bytes(), b.bytes());
        assert_ne!(a.bytes(), c.bytes());
        assert!(a.bytes().iter().all(|b| (b' '..=b'~').contains(b)));
        assert_eq!(a.bytes().len(), MIN_POOL);
    }

    #[test]
    fn cursor_hands_out_consecutive_slices_and_wraps() {
        let pool = ValuePool::new(1, 100_000);
        let mut cur = pool.cursor();
        let first = cur.next_value(100).as_ptr();
        let second = cur.next_value(100).as_ptr();
        assert_eq!(second as usize - first as usize, 100);
        // A value that would run past the end starts over at the beginning.
        let mut cur = pool.cursor();
        for _ in 0..10 {
            assert_eq!(cur.next_value(100_000).len(), 100_000);
        }
        assert_eq!(cur.next_value(100_000).as_ptr(), pool.bytes().as_ptr());
    }

    #[test]
    fn large_values_fit_the_pool() {
        let pool = ValuePool::new(1, 3 << 20);
        assert_eq!(pool.bytes().len(), 3 << 20);
        assert_eq!(pool.cursor().next_value(3 << 20).len(), 3 << 20);
    }
}
