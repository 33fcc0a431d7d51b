//! `StrataIterator`'s native methods: a cursor over a database as of the iterator's creation
//! (or its snapshot).
//!
//! Position model (leveldbjni's, made total): the cursor sits *at* the entry `next()` returns,
//! or at the end. `next()` returns that entry and moves past it; `prev()` moves back one entry
//! and returns it (so `next()` returns it again); `peekNext()`/`peekPrev()` return the same
//! without moving. `seekToLast()` positions at the last entry. Unlike leveldbjni, the end is a
//! position too: from there `prev()` returns the last entry. A new iterator is at the first
//! entry. Entries come back as `byte[][] {key, value}`, or null when there is none on that
//! side; Java turns that into `NoSuchElementException`. `next` and `peekNext` also come in a
//! `...Via` form leaving the entry in the thread's scratch buffer (`scratch`), which makes no
//! JNI function call: that is what `StrataIterator` uses unless the entry does not fit.

use std::sync::Arc;

use jni::objects::{JByteArray, JClass, JObject, JObjectArray};
use jni::sys::{jboolean, jint, jlong, jobject, JNIEnv};
use jni::{jni_mangle, Env, EnvUnowned};
use parking_lot::Mutex;
use strata::DbIterator;

use crate::bytes;
use crate::database::Database;
use crate::errors::{run, Error};
use crate::fast::fast;
use crate::handle;
use crate::scratch::Scratch;

/// A `...Via` method's answer when there is no entry.
const NONE: jlong = -1;
/// A `...Via` method's answer when the entry does not fit the scratch (nothing moved).
const TOO_LARGE: jlong = -2;

/// An engine iterator, or nothing once its Java iterator or its database was closed.
pub(crate) struct Cursor {
    iter: Option<DbIterator>,
    /// False until the first move: a new iterator is at the first entry.
    positioned: bool,
}

impl Cursor {
    pub(crate) fn new(iter: DbIterator) -> Cursor {
        Cursor {
            iter: Some(iter),
            positioned: false,
        }
    }

    /// Drops the engine iterator (it holds table files open).
    pub(crate) fn release(&mut self) {
        self.iter = None;
    }
}

/// What a Java iterator's handle points to.
pub(crate) struct IteratorHandle {
    database: Arc<Database>,
    cursor: Arc<Mutex<Cursor>>,
}

impl IteratorHandle {
    pub(crate) fn new(database: Arc<Database>, cursor: Arc<Mutex<Cursor>>) -> IteratorHandle {
        IteratorHandle { database, cursor }
    }
}

/// Runs `op` on the engine iterator behind `handle`, then fails if the iterator met an error
/// (its status) or the comparator threw. Unless `op` positions the iterator itself (`seeks`),
/// a new iterator is first moved to the first entry.
fn with_iter<T>(
    handle: jlong,
    seeks: bool,
    op: impl FnOnce(&mut DbIterator) -> T,
) -> Result<T, Error> {
    // SAFETY: `handle` comes from a `StrataIterator` (the handle contract in `handle`).
    let this = unsafe { handle::borrow::<IteratorHandle>(handle) }?;
    this.database.check_comparator()?;
    let mut cursor = this.cursor.lock();
    let positioned = std::mem::replace(&mut cursor.positioned, true);
    let iter = cursor
        .iter
        .as_mut()
        .ok_or_else(|| Error::closed("iterator"))?;
    let result = this.database.on_caller(|| {
        if !positioned && !seeks {
            iter.seek_to_first();
        }
        op(iter)
    });
    this.database.check_comparator()?;
    iter.status()?;
    Ok(result)
}

/// Moves to the entry before the position (from the end: the last entry). False, without
/// moving, when there is none.
fn step_back(iter: &mut DbIterator) -> bool {
    if iter.valid() {
        iter.prev();
        if !iter.valid() {
            iter.seek_to_first();
            return false;
        }
        true
    } else {
        iter.seek_to_last();
        iter.valid()
    }
}

/// The entry at the position as `byte[][] {key, value}`.
fn entry<'local>(
    env: &mut Env<'local>,
    iter: &DbIterator,
) -> Result<JObjectArray<'local, JByteArray<'local>>, Error> {
    let key = bytes::to_java(env, iter.key())?;
    let value = bytes::to_java(env, iter.value())?;
    let pair = JObjectArray::<JByteArray>::new(env, 2, &key)?;
    pair.set_element(env, 1, &value)?;
    Ok(pair)
}

/// A native method returning an entry: `to` moves the iterator behind `handle` to the entry
/// to return (false: there is none, return null), `then` moves it on once the entry is read.
fn entry_call<'local>(
    env: &mut EnvUnowned<'local>,
    handle: jlong,
    to: impl FnOnce(&mut DbIterator) -> bool,
    then: impl FnOnce(&mut DbIterator),
) -> JObjectArray<'local, JByteArray<'local>> {
    run(env, |env| {
        with_iter(handle, false, |iter| {
            if !to(iter) || !iter.valid() {
                return Ok(JObjectArray::<JByteArray>::null());
            }
            let pair = entry(env, iter)?;
            then(iter);
            Ok(pair)
        })?
    })
}

