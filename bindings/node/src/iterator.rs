//! Iterators: `db.iterator()`, `db.keys()` and `db.values()` over a key range, forward or in
//! reverse, at a snapshot taken when the iterator is created.
//!
//! The engine iterator is made lazily, by the first read, on the thread pool. A read
//! ([`Iterator::nextv`]) returns up to `size` entries, or fewer once `max_bytes` of keys and
//! values are gathered, as one flat array (`[key, value, key, value, ...]`, or only keys, or only
//! values): one boundary crossing per batch. Between reads the engine iterator stands at the
//! next entry to return. `seek` only records its target; the next read moves there. A read
//! checks the abort flag between entries, so an aborted read stops early with `LEVEL_ABORTED`.
//!
//! Thread safety: the cursor's state is behind a mutex that a read holds while it runs.
//! abstract-level never calls `seek` or `close` during a read, but if something does, `seek`
//! fails with `LEVEL_ITERATOR_BUSY` and `close` leaves the release to the read, so the
//! JavaScript thread never waits for the pool.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use napi::bindgen_prelude::{Env, ToNapiValue, Unknown};
use napi_derive::napi;
use parking_lot::Mutex;
use strata::{DbIterator, KeyIterator, ReadOptions, DB};

use crate::bytes::{to_js, to_vec, Data};
use crate::errors::{at, Code, Failure, Outcome, Stage};
use crate::handle::Handle;
use crate::job::{spawn, Promise};
use crate::range::{KeyRange, RangeOptions};

/// What each step of an iterator yields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Entries,
    Keys,
    Values,
}

/// Where the next read starts.
#[derive(Debug)]
enum Position {
    /// At the start of the range (its end, in reverse).
    Start,
    /// At the entry closest to a `seek` target, within the range.
    Seek(Vec<u8>),
    /// Where the engine iterator stands.
    Here,
    /// Past the last entry.
    End,
}

/// An engine iterator: of keys and values, or of keys alone, which never reads a value kept
/// in a value file (`valueSeparation`), so `db.keys()` and `clear()` read the tree alone.
pub(crate) enum EngineIter {
    Entries(DbIterator),
    Keys(KeyIterator),
}

impl EngineIter {
    /// An iterator of `db` with `options`: of keys alone when `keys_only`.
    pub(crate) fn new(db: &DB, options: &ReadOptions, keys_only: bool) -> EngineIter {
        if keys_only {
            EngineIter::Keys(db.iter_keys_opt(options))
        } else {
            EngineIter::Entries(db.iter_opt(options))
        }
    }

    pub(crate) fn valid(&self) -> bool {
        match self {
            EngineIter::Entries(iter) => iter.valid(),
            EngineIter::Keys(iter) => iter.valid(),
        }
    }

    fn seek_to_first(&mut self) {
        match self {
            EngineIter::Entries(iter) => iter.seek_to_first(),
            EngineIter::Keys(iter) => iter.seek_to_first(),
        }
    }

    fn seek_to_last(&mut self) {
        match self {
            EngineIter::Entries(iter) => iter.seek_to_last(),
            EngineIter::Keys(iter) => iter.seek_to_last(),
        }
    }

    fn seek(&mut self, target: &[u8]) {
        match self {
            EngineIter::Entries(iter) => iter.seek(target),
            EngineIter::Keys(iter) => iter.seek(target),
        }
    }

    pub(crate) fn next(&mut self) {
        match self {
            EngineIter::Entries(iter) => iter.next(),
            EngineIter::Keys(iter) => iter.next(),
        }
    }

    pub(crate) fn prev(&mut self) {
        match self {
            EngineIter::Entries(iter) => iter.prev(),
            EngineIter::Keys(iter) => iter.prev(),
        }
    }

    pub(crate) fn key(&self) -> &[u8] {
        match self {
            EngineIter::Entries(iter) => iter.key(),
            EngineIter::Keys(iter) => iter.key(),
        }
    }

