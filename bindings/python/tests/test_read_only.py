"""Read-only databases (`DB(path, read_only=True)`, `refresh()`) beside a writer — strata in this
process, or real LevelDB through plyvel — and `checkpoint()`, whose copies open in both."""

import os
import shutil
import subprocess
import tempfile
import textwrap

import plyvel
import pytest

import strata
from conftest import PYTHON, fill


def contents(db):
    return dict(db.iterator())


def test_a_reader_beside_a_strata_writer(path):
    writer = strata.DB(path, create_if_missing=True, write_buffer_size=64 * 1024)
    data = fill(writer, 3000, value_size=100)
    with pytest.raises(strata.IOError):
        strata.DB(path)  # the LOCK keeps a second writer out
    reader = strata.DB(path, read_only=True)
    assert reader.read_only and not writer.read_only
    assert contents(reader) == data

    writer.put(b"later", b"1")
    assert reader.get(b"later") is None
    snapshot = reader.snapshot()
    reader.refresh()
    assert reader.get(b"later") == b"1"
    assert snapshot.get(b"later") is None  # a snapshot keeps the state it was taken on
    writer.refresh()  # nothing to do on a database opened to write
    reader.close()
    writer.close()


def test_writes_on_a_read_only_database_raise(path):
    with strata.DB(path, create_if_missing=True) as db:
        db.put(b"a", b"1")
    with strata.DB(path, read_only=True) as reader:
        attempts = [
            lambda: reader.put(b"a", b"2"),
            lambda: reader.delete(b"a"),
            lambda: reader.compact_range(),
        ]
        for attempt in attempts:
            with pytest.raises(strata.Error, match="read-only"):
                attempt()
        with pytest.raises(strata.Error, match="read-only"):
            with reader.write_batch() as wb:
                wb.put(b"b", b"2")
        with pytest.raises(strata.Error, match="read-only"):
            reader.prefixed_db(b"p").put(b"x", b"y")
        assert contents(reader) == {b"a": b"1"}


def test_a_missing_database_is_not_created(tmp_path):
    missing = os.path.join(str(tmp_path), "missing")
    with pytest.raises(strata.Error, match="does not exist"):
        strata.DB(missing, read_only=True, create_if_missing=True)
    assert not os.path.exists(missing)


def test_strata_follows_a_database_plyvel_holds_and_writes(path):
    leveldb = plyvel.DB(path, create_if_missing=True, write_buffer_size=64 * 1024)
    expected = {}
    for i in range(5000):
        key, value = b"key%05d" % (i % 2000), b"value%d" % i
        leveldb.put(key, value)
        expected[key] = value
    with pytest.raises(strata.IOError):
        strata.DB(path)  # LevelDB holds the LOCK
    reader = strata.DB(path, read_only=True)
    assert contents(reader) == expected
    before = reader.iterator()
    for i in range(5000, 12000):
        key = b"key%05d" % (i % 2000)
        if i % 9 == 0:
            leveldb.delete(key)
            expected.pop(key, None)
        else:
            leveldb.put(key, b"value%d" % i)
            expected[key] = b"value%d" % i
    leveldb.compact_range()
    reader.refresh()
    assert contents(reader) == expected
    # The iterator made before the refresh reads the old state from tables LevelDB deleted.
    assert len(list(before)) == 2000
    reader.close()
    leveldb.close()


def test_checkpoints_open_in_strata_and_in_leveldb(tmp_path, path):
    writer = strata.DB(path, create_if_missing=True, write_buffer_size=64 * 1024)
    data = fill(writer, 4000, value_size=50)
    reader = strata.DB(path, read_only=True)
    from_writer = tmp_path / "from-writer"
    from_reader = os.path.join(str(tmp_path), "from-reader")
    writer.checkpoint(from_writer)
    writer.put(b"after", b"the checkpoints")
    reader.checkpoint(from_reader)
    with pytest.raises(strata.Error, match="exists"):
        writer.checkpoint(from_writer)
    reader.close()
    writer.close()
    for copy in (str(from_writer), from_reader):
        leveldb = plyvel.DB(copy, paranoid_checks=True)
        assert dict(leveldb.iterator()) == data
        leveldb.close()
        with strata.DB(copy, paranoid_checks=True) as db:
            assert contents(db) == data


def test_a_read_only_directory_opens_as_another_user():
    """`chmod -R a-w`, read as user nobody (a child process through setpriv, which needs
    root: make test runs as root)."""
    assert os.geteuid() == 0, "this test runs a reader as user nobody, which needs root"
    # pytest's temporary directories are private to root: this one nobody may enter.
    root = tempfile.mkdtemp()
    path = os.path.join(root, "db")
    os.chmod(root, 0o755)
    try:
        with strata.DB(path, create_if_missing=True) as db:
            data = fill(db, 1000)
        subprocess.run(["chmod", "-R", "a-w", path], check=True)
        script = textwrap.dedent(
            """
            import sys, strata
            try:
                strata.DB(sys.argv[1])
                sys.exit("a writable open succeeded in a write-protected directory")
            except strata.Error:
                pass
            with strata.DB(sys.argv[1], read_only=True) as db:
                print(len(list(db.iterator())))
            """
        )
        out = subprocess.run(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
             PYTHON, "-c", script, path],
            capture_output=True, text=True, check=False,
        )
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == str(len(data))
    finally:
        subprocess.run(["chmod", "-R", "u+w", path], check=True)
        shutil.rmtree(root)
