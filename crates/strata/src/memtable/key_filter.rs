//! A bloom filter of the user keys in one memtable, so that a point lookup of a key the
//! memtable does not hold usually skips the skiplist search.
//!
//! Once a database outgrows its write buffer, nearly every lookup misses the memtable, and the
//! search that proves it walks about `4 · log4(n)` nodes scattered over the memtable's arena,
//! each a likely cache miss: it costs as much as the table lookup after it. The filter answers
//! most of these misses with one cache line. It is blocked: all of a key's bits lie in one
//! 64-bit word, chosen by the key's hash, so a probe reads one word and an insert writes one.
//!
//! Contract:
//! - [`KeyFilter::may_contain`] is true for every key [`KeyFilter::add`]ed before it, in this
//!   thread or in one whose adds happen-before it (the database publishes an entry's sequence
//!   with `Release` after its insert and reads it with `Acquire`, and an insert adds the key
//!   before it links the entry); false answers are wrong only for keys not yet added.
//! - Keys compare as bytes: only for a memtable whose comparator orders keys bytewise, where
//!   two keys are equal exactly when their bytes are (a user comparator may call different
//!   bytes equal, and then a lookup would hash other bytes than the entry's).
//! - Adds come from one thread at a time (the memtable's writer lock), so an add is a plain
//!   load and store of the word, not a locked read-modify-write; readers may read it at any time.
//! - Memory only, never on disk: its hash and layout may change freely.

use std::sync::atomic::{AtomicU64, Ordering};

use xxhash_rust::xxh3::xxh3_64;

/// Bits set per key, each chosen by six bits of the hash. With a filter of 1/32 of the write
/// buffer, 116-byte entries get about 30 bits of filter each and 32-byte entries 8: a false
/// positive rate of roughly 0.1% and 3% respectively for a one-word blocked filter.
const BITS_PER_KEY: u32 = 6;

/// The filter's size per byte of write buffer it covers.
const BUFFER_BYTES_PER_FILTER_BYTE: usize = 32;

/// Smallest and largest filters, in 64-bit words (512 bytes and 4 MiB).
const MIN_WORDS: usize = 64;
const MAX_WORDS: usize = 1 << 19;

/// See the module documentation.
pub(crate) struct KeyFilter {
    /// A power of two of words.
    words: Box<[AtomicU64]>,
}

impl KeyFilter {
    /// A filter sized for a memtable of `write_buffer_size` bytes: 1/32 of it, rounded up to a
    /// power of two of words, between 512 bytes and 4 MiB.
    pub(crate) fn for_buffer(write_buffer_size: usize) -> KeyFilter {
        let words = (write_buffer_size / BUFFER_BYTES_PER_FILTER_BYTE / 8)
            .clamp(MIN_WORDS, MAX_WORDS)
            .next_power_of_two();
        KeyFilter {
            words: (0..words).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Records `user_key`. Only one thread may add at a time (see the module documentation).
    #[inline]
    pub(crate) fn add(&self, user_key: &[u8]) {
        let (word, bits) = self.locate(user_key);
        // Unconditional: a branch on a word that misses the cache would be predicted, and a
        // wrong guess would redo the skiplist insert that runs meanwhile.
        word.store(word.load(Ordering::Relaxed) | bits, Ordering::Relaxed);
    }

    /// Starts loading the word `add(user_key)` writes into the processor's cache, so that the
    /// add does not wait for memory (the word of a random key is rarely cached: flushes and
    /// compactions on the same core stream through the caches). A hint: it changes nothing.
    #[inline]
    pub(crate) fn prefetch(&self, user_key: &[u8]) {
        let (word, _) = self.locate(user_key);
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch only hints the cache: it never faults and loads nothing the
        // program reads (here an address inside `words`, which `&self` keeps alive); the SSE
        // it needs is part of x86_64's baseline.
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(word.as_ptr().cast_const().cast());
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = word;
    }

    /// False only if `user_key` was never added (see the module documentation).
    #[inline]
    pub(crate) fn may_contain(&self, user_key: &[u8]) -> bool {
        let (word, bits) = self.locate(user_key);
        word.load(Ordering::Relaxed) & bits == bits
    }

    /// Bytes the filter holds.
    pub(crate) fn memory(&self) -> usize {
        std::mem::size_of_val(&*self.words)
    }

    /// The word holding `user_key`'s bits, and those bits: the word from the hash's top bits,
    /// each bit from six of its low bits.
    #[inline]
    fn locate(&self, user_key: &[u8]) -> (&AtomicU64, u64) {
        let hash = xxh3_64(user_key);
        let index = (hash >> 40) as usize & (self.words.len() - 1);
        let bits = (0..BITS_PER_KEY).fold(0u64, |bits, i| bits | 1 << ((hash >> (6 * i)) & 63));
        (&self.words[index], bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_added_key_may_be_contained() {
        let filter = KeyFilter::for_buffer(64 << 10);
        let keys: Vec<Vec<u8>> = (0..20_000u32).map(|i| i.to_be_bytes().to_vec()).collect();
        for key in &keys {
            filter.add(key);
        }
        assert!(keys.iter().all(|key| filter.may_contain(key)));
    }

    #[test]
    fn absent_keys_are_mostly_ruled_out_at_the_sizes_it_is_built_for() {
        // A 4 MiB buffer of 116-byte entries: about 36,000 keys.
        let filter = KeyFilter::for_buffer(4 << 20);
        for i in 0..36_000u64 {
            filter.add(format!("{i:016}").as_bytes());
        }
        let false_positives = (36_000..136_000u64)
            .filter(|i| filter.may_contain(format!("{i:016}").as_bytes()))
            .count();
        assert!(false_positives < 500, "{false_positives} of 100,000");
        // Nothing added: nothing may be contained.
        let empty = KeyFilter::for_buffer(4 << 20);
        assert!(!(0..1000u64).any(|i| empty.may_contain(&i.to_le_bytes())));
    }

    #[test]
    fn sizes_are_a_power_of_two_within_bounds() {
        for (buffer, bytes) in [
            (0, 512),
            (64 << 10, 2 << 10),
            (4 << 20, 128 << 10),
            (5 << 20, 256 << 10),
            (1 << 30, 4 << 20),
        ] {
            assert_eq!(
                KeyFilter::for_buffer(buffer).memory(),
                bytes,
                "buffer {buffer}"
            );
        }
    }
}