    /// The current value; empty for an iterator of keys alone.
    fn value(&self) -> &[u8] {
        match self {
            EngineIter::Entries(iter) => iter.value(),
            EngineIter::Keys(_) => &[],
        }
    }

    pub(crate) fn status(&self) -> strata::Result<()> {
        match self {
            EngineIter::Entries(iter) => iter.status(),
            EngineIter::Keys(iter) => iter.status(),
        }
    }
}

/// The engine side of an iterator.
struct State {
    /// `None` once released (closed, or its database closed).
    snapshot: Option<strata::Snapshot>,
    /// Made by the first read.
    iter: Option<EngineIter>,
    position: Position,
}

/// An iterator's shared core: what reads, `seek`, `close` and the database's close reach.
pub(crate) struct Cursor {
    handle: Arc<Handle>,
    range: KeyRange,
    reverse: bool,
    fill_cache: bool,
    state: Mutex<State>,
    closed: AtomicBool,
    aborted: AtomicBool,
    /// Set once a read reached the end, so JavaScript need not ask again.
    exhausted: AtomicBool,
    /// No value is read (`values: false`).
    keys_only: bool,
}

/// Moves `iter` to the start of `range` (its end, in reverse).
pub(crate) fn seek_start(iter: &mut EngineIter, range: &KeyRange, reverse: bool) {
    match (reverse, &range.lower) {
        (true, _) => iter.seek_to_last(),
        (false, Some(lower)) => iter.seek(lower),
        (false, None) => iter.seek_to_first(),
    }
}

/// Moves `iter` to the entry closest to `target` within `range`: the first at or after it, or
/// in reverse the last at or before it. False when there is none.
fn seek_target(
    iter: &mut EngineIter,
    range: &KeyRange,
    reverse: bool,
    target: &[u8],
) -> Outcome<bool> {
    if !reverse {
        if range.is_above(target) {
            return Ok(false);
        }
        match &range.lower {
            Some(lower) if target < lower.as_slice() => iter.seek(lower),
            _ => iter.seek(target),
        }
    } else {
        if range.is_below(target) {
            return Ok(false);
        }
        if range.is_above(target) {
            iter.seek_to_last();
        } else {
            iter.seek(target);
            if iter.valid() {
                if iter.key() > target {
                    iter.prev();
                }
            } else {
                iter.status().map_err(at(Stage::Other))?;
                // Every key of the range is before `target`.
                iter.seek_to_last();
            }
        }
    }
    Ok(true)
}

/// One read's entries, in one buffer.
pub struct Chunk {
    data: Vec<u8>,
    /// The end offset in `data` of each key and value, in the order JavaScript gets them.
    ends: Vec<usize>,
    shape: Shape,
    keys_as_string: bool,
    values_as_string: bool,
}

impl Chunk {
    fn push(&mut self, bytes: &[u8]) {
        self.data.extend_from_slice(bytes);
        self.ends.push(self.data.len());
    }

    fn add(&mut self, key: &[u8], value: &[u8]) {
        if self.shape != Shape::Values {
            self.push(key);
        }
        if self.shape != Shape::Keys {
            self.push(value);
        }
    }

    /// The flat JavaScript array of this chunk's keys and values.
    fn deliver(env: &Env, chunk: Chunk) -> napi::Result<Unknown<'_>> {
        let count = u32::try_from(chunk.ends.len())
            .map_err(|_| napi::Error::from_reason("too many entries in one read"))?;
        let mut array = env.create_array(count)?;
        let mut start = 0;
        for (index, &end) in (0..count).zip(&chunk.ends) {
            let as_string = match chunk.shape {
                Shape::Keys => chunk.keys_as_string,
                Shape::Values => chunk.values_as_string,
                Shape::Entries if index % 2 == 0 => chunk.keys_as_string,
                Shape::Entries => chunk.values_as_string,
            };
            let bytes = chunk.data.get(start..end).unwrap_or_default();
            array.set(index, to_js(env, bytes, as_string)?)?;
            start = end;
        }
        array.into_unknown(env)
    }
}

