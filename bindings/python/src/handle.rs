//! The shared core of an open database: the engine handle every Python object of that database
//! (the `DB`, its prefixed views, write batches, snapshots, iterators) reaches it through.
//!
//! Thread safety and the GIL: every engine call runs with the GIL released ("detached"), while
//! the caller holds a read lock on the engine handle, so `close()` (which takes the write lock)
//! waits for calls in flight instead of pulling the database from under them. No lock of the
//! binding or of the engine is ever waited for while the GIL is held: locks are taken with
//! `*_py_attached`, which detaches before blocking, and engine objects whose drop takes an engine
//! lock (snapshots, iterators holding snapshots) are dropped detached. That is what lets a Python
//! comparator, which takes the GIL from the engine's background thread, never deadlock.
//!
//! Lifetime: the engine database closes at `DB.close()` or when the last Python object of the
//! database is gone (iterators and snapshots keep it open, as in plyvel). Closing also drops the
//! engine iterators of every live Python iterator (they hold files open); those iterators then
//! raise `RuntimeError`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::{Mutex, RwLock};
use pyo3::prelude::*;
use pyo3::sync::{MutexExt, RwLockExt};
use strata::{Comparator, ReadOptions};

use crate::engine_cursor::EngineCursor;
use crate::errors::{db_closed, to_py};

/// The engine iterator of a Python iterator, with the Python iterator's position state.
/// `iter` is `None` once the iterator or its database is closed.
pub(crate) struct Cursor<S> {
    pub(crate) iter: Option<EngineCursor>,
    pub(crate) state: S,
}

impl<S> Drop for Cursor<S> {
    fn drop(&mut self) {
        if let Some(iter) = self.iter.take() {
            drop_detached(iter);
        }
    }
}

/// Something `close()` must release: a live cursor of any kind.
pub(crate) trait Releasable: Send + Sync {
    /// Drops the engine iterator. Called detached.
    fn release(&self);
}

impl<S: Send> Releasable for Mutex<Cursor<S>> {
    fn release(&self) {
        let iter = self.lock().iter.take();
        drop(iter);
    }
}

/// Weak references to the live cursors, pruned as it grows.
struct Registry {
    live: Vec<Weak<dyn Releasable>>,
    prune_at: usize,
}

/// An open (or closed) database shared by its Python objects.
pub(crate) struct Handle {
    db: RwLock<Option<strata::DB>>,
    closed: AtomicBool,
    comparator: Arc<dyn Comparator>,
    /// True when `comparator` is the built-in bytewise order (compared inline, no dyn call).
    bytewise: bool,
    cursors: Mutex<Registry>,
}

/// Drops `value` with the GIL released (its drop may wait for an engine lock).
pub(crate) fn drop_detached<T: Send>(value: T) {
    Python::attach(|py| py.detach(move || drop(value)));
}

impl Handle {
    /// Opens the database in `path` (detached), read-only beside its writer if asked.
    pub(crate) fn open(
        py: Python<'_>,
        path: std::path::PathBuf,
        options: strata::Options,
        bytewise: bool,
        read_only: bool,
    ) -> PyResult<Handle> {
        let comparator = Arc::clone(&options.comparator);
        let db = py
            .detach(move || {
                if read_only {
                    strata::DB::open_read_only(path, options)
                } else {
                    strata::DB::open(path, options)
                }
            })
            .map_err(to_py)?;
        Ok(Handle {
            db: RwLock::new(Some(db)),
            closed: AtomicBool::new(false),
            comparator,
            bytewise,
            cursors: Mutex::new(Registry {
                live: Vec::new(),
                prune_at: 16,
            }),
        })
    }

    /// True once `close()` has started.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Fails with `RuntimeError` when closed.
    pub(crate) fn check_open(&self) -> PyResult<()> {
        if self.is_closed() {
            Err(db_closed())
        } else {
            Ok(())
        }
    }

    /// True when keys are in bytewise order.
    pub(crate) fn is_bytewise(&self) -> bool {
        self.bytewise
    }

    /// Orders two user keys as the database does.
    pub(crate) fn compare(&self, a: &[u8], b: &[u8]) -> std::cmp::Ordering {
        if self.bytewise {
            a.cmp(b)
        } else {
            self.comparator.compare(a, b)
        }
    }

    /// Runs `f` on the engine database with the GIL released; `RuntimeError` when closed.
    pub(crate) fn with_db<R, F>(&self, py: Python<'_>, f: F) -> PyResult<R>
    where
        F: FnOnce(&strata::DB) -> R + Send,
        R: Send,
    {
        let guard = self.db.read_py_attached(py);
        let db = guard.as_ref().ok_or_else(db_closed)?;
        Ok(py.detach(move || f(db)))
    }

    /// Like [`Handle::with_db`] for engine calls that return an engine `Result`.
    pub(crate) fn call<R, F>(&self, py: Python<'_>, f: F) -> PyResult<R>
    where
        F: FnOnce(&strata::DB) -> strata::Result<R> + Send,
        R: Send,
    {
        self.with_db(py, f)?.map_err(to_py)
    }

    /// A new engine iterator (over entries, or with `values` false over keys alone, reading
    /// no value file), registered so that `close()` can release it. The registration
    /// happens under the read lock, so a concurrent `close()` (which takes the write lock before
    /// it looks at the registry) always sees it.
    pub(crate) fn new_cursor<S: Send + 'static>(
        &self,
        py: Python<'_>,
        options: ReadOptions,
        values: bool,
        state: S,
    ) -> PyResult<Arc<Mutex<Cursor<S>>>> {
        let guard = self.db.read_py_attached(py);
        let db = guard.as_ref().ok_or_else(db_closed)?;
        let iter = py.detach(move || match values {
            true => EngineCursor::Entries(db.iter_opt(&options)),
            false => EngineCursor::Keys(db.iter_keys_opt(&options)),
        });
        let cursor = Arc::new(Mutex::new(Cursor {
            iter: Some(iter),
            state,
        }));
        let weak: Weak<dyn Releasable> = {
            let strong: Arc<dyn Releasable> = cursor.clone();
            Arc::downgrade(&strong)
        };
        let mut registry = self.cursors.lock_py_attached(py);
        if registry.live.len() >= registry.prune_at {
            registry.live.retain(|w| w.strong_count() > 0);
            registry.prune_at = (registry.live.len() * 2).max(16);
        }
        registry.live.push(weak);
        Ok(cursor)
    }

    /// Closes the database: waits for calls in flight (the write lock), releases every live
    /// iterator, closes the engine. Idempotent.
    pub(crate) fn close(&self, py: Python<'_>) {
        self.closed.store(true, Ordering::Release);
        py.detach(|| {
            let mut db = self.db.write();
            let cursors = std::mem::take(&mut self.cursors.lock().live);
            for cursor in cursors.iter().filter_map(Weak::upgrade) {
                cursor.release();
            }
            let engine = db.take();
            drop(db);
            drop(engine);
        });
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        if let Some(db) = self.db.get_mut().take() {
            drop_detached(db);
        }
    }
}
