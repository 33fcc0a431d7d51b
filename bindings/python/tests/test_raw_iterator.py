"""RawIterator: LevelDB's cursor, method for method, and against plyvel's."""

import random

import plyvel
import pytest

import strata

KEYS = [b"b", b"d", b"f"]


@pytest.fixture
def small(db):
    for key in KEYS:
        db.put(key, key.upper())
    return db


def test_starts_unpositioned(small):
    raw = small.raw_iterator()
    assert raw.valid() is False
    for call in [raw.next, raw.prev, raw.key, raw.value, raw.item]:
        with pytest.raises(strata.IteratorInvalidError):
            call()


def test_walk_forward_and_back(small):
    raw = small.raw_iterator()
    raw.seek_to_first()
    seen = []
    while raw.valid():
        seen.append(raw.item())
        raw.next()
    assert seen == [(k, k.upper()) for k in KEYS]
    with pytest.raises(strata.IteratorInvalidError):
        raw.next()
    raw.seek_to_last()
    assert raw.key() == b"f" and raw.value() == b"F"
    raw.prev()
    assert raw.key() == b"d"
    raw.prev()
    raw.prev()
    assert not raw.valid()


def test_seek(small):
    raw = small.raw_iterator()
    raw.seek(b"c")
    assert raw.key() == b"d"
    raw.seek(b"d")
    assert raw.key() == b"d"
    raw.seek(b"g")
    assert not raw.valid()
    raw.seek(b"")
    assert raw.key() == b"b"
    with pytest.raises(TypeError):
        raw.seek("b")


def test_values_are_bytes(small):
    raw = small.raw_iterator(verify_checksums=True, fill_cache=False)
    raw.seek_to_first()
    assert type(raw.key()) is bytes and type(raw.value()) is bytes


def test_sees_the_database_as_of_creation(small):
    raw = small.raw_iterator()
    small.put(b"a", b"A")
    raw.seek_to_first()
    assert raw.key() == b"b"


def test_close_and_context_manager(small):
    with small.raw_iterator() as raw:
        raw.seek_to_first()
        assert raw.valid()
    for call in [raw.valid, raw.seek_to_first, raw.seek_to_last, raw.next, raw.prev, raw.key,
                 raw.value, raw.item, lambda: raw.seek(b"a")]:
        with pytest.raises(RuntimeError):
            call()
    raw.close()


def test_empty_database(db):
    raw = db.raw_iterator()
    raw.seek_to_first()
    assert not raw.valid()
    raw.seek_to_last()
    assert not raw.valid()


def test_agrees_with_plyvel(tmp_path):
    rng = random.Random(99)
    keys = [b"%03d" % i for i in range(0, 200, 3)]
    pdb = plyvel.DB(str(tmp_path / "p"), create_if_missing=True)
    sdb = strata.DB(str(tmp_path / "s"), create_if_missing=True)
    for key in keys:
        pdb.put(key, key * 2)
        sdb.put(key, key * 2)

    def run(raw, op):
        try:
            if op[0] == "seek":
                raw.seek(op[1])
            else:
                getattr(raw, op[0])()
            return ("ok", raw.valid(), raw.item() if raw.valid() else None)
        except plyvel.IteratorInvalidError:
            return ("invalid",)
        except strata.IteratorInvalidError:
            return ("invalid",)

    for _ in range(50):
        praw, sraw = pdb.raw_iterator(), sdb.raw_iterator()
        for _ in range(40):
            op = rng.choice([("seek_to_first",), ("seek_to_last",), ("next",), ("next",),
                             ("prev",), ("prev",), ("seek", b"%03d" % rng.randrange(210))])
            assert run(sraw, op) == run(praw, op), op
    pdb.close()
    sdb.close()
