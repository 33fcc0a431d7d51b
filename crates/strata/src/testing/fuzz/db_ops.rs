//! Fuzz body for the whole database: an operation sequence decoded from the input, run against
//! a `BTreeMap` model over the in-memory Env with a 64 KiB write buffer, so flushes,
//! compactions and reopens happen within a few hundred operations.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use arbitrary::{Result, Unstructured};

use super::bytes;
use crate::db::{DbIterator, Range};
use crate::env::MemEnv;
use crate::options::{Options, ReadOptions, WriteOptions};
use crate::snapshot::Snapshot;
use crate::table::block_cache::BlockCache;
use crate::table::format::CompressionType;
use crate::util::bloom::{BloomFilterPolicy, FilterPolicy};
use crate::write_batch::WriteBatch;
use crate::DB;

/// Operations run per input at most.
const MAX_OPS: usize = 200;
/// A key past every key the target writes (those are at most 12 bytes or start below 0xff):
/// compacting `[FLUSH_KEY, FLUSH_KEY]` flushes the memtable and compacts nothing else.
const FLUSH_KEY: &[u8] = &[0xff; 16];
/// Snapshots and live iterators held at once, at most.
const MAX_HELD: usize = 4;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// Fuzz target `db_ops`: runs the operations `data` decodes to — puts, deletes, batches, gets,
/// iterator walks in both directions (fresh or held across writes, with bounds, at snapshots),
/// snapshots, flushes, `compact_range`, reopens under other options — and checks every result
/// against a model. Ends with a reopen and a full comparison.
pub fn db_ops(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Ok(config) = Config::arbitrary(&mut u) else {
        return;
    };
    let mut h = Harness::open(config);
    for step in 0..MAX_OPS {
        if u.is_empty() {
            break;
        }
        match h.step(&mut u, step) {
            Ok(None) => {}
            Ok(Some(config)) => h = h.reopen(config, &format!("step {step}: reopen")),
            Err(_) => break,
        }
    }
    h.reopen(None, "at the end");
}

/// The options one incarnation of the database is opened with.
#[derive(Debug, Clone)]
struct Config {
    block_size: usize,
    restart_interval: usize,
    compression: CompressionType,
    bloom_bits: Option<usize>,
    reuse_logs: bool,
    paranoid_checks: bool,
    own_cache: bool,
}

impl Config {
    fn arbitrary(u: &mut Unstructured<'_>) -> Result<Config> {
        Ok(Config {
            block_size: *u.choose(&[1024, 2048, 4096, 16384])?,
            restart_interval: u.int_in_range(1..=16)?,
            compression: if u.arbitrary()? {
                CompressionType::Snappy
            } else {
                CompressionType::None
            },
            bloom_bits: if u.arbitrary()? {
                Some(u.int_in_range(1..=16)?)
            } else {
                None
            },
            reuse_logs: u.arbitrary()?,
            paranoid_checks: u.arbitrary()?,
            own_cache: u.arbitrary()?,
        })
    }

    fn options(&self, env: &Arc<MemEnv>) -> Options {
        Options {
            create_if_missing: true,
            env: env.clone(),
            write_buffer_size: 64 << 10,
            block_size: self.block_size,
            block_restart_interval: self.restart_interval,
            compression: self.compression,
            filter_policy: self
                .bloom_bits
                .map(|bits| Arc::new(BloomFilterPolicy::new(bits)) as Arc<dyn FilterPolicy>),
            reuse_logs: self.reuse_logs,
            paranoid_checks: self.paranoid_checks,
            block_cache: self.own_cache.then(|| BlockCache::new(128 << 10)),
            ..Options::default()
        }
    }
}

/// A key: mostly from a small space, so keys are overwritten and deleted often.
fn key(u: &mut Unstructured<'_>) -> Result<Vec<u8>> {
    Ok(match u.int_in_range(0..=9)? {
        0 => bytes(u, 12)?,
        1 => format!(
            "prefix/with/a/long/shared/part/{}",
            u.int_in_range(0..=20u8)?
        )
        .into_bytes(),
        _ => format!("{:03}", u.int_in_range(0..=99u8)?).into_bytes(),
    })
}

