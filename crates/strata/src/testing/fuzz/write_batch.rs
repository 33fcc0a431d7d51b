//! Fuzz body for write batches, decoded alone and replayed from a write-ahead log at open.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use arbitrary::{Result, Unstructured};

use super::{damage, pattern_value, small_key, Damage};
use crate::env::{Env, MemEnv};
use crate::log::LogWriter;
use crate::options::Options;
use crate::util::internal_key::MAX_SEQUENCE;
use crate::write_batch::{BatchOp, WriteBatch, HEADER_SIZE};
use crate::DB;

/// An update, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Op {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    /// A range deletion `[start, end)` (format extension `range-deletes`).
    DeleteRange(Vec<u8>, Vec<u8>),
    /// A put of a value that expires at the given microsecond (extension `expiring-keys`).
    PutExpiring(Vec<u8>, Vec<u8>, u64),
    /// A put with a time to live in microseconds, never logged.
    PutWithTtl(Vec<u8>, Vec<u8>, u64),
    /// A put of a value kept in a value file: key and pointer (extension `value-separation`,
    /// which the replayed database does not record: such a batch is damage there).
    PutSeparated(Vec<u8>, Vec<u8>),
}

/// Fuzz target `write_batch`: `data` as a raw batch, whose decoded updates must re-encode to
/// the same updates and, replayed from a log at open, be exactly what the database then holds;
/// then as a recipe for updates that must round-trip through the encoding, through `append`,
/// and survive damage (a truncated batch yields a prefix of its updates, then an error).
pub fn write_batch(data: &[u8]) {
    check_decoded(data, true);
    let _ = batch_round_trip(&mut Unstructured::new(data));
}

/// The updates of an encoded batch, or `None` if it is malformed. Asserts decoding ends.
fn decode(bytes: &[u8]) -> (Vec<Op>, bool) {
    let Ok(batch) = WriteBatch::from_contents(bytes.to_vec()) else {
        return (Vec::new(), false);
    };
    let mut ops = Vec::new();
    for op in batch.iter() {
        match op {
            Ok(BatchOp::Put { key, value }) => ops.push(Op::Put(key.to_vec(), value.to_vec())),
            Ok(BatchOp::Delete { key }) => ops.push(Op::Delete(key.to_vec())),
            Ok(BatchOp::DeleteRange { start, end }) => {
                ops.push(Op::DeleteRange(start.to_vec(), end.to_vec()))
            }
            Ok(BatchOp::PutExpiring {
                key,
                value,
                expires_at_micros,
            }) => ops.push(Op::PutExpiring(
                key.to_vec(),
                value.to_vec(),
                expires_at_micros,
            )),
            Ok(BatchOp::PutWithTtl { key, value, ttl }) => ops.push(Op::PutWithTtl(
                key.to_vec(),
                value.to_vec(),
                u64::try_from(ttl.as_micros()).unwrap_or(u64::MAX),
            )),
            Ok(BatchOp::PutSeparated { key, pointer }) => {
                ops.push(Op::PutSeparated(key.to_vec(), pointer.to_vec()))
            }
            Err(_) => return (ops, false),
        }
        // Every update takes at least two bytes (tag and key length).
        assert!(ops.len() <= bytes.len(), "batch decoding does not end");
    }
    (ops, true)
}

fn encode(ops: &[Op]) -> WriteBatch {
    let mut batch = WriteBatch::new();
    for op in ops {
        match op {
            Op::Put(k, v) => batch.put(k, v),
            Op::Delete(k) => batch.delete(k),
            Op::DeleteRange(start, end) => batch.delete_range(start, end),
            Op::PutExpiring(k, v, at) => batch.put_expiring(k, v, *at),
            Op::PutWithTtl(k, v, ttl) => batch.put_with_ttl(k, v, Duration::from_micros(*ttl)),
            Op::PutSeparated(k, pointer) => batch.put_separated(k, pointer),
        }
    }
    batch
}

/// Keys and values a database holds.
type Contents = BTreeMap<Vec<u8>, Vec<u8>>;

/// What a sequence of updates leaves behind.
///
/// Expiring values are judged by a clock read somewhere in `[before, after]`: one that expires
/// inside that window may read either way, and its key is returned in the second set (to be
/// left out of the comparison).
fn model(ops: &[Op], before: u64, after: u64) -> (Contents, BTreeSet<Vec<u8>>) {
    let mut map = BTreeMap::new();
    let mut either = BTreeSet::new();
    for op in ops {
        match op {
            Op::Put(k, v) => {
                either.remove(k);
                map.insert(k.clone(), v.clone());
            }
            Op::Delete(k) => {
                either.remove(k);
                map.remove(k);
            }
            Op::DeleteRange(start, end) => {
                let deleted = |k: &Vec<u8>| start <= k && k < end;
                map.retain(|k, _| !deleted(k));
                either.retain(|k| !deleted(k));
            }
            Op::PutExpiring(k, v, at) => {
                either.remove(k);
                map.remove(k);
                if *at > after {
                    map.insert(k.clone(), v.clone());
                } else if *at > before {
                    either.insert(k.clone());
                }
            }
            Op::PutWithTtl(..) | Op::PutSeparated(..) => {}
        }
    }
    (map, either)
}

/// Decodes `bytes`; well-formed, the updates must re-encode to themselves. With `replay`, also
/// replays `bytes` from a log (three database opens: the slow part).
fn check_decoded(bytes: &[u8], replay: bool) {
    let (ops, ok) = decode(bytes);
    if ok {
        let again = encode(&ops);
        assert_eq!(again.len(), ops.len());
        assert_eq!(
            decode(again.contents()),
            (ops.clone(), true),
            "re-encoded batch"
        );
    }
    if replay {
        replay_log_record(bytes, &ops, ok);
    }
}

