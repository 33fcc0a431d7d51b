//! LevelDB-written databases for interop tests, built from a seeded [`FixtureSpec`].
//!
//! [`build_db`] writes a fresh database with real LevelDB and returns the model of what it must
//! contain: the final key → value map after every put, overwrite and delete. The same spec and
//! seed always produce the same operations, so the same database contents and the same model
//! (file layout may differ only by LevelDB's own background-compaction timing).
//! [`build_db_with_writes`] also returns every write in order, for tests that replay LevelDB's
//! write-ahead log: each write is one log record, and the `n`-th operation written (counting
//! from 0 over all writes) has sequence number `n + 1`.
//!
//! What a spec can exercise on the reader's side:
//! - keys: plain decimal, long shared prefixes (block prefix compression), or binary keys with
//!   `0x00` and bytes `>= 0x80` (unsigned ordering); written in sorted or shuffled order;
//! - values: empty, ordinary, and larger than a 4 KiB block; half compressible (Snappy blocks),
//!   half random (blocks LevelDB stores raw because Snappy does not pay);
//! - overwrites and deletes (shadowed entries and tombstones across tables and levels);
//! - batches of several records per log record;
//! - a final `compact_range` over everything (data pushed out of level 0), and then a tail of
//!   operations left only in the write-ahead log: LevelDB does not flush its memtable on close,
//!   so that tail survives only as a live `.log` file the reader must replay.

use std::collections::BTreeMap;
use std::ops::RangeInclusive;
use std::path::Path;

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

use crate::{LevelDb, LevelDbBatch, LevelDbOptions};

/// The shape of the generated keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyShape {
    /// `key` followed by the 10-digit decimal index: short, ASCII, sorted like the index.
    Decimal,
    /// A fixed `prefix_len`-byte prefix shared by every key, then the 10-digit index.
    SharedPrefix {
        /// Length of the common prefix.
        prefix_len: usize,
    },
    /// 0–8 random bytes (any of 0x00..=0xff) followed by the index as 4 big-endian bytes;
    /// unique because keys of equal length end in different indexes.
    Binary,
}

/// The order in which the keys are first written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyOrder {
    /// Ascending key order (LevelDB's fast path: non-overlapping tables).
    Sequential,
    /// A seeded shuffle (overlapping level-0 tables).
    Random,
}

/// How long the generated values are.
#[derive(Clone, Debug, PartialEq)]
pub struct ValueSizes {
    /// Length range of ordinary values.
    pub len: RangeInclusive<usize>,
    /// Share of values that are empty, in `[0, 1]`.
    pub empty_fraction: f64,
    /// Share of values drawn from `large_len` instead, in `[0, 1]`.
    pub large_fraction: f64,
    /// Length range of large values (e.g. larger than a 4 KiB block).
    pub large_len: RangeInclusive<usize>,
}

/// Everything that determines a fixture database. Fractions are per key written and lie in
/// `[0, 1]`.
#[derive(Clone, Debug, PartialEq)]
pub struct FixtureSpec {
    /// Seed of every random choice.
    pub seed: u64,
    /// Distinct keys written in the main phase.
    pub num_keys: usize,
    /// Key shape.
    pub keys: KeyShape,
    /// Order of the first write of each key.
    pub order: KeyOrder,
    /// Value lengths.
    pub values: ValueSizes,
    /// Chance, after each key, of overwriting an already written key with a new value.
    pub overwrite_fraction: f64,
    /// Chance, after each key, of deleting an already written key.
    pub delete_fraction: f64,
    /// Operations per write batch; 1 writes each operation on its own.
    pub batch_size: usize,
    /// Run `compact_range` over the whole key space after the main phase.
    pub compact_at_end: bool,
    /// Operations (puts of old and new keys, deletes) written after the main phase and the
    /// optional compaction, left in the write-ahead log when the database closes.
    pub live_wal_ops: usize,
}

impl Default for FixtureSpec {
    fn default() -> Self {
        FixtureSpec {
            seed: 0,
            num_keys: 1000,
            keys: KeyShape::Decimal,
            order: KeyOrder::Random,
            values: ValueSizes {
                len: 1..=100,
                empty_fraction: 0.05,
                large_fraction: 0.02,
                large_len: 4097..=20_000,
            },
            overwrite_fraction: 0.1,
            delete_fraction: 0.1,
            batch_size: 1,
            compact_at_end: false,
            live_wal_ops: 0,
        }
    }
}

