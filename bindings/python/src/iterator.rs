//! plyvel's two iterators: `Iterator` (a Python iterator over a key range) and `RawIterator`
//! (LevelDB's cursor, method for method).
//!
//! `Iterator` keeps a cursor *between* entries, in one of four states:
//!
//! ```text
//! BeforeStart  before the first entry of the range: next() seeks to `start`
//! AfterStop    past the last entry: prev() seeks back from `stop`
//! Between      the engine iterator is at the entry next() returned last (or prev() will return)
//! Positioned   after seek(): the engine iterator is at the entry next() will return
//! ```
//!
//! so that, as plyvel documents, `prev()` returns the entry the last `next()` returned and
//! stepping back and forth is symmetric. A reverse iterator swaps `next` and `prev`. The range is
//! `start`/`stop` (inclusive/exclusive by default, `include_start`/`include_stop` change that),
//! or every key with `prefix`; a `PrefixedDB`'s prefix is added to every bound and target and
//! stripped from every key returned. With the built-in bytewise order the range is also handed
//! to the engine as iterator bounds, so it never reads past them.
//!
//! Where plyvel misbehaves at the edges of a range, this module does what plyvel documents
//! instead: a reverse step never returns a key before `start` (plyvel can, right after a
//! `seek`), a reverse iterator whose last key in range equals an inclusive `start` still yields
//! it, and a `seek` to an excluded `start` skips it. Errors met while iterating (corruption,
//! I/O) are raised, never taken for the end of the data.
//!
//! Every engine step runs with the GIL released.

use std::cmp::Ordering;
use std::sync::Arc;

use parking_lot::Mutex;
use pyo3::exceptions::PyStopIteration;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::{PyBytes, PyDict, PyTuple};
use strata::ReadOptions;

use crate::convert::{flag, prefix_successor};
use crate::engine_cursor::EngineCursor;
use crate::errors::{iterator_closed, iterator_invalid, to_py};
use crate::handle::{Cursor, Handle};

/// Where an `Iterator` stands; see the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    BeforeStart,
    AfterStop,
    Between,
    Positioned,
}

/// The arguments of `iterator()` (on a `DB`, a `PrefixedDB` and a `Snapshot` alike), as plyvel
/// takes them: keyword-only, with plyvel's names and defaults.
pub(crate) struct IterArgs {
    pub(crate) reverse: bool,
    pub(crate) start: Option<Vec<u8>>,
    pub(crate) stop: Option<Vec<u8>>,
    pub(crate) include_start: bool,
    pub(crate) include_stop: bool,
    pub(crate) prefix: Option<Vec<u8>>,
    pub(crate) include_key: bool,
    pub(crate) include_value: bool,
    pub(crate) verify_checksums: bool,
    pub(crate) fill_cache: bool,
}

impl IterArgs {
    /// Every entry, forward, keys and values: what `iter(db)` gives, and `iterator()`'s
    /// defaults.
    pub(crate) fn all() -> IterArgs {
        IterArgs {
            reverse: false,
            start: None,
            stop: None,
            include_start: true,
            include_stop: false,
            prefix: None,
            include_key: true,
            include_value: true,
            verify_checksums: false,
            fill_cache: true,
        }
    }