/// Appends `record` to the write-ahead log of a closed, empty database over a fresh in-memory
/// Env, as a crash right after the log write would leave it, and reopens it. A well-formed
/// batch whose sequence numbers fit and continue the database's must be exactly what the
/// database then holds; anything
/// else must be skipped or reported, never panic, and leave a database that takes writes.
fn replay_log_record(record: &[u8], ops: &[Op], well_formed: bool) {
    let env = Arc::new(MemEnv::new());
    let dir = Path::new("/wal-db");
    let options = |paranoid_checks| Options {
        env: env.clone(),
        create_if_missing: true,
        paranoid_checks,
        range_deletes: true,
        expiring_keys: true,
        ..Options::default()
    };
    match DB::open(dir, options(false)) {
        Ok(db) => drop(db),
        Err(e) => panic!("creating a database in memory failed: {e}"),
    }
    let log = env
        .children(dir)
        .ok()
        .and_then(|names| names.into_iter().find(|n| n.ends_with(".log")))
        .map(|name| dir.join(name));
    let Some(log) = log else {
        panic!("a closed empty database has no log file");
    };
    let appended = env.file_size(&log).and_then(|size| {
        let mut writer = LogWriter::with_offset(env.new_appendable_file(&log)?, size);
        writer.add_record(record)?;
        writer.close()
    });
    if let Err(e) = appended {
        panic!("appending to a log in memory failed: {e}");
    }

    let sequence = record
        .get(..8)
        .and_then(|b| <[u8; 8]>::try_from(b).ok())
        .map(u64::from_le_bytes);
    let fits = sequence
        .and_then(|s| s.checked_add((ops.len() as u64).saturating_sub(1)))
        .is_some_and(|last| last <= MAX_SEQUENCE);
    let before = env.now_micros();
    let db = match DB::open(dir, options(false)) {
        Ok(db) => db,
        Err(e) => panic!("a damaged log tail stops a non-paranoid open: {e}"),
    };
    let mut contents = BTreeMap::new();
    let mut it = db.iter();
    it.seek_to_first();
    while it.valid() {
        contents.insert(it.key().to_vec(), it.value().to_vec());
        it.next();
    }
    assert!(it.status().is_ok(), "scan after replay: {:?}", it.status());
    drop(it);
    let after = env.now_micros();
    // A batch is applied whole or, damaged, not at all; and only if it continues the sequence
    // numbers of the empty database (which end at 0): one starting later follows writes that
    // were lost, and recovery keeps a prefix of the writes.
    // A put with an unresolved time to live is never logged: such a batch is damage.
    let continues = sequence.is_some_and(|s| s <= 1);
    // A put of a separated value needs the extension, which the database does not record.
    let logged = !ops
        .iter()
        .any(|op| matches!(op, Op::PutWithTtl(..) | Op::PutSeparated(..)));
    let expected = if well_formed && fits && continues && logged {
        let (expected, either) = model(ops, before, after);
        contents.retain(|k, _| !either.contains(k));
        expected
    } else {
        BTreeMap::new()
    };
    assert_eq!(contents, expected, "the database after replaying a batch");
    // The database still takes writes, with sequence numbers past the replayed ones.
    if db.put(b"after", b"replay").is_ok() {
        assert_eq!(
            db.get(b"after").ok().flatten().as_deref(),
            Some(&b"replay"[..]),
            "a put after replay"
        );
    }
    drop(db);
    let _ = DB::open(dir, options(true));
}

fn arbitrary_ops(u: &mut Unstructured<'_>) -> Result<Vec<Op>> {
    (0..u.int_in_range(0..=40)?)
        .map(|_| {
            let key = small_key(u, 10)?;
            Ok(match u.int_in_range(0..=15)? {
                0..=9 => Op::Put(key, pattern_value(u, 5000)?),
                10..=12 => Op::Delete(key),
                13 => Op::DeleteRange(key, small_key(u, 10)?),
                14 => Op::PutExpiring(key, pattern_value(u, 100)?, u.arbitrary()?),
                _ => Op::PutWithTtl(key, pattern_value(u, 100)?, u.arbitrary()?),
            })
        })
        .collect()
}

fn batch_round_trip(u: &mut Unstructured<'_>) -> Result<()> {
    let ops = arbitrary_ops(u)?;
    let mut batch = encode(&ops);
    let sequence = u.int_in_range(0..=MAX_SEQUENCE)?;
    batch.set_sequence(sequence);
    assert_eq!(batch.len(), ops.len());
    assert_eq!(batch.is_empty(), ops.is_empty());
    let bytes = batch.contents().to_vec();
    assert!(bytes.len() >= HEADER_SIZE && batch.approximate_size() == bytes.len());
    assert_eq!(
        decode(&bytes),
        (ops.clone(), true),
        "a batch does not round-trip"
    );
    assert_eq!(batch.iter().count(), ops.len());

    // Appending the second half to the first gives the whole.
    let split = u.int_in_range(0..=ops.len())?;
    let mut joined = encode(&ops[..split]);
    joined.append(&encode(&ops[split..]));
    assert_eq!(decode(joined.contents()), (ops.clone(), true), "append");

    replay_log_record(&bytes, &ops, true);

    let mut damaged = bytes.clone();
    let done = damage(u, &mut damaged)?;
    let (decoded, ok) = decode(&damaged);
    if let [Damage::Truncate { at }] = done[..] {
        if at < bytes.len() {
            assert!(!ok, "a batch cut at {at} decodes");
            assert!(
                decoded.len() <= ops.len() && decoded[..] == ops[..decoded.len()],
                "a batch cut at {at} yields updates that are not a prefix"
            );
        }
    }
    check_decoded(&damaged, false);
    Ok(())
}
