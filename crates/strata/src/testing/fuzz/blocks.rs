//! Fuzz bodies for a table's blocks: the prefix-compressed block and the filter block.

use std::collections::BTreeMap;
use std::sync::Arc;

use arbitrary::{Result, Unstructured};

use super::{bytes, damage, small_key};
use crate::iter::InternalIterator;
use crate::table::block::{Block, KeyOrder};
use crate::table::block_builder::BlockBuilder;
use crate::table::filter_block::{FilterBlockBuilder, FilterBlockReader};
use crate::util::bloom::{BloomFilterPolicy, FilterPolicy};

/// Fuzz target `block`: `data` as a raw block, then as a recipe for a block that must decode
/// back to its entries in both directions and under seeks, then survive damage.
pub fn block(data: &[u8]) {
    walk_block(data.to_vec(), &[]);
    let _ = block_round_trip(&mut Unstructured::new(data));
}

/// Walks a block of unknown bytes forwards, backwards and by seeks. Decoding may fail; it must
/// not panic, and no walk may outlast the block (every entry takes at least three bytes).
fn walk_block(bytes: Vec<u8>, targets: &[Vec<u8>]) {
    let bound = bytes.len() + 1;
    let Ok(block) = Block::new(bytes, 0) else {
        return;
    };
    let block = Arc::new(block);
    let mut it = block.iter(KeyOrder::Bytewise);
    let mut keys = Vec::new();
    it.seek_to_first();
    while it.valid() {
        assert!(keys.len() < bound, "forward walk of a block does not end");
        keys.push(it.key().to_vec());
        let _ = it.value();
        it.next();
    }
    let _ = it.status();
    it.seek_to_last();
    let mut steps = 0;
    while it.valid() {
        steps += 1;
        assert!(steps <= bound, "backward walk of a block does not end");
        let _ = (it.key(), it.value());
        it.prev();
    }
    for target in keys.iter().chain(targets) {
        it.seek(target);
        if it.valid() {
            let _ = (it.key(), it.value());
            it.prev();
            if it.valid() {
                it.next();
            }
        }
    }
    let _ = it.status();
}

fn block_round_trip(u: &mut Unstructured<'_>) -> Result<()> {
    let restart_interval = u.int_in_range(1..=20)?;
    let count = u.int_in_range(0..=200)?;
    let mut map = BTreeMap::new();
    for _ in 0..count {
        let key = if u.arbitrary()? {
            small_key(u, 24)?
        } else {
            bytes(u, 24)?
        };
        map.insert(key, bytes(u, 40)?);
    }
    let entries: Vec<(Vec<u8>, Vec<u8>)> = map.into_iter().collect();
    let mut builder = BlockBuilder::new(restart_interval);
    for (k, v) in &entries {
        builder.add(k, v);
    }
    let encoded = builder.finish().to_vec();

    let block = match Block::new(encoded.clone(), 0) {
        Ok(block) => Arc::new(block),
        Err(e) => panic!("a freshly built block does not decode: {e}"),
    };
    let mut it = block.iter(KeyOrder::Bytewise);
    let mut forward = Vec::new();
    it.seek_to_first();
    while it.valid() && forward.len() <= entries.len() {
        forward.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    assert!(it.status().is_ok(), "built block: {:?}", it.status());
    assert_eq!(forward, entries, "forward walk of a built block");
    let mut backward = Vec::new();
    it.seek_to_last();
    while it.valid() && backward.len() <= entries.len() {
        backward.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    backward.reverse();
    assert_eq!(backward, entries, "backward walk of a built block");

    let mut targets = Vec::new();
    for _ in 0..u.int_in_range(0..=16)? {
        let target = small_key(u, 26)?;
        let at = entries.partition_point(|(k, _)| k < &target);
        it.seek(&target);
        match entries.get(at) {
            Some((k, v)) => {
                assert!(it.valid(), "seek({target:?}) found nothing; expected {k:?}");
                assert_eq!((it.key(), it.value()), (&k[..], &v[..]), "seek({target:?})");
                it.prev();
                match at.checked_sub(1).and_then(|i| entries.get(i)) {
                    Some((k, _)) => assert_eq!(it.key(), &k[..], "prev after seek"),
                    None => assert!(!it.valid(), "prev before the first entry"),
                }
            }
            None => assert!(!it.valid(), "seek({target:?}) past the end is valid"),
        }
        targets.push(target);
    }
    assert!(it.status().is_ok(), "built block: {:?}", it.status());

    let mut damaged = encoded;
    damage(u, &mut damaged)?;
    walk_block(damaged, &targets);
    Ok(())
}

/// Fuzz target `filter`: `data` as a raw filter block (and as a raw bloom filter) asked about
/// keys, then as a recipe for a filter block that must never rule out a key it was built with.
pub fn filter(data: &[u8]) {
    let policy: Arc<dyn FilterPolicy> = Arc::new(BloomFilterPolicy::new(10));
    let reader = FilterBlockReader::new(Arc::clone(&policy), data.to_vec());
    let probes = [&[][..], b"a", data.get(..4).unwrap_or(data)];
    for offset in [0, 1, 2047, 2048, 4096, 1 << 20, u64::MAX] {
        for key in probes {
            let _ = reader.key_may_match(offset, key);
        }
    }
    for key in probes {
        let _ = policy.key_may_match(key, data);
    }
    let _ = filter_round_trip(&mut Unstructured::new(data));
}

fn filter_round_trip(u: &mut Unstructured<'_>) -> Result<()> {
    let bits_per_key = u.int_in_range(0..=30)?;
    let policy: Arc<dyn FilterPolicy> = Arc::new(BloomFilterPolicy::new(bits_per_key));
    let mut builder = FilterBlockBuilder::new(Arc::clone(&policy));
    // Data blocks: (file offset, user keys), offsets increasing as in a table.
    let mut blocks: Vec<(u64, Vec<Vec<u8>>)> = Vec::new();
    let mut offset = 0u64;
    for _ in 0..u.int_in_range(0..=40)? {
        builder.start_block(offset);
        let keys: Vec<Vec<u8>> = (0..u.int_in_range(0..=30)?)
            .map(|_| bytes(u, 16))
            .collect::<Result<_>>()?;
        for key in &keys {
            builder.add_key(key);
        }
        blocks.push((offset, keys));
        offset += u.int_in_range(1..=12_000)?;
    }
    let encoded = builder.finish().to_vec();

    let reader = FilterBlockReader::new(Arc::clone(&policy), encoded.clone());
    for (offset, keys) in &blocks {
        for key in keys {
            assert!(
                reader.key_may_match(*offset, key),
                "filter rules out {key:?}, added for the block at {offset}"
            );
        }
    }

    let mut damaged = encoded;
    damage(u, &mut damaged)?;
    let reader = FilterBlockReader::new(policy, damaged);
    for (offset, keys) in &blocks {
        for key in keys.iter().take(4) {
            let _ = reader.key_may_match(*offset, key);
        }
    }
    Ok(())
}
