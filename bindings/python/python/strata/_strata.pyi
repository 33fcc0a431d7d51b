"""Type stubs for strata's compiled core (plyvel's API).

A boolean keyword also takes None, which counts as False (whatever its default), as in plyvel.
"""

import builtins
import datetime
import os
from types import TracebackType
from typing import Any, Callable, Iterable, Iterator as _PyIterator, Optional, TypeVar, Union, overload

from typing_extensions import Buffer, Self

_T = TypeVar("_T")

_Name = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
_Value = Buffer
_Comparator = Callable[[bytes, bytes], int]
# A time to live: seconds, or a timedelta.
_Ttl = Union[int, float, datetime.timedelta]

__leveldb_version__: str
__version__: str

class Error(Exception):
    """Generic database error; the parent of the module's other exceptions."""

class IOError(Error, builtins.OSError):
    """The file system failed an operation (also a built-in IOError)."""

class CorruptionError(Error):
    """Stored data is not what it should be."""

class IteratorInvalidError(Error):
    """A RawIterator was used while it is not positioned at an entry."""

class DB:
    """A LevelDB database, opened in a directory."""

    def __init__(
        self,
        name: _Name,
        *,
        create_if_missing: Optional[bool] = False,
        error_if_exists: Optional[bool] = False,
        paranoid_checks: Optional[bool] = None,
        write_buffer_size: Optional[int] = None,
        max_open_files: Optional[int] = None,
        lru_cache_size: Optional[int] = None,
        block_size: Optional[int] = None,
        block_restart_interval: Optional[int] = None,
        max_file_size: Optional[int] = None,
        compression: Optional[Union[str, bytes]] = "snappy",
        bloom_filter_bits: int = 0,
        comparator: Optional[_Comparator] = None,
        comparator_name: Optional[Union[bytes, str]] = None,
        read_only: bool = False,
        range_deletes: bool = False,
        expiring_keys: bool = False,
        value_separation: Optional[int] = None,
    ) -> None: ...
    @property
    def name(self) -> _Name: ...
    @property
    def closed(self) -> bool: ...
    @property
    def read_only(self) -> bool: ...
    def close(self) -> None: ...
    def refresh(self) -> None: ...
    def checkpoint(self, path: _Name) -> None: ...
    @overload
    def get(
        self, key: bytes, default: None = None, *, verify_checksums: Optional[bool] = False, fill_cache: Optional[bool] = True
    ) -> Optional[bytes]: ...
    @overload
    def get(
        self, key: bytes, default: _T, *, verify_checksums: Optional[bool] = False, fill_cache: Optional[bool] = True
    ) -> Union[bytes, _T]: ...
    def head(
        self, key: bytes, *, verify_checksums: Optional[bool] = False, fill_cache: Optional[bool] = True
    ) -> Optional[int]: ...
    def put(
        self, key: bytes, value: _Value, *, sync: Optional[bool] = False, ttl: Optional[_Ttl] = None
    ) -> None: ...
    def delete(self, key: bytes, *, sync: Optional[bool] = False) -> None: ...
    def get_many(
        self, keys: Iterable[bytes], *, verify_checksums: Optional[bool] = False, fill_cache: Optional[bool] = True
    ) -> list[Optional[bytes]]: ...
    def delete_range(self, start: bytes, stop: bytes, *, sync: Optional[bool] = False) -> None: ...
    def clear_range(self, start: bytes, stop: bytes, *, sync: Optional[bool] = False) -> int: ...
    def write_batch(self, *, transaction: Optional[bool] = False, sync: Optional[bool] = False) -> WriteBatch: ...
    def __iter__(self) -> Iterator: ...
    def iterator(
        self,
        *,
        reverse: Optional[bool] = False,
        start: Optional[bytes] = None,
        stop: Optional[bytes] = None,
        include_start: Optional[bool] = True,
        include_stop: Optional[bool] = False,
        prefix: Optional[bytes] = None,
        include_key: Optional[bool] = True,
        include_value: Optional[bool] = True,
        verify_checksums: Optional[bool] = False,
        fill_cache: Optional[bool] = True,
    ) -> Iterator: ...
    def raw_iterator(self, *, verify_checksums: Optional[bool] = False, fill_cache: Optional[bool] = True) -> RawIterator: ...
    def snapshot(self) -> Snapshot: ...
    def get_property(self, name: bytes) -> Optional[bytes]: ...
    def compact_range(self, *, start: Optional[bytes] = None, stop: Optional[bytes] = None) -> None: ...
    def approximate_size(self, start: bytes, stop: bytes) -> int: ...
    def approximate_sizes(self, *ranges: tuple[bytes, bytes]) -> list[int]: ...
    def prefixed_db(self, prefix: bytes) -> PrefixedDB: ...
    def __enter__(self) -> Self: ...
    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc_val: Optional[BaseException],
        exc_tb: Optional[TracebackType],
    ) -> bool: ...

