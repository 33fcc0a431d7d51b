//! `StrataDBFactory`'s native methods: open (to write, or read-only beside a writer), destroy and
//! repair a database directory.
//!
//! Open and repair may build tables on the caller's thread, so a Java comparator that throws
//! there panics (see `comparator`); the panic is caught here and reported as the comparator's
//! failure.

use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;

use jni::objects::{JClass, JObject, JString};
use jni::sys::jlong;
use jni::{jni_mangle, EnvUnowned};

use crate::comparator::Failure;
use crate::database::Database;
use crate::errors::{run, Error};
use crate::handle;
use crate::options::{self, OpenOptions};
use crate::strings;

/// Runs an engine call that may meet the comparator's failure as a panic.
fn guarded<T>(
    failure: Option<&Arc<Failure>>,
    call: impl FnOnce() -> strata::Result<T>,
) -> Result<T, Error> {
    let outcome = panic::catch_unwind(AssertUnwindSafe(call));
    if let Some(failure) = failure.filter(|f| f.is_set()) {
        return Err(Error::Comparator(Arc::clone(failure)));
    }
    match outcome {
        Ok(result) => Ok(result?),
        Err(payload) => panic::resume_unwind(payload),
    }
}

#[jni_mangle("io.github.stratakv.StrataDBFactory")]
pub fn open<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    path: JString<'local>,
    options: JObject<'local>,
) -> jlong {
    run(&mut env, |env| {
        let path = strings::required(env, &path, "the path")?;
        let OpenOptions {
            engine,
            verify_checksums,
            comparator_failure,
            read_only,
        } = options::read(env, &options)?;
        let db = guarded(comparator_failure.as_ref(), || {
            if read_only {
                strata::DB::open_read_only(&path, engine)
            } else {
                strata::DB::open(&path, engine)
            }
        })?;
        let database = Database::new(db, comparator_failure, verify_checksums);
        Ok(handle::into_handle(Arc::new(database)))
    })
}

/// The body of `destroy` and `repair`: `call` gets the directory and the options.
fn maintenance<'local>(
    env: &mut EnvUnowned<'local>,
    path: &JString<'local>,
    options: &JObject<'local>,
    call: impl FnOnce(String, OpenOptions) -> Result<(), Error>,
) {
    run(env, |env| {
        let path = strings::required(env, path, "the path")?;
        let options = options::read(env, options)?;
        call(path, options)
    })
}

#[jni_mangle("io.github.stratakv.StrataDBFactory")]
pub fn destroy<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    path: JString<'local>,
    options: JObject<'local>,
) {
    maintenance(&mut env, &path, &options, |path, options| {
        Ok(strata::destroy(&path, &options.engine)?)
    })
}

#[jni_mangle("io.github.stratakv.StrataDBFactory")]
pub fn repair<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    path: JString<'local>,
    options: JObject<'local>,
) {
    maintenance(&mut env, &path, &options, |path, options| {
        let failure = options.comparator_failure.as_ref();
        guarded(failure, || strata::repair(&path, &options.engine))
    })
}
