//! A sharded LRU cache bounded by the total *charge* of its entries.
//!
//! Thread safety: every method takes `&self`; the cache is split into 16 shards, each behind its
//! own mutex, and a key's shard is chosen by its hash, so threads touching different keys rarely
//! contend. Each shard keeps `ceil(capacity / 16)` of charge.
//!
//! Values are `Arc<V>`: a lookup hands out a clone, so an entry evicted (or erased) while someone
//! uses it stays alive until its last user drops it — the cache only stops *counting* it. Values an
//! insert evicts are handed back to the caller after the shard's lock is released, so dropping an
//! expensive value (an open table closes its file) never holds other threads up, and a caller can
//! reuse what it evicted (the block cache recycles block buffers).
//!
//! Each shard is a hash map from key to a slot in a slab (`Vec`) of nodes linked into a doubly
//! linked recency list by index, which gives O(1) lookup, insert, promotion and eviction with no
//! allocation per operation once the slab has grown. (The `lru` crate bounds entry *counts* and
//! allocates a node per insert; charging by bytes is what a block cache needs, and ~150 lines
//! here avoid both.) Keys are engine-chosen integers (file numbers, block offsets), never
//! attacker-chosen, so the hash is a fast multiplicative mix rather than SipHash.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::Arc;

use parking_lot::Mutex;
use smallvec::SmallVec;

/// The values one insert displaced or evicted, handed back to the caller after the shard's
/// lock is released. An insert usually pushes out one or two blocks: no allocation for those.
pub(crate) type Evicted<V> = SmallVec<[Arc<V>; 4]>;

const SHARD_BITS: u32 = 4;
const NUM_SHARDS: usize = 1 << SHARD_BITS;

/// Sentinel "no slot" index in the recency list.
const NIL: u32 = u32::MAX;

/// A fast, non-keyed hasher for small integer keys (FxHash-style mixing, splitmix64 finish so
/// both the high bits (shard choice) and the low bits (bucket choice) are well spread).
#[derive(Default, Clone, Copy)]
pub(crate) struct FastHasher {
    hash: u64,
}

impl FastHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            for (dst, src) in word.iter_mut().zip(chunk) {
                *dst = *src;
            }
            self.add(u64::from_le_bytes(word));
        }
    }
    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }
    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }
    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        let mut z = self.hash;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

type FastBuildHasher = BuildHasherDefault<FastHasher>;

fn hash_of<K: Hash>(key: &K) -> u64 {
    let mut h = FastHasher::default();
    key.hash(&mut h);
    h.finish()
}

/// A slab slot: an entry (or nothing, when free) and its recency-list links.
struct Slot<K, V> {
    entry: Option<(K, Arc<V>)>,
    charge: usize,
    /// Towards the most recently used end.
    prev: u32,
    /// Towards the least recently used end.
    next: u32,
}

/// One shard: map + slab + recency list. Invariant: every occupied slot is in `map` and in the
/// list exactly once; `usage` is the sum of the occupied slots' charges.
struct Shard<K, V> {
    map: HashMap<K, u32, FastBuildHasher>,
    slots: Vec<Slot<K, V>>,
    free: Vec<u32>,
    /// Most recently used.
    head: u32,
    /// Least recently used: evicted first.
    tail: u32,
    usage: usize,
    capacity: usize,
}

impl<K: Hash + Eq + Clone, V> Shard<K, V> {
    fn new(capacity: usize) -> Shard<K, V> {
        Shard {
            map: HashMap::default(),
            slots: Vec::new(),
            free: Vec::new(),
            head: NIL,
            tail: NIL,
            usage: 0,
            capacity,
        }
    }

    fn unlink(&mut self, i: u32) {
        let (prev, next) = {
            let slot = &self.slots[i as usize];
            (slot.prev, slot.next)
        };
        if prev == NIL {
            self.head = next;
        } else {
            self.slots[prev as usize].next = next;
        }
        if next == NIL {
            self.tail = prev;
        } else {
            self.slots[next as usize].prev = prev;
        }
    }

    fn push_front(&mut self, i: u32) {
        let old_head = self.head;
        {
            let slot = &mut self.slots[i as usize];
            slot.prev = NIL;
            slot.next = old_head;
        }
        if old_head == NIL {
            self.tail = i;
        } else {
            self.slots[old_head as usize].prev = i;
        }
        self.head = i;
    }

    fn touch(&mut self, i: u32) {
        if self.head != i {
            self.unlink(i);
            self.push_front(i);
        }
    }

    fn get(&mut self, key: &K) -> Option<Arc<V>> {
        let i = *self.map.get(key)?;
        self.touch(i);
        self.slots[i as usize]
            .entry
            .as_ref()
            .map(|(_, v)| Arc::clone(v))
    }

