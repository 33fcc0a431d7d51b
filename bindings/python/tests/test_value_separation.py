"""Value separation (`strata.DB(path, value_separation=min_size)`): large values in value files
beside the tree; `head` answers a key's value length from the tree alone, and
`iterator(include_value=False)` walks keys without reading a value file — both keep answering
after every value file is deleted, where `get` and a full iteration report the damage. Such a
directory is refused without the option, and by real LevelDB (plyvel)."""

import glob
import os

import plyvel
import pytest

import strata


def value_of(i):
    return b"v" * (i * 7 % 5000)


def fill_separated(path):
    db = strata.DB(path, create_if_missing=True, value_separation=1024)
    for i in range(600):
        db.put(b"key%05d" % i, value_of(i))
    return db


def test_values_round_trip_and_head_gives_their_lengths(tmp_path):
    db = fill_separated(str(tmp_path / "db"))
    for i in range(600):
        key = b"key%05d" % i
        assert db.get(key) == value_of(i)
        assert db.head(key) == len(value_of(i))
    assert db.head(b"absent") is None
    snapshot = db.snapshot()
    db.put(b"key00001", b"w" * 4321)
    db.delete(b"key00002")
    assert db.head(b"key00001") == 4321
    assert snapshot.head(b"key00001") == 7
    assert db.head(b"key00002") is None
    assert snapshot.head(b"key00002") == 14
    assert list(db.iterator(include_value=False, start=b"key00003", stop=b"key00006")) == [
        b"key00003",
        b"key00004",
        b"key00005",
    ]
    db.close()


def test_head_and_key_iteration_read_no_value_file(tmp_path):
    path = str(tmp_path / "db")
    db = fill_separated(path)
    db.compact_range()
    db.close()
    value_files = glob.glob(os.path.join(path, "*.vlog"))
    assert value_files
    for f in value_files:
        os.remove(f)
    db = strata.DB(path, value_separation=1024)
    assert [db.head(b"key%05d" % i) for i in range(600)] == [len(value_of(i)) for i in range(600)]
    assert list(db.iterator(include_value=False)) == [b"key%05d" % i for i in range(600)]
    assert list(db.iterator(include_value=False, reverse=True))[:2] == [b"key00599", b"key00598"]
    with pytest.raises(strata.CorruptionError):
        db.get(b"key00499")
    with pytest.raises(strata.CorruptionError):
        list(db.iterator())
    db.close()


def test_a_separated_directory_is_refused_without_the_option_and_by_leveldb(tmp_path):
    path = str(tmp_path / "db")
    fill_separated(path).close()
    with pytest.raises(strata.Error, match="value files"):
        strata.DB(path)
    with pytest.raises(plyvel.Error):
        plyvel.DB(path)


@pytest.mark.parametrize("compression", ["snappy", None])
def test_separated_values_are_compressed_as_table_blocks_are(tmp_path, compression):
    path = str(tmp_path / "db")
    db = strata.DB(path, create_if_missing=True, value_separation=1024, compression=compression)
    for i in range(100):
        db.put(b"key%05d" % i, b"v" * 4000)
    total = int(db.get_property(b"strata.value-files.total-bytes"))
    # 400,000 bytes of one repeated letter: Snappy stores a small share of them.
    assert (total < 100_000) if compression else (total > 400_000)
    assert db.get(b"key00007") == b"v" * 4000
    db.close()
    if compression:
        with pytest.raises(strata.Error, match="value-compression"):
            strata.DB(path, value_separation=1024, compression=None)