/// An iterator held across other operations, with the contents it must show.
struct HeldIter {
    it: DbIterator,
    expected: Vec<(Vec<u8>, Vec<u8>)>,
    /// Index in `expected` of the entry the iterator is at; `None` when it is not valid.
    pos: Option<usize>,
}

struct Harness {
    env: Arc<MemEnv>,
    config: Config,
    db: DB,
    model: Model,
    snapshots: Vec<(Snapshot, Model)>,
    iters: Vec<HeldIter>,
    /// Makes every value written unique, so a stale value cannot pass for a fresh one.
    writes: u64,
}

const DIR: &str = "/fuzz-db";

impl Harness {
    fn open(config: Config) -> Harness {
        let env = Arc::new(MemEnv::new());
        let db = match DB::open(Path::new(DIR), config.options(&env)) {
            Ok(db) => db,
            Err(e) => panic!("creating a database in memory failed: {e}"),
        };
        Harness {
            env,
            config,
            db,
            model: Model::new(),
            snapshots: Vec::new(),
            iters: Vec::new(),
            writes: 0,
        }
    }

    fn value(&mut self, u: &mut Unstructured<'_>) -> Result<Vec<u8>> {
        self.writes += 1;
        let len = match u.int_in_range(0..=15)? {
            0 => 0,
            1 => u.int_in_range(1000..=20_000)?,
            _ => u.int_in_range(1..=100)?,
        };
        let mut v = format!("{}:", self.writes).into_bytes();
        let fill = self.writes as u8;
        v.extend((0..len).map(|i| fill.wrapping_add(i as u8)));
        Ok(v)
    }

