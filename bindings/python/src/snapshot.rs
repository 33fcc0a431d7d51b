//! `Snapshot`: a consistent read-only view of the database, as plyvel offers it.
//!
//! While a snapshot is open the engine keeps every entry it can see; `close()` (or `release()`,
//! or leaving its `with` block, or dropping it) lets compactions discard them. Iterators made
//! from a snapshot keep reading it after it is closed.

use std::borrow::Cow;
use std::sync::Arc;

use parking_lot::Mutex;
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use strata::ReadOptions;

use crate::convert::flag;
use crate::errors::snapshot_closed;
use crate::handle::{drop_detached, Handle};
use crate::iterator::{IterArgs, PyIterator, PyRawIterator};
use crate::range_ops;

/// A point-in-time view of a database (or of a `PrefixedDB`'s part of it).
///
/// Thread safety: usable from any thread.
#[pyclass(frozen, module = "strata", name = "Snapshot")]
pub struct PySnapshot {
    handle: Arc<Handle>,
    prefix: Option<Vec<u8>>,
    snapshot: Mutex<Option<strata::Snapshot>>,
}

impl PySnapshot {
    /// Takes a snapshot of `handle` now (detached: it takes the engine's lock).
    pub(crate) fn new(
        py: Python<'_>,
        handle: &Arc<Handle>,
        prefix: Option<Vec<u8>>,
    ) -> PyResult<PySnapshot> {
        let snapshot = handle
            .with_db(py, |db| db.snapshot())
            .map_err(|_| snapshot_closed())?;
        Ok(PySnapshot {
            handle: Arc::clone(handle),
            prefix,
            snapshot: Mutex::new(Some(snapshot)),
        })
    }

    /// A read's error `e`, or the snapshot-closed `RuntimeError` when the database closed.
    fn closed_or(&self, e: PyErr) -> PyErr {
        if self.handle.is_closed() {
            snapshot_closed()
        } else {
            e
        }
    }

    /// The engine snapshot; `RuntimeError` once it or its database is closed.
    fn pinned(&self, py: Python<'_>) -> PyResult<strata::Snapshot> {
        if self.handle.is_closed() {
            return Err(snapshot_closed());
        }
        self.snapshot
            .lock_py_attached(py)
            .clone()
            .ok_or_else(snapshot_closed)
    }
}

impl PySnapshot {
    /// Read options at this snapshot.
    fn read_options(
        &self,
        py: Python<'_>,
        verify_checksums: bool,
        fill_cache: bool,
    ) -> PyResult<ReadOptions> {
        Ok(ReadOptions {
            verify_checksums,
            fill_cache,
            snapshot: Some(self.pinned(py)?),
            ..ReadOptions::default()
        })
    }

    /// `key` with the prefix of a prefixed database's snapshot in front.
    fn full_key<'k>(&self, key: &'k [u8]) -> Cow<'k, [u8]> {
        match &self.prefix {
            Some(prefix) => Cow::Owned([prefix.as_slice(), key].concat()),
            None => Cow::Borrowed(key),
        }
    }
}

impl Drop for PySnapshot {
    fn drop(&mut self) {
        if let Some(snapshot) = self.snapshot.get_mut().take() {
            drop_detached(snapshot);
        }
    }
}

#[pymethods]
impl PySnapshot {
    /// The value of `key` as of the snapshot, or `default`.
    #[pyo3(signature = (key, default=None, *, verify_checksums=false, fill_cache=true))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        key: &[u8],
        default: Option<Bound<'py, PyAny>>,
        #[pyo3(from_py_with = flag)] verify_checksums: bool,
        #[pyo3(from_py_with = flag)] fill_cache: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let options = self.read_options(py, verify_checksums, fill_cache)?;
        let key = self.full_key(key);
        let value = self
            .handle
            .call(py, move |db| db.get_opt(&options, &key))
            .map_err(|e| self.closed_or(e))?;
        Ok(match value {
            Some(value) => PyBytes::new(py, &value).into_any(),
            None => default.unwrap_or_else(|| py.None().into_bound(py)),
        })
    }

    /// The length of `key`'s value as of the snapshot, or `None`; see `DB.head`.
    #[pyo3(signature = (key, *, verify_checksums=false, fill_cache=true))]
    fn head(
        &self,
        py: Python<'_>,
        key: &[u8],
        #[pyo3(from_py_with = flag)] verify_checksums: bool,
        #[pyo3(from_py_with = flag)] fill_cache: bool,
    ) -> PyResult<Option<u64>> {
        let options = self.read_options(py, verify_checksums, fill_cache)?;
        let key = self.full_key(key);
        self.handle
            .call(py, move |db| db.head_opt(&options, &key))
            .map_err(|e| self.closed_or(e))
    }

    /// The values of `keys` as of the snapshot; see `DB.get_many`.
    #[pyo3(signature = (keys, *, verify_checksums=false, fill_cache=true))]
    fn get_many<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
        #[pyo3(from_py_with = flag)] verify_checksums: bool,
        #[pyo3(from_py_with = flag)] fill_cache: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let options = self.read_options(py, verify_checksums, fill_cache)?;
        let keys = range_ops::keys_of(keys, self.prefix.as_deref())?;
        range_ops::get_many(py, &self.handle, options, keys).map_err(|e| self.closed_or(e))
    }

    /// An `Iterator` over the snapshot; see `DB.iterator`.
    #[pyo3(signature = (**kwargs))]
    fn iterator(&self, py: Python<'_>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<PyIterator> {
        let snapshot = self.pinned(py)?;
        let args = IterArgs::from_kwargs(kwargs)?;
        PyIterator::new(
            py,
            &self.handle,
            self.prefix.as_deref(),
            args,
            Some(snapshot),
        )
    }

    /// A `RawIterator` over the snapshot (over the whole database, prefix or not, as in plyvel).
    #[pyo3(signature = (*, verify_checksums=false, fill_cache=true))]
    fn raw_iterator(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = flag)] verify_checksums: bool,
        #[pyo3(from_py_with = flag)] fill_cache: bool,
    ) -> PyResult<PyRawIterator> {
        let snapshot = self.pinned(py)?;
        PyRawIterator::new(
            py,
            &self.handle,
            verify_checksums,
            fill_cache,
            Some(snapshot),
        )
    }

    fn __iter__(&self, py: Python<'_>) -> PyResult<PyIterator> {
        let snapshot = self.pinned(py)?;
        PyIterator::new(
            py,
            &self.handle,
            self.prefix.as_deref(),
            IterArgs::all(),
            Some(snapshot),
        )
    }

    /// Releases the snapshot. Idempotent.
    fn close(&self, py: Python<'_>) {
        let snapshot = self.snapshot.lock_py_attached(py).take();
        py.detach(move || drop(snapshot));
    }

    /// The same as `close()` (LevelDB's name for it).
    fn release(&self, py: Python<'_>) {
        self.close(py)
    }

    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, PyTuple>) -> bool {
        self.close(py);
        false
    }
}
