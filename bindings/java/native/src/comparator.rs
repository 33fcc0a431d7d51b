//! A Java `DBComparator` as the engine's key order, and what happens when it throws.
//!
//! The engine calls the comparator from the Java thread that called into it (reads, writes,
//! iterators, open) and from its own background threads (flushes, compactions). Each call
//! makes two Java `byte[]`s and calls `compare` through JNI: about a microsecond, against a few
//! nanoseconds for the built-in order, so bulk writes run several times slower than with the
//! default comparator (as with leveldbjni).
//!
//! # A comparator that throws
//!
//! The engine has no way to carry an exception out of a sort, and guessing an order could write
//! misordered tables. So the first exception poisons the database ([`Failure`]): every later
//! call into it throws a `DBException` whose cause is that exception, until it is closed and
//! reopened. No misordered data reaches a table:
//!
//! - On the engine's own threads and while opening or repairing (which write tables on the
//!   caller's thread), a comparison after the failure panics. The engine turns a panic in a
//!   background job into a background error (the job's tables are not installed, and writes
//!   fail from then on); a panic in open or repair unwinds to the native method, which throws.
//!   Every table build calls the comparator (`findShortSuccessor` for its last index entry) before
//!   the table is installed, so a poisoned comparator always stops it.
//! - During reads, writes, iterator moves and `compactRange` on a Java thread ([`on_caller`]),
//!   a comparison after the failure answers in bytewise order instead of panicking: a panic
//!   inside the engine's write path would leave the writers queued behind it waiting forever.
//!   The answer is never used: the native method sees the failure when the engine returns and
//!   throws. A write's record may already be in the log and its key in the memtable (in an
//!   order the failure broke); the memtable is never flushed (see above), and reopening
//!   replays the log with a working comparator.

use std::cell::Cell;
use std::cmp::Ordering;
use std::sync::{Arc, OnceLock};

use jni::objects::{JObject, JThrowable};
use jni::refs::Global;
use jni::Env;
use strata::Comparator;

use crate::attach;
use crate::errors::Error;
use crate::java::JavaComparatorRef;

thread_local! {
    /// True while this thread runs an engine call that must not unwind (see [`on_caller`]).
    static FALL_BACK: Cell<bool> = const { Cell::new(false) };
}

/// Runs an engine read, write or iterator move on the caller's thread: a poisoned comparator
/// answers in bytewise order instead of panicking inside it (see the module docs).
pub(crate) fn on_caller<T>(call: impl FnOnce() -> T) -> T {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            FALL_BACK.set(self.0);
        }
    }
    let _restore = Restore(FALL_BACK.replace(true));
    call()
}

/// The first exception a database's comparator threw; set once, never cleared.
#[derive(Debug)]
pub(crate) struct Failure {
    comparator: String,
    thrown: OnceLock<Option<Global<JThrowable<'static>>>>,
}

impl Failure {
    fn new(comparator: String) -> Failure {
        Failure {
            comparator,
            thrown: OnceLock::new(),
        }
    }

    /// True once the comparator has thrown.
    pub(crate) fn is_set(&self) -> bool {
        self.thrown.get().is_some()
    }

    /// Records the exception (the first one wins).
    fn record(&self, exception: Option<Global<JThrowable<'static>>>) {
        let _ = self.thrown.set(exception);
    }

    /// The message of the `DBException` every call throws from now on.
    pub(crate) fn message(&self) -> String {
        format!(
            "the comparator {:?} threw an exception (the cause); the database refuses every \
             call until it is closed and reopened",
            self.comparator
        )
    }

    /// A local reference to the exception, for the `DBException`'s cause.
    pub(crate) fn exception<'local>(
        &self,
        env: &mut Env<'local>,
    ) -> jni::errors::Result<Option<JThrowable<'local>>> {
        match self.thrown.get() {
            Some(Some(exception)) => env.new_local_ref(exception).map(Some),
            _ => Ok(None),
        }
    }
}

/// A Java `DBComparator` as an engine [`Comparator`].
///
/// Thread safety: `Send + Sync`; each call attaches to the JVM (see `attach`).
pub(crate) struct JavaComparator {
    name: String,
    target: Global<JavaComparatorRef<'static>>,
    failure: Arc<Failure>,
}