/// [`entry_call`] through the scratch at `scratch`: leaves the key then the value there and
/// returns the key's length times 2^32 plus the value's; or [`NONE`], or [`TOO_LARGE`]
/// without calling `then`.
fn entry_via(
    env: *mut JNIEnv,
    handle: jlong,
    scratch: jlong,
    capacity: jint,
    then: impl FnOnce(&mut DbIterator),
) -> jlong {
    fast(env, NONE, |_| {
        // SAFETY: `StrataIterator` passes its thread's scratch (the contract in `scratch`).
        let mut scratch = unsafe { Scratch::new(scratch, capacity) }?;
        with_iter(handle, false, |iter| {
            if !iter.valid() {
                return NONE;
            }
            let (key, value) = (iter.key(), iter.value());
            let lengths = (u32::try_from(key.len()), u32::try_from(value.len()));
            let (Ok(key_len), Ok(value_len)) = lengths else {
                return TOO_LARGE;
            };
            if !scratch.put(&[key, value]) {
                return TOO_LARGE;
            }
            then(iter);
            (i64::from(key_len) << 32) | i64::from(value_len)
        })
    })
}

/// Stays where the iterator is.
fn stay(_: &mut DbIterator) {}

/// True: the entry at the position is the one to return.
fn here(_: &mut DbIterator) -> bool {
    true
}

#[jni_mangle("io.github.stratakv.StrataIterator")]
pub fn seek<'local>(
    mut env: EnvUnowned<'local>,
    _this: JObject<'local>,
    handle: jlong,
    key: JByteArray<'local>,
) {
    run(&mut env, |env| {
        let key = bytes::required(env, &key, "key")?;
        with_iter(handle, true, |iter| iter.seek(&key))
    })
}

#[jni_mangle("io.github.stratakv.StrataIterator")]
pub fn seek_to_first<'local>(mut env: EnvUnowned<'local>, _this: JObject<'local>, handle: jlong) {
    run(&mut env, |_| {
        with_iter(handle, true, DbIterator::seek_to_first)
    })
}

#[jni_mangle("io.github.stratakv.StrataIterator")]
pub fn seek_to_last<'local>(mut env: EnvUnowned<'local>, _this: JObject<'local>, handle: jlong) {
    run(&mut env, |_| {
        with_iter(handle, true, DbIterator::seek_to_last)
    })
}

#[jni_mangle("io.github.stratakv.StrataIterator")]
pub fn has_next<'local>(
    mut env: EnvUnowned<'local>,
    _this: JObject<'local>,
    handle: jlong,
) -> jboolean {
    run(&mut env, |_| with_iter(handle, false, |iter| iter.valid()))
}

#[jni_mangle("io.github.stratakv.StrataIterator")]
pub fn peek_next<'local>(
    mut env: EnvUnowned<'local>,
    _this: JObject<'local>,
    handle: jlong,
) -> JObjectArray<'local, JByteArray<'local>> {
    entry_call(&mut env, handle, here, stay)
}

#[jni_mangle("io.github.stratakv.StrataIterator")]
pub fn next<'local>(
    mut env: EnvUnowned<'local>,
    _this: JObject<'local>,
    handle: jlong,
) -> JObjectArray<'local, JByteArray<'local>> {
    entry_call(&mut env, handle, here, DbIterator::next)
}

// SAFETY: JNI's name for `StrataIterator`'s `private native long nextVia(long, long, int)`,
// which no other library defines; the signature is that declaration in JNI types.
#[unsafe(export_name = "Java_io_github_stratakv_StrataIterator_nextVia")]
pub extern "system" fn next_via(
    env: *mut JNIEnv,
    _this: jobject,
    handle: jlong,
    scratch: jlong,
    capacity: jint,
) -> jlong {
    entry_via(env, handle, scratch, capacity, DbIterator::next)
}

// SAFETY: as for `next_via`, for `private native long peekNextVia(long, long, int)`.
#[unsafe(export_name = "Java_io_github_stratakv_StrataIterator_peekNextVia")]
pub extern "system" fn peek_next_via(
    env: *mut JNIEnv,
    _this: jobject,
    handle: jlong,
    scratch: jlong,
    capacity: jint,
) -> jlong {
    entry_via(env, handle, scratch, capacity, stay)
}

#[jni_mangle("io.github.stratakv.StrataIterator")]
pub fn has_prev<'local>(
    mut env: EnvUnowned<'local>,
    _this: JObject<'local>,
    handle: jlong,
) -> jboolean {
    run(&mut env, |_| {
        with_iter(handle, false, |iter| {
            let found = step_back(iter);
            if found {
                iter.next();
            }
            found
        })
    })
}

#[jni_mangle("io.github.stratakv.StrataIterator")]
pub fn peek_prev<'local>(
    mut env: EnvUnowned<'local>,
    _this: JObject<'local>,
    handle: jlong,
) -> JObjectArray<'local, JByteArray<'local>> {
    entry_call(&mut env, handle, step_back, DbIterator::next)
}

#[jni_mangle("io.github.stratakv.StrataIterator")]
pub fn prev<'local>(
    mut env: EnvUnowned<'local>,
    _this: JObject<'local>,
    handle: jlong,
) -> JObjectArray<'local, JByteArray<'local>> {
    entry_call(&mut env, handle, step_back, stay)
}

#[jni_mangle("io.github.stratakv.StrataIterator")]
pub fn close<'local>(mut env: EnvUnowned<'local>, _this: JObject<'local>, handle: jlong) {
    run(&mut env, |_| {
        // SAFETY: `handle` comes from a `StrataIterator` (the handle contract in `handle`).
        let this = unsafe { handle::borrow::<IteratorHandle>(handle) }?;
        this.cursor.lock().release();
        Ok(())
    })
}

#[jni_mangle("io.github.stratakv.StrataIterator")]
pub fn dispose<'local>(mut env: EnvUnowned<'local>, _class: JClass<'local>, handle: jlong) {
    handle::dispose::<IteratorHandle>(&mut env, handle)
}