    /// The arguments `iterator(**kwargs)` was called with. Flags are read by
    /// [`flag`] (`None` is false, as in plyvel); bounds and the prefix are `bytes` or `None`; an
    /// unknown keyword is a `TypeError` naming it.
    pub(crate) fn from_kwargs(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<IterArgs> {
        let mut args = IterArgs::all();
        let Some(kwargs) = kwargs else {
            return Ok(args);
        };
        for (name, value) in kwargs.iter() {
            let name: String = name.extract()?;
            let flag_arg = || {
                flag(&value).map_err(|e| {
                    let reason = e.value(value.py()).to_string();
                    PyTypeError::new_err(format!("iterator() argument '{name}': {reason}"))
                })
            };
            let bytes = || -> PyResult<Option<Vec<u8>>> {
                if value.is_none() {
                    return Ok(None);
                }
                let bytes = value.cast::<PyBytes>().map_err(|_| {
                    PyTypeError::new_err(format!("iterator() argument '{name}' must be bytes"))
                })?;
                Ok(Some(bytes.as_bytes().to_vec()))
            };
            match name.as_str() {
                "reverse" => args.reverse = flag_arg()?,
                "start" => args.start = bytes()?,
                "stop" => args.stop = bytes()?,
                "include_start" => args.include_start = flag_arg()?,
                "include_stop" => args.include_stop = flag_arg()?,
                "prefix" => args.prefix = bytes()?,
                "include_key" => args.include_key = flag_arg()?,
                "include_value" => args.include_value = flag_arg()?,
                "verify_checksums" => args.verify_checksums = flag_arg()?,
                "fill_cache" => args.fill_cache = flag_arg()?,
                _ => {
                    return Err(PyTypeError::new_err(format!(
                        "iterator() got an unexpected keyword argument '{name}'"
                    )))
                }
            }
        }
        Ok(args)
    }
}

/// Runs one engine step with the GIL released.
fn step(py: Python<'_>, iter: &mut EngineCursor, f: impl FnOnce(&mut EngineCursor) + Send) {
    py.detach(|| f(iter))
}

/// The engine iterator's error, if it stopped on one.
fn check(iter: &EngineCursor) -> PyResult<()> {
    iter.status().map_err(to_py)
}

/// Iterator over a range of a database or snapshot, in key order or in reverse.
///
/// Thread safety: usable from any thread; steps of one iterator are serialised.
#[pyclass(frozen, module = "strata", name = "Iterator")]
pub struct PyIterator {
    handle: Arc<Handle>,
    cursor: Arc<Mutex<Cursor<State>>>,
    reverse: bool,
    /// Full keys (database prefix included) bounding the range.
    start: Option<Vec<u8>>,
    stop: Option<Vec<u8>>,
    include_start: bool,
    include_stop: bool,
    include_key: bool,
    include_value: bool,
    /// The `PrefixedDB` prefix, added to targets and stripped from keys.
    db_prefix: Vec<u8>,
}

impl PyIterator {
    /// A new iterator over `handle` (within `db_prefix`, optionally at `snapshot`).
    pub(crate) fn new(
        py: Python<'_>,
        handle: &Arc<Handle>,
        db_prefix: Option<&[u8]>,
        args: IterArgs,
        snapshot: Option<strata::Snapshot>,
    ) -> PyResult<PyIterator> {
        let db_prefix = db_prefix.unwrap_or_default();
        let join = |key: &[u8]| [db_prefix, key].concat();
        let (mut start, mut stop, mut include_start, mut include_stop) = (
            args.start.as_deref().map(join),
            args.stop.as_deref().map(join),
            args.include_start,
            args.include_stop,
        );
        if !db_prefix.is_empty() && args.prefix.is_none() {
            if start.is_none() {
                start = Some(db_prefix.to_vec());
                include_start = true;
            }
            if stop.is_none() {
                stop = prefix_successor(db_prefix);
                include_stop = false;
            }
        }
        if let Some(prefix) = args.prefix.as_deref() {
            if args.start.is_some() || args.stop.is_some() {
                return Err(PyTypeError::new_err(
                    "'prefix' cannot be used together with 'start' or 'stop'",
                ));
            }
            let full = join(prefix);
            stop = prefix_successor(&full);
            start = Some(full);
            include_start = true;
            include_stop = false;
        }
        let mut options = ReadOptions {
            verify_checksums: args.verify_checksums,
            fill_cache: args.fill_cache,
            snapshot,
            ..ReadOptions::default()
        };
        if handle.is_bytewise() {
            options.lower_bound = start.clone();
            options.upper_bound = stop.as_ref().map(|stop| {
                let mut bound = stop.clone();
                if include_stop {
                    bound.push(0); // the smallest key after `stop`
                }
                bound
            });
        }
        let state = if args.reverse {
            State::AfterStop
        } else {
            State::BeforeStart
        };
        let cursor = handle.new_cursor(py, options, args.include_value, state)?;
        Ok(PyIterator {
            handle: Arc::clone(handle),
            cursor,
            reverse: args.reverse,
            start,
            stop,
            include_start,
            include_stop,
            include_key: args.include_key,
            include_value: args.include_value,
            db_prefix: db_prefix.to_vec(),
        })
    }

