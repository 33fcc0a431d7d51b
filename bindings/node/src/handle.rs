//! The open engine database shared by everything made from it: the `Database` object, its
//! iterators, snapshots and in-flight tasks.
//!
//! Lifetime: every task holds the read lock while it uses the engine, and `close` takes the
//! write lock, so closing waits for the reads and writes in flight and none can start after it.
//! A task is counted from the moment it is made on the JavaScript thread ([`Handle::task`])
//! until it is done, and `close` first waits for every task made before it was asked for:
//! one still queued on libuv's pool when the close began would otherwise find the database
//! closed (classic-level finishes them too). Tasks made after are not waited for: libuv runs
//! its queue in order, so every task made before the close is running or done by the time the
//! close's own task runs, and waiting for none queued behind it cannot tie up the pool.
//! Closing also releases the engine iterators of the iterators still open (they hold tables
//! and a snapshot); those then fail with `LEVEL_ITERATOR_NOT_OPEN`. The JavaScript thread never
//! waits for the lock: its few synchronous uses ([`Handle::read_now`]) fail as "not open" when
//! a close holds it.

use std::sync::{Arc, Weak};

use napi::bindgen_prelude::{Env, ToNapiValue, Unknown};
use parking_lot::{Condvar, Mutex, RwLock};
use strata::DB;

use crate::errors::{at, Failure, Outcome, Stage};
use crate::iterator::Cursor;
use crate::job::{spawn, spawn_unit, Promise};

/// An engine database, open until [`Handle::close`].
pub(crate) struct Handle {
    db: RwLock<Option<DB>>,
    /// The cursors of live iterators, released at close; pruned as it grows.
    cursors: Mutex<Vec<Weak<Cursor>>>,
    /// The tasks a close waits for (see the module documentation).
    tasks: Mutex<Tasks>,
    /// Signalled when the last of those is done.
    tasks_done: Condvar,
}

/// Tasks made and not done, counted until a close is asked for.
#[derive(Default)]
struct Tasks {
    counted: usize,
    closing: bool,
}

/// A task counted in [`Handle::tasks`] until it is dropped: when the task is done with it, or
/// never runs.
struct Counted(Option<Arc<Handle>>);

impl Drop for Counted {
    fn drop(&mut self) {
        if let Some(handle) = self.0.take() {
            let mut tasks = handle.tasks.lock();
            tasks.counted -= 1;
            if tasks.counted == 0 {
                handle.tasks_done.notify_all();
            }
        }
    }
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
            tasks: Mutex::new(Tasks::default()),
            tasks_done: Condvar::new(),
        })
    }

    /// A task on libuv's pool running `work` on the open database, its result delivered by
    /// `deliver`; counted from now, so a close asked for after this call waits for it.
    pub(crate) fn task<T: Send + 'static>(
        self: &Arc<Self>,
        work: impl FnOnce(&DB) -> Outcome<T> + Send + 'static,
        deliver: for<'a> fn(&'a Env, T) -> napi::Result<Unknown<'a>>,
    ) -> Promise<T> {
        let counted = self.count();
        let handle = Arc::clone(self);
        spawn(
            move || {
                let _counted = counted;
                handle.read(work)
            },
            deliver,
        )
    }

    /// [`Handle::task`] for work whose result is `undefined`.
    pub(crate) fn task_unit(
        self: &Arc<Self>,
        work: impl FnOnce(&DB) -> Outcome<()> + Send + 'static,
    ) -> Promise<()> {
        self.task(work, |env, ()| ().into_unknown(env))
    }

    /// Counts a task being made, unless a close was asked for.
    fn count(self: &Arc<Self>) -> Counted {
        let mut tasks = self.tasks.lock();
        if tasks.closing {
            return Counted(None);
        }
        tasks.counted += 1;
        Counted(Some(Arc::clone(self)))
    }

    /// A task closing the database (see [`Handle::close`]) once every task made before this
    /// call is done.
    pub(crate) fn close_task(self: &Arc<Self>) -> Promise<()> {
        self.tasks.lock().closing = true;
        let handle = Arc::clone(self);
        spawn_unit(move || {
            let mut tasks = handle.tasks.lock();
            while tasks.counted > 0 {
                handle.tasks_done.wait(&mut tasks);
            }
            drop(tasks);
            handle.close();
            Ok(())
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
