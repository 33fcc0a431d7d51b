//! `WriteBatch`: updates gathered in memory and applied atomically, as plyvel offers them.
//!
//! As a context manager the batch is written when the `with` block ends, and then cleared. With
//! `transaction=True` an exception in the block discards the batch instead (like `try/else`);
//! otherwise the updates made before the exception are written (like `try/finally`). The
//! exception always propagates. `sync` applies to every write of the batch.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::PyTuple;

use crate::convert::value_bytes;
use crate::handle::Handle;
use crate::range_ops::optional_ttl;

/// A batch of puts and deletes for one database (or one `PrefixedDB`).
///
/// Thread safety: usable from any thread; updates from several threads are applied in the
/// order they took the batch's lock.
#[pyclass(frozen, module = "strata", name = "WriteBatch")]
pub struct PyWriteBatch {
    handle: Arc<Handle>,
    prefix: Option<Vec<u8>>,
    transaction: bool,
    sync: bool,
    batch: Mutex<strata::WriteBatch>,
}

impl PyWriteBatch {
    pub(crate) fn new(
        handle: &Arc<Handle>,
        prefix: Option<Vec<u8>>,
        transaction: bool,
        sync: bool,
    ) -> PyWriteBatch {
        PyWriteBatch {
            handle: Arc::clone(handle),
            prefix,
            transaction,
            sync,
            batch: Mutex::new(strata::WriteBatch::new()),
        }
    }

    fn full_key<'a>(&self, key: &'a [u8]) -> Cow<'a, [u8]> {
        match &self.prefix {
            Some(prefix) => Cow::Owned([prefix.as_slice(), key].concat()),
            None => Cow::Borrowed(key),
        }
    }

    /// Writes `batch` (detached).
    fn commit(&self, py: Python<'_>, batch: strata::WriteBatch) -> PyResult<()> {
        let options = strata::WriteOptions { sync: self.sync };
        self.handle
            .call(py, move |db| db.write_opt(&options, &batch))
    }
}

#[pymethods]
impl PyWriteBatch {
    /// Adds a put of `key` to `value`; with `ttl` (seconds or a `timedelta`), one that expires
    /// that long after the batch is written (needs `expiring_keys=True`).
    #[pyo3(signature = (key, value, *, ttl=None))]
    fn put(
        &self,
        py: Python<'_>,
        key: &[u8],
        value: &Bound<'_, PyAny>,
        #[pyo3(from_py_with = optional_ttl)] ttl: Option<Duration>,
    ) -> PyResult<()> {
        self.handle.check_open()?;
        let value = value_bytes(value)?;
        let key = self.full_key(key);
        let mut batch = self.batch.lock_py_attached(py);
        match ttl {
            Some(ttl) => batch.put_with_ttl(&key, &value, ttl),
            None => batch.put(&key, &value),
        }
        Ok(())
    }

    /// Adds a deletion of every key in `[start, stop)` (needs `range_deletes=True`; checked
    /// when the batch is written).
    fn delete_range(&self, py: Python<'_>, start: &[u8], stop: &[u8]) -> PyResult<()> {
        self.handle.check_open()?;
        let (start, stop) = (self.full_key(start), self.full_key(stop));
        self.batch.lock_py_attached(py).delete_range(&start, &stop);
        Ok(())
    }

    /// Adds a deletion of `key`.
    fn delete(&self, py: Python<'_>, key: &[u8]) -> PyResult<()> {
        self.handle.check_open()?;
        let key = self.full_key(key);
        self.batch.lock_py_attached(py).delete(&key);
        Ok(())
    }

    /// Discards every update.
    fn clear(&self, py: Python<'_>) -> PyResult<()> {
        self.handle.check_open()?;
        self.batch.lock_py_attached(py).clear();
        Ok(())
    }

    /// Applies the updates to the database (the batch keeps them).
    fn write(&self, py: Python<'_>) -> PyResult<()> {
        self.handle.check_open()?;
        let batch = self.batch.lock_py_attached(py).clone();
        self.commit(py, batch)
    }

    /// Adds every update of `source` after this batch's own.
    fn append(&self, py: Python<'_>, source: &Bound<'_, PyWriteBatch>) -> PyResult<()> {
        self.handle.check_open()?;
        let other = source.get().batch.lock_py_attached(py).clone();
        self.batch.lock_py_attached(py).append(&other);
        Ok(())
    }

    /// Size in bytes of the batch as the log will store it.
    fn approximate_size(&self, py: Python<'_>) -> PyResult<usize> {
        self.handle.check_open()?;
        Ok(self.batch.lock_py_attached(py).approximate_size())
    }

    fn __enter__(slf: Bound<'_, Self>) -> PyResult<Bound<'_, Self>> {
        slf.get().handle.check_open()?;
        Ok(slf)
    }

    #[pyo3(signature = (exc_type, *_rest))]
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: &Bound<'_, PyAny>,
        _rest: &Bound<'_, PyTuple>,
    ) -> PyResult<bool> {
        self.handle.check_open()?;
        let batch = std::mem::take(&mut *self.batch.lock_py_attached(py));
        let discard = self.transaction && !exc_type.is_none();
        if !discard {
            self.commit(py, batch)?;
        }
        Ok(false)
    }
}
