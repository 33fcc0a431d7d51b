//! Small building blocks shared by every format: integer coding, checksums, hashing,
//! comparators, internal keys, the bloom filter, the sharded LRU cache, a bounded spin-wait and
//! raw Snappy's bounds.

pub(crate) mod bloom;
pub(crate) mod coding;
pub(crate) mod comparator;
pub(crate) mod crc;
pub(crate) mod entry;
pub(crate) mod hash;
pub(crate) mod internal_key;
pub(crate) mod lru;
pub(crate) mod snappy;
pub(crate) mod spin;