/// One operation a fixture wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FixtureOp {
    /// `key` set to `value`.
    Put {
        /// The key.
        key: Vec<u8>,
        /// The value.
        value: Vec<u8>,
    },
    /// `key` removed.
    Delete {
        /// The key.
        key: Vec<u8>,
    },
}

/// A fixture database's expected contents and the writes that produced them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fixture {
    /// The final key → value map (what [`build_db`] returns).
    pub model: BTreeMap<Vec<u8>, Vec<u8>>,
    /// Every write handed to LevelDB, in order; a write is one batch (or one single put or
    /// delete), so one write-ahead-log record, with its operations in order. Operation `n`
    /// (counting from 0 across all writes) got sequence number `n + 1`.
    pub writes: Vec<Vec<FixtureOp>>,
    /// Index in `writes` of the first write of the live-WAL phase: the writes from here on came
    /// after the main phase and the optional compaction (`writes.len()` when there were none).
    pub live_from: usize,
}

/// Writes a new LevelDB database at `path` as `spec` says and returns its expected contents.
///
/// `opts` is used as given except that `create_if_missing` and `error_if_exists` are forced on:
/// the model is only right for a database that starts empty. The database is closed on return.
pub fn build_db(
    path: impl AsRef<Path>,
    opts: &LevelDbOptions,
    spec: &FixtureSpec,
) -> Result<BTreeMap<Vec<u8>, Vec<u8>>, String> {
    build_db_with_writes(path, opts, spec).map(|fixture| fixture.model)
}

/// [`build_db`], also returning every write in order (see [`Fixture`]).
pub fn build_db_with_writes(
    path: impl AsRef<Path>,
    opts: &LevelDbOptions,
    spec: &FixtureSpec,
) -> Result<Fixture, String> {
    validate(spec)?;
    let mut rng = StdRng::seed_from_u64(spec.seed);
    let mut keys: Vec<Vec<u8>> = (0..spec.num_keys)
        .map(|i| make_key(&spec.keys, i, &mut rng))
        .collect();
    match spec.order {
        KeyOrder::Sequential => keys.sort_unstable(),
        KeyOrder::Random => keys.shuffle(&mut rng),
    }

    let opts = LevelDbOptions {
        create_if_missing: true,
        error_if_exists: true,
        ..opts.clone()
    };
    let db = LevelDb::open(path, &opts)?;
    let mut writer = Writer::new(&db, spec.batch_size);

    for i in 0..keys.len() {
        let value = make_value(&spec.values, &mut rng);
        writer.put(&keys[i], value)?;
        if rng.gen_bool(spec.overwrite_fraction) {
            let j = rng.gen_range(0..=i);
            let value = make_value(&spec.values, &mut rng);
            writer.put(&keys[j], value)?;
        }
        if rng.gen_bool(spec.delete_fraction) {
            let j = rng.gen_range(0..=i);
            writer.delete(&keys[j])?;
        }
    }
    writer.flush()?;

    if spec.compact_at_end {
        db.compact_range(None, None);
    }
    let live_from = writer.writes.len();

    for t in 0..spec.live_wal_ops {
        let roll: u32 = rng.gen_range(0..4);
        let key = match keys.choose(&mut rng) {
            Some(old) if roll != 0 => old.clone(),
            _ => make_key(&spec.keys, spec.num_keys + t, &mut rng),
        };
        if roll == 1 {
            writer.delete(&key)?;
        } else {
            let value = make_value(&spec.values, &mut rng);
            writer.put(&key, value)?;
        }
    }
    writer.flush()?;
    Ok(Fixture {
        model: writer.model,
        writes: writer.writes,
        live_from,
    })
}

/// Every entry of `db`, read with a forward scan: what to compare against a model.
pub fn read_all(db: &LevelDb) -> Result<BTreeMap<Vec<u8>, Vec<u8>>, String> {
    let mut all = BTreeMap::new();
    let mut it = db.iter_with(false, true);
    it.seek_to_first();
    while it.valid() {
        all.insert(it.key().to_vec(), it.value().to_vec());
        it.next();
    }
    it.status()?;
    Ok(all)
}

