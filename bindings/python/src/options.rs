//! plyvel's open options (`DB(...)`, `repair_db(...)`) turned into the engine's [`Options`].
//!
//! As in plyvel, an option left at `None` keeps the engine's default (LevelDB's); `compression`
//! is `'snappy'` (the default) or `None`; `bloom_filter_bits > 0` adds LevelDB's bloom filter;
//! `comparator` and `comparator_name` go together.

use std::sync::Arc;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use strata::{BlockCache, BloomFilterPolicy, CompressionType, Options};

use crate::comparator::PyComparator;

/// The `compression` argument: `None` or `'snappy'` (`str` or `bytes`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Compression(pub(crate) CompressionType);

impl Compression {
    pub(crate) const SNAPPY: Compression = Compression(CompressionType::Snappy);
}

impl<'a, 'py> FromPyObject<'a, 'py> for Compression {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Compression> {
        if obj.is_none() {
            return Ok(Compression(CompressionType::None));
        }
        let name: String = if let Ok(s) = obj.cast::<PyString>() {
            s.to_cow()?.into_owned()
        } else if let Ok(b) = obj.cast::<PyBytes>() {
            String::from_utf8_lossy(b.as_bytes()).into_owned()
        } else {
            return Err(PyTypeError::new_err(
                "'compression' must be None or a string",
            ));
        };
        match name.as_str() {
            "snappy" => Ok(Compression::SNAPPY),
            _ => Err(PyValueError::new_err(
                "'compression' must be None or 'snappy'",
            )),
        }
    }
}

/// Every open option plyvel takes, as given.
pub(crate) struct OpenArgs<'py> {
    pub(crate) create_if_missing: bool,
    pub(crate) error_if_exists: bool,
    pub(crate) paranoid_checks: Option<bool>,
    pub(crate) write_buffer_size: Option<usize>,
    pub(crate) max_open_files: Option<usize>,
    pub(crate) lru_cache_size: Option<usize>,
    pub(crate) block_size: Option<usize>,
    pub(crate) block_restart_interval: Option<usize>,
    pub(crate) max_file_size: Option<usize>,
    pub(crate) compression: Compression,
    pub(crate) bloom_filter_bits: i64,
    pub(crate) comparator: Option<Bound<'py, PyAny>>,
    pub(crate) comparator_name: Option<Bound<'py, PyAny>>,
}

impl OpenArgs<'_> {
    /// The engine options; errors are plyvel's (`ValueError`, `TypeError`).
    pub(crate) fn to_options(&self) -> PyResult<Options> {
        let mut options = Options {
            create_if_missing: self.create_if_missing,
            error_if_exists: self.error_if_exists,
            compression: self.compression.0,
            ..Options::default()
        };
        if let Some(paranoid) = self.paranoid_checks {
            options.paranoid_checks = paranoid;
        }
        if let Some(size) = self.write_buffer_size {
            options.write_buffer_size = size;
        }
        if let Some(files) = self.max_open_files {
            options.max_open_files = files;
        }
        if let Some(bytes) = self.lru_cache_size {
            options.block_cache = Some(BlockCache::new(bytes));
        }
        if let Some(size) = self.block_size {
            options.block_size = size;
        }
        if let Some(interval) = self.block_restart_interval {
            options.block_restart_interval = interval;
        }
        if let Some(size) = self.max_file_size {
            options.max_file_size = size;
        }
        if self.bloom_filter_bits > 0 {
            let bits = usize::try_from(self.bloom_filter_bits).unwrap_or(usize::MAX);
            options.filter_policy = Some(Arc::new(BloomFilterPolicy::new(bits)));
        }
        match (&self.comparator, &self.comparator_name) {
            (None, None) => {}
            (Some(function), Some(name)) => {
                options.comparator = Arc::new(PyComparator::new(function, name)?);
            }
            _ => {
                return Err(PyValueError::new_err(
                    "'comparator' and 'comparator_name' must be specified together",
                ))
            }
        }
        Ok(options)
    }
}