    /// True when `key` is not before the start of the range.
    fn after_start(&self, key: &[u8]) -> bool {
        match &self.start {
            None => true,
            Some(start) => match self.handle.compare(key, start) {
                Ordering::Greater => true,
                Ordering::Equal => self.include_start,
                Ordering::Less => false,
            },
        }
    }

    /// True when `key` is not past the end of the range.
    fn before_stop(&self, key: &[u8]) -> bool {
        match &self.stop {
            None => true,
            Some(stop) => match self.handle.compare(key, stop) {
                Ordering::Less => true,
                Ordering::Equal => self.include_stop,
                Ordering::Greater => false,
            },
        }
    }

    /// True when `key` is an excluded `start`.
    fn is_excluded_start(&self, key: &[u8]) -> bool {
        !self.include_start
            && self
                .start
                .as_deref()
                .is_some_and(|start| self.handle.compare(key, start) == Ordering::Equal)
    }

    /// The entry at the engine iterator, shaped by `include_key`/`include_value`.
    fn current<'py>(&self, py: Python<'py>, iter: &EngineCursor) -> PyResult<Bound<'py, PyAny>> {
        let key = || {
            PyBytes::new(
                py,
                iter.key().get(self.db_prefix.len()..).unwrap_or_default(),
            )
        };
        let value = || PyBytes::new(py, iter.value());
        Ok(match (self.include_key, self.include_value) {
            (true, true) => PyTuple::new(py, [key(), value()])?.into_any(),
            (true, false) => key().into_any(),
            (false, true) => value().into_any(),
            (false, false) => py.None().into_bound(py),
        })
    }

    /// The next entry in key order, or `None` at the end of the range.
    fn forward<'py>(
        &self,
        py: Python<'py>,
        cursor: &mut Cursor<State>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let iter = cursor.iter.as_mut().ok_or_else(iterator_closed)?;
        match cursor.state {
            State::AfterStop => return Ok(None),
            State::Between => {
                step(py, iter, |it| it.next());
                if !iter.valid() {
                    check(iter)?;
                    cursor.state = State::AfterStop;
                    return Ok(None);
                }
            }
            State::Positioned => cursor.state = State::Between,
            State::BeforeStart => {
                match &self.start {
                    Some(start) => step(py, iter, |it| it.seek(start)),
                    None => step(py, iter, |it| it.seek_to_first()),
                }
                if iter.valid() && self.is_excluded_start(iter.key()) {
                    step(py, iter, |it| it.next());
                }
                if !iter.valid() {
                    check(iter)?;
                    return Ok(None);
                }
                cursor.state = State::Between;
            }
        }
        check(iter)?;
        if !self.before_stop(iter.key()) {
            cursor.state = State::AfterStop;
            return Ok(None);
        }
        self.current(py, iter).map(Some)
    }

    /// The previous entry in key order, or `None` at the start of the range.
    fn backward<'py>(
        &self,
        py: Python<'py>,
        cursor: &mut Cursor<State>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let iter = cursor.iter.as_mut().ok_or_else(iterator_closed)?;
        match cursor.state {
            State::BeforeStart => return Ok(None),
            State::Between => {}
            State::Positioned => {
                step(py, iter, |it| it.prev());
                if !iter.valid() || !self.after_start(iter.key()) {
                    check(iter)?;
                    cursor.state = State::BeforeStart;
                    return Ok(None);
                }
            }
            State::AfterStop => {
                match &self.stop {
                    None => step(py, iter, |it| it.seek_to_last()),
                    Some(stop) => {
                        step(py, iter, |it| it.seek(stop));
                        if !iter.valid() {
                            step(py, iter, |it| it.seek_to_last());
                        }
                        if iter.valid() && !self.before_stop(iter.key()) {
                            step(py, iter, |it| it.prev());
                        }
                    }
                }
                if !iter.valid() || !self.after_start(iter.key()) {
                    check(iter)?;
                    return Ok(None);
                }
            }
        }
        check(iter)?;
        let entry = self.current(py, iter)?;
        step(py, iter, |it| it.prev());
        cursor.state = if iter.valid() && self.after_start(iter.key()) {
            State::Between
        } else {
            State::BeforeStart
        };
        check(iter)?;
        Ok(Some(entry))
    }

    fn lock<'a>(&'a self, py: Python<'_>) -> parking_lot::MutexGuard<'a, Cursor<State>> {
        self.cursor.lock_py_attached(py)
    }
}

