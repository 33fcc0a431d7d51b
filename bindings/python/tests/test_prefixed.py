"""PrefixedDB: keys prefixed on the way in and stripped on the way out, nested prefixes, and
batches, iterators and snapshots through a prefix."""

import pytest

import strata


@pytest.fixture
def filled(db):
    for key in [b"a", b"p", b"p-1", b"p-2", b"p-3", b"p\xff", b"q-1", b"\xff\xff-1"]:
        db.put(key, key.upper())
    return db


def test_attributes(filled):
    p = filled.prefixed_db(b"p-")
    assert p.db is filled
    assert p.prefix == b"p-"
    assert repr(p) == "<strata.PrefixedDB with prefix b'p-'>"
    with pytest.raises(TypeError):
        filled.prefixed_db("p-")


def test_get_put_delete(filled):
    p = filled.prefixed_db(b"p-")
    assert p.get(b"1") == b"P-1"
    assert p.get(b"9") is None
    assert p.get(b"9", b"d") == b"d"
    p.put(b"9", b"nine", sync=True)
    assert filled.get(b"p-9") == b"nine"
    p.delete(b"1")
    assert filled.get(b"p-1") is None
    assert p.get(b"2", verify_checksums=True, fill_cache=False) == b"P-2"


def test_iteration_strips_the_prefix_and_stays_inside(filled):
    p = filled.prefixed_db(b"p-")
    assert list(p) == [(b"1", b"P-1"), (b"2", b"P-2"), (b"3", b"P-3")]
    assert list(p.iterator(reverse=True, include_value=False)) == [b"3", b"2", b"1"]
    assert list(p.iterator(start=b"2", include_value=False)) == [b"2", b"3"]
    assert list(p.iterator(stop=b"2", include_value=False)) == [b"1"]
    assert list(p.iterator(stop=b"2", include_stop=True, include_value=False)) == [b"1", b"2"]
    assert list(p.iterator(prefix=b"3", include_value=False)) == [b"3"]
    it = p.iterator(include_value=False)
    it.seek(b"2")
    assert next(it) == b"2"


def test_all_ff_prefix_has_no_upper_bound(filled):
    p = filled.prefixed_db(b"\xff\xff")
    assert list(p) == [(b"-1", b"\xff\xff-1")]
    assert list(p.iterator(reverse=True)) == [(b"-1", b"\xff\xff-1")]


def test_nested_prefixes(filled):
    nested = filled.prefixed_db(b"p").prefixed_db(b"-")
    assert nested.prefix == b"p-"
    assert nested.db is filled
    assert list(nested.iterator(include_value=False)) == [b"1", b"2", b"3"]
    nested.put(b"4", b"x")
    assert filled.get(b"p-4") == b"x"


def test_write_batch_through_a_prefix(filled):
    p = filled.prefixed_db(b"p-")
    with p.write_batch() as wb:
        wb.put(b"5", b"five")
        wb.delete(b"1")
    assert filled.get(b"p-5") == b"five"
    assert filled.get(b"p-1") is None
    with pytest.raises(RuntimeError):
        with p.write_batch(transaction=True) as wb:
            wb.put(b"6", b"six")
            raise RuntimeError
    assert filled.get(b"p-6") is None


def test_snapshot_through_a_prefix(filled):
    p = filled.prefixed_db(b"p-")
    snap = p.snapshot()
    p.put(b"1", b"changed")
    assert snap.get(b"1") == b"P-1"
    assert list(snap.iterator(include_value=False)) == [b"1", b"2", b"3"]
    assert list(snap) == [(b"1", b"P-1"), (b"2", b"P-2"), (b"3", b"P-3")]
    snap.close()


def test_prefixed_db_on_closed_db(path):
    db = strata.DB(path, create_if_missing=True)
    p = db.prefixed_db(b"x")
    db.close()
    for call in [lambda: p.get(b"a"), lambda: p.put(b"a", b"b"), lambda: p.delete(b"a"),
                 p.write_batch, p.iterator, p.snapshot, lambda: iter(p)]:
        with pytest.raises(RuntimeError):
            call()
