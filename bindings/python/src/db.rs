//! `DB` and `PrefixedDB`: plyvel's database objects over the engine, and the module functions
//! `repair_db` and `destroy_db`.
//!
//! Keys are `bytes` (`TypeError` otherwise), values any bytes-like object; reads return
//! `bytes`. Every method raises `RuntimeError` once the database is closed. Every call that
//! reaches the engine releases the GIL.

use std::sync::Arc;
use std::time::Duration;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use strata::{Range, ReadOptions, WriteOptions};

use crate::batch::PyWriteBatch;
use crate::convert::{flag, fs_path, optional_truth, value_bytes};
use crate::errors::to_py;
use crate::handle::Handle;
use crate::iterator::{IterArgs, PyIterator, PyRawIterator};
use crate::options::{Compression, OpenArgs};
use crate::range_ops::{self, optional_ttl};
use crate::snapshot::PySnapshot;

/// The value of `key` (full key, prefix included) through `handle`, or `default`.
fn get_value<'py>(
    py: Python<'py>,
    handle: &Handle,
    key: &[u8],
    default: Option<Bound<'py, PyAny>>,
    verify_checksums: bool,
    fill_cache: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let options = ReadOptions {
        verify_checksums,
        fill_cache,
        ..ReadOptions::default()
    };
    let value = handle.call(py, move |db| db.get_opt(&options, key))?;
    Ok(match value {
        Some(value) => PyBytes::new(py, &value).into_any(),
        None => default.unwrap_or_else(|| py.None().into_bound(py)),
    })
}

/// Sets `key` (full key) to `value` through `handle`, for `ttl` if given.
fn put_value(
    py: Python<'_>,
    handle: &Handle,
    key: &[u8],
    value: &Bound<'_, PyAny>,
    sync: bool,
    ttl: Option<Duration>,
) -> PyResult<()> {
    let value = value_bytes(value)?;
    let options = WriteOptions { sync };
    match ttl {
        Some(ttl) => handle.call(py, |db| db.put_with_ttl_opt(&options, key, &value, ttl)),
        None => handle.call(py, |db| db.put_opt(&options, key, &value)),
    }
}

/// Deletes `key` (full key) through `handle`.
fn delete_key(py: Python<'_>, handle: &Handle, key: &[u8], sync: bool) -> PyResult<()> {
    let options = WriteOptions { sync };
    handle.call(py, |db| db.delete_opt(&options, key))
}

/// A LevelDB database, opened in a directory.
///
/// Thread safety: share it between threads freely; every engine call releases the GIL, so
/// threads read and write in parallel. `close()` waits for calls in flight.
#[pyclass(frozen, module = "strata", name = "DB")]
pub struct PyDB {
    name: Py<PyAny>,
    handle: Arc<Handle>,
}

