//! The `Database` class: one open engine database and every operation on it, plus the
//! functions that work on a closed one (`open`, `destroy`, `repair`).
//!
//! Reads take their snapshot on the JavaScript thread when called (see [`crate::snapshot`]);
//! `getMany` and `hasMany` read every key in one task with the engine's `get_many` (`hasMany`:
//! `contains_many`) against one snapshot, so a batch of keys crosses the boundary once, sees
//! one point in time, and is looked up sorted with each table block read once for neighbouring
//! keys. `has` and `hasMany` ask the engine only whether keys have values: no value is copied.
//!
//! At once or on a thread: reads and writes are first tried on the JavaScript thread with the
//! engine's never-waiting calls (`ReadOptions::memory_only`, `DB::try_write`), which answer
//! from memory or fail having done nothing; only what would wait for the disk, another
//! writer, room in the memtable or a sync becomes a task on libuv's threads. An answer at once
//! is returned as the value itself (`undefined` for a write), which abstract-level awaits like
//! a promise, and costs no thread hand-off. While a write handed to a thread is not done,
//! nothing is tried at once, so nothing answered at once overtakes a write made before it.
//! Writes handed to threads run in parallel, in no defined order among themselves, as in
//! classic-level (abstract-level's "Order Of Operations": parallel writes have none).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use napi::bindgen_prelude::{Either, Env, Int32ArraySlice, ToNapiValue, Unknown};
use napi::JsString;
use napi_derive::napi;
use strata::{ReadOptions, WriteBatch, WriteOptions, DB};

use crate::batch::{packed_batch, Batch, BatchOp};
use crate::bytes::{optional_to_js, to_vec, Data};
use crate::errors::{at, Code, Failure, Outcome, Stage};
use crate::handle::Handle;
use crate::iterator::{seek_start, EngineIter, Iterator, IteratorOptions};
use crate::job::{spawn, spawn_unit, Promise};
use crate::options::OpenOptions;
use crate::range::{KeyRange, RangeOptions};
use crate::snapshot::{pin, Snapshot};

/// Keys `clear` deletes per write.
const CLEAR_BATCH: usize = 1000;

/// An open database.
#[napi]
pub struct Database {
    handle: Arc<Handle>,
    /// Writes handed to a thread and not done yet (see the module documentation).
    pending_writes: Arc<AtomicUsize>,
}

/// What a method returns: its answer at once, or a promise of it from a task.
pub type Answer<A, T> = Either<A, Promise<T>>;

/// A write handed to a thread, counted in `Database::pending_writes` until it is dropped (when
/// the task is done with it, or never runs).
struct PendingWrite(Arc<AtomicUsize>);

impl PendingWrite {
    fn new(count: &Arc<AtomicUsize>) -> PendingWrite {
        count.fetch_add(1, Ordering::AcqRel);
        PendingWrite(Arc::clone(count))
    }
}

impl Drop for PendingWrite {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A value read, and how JavaScript wants it.
pub struct Found {
    value: Option<Vec<u8>>,
    as_string: bool,
}

/// Values read by `getMany`.
pub struct FoundMany {
    values: Vec<Option<Vec<u8>>>,
    as_string: bool,
}

fn read_options(snapshot: Option<strata::Snapshot>, fill_cache: bool) -> ReadOptions {
    ReadOptions {
        snapshot,
        fill_cache,
        ..ReadOptions::default()
    }
}

/// The value of `key` in `db`.
fn lookup(db: &DB, options: &ReadOptions, key: &[u8]) -> Outcome<Option<Vec<u8>>> {
    db.get_opt(options, key).map_err(at(Stage::Other))
}

/// The values of `keys` in `db`, in their order.
fn lookup_many(db: &DB, options: &ReadOptions, keys: &[Vec<u8>]) -> Outcome<Vec<Option<Vec<u8>>>> {
    db.get_many_opt(options, keys).map_err(at(Stage::Other))
}

/// `getMany`'s answer as a JavaScript array.
fn found_many_to_js(env: &Env, found: FoundMany) -> napi::Result<Unknown<'_>> {
    let count =
        u32::try_from(found.values.len()).map_err(|_| napi::Error::from_reason("too many keys"))?;
    let mut array = env.create_array(count)?;
    for (index, value) in (0..count).zip(&found.values) {
        array.set(
            index,
            optional_to_js(env, value.as_deref(), found.as_string)?,
        )?;
    }
    array.into_unknown(env)
}

