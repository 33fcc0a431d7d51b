//! The hot native methods of `StrataDB`: `get`, `put`, `delete` and the write of a batch that
//! fits the scratch, on raw JNI.
//!
//! Through the `jni` crate's safe layer a cached get spent about 40% of its time in that layer
//! (an attach guard per call, an `ExceptionCheck` after every JNI call) against 7% in the engine
//! (perf, release build). So these methods take the raw environment, and the `...Via` ones,
//! which Java calls whenever the key and value fit the thread's scratch buffer (`scratch`),
//! make no JNI function call at all. The array-passing ones, for larger keys and values, make
//! only the JNI calls that cannot throw (`GetArrayLength`; `GetByteArrayRegion` within the
//! array's length) or whose failure is a null result (`NewByteArray`, then
//! `SetByteArrayRegion` within the new array), so no exception check is needed. Errors and
//! panics go through `errors::run` like every other native method. Java never passes null
//! arrays here (`StrataDB` checks first); a null would be an error.

use std::panic::{self, AssertUnwindSafe};

use jni::sys::{jboolean, jbyteArray, jint, jlong, jobject, jsize, JNIEnv};
use jni::EnvUnowned;
use strata::WriteOptions;

use crate::batch;
use crate::database::ReadFlags;
use crate::db::{database, read_flags};
use crate::errors::{run, Error};
use crate::scratch::Scratch;

/// `getVia`'s answer for an absent key.
const ABSENT: jint = -1;
/// `getVia`'s answer for a value larger than the scratch (Java then calls `get`).
const TOO_LARGE: jint = -2;

/// The JNI environment of the native call running on this thread.
pub(crate) struct RawEnv(*mut JNIEnv);

impl RawEnv {
    /// The bytes of the `byte[]` `array`; `what` names it in the error for null.
    fn bytes(&self, array: jbyteArray, what: &str) -> Result<Vec<u8>, Error> {
        if array.is_null() {
            return Err(Error::Misuse(format!("{what} must not be null")));
        }
        // SAFETY: `self.0` is this thread's environment for the running native call and `array`
        // a live local reference to a `byte[]` it was passed. GetArrayLength cannot fail on a
        // non-null array; GetByteArrayRegion of exactly its length cannot throw and writes
        // `len` bytes, which the buffer has room for.
        unsafe {
            let len = ((**self.0).v1_1.GetArrayLength)(self.0, array);
            let size = usize::try_from(len).unwrap_or(0);
            let mut buffer = Vec::<u8>::with_capacity(size);
            ((**self.0).v1_1.GetByteArrayRegion)(self.0, array, 0, len, buffer.as_mut_ptr().cast());
            buffer.set_len(size);
            Ok(buffer)
        }
    }

    /// A new `byte[]` holding `bytes`; null with an `OutOfMemoryError` pending when the JVM
    /// cannot allocate it.
    fn new_bytes(&self, bytes: &[u8]) -> Result<jbyteArray, Error> {
        let len = jsize::try_from(bytes.len()).map_err(|_| {
            Error::Misuse(format!(
                "a value of {} bytes does not fit a Java array",
                bytes.len()
            ))
        })?;
        // SAFETY: as in `bytes`; NewByteArray returns null only with an exception pending, and
        // SetByteArrayRegion of exactly the new array's length cannot throw and reads `len`
        // bytes from `bytes`.
        unsafe {
            let array = ((**self.0).v1_1.NewByteArray)(self.0, len);
            if !array.is_null() {
                ((**self.0).v1_1.SetByteArrayRegion)(self.0, array, 0, len, bytes.as_ptr().cast());
            }
            Ok(array)
        }
    }
}

/// Runs the body of a hot native method: its error or panic is thrown to Java as by
/// `errors::run`, and `failed` returned.
pub(crate) fn fast<T>(
    env: *mut JNIEnv,
    failed: T,
    body: impl FnOnce(&RawEnv) -> Result<T, Error>,
) -> T {
    let raw = RawEnv(env);
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| body(&raw)));
    if let Ok(Ok(value)) = outcome {
        return value;
    }
    // SAFETY: `env` is this thread's environment for the running native call, which outlives
    // this use.
    let mut unowned = unsafe { EnvUnowned::from_raw(env) };
    run(&mut unowned, |_| match outcome {
        Ok(Err(error)) => Err(error),
        Ok(Ok(_)) => Ok(()),
        Err(payload) => panic::resume_unwind(payload),
    });
    failed
}

// SAFETY: JNI's name for `StrataDB`'s `private native byte[] get(long, byte[], long, boolean,
// boolean)`, which no other library defines; the signature is that declaration in JNI types,
// after the environment and `this`.
#[unsafe(export_name = "Java_io_github_stratakv_StrataDB_get")]
pub extern "system" fn get(
    env: *mut JNIEnv,
    _this: jobject,
    handle: jlong,
    key: jbyteArray,
    snapshot: jlong,
    verify_checksums: jboolean,
    fill_cache: jboolean,
) -> jbyteArray {
    fast(env, std::ptr::null_mut(), |raw| {
        let db = database(handle)?;
        let key = raw.bytes(key, "key")?;
        let flags: ReadFlags = read_flags(db, snapshot, verify_checksums, fill_cache)?;
        let options = db.read_options(flags);
        match db.call(|engine| engine.get_opt(&options, &key))? {
            Some(value) => raw.new_bytes(&value),
            None => Ok(std::ptr::null_mut()),
        }
    })
}

