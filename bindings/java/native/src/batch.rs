//! `StrataWriteBatch`'s native methods: updates gathered natively, applied by `StrataDB.write`.

use std::sync::Arc;

use jni::objects::{JByteArray, JClass, JObject};
use jni::sys::jlong;
use jni::{jni_mangle, EnvUnowned};
use parking_lot::Mutex;

use crate::bytes;
use crate::errors::{run, Error};
use crate::handle;

/// What a Java write batch's handle points to: the batch, `None` once closed.
pub(crate) type BatchHandle = Mutex<Option<strata::WriteBatch>>;

/// Runs `f` on the open batch behind `handle`.
///
/// # Safety
/// `handle` comes from a `StrataWriteBatch` kept reachable during the call (the handle
/// contract in `handle`).
pub(crate) unsafe fn with_batch<T>(
    handle: jlong,
    f: impl FnOnce(&mut strata::WriteBatch) -> T,
) -> Result<T, Error> {
    // SAFETY: the caller's contract.
    let this = unsafe { handle::borrow::<BatchHandle>(handle) }?;
    let mut batch = this.lock();
    let batch = batch.as_mut().ok_or_else(|| Error::closed("write batch"))?;
    Ok(f(batch))
}

#[jni_mangle("io.github.stratakv.StrataWriteBatch")]
pub fn create<'local>(mut env: EnvUnowned<'local>, _class: JClass<'local>) -> jlong {
    run(&mut env, |_| {
        let batch: BatchHandle = Mutex::new(Some(strata::WriteBatch::new()));
        Ok(handle::into_handle(Arc::new(batch)))
    })
}

#[jni_mangle("io.github.stratakv.StrataWriteBatch")]
pub fn put<'local>(
    mut env: EnvUnowned<'local>,
    _this: JObject<'local>,
    handle: jlong,
    key: JByteArray<'local>,
    value: JByteArray<'local>,
) {
    run(&mut env, |env| {
        let key = bytes::required(env, &key, "key")?;
        let value = bytes::required(env, &value, "value")?;
        // SAFETY: `handle` comes from this `StrataWriteBatch`.
        unsafe { with_batch(handle, |batch| batch.put(&key, &value)) }
    })
}

#[jni_mangle("io.github.stratakv.StrataWriteBatch")]
pub fn delete<'local>(
    mut env: EnvUnowned<'local>,
    _this: JObject<'local>,
    handle: jlong,
    key: JByteArray<'local>,
) {
    run(&mut env, |env| {
        let key = bytes::required(env, &key, "key")?;
        // SAFETY: `handle` comes from this `StrataWriteBatch`.
        unsafe { with_batch(handle, |batch| batch.delete(&key)) }
    })
}

#[jni_mangle("io.github.stratakv.StrataWriteBatch")]
pub fn close<'local>(mut env: EnvUnowned<'local>, _this: JObject<'local>, handle: jlong) {
    run(&mut env, |_| {
        // SAFETY: `handle` comes from this `StrataWriteBatch`.
        let this = unsafe { handle::borrow::<BatchHandle>(handle) }?;
        let released = this.lock().take();
        drop(released);
        Ok(())
    })
}

#[jni_mangle("io.github.stratakv.StrataWriteBatch")]
pub fn dispose<'local>(mut env: EnvUnowned<'local>, _class: JClass<'local>, handle: jlong) {
    handle::dispose::<BatchHandle>(&mut env, handle)
}
