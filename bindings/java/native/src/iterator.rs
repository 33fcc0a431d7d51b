//! `StrataIterator`'s native methods: a cursor over a database as of the iterator's creation
//! (or its snapshot).
//!
//! Position model (leveldbjni's, made total): the cursor sits *at* the entry `next()` returns,
//! or at the end. `next()` returns that entry and moves past it; `prev()` moves back one entry
//! and returns it (so `next()` returns it again); `peekNext()`/`peekPrev()` return the same
//! without moving. `seekToLast()` positions at the last entry. Unlike leveldbjni, the end is a
//! position too: from there `prev()` returns the last entry. A new iterator is at the first
//! entry. Entries come back as `byte[][] {key, value}`, or null when there is none on that
//! side; Java turns that into `NoSuchElementException`. Going forward, `StrataIterator` reads
//! ahead: `nextBatchVia` moves past as many entries as fit the thread's scratch buffer
//! (`scratch`, up to a count Java asks for) and leaves them there, with no JNI function call;
//! Java hands them out one by one and, before any other move, seeks the cursor back to the
//! first one it has not handed out. `next`/`peekNext` with arrays serve entries too large for
//! the scratch.

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

/// `nextBatchVia`'s answer when the next entry does not fit the scratch (nothing moved).
const TOO_LARGE: jint = -2;

/// An engine iterator, or nothing once its Java iterator or its database was closed.
pub(crate) struct Cursor<I> {
    iter: Option<I>,
    /// False until the first move: a new iterator is at the first entry.
    positioned: bool,
}

impl<I> Cursor<I> {
    pub(crate) fn new(iter: I) -> Cursor<I> {
        Cursor {
            iter: Some(iter),
            positioned: false,
        }
    }
}

/// A cursor its database's `close()` empties (engine iterators hold table files open).
pub(crate) trait Release: Send + Sync {
    /// Drops the engine iterator.
    fn release(&self);
}

impl<I: Send> Release for Mutex<Cursor<I>> {
    fn release(&self) {
        self.lock().iter = None;
    }
}

/// What a Java iterator's handle points to.
pub(crate) struct IteratorHandle<I> {
    database: Arc<Database>,
    cursor: Arc<Mutex<Cursor<I>>>,
}

impl<I: Send> IteratorHandle<I> {
    pub(crate) fn new(database: Arc<Database>, cursor: Arc<Mutex<Cursor<I>>>) -> Self {
        IteratorHandle { database, cursor }
    }

    /// Drops the engine iterator (the Java iterator's `close()`).
    pub(crate) fn release(&self) {
        self.cursor.release();
    }
}

/// Runs `op` on the engine iterator behind `handle` (a handle of a Java iterator of engine
/// iterators `I`), then fails if the iterator met an error (its status) or the comparator
/// threw. Unless `op` positions the iterator itself (`seeks`), a new iterator is first moved
/// to the first entry.
pub(crate) fn with_iter<I: strata::Cursor + 'static, T>(
    handle: jlong,
    seeks: bool,
    op: impl FnOnce(&mut I) -> T,
) -> Result<T, Error> {
    with_cursor(handle, seeks, |iter: &mut I| {
        let result = op(iter);
        iter.status().map(|()| result)
    })?
    .map_err(Error::from)
}

/// [`with_iter`] without the check of the iterator's status: `op` reports it as it sees fit.
fn with_cursor<I: strata::Cursor + 'static, T>(
    handle: jlong,
    seeks: bool,
    op: impl FnOnce(&mut I) -> T,
) -> Result<T, Error> {
    // SAFETY: `handle` comes from a Java iterator of engine iterators `I` (the handle contract
    // in `handle`).
    let this = unsafe { handle::borrow::<IteratorHandle<I>>(handle) }?;
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
        with_iter::<DbIterator, _>(handle, false, |iter| {
            if !to(iter) || !iter.valid() {
                return Ok(JObjectArray::<JByteArray>::null());
            }
            let pair = entry(env, iter)?;
            then(iter);
            Ok(pair)
        })?
    })
}

/// Moves past up to `max` entries, leaving each in the scratch at `scratch` as its key's
/// length and its value's (4 bytes each, native byte order), its key and its value, one after
/// another from the start; returns how many. 0 at the end; [`TOO_LARGE`], without moving, when
/// the first does not fit. An error met after some entries is reported by the next call.
fn next_batch(iter: &mut DbIterator, scratch: &mut Scratch, max: jint) -> Result<jint, Error> {
    let mut written = 0;
    let mut at = 0;
    while written < max && iter.valid() {
        let (key, value) = (iter.key(), iter.value());
        let (Ok(key_len), Ok(value_len)) = (u32::try_from(key.len()), u32::try_from(value.len()))
        else {
            break;
        };
        let (key_len, value_len) = (key_len.to_ne_bytes(), value_len.to_ne_bytes());
        match scratch.put_at(at, &[&key_len, &value_len, key, value]) {
            Some(end) => at = end,
            None => break,
        }
        written += 1;
        iter.next();
        if iter.status().is_err() {
            break;
        }
    }
    if written > 0 {
        return Ok(written);
    }
    iter.status()?;
    Ok(if iter.valid() { TOO_LARGE } else { 0 })
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
        with_iter::<DbIterator, _>(handle, true, |iter| iter.seek(&key))
    })
}

#[jni_mangle("io.github.stratakv.StrataIterator")]
pub fn seek_to_first<'local>(mut env: EnvUnowned<'local>, _this: JObject<'local>, handle: jlong) {
    run(&mut env, |_| {
        with_iter::<DbIterator, _>(handle, true, DbIterator::seek_to_first)
    })
}

#[jni_mangle("io.github.stratakv.StrataIterator")]
pub fn seek_to_last<'local>(mut env: EnvUnowned<'local>, _this: JObject<'local>, handle: jlong) {
    run(&mut env, |_| {
        with_iter::<DbIterator, _>(handle, true, DbIterator::seek_to_last)
    })
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

// SAFETY: JNI's name for `StrataIterator`'s `private native int nextBatchVia(long, long, int,
// int)`, which no other library defines; the signature is that declaration in JNI types.
#[unsafe(export_name = "Java_io_github_stratakv_StrataIterator_nextBatchVia")]
pub extern "system" fn next_batch_via(
    env: *mut JNIEnv,
    _this: jobject,
    handle: jlong,
    scratch: jlong,
    capacity: jint,
    max: jint,
) -> jint {
    fast(env, 0, |_| {
        // SAFETY: `StrataIterator` passes its thread's scratch (the contract in `scratch`).
        let mut scratch = unsafe { Scratch::new(scratch, capacity) }?;
        with_cursor::<DbIterator, _>(handle, false, |iter| next_batch(iter, &mut scratch, max))?
    })
}

#[jni_mangle("io.github.stratakv.StrataIterator")]
pub fn has_prev<'local>(
    mut env: EnvUnowned<'local>,
    _this: JObject<'local>,
    handle: jlong,
) -> jboolean {
    run(&mut env, |_| {
        with_iter::<DbIterator, _>(handle, false, |iter| {
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
        let this = unsafe { handle::borrow::<IteratorHandle<DbIterator>>(handle) }?;
        this.release();
        Ok(())
    })
}

#[jni_mangle("io.github.stratakv.StrataIterator")]
pub fn dispose<'local>(mut env: EnvUnowned<'local>, _class: JClass<'local>, handle: jlong) {
    handle::dispose::<IteratorHandle<DbIterator>>(&mut env, handle)
}
