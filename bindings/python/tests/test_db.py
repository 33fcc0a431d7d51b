"""DB: opening and its options, get/put/delete, types, closing, properties, sizes, compaction,
repair and destroy, and the error classes."""

import array
import os
import pathlib

import pytest

import strata
from conftest import fill


# --- module surface ---------------------------------------------------------------------------


def test_error_classes_form_plyvels_hierarchy():
    assert issubclass(strata.Error, Exception)
    assert issubclass(strata.IOError, strata.Error)
    assert issubclass(strata.IOError, OSError)
    assert issubclass(strata.CorruptionError, strata.Error)
    assert issubclass(strata.IteratorInvalidError, strata.Error)
    assert strata.Error.__module__ == "strata"
    assert strata.IOError.__name__ == "IOError"


def test_module_versions():
    assert strata.__leveldb_version__ == "1.23"
    assert isinstance(strata.__version__, str)


# --- opening ----------------------------------------------------------------------------------


def test_open_missing_without_create_if_missing_fails(path):
    with pytest.raises(strata.Error) as info:
        strata.DB(path)
    assert not isinstance(info.value, strata.IOError)
    assert not os.path.exists(os.path.join(path, "CURRENT"))


def test_create_if_missing_then_reopen(path):
    strata.DB(path, create_if_missing=True).close()
    assert os.path.exists(os.path.join(path, "CURRENT"))
    strata.DB(path).close()


def test_error_if_exists(path):
    strata.DB(path, create_if_missing=True).close()
    with pytest.raises(strata.Error):
        strata.DB(path, create_if_missing=True, error_if_exists=True)


@pytest.mark.parametrize("kind", ["str", "bytes", "pathlib"])
def test_name_may_be_str_bytes_or_pathlike(path, kind):
    name = {"str": path, "bytes": os.fsencode(path), "pathlib": pathlib.Path(path)}[kind]
    db = strata.DB(name, create_if_missing=True)
    assert db.name is name
    db.put(b"k", b"v")
    db.close()
    assert strata.DB(path).get(b"k") == b"v"


@pytest.mark.parametrize("name", [None, 42, 1.5])
def test_name_of_wrong_type_is_type_error(name):
    with pytest.raises(TypeError):
        strata.DB(name, create_if_missing=True)


def test_options_are_keyword_only(path):
    with pytest.raises(TypeError):
        strata.DB(path, True)


def test_every_open_option_is_accepted(path):
    db = strata.DB(
        path,
        create_if_missing=True,
        error_if_exists=True,
        paranoid_checks=True,
        write_buffer_size=128 * 1024,
        max_open_files=100,
        lru_cache_size=1 << 20,
        block_size=1024,
        block_restart_interval=4,
        max_file_size=1 << 20,
        compression=None,
        bloom_filter_bits=10,
    )
    data = fill(db, 5000, value_size=100)
    db.compact_range()
    for key, value in list(data.items())[::97]:
        assert db.get(key) == value
    assert db.get(b"absent") is None
    assert len(list(db)) == 5000
    db.close()


@pytest.mark.parametrize("compression", ["snappy", b"snappy", None])
def test_compression_values(path, compression):
    db = strata.DB(path, create_if_missing=True, compression=compression)
    db.put(b"k", b"v")
    assert db.get(b"k") == b"v"
    db.close()


def test_bad_compression(path):
    with pytest.raises(ValueError):
        strata.DB(path, create_if_missing=True, compression="zlib")
    with pytest.raises(TypeError):
        strata.DB(path, create_if_missing=True, compression=1)


def test_snappy_makes_compressible_tables_smaller(tmp_path):
    sizes = {}
    for compression in ["snappy", None]:
        path = str(tmp_path / str(compression))
        db = strata.DB(path, create_if_missing=True, compression=compression)
        fill(db, 3000, value_size=200)  # values repeat a short pattern: very compressible
        db.compact_range()
        sizes[compression] = db.approximate_size(b"key-", b"key-\xff")
        db.close()
        on_disk = sum(f.stat().st_size for f in (tmp_path / str(compression)).glob("*.ldb"))
        assert on_disk > 0
    assert 0 < sizes["snappy"] < sizes[None] / 2


def test_small_write_buffer_flushes_to_tables(path):
    db = strata.DB(path, create_if_missing=True, write_buffer_size=64 * 1024)
    data = fill(db, 20000, value_size=50)
    sstables = db.get_property(b"leveldb.sstables")
    assert b".ldb" in sstables or any(
        int(db.get_property(b"leveldb.num-files-at-level%d" % level)) for level in range(7)
    )
    for key, value in list(data.items())[::331]:
        assert db.get(key) == value
    db.close()


