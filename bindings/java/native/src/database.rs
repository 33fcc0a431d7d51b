//! The native side of one open database, shared by its Java objects (`StrataDB` and the
//! iterators and snapshots made from it).
//!
//! Thread safety: every engine call holds a read lock on the engine handle, so `close()`, which
//! takes the write lock, waits for calls in flight instead of pulling the database from under
//! them; after it, every call fails with "the database is closed". Closing also drops the
//! engine iterator of every live iterator (iterators hold table files open); those iterators
//! then fail the same way.
//!
//! `close()` first marks the database closing, which refuses new calls, so a steady stream of
//! calls from other threads cannot keep it waiting. Calls take the read lock even while
//! `close()` waits for the write lock, and `resumeCompactions` is let in while closing: a
//! writer stalled by `suspendCompactions` (it waits for the resume while holding the read
//! lock) must be able to get its resume, or `close()` would wait forever.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::{Mutex, RwLock};
use strata::ReadOptions;

use crate::comparator::{self, Failure};
use crate::errors::Error;
use crate::iterator::{Cursor, Release};

/// Weak references to the live iterators' cursors, pruned as the list grows.
struct Registry {
    live: Vec<Weak<dyn Release>>,
    prune_at: usize,
}

/// An open (or closed) database.
pub(crate) struct Database {
    engine: RwLock<Option<strata::DB>>,
    /// Set when `close()` starts: new calls are refused.
    closing: AtomicBool,
    /// Where the Java comparator's failure is recorded, if the database has one.
    comparator_failure: Option<Arc<Failure>>,
    /// `Options.verifyChecksums`: every read verifies checksums.
    verify_checksums: bool,
    cursors: Mutex<Registry>,
}

/// Read options of one Java call: `ReadOptions`' fields, decoded by the caller.
pub(crate) struct ReadFlags {
    pub(crate) verify_checksums: bool,
    pub(crate) fill_cache: bool,
    pub(crate) snapshot: Option<strata::Snapshot>,
}

impl Database {
    pub(crate) fn new(
        engine: strata::DB,
        comparator_failure: Option<Arc<Failure>>,
        verify_checksums: bool,
    ) -> Database {
        Database {
            engine: RwLock::new(Some(engine)),
            closing: AtomicBool::new(false),
            comparator_failure,
            verify_checksums,
            cursors: Mutex::new(Registry {
                live: Vec::new(),
                prune_at: 16,
            }),
        }
    }

    /// Fails once the Java comparator has thrown.
    #[inline]
    pub(crate) fn check_comparator(&self) -> Result<(), Error> {
        match &self.comparator_failure {
            Some(failure) if failure.is_set() => Err(Error::Comparator(Arc::clone(failure))),
            _ => Ok(()),
        }
    }

    /// Runs `f` on the engine on the caller's thread (see `comparator::on_caller`); fails when
    /// closed (or closing) or when the comparator threw before or during the call.
    #[inline]
    pub(crate) fn call<T>(
        &self,
        f: impl FnOnce(&strata::DB) -> strata::Result<T>,
    ) -> Result<T, Error> {
        self.call_even_while_closing(false, f)
    }

    /// [`Database::call`]; with `while_closing`, also while `close()` waits for calls in flight.
    #[inline]
    pub(crate) fn call_even_while_closing<T>(
        &self,
        while_closing: bool,
        f: impl FnOnce(&strata::DB) -> strata::Result<T>,
    ) -> Result<T, Error> {
        self.check_comparator()?;
        if !while_closing && self.closing.load(Ordering::Acquire) {
            return Err(Error::closed("database"));
        }
        let engine = self.engine.read_recursive();
        let db = engine.as_ref().ok_or_else(|| Error::closed("database"))?;
        let result = self.on_caller(|| f(db));
        self.check_comparator()?;
        Ok(result?)
    }

    /// Runs an engine call on the caller's thread: through `comparator::on_caller` when the
    /// database has a Java comparator (without one, nothing needs it).
    #[inline]
    pub(crate) fn on_caller<T>(&self, call: impl FnOnce() -> T) -> T {
        if self.comparator_failure.is_some() {
            comparator::on_caller(call)
        } else {
            call()
        }
    }

    /// The engine's read options for one call.
    #[inline]
    pub(crate) fn read_options(&self, flags: ReadFlags) -> ReadOptions {
        ReadOptions {
            verify_checksums: flags.verify_checksums || self.verify_checksums,
            fill_cache: flags.fill_cache,
            snapshot: flags.snapshot,
            ..ReadOptions::default()
        }
    }

    /// A new engine iterator (`make` makes it), registered so that `close()` can release it.
    /// It is registered under the read lock, so a concurrent `close()` (which takes the write
    /// lock before it looks at the registry) always sees it.
    pub(crate) fn new_cursor<I: Send + 'static>(
        &self,
        make: impl FnOnce(&strata::DB) -> I,
    ) -> Result<Arc<Mutex<Cursor<I>>>, Error> {
        self.check_comparator()?;
        if self.closing.load(Ordering::Acquire) {
            return Err(Error::closed("database"));
        }
        let engine = self.engine.read_recursive();
        let db = engine.as_ref().ok_or_else(|| Error::closed("database"))?;
        let cursor = Arc::new(Mutex::new(Cursor::new(make(db))));
        let mut registry = self.cursors.lock();
        if registry.live.len() >= registry.prune_at {
            registry.live.retain(|w| w.strong_count() > 0);
            registry.prune_at = (registry.live.len() * 2).max(16);
        }
        let weak: Weak<Mutex<Cursor<I>>> = Arc::downgrade(&cursor);
        registry.live.push(weak);
        Ok(cursor)
    }

    /// Closes the engine: waits for calls in flight, releases every live iterator, then drops
    /// the database (its background work ends, its files are closed). Idempotent.
    pub(crate) fn close(&self) {
        self.closing.store(true, Ordering::Release);
        let mut engine = self.engine.write();
        let cursors = std::mem::take(&mut self.cursors.lock().live);
        for cursor in cursors.iter().filter_map(Weak::upgrade) {
            cursor.release();
        }
        let db = engine.take();
        drop(engine);
        drop(db);
    }
}
