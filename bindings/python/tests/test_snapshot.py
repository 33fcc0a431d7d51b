"""Snapshot: reads and iterators at a point in time, closing, and survival across compaction."""

import pytest

import strata


def test_snapshot_reads_the_past(db):
    db.put(b"a", b"1")
    db.put(b"b", b"1")
    snap = db.snapshot()
    db.put(b"a", b"2")
    db.delete(b"b")
    db.put(b"c", b"2")
    assert snap.get(b"a") == b"1"
    assert snap.get(b"b") == b"1"
    assert snap.get(b"c") is None
    assert snap.get(b"c", b"default") == b"default"
    assert snap.get(b"a", verify_checksums=True, fill_cache=False) == b"1"
    assert list(snap) == [(b"a", b"1"), (b"b", b"1")]
    assert list(snap.iterator(reverse=True, include_value=False)) == [b"b", b"a"]
    assert list(snap.iterator(start=b"b")) == [(b"b", b"1")]
    raw = snap.raw_iterator()
    raw.seek_to_last()
    assert raw.item() == (b"b", b"1")
    assert db.get(b"a") == b"2"


def test_snapshot_survives_compaction(path):
    db = strata.DB(path, create_if_missing=True, write_buffer_size=64 * 1024)
    for i in range(3000):
        db.put(b"%05d" % i, b"old")
    snap = db.snapshot()
    for i in range(3000):
        db.put(b"%05d" % i, b"new")
    for i in range(0, 3000, 3):
        db.delete(b"%05d" % i)
    db.compact_range()
    assert snap.get(b"00000") == b"old"
    assert all(v == b"old" for _, v in snap)
    assert len(list(snap)) == 3000
    assert len(list(db)) == 2000
    db.close()


def test_close_release_and_context_manager(db):
    db.put(b"a", b"1")
    snap = db.snapshot()
    snap.close()
    snap.close()
    snap.release()
    for call in [lambda: snap.get(b"a"), snap.iterator, snap.raw_iterator, lambda: iter(snap)]:
        with pytest.raises(RuntimeError):
            call()
    with db.snapshot() as snap:
        assert snap.get(b"a") == b"1"
    with pytest.raises(RuntimeError):
        snap.get(b"a")


def test_iterator_outlives_its_snapshot(db):
    db.put(b"a", b"1")
    snap = db.snapshot()
    it = snap.iterator()
    snap.close()
    db.put(b"b", b"2")
    assert list(it) == [(b"a", b"1")]


def test_closed_db_closes_snapshots(path):
    db = strata.DB(path, create_if_missing=True)
    snap = db.snapshot()
    db.close()
    with pytest.raises(RuntimeError):
        snap.get(b"a")
    snap.close()


def test_snapshot_key_types(db):
    snap = db.snapshot()
    with pytest.raises(TypeError):
        snap.get("a")
    with pytest.raises(TypeError):
        snap.iterator(start="a")


def test_many_snapshots(db):
    snaps = []
    for i in range(100):
        db.put(b"k", b"%d" % i)
        snaps.append(db.snapshot())
    assert [s.get(b"k") for s in snaps] == [b"%d" % i for i in range(100)]
    for s in snaps[::2]:
        s.close()
    assert [s.get(b"k") for s in snaps[1::2]] == [b"%d" % i for i in range(1, 100, 2)]
