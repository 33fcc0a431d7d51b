//! The [`Engine`] trait: what a workload needs from a storage engine, implemented by Strata
//! and by the peers compiled in (LevelDB with feature `leveldb`, RocksDB with `rocksdb`).
//!
//! Workloads are generic over `E: Engine`, so every engine gets its own monomorphised loop with
//! no dynamic dispatch inside the timed region: the harness adds the same few nanoseconds to
//! every engine. [`OpenEngine`] holds whichever engine is open, and [`with_engine!`] calls a
//! generic function on it.
//!
//! Fairness rules every adapter follows:
//! - each adapter uses its engine's cheapest API for the operation (zero-copy where the engine
//!   offers it); where an API forces a copy on a peer, the adapter's module says so;
//! - reads do not verify checksums and do fill the block cache (LevelDB's read defaults);
//! - writes go through a write batch, as db_bench's do.

use std::path::Path;

use super::config::{BenchOptions, EngineKind};

/// Errors in the benchmark are messages for the person running it.
pub type BenchResult<T> = Result<T, String>;

/// Keys per write batch when an engine without range deletes deletes a range key by key.
pub const DELETE_BATCH: usize = 1000;

/// A cursor over an engine's keys, LevelDB style. `key`/`value` may only be called while
/// `valid()`; they borrow until the cursor next moves.
pub trait Cursor {
    fn valid(&self) -> bool;
    fn seek_to_first(&mut self);
    fn seek_to_last(&mut self);
    fn seek(&mut self, target: &[u8]);
    fn next(&mut self);
    fn prev(&mut self);
    fn key(&self) -> &[u8];
    fn value(&self) -> &[u8];
    /// The first error the cursor met.
    fn status(&self) -> BenchResult<()>;
}

/// An open database of one engine. `Sync`: workloads share it between threads.
pub trait Engine: Sized + Send + Sync {
    /// The engine's write batch.
    type Batch;

    /// The engine's iterator.
    type Cursor<'a>: Cursor
    where
        Self: 'a;

    /// Opens (creating if missing) the database in `dir`.
    fn open(dir: &Path, options: &BenchOptions) -> BenchResult<Self>;

    /// Deletes the database in `dir`, if any.
    fn destroy(dir: &Path) -> BenchResult<()>;

    /// The engine's name and version, for the report header.
    fn version(&self) -> String;

    /// Sets one key (outside a batch; the configuration sweep uses it, as the paper's client
    /// calls `Put`).
    fn put(&self, key: &[u8], value: &[u8], sync: bool) -> BenchResult<()>;

    /// An empty batch.
    fn new_batch() -> Self::Batch;

    /// Adds a put to `batch`.
    fn batch_put(batch: &mut Self::Batch, key: &[u8], value: &[u8]);

    /// Adds a delete to `batch`.
    fn batch_delete(batch: &mut Self::Batch, key: &[u8]);

    /// Applies `batch` atomically and leaves it empty for reuse.
    fn write(&self, batch: &mut Self::Batch, sync: bool) -> BenchResult<()>;

    /// Looks `key` up; returns the value's length if present (the value itself is dropped,
    /// reading it is the engine's cost, keeping it is not the benchmark's business).
    fn get(&self, key: &[u8]) -> BenchResult<Option<usize>>;

    /// Whether `key` is present, and its value's length, reading as little as the engine
    /// can: Strata's `head` reads the tree alone, never a value file. The default, for an
    /// engine without such a call (LevelDB, RocksDB), is a `get`.
    fn head(&self, key: &[u8]) -> BenchResult<Option<usize>> {
        self.get(key)
    }

    /// Looks every key of `keys` up at one moment; returns how many are present. The default,
    /// for an engine without a batched read (LevelDB), does one `get` per key.
    fn get_many(&self, keys: &[&[u8]]) -> BenchResult<usize> {
        let mut found = 0;
        for key in keys {
            found += usize::from(self.get(key)?.is_some());
        }
        Ok(found)
    }

    /// Deletes every key of `[start, end)`. The default, for an engine without range deletes
    /// (LevelDB), does what its users do: walks the range with a cursor and deletes the keys
    /// it finds, in batches of [`DELETE_BATCH`].
    fn delete_range(&self, start: &[u8], end: &[u8]) -> BenchResult<()> {
        let mut batch = Self::new_batch();
        let mut pending = 0;
        let mut cursor = self.cursor();
        cursor.seek(start);
        while cursor.valid() && cursor.key() < end {
            Self::batch_delete(&mut batch, cursor.key());
            pending += 1;
            if pending == DELETE_BATCH {
                self.write(&mut batch, false)?;
                pending = 0;
            }
            cursor.next();
        }
        cursor.status()?;
        if pending > 0 {
            self.write(&mut batch, false)?;
        }
        Ok(())
    }