#[pymethods]
impl PyIterator {
    fn __iter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let mut cursor = self.lock(py);
        if self.reverse {
            self.backward(py, &mut cursor)
        } else {
            self.forward(py, &mut cursor)
        }
    }

    /// Moves one step back and returns that entry (the one the last `next()` returned);
    /// raises `StopIteration` at the start of the range.
    fn prev<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let mut cursor = self.lock(py);
        let entry = if self.reverse {
            self.forward(py, &mut cursor)?
        } else {
            self.backward(py, &mut cursor)?
        };
        entry.ok_or_else(|| PyStopIteration::new_err(()))
    }

    /// Moves before the start of the range: a forward iterator is rewound (`next()` returns the
    /// first entry). A reverse iterator, as in plyvel, is then exhausted (`prev()` returns the
    /// first entry in key order).
    fn seek_to_start(&self, py: Python<'_>) -> PyResult<()> {
        let mut cursor = self.lock(py);
        cursor.iter.as_ref().ok_or_else(iterator_closed)?;
        cursor.state = State::BeforeStart;
        Ok(())
    }

    /// Moves past the end of the range: a forward iterator is exhausted (`prev()` returns the
    /// last entry); a reverse iterator, as in plyvel, is rewound.
    fn seek_to_stop(&self, py: Python<'_>) -> PyResult<()> {
        let mut cursor = self.lock(py);
        cursor.iter.as_ref().ok_or_else(iterator_closed)?;
        cursor.state = State::AfterStop;
        Ok(())
    }

    /// Moves to the first key `>= target` within the range: a forward `next()` returns it.
    fn seek(&self, py: Python<'_>, target: &[u8]) -> PyResult<()> {
        let mut guard = self.lock(py);
        let cursor = &mut *guard;
        let iter = cursor.iter.as_mut().ok_or_else(iterator_closed)?;
        let mut target = [self.db_prefix.as_slice(), target].concat();
        if let Some(start) = &self.start {
            if self.handle.compare(&target, start) == Ordering::Less {
                target.clone_from(start);
            }
        }
        if let Some(stop) = &self.stop {
            if self.handle.compare(&target, stop) == Ordering::Greater {
                target.clone_from(stop);
            }
        }
        step(py, iter, |it| it.seek(&target));
        if iter.valid() && self.is_excluded_start(iter.key()) {
            step(py, iter, |it| it.next());
        }
        check(iter)?;
        cursor.state = if iter.valid() {
            State::Positioned
        } else {
            State::AfterStop
        };
        Ok(())
    }

    /// Releases the iterator; using it afterwards raises `RuntimeError`.
    fn close(&self, py: Python<'_>) {
        let iter = self.lock(py).iter.take();
        py.detach(move || drop(iter));
    }

    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, PyTuple>) -> bool {
        self.close(py);
        false
    }
}

