"""Interop with real LevelDB 1.23 through Debian's python3-plyvel: a database written by plyvel
opens in strata with every key and value, and the reverse; the LOCK keeps the other out."""

import os
import random
import subprocess
import textwrap

import plyvel
import pytest

import strata
from conftest import PYTHON

OPTION_SETS = [
    {},
    {"compression": None},
    {"bloom_filter_bits": 10},
    {"block_size": 1024, "block_restart_interval": 4, "write_buffer_size": 64 * 1024,
     "max_file_size": 1 << 20},
]


def random_workload(seed, n=20000):
    """Puts (some overwritten) and deletes over binary keys of varied lengths, with a few
    large values."""
    rng = random.Random(seed)
    ops = []
    for i in range(n):
        key = b"%06d" % rng.randrange(n) + rng.randbytes(rng.choice([0, 1, 8]))
        if rng.random() < 0.15:
            ops.append(("delete", key, None))
        else:
            size = 20000 if rng.random() < 0.001 else rng.randrange(0, 200)
            ops.append(("put", key, (rng.randbytes(64) * (size // 64 + 1))[:size]))
    return ops


def apply(db, ops):
    expected = {}
    wb = db.write_batch()
    for i, (kind, key, value) in enumerate(ops):
        if kind == "put":
            wb.put(key, value)
            expected[key] = value
        else:
            wb.delete(key)
            expected.pop(key, None)
        if i % 64 == 63:
            wb.write()
            wb.clear()
    wb.write()
    return expected


def contents(db):
    return list(db.iterator())


@pytest.mark.parametrize("options", OPTION_SETS)
def test_strata_reads_a_database_written_by_leveldb(tmp_path, options):
    path = str(tmp_path / "db")
    pdb = plyvel.DB(path, create_if_missing=True, **options)
    expected = apply(pdb, random_workload(1))
    pdb.compact_range(start=b"001", stop=b"004")  # some data in deeper levels, some not
    snapshot_of_truth = contents(pdb)
    pdb.close()
    assert snapshot_of_truth == sorted(expected.items())

    with strata.DB(path, **options) as db:
        assert contents(db) == snapshot_of_truth
        assert list(db.iterator(reverse=True)) == snapshot_of_truth[::-1]
        for key, value in snapshot_of_truth[::37]:
            assert db.get(key, verify_checksums=True) == value
        assert db.get(b"absent") is None


@pytest.mark.parametrize("options", OPTION_SETS)
def test_leveldb_reads_a_database_written_by_strata(tmp_path, options):
    path = str(tmp_path / "db")
    db = strata.DB(path, create_if_missing=True, **options)
    expected = apply(db, random_workload(2))
    db.compact_range(start=b"001", stop=b"004")
    truth = contents(db)
    db.close()
    assert truth == sorted(expected.items())

    pdb = plyvel.DB(path, **options)
    assert contents(pdb) == truth
    for key, value in truth[::37]:
        assert pdb.get(key, verify_checksums=True) == value
    pdb.close()


def test_round_trip_leveldb_strata_leveldb(tmp_path):
    path = str(tmp_path / "db")
    pdb = plyvel.DB(path, create_if_missing=True, bloom_filter_bits=10)
    expected = apply(pdb, random_workload(3, 5000))
    pdb.close()
    with strata.DB(path, bloom_filter_bits=10) as db:
        expected.update(apply(db, [("put", b"from-strata-%d" % i, b"v") for i in range(1000)]))
        for key in list(expected)[:500]:
            db.delete(key)
            del expected[key]
        db.compact_range()
    pdb = plyvel.DB(path, bloom_filter_bits=10)
    assert contents(pdb) == sorted(expected.items())
    pdb.put(b"from-leveldb", b"again")
    pdb.close()
    with strata.DB(path) as db:
        assert db.get(b"from-leveldb") == b"again"
        assert len(contents(db)) == len(expected) + 1


def test_strata_repairs_a_leveldb_database(tmp_path):
    path = str(tmp_path / "db")
    pdb = plyvel.DB(path, create_if_missing=True)
    expected = apply(pdb, random_workload(4, 3000))
    pdb.compact_range()
    pdb.close()
    for name in os.listdir(path):
        if name.startswith("MANIFEST") or name == "CURRENT":
            os.remove(os.path.join(path, name))
    strata.repair_db(path)
    pdb = plyvel.DB(path)
    assert contents(pdb) == sorted(expected.items())
    pdb.close()


def test_destroy_removes_a_leveldb_database(tmp_path):
    path = str(tmp_path / "db")
    pdb = plyvel.DB(path, create_if_missing=True)
    pdb.put(b"a", b"1")
    pdb.close()
    strata.destroy_db(path)
    with pytest.raises(plyvel.Error):
        plyvel.DB(path)


def test_properties_have_leveldbs_shape(tmp_path):
    for name, module in [("plyvel", plyvel), ("strata", strata)]:
        db = module.DB(str(tmp_path / name), create_if_missing=True)
        apply(db, random_workload(5, 3000))
        db.compact_range()
        files = [int(db.get_property(b"leveldb.num-files-at-level%d" % level)) for level in range(7)]
        assert files[0] == 0 and sum(files) >= 1, (name, files)
        assert db.get_property(b"leveldb.num-files-at-level7") is None, name
        assert db.get_property(b"leveldb.no-such-thing") is None, name
        assert b"Compactions" in db.get_property(b"leveldb.stats"), name
        assert b"--- level 0 ---" in db.get_property(b"leveldb.sstables"), name
        db.close()


LOCK_HOLDER = """
    import sys
    import {module}
    db = {module}.DB(sys.argv[1], create_if_missing=True)
    print("open", flush=True)
    sys.stdin.readline()
    db.close()
"""


@pytest.mark.parametrize("holder,opener", [("plyvel", strata), ("strata", plyvel)])
def test_lock_keeps_the_other_engine_out(tmp_path, holder, opener):
    path = str(tmp_path / "db")
    proc = subprocess.Popen(
        [PYTHON, "-c", textwrap.dedent(LOCK_HOLDER.format(module=holder)), path],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stdout.readline().strip() == "open"
        with pytest.raises(opener.IOError):
            opener.DB(path)
    finally:
        proc.stdin.write("\n")
        proc.stdin.flush()
        proc.wait(timeout=60)
    assert proc.returncode == 0
    opener.DB(path).close()  # free once the holder is gone