fn validate(spec: &FixtureSpec) -> Result<(), String> {
    let fractions = [
        ("overwrite_fraction", spec.overwrite_fraction),
        ("delete_fraction", spec.delete_fraction),
        ("values.empty_fraction", spec.values.empty_fraction),
        ("values.large_fraction", spec.values.large_fraction),
        (
            "values.empty_fraction + values.large_fraction",
            spec.values.empty_fraction + spec.values.large_fraction,
        ),
    ];
    for (name, f) in fractions {
        if !(0.0..=1.0).contains(&f) {
            return Err(format!("FixtureSpec::{name} = {f} is not in [0, 1]"));
        }
    }
    if spec.batch_size == 0 {
        return Err("FixtureSpec::batch_size must be at least 1".to_string());
    }
    if spec.values.len.is_empty() || spec.values.large_len.is_empty() {
        return Err("FixtureSpec::values has an empty length range".to_string());
    }
    Ok(())
}

/// The key with index `i` (unique per index for every shape).
fn make_key(shape: &KeyShape, i: usize, rng: &mut StdRng) -> Vec<u8> {
    match shape {
        KeyShape::Decimal => format!("key{i:010}").into_bytes(),
        KeyShape::SharedPrefix { prefix_len } => {
            const PATTERN: &[u8] = b"tenant-0042/collection/objects/";
            let mut key: Vec<u8> = PATTERN.iter().copied().cycle().take(*prefix_len).collect();
            key.extend_from_slice(format!("{i:010}").as_bytes());
            key
        }
        KeyShape::Binary => {
            let head_len = rng.gen_range(0..=8);
            let mut key: Vec<u8> = (0..head_len).map(|_| rng.gen::<u8>()).collect();
            // The fixture sizes are far below 2^32 keys; wrap-around would only cost uniqueness.
            key.extend_from_slice(&(i as u32).to_be_bytes());
            key
        }
    }
}

/// A value of a length drawn from `sizes`; half are compressible (a short repeated pattern),
/// half are random bytes.
fn make_value(sizes: &ValueSizes, rng: &mut StdRng) -> Vec<u8> {
    let roll: f64 = rng.gen();
    let len = if roll < sizes.empty_fraction {
        0
    } else if roll < sizes.empty_fraction + sizes.large_fraction {
        rng.gen_range(sizes.large_len.clone())
    } else {
        rng.gen_range(sizes.len.clone())
    };
    if rng.gen_bool(0.5) {
        let pattern: [u8; 8] = rng.gen();
        pattern.iter().copied().cycle().take(len).collect()
    } else {
        let mut value = vec![0u8; len];
        rng.fill(value.as_mut_slice());
        value
    }
}

/// Applies operations to LevelDB (one by one or in batches) and to the model, and records
/// them.
struct Writer<'db> {
    db: &'db LevelDb,
    batch: LevelDbBatch,
    batch_size: usize,
    /// The operations of the pending batch; its length is the pending count.
    pending: Vec<FixtureOp>,
    model: BTreeMap<Vec<u8>, Vec<u8>>,
    writes: Vec<Vec<FixtureOp>>,
}

impl<'db> Writer<'db> {
    fn new(db: &'db LevelDb, batch_size: usize) -> Self {
        Writer {
            db,
            batch: LevelDbBatch::new(),
            batch_size,
            pending: Vec::new(),
            model: BTreeMap::new(),
            writes: Vec::new(),
        }
    }

    fn put(&mut self, key: &[u8], value: Vec<u8>) -> Result<(), String> {
        if self.batch_size == 1 {
            self.db.put(key, &value, false)?;
        } else {
            self.batch.put(key, &value);
        }
        self.model.insert(key.to_vec(), value.clone());
        self.record(FixtureOp::Put {
            key: key.to_vec(),
            value,
        })
    }

    fn delete(&mut self, key: &[u8]) -> Result<(), String> {
        if self.batch_size == 1 {
            self.db.delete(key, false)?;
        } else {
            self.batch.delete(key);
        }
        self.model.remove(key);
        self.record(FixtureOp::Delete { key: key.to_vec() })
    }

