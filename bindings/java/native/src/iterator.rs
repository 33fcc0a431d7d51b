//! `StrataIterator`'s native methods: a cursor over a database as of the iterator's creation
//! (or its snapshot).
//!
//! Position model (leveldbjni's, made total): the cursor sits *at* the entry `next()` returns,
//! or at the end. `next()` returns that entry and moves past it; `prev()` moves back one entry
//! and returns it (so `next()` returns it again); `peekNext()`/`peekPrev()` return the same
//! without moving. `seekToLast()` positions at the last entry. Unlike leveldbjni, the end is a
//! position too: from there `prev()` returns the last entry. A new iterator is at the first
//! entry. Entries come back as `byte[][] {key, value}`, or null when there is none on that
//! side; Java turns that into `NoSuchElementException`.

use std::sync::Arc;

use jni::objects::{JByteArray, JClass, JObject, JObjectArray};
use jni::sys::{jboolean, jlong};
use jni::{jni_mangle, Env, EnvUnowned};
use parking_lot::Mutex;
use strata::DbIterator;

use crate::bytes;
use crate::comparator;
use crate::database::Database;
use crate::errors::{run, Error};
use crate::handle;

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
    let result = comparator::on_caller(|| {
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

/// A key and its value, copied out of the engine iterator.
type Entry = (Vec<u8>, Vec<u8>);

/// The entry as `byte[][] {key, value}`, or null for none.
fn entry<'local>(
    env: &mut Env<'local>,
    kv: Option<Entry>,
) -> Result<JObjectArray<'local, JByteArray<'local>>, Error> {
    let Some((key, value)) = kv else {
        return Ok(JObjectArray::<JByteArray>::null());
    };
    let key = bytes::to_java(env, &key)?;
    let value = bytes::to_java(env, &value)?;
    let pair = JObjectArray::<JByteArray>::new(env, 2, &key)?;
    pair.set_element(env, 1, &value)?;
    Ok(pair)
}

/// The entry at the position, if any.
fn current(iter: &DbIterator) -> Option<Entry> {
    iter.valid()
        .then(|| (iter.key().to_vec(), iter.value().to_vec()))
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

/// A native method returning an entry: runs `op` on the iterator behind `handle`, then hands
/// Java the entry it found (null for none).
fn entry_call<'local>(
    env: &mut EnvUnowned<'local>,
    handle: jlong,
    op: impl FnOnce(&mut DbIterator) -> Option<Entry>,
) -> JObjectArray<'local, JByteArray<'local>> {
    run(env, |env| {
        let kv = with_iter(handle, false, op)?;
        entry(env, kv)
    })
}

/// The entry before the position, if any, leaving the position where it was.
fn look_back(iter: &mut DbIterator) -> Option<Entry> {
    if !step_back(iter) {
        return None;
    }
    let kv = current(iter);
    iter.next();
    kv
}

#[jni_mangle("io.github.stratakv.StrataIterator")]
pub fn peek_next<'local>(
    mut env: EnvUnowned<'local>,
    _this: JObject<'local>,
    handle: jlong,
) -> JObjectArray<'local, JByteArray<'local>> {
    entry_call(&mut env, handle, |iter| current(iter))
}

#[jni_mangle("io.github.stratakv.StrataIterator")]
pub fn next<'local>(
    mut env: EnvUnowned<'local>,
    _this: JObject<'local>,
    handle: jlong,
) -> JObjectArray<'local, JByteArray<'local>> {
    entry_call(&mut env, handle, |iter| {
        let kv = current(iter);
        iter.next();
        kv
    })
}

#[jni_mangle("io.github.stratakv.StrataIterator")]
pub fn has_prev<'local>(
    mut env: EnvUnowned<'local>,
    _this: JObject<'local>,
    handle: jlong,
) -> jboolean {
    run(&mut env, |_| {
        with_iter(handle, false, |iter| look_back(iter).is_some())
    })
}

#[jni_mangle("io.github.stratakv.StrataIterator")]
pub fn peek_prev<'local>(
    mut env: EnvUnowned<'local>,
    _this: JObject<'local>,
    handle: jlong,
) -> JObjectArray<'local, JByteArray<'local>> {
    entry_call(&mut env, handle, look_back)
}

#[jni_mangle("io.github.stratakv.StrataIterator")]
pub fn prev<'local>(
    mut env: EnvUnowned<'local>,
    _this: JObject<'local>,
    handle: jlong,
) -> JObjectArray<'local, JByteArray<'local>> {
    entry_call(&mut env, handle, |iter| {
        step_back(iter).then(|| current(iter)).flatten()
    })
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
