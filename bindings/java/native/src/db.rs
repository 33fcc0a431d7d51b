//! `StrataDB`'s native methods (`get`, `put`, `delete` and a batch's `writeVia` are in `fast`).
//! Each takes the database handle (see `handle`) and runs the engine call through
//! `Database::call`, so a closed database or a comparator that threw is reported instead of
//! reaching the engine.

use std::sync::Arc;

use jni::objects::{JByteArray, JClass, JLongArray, JObject, JObjectArray, JString};
use jni::sys::{jboolean, jint, jlong};
use jni::{jni_mangle, Env, EnvUnowned};
use strata::{Range, ReadOptions, WriteOptions};

use crate::batch;
use crate::bytes;
use crate::database::{Database, ReadFlags};
use crate::errors::{run, Error};
use crate::handle;
use crate::iterator::IteratorHandle;
use crate::snapshot::{self, SnapshotHandle};
use crate::strings;

/// The database behind `handle`.
pub(crate) fn database<'a>(handle: jlong) -> Result<&'a Database, Error> {
    // SAFETY: `handle` comes from the `StrataDB` whose instance method is running (the handle
    // contract in `handle`).
    unsafe { handle::borrow::<Database>(handle) }
}

/// Read options from `ReadOptions`' fields; `snapshot` is a `StrataSnapshot` handle or 0.
#[inline]
pub(crate) fn read_flags(
    db: &Database,
    snapshot: jlong,
    verify_checksums: jboolean,
    fill_cache: jboolean,
) -> Result<ReadFlags, Error> {
    Ok(ReadFlags {
        verify_checksums,
        fill_cache,
        // SAFETY: Java keeps the snapshot reachable during the call (`reachabilityFence`).
        snapshot: unsafe { snapshot::for_read(snapshot, db) }?,
    })
}

#[jni_mangle("io.github.stratakv.StrataDB")]
pub fn write<'local>(
    mut env: EnvUnowned<'local>,
    _this: JObject<'local>,
    handle: jlong,
    records: JByteArray<'local>,
    length: jint,
    sync: jboolean,
) {
    run(&mut env, |env| {
        let db = database(handle)?;
        let records = bytes::required(env, &records, "a write batch's records")?;
        let length = usize::try_from(length)
            .ok()
            .filter(|&length| length <= records.len())
            .ok_or_else(|| Error::Misuse(format!("{length} bytes of batch records")))?;
        let batch = batch::decode(&records[..length])?;
        db.call(|engine| engine.write_opt(&WriteOptions { sync }, &batch))
    })
}

#[jni_mangle("io.github.stratakv.StrataDB")]
pub fn snapshot<'local>(
    mut env: EnvUnowned<'local>,
    _this: JObject<'local>,
    handle: jlong,
) -> jlong {
    run(&mut env, |_| {
        let db = database(handle)?;
        let snapshot = db.call(|engine| Ok(engine.snapshot()))?;
        // SAFETY: as for `database`.
        let shared = unsafe { handle::share::<Database>(handle) }?;
        Ok(handle::into_handle(Arc::new(SnapshotHandle::new(
            shared, snapshot,
        ))))
    })
}

#[jni_mangle("io.github.stratakv.StrataDB")]
pub fn iterator<'local>(
    mut env: EnvUnowned<'local>,
    _this: JObject<'local>,
    handle: jlong,
    snapshot: jlong,
    verify_checksums: jboolean,
    fill_cache: jboolean,
) -> jlong {
    run(&mut env, |_| {
        let flags = (snapshot, verify_checksums, fill_cache);
        iterator_handle(handle, flags, strata::DB::iter_opt)
    })
}

#[jni_mangle("io.github.stratakv.StrataDB")]
pub fn key_iterator<'local>(
    mut env: EnvUnowned<'local>,
    _this: JObject<'local>,
    handle: jlong,
    snapshot: jlong,
    verify_checksums: jboolean,
    fill_cache: jboolean,
) -> jlong {
    run(&mut env, |_| {
        let flags = (snapshot, verify_checksums, fill_cache);
        iterator_handle(handle, flags, strata::DB::iter_keys_opt)
    })
}

/// The handle of a new Java iterator over the database behind `handle`: the engine iterator
/// `make` makes with the call's read options (`flags`: snapshot handle, `verifyChecksums`,
/// `fillCache`).
fn iterator_handle<I: Send + 'static>(
    handle: jlong,
    (snapshot, verify_checksums, fill_cache): (jlong, jboolean, jboolean),
    make: impl FnOnce(&strata::DB, &ReadOptions) -> I,
) -> Result<jlong, Error> {
    let db = database(handle)?;
    let options = db.read_options(read_flags(db, snapshot, verify_checksums, fill_cache)?);
    let cursor = db.new_cursor(|engine| make(engine, &options))?;
    // SAFETY: as for `database`.
    let shared = unsafe { handle::share::<Database>(handle) }?;
    Ok(handle::into_handle(Arc::new(IteratorHandle::new(
        shared, cursor,
    ))))
}

/// Owned key ranges: `(start, limit)` pairs.
type KeyRanges = Vec<(Vec<u8>, Vec<u8>)>;

/// The key ranges of `bounds` (`{start0, limit0, start1, limit1, ...}`).
fn ranges(
    env: &mut Env<'_>,
    bounds: &JObjectArray<'_, JByteArray<'_>>,
) -> Result<KeyRanges, Error> {
    if bounds.is_null() {
        return Err(Error::Misuse("ranges must not be null".to_owned()));
    }
    let count = bounds.len(env)? / 2;
    (0..count)
        .map(|i| {
            let start = bounds.get_element(env, 2 * i)?;
            let limit = bounds.get_element(env, 2 * i + 1)?;
            Ok((
                bytes::required(env, &start, "a range's start")?,
                bytes::required(env, &limit, "a range's limit")?,
            ))
        })
        .collect()
}