/// `head`'s answer: the value's length (exact below 2^53, far past any value's), or
/// `undefined` when absent.
fn length_to_js(env: &Env, length: Option<u64>) -> napi::Result<Unknown<'_>> {
    match length {
        Some(length) => (length as f64).into_unknown(env),
        None => ().into_unknown(env),
    }
}

/// Checks the location argument of `open`, `destroy` and `repair`.
fn check_location(location: String) -> Outcome<String> {
    if location.is_empty() {
        Err(Failure::new(
            Code::InvalidArgument,
            "The location must be a non-empty string",
        ))
    } else {
        Ok(location)
    }
}

/// A napi failure met while building a result on the JavaScript thread.
fn napi_failure(error: napi::Error) -> napi::Error<Code> {
    napi::Error::new(Code::IoError, error.reason)
}

/// Opens (creating it by default) the database in directory `location`.
#[napi(ts_return_type = "Promise<Database>")]
pub fn open(location: String, options: OpenOptions) -> napi::Result<Promise<Database>, Code> {
    let path = check_location(location)?;
    let read_only = options.read_only();
    let options = options.to_engine()?;
    Ok(spawn(
        move || {
            Ok(Database {
                handle: Arc::new(Handle::open(path, options, read_only)?),
                pending_writes: Arc::new(AtomicUsize::new(0)),
            })
        },
        |env, database| database.into_unknown(env),
    ))
}

/// Deletes every file of the database in `location` (which must not be open).
#[napi(ts_return_type = "Promise<void>")]
pub fn destroy(location: String) -> napi::Result<Promise<()>, Code> {
    let path = check_location(location)?;
    Ok(spawn_unit(move || {
        strata::destroy(path, &strata::Options::default()).map_err(at(Stage::Open))
    }))
}

/// Rebuilds the database in `location` from whatever of it can be read.
#[napi(ts_return_type = "Promise<void>")]
pub fn repair(location: String) -> napi::Result<Promise<()>, Code> {
    let path = check_location(location)?;
    Ok(spawn_unit(move || {
        strata::repair(path, &strata::Options::default()).map_err(at(Stage::Open))
    }))
}