impl Cursor {
    /// Reads up to `size` entries (at least one unless the end is reached) or about
    /// `max_bytes` of them. Runs on the thread pool.
    fn read(&self, size: usize, max_bytes: usize, mut chunk: Chunk) -> Outcome<Chunk> {
        let result = self.handle.read(|db| {
            let mut state = self.state.lock();
            let result = self.read_locked(db, &mut state, size, max_bytes, &mut chunk);
            if self.closed.load(Ordering::Acquire) {
                // `close` ran during the read and left the release to it.
                release(&mut state);
            }
            result.map(|()| chunk)
        });
        match result {
            // An iterator of a closed database is closed too.
            Err(failure) if failure.code == Code::DatabaseNotOpen => {
                Err(Failure::iterator_not_open())
            }
            other => other,
        }
    }

    fn read_locked(
        &self,
        db: &DB,
        state: &mut State,
        size: usize,
        max_bytes: usize,
        chunk: &mut Chunk,
    ) -> Outcome<()> {
        let State {
            snapshot,
            iter,
            position,
        } = state;
        if self.closed.load(Ordering::Acquire) {
            return Err(Failure::iterator_not_open());
        }
        let Some(snapshot) = snapshot else {
            return Err(Failure::iterator_not_open());
        };
        if matches!(position, Position::End) || self.range.is_empty() {
            *position = Position::End;
            self.exhausted.store(true, Ordering::Release);
            return Ok(());
        }
        let iter = iter.get_or_insert_with(|| {
            let options = self.range.read_options(snapshot.clone(), self.fill_cache);
            EngineIter::new(db, &options, self.keys_only)
        });
        let found = match std::mem::replace(position, Position::Here) {
            Position::Start => {
                seek_start(iter, &self.range, self.reverse);
                true
            }
            Position::Seek(target) => seek_target(iter, &self.range, self.reverse, &target)?,
            Position::Here | Position::End => true,
        };
        let mut count = 0;
        while found && iter.valid() {
            if self.aborted.load(Ordering::Acquire) {
                return Err(Failure::new(Code::Aborted, "Operation has been aborted"));
            }
            let key = iter.key();
            if self.range.is_below(key) || self.range.is_above(key) {
                break;
            }
            chunk.add(key, iter.value());
            count += 1;
            if self.reverse {
                iter.prev();
            } else {
                iter.next();
            }
            if count >= size || chunk.data.len() >= max_bytes {
                return Ok(());
            }
        }
        iter.status().map_err(at(Stage::Other))?;
        *position = Position::End;
        self.exhausted.store(true, Ordering::Release);
        Ok(())
    }

    /// Drops the engine iterator and the snapshot: at close, or when the database closes.
    pub(crate) fn release(&self) {
        self.closed.store(true, Ordering::Release);
        release(&mut self.state.lock());
    }
}

fn release(state: &mut State) {
    state.iter = None;
    state.snapshot = None;
}

/// The options of `iterator()`, `keys()`, `values()` and `clear()` the binding reads, as
/// abstract-level passes them (range options already encoded).
#[napi(object, object_to_js = false)]
pub struct IteratorOptions<'a> {
    #[napi(ts_type = "Uint8Array | string")]
    pub gt: Option<Data<'a>>,
    #[napi(ts_type = "Uint8Array | string")]
    pub gte: Option<Data<'a>>,
    #[napi(ts_type = "Uint8Array | string")]
    pub lt: Option<Data<'a>>,
    #[napi(ts_type = "Uint8Array | string")]
    pub lte: Option<Data<'a>>,
    pub reverse: Option<bool>,
    /// `false` for an iterator of values only.
    pub keys: Option<bool>,
    /// `false` for an iterator of keys only.
    pub values: Option<bool>,
    pub key_encoding: Option<String>,
    pub value_encoding: Option<String>,
    pub fill_cache: Option<bool>,
}