#[pymethods]
impl PyDB {
    /// Opens (or with `create_if_missing`, creates) the database in directory `name`.
    ///
    /// With `read_only=True` the database is opened to read it beside the process (Strata or
    /// LevelDB, plyvel included) that may have it open and be writing: no LOCK is taken and
    /// nothing is written, so it also works on a read-only directory. It shows the state at
    /// open until `refresh()`; writes raise `strata.Error`; `create_if_missing` and
    /// `error_if_exists` do not apply.
    #[new]
    #[pyo3(signature = (name, *, create_if_missing=false, error_if_exists=false,
        paranoid_checks=None, write_buffer_size=None, max_open_files=None, lru_cache_size=None,
        block_size=None, block_restart_interval=None, max_file_size=None,
        compression=Compression::SNAPPY, bloom_filter_bits=0, comparator=None,
        comparator_name=None, read_only=false, range_deletes=false, expiring_keys=false,
        value_separation=None))]
    #[allow(clippy::too_many_arguments)]
    fn new<'py>(
        py: Python<'py>,
        name: Bound<'py, PyAny>,
        #[pyo3(from_py_with = flag)] create_if_missing: bool,
        #[pyo3(from_py_with = flag)] error_if_exists: bool,
        #[pyo3(from_py_with = optional_truth)] paranoid_checks: Option<bool>,
        write_buffer_size: Option<usize>,
        max_open_files: Option<usize>,
        lru_cache_size: Option<usize>,
        block_size: Option<usize>,
        block_restart_interval: Option<usize>,
        max_file_size: Option<usize>,
        compression: Compression,
        bloom_filter_bits: i64,
        comparator: Option<Bound<'py, PyAny>>,
        comparator_name: Option<Bound<'py, PyAny>>,
        read_only: bool,
        range_deletes: bool,
        expiring_keys: bool,
        value_separation: Option<usize>,
    ) -> PyResult<PyDB> {
        let path = fs_path(&name)?;
        let bytewise = comparator.is_none();
        let args = OpenArgs {
            create_if_missing,
            error_if_exists,
            paranoid_checks,
            write_buffer_size,
            max_open_files,
            lru_cache_size,
            block_size,
            block_restart_interval,
            max_file_size,
            compression,
            bloom_filter_bits,
            comparator,
            comparator_name,
        };
        let options = args.to_options()?;
        // Separated values are compressed as table blocks are (`compression`).
        let options = strata::Options {
            range_deletes,
            expiring_keys,
            value_separation: value_separation.filter(|&size| size > 0).map(|size| {
                strata::ValueSeparation::new(size).with_compression(options.compression)
            }),
            ..options
        };
        let handle = Handle::open(py, path, options, bytewise, read_only)?;
        Ok(PyDB {
            name: name.unbind(),
            handle: Arc::new(handle),
        })
    }

    /// The directory name the database was opened with.
    #[getter]
    fn name(&self, py: Python<'_>) -> Py<PyAny> {
        self.name.clone_ref(py)
    }

    /// True once `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.handle.is_closed()
    }

    /// True when the database was opened with `read_only=True`.
    #[getter]
    fn read_only(&self, py: Python<'_>) -> PyResult<bool> {
        self.handle.with_db(py, |db| db.is_read_only())
    }

    /// Moves a read-only database to its writer's latest state, reading only what is new:
    /// every write the writer acknowledged before the call is visible after it. Iterators and
    /// snapshots made before keep the state they were made in. Does nothing on a database
    /// opened to write.
    fn refresh(&self, py: Python<'_>) -> PyResult<()> {
        self.handle.call(py, |db| db.refresh())
    }

    /// Copies the database as it is now into the directory `path`, which must not exist,
    /// while writes go on: hard links to its tables (copies across file systems), a fresh
    /// manifest and the live logs so far, all synced. Strata and LevelDB (plyvel) open the
    /// copy with exactly that moment's data. On a read-only database, the copy holds what it
    /// sees.
    fn checkpoint(&self, py: Python<'_>, path: Bound<'_, PyAny>) -> PyResult<()> {
        let path = fs_path(&path)?;
        self.handle.call(py, move |db| db.checkpoint(&path))
    }

    /// Closes the database: waits for calls in flight, closes every iterator of it, releases
    /// the files and the lock. Idempotent.
    fn close(&self, py: Python<'_>) {
        self.handle.close(py)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "<strata.DB with name {}{}>",
            self.name.bind(py).repr()?,
            if self.handle.is_closed() {
                " (closed)"
            } else {
                ""
            }
        ))
    }

    /// The value of `key`, or `default` when it is absent.
    #[pyo3(signature = (key, default=None, *, verify_checksums=false, fill_cache=true))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        key: &[u8],
        default: Option<Bound<'py, PyAny>>,
        #[pyo3(from_py_with = flag)] verify_checksums: bool,
        #[pyo3(from_py_with = flag)] fill_cache: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        get_value(py, &self.handle, key, default, verify_checksums, fill_cache)
    }

    /// The length of `key`'s value, or `None` when it has none — answered from the tree alone:
    /// with `value_separation` a value kept in a value file is not read.
    #[pyo3(signature = (key, *, verify_checksums=false, fill_cache=true))]
    fn head(
        &self,
        py: Python<'_>,
        key: &[u8],
        #[pyo3(from_py_with = flag)] verify_checksums: bool,
        #[pyo3(from_py_with = flag)] fill_cache: bool,
    ) -> PyResult<Option<u64>> {
        let options = ReadOptions {
            verify_checksums,
            fill_cache,
            ..ReadOptions::default()
        };
        self.handle.call(py, move |db| db.head_opt(&options, key))
    }

    /// Sets `key` to `value`; `sync` waits until the write is on disk. With `ttl` (seconds,
    /// or a `timedelta`; needs `expiring_keys=True`) no read returns it once that time has
    /// passed.
    #[pyo3(signature = (key, value, *, sync=false, ttl=None))]
    fn put(
        &self,
        py: Python<'_>,
        key: &[u8],
        value: &Bound<'_, PyAny>,
        #[pyo3(from_py_with = flag)] sync: bool,
        #[pyo3(from_py_with = optional_ttl)] ttl: Option<Duration>,
    ) -> PyResult<()> {
        put_value(py, &self.handle, key, value, sync, ttl)
    }

    /// The values of `keys` (an iterable of `bytes`), `None` for each one absent, in their
    /// order, all read at one moment: faster than a `get` per key.
    #[pyo3(signature = (keys, *, verify_checksums=false, fill_cache=true))]
    fn get_many<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
        #[pyo3(from_py_with = flag)] verify_checksums: bool,
        #[pyo3(from_py_with = flag)] fill_cache: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let options = ReadOptions {
            verify_checksums,
            fill_cache,
            ..ReadOptions::default()
        };
        range_ops::get_many(py, &self.handle, options, range_ops::keys_of(keys, None)?)
    }

    /// Deletes every key `k` with `start <= k < stop` in one write, whatever the range holds
    /// (needs `range_deletes=True`, an extension LevelDB cannot read).
    #[pyo3(signature = (start, stop, *, sync=false))]
    fn delete_range(
        &self,
        py: Python<'_>,
        start: &[u8],
        stop: &[u8],
        #[pyo3(from_py_with = flag)] sync: bool,
    ) -> PyResult<()> {
        let options = WriteOptions { sync };
        self.handle
            .call(py, |db| db.delete_range_opt(&options, start, stop))
    }

    /// Deletes the keys of `[start, stop)` one by one in bounded batches (any database, not
    /// atomic as a whole); returns how many it deleted.
    #[pyo3(signature = (start, stop, *, sync=false))]
    fn clear_range(
        &self,
        py: Python<'_>,
        start: &[u8],
        stop: &[u8],
        #[pyo3(from_py_with = flag)] sync: bool,
    ) -> PyResult<u64> {
        let options = WriteOptions { sync };
        self.handle
            .call(py, |db| db.clear_range_opt(&options, start, stop))
    }

    /// Removes `key` (not an error when absent).
    #[pyo3(signature = (key, *, sync=false))]
    fn delete(
        &self,
        py: Python<'_>,
        key: &[u8],
        #[pyo3(from_py_with = flag)] sync: bool,
    ) -> PyResult<()> {
        delete_key(py, &self.handle, key, sync)
    }

    /// A new `WriteBatch` for this database.
    #[pyo3(signature = (*, transaction=false, sync=false))]
    fn write_batch(
        &self,
        #[pyo3(from_py_with = flag)] transaction: bool,
        #[pyo3(from_py_with = flag)] sync: bool,
    ) -> PyResult<PyWriteBatch> {
        self.handle.check_open()?;
        Ok(PyWriteBatch::new(&self.handle, None, transaction, sync))
    }

    fn __iter__(&self, py: Python<'_>) -> PyResult<PyIterator> {
        self.handle.check_open()?;
        PyIterator::new(py, &self.handle, None, IterArgs::all(), None)
    }

    /// An `Iterator` over a range of the database.
    #[pyo3(signature = (**kwargs))]
    fn iterator(&self, py: Python<'_>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<PyIterator> {
        let args = IterArgs::from_kwargs(kwargs)?;
        PyIterator::new(py, &self.handle, None, args, None)
    }

    /// A `RawIterator` (LevelDB's cursor interface) over the database.
    #[pyo3(signature = (*, verify_checksums=false, fill_cache=true))]
    fn raw_iterator(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = flag)] verify_checksums: bool,
        #[pyo3(from_py_with = flag)] fill_cache: bool,
    ) -> PyResult<PyRawIterator> {
        PyRawIterator::new(py, &self.handle, verify_checksums, fill_cache, None)
    }

    /// A consistent read-only view of the database as it is now.
    fn snapshot(&self, py: Python<'_>) -> PyResult<PySnapshot> {
        PySnapshot::new(py, &self.handle, None)
    }

    /// The value of a property (`b'leveldb.stats'`, `b'leveldb.num-files-at-level0'`,
    /// `b'leveldb.sstables'`, `b'leveldb.approximate-memory-usage'`), or `None`.
    fn get_property<'py>(
        &self,
        py: Python<'py>,
        name: &[u8],
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let Ok(name) = std::str::from_utf8(name) else {
            self.handle.check_open()?;
            return Ok(None);
        };
        let value = self.handle.with_db(py, |db| db.property(name))?;
        Ok(value.map(|v| PyBytes::new(py, v.as_bytes())))
    }

    /// Compacts the keys in `[start, stop]` (`None`: unbounded) down the levels.
    #[pyo3(signature = (*, start=None, stop=None))]
    fn compact_range(
        &self,
        py: Python<'_>,
        start: Option<&[u8]>,
        stop: Option<&[u8]>,
    ) -> PyResult<()> {
        self.handle.call(py, |db| db.compact_range(start, stop))
    }

    /// Approximate file-system bytes used by keys in `[start, stop)`.
    fn approximate_size(&self, py: Python<'_>, start: &[u8], stop: &[u8]) -> PyResult<u64> {
        let range = [Range { start, limit: stop }];
        let sizes = self.handle.with_db(py, |db| db.approximate_sizes(&range))?;
        Ok(sizes.first().copied().unwrap_or(0))
    }

    /// Approximate file-system bytes used by each `(start, stop)` range.
    #[pyo3(signature = (*ranges))]
    fn approximate_sizes(&self, py: Python<'_>, ranges: &Bound<'_, PyTuple>) -> PyResult<Vec<u64>> {
        let mut owned = Vec::with_capacity(ranges.len());
        for range in ranges.iter() {
            let (start, stop): (Bound<'_, PyAny>, Bound<'_, PyAny>) = range.extract()?;
            let (Ok(start), Ok(stop)) = (start.cast::<PyBytes>(), stop.cast::<PyBytes>()) else {
                return Err(PyTypeError::new_err(
                    "Start and stop of range must be byte strings",
                ));
            };
            owned.push((start.as_bytes().to_vec(), stop.as_bytes().to_vec()));
        }
        let ranges: Vec<Range<'_>> = owned
            .iter()
            .map(|(start, limit)| Range { start, limit })
            .collect();
        self.handle.with_db(py, |db| db.approximate_sizes(&ranges))
    }

    /// A `PrefixedDB`: this database seen through a key prefix.
    fn prefixed_db(slf: &Bound<'_, Self>, prefix: Bound<'_, PyBytes>) -> PyPrefixedDB {
        PyPrefixedDB::new(slf.clone().unbind(), slf.get().handle.clone(), prefix)
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

/// A view of a `DB` that adds a prefix to every key it is given and strips it from every key it
/// returns. Nest them with `prefixed_db`.
#[pyclass(frozen, module = "strata", name = "PrefixedDB")]
pub struct PyPrefixedDB {
    db: Py<PyDB>,
    handle: Arc<Handle>,
    prefix: Py<PyBytes>,
    /// The prefix's bytes, kept beside the Python object for use without the GIL.
    key_prefix: Vec<u8>,
}

impl PyPrefixedDB {
    fn new(db: Py<PyDB>, handle: Arc<Handle>, prefix: Bound<'_, PyBytes>) -> PyPrefixedDB {
        PyPrefixedDB {
            db,
            handle,
            key_prefix: prefix.as_bytes().to_vec(),
            prefix: prefix.unbind(),
        }
    }

    fn full_key(&self, key: &[u8]) -> Vec<u8> {
        [self.key_prefix.as_slice(), key].concat()
    }
}

#[pymethods]
impl PyPrefixedDB {
    /// The underlying `DB`.
    #[getter]
    fn db(&self, py: Python<'_>) -> Py<PyDB> {
        self.db.clone_ref(py)
    }

    /// The prefix added to every key.
    #[getter]
    fn prefix(&self, py: Python<'_>) -> Py<PyBytes> {
        self.prefix.clone_ref(py)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "<strata.PrefixedDB with prefix {}>",
            self.prefix.bind(py).repr()?
        ))
    }

    /// See `DB.get`.
    #[pyo3(signature = (key, default=None, *, verify_checksums=false, fill_cache=true))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        key: &[u8],
        default: Option<Bound<'py, PyAny>>,
        #[pyo3(from_py_with = flag)] verify_checksums: bool,
        #[pyo3(from_py_with = flag)] fill_cache: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let key = self.full_key(key);
        get_value(
            py,
            &self.handle,
            &key,
            default,
            verify_checksums,
            fill_cache,
        )
    }

    /// See `DB.put`.
    #[pyo3(signature = (key, value, *, sync=false))]
    fn put(
        &self,
        py: Python<'_>,
        key: &[u8],
        value: &Bound<'_, PyAny>,
        #[pyo3(from_py_with = flag)] sync: bool,
    ) -> PyResult<()> {
        let key = self.full_key(key);
        put_value(py, &self.handle, &key, value, sync, None)
    }

    /// See `DB.delete`.
    #[pyo3(signature = (key, *, sync=false))]
    fn delete(
        &self,
        py: Python<'_>,
        key: &[u8],
        #[pyo3(from_py_with = flag)] sync: bool,
    ) -> PyResult<()> {
        let key = self.full_key(key);
        delete_key(py, &self.handle, &key, sync)
    }

    /// See `DB.write_batch`; the batch prefixes its keys.
    #[pyo3(signature = (*, transaction=false, sync=false))]
    fn write_batch(
        &self,
        #[pyo3(from_py_with = flag)] transaction: bool,
        #[pyo3(from_py_with = flag)] sync: bool,
    ) -> PyResult<PyWriteBatch> {
        self.handle.check_open()?;
        Ok(PyWriteBatch::new(
            &self.handle,
            Some(self.key_prefix.clone()),
            transaction,
            sync,
        ))
    }

    fn __iter__(&self, py: Python<'_>) -> PyResult<PyIterator> {
        PyIterator::new(
            py,
            &self.handle,
            Some(&self.key_prefix),
            IterArgs::all(),
            None,
        )
    }

    /// See `DB.iterator`; bounds and keys are relative to the prefix.
    #[pyo3(signature = (**kwargs))]
    fn iterator(&self, py: Python<'_>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<PyIterator> {
        let args = IterArgs::from_kwargs(kwargs)?;
        PyIterator::new(py, &self.handle, Some(&self.key_prefix), args, None)
    }

    /// See `DB.snapshot`; reads through it are relative to the prefix.
    fn snapshot(&self, py: Python<'_>) -> PyResult<PySnapshot> {
        PySnapshot::new(py, &self.handle, Some(self.key_prefix.clone()))
    }

    /// A `PrefixedDB` whose prefix is this one's followed by `prefix`.
    fn prefixed_db(&self, py: Python<'_>, prefix: Bound<'_, PyBytes>) -> PyPrefixedDB {
        let nested = PyBytes::new(py, &self.full_key(prefix.as_bytes()));
        PyPrefixedDB::new(self.db.clone_ref(py), self.handle.clone(), nested)
    }
}

