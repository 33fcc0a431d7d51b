//! How failures reach Java: every native method runs its body through [`run`], which turns an
//! [`Error`] (or a panic) into a thrown `org.iq80.leveldb.DBException` and returns a default
//! value that Java never sees.
//!
//! The exception's message is the engine's own (`corruption: ...`, `I/O error: ...`,
//! `invalid argument: ...`) or says which binding object was misused; a Java comparator that
//! threw is the cause of the exception it leads to. A Java exception already pending (thrown by
//! a Java callback or by a JNI call) propagates as it is.

use std::sync::Arc;

use jni::errors::ErrorPolicy;
use jni::objects::{JString, JThrowable};
use jni::{Env, EnvUnowned};

use crate::comparator::Failure;
use crate::java::DbException;

/// Everything a native method can fail with.
#[derive(Debug)]
pub(crate) enum Error {
    /// The engine failed the operation.
    Engine(strata::Error),
    /// The caller used a closed object or passed something unusable (the message says what).
    Misuse(String),
    /// The database's Java comparator threw; the database refuses every call until reopened.
    Comparator(Arc<Failure>),
    /// A JNI call failed, or Java code called from here threw.
    Jni(jni::errors::Error),
}

impl From<jni::errors::Error> for Error {
    fn from(error: jni::errors::Error) -> Error {
        Error::Jni(error)
    }
}

impl From<strata::Error> for Error {
    fn from(error: strata::Error) -> Error {
        Error::Engine(error)
    }
}

impl Error {
    /// The error for a call on a closed object (`what`: "database", "iterator", ...).
    pub(crate) fn closed(what: &str) -> Error {
        Error::Misuse(format!("the {what} is closed"))
    }

    /// Throws this error as a Java exception, unless one is already pending.
    fn throw(self, env: &mut Env<'_>) -> jni::errors::Result<()> {
        if env.exception_check() {
            return Ok(());
        }
        let (message, cause) = match self {
            Error::Engine(e) => (e.to_string(), None),
            Error::Misuse(message) => (message, None),
            Error::Comparator(failure) => (failure.message(), failure.exception(env)?),
            Error::Jni(jni::errors::Error::CaughtJavaException { exception, .. }) => {
                // Rethrow what Java code threw, as it was.
                let _ = env.throw(&exception);
                return Ok(());
            }
            Error::Jni(e) => (format!("JNI failure in the Strata binding: {e}"), None),
        };
        throw_db_exception(env, &message, cause.as_ref())
    }
}

/// Throws `new DBException(message, cause)`.
fn throw_db_exception(
    env: &mut Env<'_>,
    message: &str,
    cause: Option<&JThrowable<'_>>,
) -> jni::errors::Result<()> {
    let message = JString::from_str(env, message)?;
    let null = JThrowable::null();
    let exception = DbException::new(env, &message, cause.unwrap_or(&null))?;
    // `throw` reports the exception it just raised as an `Err`: that is the expected outcome.
    let _ = env.throw(JThrowable::from(exception));
    Ok(())
}

/// The [`ErrorPolicy`] of every native method: an [`Error`] or a panic becomes a pending
/// `DBException`, and the method returns `T::default()` (null, 0 or false).
pub(crate) struct ThrowDbException;

impl<T: Default> ErrorPolicy<T, Error> for ThrowDbException {
    type Captures<'local: 'native, 'native> = ();

    fn on_error<'local: 'native, 'native>(
        env: &mut Env<'local>,
        _captures: &mut (),
        error: Error,
    ) -> jni::errors::Result<T> {
        error.throw(env)?;
        Ok(T::default())
    }

    fn on_panic<'local: 'native, 'native>(
        env: &mut Env<'local>,
        _captures: &mut (),
        payload: Box<dyn std::any::Any + Send + 'static>,
    ) -> jni::errors::Result<T> {
        let detail = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".to_owned());
        let message = format!("internal error in the Strata binding (a bug): {detail}");
        Error::Misuse(message).throw(env)?;
        Ok(T::default())
    }
}

/// Runs the body of a native method: its error or panic is thrown to Java as a `DBException`.
pub(crate) fn run<'local, T: Default + 'local>(
    env: &mut EnvUnowned<'local>,
    body: impl FnOnce(&mut Env<'local>) -> Result<T, Error>,
) -> T {
    env.with_env(body).resolve::<ThrowDbException>()
}