    /// An unpositioned cursor over the latest state.
    fn cursor(&self) -> Self::Cursor<'_>;

    /// Compacts the whole key range; returns when done.
    fn compact(&self) -> BenchResult<()>;

    /// A named property (`leveldb.num-files-at-level0`, `rocksdb.stats`, ...).
    fn property(&self, name: &str) -> Option<String>;

    /// The engine's human-readable statistics (what db_bench's `stats` prints).
    fn stats(&self) -> Option<String>;
}

/// Table files per level, `L0 3, L1 5, L2 41`, from the engine's
/// `<leveldb|rocksdb>.num-files-at-level<N>` properties; levels without files are left out.
pub fn files_per_level<E: Engine>(engine: &E) -> Option<String> {
    let mut parts = Vec::new();
    for level in 0..7 {
        let count = ["leveldb", "rocksdb"]
            .iter()
            .find_map(|prefix| engine.property(&format!("{prefix}.num-files-at-level{level}")))?;
        if count.trim() != "0" {
            parts.push(format!("L{level} {}", count.trim()));
        }
    }
    Some(parts.join(", "))
}

/// Whichever engine is open. Variants exist only for engines compiled in; `rocksdb` and
/// `rocksdb-blob` are the same engine opened with different options.
pub enum OpenEngine {
    Strata(super::strata_engine::StrataEngine),
    #[cfg(feature = "leveldb")]
    Leveldb(super::leveldb_engine::LevelDbEngine),
    #[cfg(feature = "rocksdb")]
    Rocksdb(super::rocksdb_engine::RocksDbEngine),
}

/// Calls `$body` with `$e` bound to the concrete engine inside an [`OpenEngine`].
macro_rules! with_engine {
    ($open:expr, $e:ident => $body:expr) => {
        match $open {
            $crate::bench::engine::OpenEngine::Strata($e) => $body,
            #[cfg(feature = "leveldb")]
            $crate::bench::engine::OpenEngine::Leveldb($e) => $body,
            #[cfg(feature = "rocksdb")]
            $crate::bench::engine::OpenEngine::Rocksdb($e) => $body,
        }
    };
}
pub(crate) use with_engine;

impl OpenEngine {
    /// Opens `kind`'s database in `dir` with the options `kind` takes of `options` (see
    /// [`EngineKind::options`]). Fails with a clear message for an engine this binary was
    /// built without.
    pub fn open(kind: EngineKind, dir: &Path, options: &BenchOptions) -> BenchResult<Self> {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let options = &kind.options(options);
        match kind {
            EngineKind::Strata => {
                super::strata_engine::StrataEngine::open(dir, options).map(OpenEngine::Strata)
            }
            #[cfg(feature = "leveldb")]
            EngineKind::Leveldb => {
                super::leveldb_engine::LevelDbEngine::open(dir, options).map(OpenEngine::Leveldb)
            }
            #[cfg(feature = "rocksdb")]
            EngineKind::Rocksdb | EngineKind::RocksdbBlob => {
                super::rocksdb_engine::RocksDbEngine::open(dir, options).map(OpenEngine::Rocksdb)
            }
            #[allow(unreachable_patterns)]
            other => Err(not_compiled_in(other)),
        }
    }

    /// Deletes `kind`'s database in `dir`, if there is one (the engine must not be open on
    /// it). A missing directory is nothing to delete (RocksDB would fail to lock it).
    pub fn destroy(kind: EngineKind, dir: &Path) -> BenchResult<()> {
        if !dir.exists() {
            return Ok(());
        }
        match kind {
            EngineKind::Strata => super::strata_engine::StrataEngine::destroy(dir),
            #[cfg(feature = "leveldb")]
            EngineKind::Leveldb => super::leveldb_engine::LevelDbEngine::destroy(dir),
            #[cfg(feature = "rocksdb")]
            EngineKind::Rocksdb | EngineKind::RocksdbBlob => {
                super::rocksdb_engine::RocksDbEngine::destroy(dir)
            }
            #[allow(unreachable_patterns)]
            other => Err(not_compiled_in(other)),
        }
    }

    pub fn version(&self) -> String {
        with_engine!(self, e => e.version())
    }
}

/// The message for an engine requested but not built in.
pub fn not_compiled_in(kind: EngineKind) -> String {
    format!(
        "engine `{name}` is not compiled into this binary: rebuild with \
         `cargo build --release -p strata-kv-cli --features {name}` (`make bench` builds with \
         `--features leveldb,rocksdb`)",
        name = kind.name()
    )
}
