//! The module's exceptions, as plyvel defines them, and how engine errors map onto them.
//!
//! ```text
//! Exception
//! └── strata.Error                 every engine error not listed below (invalid argument, ...)
//!     ├── strata.IOError           also a subclass of the built-in OSError (IOError)
//!     ├── strata.CorruptionError
//!     └── strata.IteratorInvalidError   a RawIterator was used while not positioned
//! ```
//!
//! The classes are created once, at module initialisation, with Python's own `type()` (the
//! `IOError` class needs two bases, which `create_exception!` cannot express).
//! Misuse of the Python objects themselves raises built-ins, as plyvel does: `TypeError` for a
//! key that is not `bytes`, `RuntimeError` for a closed database, iterator or snapshot.

use pyo3::exceptions::{PyException, PyOSError, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

static ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static IO_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static CORRUPTION_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static ITERATOR_INVALID_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// Creates `class name(*bases)` in module `strata` with a docstring.
fn new_class<'py>(
    py: Python<'py>,
    name: &str,
    bases: Vec<Bound<'py, PyType>>,
    doc: &str,
) -> PyResult<Bound<'py, PyType>> {
    let namespace = PyDict::new(py);
    namespace.set_item("__module__", "strata")?;
    namespace.set_item("__doc__", doc)?;
    let bases = PyTuple::new(py, bases)?;
    py.get_type::<PyType>()
        .call1((name, bases, namespace))?
        .cast_into::<PyType>()
        .map_err(PyErr::from)
}

/// Creates the exception classes and adds them to `module`.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    let error = new_class(
        py,
        "Error",
        vec![py.get_type::<PyException>()],
        "Generic database error; the parent of the module's other exceptions.",
    )?;
    let io_error = new_class(
        py,
        "IOError",
        vec![error.clone(), py.get_type::<PyOSError>()],
        "The file system failed an operation (also a built-in IOError).",
    )?;
    let corruption = new_class(
        py,
        "CorruptionError",
        vec![error.clone()],
        "Stored data is not what it should be.",
    )?;
    let invalid = new_class(
        py,
        "IteratorInvalidError",
        vec![error.clone()],
        "A RawIterator was used while it is not positioned at an entry.",
    )?;
    for (cell, class) in [
        (&ERROR, &error),
        (&IO_ERROR, &io_error),
        (&CORRUPTION_ERROR, &corruption),
        (&ITERATOR_INVALID_ERROR, &invalid),
    ] {
        // A second initialisation of the module (a subinterpreter) keeps the first classes.
        let _ = cell.set(py, class.clone().unbind());
        module.add(
            class.name()?,
            cell.get(py).map(|c| c.bind(py)).unwrap_or(class),
        )?;
    }
    Ok(())
}

/// An instance of one of the module's classes; falls back to `RuntimeError` if the module was
/// never initialised (which cannot happen for code reached through the module).
fn raise(cell: &PyOnceLock<Py<PyType>>, message: Option<String>) -> PyErr {
    Python::attach(|py| match (cell.get(py), message) {
        (Some(class), Some(message)) => PyErr::from_type(class.bind(py).clone(), message),
        (Some(class), None) => PyErr::from_type(class.bind(py).clone(), ()),
        (None, message) => PyRuntimeError::new_err(message.unwrap_or_default()),
    })
}

/// The Python exception for an engine error.
pub(crate) fn to_py(error: strata::Error) -> PyErr {
    let message = Some(error.to_string());
    if error.is_io_error() {
        raise(&IO_ERROR, message)
    } else if error.is_corruption() {
        raise(&CORRUPTION_ERROR, message)
    } else {
        raise(&ERROR, message)
    }
}

/// `IteratorInvalidError()`.
pub(crate) fn iterator_invalid() -> PyErr {
    raise(&ITERATOR_INVALID_ERROR, None)
}

/// `RuntimeError` for an operation on a closed database.
pub(crate) fn db_closed() -> PyErr {
    PyRuntimeError::new_err("Database is closed")
}

/// `RuntimeError` for an operation on a closed iterator (or one whose database was closed).
pub(crate) fn iterator_closed() -> PyErr {
    PyRuntimeError::new_err("Database or iterator is closed")
}

/// `RuntimeError` for an operation on a released snapshot (or one whose database was closed).
pub(crate) fn snapshot_closed() -> PyErr {
    PyRuntimeError::new_err("Database or snapshot is closed")
}
