//! Conversions between Python objects and what the engine takes: byte strings, paths, flags.
//!
//! Keys are `bytes` only (anything else is a `TypeError`, as in plyvel); they are extracted in
//! method signatures as `&[u8]`, borrowed from the immutable `bytes` object without a copy.
//! Values take any object with the buffer protocol, as plyvel's do: `bytes` is borrowed,
//! anything else (`bytearray`, `memoryview`, `array.array`, ...) is copied first, because its
//! contents could change while the GIL is released.

use std::borrow::Cow;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyMemoryView};

/// The bytes of a value argument: `bytes` borrowed, other buffers copied.
pub(crate) fn value_bytes<'a>(value: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, [u8]>> {
    if let Ok(bytes) = value.cast::<PyBytes>() {
        return Ok(Cow::Borrowed(bytes.as_bytes()));
    }
    if let Ok(array) = value.cast::<PyByteArray>() {
        return Ok(Cow::Owned(array.to_vec()));
    }
    let view = PyMemoryView::from(value).map_err(|_| {
        PyTypeError::new_err(format!(
            "a bytes-like object is required, not '{}'",
            value
                .get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    let copy = view.call_method0("tobytes")?;
    Ok(Cow::Owned(copy.cast::<PyBytes>()?.as_bytes().to_vec()))
}

/// A database directory name: `bytes` taken as the file-system encoding of the path, `str` and
/// `os.PathLike` as Python's `os.fspath` gives them.
pub(crate) fn fs_path(name: &Bound<'_, PyAny>) -> PyResult<PathBuf> {
    if let Ok(bytes) = name.cast::<PyBytes>() {
        return Ok(PathBuf::from(OsStr::from_bytes(bytes.as_bytes())));
    }
    name.extract::<PathBuf>()
        .map_err(|_| PyTypeError::new_err("'name' arg must be a byte string or a unicode string"))
}

/// A boolean keyword argument as plyvel takes it (Cython `bool` parameters): `True` or `False`,
/// or `None`, which counts as false whatever the keyword's default, so `fill_cache=None` or
/// `include_key=None` turn those off, as in plyvel. Anything else is a `TypeError`. Every
/// boolean keyword of the module goes through here (`#[pyo3(from_py_with = flag)]`, and
/// `IterArgs::from_kwargs`).
pub(crate) fn flag(value: &Bound<'_, PyAny>) -> PyResult<bool> {
    if value.is_none() {
        Ok(false)
    } else {
        value.extract()
    }
}

/// `paranoid_checks`, which plyvel leaves untyped: `None` keeps the engine's default, anything
/// else counts by its truth value.
pub(crate) fn optional_truth(value: &Bound<'_, PyAny>) -> PyResult<Option<bool>> {
    if value.is_none() {
        Ok(None)
    } else {
        value.is_truthy().map(Some)
    }
}

/// The smallest key greater than every key that starts with `prefix`: the prefix with its last
/// byte below 0xff incremented and the rest dropped. `None` when the prefix is all 0xff bytes
/// (no such key exists: the range is unbounded above).
pub(crate) fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let last = prefix.iter().rposition(|&b| b != 0xff)?;
    let mut key = prefix[..=last].to_vec();
    key[last] += 1;
    Some(key)
}