    /// Runs one operation. Returns `Some` to ask for a reopen (under other options if given).
    fn step(&mut self, u: &mut Unstructured<'_>, step: usize) -> Result<Option<Option<Config>>> {
        match u.int_in_range(0..=99u8)? {
            0..=29 => {
                let (k, v) = (key(u)?, self.value(u)?);
                let opts = WriteOptions {
                    sync: u.arbitrary()?,
                };
                if let Err(e) = self.db.put_opt(&opts, &k, &v) {
                    panic!("step {step}: put: {e}");
                }
                self.model.insert(k, v);
            }
            30..=39 => {
                let k = key(u)?;
                if let Err(e) = self.db.delete(&k) {
                    panic!("step {step}: delete: {e}");
                }
                self.model.remove(&k);
            }
            40..=47 => {
                let mut batch = WriteBatch::new();
                let mut after = self.model.clone();
                for _ in 0..u.int_in_range(0..=10)? {
                    let k = key(u)?;
                    if u.ratio(2, 3)? {
                        let v = self.value(u)?;
                        batch.put(&k, &v);
                        after.insert(k, v);
                    } else {
                        batch.delete(&k);
                        after.remove(&k);
                    }
                }
                if let Err(e) = self.db.write(&batch) {
                    panic!("step {step}: write: {e}");
                }
                self.model = after;
            }
            48..=59 => {
                let k = key(u)?;
                let (opts, model) = self.read_view(u)?;
                match self.db.get_opt(&opts, &k) {
                    Ok(got) => assert_eq!(got.as_ref(), model.get(&k), "step {step}: get {k:?}"),
                    Err(e) => panic!("step {step}: get {k:?}: {e}"),
                }
            }
            60..=69 => {
                let mut held = self.new_iter(u)?;
                let moves = u.int_in_range(1..=30)?;
                walk(&mut held, u, moves, step)?;
            }
            70..=73 => {
                if self.iters.len() < MAX_HELD {
                    let held = self.new_iter(u)?;
                    self.iters.push(held);
                }
            }
            74..=79 => {
                if !self.iters.is_empty() {
                    let i = u.int_in_range(0..=self.iters.len() - 1)?;
                    let moves = u.int_in_range(1..=10)?;
                    walk(&mut self.iters[i], u, moves, step)?;
                    if u.ratio(1, 4)? {
                        self.iters.swap_remove(i);
                    }
                }
            }
            80..=83 => {
                if self.snapshots.len() < MAX_HELD {
                    self.snapshots
                        .push((self.db.snapshot(), self.model.clone()));
                }
            }
            84..=85 => {
                if !self.snapshots.is_empty() {
                    let i = u.int_in_range(0..=self.snapshots.len() - 1)?;
                    self.snapshots.swap_remove(i);
                }
            }
            86..=88 => {
                let begin = if u.ratio(4, 5)? { Some(key(u)?) } else { None };
                let end = if u.ratio(4, 5)? { Some(key(u)?) } else { None };
                if let Err(e) = self.db.compact_range(begin.as_deref(), end.as_deref()) {
                    panic!("step {step}: compact_range({begin:?}, {end:?}): {e}");
                }
            }
            89..=91 => {
                if let Err(e) = self.db.compact_range(Some(FLUSH_KEY), Some(FLUSH_KEY)) {
                    panic!("step {step}: flush: {e}");
                }
            }
            92..=94 => {
                let config = if u.arbitrary()? {
                    Some(Config::arbitrary(u)?)
                } else {
                    None
                };
                return Ok(Some(config));
            }
            95 => {
                for level in 0..7 {
                    let n = self
                        .db
                        .property(&format!("leveldb.num-files-at-level{level}"));
                    assert!(n.is_some_and(|n| n.parse::<usize>().is_ok()), "file count");
                }
                let _ = self.db.property("leveldb.stats");
                let _ = self.db.property("leveldb.sstables");
                let (a, b) = (key(u)?, key(u)?);
                let sizes = self.db.approximate_sizes(&[Range {
                    start: &a,
                    limit: &b,
                }]);
                assert_eq!(sizes.len(), 1);
            }
            _ => {
                // Several big values in a row: fills the write buffer, so a flush follows.
                for _ in 0..u.int_in_range(1..=8)? {
                    let k = key(u)?;
                    let mut v = self.value(u)?;
                    v.resize(v.len().max(9000), b'x');
                    if let Err(e) = self.db.put(&k, &v) {
                        panic!("step {step}: big put: {e}");
                    }
                    self.model.insert(k, v);
                }
            }
        }
        Ok(None)
    }

    /// Read options at the latest state or at a held snapshot, with the model they must see.
    fn read_view(&self, u: &mut Unstructured<'_>) -> Result<(ReadOptions, Model)> {
        let mut opts = ReadOptions {
            verify_checksums: u.arbitrary()?,
            fill_cache: u.arbitrary()?,
            ..ReadOptions::default()
        };
        let model = if !self.snapshots.is_empty() && u.arbitrary()? {
            let (snapshot, model) =
                &self.snapshots[u.int_in_range(0..=self.snapshots.len() - 1)?];
            opts.snapshot = Some(snapshot.clone());
            model.clone()
        } else {
            self.model.clone()
        };
        Ok((opts, model))
    }

    /// A new iterator, at the latest state or a snapshot, maybe bounded, positioned by a seek.
    fn new_iter(&self, u: &mut Unstructured<'_>) -> Result<HeldIter> {
        let (mut opts, model) = self.read_view(u)?;
        opts.lower_bound = if u.ratio(1, 4)? { Some(key(u)?) } else { None };
        opts.upper_bound = if u.ratio(1, 4)? { Some(key(u)?) } else { None };
        let (lower, upper) = (opts.lower_bound.clone(), opts.upper_bound.clone());
        let expected: Vec<(Vec<u8>, Vec<u8>)> = model
            .into_iter()
            .filter(|(k, _)| lower.as_ref().is_none_or(|l| k >= l))
            .filter(|(k, _)| upper.as_ref().is_none_or(|up| k < up))
            .collect();
        let mut held = HeldIter {
            it: self.db.iter_opt(&opts),
            expected,
            pos: None,
        };
        seek(&mut held, u)?;
        Ok(held)
    }