impl JavaComparator {
    /// Wraps `target`, reading its name once (it is recorded in the manifest).
    pub(crate) fn new(
        env: &mut Env<'_>,
        target: &JavaComparatorRef<'_>,
    ) -> Result<JavaComparator, Error> {
        let name = target.name(env)?;
        if name.is_null() {
            return Err(Error::Misuse(
                "the comparator's name() returned null".to_owned(),
            ));
        }
        let name = name.try_to_string(env)?;
        Ok(JavaComparator {
            failure: Arc::new(Failure::new(name.clone())),
            name,
            target: env.new_global_ref(target)?,
        })
    }

    /// The failure this comparator reports to.
    pub(crate) fn failure(&self) -> Arc<Failure> {
        Arc::clone(&self.failure)
    }

    /// Calls `f` with the comparator in a fresh local frame; an exception poisons the database.
    /// `None` once poisoned.
    fn call<T>(
        &self,
        f: impl FnOnce(&mut Env, &JavaComparatorRef) -> jni::errors::Result<T>,
    ) -> Option<T> {
        if self.failure.is_set() {
            return None;
        }
        match attach::with_env(|env| f(env, &self.target)) {
            Ok(value) => Some(value),
            Err(jni::errors::Error::CaughtJavaException { exception, .. }) => {
                self.failure.record(Some(exception));
                None
            }
            Err(_) => {
                self.failure.record(None);
                None
            }
        }
    }

    /// What a comparison answers once the comparator has failed (see the module docs).
    fn failed(&self, a: &[u8], b: &[u8]) -> Ordering {
        if FALL_BACK.get() {
            a.cmp(b)
        } else {
            panic!("{}", self.failure.message())
        }
    }

    /// Calls a `byte[] f(...)` shortening method; `None` when it returned null or failed.
    fn shortened(
        &self,
        f: impl FnOnce(&mut Env, &JavaComparatorRef) -> jni::errors::Result<Option<Vec<u8>>>,
    ) -> Option<Vec<u8>> {
        let shortened = self.call(f).flatten();
        if shortened.is_none() && self.failure.is_set() && !FALL_BACK.get() {
            panic!("{}", self.failure.message());
        }
        shortened
    }
}

/// A Java `byte[]` result as bytes; `None` for null.
fn bytes_of(
    env: &mut Env,
    array: jni::objects::JByteArray,
) -> jni::errors::Result<Option<Vec<u8>>> {
    if array.is_null() {
        Ok(None)
    } else {
        env.convert_byte_array(&array).map(Some)
    }
}

impl Comparator for JavaComparator {
    fn name(&self) -> &str {
        &self.name
    }

    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        let order = self.call(|env, target| {
            let a = env.byte_array_from_slice(a)?;
            let b = env.byte_array_from_slice(b)?;
            target.compare(env, JObject::from(a), JObject::from(b))
        });
        match order {
            Some(order) => order.cmp(&0),
            None => self.failed(a, b),
        }
    }

    fn find_shortest_separator(&self, start: &mut Vec<u8>, limit: &[u8]) {
        let separator = self.shortened(|env, target| {
            let java_start = env.byte_array_from_slice(start)?;
            let java_limit = env.byte_array_from_slice(limit)?;
            let separator = target.find_shortest_separator(env, &java_start, &java_limit)?;
            bytes_of(env, separator)
        });
        // A separator must sort in [start, limit): anything else would misdirect lookups, so
        // a wrong answer is ignored (leaving `start` is always correct).
        if let Some(separator) = separator {
            if self.compare(start, &separator) != Ordering::Greater
                && self.compare(&separator, limit) == Ordering::Less
            {
                *start = separator;
            }
        }
    }

    fn find_short_successor(&self, key: &mut Vec<u8>) {
        let successor = self.shortened(|env, target| {
            let java_key = env.byte_array_from_slice(key)?;
            let successor = target.find_short_successor(env, &java_key)?;
            bytes_of(env, successor)
        });
        // The engine keeps a successor only if it sorts after `key`.
        if let Some(successor) = successor {
            *key = successor;
        }
    }
}
