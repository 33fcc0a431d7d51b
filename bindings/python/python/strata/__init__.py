"""Strata: an embedded, ordered key-value store that reads and writes LevelDB's on-disk format.

Installed as the distribution ``strata-kv`` (``pip install strata-kv``), imported as ``strata``.

The API is plyvel's, so ``import strata as plyvel`` keeps plyvel code working::

    import strata

    with strata.DB("/tmp/example", create_if_missing=True) as db:
        db.put(b"key", b"value")
        assert db.get(b"key") == b"value"
        for key, value in db.iterator(prefix=b"k"):
            ...

Every call that touches the disk or waits for a lock releases the GIL, so threads sharing one
``DB`` run in parallel.
"""

from ._strata import (
    DB,
    CorruptionError,
    Error,
    IOError,
    Iterator,
    IteratorInvalidError,
    PrefixedDB,
    RawIterator,
    Snapshot,
    WriteBatch,
    __leveldb_version__,
    __version__,
    destroy_db,
    repair_db,
)

__all__ = [
    "DB",
    "CorruptionError",
    "Error",
    "IOError",
    "Iterator",
    "IteratorInvalidError",
    "PrefixedDB",
    "RawIterator",
    "Snapshot",
    "WriteBatch",
    "__leveldb_version__",
    "__version__",
    "destroy_db",
    "repair_db",
]
