"""Python-callable comparators: ordering, names checked at open, background compactions calling
back into Python, and a comparator that raises."""

import subprocess
import textwrap

import pytest

import strata
from conftest import PYTHON


def reverse_order(a, b):
    return (a < b) - (a > b)


def case_insensitive(a, b):
    a, b = a.lower(), b.lower()
    return (a > b) - (a < b)


def test_keys_iterate_in_comparator_order(path):
    db = strata.DB(path, create_if_missing=True, comparator=reverse_order,
                   comparator_name=b"test.Reverse")
    for key in [b"b", b"a", b"c", b"e", b"d"]:
        db.put(key, key)
    assert list(db.iterator(include_value=False)) == [b"e", b"d", b"c", b"b", b"a"]
    assert list(db.iterator(include_value=False, reverse=True)) == [b"a", b"b", b"c", b"d", b"e"]
    # Bounds follow the comparator too: "start" is the first key in its order.
    assert list(db.iterator(start=b"d", stop=b"b", include_value=False)) == [b"d", b"c"]
    raw = db.raw_iterator()
    raw.seek_to_first()
    assert raw.key() == b"e"
    db.close()


def test_equal_keys_under_the_comparator_are_one_key(path):
    db = strata.DB(path, create_if_missing=True, comparator=case_insensitive,
                   comparator_name="test.CaseInsensitive")
    db.put(b"Key", b"1")
    db.put(b"KEY", b"2")
    assert db.get(b"key") == b"2"
    assert len(list(db)) == 1
    db.close()


def test_comparator_may_return_any_number(path):
    db = strata.DB(path, create_if_missing=True, comparator=lambda a, b: float(reverse_order(a, b)) * 1e30,
                   comparator_name=b"test.Float")
    for key in [b"a", b"b", b"c"]:
        db.put(key, b"")
    assert list(db.iterator(include_value=False)) == [b"c", b"b", b"a"]
    db.close()


def test_comparator_name_is_checked_at_open(path):
    db = strata.DB(path, create_if_missing=True, comparator=reverse_order,
                   comparator_name=b"test.Reverse")
    db.put(b"a", b"1")
    db.close()
    with pytest.raises(strata.Error, match="test.Reverse"):
        strata.DB(path)  # bytewise
    with pytest.raises(strata.Error):
        strata.DB(path, comparator=reverse_order, comparator_name=b"test.Other")
    with strata.DB(path, comparator=reverse_order, comparator_name=b"test.Reverse") as db:
        assert db.get(b"a") == b"1"


def test_comparator_name_must_be_text(path):
    with pytest.raises(TypeError):
        strata.DB(path, create_if_missing=True, comparator=reverse_order, comparator_name=5)
    with pytest.raises(ValueError):
        strata.DB(path, create_if_missing=True, comparator=reverse_order, comparator_name=b"\xff")


def run_script(source, timeout=120):
    return subprocess.run([PYTHON, "-c", textwrap.dedent(source)], capture_output=True,
                          text=True, timeout=timeout)


def test_background_compaction_calls_python_without_deadlock(tmp_path):
    # The engine's background thread orders keys with the Python comparator, so it needs the
    # GIL, sometimes while holding the engine's own locks. Any call of the binding that waited
    # for an engine lock while holding the GIL would hang here; hence a subprocess with a
    # timeout. Every kind of call runs from three Python threads during constant flushes and
    # compactions.
    result = run_script(f"""
        import threading, strata
        calls = [0]
        def cmp(a, b):
            calls[0] += 1
            return (a > b) - (a < b)
        db = strata.DB({str(tmp_path / "db")!r}, create_if_missing=True, comparator=cmp,
                       comparator_name=b"test.Bytewise", write_buffer_size=64 * 1024)
        def writer(base):
            for i in range(4000):
                db.put(b"%d-%06d" % (base, i), b"x" * 40)
                if i % 10 == 0:
                    db.delete(b"%d-%06d" % (base, i // 2))
                if i % 100 == 0:
                    with db.write_batch() as wb:
                        for j in range(50):
                            wb.put(b"%d-b%05d" % (base, i + j), b"y" * 40)
        def reader():
            for i in range(300):
                db.get(b"0-%06d" % i)
                with db.snapshot() as snap:
                    snap.get(b"1-%06d" % i)
                with db.iterator(start=b"0-%06d" % i, include_value=False) as it:
                    for _, _ in zip(range(20), it):
                        pass
                    it.prev()
                    it.seek(b"1")
                raw = db.raw_iterator()
                raw.seek_to_last()
                raw.close()
                db.get_property(b"leveldb.stats")
                db.approximate_sizes((b"0", b"1"), (b"1", b"2"))
                if i % 50 == 0:
                    db.compact_range(start=b"0-%06d" % i, stop=b"0-%06d" % (i + 500))
        threads = [threading.Thread(target=writer, args=(n,)) for n in range(2)]
        threads.append(threading.Thread(target=reader))
        for t in threads: t.start()
        for t in threads: t.join()
        db.compact_range()
        assert db.get(b"1-003999") == b"x" * 40
        count = len(list(db.iterator(include_value=False)))
        db.close()
        print("ok", calls[0] > 100000, count > 8000)
    """, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["ok", "True", "True"]


def test_comparator_that_raises_aborts_with_a_traceback(tmp_path):
    result = run_script(f"""
        import strata
        def cmp(a, b):
            if b"boom" in (a, b):
                raise ZeroDivisionError("comparator failed")
            return (a > b) - (a < b)
        db = strata.DB({str(tmp_path / "db")!r}, create_if_missing=True, comparator=cmp,
                       comparator_name=b"test.Raising")
        db.put(b"a", b"1")
        db.put(b"boom", b"2")
        print("not reached")
    """)
    assert result.returncode != 0
    assert "not reached" not in result.stdout
    assert "ZeroDivisionError: comparator failed" in result.stderr
    assert "aborting" in result.stderr