/// LevelDB's iterator interface: explicit seeks and steps, `valid()`, `key()`, `value()`.
///
/// Thread safety: usable from any thread; calls on one iterator are serialised.
#[pyclass(frozen, module = "strata", name = "RawIterator")]
pub struct PyRawIterator {
    cursor: Arc<Mutex<Cursor<()>>>,
}

impl PyRawIterator {
    pub(crate) fn new(
        py: Python<'_>,
        handle: &Arc<Handle>,
        verify_checksums: bool,
        fill_cache: bool,
        snapshot: Option<strata::Snapshot>,
    ) -> PyResult<PyRawIterator> {
        let options = ReadOptions {
            verify_checksums,
            fill_cache,
            snapshot,
            ..ReadOptions::default()
        };
        let cursor = handle.new_cursor(py, options, true, ())?;
        Ok(PyRawIterator { cursor })
    }

    /// Runs `f` on the open engine iterator.
    fn with<R>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut EngineCursor) -> PyResult<R>,
    ) -> PyResult<R> {
        let mut cursor = self.cursor.lock_py_attached(py);
        let iter = cursor.iter.as_mut().ok_or_else(iterator_closed)?;
        f(iter)
    }

    /// Runs the engine step `f` detached, then reports the iterator's error.
    fn move_by(
        &self,
        py: Python<'_>,
        need_valid: bool,
        f: impl FnOnce(&mut EngineCursor) + Send,
    ) -> PyResult<()> {
        self.with(py, |iter| {
            if need_valid && !iter.valid() {
                return Err(iterator_invalid());
            }
            step(py, iter, f);
            check(iter)
        })
    }

    fn valid_entry<'py, R>(
        &self,
        py: Python<'py>,
        f: impl FnOnce(&EngineCursor) -> R,
    ) -> PyResult<R> {
        self.with(py, |iter| {
            if iter.valid() {
                Ok(f(iter))
            } else {
                Err(iterator_invalid())
            }
        })
    }
}

#[pymethods]
impl PyRawIterator {
    /// True when positioned at an entry.
    fn valid(&self, py: Python<'_>) -> PyResult<bool> {
        self.with(py, |iter| Ok(iter.valid()))
    }

    fn seek_to_first(&self, py: Python<'_>) -> PyResult<()> {
        self.move_by(py, false, |it| it.seek_to_first())
    }

    fn seek_to_last(&self, py: Python<'_>) -> PyResult<()> {
        self.move_by(py, false, |it| it.seek_to_last())
    }

    /// Moves to the first key `>= target`.
    fn seek(&self, py: Python<'_>, target: &[u8]) -> PyResult<()> {
        self.move_by(py, false, |it| it.seek(target))
    }

    /// Moves one entry forward; `IteratorInvalidError` when not positioned.
    fn next(&self, py: Python<'_>) -> PyResult<()> {
        self.move_by(py, true, |it| it.next())
    }

    /// Moves one entry back; `IteratorInvalidError` when not positioned.
    fn prev(&self, py: Python<'_>) -> PyResult<()> {
        self.move_by(py, true, |it| it.prev())
    }

    fn key<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        self.valid_entry(py, |it| PyBytes::new(py, it.key()))
    }

    fn value<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        self.valid_entry(py, |it| PyBytes::new(py, it.value()))
    }

    /// `(key, value)`.
    fn item<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        self.valid_entry(py, |it| {
            (PyBytes::new(py, it.key()), PyBytes::new(py, it.value()))
        })
    }

    /// Releases the iterator; using it afterwards raises `RuntimeError`.
    fn close(&self, py: Python<'_>) {
        let iter = self.cursor.lock_py_attached(py).iter.take();
        py.detach(move || drop(iter));
    }

    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, PyTuple>) -> bool {
        self.close(py);
        false
    }
}