// SAFETY: as for `get`, for `private native void put(long, byte[], byte[], boolean)`.
#[unsafe(export_name = "Java_io_github_stratakv_StrataDB_put")]
pub extern "system" fn put(
    env: *mut JNIEnv,
    _this: jobject,
    handle: jlong,
    key: jbyteArray,
    value: jbyteArray,
    sync: jboolean,
) {
    fast(env, (), |raw| {
        let db = database(handle)?;
        let key = raw.bytes(key, "key")?;
        let value = raw.bytes(value, "value")?;
        db.call(|engine| engine.put_opt(&WriteOptions { sync }, &key, &value))
    })
}

// SAFETY: as for `get`, for `private native void delete(long, byte[], boolean)`.
#[unsafe(export_name = "Java_io_github_stratakv_StrataDB_delete")]
pub extern "system" fn delete(
    env: *mut JNIEnv,
    _this: jobject,
    handle: jlong,
    key: jbyteArray,
    sync: jboolean,
) {
    fast(env, (), |raw| {
        let db = database(handle)?;
        let key = raw.bytes(key, "key")?;
        db.call(|engine| engine.delete_opt(&WriteOptions { sync }, &key))
    })
}

// SAFETY: as for `get`, for `private native int getVia(long, long, int, int, long, boolean,
// boolean)`.
#[unsafe(export_name = "Java_io_github_stratakv_StrataDB_getVia")]
#[allow(clippy::too_many_arguments)] // the Java method's parameters, after env and this
pub extern "system" fn get_via(
    env: *mut JNIEnv,
    _this: jobject,
    handle: jlong,
    scratch: jlong,
    capacity: jint,
    key_len: jint,
    snapshot: jlong,
    verify_checksums: jboolean,
    fill_cache: jboolean,
) -> jint {
    fast(env, ABSENT, |_| {
        let db = database(handle)?;
        // SAFETY: `StrataDB` passes its thread's scratch (the contract in `scratch`).
        let mut scratch = unsafe { Scratch::new(scratch, capacity) }?;
        let flags: ReadFlags = read_flags(db, snapshot, verify_checksums, fill_cache)?;
        let options = db.read_options(flags);
        // The value goes after the key, which the engine reads until it hands the value over.
        let (key, mut answer) = scratch.split(key_len)?;
        let copied = db.call(|engine| {
            engine.get_with(&options, key, |value| {
                answer
                    .put(&[value])
                    .then(|| jint::try_from(value.len()).ok())
            })
        })?;
        Ok(match copied {
            Some(Some(Some(len))) => len,
            Some(_) => TOO_LARGE,
            None => ABSENT,
        })
    })
}

// SAFETY: as for `get`, for `private native void putVia(long, long, int, int, int, boolean)`.
#[unsafe(export_name = "Java_io_github_stratakv_StrataDB_putVia")]
pub extern "system" fn put_via(
    env: *mut JNIEnv,
    _this: jobject,
    handle: jlong,
    scratch: jlong,
    capacity: jint,
    key_len: jint,
    value_len: jint,
    sync: jboolean,
) {
    fast(env, (), |_| {
        let db = database(handle)?;
        // SAFETY: as in `get_via`.
        let scratch = unsafe { Scratch::new(scratch, capacity) }?;
        let key = scratch.get(0, key_len)?;
        let value = scratch.get(key.len(), value_len)?;
        db.call(|engine| engine.put_opt(&WriteOptions { sync }, key, value))
    })
}

// SAFETY: as for `get`, for `private native void deleteVia(long, long, int, int, boolean)`.
#[unsafe(export_name = "Java_io_github_stratakv_StrataDB_deleteVia")]
pub extern "system" fn delete_via(
    env: *mut JNIEnv,
    _this: jobject,
    handle: jlong,
    scratch: jlong,
    capacity: jint,
    key_len: jint,
    sync: jboolean,
) {
    fast(env, (), |_| {
        let db = database(handle)?;
        // SAFETY: as in `get_via`.
        let scratch = unsafe { Scratch::new(scratch, capacity) }?;
        let key = scratch.get(0, key_len)?;
        db.call(|engine| engine.delete_opt(&WriteOptions { sync }, key))
    })
}

// SAFETY: as for `get`, for `private native void writeVia(long, long, int, int, boolean)`.
#[unsafe(export_name = "Java_io_github_stratakv_StrataDB_writeVia")]
pub extern "system" fn write_via(
    env: *mut JNIEnv,
    _this: jobject,
    handle: jlong,
    scratch: jlong,
    capacity: jint,
    length: jint,
    sync: jboolean,
) {
    fast(env, (), |_| {
        let db = database(handle)?;
        // SAFETY: as in `get_via`.
        let scratch = unsafe { Scratch::new(scratch, capacity) }?;
        let batch = batch::decode(scratch.get(0, length)?)?;
        db.call(|engine| engine.write_opt(&WriteOptions { sync }, &batch))
    })
}