#[napi]
impl Database {
    /// Closes the database once the operations in flight finish.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close(&self) -> Promise<()> {
        self.handle.close_task()
    }

    /// The value of `key`, or `undefined`.
    #[napi(
        ts_return_type = "Uint8Array | string | undefined | Promise<Uint8Array | string | undefined>"
    )]
    pub fn get<'env>(
        &self,
        env: &'env Env,
        #[napi(ts_arg_type = "Uint8Array | string")] key: Data<'_>,
        value_as_string: bool,
        fill_cache: bool,
        snapshot: Option<&Snapshot>,
    ) -> napi::Result<Answer<Unknown<'env>, Found>, Code> {
        let key = to_vec(key);
        if let Some(value) = self.at_once(fill_cache, snapshot, |db, options| {
            db.get_opt(options, &key)
        }) {
            return optional_to_js(env, value.as_deref(), value_as_string)
                .map(Either::A)
                .map_err(napi_failure);
        }
        self.read_task(
            fill_cache,
            snapshot,
            move |db, options| {
                Ok(Found {
                    value: lookup(db, options, &key)?,
                    as_string: value_as_string,
                })
            },
            |env, found| optional_to_js(env, found.value.as_deref(), found.as_string),
        )
        .map(Either::B)
    }

    /// `get` on the JavaScript thread.
    #[napi(ts_return_type = "Uint8Array | string | undefined")]
    pub fn get_sync<'env>(
        &self,
        env: &'env Env,
        #[napi(ts_arg_type = "Uint8Array | string")] key: Data<'_>,
        value_as_string: bool,
        fill_cache: bool,
        snapshot: Option<&Snapshot>,
    ) -> napi::Result<Unknown<'env>, Code> {
        let explicit = match snapshot {
            Some(snapshot) => Some(pin(&self.handle, Some(snapshot))?),
            None => None,
        };
        let options = read_options(explicit, fill_cache);
        let value = self
            .handle
            .read_now(|db| lookup(db, &options, &to_vec(key)))?;
        optional_to_js(env, value.as_deref(), value_as_string).map_err(napi_failure)
    }

    /// The values of `keys` (`undefined` where absent), read at one snapshot in one task.
    #[napi(
        ts_return_type = "Array<Uint8Array | string | undefined> | Promise<Array<Uint8Array | string | undefined>>"
    )]
    pub fn get_many<'env>(
        &self,
        env: &'env Env,
        #[napi(ts_arg_type = "Array<Uint8Array | string>")] keys: Vec<Data<'_>>,
        value_as_string: bool,
        fill_cache: bool,
        snapshot: Option<&Snapshot>,
    ) -> napi::Result<Answer<Unknown<'env>, FoundMany>, Code> {
        let keys: Vec<Vec<u8>> = keys.into_iter().map(to_vec).collect();
        if let Some(values) = self.at_once(fill_cache, snapshot, |db, options| {
            db.get_many_opt(options, &keys)
        }) {
            let found = FoundMany {
                values,
                as_string: value_as_string,
            };
            return found_many_to_js(env, found)
                .map(Either::A)
                .map_err(napi_failure);
        }
        self.read_task(
            fill_cache,
            snapshot,
            move |db, options| {
                Ok(FoundMany {
                    values: lookup_many(db, options, &keys)?,
                    as_string: value_as_string,
                })
            },
            found_many_to_js,
        )
        .map(Either::B)
    }

    /// True when `key` has a value (which is not copied).
    #[napi(ts_return_type = "boolean | Promise<boolean>")]
    pub fn has(
        &self,
        #[napi(ts_arg_type = "Uint8Array | string")] key: Data<'_>,
        fill_cache: bool,
        snapshot: Option<&Snapshot>,
    ) -> napi::Result<Answer<bool, bool>, Code> {
        let key = to_vec(key);
        if let Some(found) = self.at_once(fill_cache, snapshot, |db, options| {
            db.contains_opt(options, &key)
        }) {
            return Ok(Either::A(found));
        }
        self.read_task(
            fill_cache,
            snapshot,
            move |db, options| db.contains_opt(options, &key).map_err(at(Stage::Other)),
            |env, found| found.into_unknown(env),
        )
        .map(Either::B)
    }

    /// The length of `key`'s value, or `undefined` when absent, answered from the tree alone:
    /// a value kept in a value file (`valueSeparation`) is not read (`DB::head`).
    #[napi(ts_return_type = "number | undefined | Promise<number | undefined>")]
    pub fn head<'env>(
        &self,
        env: &'env Env,
        #[napi(ts_arg_type = "Uint8Array | string")] key: Data<'_>,
        fill_cache: bool,
        snapshot: Option<&Snapshot>,
    ) -> napi::Result<Answer<Unknown<'env>, Option<u64>>, Code> {
        let key = to_vec(key);
        if let Some(found) = self.at_once(fill_cache, snapshot, |db, options| {
            db.head_opt(options, &key)
        }) {
            return length_to_js(env, found)
                .map(Either::A)
                .map_err(napi_failure);
        }
        self.read_task(
            fill_cache,
            snapshot,
            move |db, options| db.head_opt(options, &key).map_err(at(Stage::Other)),
            length_to_js,
        )
        .map(Either::B)
    }

    /// For each of `keys`, true when it has a value; read at one snapshot in one task.
    #[napi(ts_return_type = "Array<boolean> | Promise<Array<boolean>>")]
    pub fn has_many(
        &self,
        #[napi(ts_arg_type = "Array<Uint8Array | string>")] keys: Vec<Data<'_>>,
        fill_cache: bool,
        snapshot: Option<&Snapshot>,
    ) -> napi::Result<Answer<Vec<bool>, Vec<bool>>, Code> {
        let keys: Vec<Vec<u8>> = keys.into_iter().map(to_vec).collect();
        if let Some(found) = self.at_once(fill_cache, snapshot, |db, options| {
            db.contains_many_opt(options, &keys)
        }) {
            return Ok(Either::A(found));
        }
        self.read_task(
            fill_cache,
            snapshot,
            move |db, options| {
                db.contains_many_opt(options, &keys)
                    .map_err(at(Stage::Other))
            },
            |env, found| found.into_unknown(env),
        )
        .map(Either::B)
    }

    /// Sets `key` to `value`.
    #[napi(ts_return_type = "undefined | Promise<void>")]
    pub fn put(
        &self,
        #[napi(ts_arg_type = "Uint8Array | string")] key: Data<'_>,
        #[napi(ts_arg_type = "Uint8Array | string")] value: Data<'_>,
        sync: bool,
    ) -> Answer<(), ()> {
        let mut batch = WriteBatch::new();
        batch.put(&to_vec(key), &to_vec(value));
        self.write(batch, sync)
    }

    /// Deletes `key`.
    #[napi(ts_return_type = "undefined | Promise<void>")]
    pub fn del(
        &self,
        #[napi(ts_arg_type = "Uint8Array | string")] key: Data<'_>,
        sync: bool,
    ) -> Answer<(), ()> {
        let mut batch = WriteBatch::new();
        batch.delete(&to_vec(key));
        self.write(batch, sync)
    }

    /// Applies `operations` (`{ type: 'put' | 'del', key, value }`) atomically.
    #[napi(ts_return_type = "undefined | Promise<void>")]
    pub fn batch(
        &self,
        operations: Vec<BatchOp<'_>>,
        sync: bool,
    ) -> napi::Result<Answer<(), ()>, Code> {
        let mut batch = WriteBatch::new();
        for operation in operations {
            operation.add_to(&mut batch)?;
        }
        Ok(self.write(batch, sync))
    }

    /// Applies the operations of a `db.batch([...])` whose keys and values are all strings,
    /// packed as [`crate::batch::packed_batch`] reads them, atomically.
    #[napi(ts_return_type = "undefined | Promise<void>")]
    pub fn batch_packed(
        &self,
        text: JsString<'_>,
        lengths: Int32ArraySlice<'_>,
        sync: bool,
    ) -> napi::Result<Answer<(), ()>, Code> {
        let units = text.into_utf16().map_err(napi_failure)?;
        // The copy ends with a terminating 0.
        let units = units
            .as_slice()
            .split_last()
            .map_or(&[][..], |(_, units)| units);
        Ok(self.write(packed_batch(units, &lengths)?, sync))
    }

    /// Applies a chained batch's operations atomically; the batch is left empty.
    #[napi(ts_return_type = "undefined | Promise<void>")]
    pub fn write_batch(&self, batch: &mut Batch, sync: bool) -> napi::Result<Answer<(), ()>, Code> {
        Ok(self.write(batch.take()?, sync))
    }

    /// Deletes the keys of a range (the first `limit` of them in iteration order, when
    /// `limit >= 0`), as of a snapshot taken now. Not atomic: it writes batches of
    /// [`CLEAR_BATCH`] deletions.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn clear(
        &self,
        options: IteratorOptions<'_>,
        limit: i64,
        snapshot: Option<&Snapshot>,
    ) -> napi::Result<Promise<()>, Code> {
        let snapshot = pin(&self.handle, snapshot)?;
        let reverse = options.reverse.unwrap_or(false);
        let range = KeyRange::new(RangeOptions {
            gt: options.gt,
            gte: options.gte,
            lt: options.lt,
            lte: options.lte,
        });
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        let pending = PendingWrite::new(&self.pending_writes);
        Ok(self.handle.task_unit(move |db| {
            let _pending = pending;
            if range.is_empty() || limit == 0 {
                return Ok(());
            }
            let mut iter = EngineIter::new(db, &range.read_options(snapshot, false), true);
            seek_start(&mut iter, &range, reverse);
            let mut batch = WriteBatch::new();
            let mut deleted = 0;
            while iter.valid() && deleted < limit {
                let key = iter.key();
                if range.is_below(key) || range.is_above(key) {
                    break;
                }
                batch.delete(key);
                deleted += 1;
                if batch.len() >= CLEAR_BATCH {
                    db.write(&batch).map_err(at(Stage::Write))?;
                    batch.clear();
                }
                if reverse {
                    iter.prev();
                } else {
                    iter.next();
                }
            }
            iter.status().map_err(at(Stage::Other))?;
            if !batch.is_empty() {
                db.write(&batch).map_err(at(Stage::Write))?;
            }
            Ok(())
        }))
    }

    /// Approximate bytes on disk used by keys in `[start, end)`.
    #[napi(ts_return_type = "Promise<number>")]
    pub fn approximate_size(
        &self,
        #[napi(ts_arg_type = "Uint8Array | string")] start: Data<'_>,
        #[napi(ts_arg_type = "Uint8Array | string")] end: Data<'_>,
    ) -> Promise<f64> {
        let (start, end) = (to_vec(start), to_vec(end));
        self.handle.task(
            move |db| {
                let range = strata::Range {
                    start: &start,
                    limit: &end,
                };
                let sizes = db.approximate_sizes(&[range]);
                // Exact below 2^53 bytes.
                Ok(sizes.first().copied().unwrap_or(0) as f64)
            },
            |env, size| size.into_unknown(env),
        )
    }

    /// Compacts the keys in `[start, end]`.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn compact_range(
        &self,
        #[napi(ts_arg_type = "Uint8Array | string")] start: Data<'_>,
        #[napi(ts_arg_type = "Uint8Array | string")] end: Data<'_>,
    ) -> Promise<()> {
        let (start, end) = (to_vec(start), to_vec(end));
        self.handle.task_unit(move |db| {
            db.compact_range(Some(&start), Some(&end))
                .map_err(at(Stage::Write))
        })
    }

    /// Copies the database as it is now into directory `location`, which must not exist,
    /// while writes go on (hard links to its tables, a fresh manifest, the live logs so far,
    /// all synced): Strata and LevelDB open the copy with exactly that moment's data. On a
    /// read-only database, the copy holds what it sees.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn checkpoint(&self, location: String) -> napi::Result<Promise<()>, Code> {
        let path = check_location(location)?;
        Ok(self
            .handle
            .task_unit(move |db| db.checkpoint(&path).map_err(at(Stage::Other))))
    }

    /// Moves a read-only database to its writer's latest state; nothing to do on one opened
    /// to write.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn refresh(&self) -> Promise<()> {
        self.handle
            .task_unit(|db| db.refresh().map_err(at(Stage::Other)))
    }

    /// The value of an engine property (`leveldb.stats`, `leveldb.sstables`,
    /// `leveldb.num-files-at-level<N>`, `leveldb.approximate-memory-usage`), or `undefined`.
    #[napi]
    pub fn get_property(&self, name: String) -> napi::Result<Option<String>, Code> {
        Ok(self.handle.read_now(|db| Ok(db.property(&name)))?)
    }

    /// A snapshot of the database as of now.
    #[napi]
    pub fn snapshot(&self) -> napi::Result<Snapshot, Code> {
        Ok(Snapshot::take(&self.handle)?)
    }

    /// An iterator at `snapshot`, or at a snapshot taken now.
    #[napi]
    pub fn iterator(
        &self,
        options: IteratorOptions<'_>,
        snapshot: Option<&Snapshot>,
    ) -> napi::Result<Iterator, Code> {
        let snapshot = pin(&self.handle, snapshot)?;
        Ok(Iterator::new(&self.handle, options, snapshot))
    }
}

