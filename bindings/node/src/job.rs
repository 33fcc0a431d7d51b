//! Work that runs on libuv's thread pool and settles a promise: the one async task type of the
//! binding. Its closure runs off the JavaScript thread with whatever it owns (copied keys, a
//! snapshot, the database handle); its `deliver` function turns the result into JavaScript
//! values on the JavaScript thread. A failure rejects the promise with a coded error (see
//! [`crate::errors`]); a panic is caught and reported the same way instead of unwinding into
//! libuv.

use std::panic::{catch_unwind, AssertUnwindSafe};

use napi::bindgen_prelude::{AsyncTask, Env, ToNapiValue, Unknown};
use napi::ScopedTask;

use crate::errors::{Failure, Outcome};

type Work<T> = Box<dyn FnOnce() -> Outcome<T> + Send>;
type Deliver<T> = for<'a> fn(&'a Env, T) -> napi::Result<Unknown<'a>>;

/// One async task: `work` off the JavaScript thread, then `deliver` on it.
pub struct Job<T: Send + 'static> {
    work: Option<Work<T>>,
    deliver: Deliver<T>,
}

/// What the binding's async methods return to JavaScript: a promise.
pub type Promise<T> = AsyncTask<Job<T>>;

/// A promise settled by `work`'s result, converted by `deliver`.
pub(crate) fn spawn<T: Send + 'static>(
    work: impl FnOnce() -> Outcome<T> + Send + 'static,
    deliver: Deliver<T>,
) -> Promise<T> {
    AsyncTask::new(Job {
        work: Some(Box::new(work)),
        deliver,
    })
}

/// A promise for `undefined` once `work` succeeds.
pub(crate) fn spawn_unit(work: impl FnOnce() -> Outcome<()> + Send + 'static) -> Promise<()> {
    spawn(work, |env, ()| ().into_unknown(env))
}

impl<'task, T: Send + 'static> ScopedTask<'task> for Job<T> {
    type Output = Outcome<T>;
    type JsValue = Unknown<'task>;

    fn compute(&mut self) -> napi::Result<Outcome<T>> {
        let Some(work) = self.work.take() else {
            return Err(napi::Error::from_reason("a task ran twice"));
        };
        Ok(catch_unwind(AssertUnwindSafe(work))
            .unwrap_or_else(|payload| Err(Failure::panic(payload))))
    }

    fn resolve(&mut self, env: &'task Env, output: Outcome<T>) -> napi::Result<Unknown<'task>> {
        match output {
            Ok(value) => (self.deliver)(env, value),
            Err(failure) => Err(failure.into_js(env)),
        }
    }
}
