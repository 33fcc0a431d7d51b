//! Fuzz body for whole tables: footer, index, metaindex, filter and data blocks together, and
//! the range-deletion block (format extension `range-deletes`).

use std::sync::Arc;

use arbitrary::{Result, Unstructured};

use super::{bytes, damage, pattern_value, small_key, Damage};
use crate::env::vec_files::{VecFile, VecSink};
use crate::error::Error;
use crate::iter::InternalIterator;
use crate::range_del::{Fragments, RangeTombstone};
use crate::table::block_cache::BlockCache;
use crate::table::builder::TableBuilder;
use crate::table::format::CompressionType;
use crate::table::format::FOOTER_LEN;
use crate::table::reader::Table;
use crate::table::BlockReads;
use crate::table::TableOptions;
use crate::util::bloom::{BloomFilterPolicy, FilterPolicy};
use crate::util::comparator::BytewiseComparator;
use crate::util::internal_key::{
    internal_key, lookup_key, parse_internal_key, InternalKeyComparator, ValueType, MAX_SEQUENCE,
};

/// Fuzz target `table`: `data` as a raw table file, then as a recipe for a table (entries and
/// options) that must read back exactly, answer point lookups right, and, damaged in one byte
/// outside its footer, either read back exactly or fail (`paranoid_checks` on).
pub fn table(data: &[u8]) {
    // Enough lookups that the later ones go through the index's restart prints and the
    // blocks they place (the prints built on a table's third lookup, the offsets on its fourth).
    let probes: Vec<Vec<u8>> = std::iter::once(&b"a"[..])
        .chain(data.chunks(5).take(11))
        .cycle()
        .take(24)
        .map(<[u8]>::to_vec)
        .collect();
    let _ = read_table(data.to_vec(), &options(Some(10), false, false), &probes);
    let with_tombstones = TableOptions {
        range_deletions: true,
        ..options(None, true, true)
    };
    let _ = read_table(data.to_vec(), &with_tombstones, &probes);
    let _ = table_round_trip(&mut Unstructured::new(data));
}

fn options(filter_bits: Option<usize>, paranoid_checks: bool, cache: bool) -> TableOptions {
    TableOptions {
        icmp: InternalKeyComparator::new(BytewiseComparator::shared()),
        block_size: 4096,
        block_restart_interval: 16,
        compression: CompressionType::Snappy,
        filter_policy: filter_bits
            .map(|bits| Arc::new(BloomFilterPolicy::new(bits)) as Arc<dyn FilterPolicy>),
        block_cache: cache.then(|| BlockCache::new(64 << 10)),
        paranoid_checks,
        range_deletions: false,
    }
}

