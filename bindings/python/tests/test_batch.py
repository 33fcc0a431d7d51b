"""WriteBatch: put, delete, clear, write, append, approximate_size, and the context manager
with and without transaction semantics."""

import plyvel
import pytest

import strata


def test_batch_is_invisible_until_written(db):
    wb = db.write_batch()
    wb.put(b"a", b"1")
    wb.put(b"b", b"2")
    wb.delete(b"c")
    assert db.get(b"a") is None
    db.put(b"c", b"3")
    wb.write()
    assert (db.get(b"a"), db.get(b"b"), db.get(b"c")) == (b"1", b"2", None)


def test_write_keeps_the_batch(db):
    wb = db.write_batch()
    wb.put(b"a", b"1")
    wb.write()
    db.delete(b"a")
    wb.write()
    assert db.get(b"a") == b"1"


def test_updates_apply_in_order(db):
    wb = db.write_batch()
    wb.put(b"a", b"1")
    wb.delete(b"a")
    wb.put(b"b", b"1")
    wb.put(b"b", b"2")
    wb.write()
    assert db.get(b"a") is None
    assert db.get(b"b") == b"2"


def test_clear(db):
    wb = db.write_batch()
    wb.put(b"a", b"1")
    wb.clear()
    assert wb.approximate_size() == 12
    wb.write()
    assert db.get(b"a") is None


def test_append(db):
    first, second = db.write_batch(), db.write_batch()
    first.put(b"a", b"1")
    second.put(b"b", b"2")
    second.delete(b"a")
    first.append(second)
    first.write()
    assert db.get(b"a") is None
    assert db.get(b"b") == b"2"
    second.clear()  # the source is unchanged by append, and independent afterwards
    first.clear()
    first.put(b"c", b"3")
    first.append(first)  # appending to itself doubles it
    assert first.approximate_size() == 12 + 2 * (1 + 2 + 2)
    with pytest.raises(TypeError):
        first.append(b"not a batch")


def test_approximate_size_matches_leveldb(db, tmp_path):
    pdb = plyvel.DB(str(tmp_path / "plyvel"), create_if_missing=True)
    ours, theirs = db.write_batch(), pdb.write_batch()
    assert ours.approximate_size() == theirs.approximate_size() == 12
    for batch in (ours, theirs):
        batch.put(b"key", b"value")
        batch.delete(b"gone")
        batch.put(b"k" * 200, b"v" * 300)  # multi-byte varint lengths
    assert ours.approximate_size() == theirs.approximate_size()
    pdb.close()


def test_context_manager_writes_and_clears(db):
    with db.write_batch() as wb:
        wb.put(b"a", b"1")
        assert db.get(b"a") is None
    assert db.get(b"a") == b"1"
    assert wb.approximate_size() == 12


def test_exception_without_transaction_writes_what_was_added(db):
    with pytest.raises(ValueError):
        with db.write_batch() as wb:
            wb.put(b"a", b"1")
            raise ValueError("boom")
    assert db.get(b"a") == b"1"


def test_exception_with_transaction_discards_the_batch(db):
    with pytest.raises(ValueError, match="boom"):
        with db.write_batch(transaction=True) as wb:
            wb.put(b"a", b"1")
            wb.delete(b"b")
            raise ValueError("boom")
    assert db.get(b"a") is None
    assert wb.approximate_size() == 12


def test_transaction_without_exception_writes(db):
    with db.write_batch(transaction=True, sync=True) as wb:
        wb.put(b"a", b"1")
    assert db.get(b"a") == b"1"


def test_keyboard_interrupt_also_discards_a_transaction(db):
    with pytest.raises(KeyboardInterrupt):
        with db.write_batch(transaction=True) as wb:
            wb.put(b"a", b"1")
            raise KeyboardInterrupt
    assert db.get(b"a") is None


def test_batch_is_atomic_for_snapshots_and_iterators(db):
    with db.write_batch() as wb:
        for i in range(1000):
            wb.put(b"%04d" % i, b"x")
    snap = db.snapshot()
    it = db.iterator()
    with db.write_batch() as wb:
        for i in range(1000):
            wb.delete(b"%04d" % i)
    assert len(list(it)) == 1000
    assert len(list(snap.iterator())) == 1000
    assert list(db) == []


def test_batch_types(db):
    wb = db.write_batch()
    with pytest.raises(TypeError):
        wb.put("a", b"1")
    with pytest.raises(TypeError):
        wb.put(b"a", "1")
    with pytest.raises(TypeError):
        wb.delete(None)
    wb.put(b"a", bytearray(b"1"))
    wb.put(b"b", memoryview(b"2"))
    wb.write()
    assert (db.get(b"a"), db.get(b"b")) == (b"1", b"2")


def test_batch_arguments_are_keyword_only(db):
    with pytest.raises(TypeError):
        db.write_batch(True)


def test_batch_on_closed_db_raises_runtime_error(path):
    db = strata.DB(path, create_if_missing=True)
    wb = db.write_batch()
    db.close()
    for call in [
        lambda: wb.put(b"a", b"1"),
        lambda: wb.delete(b"a"),
        wb.clear,
        wb.write,
        wb.approximate_size,
        lambda: wb.append(wb),
        wb.__enter__,
    ]:
        with pytest.raises(RuntimeError):
            call()


def test_empty_batch_writes_nothing(db):
    # Regression: an empty batch reached the engine's write path, which assumes one update.
    db.write_batch().write()
    db.write_batch(sync=True).write()
    with db.write_batch():
        pass
    db.put(b"a", b"1")
    assert list(db) == [(b"a", b"1")]