    /// Inserts or replaces; pushes whatever is displaced or evicted into `dropped`.
    fn insert(&mut self, key: K, value: Arc<V>, charge: usize, dropped: &mut Evicted<V>) {
        if let Some(&i) = self.map.get(&key) {
            let slot = &mut self.slots[i as usize];
            if let Some((_, old)) = slot.entry.replace((key, value)) {
                dropped.push(old);
            }
            self.usage = self.usage - slot.charge + charge;
            slot.charge = charge;
            self.touch(i);
        } else {
            let slot = Slot {
                entry: Some((key.clone(), value)),
                charge,
                prev: NIL,
                next: NIL,
            };
            let i = match self.free.pop() {
                Some(i) => {
                    self.slots[i as usize] = slot;
                    i
                }
                None => {
                    self.slots.push(slot);
                    (self.slots.len() - 1) as u32
                }
            };
            self.map.insert(key, i);
            self.push_front(i);
            self.usage += charge;
        }
        while self.usage > self.capacity && self.tail != NIL {
            let victim = self.tail;
            if let Some(v) = self.remove_slot(victim) {
                dropped.push(v);
            }
        }
    }

    fn remove_slot(&mut self, i: u32) -> Option<Arc<V>> {
        self.unlink(i);
        let slot = &mut self.slots[i as usize];
        let (key, value) = slot.entry.take()?;
        self.usage -= slot.charge;
        slot.charge = 0;
        self.map.remove(&key);
        self.free.push(i);
        Some(value)
    }

    fn erase(&mut self, key: &K) -> Option<Arc<V>> {
        let i = *self.map.get(key)?;
        self.remove_slot(i)
    }

    #[cfg(test)]
    fn clear(&mut self) -> Vec<Arc<V>> {
        let dropped = self
            .slots
            .drain(..)
            .filter_map(|s| s.entry.map(|(_, v)| v))
            .collect();
        self.map.clear();
        self.free.clear();
        self.head = NIL;
        self.tail = NIL;
        self.usage = 0;
        dropped
    }
}

/// A sharded LRU cache from `K` to `Arc<V>`, bounded by total charge. See the module docs.
pub(crate) struct LruCache<K, V> {
    shards: Box<[Mutex<Shard<K, V>>]>,
    capacity: usize,
}

impl<K: Hash + Eq + Clone, V> LruCache<K, V> {
    /// A cache holding up to `capacity` of charge (0 disables caching: inserts are dropped).
    pub(crate) fn new(capacity: usize) -> LruCache<K, V> {
        let per_shard = capacity.div_ceil(NUM_SHARDS);
        LruCache {
            shards: (0..NUM_SHARDS)
                .map(|_| Mutex::new(Shard::new(per_shard)))
                .collect(),
            capacity,
        }
    }

    #[inline]
    fn shard(&self, key: &K) -> &Mutex<Shard<K, V>> {
        let index = (hash_of(key) >> (64 - SHARD_BITS)) as usize;
        &self.shards[index % NUM_SHARDS]
    }

    /// The configured capacity.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// Inserts `value` under `key` (replacing any previous value) with `charge` against the
    /// capacity, then evicts least recently used entries while over capacity. An entry whose
    /// charge exceeds its shard's capacity is not kept.
    /// Returns what the insert pushed out (including `value` itself when it is not kept), for
    /// the caller to drop or reuse.
    pub(crate) fn insert(&self, key: K, value: Arc<V>, charge: usize) -> Evicted<V> {
        let mut dropped = Evicted::new();
        if self.capacity == 0 {
            dropped.push(value);
            return dropped;
        }
        self.shard(&key)
            .lock()
            .insert(key, value, charge, &mut dropped);
        dropped
    }

    /// The value under `key`, marking it most recently used.
    pub(crate) fn get(&self, key: &K) -> Option<Arc<V>> {
        self.shard(key).lock().get(key)
    }

    /// Removes `key`; users holding its value keep it.
    pub(crate) fn erase(&self, key: &K) {
        let removed = self.shard(key).lock().erase(key);
        drop(removed);
    }

    /// Sum of the charges of the entries held.
    pub(crate) fn total_charge(&self) -> usize {
        self.shards.iter().map(|s| s.lock().usage).sum()
    }

