//! `strata._strata`: the compiled core of the `strata` Python package, Strata's binding with
//! plyvel's API (`import strata as plyvel` keeps plyvel code working).
//!
//! | file | what it holds |
//! |---|---|
//! | `db.rs` | `DB`, `PrefixedDB`, `repair_db`, `destroy_db` |
//! | `handle.rs` | the engine handle shared by a database's Python objects; GIL and lock rules |
//! | `batch.rs` | `WriteBatch` |
//! | `snapshot.rs` | `Snapshot` |
//! | `iterator.rs` | `Iterator` (plyvel's range iterator) and `RawIterator` |
//! | `options.rs` | open options to engine `Options` |
//! | `comparator.rs` | Python callables as comparators |
//! | `errors.rs` | the exception classes and the engine-error mapping |
//! | `convert.rs` | bytes and path conversions |
//! | `range_ops.rs` | `get_many`, range deletes and `ttl=`, shared by `DB`, `Snapshot`, `WriteBatch` |

mod batch;
mod comparator;
mod convert;
mod db;
mod engine_cursor;
mod errors;
mod handle;
mod iterator;
mod options;
mod range_ops;
mod snapshot;

use pyo3::prelude::*;

/// Strata, an LSM key-value store that reads and writes LevelDB's format, with plyvel's API.
#[pymodule]
fn _strata(module: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(module)?;
    module.add_class::<db::PyDB>()?;
    module.add_class::<db::PyPrefixedDB>()?;
    module.add_class::<batch::PyWriteBatch>()?;
    module.add_class::<snapshot::PySnapshot>()?;
    module.add_class::<iterator::PyIterator>()?;
    module.add_class::<iterator::PyRawIterator>()?;
    module.add_function(wrap_pyfunction!(db::repair_db, module)?)?;
    module.add_function(wrap_pyfunction!(db::destroy_db, module)?)?;
    // The on-disk format this engine reads and writes.
    module.add("__leveldb_version__", "1.23")?;
    // The package's version (Cargo.toml's, which the wheel's metadata also takes).
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