impl Database {
    /// A read of the database on the thread pool, at `snapshot` or at one taken now.
    fn read_task<T: Send + 'static>(
        &self,
        fill_cache: bool,
        snapshot: Option<&Snapshot>,
        work: impl FnOnce(&DB, &ReadOptions) -> Outcome<T> + Send + 'static,
        deliver: for<'a> fn(&'a Env, T) -> napi::Result<Unknown<'a>>,
    ) -> napi::Result<Promise<T>, Code> {
        let options = read_options(Some(pin(&self.handle, snapshot)?), fill_cache);
        Ok(self.handle.task(move |db| work(db, &options), deliver))
    }

    /// Commits `batch`: at once when it can be done without waiting (and no write handed to
    /// a thread is still pending), else in a task.
    fn write(&self, batch: WriteBatch, sync: bool) -> Answer<(), ()> {
        if !sync && self.pending_writes.load(Ordering::Acquire) == 0 {
            let done = self.handle.read_now(|db| {
                db.try_write(&WriteOptions::default(), &batch)
                    .map_err(at(Stage::Write))
            });
            if done.is_ok() {
                return Either::A(());
            }
        }
        let pending = PendingWrite::new(&self.pending_writes);
        Either::B(self.handle.task_unit(move |db| {
            let _pending = pending;
            db.write_opt(&WriteOptions { sync }, &batch)
                .map_err(at(Stage::Write))
        }))
    }

    /// `read`'s answer at once, from memory on the JavaScript thread (`memory_only`), or
    /// `None` when it would wait, fails (the task then reports why), or a write handed to a
    /// thread is pending.
    fn at_once<T>(
        &self,
        fill_cache: bool,
        snapshot: Option<&Snapshot>,
        read: impl FnOnce(&DB, &ReadOptions) -> strata::Result<T>,
    ) -> Option<T> {
        if self.pending_writes.load(Ordering::Acquire) > 0 {
            return None;
        }
        let explicit = match snapshot {
            Some(snapshot) => Some(pin(&self.handle, Some(snapshot)).ok()?),
            None => None,
        };
        let options = ReadOptions {
            memory_only: true,
            ..read_options(explicit, fill_cache)
        };
        self.handle
            .read_now(|db| read(db, &options).map_err(at(Stage::Other)))
            .ok()
    }
}
