//! Filter policies and LevelDB's built-in bloom filter (`leveldb.BuiltinBloomFilter2`).
//!
//! Filter layout (on-disk: never change): `ceil(bits / 8)` bytes of bit array (at least 64 bits)
//! followed by one byte holding `k`, the number of probes. Probe `i` of a key sets bit
//! `(h + i * delta) mod bits`, where `h` is [`hash`](super::hash::hash) of the key with seed
//! `0xbc9f1d34` and `delta = h.rotate_right(17)`. `k = trunc(bits_per_key * 0.69)` clamped to
//! `1..=30`. Filters with `k > 30` are reserved for other encodings and always match.

use super::hash::hash;

/// Builds small summaries of key sets that answer "definitely absent" for most absent keys.
///
/// Thread safety: shared by all threads; implementations must be pure. The name is stored in
/// tables (`filter.<name>` in the metaindex), so a table's filter is used only by a policy of
/// the same name.
pub trait FilterPolicy: Send + Sync {
    /// The policy's name, recorded in every table that carries its filters.
    fn name(&self) -> &str;

    /// Appends a filter summarising `keys` to `dst`.
    fn create_filter(&self, keys: &[&[u8]], dst: &mut Vec<u8>);

    /// Must return true when `key` was among the keys `filter` was made from; may return true
    /// for other keys too.
    fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool;
}

impl std::fmt::Debug for dyn FilterPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FilterPolicy({})", self.name())
    }
}

/// LevelDB's built-in bloom filter, bit-compatible with `NewBloomFilterPolicy(bits_per_key)`.
#[derive(Debug, Clone, Copy)]
pub struct BloomFilterPolicy {
    bits_per_key: usize,
    probes: u8,
}

const BLOOM_SEED: u32 = 0xbc9f_1d34;

fn bloom_hash(key: &[u8]) -> u32 {
    hash(key, BLOOM_SEED)
}

impl BloomFilterPolicy {
    /// A bloom filter using about `bits_per_key` bits per key (10 gives ~1% false positives).
    pub fn new(bits_per_key: usize) -> BloomFilterPolicy {
        // 0.69 ~= ln(2) minimises the false-positive rate.
        let probes = ((bits_per_key as f64) * 0.69) as usize;
        BloomFilterPolicy {
            bits_per_key,
            probes: probes.clamp(1, 30) as u8,
        }
    }
}

impl FilterPolicy for BloomFilterPolicy {
    fn name(&self) -> &str {
        "leveldb.BuiltinBloomFilter2"
    }

    fn create_filter(&self, keys: &[&[u8]], dst: &mut Vec<u8>) {
        let bits = (keys.len() * self.bits_per_key).max(64);
        let bytes = bits.div_ceil(8);
        let bits = bytes * 8;
        let start = dst.len();
        dst.resize(start + bytes, 0);
        dst.push(self.probes);
        let array = &mut dst[start..start + bytes];
        for key in keys {
            let mut h = bloom_hash(key);
            let delta = h.rotate_right(17);
            for _ in 0..self.probes {
                let bit = (h as usize) % bits;
                array[bit / 8] |= 1 << (bit % 8);
                h = h.wrapping_add(delta);
            }
        }
    }

    fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool {
        let Some((&probes, array)) = filter.split_last() else {
            return false;
        };
        if array.is_empty() {
            return false;
        }
        if probes > 30 {
            // Reserved for future encodings: treat as a match.
            return true;
        }
        let bits = array.len() * 8;
        let mut h = bloom_hash(key);
        let delta = h.rotate_right(17);
        for _ in 0..probes {
            let bit = (h as usize) % bits;
            if array[bit / 8] & (1 << (bit % 8)) == 0 {
                return false;
            }
            h = h.wrapping_add(delta);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: u32) -> [u8; 4] {
        i.to_le_bytes()
    }

    #[test]
    fn empty_filter_matches_nothing() {
        let policy = BloomFilterPolicy::new(10);
        let mut filter = Vec::new();
        policy.create_filter(&[], &mut filter);
        assert_eq!(filter.len(), 9); // 64 bits + k
        assert!(!policy.key_may_match(b"hello", &filter));
        assert!(!policy.key_may_match(b"hello", &[]));
    }

    #[test]
    fn small_filter_has_members_and_rejects_others() {
        let policy = BloomFilterPolicy::new(10);
        let mut filter = Vec::new();
        policy.create_filter(&[b"hello", b"world"], &mut filter);
        assert!(policy.key_may_match(b"hello", &filter));
        assert!(policy.key_may_match(b"world", &filter));
        assert!(!policy.key_may_match(b"x", &filter));
        assert!(!policy.key_may_match(b"foo", &filter));
    }

    #[test]
    fn false_positive_rate_is_about_one_percent() {
        let policy = BloomFilterPolicy::new(10);
        for n in [1u32, 10, 100, 1000, 10_000] {
            let keys: Vec<[u8; 4]> = (0..n).map(key).collect();
            let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
            let mut filter = Vec::new();
            policy.create_filter(&refs, &mut filter);
            assert!(filter.len() <= (n as usize * 10 / 8) + 40);
            for k in &keys {
                assert!(policy.key_may_match(k, &filter), "n={n} lost a member");
            }
            let false_positives = (0..10_000u32)
                .filter(|i| policy.key_may_match(&key(i + 1_000_000_000), &filter))
                .count();
            assert!(
                false_positives <= 200,
                "n={n}: {false_positives} false positives in 10000"
            );
        }
    }

    #[test]
    fn probe_count_follows_bits_per_key() {
        assert_eq!(BloomFilterPolicy::new(10).probes, 6);
        assert_eq!(BloomFilterPolicy::new(0).probes, 1);
        assert_eq!(BloomFilterPolicy::new(100).probes, 30);
    }
}
