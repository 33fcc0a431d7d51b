"""Batched reads (`get_many`), range deletes (`delete_range`, `clear_range`) and expiring keys
(`put(..., ttl=)`), and the format extensions they need: refused without `range_deletes=True` /
`expiring_keys=True`, and, once enabled, a directory real LevelDB (plyvel) refuses to open."""

import datetime
import time

import plyvel
import pytest

import strata
from conftest import fill


def test_get_many_answers_each_key_in_the_callers_order(db):
    data = fill(db, 1000)
    db.compact_range()
    db.put(b"key-00000005", b"newer")
    data[b"key-00000005"] = b"newer"
    db.delete(b"key-00000007")
    del data[b"key-00000007"]
    keys = [b"key-00000999", b"absent", b"key-00000005", b"key-00000007", b"key-00000999", b""]
    assert db.get_many(keys) == [data.get(k) for k in keys]
    assert db.get_many(k for k in [b"key-00000001"]) == [data[b"key-00000001"]]
    assert db.get_many([]) == []
    everything = sorted(data)
    assert db.get_many(everything, fill_cache=False) == [data[k] for k in everything]
    with pytest.raises(TypeError):
        db.get_many([b"ok", "not bytes"])
    with pytest.raises(TypeError):
        db.get_many(5)


def test_get_many_at_a_snapshot_and_through_a_prefixed_snapshot(db):
    db.put(b"p-a", b"1")
    db.put(b"p-b", b"2")
    snapshot = db.snapshot()
    db.put(b"p-a", b"changed")
    db.delete(b"p-b")
    assert snapshot.get_many([b"p-b", b"p-a"]) == [b"2", b"1"]
    assert db.get_many([b"p-b", b"p-a"]) == [None, b"changed"]
    prefixed = db.prefixed_db(b"p-").snapshot()
    assert prefixed.get_many([b"a", b"b"]) == [b"changed", None]
    snapshot.close()
    with pytest.raises(RuntimeError):
        snapshot.get_many([b"p-a"])


def test_range_deletes_need_the_option_and_clear_range_works_anywhere(path):
    db = strata.DB(path, create_if_missing=True)
    data = fill(db, 500)
    with pytest.raises(strata.Error, match="range_deletes"):
        db.delete_range(b"key-00000010", b"key-00000020")
    wb = db.write_batch()
    wb.delete_range(b"a", b"b")
    with pytest.raises(strata.Error, match="range_deletes"):
        wb.write()
    assert db.clear_range(b"key-00000100", b"key-00000200") == 100
    assert db.get(b"key-00000150") is None and db.get(b"key-00000200") == data[b"key-00000200"]
    with pytest.raises(strata.Error):
        db.clear_range(b"z", b"a")  # start after stop
    db.close()
    plyvel.DB(path).close()  # still LevelDB's format


def test_delete_range_and_its_batch_form(path):
    db = strata.DB(path, create_if_missing=True, range_deletes=True)
    fill(db, 500)
    db.delete_range(b"key-00000010", b"key-00000020")
    assert db.get(b"key-00000009") is not None and db.get(b"key-00000010") is None
    assert db.get(b"key-00000019") is None and db.get(b"key-00000020") is not None
    with db.write_batch() as wb:
        wb.delete_range(b"key-00000100", b"key-00000300")
        wb.put(b"key-00000150", b"back")
    keys = list(dict(db.iterator()))
    assert len(keys) == 500 - 10 - 200 + 1 and b"key-00000150" in keys
    prefixed = db.prefixed_db(b"key-0000004")
    with prefixed.write_batch() as wb:
        wb.delete_range(b"0", b"5")
    assert db.get_many([b"key-00000040", b"key-00000044", b"key-00000045"]) == [
        None,
        None,
        b"v45-v45-v45-v45-",
    ]
    db.close()
    with pytest.raises(plyvel.Error, match="does not match existing comparator"):
        plyvel.DB(path)
    with pytest.raises(strata.Error, match="range_deletes"):
        strata.DB(path)
    strata.DB(path, range_deletes=True).close()


def test_puts_with_a_time_to_live(path):
    with pytest.raises(strata.Error, match="expiring_keys"):
        db = strata.DB(path, create_if_missing=True)
        try:
            db.put(b"k", b"v", ttl=10)
        finally:
            db.close()
    db = strata.DB(path, expiring_keys=True)
    db.put(b"lasting", b"1", ttl=3600)
    db.put(b"delta", b"2", ttl=datetime.timedelta(hours=1))
    db.put(b"gone", b"3", ttl=0)
    db.put(b"soon", b"4", ttl=0.3)
    with db.write_batch() as wb:
        wb.put(b"batched", b"5", ttl=3600)
        wb.put(b"batched-gone", b"6", ttl=0)
    keys = [b"lasting", b"delta", b"gone", b"soon", b"batched", b"batched-gone"]
    assert db.get_many(keys) == [b"1", b"2", None, b"4", b"5", None]
    time.sleep(0.4)
    assert db.get(b"soon") is None
    assert dict(db.iterator()) == {b"lasting": b"1", b"delta": b"2", b"batched": b"5"}
    for bad in [-1, float("nan"), float("inf")]:
        with pytest.raises(ValueError):
            db.put(b"k", b"v", ttl=bad)
    with pytest.raises(TypeError):
        db.put(b"k", b"v", ttl="soon")
    db.put(b"plain", b"p", ttl=None)
    db.close()
    with pytest.raises(plyvel.Error, match="does not match existing comparator"):
        plyvel.DB(path)
    reopened = strata.DB(path, expiring_keys=True)
    assert reopened.get(b"lasting") == b"1" and reopened.get(b"soon") is None
    reopened.close()