/// Rebuilds the database in `name` from whatever can still be read.
#[pyfunction]
#[pyo3(signature = (name, *, paranoid_checks=None, write_buffer_size=None, max_open_files=None,
    lru_cache_size=None, block_size=None, block_restart_interval=None, max_file_size=None,
    compression=Compression::SNAPPY, bloom_filter_bits=0, comparator=None, comparator_name=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn repair_db<'py>(
    py: Python<'py>,
    name: Bound<'py, PyAny>,
    #[pyo3(from_py_with = optional_truth)] paranoid_checks: Option<bool>,
    write_buffer_size: Option<usize>,
    max_open_files: Option<usize>,
    lru_cache_size: Option<usize>,
    block_size: Option<usize>,
    block_restart_interval: Option<usize>,
    max_file_size: Option<usize>,
    compression: Compression,
    bloom_filter_bits: i64,
    comparator: Option<Bound<'py, PyAny>>,
    comparator_name: Option<Bound<'py, PyAny>>,
) -> PyResult<()> {
    let path = fs_path(&name)?;
    let args = OpenArgs {
        create_if_missing: false,
        error_if_exists: true,
        paranoid_checks,
        write_buffer_size,
        max_open_files,
        lru_cache_size,
        block_size,
        block_restart_interval,
        max_file_size,
        compression,
        bloom_filter_bits,
        comparator,
        comparator_name,
    };
    let options = args.to_options()?;
    py.detach(move || strata::repair(path, &options))
        .map_err(to_py)
}

/// Removes the database in `name` (its files, and the directory if it ends up empty).
#[pyfunction]
pub(crate) fn destroy_db(py: Python<'_>, name: Bound<'_, PyAny>) -> PyResult<()> {
    let path = fs_path(&name)?;
    py.detach(move || strata::destroy(path, &strata::Options::default()))
        .map_err(to_py)
}