def test_comparator_and_name_go_together(path):
    with pytest.raises(ValueError):
        strata.DB(path, create_if_missing=True, comparator=lambda a, b: 0)
    with pytest.raises(ValueError):
        strata.DB(path, create_if_missing=True, comparator_name=b"x")
    with pytest.raises(TypeError):
        strata.DB(path, create_if_missing=True, comparator=42, comparator_name=b"x")


def test_negative_sizes_are_rejected(path):
    with pytest.raises(OverflowError):
        strata.DB(path, create_if_missing=True, write_buffer_size=-1)


# --- get, put, delete -------------------------------------------------------------------------


def test_put_get_delete(db):
    assert db.get(b"k") is None
    db.put(b"k", b"v")
    assert db.get(b"k") == b"v"
    db.put(b"k", b"v2")
    assert db.get(b"k") == b"v2"
    db.delete(b"k")
    assert db.get(b"k") is None
    db.delete(b"never-there")  # not an error


def test_get_default(db):
    marker = object()
    assert db.get(b"k", marker) is marker
    assert db.get(b"k", default=b"d") == b"d"
    db.put(b"k", b"v")
    assert db.get(b"k", marker) == b"v"


def test_read_and_write_options(db):
    db.put(b"k", b"v", sync=True)
    assert db.get(b"k", verify_checksums=True, fill_cache=False) == b"v"
    db.delete(b"k", sync=True)
    assert db.get(b"k", verify_checksums=True) is None


def test_read_options_are_keyword_only(db):
    with pytest.raises(TypeError):
        db.get(b"k", None, True)
    with pytest.raises(TypeError):
        db.put(b"k", b"v", True)


def test_binary_empty_and_large_keys_and_values(db):
    db.put(b"", b"empty key")
    db.put(b"\x00\xff\x00", b"")
    big = os.urandom(1 << 20)
    db.put(b"big", big)
    assert db.get(b"") == b"empty key"
    assert db.get(b"\x00\xff\x00") == b""
    assert db.get(b"big") == big


@pytest.mark.parametrize("key", ["str", bytearray(b"k"), memoryview(b"k"), None, 1])
def test_keys_must_be_bytes(db, key):
    with pytest.raises(TypeError):
        db.put(key, b"v")
    with pytest.raises(TypeError):
        db.get(key)
    with pytest.raises(TypeError):
        db.delete(key)


@pytest.mark.parametrize("value", ["str", None, 1, 1.5, [1]])
def test_values_must_be_bytes_like(db, value):
    with pytest.raises(TypeError):
        db.put(b"k", value)
    assert db.get(b"k") is None


@pytest.mark.parametrize(
    "value",
    [bytearray(b"abc"), memoryview(b"abc"), memoryview(b"xabcx")[1:4], array.array("b", b"abc")],
)
def test_values_may_be_any_buffer(db, value):
    db.put(b"k", value)
    assert db.get(b"k") == b"abc"
    assert type(db.get(b"k")) is bytes


def test_values_come_back_as_bytes(db):
    db.put(b"k", bytearray(b"v"))
    assert type(db.get(b"k")) is bytes
    assert type(next(iter(db))[1]) is bytes


def test_reopen_keeps_data(path):
    db = strata.DB(path, create_if_missing=True)
    data = fill(db, 1000)
    db.delete(b"key-00000005")
    db.close()
    db = strata.DB(path)
    assert db.get(b"key-00000005") is None
    assert db.get(b"key-00000006") == data[b"key-00000006"]
    assert len(list(db)) == 999
    db.close()


# --- closing ----------------------------------------------------------------------------------


def test_close_and_closed(path):
    db = strata.DB(path, create_if_missing=True)
    assert db.closed is False
    db.close()
    assert db.closed is True
    db.close()  # idempotent
    assert "closed" in repr(db)


def test_context_manager_closes(path):
    with strata.DB(path, create_if_missing=True) as db:
        assert not db.closed
        db.put(b"k", b"v")
    assert db.closed
    with strata.DB(path) as db:
        assert db.get(b"k") == b"v"


def test_close_releases_the_lock(path):
    db = strata.DB(path, create_if_missing=True)
    db.close()
    strata.DB(path).close()


def test_everything_raises_runtime_error_after_close(path):
    db = strata.DB(path, create_if_missing=True)
    db.close()
    calls = [
        lambda: db.get(b"k"),
        lambda: db.put(b"k", b"v"),
        lambda: db.delete(b"k"),
        lambda: db.write_batch(),
        lambda: db.iterator(),
        lambda: iter(db),
        lambda: db.raw_iterator(),
        lambda: db.snapshot(),
        lambda: db.get_property(b"leveldb.stats"),
        lambda: db.compact_range(),
        lambda: db.approximate_size(b"a", b"z"),
        lambda: db.approximate_sizes((b"a", b"z")),
        lambda: db.prefixed_db(b"p").get(b"k"),
    ]
    for call in calls:
        with pytest.raises(RuntimeError):
            call()