    /// Notes `op` as written alone or as part of the pending batch.
    fn record(&mut self, op: FixtureOp) -> Result<(), String> {
        if self.batch_size == 1 {
            self.writes.push(vec![op]);
            return Ok(());
        }
        self.pending.push(op);
        self.maybe_flush()
    }

    fn maybe_flush(&mut self) -> Result<(), String> {
        if self.pending.len() >= self.batch_size {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the pending batch, if any.
    fn flush(&mut self) -> Result<(), String> {
        if !self.pending.is_empty() {
            self.db.write(&self.batch, false)?;
            self.batch.clear();
            self.writes.push(std::mem::take(&mut self.pending));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Small memtables, so a few thousand keys make several level-0 tables. (LevelDB clamps
    /// `write_buffer_size` to at least 64 KiB and `max_file_size` to at least 1 MiB.)
    fn small_tables() -> LevelDbOptions {
        LevelDbOptions {
            write_buffer_size: Some(64 * 1024),
            ..LevelDbOptions::default()
        }
    }

    fn open_existing(path: &Path) -> LevelDb {
        LevelDb::open(path, &LevelDbOptions::default()).expect("reopen fixture")
    }

    fn log_bytes(path: &Path) -> u64 {
        std::fs::read_dir(path)
            .expect("list db dir")
            .map(|e| e.expect("dir entry"))
            .filter(|e| e.file_name().to_string_lossy().ends_with(".log"))
            .map(|e| e.metadata().expect("metadata").len())
            .sum()
    }

    fn level_files(db: &LevelDb, level: usize) -> usize {
        db.property(&format!("leveldb.num-files-at-level{level}"))
            .expect("level property")
            .parse()
            .expect("numeric property")
    }

    #[test]
    fn fixture_reopens_with_exactly_the_model() {
        let dir = tempfile::tempdir().expect("tempdir");
        let spec = FixtureSpec {
            num_keys: 3000,
            batch_size: 7,
            ..FixtureSpec::default()
        };
        let model = build_db(dir.path(), &small_tables(), &spec).expect("build");
        assert!(
            model.len() > 2000 && model.len() < 3000,
            "deletes should remove some keys: {}",
            model.len()
        );

        let db = open_existing(dir.path());
        let sstables = db.property("leveldb.sstables").expect("sstables");
        assert!(
            sstables.lines().filter(|l| l.starts_with(' ')).count() > 1,
            "several tables: {sstables}"
        );
        assert_eq!(read_all(&db).expect("scan"), model);
        for (k, v) in &model {
            assert_eq!(db.get(k).expect("get").as_deref(), Some(v.as_slice()));
        }
    }

    #[test]
    fn writes_replay_to_the_model_and_mark_the_live_phase() {
        let dir = tempfile::tempdir().expect("tempdir");
        let spec = FixtureSpec {
            num_keys: 500,
            batch_size: 4,
            compact_at_end: true,
            live_wal_ops: 30,
            ..FixtureSpec::default()
        };
        let fixture =
            build_db_with_writes(dir.path(), &LevelDbOptions::default(), &spec).expect("build");
        assert!(fixture.writes.iter().all(|w| !w.is_empty() && w.len() <= 4));
        let live_ops: usize = fixture.writes[fixture.live_from..]
            .iter()
            .map(Vec::len)
            .sum();
        assert_eq!(live_ops, 30);
        let mut replayed = BTreeMap::new();
        for op in fixture.writes.iter().flatten() {
            match op {
                FixtureOp::Put { key, value } => {
                    replayed.insert(key.clone(), value.clone());
                }
                FixtureOp::Delete { key } => {
                    replayed.remove(key);
                }
            }
        }
        assert_eq!(replayed, fixture.model);
        let again = tempfile::tempdir().expect("tempdir");
        let model = build_db(again.path(), &LevelDbOptions::default(), &spec).expect("build");
        assert_eq!(model, fixture.model);
    }

    #[test]
    fn same_seed_same_model_other_seed_other_model() {
        let spec = FixtureSpec {
            num_keys: 300,
            keys: KeyShape::Binary,
            ..FixtureSpec::default()
        };
        let build = |spec: &FixtureSpec| {
            let dir = tempfile::tempdir().expect("tempdir");
            build_db(dir.path(), &LevelDbOptions::default(), spec).expect("build")
        };
        let a = build(&spec);
        assert_eq!(a, build(&spec));
        assert_ne!(
            a,
            build(&FixtureSpec {
                seed: 1,
                ..spec.clone()
            })
        );
    }

    #[test]
    fn compaction_at_end_empties_level0_and_the_log() {
        let dir = tempfile::tempdir().expect("tempdir");
        let spec = FixtureSpec {
            num_keys: 4000,
            compact_at_end: true,
            ..FixtureSpec::default()
        };
        let model = build_db(dir.path(), &small_tables(), &spec).expect("build");
        assert_eq!(
            log_bytes(dir.path()),
            0,
            "everything was flushed into tables"
        );

        let db = open_existing(dir.path());
        assert_eq!(level_files(&db, 0), 0);
        let deeper: usize = (1..7).map(|level| level_files(&db, level)).sum();
        assert!(
            deeper >= 1,
            "data must sit below level 0: {:?}",
            db.property("leveldb.sstables")
        );
        assert_eq!(read_all(&db).expect("scan"), model);
    }

    #[test]
    fn live_wal_tail_survives_close_and_replays() {
        let dir = tempfile::tempdir().expect("tempdir");
        let spec = FixtureSpec {
            num_keys: 2000,
            compact_at_end: true,
            live_wal_ops: 300,
            ..FixtureSpec::default()
        };
        let model = build_db(dir.path(), &small_tables(), &spec).expect("build");
        assert!(
            log_bytes(dir.path()) > 0,
            "the tail must be left in a live log"
        );

        let db = open_existing(dir.path());
        assert_eq!(read_all(&db).expect("scan"), model);
    }

    #[test]
    fn shapes_cover_binary_keys_shared_prefixes_empty_and_large_values() {
        let dir = tempfile::tempdir().expect("tempdir");
        let binary = FixtureSpec {
            num_keys: 2000,
            keys: KeyShape::Binary,
            order: KeyOrder::Sequential,
            values: ValueSizes {
                len: 0..=50,
                empty_fraction: 0.1,
                large_fraction: 0.05,
                large_len: 5000..=9000,
            },
            ..FixtureSpec::default()
        };
        let model = build_db(
            dir.path().join("binary"),
            &LevelDbOptions::default(),
            &binary,
        )
        .expect("build");
        assert!(model.keys().any(|k| k.iter().any(|&b| b >= 0x80)));
        assert!(model.keys().any(|k| k.contains(&0)));
        assert!(model.values().any(Vec::is_empty));
        assert!(model.values().any(|v| v.len() > 4096));

        let prefixed = FixtureSpec {
            keys: KeyShape::SharedPrefix { prefix_len: 200 },
            ..FixtureSpec::default()
        };
        let model = build_db(
            dir.path().join("prefixed"),
            &LevelDbOptions::default(),
            &prefixed,
        )
        .expect("build");
        let first = model.keys().next().expect("non-empty").clone();
        assert!(model
            .keys()
            .all(|k| k.len() == 210 && k[..200] == first[..200]));
    }

    #[test]
    fn rejects_bad_specs_and_existing_databases() {
        let dir = tempfile::tempdir().expect("tempdir");
        let bad = FixtureSpec {
            delete_fraction: 1.5,
            ..FixtureSpec::default()
        };
        let err = build_db(dir.path(), &LevelDbOptions::default(), &bad).expect_err("bad fraction");
        assert!(err.contains("delete_fraction"), "{err}");
        let bad = FixtureSpec {
            batch_size: 0,
            ..FixtureSpec::default()
        };
        assert!(build_db(dir.path(), &LevelDbOptions::default(), &bad).is_err());

        let spec = FixtureSpec {
            num_keys: 10,
            ..FixtureSpec::default()
        };
        build_db(dir.path(), &LevelDbOptions::default(), &spec).expect("first build");
        let err =
            build_db(dir.path(), &LevelDbOptions::default(), &spec).expect_err("second build");
        assert!(err.contains("exists"), "{err}");
    }
}
