//! `StrataKeyIterator`'s native methods: a cursor over a database's keys and the lengths of
//! their values, as of the iterator's creation (or its snapshot), that never reads a value kept
//! in a value file (the engine's `KeyIterator`).
//!
//! Position model (`StrataIterator`'s, forward only): the cursor sits *at* the key `next`
//! returns, or at the end; a new iterator is at the first key. `next` returns the key and moves
//! past it, `peekNext` returns it without moving; both write the value's length into the
//! caller's one-element `long[]` and return null at the end. Closing the database empties the
//! cursor as it does `StrataIterator`'s (`database`).

use jni::objects::{JByteArray, JClass, JLongArray, JObject};
use jni::sys::jlong;
use jni::{jni_mangle, EnvUnowned};
use strata::KeyIterator;

use crate::bytes;
use crate::errors::{run, Error};
use crate::handle;
use crate::iterator::{with_iter, IteratorHandle};

#[jni_mangle("io.github.stratakv.StrataKeyIterator")]
pub fn seek<'local>(
    mut env: EnvUnowned<'local>,
    _this: JObject<'local>,
    handle: jlong,
    key: JByteArray<'local>,
) {
    run(&mut env, |env| {
        let key = bytes::required(env, &key, "key")?;
        with_iter(handle, true, |iter: &mut KeyIterator| iter.seek(&key))
    })
}

#[jni_mangle("io.github.stratakv.StrataKeyIterator")]
pub fn seek_to_first<'local>(mut env: EnvUnowned<'local>, _this: JObject<'local>, handle: jlong) {
    run(&mut env, |_| {
        with_iter(handle, true, KeyIterator::seek_to_first)
    })
}

#[jni_mangle("io.github.stratakv.StrataKeyIterator")]
pub fn peek_next<'local>(
    mut env: EnvUnowned<'local>,
    _this: JObject<'local>,
    handle: jlong,
    length: JLongArray<'local>,
) -> JByteArray<'local> {
    key_call(&mut env, handle, &length, false)
}

#[jni_mangle("io.github.stratakv.StrataKeyIterator")]
pub fn next<'local>(
    mut env: EnvUnowned<'local>,
    _this: JObject<'local>,
    handle: jlong,
    length: JLongArray<'local>,
) -> JByteArray<'local> {
    key_call(&mut env, handle, &length, true)
}

/// The key at the position (null at the end), its value's length written to `length[0]`;
/// with `advance`, the cursor then moves past it.
fn key_call<'local>(
    env: &mut EnvUnowned<'local>,
    handle: jlong,
    length: &JLongArray<'local>,
    advance: bool,
) -> JByteArray<'local> {
    run(env, |env| {
        if length.is_null() {
            return Err(Error::Misuse("length must not be null".into()));
        }
        with_iter(handle, false, |iter: &mut KeyIterator| {
            if !iter.valid() {
                return Ok(JByteArray::null());
            }
            let key = bytes::to_java(env, iter.key())?;
            let value_len = jlong::try_from(iter.value_len()).unwrap_or(jlong::MAX);
            length.set_region(env, 0, &[value_len])?;
            if advance {
                iter.next();
            }
            Ok(key)
        })?
    })
}

#[jni_mangle("io.github.stratakv.StrataKeyIterator")]
pub fn close<'local>(mut env: EnvUnowned<'local>, _this: JObject<'local>, handle: jlong) {
    run(&mut env, |_| {
        // SAFETY: `handle` comes from a `StrataKeyIterator` (the handle contract in `handle`).
        let this = unsafe { handle::borrow::<IteratorHandle<KeyIterator>>(handle) }?;
        this.release();
        Ok(())
    })
}

#[jni_mangle("io.github.stratakv.StrataKeyIterator")]
pub fn dispose<'local>(mut env: EnvUnowned<'local>, _class: JClass<'local>, handle: jlong) {
    handle::dispose::<IteratorHandle<KeyIterator>>(&mut env, handle)
}
