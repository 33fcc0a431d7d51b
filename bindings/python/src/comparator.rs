//! Python callables as key comparators (`DB(comparator=..., comparator_name=...)`).
//!
//! The callable takes two `bytes` and returns a negative number, zero or a positive number, like
//! Python 2's `cmp`. The engine calls it from every thread that orders keys: the caller's own
//! (reads, writes, iterators) and the background compaction thread. Each call attaches to the
//! interpreter (takes the GIL), builds two `bytes` objects and calls into Python: roughly a
//! microsecond, against a few nanoseconds for the built-in bytewise order, and the calls are
//! serialised by the GIL. Expect bulk writes to run several times slower, as with plyvel.
//!
//! Because the binding releases the GIL around every engine call, a background compaction can
//! always get it: a Python comparator cannot deadlock the database.
//!
//! A comparator must not raise: the engine has no way to carry an exception out of a sort, and
//! guessing an order would corrupt the database. As plyvel does, the traceback is printed to
//! `stderr` and the process is aborted.

use std::cmp::Ordering;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use strata::Comparator;

/// A comparator that calls a Python callable.
///
/// Thread safety: `Send + Sync`; every call attaches to the interpreter first.
pub(crate) struct PyComparator {
    name: String,
    function: Py<PyAny>,
}

impl PyComparator {
    /// Checks the callable and the name (`bytes` or `str`, UTF-8: it is stored in the manifest).
    pub(crate) fn new(function: &Bound<'_, PyAny>, name: &Bound<'_, PyAny>) -> PyResult<Self> {
        if !function.is_callable() {
            return Err(PyTypeError::new_err(
                "custom comparator object must be callable",
            ));
        }
        let name = if let Ok(bytes) = name.cast::<PyBytes>() {
            std::str::from_utf8(bytes.as_bytes())
                .map_err(|_| PyValueError::new_err("'comparator_name' must be UTF-8"))?
                .to_owned()
        } else if let Ok(s) = name.cast::<PyString>() {
            s.to_cow()?.into_owned()
        } else {
            return Err(PyTypeError::new_err(
                "'comparator_name' must be a byte string",
            ));
        };
        Ok(PyComparator {
            name,
            function: function.clone().unbind(),
        })
    }

    fn call(&self, py: Python<'_>, a: &[u8], b: &[u8]) -> PyResult<Ordering> {
        let result = self
            .function
            .call1(py, (PyBytes::new(py, a), PyBytes::new(py, b)))?;
        let result = result.bind(py);
        if let Ok(n) = result.extract::<i64>() {
            return Ok(n.cmp(&0));
        }
        // Any other number (a big int, a float): compare it with zero in Python.
        if result.lt(0)? {
            Ok(Ordering::Less)
        } else if result.gt(0)? {
            Ok(Ordering::Greater)
        } else {
            Ok(Ordering::Equal)
        }
    }
}

impl Comparator for PyComparator {
    fn name(&self) -> &str {
        &self.name
    }

    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        Python::attach(|py| match self.call(py, a, b) {
            Ok(order) => order,
            Err(err) => {
                err.print(py);
                eprintln!(
                    "strata: the custom comparator {:?} raised an exception; aborting \
                     rather than risk corrupting the database",
                    self.name
                );
                std::process::abort();
            }
        })
    }
}
