//! How failures reach JavaScript: every error the binding raises is an `Error` whose `code` is
//! one of abstract-level's codes, so `err.code === 'LEVEL_CORRUPTION'` works as with
//! classic-level.
//!
//! | engine error                                   | code                        |
//! |------------------------------------------------|-----------------------------|
//! | `Corruption`                                   | `LEVEL_CORRUPTION`          |
//! | `Io` taking the `LOCK` (another process or instance holds it) | `LEVEL_LOCKED` |
//! | any other `Io`                                 | `LEVEL_IO_ERROR`            |
//! | `InvalidArgument` from a write (a batch of 4 GiB or more) | `LEVEL_INVALID_VALUE` |
//! | `InvalidArgument` elsewhere (open: "does not exist", "exists") | `LEVEL_INVALID_ARGUMENT` |
//! | `NotSupported`                                 | `LEVEL_NOT_SUPPORTED`       |
//!
//! The binding's own failures: a closed database `LEVEL_DATABASE_NOT_OPEN`, a closed iterator
//! `LEVEL_ITERATOR_NOT_OPEN` (a seek while it reads: `LEVEL_ITERATOR_BUSY`), a closed or foreign snapshot `LEVEL_SNAPSHOT_NOT_OPEN`, a written
//! batch `LEVEL_BATCH_NOT_OPEN`, an aborted iterator read `LEVEL_ABORTED`, a bad option value
//! `LEVEL_INVALID_ARGUMENT`. Arguments of the wrong JavaScript type are refused by Node-API's
//! conversions before any of this code runs.

use std::any::Any;
use std::io;

use napi::bindgen_prelude::{Env, JsError};

/// An abstract-level error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    DatabaseNotOpen,
    IteratorNotOpen,
    IteratorBusy,
    SnapshotNotOpen,
    BatchNotOpen,
    Locked,
    Corruption,
    IoError,
    InvalidValue,
    InvalidArgument,
    NotSupported,
    Aborted,
}

impl AsRef<str> for Code {
    fn as_ref(&self) -> &str {
        match self {
            Code::DatabaseNotOpen => "LEVEL_DATABASE_NOT_OPEN",
            Code::IteratorNotOpen => "LEVEL_ITERATOR_NOT_OPEN",
            Code::IteratorBusy => "LEVEL_ITERATOR_BUSY",
            Code::SnapshotNotOpen => "LEVEL_SNAPSHOT_NOT_OPEN",
            Code::BatchNotOpen => "LEVEL_BATCH_NOT_OPEN",
            Code::Locked => "LEVEL_LOCKED",
            Code::Corruption => "LEVEL_CORRUPTION",
            Code::IoError => "LEVEL_IO_ERROR",
            Code::InvalidValue => "LEVEL_INVALID_VALUE",
            Code::InvalidArgument => "LEVEL_INVALID_ARGUMENT",
            Code::NotSupported => "LEVEL_NOT_SUPPORTED",
            Code::Aborted => "LEVEL_ABORTED",
        }
    }
}

/// What the engine was doing when it failed; decides the code of an `InvalidArgument`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    Open,
    Write,
    Other,
}

/// A failure on its way to JavaScript: a code and a message.
#[derive(Debug)]
pub struct Failure {
    pub(crate) code: Code,
    pub(crate) message: String,
}

/// What the binding's functions return.
pub(crate) type Outcome<T> = Result<T, Failure>;

impl Failure {
    pub(crate) fn new(code: Code, message: impl Into<String>) -> Failure {
        Failure {
            code,
            message: message.into(),
        }
    }

    /// The failure for an engine error met at `stage`.
    pub(crate) fn engine(error: strata::Error, stage: Stage) -> Failure {
        let code = match &error {
            strata::Error::Corruption(_) => Code::Corruption,
            strata::Error::Io { context, source } => {
                if stage == Stage::Open && is_lock_conflict(context, source) {
                    Code::Locked
                } else {
                    Code::IoError
                }
            }
            strata::Error::InvalidArgument(_) if stage == Stage::Write => Code::InvalidValue,
            strata::Error::InvalidArgument(_) => Code::InvalidArgument,
            strata::Error::NotSupported(_) => Code::NotSupported,
            _ => Code::IoError,
        };
        Failure::new(code, error.to_string())
    }

    /// The failure reported for a panic caught at the boundary (a bug, never expected).
    pub(crate) fn panic(payload: Box<dyn Any + Send>) -> Failure {
        let text = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_owned());
        Failure::new(Code::IoError, format!("internal error: {text}"))
    }

    pub(crate) fn database_not_open() -> Failure {
        Failure::new(Code::DatabaseNotOpen, "Database is not open")
    }

    pub(crate) fn iterator_not_open() -> Failure {
        Failure::new(Code::IteratorNotOpen, "Iterator is not open")
    }

    /// The JavaScript error for this failure, as a napi error that rejects a promise with it.
    pub(crate) fn into_js(self, env: &Env) -> napi::Error {
        let error = napi::Error::new(self.code, self.message);
        napi::Error::from(JsError::from(error).into_unknown(*env))
    }
}

impl From<Failure> for napi::Error<Code> {
    fn from(failure: Failure) -> Self {
        napi::Error::new(failure.code, failure.message)
    }
}

/// Wraps an engine error met at `stage`: `.map_err(at(Stage::Write))`.
pub(crate) fn at(stage: Stage) -> impl Fn(strata::Error) -> Failure {
    move |error| Failure::engine(error, stage)
}

/// True when taking the `LOCK` failed because someone holds it: another process (the record
/// lock is refused with `EAGAIN`) or another database object of this process. The engine
/// reports both as an I/O error of kind `WouldBlock` whose context names the lock.
fn is_lock_conflict(context: &str, source: &io::Error) -> bool {
    context.starts_with("lock ") && source.kind() == io::ErrorKind::WouldBlock
}
