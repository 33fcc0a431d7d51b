//! What `DB`, `Snapshot` and `WriteBatch` share of Strata's batched reads, range deletes and
//! expiring keys: `get_many`'s keys and answers, and `ttl=` in seconds.
//!
//! Range deletes (`DB.delete_range`, `WriteBatch.delete_range`) and expiring keys (`ttl=`) are
//! extensions of LevelDB's format, enabled by `DB(..., range_deletes=True,
//! expiring_keys=True)`; without them those calls raise `strata.Error` naming the option.

use std::time::Duration;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use strata::ReadOptions;

use crate::handle::Handle;

/// The keys of a `get_many` call: an iterable of `bytes` (each key `prefix + key`).
pub(crate) fn keys_of(keys: &Bound<'_, PyAny>, prefix: Option<&[u8]>) -> PyResult<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    for key in keys.try_iter()? {
        let key = key?;
        let bytes = key
            .cast::<PyBytes>()
            .map_err(|_| PyTypeError::new_err("get_many() takes an iterable of bytes keys"))?;
        out.push([prefix.unwrap_or_default(), bytes.as_bytes()].concat());
    }
    Ok(out)
}

/// `get_many` through `handle` at `options`: a list of `bytes` or `None`, in the keys' order.
pub(crate) fn get_many<'py>(
    py: Python<'py>,
    handle: &Handle,
    options: ReadOptions,
    keys: Vec<Vec<u8>>,
) -> PyResult<Bound<'py, PyList>> {
    let values = handle.call(py, move |db| db.get_many_opt(&options, &keys))?;
    PyList::new(
        py,
        values
            .iter()
            .map(|value| value.as_ref().map(|v| PyBytes::new(py, v))),
    )
}

/// The `ttl` keyword: `None` (no expiry), seconds (int or float, at least 0), or a
/// `datetime.timedelta`.
pub(crate) fn optional_ttl(value: &Bound<'_, PyAny>) -> PyResult<Option<Duration>> {
    if value.is_none() {
        return Ok(None);
    }
    let seconds: f64 = if value.hasattr("total_seconds")? {
        value.call_method0("total_seconds")?.extract()?
    } else {
        value
            .extract()
            .map_err(|_| PyTypeError::new_err("'ttl' must be a number of seconds or a timedelta"))?
    };
    Duration::try_from_secs_f64(seconds).map(Some).map_err(|_| {
        PyValueError::new_err(format!(
            "'ttl' must be a finite number of seconds >= 0, not {seconds}"
        ))
    })
}