/// A JavaScript iterator's native half.
#[napi]
pub struct Iterator {
    cursor: Arc<Cursor>,
    shape: Shape,
    keys_as_string: bool,
    values_as_string: bool,
}

impl Iterator {
    /// A new iterator of `handle`'s database at `snapshot`.
    pub(crate) fn new(
        handle: &Arc<Handle>,
        options: IteratorOptions<'_>,
        snapshot: strata::Snapshot,
    ) -> Iterator {
        // With neither keys nor values, reading keys still counts the entries.
        let shape = match (options.keys != Some(false), options.values != Some(false)) {
            (true, true) => Shape::Entries,
            (false, true) => Shape::Values,
            (_, false) => Shape::Keys,
        };
        let keys_as_string = options.key_encoding.as_deref() == Some("utf8");
        let values_as_string = options.value_encoding.as_deref() == Some("utf8");
        let cursor = Arc::new(Cursor {
            handle: Arc::clone(handle),
            range: KeyRange::new(RangeOptions {
                gt: options.gt,
                gte: options.gte,
                lt: options.lt,
                lte: options.lte,
            }),
            reverse: options.reverse.unwrap_or(false),
            fill_cache: options.fill_cache.unwrap_or(true),
            state: Mutex::new(State {
                snapshot: Some(snapshot),
                iter: None,
                position: Position::Start,
            }),
            closed: AtomicBool::new(false),
            aborted: AtomicBool::new(false),
            exhausted: AtomicBool::new(false),
            keys_only: shape == Shape::Keys,
        });
        handle.register(&cursor);
        Iterator {
            cursor,
            shape,
            keys_as_string,
            values_as_string,
        }
    }
}

#[napi]
impl Iterator {
    /// Reads up to `size` entries, fewer once about `maxBytes` of keys and values are read;
    /// an empty array at the end.
    #[napi(ts_return_type = "Promise<Array<Uint8Array | string>>")]
    pub fn nextv(&self, size: u32, max_bytes: u32) -> Promise<Chunk> {
        let cursor = Arc::clone(&self.cursor);
        let chunk = Chunk {
            data: Vec::new(),
            ends: Vec::new(),
            shape: self.shape,
            keys_as_string: self.keys_as_string,
            values_as_string: self.values_as_string,
        };
        let size = (size as usize).max(1);
        spawn(
            move || cursor.read(size, max_bytes as usize, chunk),
            Chunk::deliver,
        )
    }

    /// Moves the next read to the entry closest to `target` (see the module docs).
    #[napi]
    pub fn seek(
        &self,
        #[napi(ts_arg_type = "Uint8Array | string")] target: Data<'_>,
    ) -> napi::Result<(), Code> {
        if self.cursor.closed.load(Ordering::Acquire) {
            return Err(Failure::iterator_not_open().into());
        }
        let mut state = self.cursor.state.try_lock().ok_or_else(|| {
            Failure::new(
                Code::IteratorBusy,
                "Iterator is busy: a read is in progress",
            )
        })?;
        state.position = Position::Seek(to_vec(target));
        self.cursor.exhausted.store(false, Ordering::Release);
        Ok(())
    }

    /// True once a read reached the end (until the next `seek`).
    #[napi(getter)]
    pub fn done(&self) -> bool {
        self.cursor.exhausted.load(Ordering::Acquire)
    }

    /// Makes the read in progress, and every later one, stop with `LEVEL_ABORTED`.
    #[napi]
    pub fn abort(&self) {
        self.cursor.aborted.store(true, Ordering::Release);
    }

    /// Releases the engine iterator and the snapshot. Idempotent.
    #[napi]
    pub fn close(&self) {
        self.cursor.closed.store(true, Ordering::Release);
        // A read in progress holds the lock; it releases the state itself when it ends.
        if let Some(mut state) = self.cursor.state.try_lock() {
            release(&mut state);
        }
    }
}