    /// Closes and reopens the database (under `config` if given), then compares everything.
    /// Snapshots and iterators die with the old handle.
    fn reopen(self, config: Option<Config>, what: &str) -> Harness {
        let Harness {
            env,
            config: old_config,
            db,
            model,
            snapshots,
            iters,
            writes,
        } = self;
        drop(iters);
        drop(snapshots);
        drop(db);
        let config = config.unwrap_or(old_config);
        let db = match DB::open(Path::new(DIR), config.options(&env)) {
            Ok(db) => db,
            Err(e) => panic!("{what}: {e}"),
        };
        let h = Harness {
            env,
            config,
            db,
            model,
            snapshots: Vec::new(),
            iters: Vec::new(),
            writes,
        };
        h.check_all(what);
        h
    }

    /// The database's whole contents, both ways, equal the model.
    fn check_all(&self, what: &str) {
        let expected: Vec<(Vec<u8>, Vec<u8>)> = self
            .model
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut it = self.db.iter();
        let mut forward = Vec::new();
        it.seek_to_first();
        while it.valid() {
            forward.push((it.key().to_vec(), it.value().to_vec()));
            it.next();
        }
        assert!(it.status().is_ok(), "{what}: scan: {:?}", it.status());
        assert!(
            forward == expected,
            "{what}: contents differ from the model"
        );
        let mut backward = Vec::new();
        it.seek_to_last();
        while it.valid() {
            backward.push((it.key().to_vec(), it.value().to_vec()));
            it.prev();
        }
        backward.reverse();
        assert!(it.status().is_ok(), "{what}: scan: {:?}", it.status());
        assert!(backward == expected, "{what}: backward contents differ");
    }
}

/// Positions `held` with `seek_to_first`, `seek_to_last` or `seek`, and checks where it lands.
fn seek(held: &mut HeldIter, u: &mut Unstructured<'_>) -> Result<()> {
    let n = held.expected.len();
    match u.int_in_range(0..=2)? {
        0 => {
            held.it.seek_to_first();
            held.pos = (n > 0).then_some(0);
        }
        1 => {
            held.it.seek_to_last();
            held.pos = n.checked_sub(1);
        }
        _ => {
            let target = key(u)?;
            held.it.seek(&target);
            let at = held.expected.partition_point(|(k, _)| *k < target);
            held.pos = (at < n).then_some(at);
        }
    }
    check_position(held, "seek");
    Ok(())
}

/// Moves `held` `moves` times in directions from the input (re-seeking when it is not valid),
/// checking each position.
fn walk(held: &mut HeldIter, u: &mut Unstructured<'_>, moves: usize, step: usize) -> Result<()> {
    for _ in 0..moves {
        match held.pos {
            None => seek(held, u)?,
            Some(p) => {
                if u.ratio(3, 5)? {
                    held.it.next();
                    held.pos = (p + 1 < held.expected.len()).then_some(p + 1);
                } else {
                    held.it.prev();
                    held.pos = p.checked_sub(1);
                }
                check_position(held, &format!("step {step}: walk"));
            }
        }
    }
    Ok(())
}

fn check_position(held: &HeldIter, what: &str) {
    match held.pos.and_then(|p| held.expected.get(p)) {
        Some((k, v)) => {
            assert!(
                held.it.valid(),
                "{what}: iterator ended ({:?}); expected {k:?}",
                held.it.status()
            );
            assert_eq!(held.it.key(), &k[..], "{what}: key");
            assert!(held.it.value() == &v[..], "{what}: value of {k:?} differs");
        }
        None => {
            assert!(
                !held.it.valid(),
                "{what}: iterator has extra key {:?}",
                held.it.key()
            );
            assert!(held.it.status().is_ok(), "{what}: {:?}", held.it.status());
        }
    }
}
