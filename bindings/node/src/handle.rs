//! The open engine database shared by everything made from it: the `Database` object, its
//! iterators, snapshots and in-flight tasks.
//!
//! Lifetime: every task holds the read lock while it uses the engine, and `close` takes the
//! write lock, so closing waits for the reads and writes in flight and none can start after it.
//! Closing also releases the engine iterators of the iterators still open (they hold tables
//! and a snapshot); those then fail with `LEVEL_ITERATOR_NOT_OPEN`. The JavaScript thread never
//! waits for the lock: its few synchronous uses ([`Handle::read_now`]) fail as "not open" when
//! a close holds it.

use std::sync::{Arc, Weak};

use parking_lot::{Mutex, RwLock};
use strata::DB;

use crate::errors::{at, Failure, Outcome, Stage};
use crate::iterator::Cursor;

/// An engine database, open until [`Handle::close`].
pub(crate) struct Handle {
    db: RwLock<Option<DB>>,
    /// The cursors of live iterators, released at close; pruned as it grows.
    cursors: Mutex<Vec<Weak<Cursor>>>,
}

impl Handle {
    /// Opens (or creates) the database in `path`, or with `read_only` opens it to read beside
    /// its writer ([`DB::open_read_only`]). Blocks: call it off the JavaScript thread.
    pub(crate) fn open(path: String, options: strata::Options, read_only: bool) -> Outcome<Handle> {
        let db = if read_only {
            DB::open_read_only(path, options)
        } else {
            DB::open(path, options)
        }
        .map_err(at(Stage::Open))?;
        Ok(Handle {
            db: RwLock::new(Some(db)),
            cursors: Mutex::new(Vec::new()),
        })
    }

    /// Runs `f` on the open database, holding off `close` meanwhile. May wait for a close in
    /// progress: call it off the JavaScript thread.
    pub(crate) fn read<R>(&self, f: impl FnOnce(&DB) -> Outcome<R>) -> Outcome<R> {
        let guard = self.db.read();
        f(guard.as_ref().ok_or_else(Failure::database_not_open)?)
    }

    /// Like [`Handle::read`] for the JavaScript thread: never waits; a close in progress is
    /// "not open".
    pub(crate) fn read_now<R>(&self, f: impl FnOnce(&DB) -> Outcome<R>) -> Outcome<R> {
        let guard = self.db.try_read().ok_or_else(Failure::database_not_open)?;
        f(guard.as_ref().ok_or_else(Failure::database_not_open)?)
    }

    /// Registers an iterator's cursor to be released at close.
    pub(crate) fn register(&self, cursor: &Arc<Cursor>) {
        let mut cursors = self.cursors.lock();
        if cursors.len() >= 64 && cursors.len().is_power_of_two() {
            cursors.retain(|c| c.strong_count() > 0);
        }
        cursors.push(Arc::downgrade(cursor));
    }

    /// Closes the database: waits for the tasks in flight, releases every live iterator's
    /// engine iterator, and drops the engine (which finishes its background work and unlocks
    /// the directory). Idempotent. Blocks: call it off the JavaScript thread.
    pub(crate) fn close(&self) {
        let mut db = self.db.write();
        let cursors = std::mem::take(&mut *self.cursors.lock());
        for cursor in cursors.iter().filter_map(Weak::upgrade) {
            cursor.release();
        }
        drop(db.take());
    }
}