def test_open_twice_in_one_process_is_io_error(db, path):
    with pytest.raises(strata.IOError) as info:
        strata.DB(path)
    assert isinstance(info.value, OSError)
    assert "LOCK" in str(info.value)


def test_repr(db, path):
    assert repr(db) == "<strata.DB with name %r>" % path


# --- properties, sizes, compaction ------------------------------------------------------------


def test_get_property(db):
    fill(db, 100)
    stats = db.get_property(b"leveldb.stats")
    assert isinstance(stats, bytes) and b"Level" in stats
    assert db.get_property(b"leveldb.num-files-at-level0").isdigit()
    assert isinstance(db.get_property(b"leveldb.sstables"), bytes)
    assert int(db.get_property(b"leveldb.approximate-memory-usage")) > 0
    assert db.get_property(b"leveldb.no-such-property") is None
    assert db.get_property(b"leveldb.num-files-at-level99") is None
    assert db.get_property(b"\xff\xfe") is None
    with pytest.raises(TypeError):
        db.get_property("leveldb.stats")


def test_compact_range_moves_data_out_of_level0(path):
    db = strata.DB(path, create_if_missing=True, write_buffer_size=64 * 1024)
    data = fill(db, 10000, value_size=64)
    for i in range(0, 10000, 2):
        db.delete(b"key-%08d" % i)
    db.compact_range()
    assert db.get_property(b"leveldb.num-files-at-level0") == b"0"
    assert len(list(db)) == 5000
    assert db.get(b"key-00000001") == data[b"key-00000001"]
    assert db.get(b"key-00000002") is None
    db.compact_range(start=b"key-00000100")
    db.compact_range(stop=b"key-00000100")
    db.compact_range(start=b"key-00000100", stop=b"key-00000200")
    assert len(list(db)) == 5000
    with pytest.raises(TypeError):
        db.compact_range(b"a", b"b")  # keyword-only, as in plyvel
    with pytest.raises(TypeError):
        db.compact_range(start="a")
    db.close()


def test_approximate_sizes(path):
    db = strata.DB(path, create_if_missing=True, compression=None)
    fill(db, 20000, value_size=100)
    db.compact_range()
    whole = db.approximate_size(b"key-", b"key-\xff")
    half = db.approximate_size(b"key-", b"key-00010000")
    assert whole > 20000 * 100 * 0.8
    assert 0.3 * whole < half < 0.7 * whole
    assert db.approximate_size(b"x", b"y") == 0
    assert db.approximate_sizes((b"key-", b"key-\xff"), (b"x", b"y")) == [whole, 0]
    assert db.approximate_sizes() == []
    with pytest.raises(TypeError):
        db.approximate_sizes((b"a", "b"))
    with pytest.raises(TypeError):
        db.approximate_size("a", b"b")
    db.close()


# --- repair, destroy, corruption --------------------------------------------------------------


def test_destroy_db(path):
    db = strata.DB(path, create_if_missing=True)
    fill(db, 100)
    db.close()
    strata.destroy_db(path)
    assert not os.path.exists(os.path.join(path, "CURRENT"))
    with pytest.raises(strata.Error):
        strata.DB(path)


def test_destroy_db_on_missing_directory_is_fine(path):
    strata.destroy_db(path)


def test_repair_db_recovers_tables_after_manifest_loss(path):
    db = strata.DB(path, create_if_missing=True)
    data = fill(db, 2000)
    db.compact_range()
    db.close()
    for name in os.listdir(path):
        if name.startswith("MANIFEST") or name == "CURRENT":
            os.remove(os.path.join(path, name))
    with pytest.raises(strata.Error):
        strata.DB(path)
    strata.repair_db(path, paranoid_checks=False, compression="snappy", bloom_filter_bits=10)
    with strata.DB(path) as db:
        assert dict(db) == data


def _corrupt_tables(path):
    tables = [name for name in os.listdir(path) if name.endswith(".ldb")]
    assert tables
    for name in tables:
        with open(os.path.join(path, name), "r+b") as f:
            f.seek(200)
            chunk = f.read(64)
            f.seek(200)
            f.write(bytes(b ^ 0x55 for b in chunk))


def test_corruption_is_raised_by_checked_reads(path):
    db = strata.DB(path, create_if_missing=True, compression=None)
    fill(db, 2000, value_size=100)
    db.compact_range()
    db.close()
    _corrupt_tables(path)
    with strata.DB(path) as db:
        with pytest.raises(strata.CorruptionError):
            db.get(b"key-00000000", verify_checksums=True)
        with pytest.raises(strata.CorruptionError):
            list(db.iterator(verify_checksums=True))
        raw = db.raw_iterator(verify_checksums=True)
        with pytest.raises(strata.CorruptionError):
            raw.seek_to_first()
    with pytest.raises(strata.CorruptionError):
        with strata.DB(path, paranoid_checks=True) as db:
            list(db)