/// A table's internal keys and values, in order.
type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// Opens `bytes` as a table and reads every entry both ways, then looks up `user_keys`.
/// Returns the entries the forward walk saw (or the first error).
fn read_table(
    bytes: Vec<u8>,
    opts: &TableOptions,
    user_keys: &[Vec<u8>],
) -> std::result::Result<Entries, Error> {
    let len = bytes.len() as u64;
    let table = Table::open(
        opts.clone(),
        Arc::new(VecFile::new(bytes)),
        len,
        "fuzz".into(),
    )?;
    let read = BlockReads {
        verify_checksums: true,
        ..BlockReads::default()
    };
    let mut it = table.iter(read);
    let mut entries = Vec::new();
    it.seek_to_first();
    while it.valid() {
        entries.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    let forward = it.status().map(|()| entries);
    it.seek_to_last();
    while it.valid() {
        let _ = (it.key(), it.value());
        it.prev();
    }
    for user_key in user_keys {
        let target = lookup_key(user_key, MAX_SEQUENCE);
        it.seek(&target);
        if it.valid() {
            it.prev();
        }
        let _ = table.get(read, &target, |k, v| (k.len(), v.len()));
        let _ = table.filter_may_match(&target);
        let _ = table.approximate_offset_of(&target);
    }
    forward
}

/// One version of a user key: sequence, kind, value.
type Version = (u64, bool, Vec<u8>);

fn table_round_trip(u: &mut Unstructured<'_>) -> Result<()> {
    let filter_bits = if u.arbitrary()? {
        Some(u.int_in_range(1..=20)?)
    } else {
        None
    };
    let opts = TableOptions {
        block_size: u.int_in_range(64..=4096)?,
        block_restart_interval: u.int_in_range(1..=16)?,
        compression: if u.arbitrary()? {
            CompressionType::Snappy
        } else {
            CompressionType::None
        },
        range_deletions: u.arbitrary()?,
        ..options(filter_bits, false, u.arbitrary()?)
    };

    // User keys in order, each with its versions newest first: internal key order.
    let mut user_keys: Vec<Vec<u8>> = (0..u.int_in_range(0..=120)?)
        .map(|_| small_key(u, 12))
        .collect::<Result<_>>()?;
    user_keys.sort();
    user_keys.dedup();
    let mut versions: Vec<Vec<Version>> = Vec::with_capacity(user_keys.len());
    for _ in &user_keys {
        let mut seqs: Vec<u64> = (0..u.int_in_range(1..=3)?)
            .map(|_| u.int_in_range(0..=MAX_SEQUENCE))
            .collect::<Result<_>>()?;
        seqs.sort_unstable_by(|a, b| b.cmp(a));
        seqs.dedup();
        let mut v = Vec::with_capacity(seqs.len());
        for seq in seqs {
            v.push((seq, u.ratio(4, 5)?, pattern_value(u, 9000)?));
        }
        versions.push(v);
    }
    let entries: Entries = user_keys
        .iter()
        .zip(&versions)
        .flat_map(|(key, versions)| {
            versions.iter().map(move |(seq, is_value, value)| {
                let t = if *is_value {
                    ValueType::Value
                } else {
                    ValueType::Deletion
                };
                (internal_key(key, *seq, t), value.clone())
            })
        })
        .collect();

    // Range tombstones, in the order a table holds them (none unless the options read them).
    let mut tombstones = Vec::new();
    if opts.range_deletions {
        for _ in 0..u.int_in_range(0..=4)? {
            let (a, b) = (small_key(u, 12)?, small_key(u, 12)?);
            tombstones.push(RangeTombstone {
                start: a.clone().min(b.clone()),
                end: a.max(b),
                sequence: u.int_in_range(0..=MAX_SEQUENCE)?,
            });
        }
    }
    let fragments = Fragments::new(&opts.icmp, tombstones);

    let out = VecSink::new();
    let mut builder = TableBuilder::new(opts.clone(), Box::new(out.clone()));
    for (k, v) in &entries {
        if let Err(e) = builder.add(k, v) {
            panic!("building a table: {e}");
        }
    }
    for tombstone in fragments.tombstones() {
        if let Err(e) = builder.add_range_tombstone(&tombstone) {
            panic!("adding a range tombstone: {e}");
        }
    }
    if let Err(e) = builder.finish() {
        panic!("finishing a table: {e}");
    }
    let encoded = out.contents();

    // Read back: the same entries both ways, and point lookups that find the newest version.
    let len = encoded.len() as u64;
    let table = match Table::open(
        opts.clone(),
        Arc::new(VecFile::sharing(encoded.clone())),
        len,
        "built".into(),
    ) {
        Ok(table) => table,
        Err(e) => panic!("a freshly built table does not open: {e}"),
    };
    assert_eq!(table.has_filter(), filter_bits.is_some());
    let read_back = table.range_tombstones().map(|t| t.fragments().to_vec());
    assert_eq!(
        read_back.unwrap_or_default(),
        fragments.fragments(),
        "a built table reads back other range tombstones"
    );
    match read_table(encoded.clone(), &opts, &[]) {
        Ok(read) => assert_eq!(read, entries, "a built table reads back different entries"),
        Err(e) => panic!("a freshly built table does not read back: {e}"),
    }
    let read = BlockReads::default();
    let mut it = table.iter(read);
    it.seek_to_last();
    for (k, v) in entries.iter().rev() {
        assert!(it.valid(), "backward walk ended early");
        assert_eq!((it.key(), it.value()), (&k[..], &v[..]), "backward walk");
        it.prev();
    }
    assert!(!it.valid(), "backward walk has extra entries");
    check_gets(&table, &user_keys, &versions, false);
    let mut last_offset = 0;
    for key in &user_keys {
        let offset = table.approximate_offset_of(&lookup_key(key, MAX_SEQUENCE));
        assert!(
            offset >= last_offset && offset <= len,
            "approximate offsets"
        );
        last_offset = offset;
    }
    for _ in 0..u.int_in_range(0..=8)? {
        let key = bytes(u, 12)?;
        if user_keys.binary_search(&key).is_err() {
            let target = lookup_key(&key, MAX_SEQUENCE);
            let found = table.get(read, &target, |k, _| {
                parse_internal_key(k).is_some_and(|p| p.user_key == key)
            });
            assert!(
                matches!(found, Ok(None) | Ok(Some(false))),
                "get({key:?}) of an absent key: {found:?}"
            );
        }
    }

    // One byte changed outside the footer, every checksum verified: exact or an error.
    let paranoid = TableOptions {
        paranoid_checks: true,
        ..opts.clone()
    };
    let body = encoded.len().saturating_sub(FOOTER_LEN);
    if body > 0 {
        let at = u.int_in_range(0..=body - 1)?;
        let mut damaged = encoded.clone();
        Damage::Flip {
            at,
            mask: u.int_in_range(1..=255)?,
        }
        .apply(&mut damaged);
        if let Ok(read) = read_table(damaged.clone(), &paranoid, &[]) {
            assert_eq!(read, entries, "a byte flipped at {at} went unnoticed");
        }
        // Here the meta blocks stay in the file's bytes, as in a mapped table; `read_table`
        // above reads copies.
        let file = Arc::new(VecFile::sharing(damaged));
        if let Ok(table) = Table::open(paranoid.clone(), file, len, "damaged".into()) {
            check_gets(&table, &user_keys, &versions, true);
            // The range-deletion block is verified when the table opens: exact, or no open.
            let read_back = table.range_tombstones().map(|t| t.fragments().to_vec());
            assert_eq!(
                read_back.unwrap_or_default(),
                fragments.fragments(),
                "a byte flipped at {at} changed the range tombstones unnoticed"
            );
        }
    }

    // Anything else: no panic, whatever the options.
    let mut damaged = encoded;
    damage(u, &mut damaged)?;
    let damaged_opts = if u.arbitrary()? { paranoid } else { opts };
    let _ = read_table(damaged, &damaged_opts, &user_keys);
    Ok(())
}

/// Looks every user key up and checks it finds its newest version (or, when `may_fail`, an
/// error). The filter must never rule a present key out.
fn check_gets(table: &Table, user_keys: &[Vec<u8>], versions: &[Vec<Version>], may_fail: bool) {
    let read = BlockReads {
        verify_checksums: may_fail,
        ..BlockReads::default()
    };
    for (key, versions) in user_keys.iter().zip(versions) {
        let target = lookup_key(key, MAX_SEQUENCE);
        match table.filter_may_match(&target) {
            Ok(true) => {}
            Err(_) if may_fail => {}
            other => panic!("the filter answers {other:?} for present key {key:?}"),
        }
        let found = table.get(read, &target, |k, v| {
            parse_internal_key(k).map(|p| {
                (
                    p.user_key.to_vec(),
                    p.sequence,
                    p.value_type == ValueType::Value,
                    v.to_vec(),
                )
            })
        });
        let Some((seq, is_value, value)) = versions.first() else {
            continue;
        };
        match found {
            Ok(Some(Some(got))) => assert_eq!(
                got,
                (key.clone(), *seq, *is_value, value.clone()),
                "get({key:?})"
            ),
            Err(_) if may_fail => {}
            other => panic!("get({key:?}) of a present key: {other:?}"),
        }
    }
}