#[jni_mangle("io.github.stratakv.StrataDB")]
pub fn approximate_sizes<'local>(
    mut env: EnvUnowned<'local>,
    _this: JObject<'local>,
    handle: jlong,
    bounds: JObjectArray<'local, JByteArray<'local>>,
) -> JLongArray<'local> {
    run(&mut env, |env| {
        let db = database(handle)?;
        let ranges = ranges(env, &bounds)?;
        let ranges: Vec<Range> = ranges
            .iter()
            .map(|(start, limit)| Range { start, limit })
            .collect();
        let sizes = db.call(|engine| Ok(engine.approximate_sizes(&ranges)))?;
        let sizes: Vec<jlong> = sizes
            .into_iter()
            .map(|size| jlong::try_from(size).unwrap_or(jlong::MAX))
            .collect();
        let array = JLongArray::new(env, sizes.len())?;
        array.set_region(env, 0, &sizes)?;
        Ok(array)
    })
}

#[jni_mangle("io.github.stratakv.StrataDB")]
pub fn property<'local>(
    mut env: EnvUnowned<'local>,
    _this: JObject<'local>,
    handle: jlong,
    name: JString<'local>,
) -> JString<'local> {
    run(&mut env, |env| {
        let db = database(handle)?;
        let name = strings::required(env, &name, "the property name")?;
        match db.call(|engine| Ok(engine.property(&name)))? {
            Some(value) => Ok(JString::from_str(env, value)?),
            None => Ok(JString::null()),
        }
    })
}

/// The length of `key`'s value, or -1 when absent, answered from the tree alone (`DB::head`:
/// a value kept in a value file is not read).
#[jni_mangle("io.github.stratakv.StrataDB")]
pub fn head<'local>(
    mut env: EnvUnowned<'local>,
    _this: JObject<'local>,
    handle: jlong,
    key: JByteArray<'local>,
    snapshot: jlong,
    verify_checksums: jboolean,
    fill_cache: jboolean,
) -> jlong {
    run(&mut env, |env| {
        let db = database(handle)?;
        let key = bytes::required(env, &key, "key")?;
        let options = db.read_options(read_flags(db, snapshot, verify_checksums, fill_cache)?);
        let length = db.call(|engine| engine.head_opt(&options, &key))?;
        Ok(length.map_or(-1, |length| i64::try_from(length).unwrap_or(i64::MAX)))
    })
}

#[jni_mangle("io.github.stratakv.StrataDB")]
pub fn compact_range<'local>(
    mut env: EnvUnowned<'local>,
    _this: JObject<'local>,
    handle: jlong,
    begin: JByteArray<'local>,
    end: JByteArray<'local>,
) {
    run(&mut env, |env| {
        let db = database(handle)?;
        let begin = bytes::optional(env, &begin)?;
        let end = bytes::optional(env, &end)?;
        db.call(|engine| engine.compact_range(begin.as_deref(), end.as_deref()))
    })
}

#[jni_mangle("io.github.stratakv.StrataDB")]
pub fn suspend_compactions<'local>(
    mut env: EnvUnowned<'local>,
    _this: JObject<'local>,
    handle: jlong,
) {
    run(&mut env, |_| {
        database(handle)?.call(|engine| {
            engine.suspend_compactions();
            Ok(())
        })
    })
}

#[jni_mangle("io.github.stratakv.StrataDB")]
pub fn resume_compactions<'local>(
    mut env: EnvUnowned<'local>,
    _this: JObject<'local>,
    handle: jlong,
) {
    run(&mut env, |_| {
        database(handle)?.call_even_while_closing(true, |engine| {
            engine.resume_compactions();
            Ok(())
        })
    })
}

#[jni_mangle("io.github.stratakv.StrataDB")]
pub fn is_read_only<'local>(
    mut env: EnvUnowned<'local>,
    _this: JObject<'local>,
    handle: jlong,
) -> jboolean {
    run(&mut env, |_| {
        database(handle)?.call(|engine| Ok(engine.is_read_only()))
    })
}

#[jni_mangle("io.github.stratakv.StrataDB")]
pub fn refresh<'local>(mut env: EnvUnowned<'local>, _this: JObject<'local>, handle: jlong) {
    run(&mut env, |_| {
        database(handle)?.call(|engine| engine.refresh())
    })
}

#[jni_mangle("io.github.stratakv.StrataDB")]
pub fn checkpoint<'local>(
    mut env: EnvUnowned<'local>,
    _this: JObject<'local>,
    handle: jlong,
    dir: JString<'local>,
) {
    run(&mut env, |env| {
        let db = database(handle)?;
        let dir = strings::required(env, &dir, "the checkpoint directory")?;
        db.call(|engine| engine.checkpoint(&dir))
    })
}

#[jni_mangle("io.github.stratakv.StrataDB")]
pub fn close<'local>(mut env: EnvUnowned<'local>, _this: JObject<'local>, handle: jlong) {
    run(&mut env, |_| {
        database(handle)?.close();
        Ok(())
    })
}

#[jni_mangle("io.github.stratakv.StrataDB")]
pub fn dispose<'local>(mut env: EnvUnowned<'local>, _class: JClass<'local>, handle: jlong) {
    handle::dispose::<Database>(&mut env, handle)
}