    #[cfg(test)]
    /// Number of entries held.
    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().map.len()).sum()
    }

    #[cfg(test)]
    /// Removes every entry; users holding values keep them.
    pub(crate) fn prune(&self) {
        for shard in self.shards.iter() {
            let dropped = shard.lock().clear();
            drop(dropped);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn get_insert_replace_erase() {
        let cache: LruCache<u64, String> = LruCache::new(1000);
        assert!(cache.get(&1).is_none());
        cache.insert(1, Arc::new("one".into()), 10);
        cache.insert(2, Arc::new("two".into()), 20);
        assert_eq!(cache.get(&1).as_deref().map(String::as_str), Some("one"));
        assert_eq!(cache.total_charge(), 30);
        cache.insert(1, Arc::new("uno".into()), 5);
        assert_eq!(cache.get(&1).as_deref().map(String::as_str), Some("uno"));
        assert_eq!(cache.total_charge(), 25);
        assert_eq!(cache.len(), 2);
        cache.erase(&1);
        assert!(cache.get(&1).is_none());
        assert_eq!(cache.total_charge(), 20);
        cache.erase(&42); // absent: no effect
        cache.prune();
        assert_eq!(cache.len(), 0);
        assert_eq!(cache.total_charge(), 0);
    }

    /// Keys that all land in one shard, so per-shard eviction order can be observed.
    fn same_shard_keys(n: usize) -> Vec<u64> {
        let target = hash_of(&0u64) >> (64 - SHARD_BITS);
        (0u64..)
            .filter(|k| hash_of(k) >> (64 - SHARD_BITS) == target)
            .take(n)
            .collect()
    }

    #[test]
    fn evicts_least_recently_used_by_charge() {
        // 16 shards of 100 each.
        let cache: LruCache<u64, u64> = LruCache::new(1600);
        let keys = same_shard_keys(6);
        for &k in &keys[..4] {
            cache.insert(k, Arc::new(k), 25);
        }
        assert_eq!(cache.total_charge(), 100);
        // Touch the oldest so the second-oldest becomes the victim.
        assert!(cache.get(&keys[0]).is_some());
        cache.insert(keys[4], Arc::new(keys[4]), 25);
        assert!(cache.get(&keys[1]).is_none());
        for k in [keys[0], keys[2], keys[3], keys[4]] {
            assert!(cache.get(&k).is_some());
        }
        // A heavy entry pushes out several.
        cache.insert(keys[5], Arc::new(keys[5]), 70);
        assert!(cache.total_charge() <= 100);
        assert!(cache.get(&keys[5]).is_some());
        assert!(cache.get(&keys[0]).is_none());
        // An entry larger than the shard is not kept.
        cache.insert(keys[1], Arc::new(0), 1000);
        assert!(cache.get(&keys[1]).is_none());
        assert_eq!(cache.total_charge(), 0);
    }

    #[test]
    fn pinned_values_survive_eviction() {
        let cache: LruCache<u64, Vec<u8>> = LruCache::new(16);
        let keys = same_shard_keys(2);
        cache.insert(keys[0], Arc::new(vec![1, 2, 3]), 1);
        let pinned = cache.get(&keys[0]).unwrap();
        cache.insert(keys[1], Arc::new(vec![4]), 1); // shard capacity 1: evicts keys[0]
        assert!(cache.get(&keys[0]).is_none());
        assert_eq!(*pinned, vec![1, 2, 3]);
        assert_eq!(Arc::strong_count(&pinned), 1);
        cache.erase(&keys[1]);
        cache.prune();
        assert_eq!(*pinned, vec![1, 2, 3]);
    }

    #[test]
    fn zero_capacity_keeps_nothing() {
        let cache: LruCache<u64, u64> = LruCache::new(0);
        cache.insert(1, Arc::new(1), 0);
        cache.insert(2, Arc::new(2), 1);
        assert!(cache.get(&2).is_none());
        assert_eq!(cache.total_charge(), 0);
    }

    #[test]
    fn keys_spread_over_shards() {
        let shards: HashSet<u64> = (0u64..256)
            .map(|k| hash_of(&(7u64, k * 4096)) >> (64 - SHARD_BITS))
            .collect();
        assert_eq!(shards.len(), NUM_SHARDS);
        let cache: LruCache<(u64, u64), u64> = LruCache::new(1 << 20);
        for k in 0..1000u64 {
            cache.insert((1, k * 4096), Arc::new(k), 10);
        }
        assert_eq!(cache.len(), 1000);
        assert_eq!(cache.total_charge(), 10_000);
        for k in 0..1000u64 {
            assert_eq!(cache.get(&(1, k * 4096)).as_deref(), Some(&k));
        }
    }

    #[test]
    fn slots_are_reused_after_eviction() {
        let cache: LruCache<u64, u64> = LruCache::new(16 * 10);
        for k in 0..10_000u64 {
            cache.insert(k, Arc::new(k), 1);
        }
        assert!(cache.len() <= 160);
        let slab: usize = cache.shards.iter().map(|s| s.lock().slots.len()).sum();
        assert!(slab <= 16 * 11, "slab grew to {slab}");
    }

    #[test]
    fn concurrent_use_is_consistent() {
        let cache: Arc<LruCache<u64, u64>> = Arc::new(LruCache::new(500));
        let threads: Vec<_> = (0..4u64)
            .map(|t| {
                let cache = Arc::clone(&cache);
                std::thread::spawn(move || {
                    for i in 0..5_000u64 {
                        let k = (i * 7 + t) % 1000;
                        if let Some(v) = cache.get(&k) {
                            assert_eq!(*v, k);
                        } else {
                            cache.insert(k, Arc::new(k), 1);
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert!(cache.total_charge() <= 16 * 32);
        assert_eq!(cache.total_charge(), cache.len());
    }
}