class PrefixedDB:
    """A view of a DB that prefixes every key it is given and strips the prefix from keys returned."""

    @property
    def db(self) -> DB: ...
    @property
    def prefix(self) -> bytes: ...
    @overload
    def get(
        self, key: bytes, default: None = None, *, verify_checksums: Optional[bool] = False, fill_cache: Optional[bool] = True
    ) -> Optional[bytes]: ...
    @overload
    def get(
        self, key: bytes, default: _T, *, verify_checksums: Optional[bool] = False, fill_cache: Optional[bool] = True
    ) -> Union[bytes, _T]: ...
    def put(self, key: bytes, value: _Value, *, sync: Optional[bool] = False) -> None: ...
    def delete(self, key: bytes, *, sync: Optional[bool] = False) -> None: ...
    def write_batch(self, *, transaction: Optional[bool] = False, sync: Optional[bool] = False) -> WriteBatch: ...
    def __iter__(self) -> Iterator: ...
    def iterator(
        self,
        *,
        reverse: Optional[bool] = False,
        start: Optional[bytes] = None,
        stop: Optional[bytes] = None,
        include_start: Optional[bool] = True,
        include_stop: Optional[bool] = False,
        prefix: Optional[bytes] = None,
        include_key: Optional[bool] = True,
        include_value: Optional[bool] = True,
        verify_checksums: Optional[bool] = False,
        fill_cache: Optional[bool] = True,
    ) -> Iterator: ...
    def snapshot(self) -> Snapshot: ...
    def prefixed_db(self, prefix: bytes) -> PrefixedDB: ...

class WriteBatch:
    """Puts and deletes gathered in memory and applied atomically."""

    def put(self, key: bytes, value: _Value, *, ttl: Optional[_Ttl] = None) -> None: ...
    def delete(self, key: bytes) -> None: ...
    def delete_range(self, start: bytes, stop: bytes) -> None: ...
    def clear(self) -> None: ...
    def write(self) -> None: ...
    def append(self, source: WriteBatch) -> None: ...
    def approximate_size(self) -> int: ...
    def __enter__(self) -> Self: ...
    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc_val: Optional[BaseException],
        exc_tb: Optional[TracebackType],
    ) -> bool: ...

class Snapshot:
    """A consistent read-only view of the database at the moment it was taken."""

    @overload
    def get(
        self, key: bytes, default: None = None, *, verify_checksums: Optional[bool] = False, fill_cache: Optional[bool] = True
    ) -> Optional[bytes]: ...
    @overload
    def get(
        self, key: bytes, default: _T, *, verify_checksums: Optional[bool] = False, fill_cache: Optional[bool] = True
    ) -> Union[bytes, _T]: ...
    def head(
        self, key: bytes, *, verify_checksums: Optional[bool] = False, fill_cache: Optional[bool] = True
    ) -> Optional[int]: ...
    def get_many(
        self, keys: Iterable[bytes], *, verify_checksums: Optional[bool] = False, fill_cache: Optional[bool] = True
    ) -> list[Optional[bytes]]: ...
    def __iter__(self) -> Iterator: ...
    def iterator(
        self,
        *,
        reverse: Optional[bool] = False,
        start: Optional[bytes] = None,
        stop: Optional[bytes] = None,
        include_start: Optional[bool] = True,
        include_stop: Optional[bool] = False,
        prefix: Optional[bytes] = None,
        include_key: Optional[bool] = True,
        include_value: Optional[bool] = True,
        verify_checksums: Optional[bool] = False,
        fill_cache: Optional[bool] = True,
    ) -> Iterator: ...
    def raw_iterator(self, *, verify_checksums: Optional[bool] = False, fill_cache: Optional[bool] = True) -> RawIterator: ...
    def close(self) -> None: ...
    def release(self) -> None: ...
    def __enter__(self) -> Self: ...
    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc_val: Optional[BaseException],
        exc_tb: Optional[TracebackType],
    ) -> bool: ...

class Iterator(_PyIterator[Any]):
    """Iterator over a key range. Items are (key, value) tuples, keys, values or None,
    depending on include_key and include_value."""

    def __iter__(self) -> Self: ...
    def __next__(self) -> Any: ...
    def prev(self) -> Any: ...
    def seek_to_start(self) -> None: ...
    def seek_to_stop(self) -> None: ...
    def seek(self, target: bytes) -> None: ...
    def close(self) -> None: ...
    def __enter__(self) -> Self: ...
    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc_val: Optional[BaseException],
        exc_tb: Optional[TracebackType],
    ) -> bool: ...

class RawIterator:
    """LevelDB's cursor interface."""

    def valid(self) -> bool: ...
    def seek_to_first(self) -> None: ...
    def seek_to_last(self) -> None: ...
    def seek(self, target: bytes) -> None: ...
    def next(self) -> None: ...
    def prev(self) -> None: ...
    def key(self) -> bytes: ...
    def value(self) -> bytes: ...
    def item(self) -> tuple[bytes, bytes]: ...
    def close(self) -> None: ...
    def __enter__(self) -> Self: ...
    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc_val: Optional[BaseException],
        exc_tb: Optional[TracebackType],
    ) -> bool: ...

def repair_db(
    name: _Name,
    *,
    paranoid_checks: Optional[bool] = None,
    write_buffer_size: Optional[int] = None,
    max_open_files: Optional[int] = None,
    lru_cache_size: Optional[int] = None,
    block_size: Optional[int] = None,
    block_restart_interval: Optional[int] = None,
    max_file_size: Optional[int] = None,
    compression: Optional[Union[str, bytes]] = "snappy",
    bloom_filter_bits: int = 0,
    comparator: Optional[_Comparator] = None,
    comparator_name: Optional[Union[bytes, str]] = None,
) -> None: ...
def destroy_db(name: _Name) -> None: ...
