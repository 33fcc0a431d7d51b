"""Thread use: concurrent writers and readers, iterators and snapshots that stay consistent while
other threads write, one iterator shared by threads, and close() racing with callers."""

import threading
import time

import pytest

import strata


def run_threads(target, n, *args):
    errors = []

    def wrapper(i):
        try:
            target(i, *args)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=wrapper, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    if errors:
        raise errors[0]


def test_concurrent_writers_and_readers(path):
    db = strata.DB(path, create_if_missing=True, write_buffer_size=128 * 1024)

    def work(i):
        for j in range(3000):
            key = b"%d-%05d" % (i, j)
            db.put(key, key)
            if j % 7 == 0:
                assert db.get(key) == key
            if j % 11 == 0:
                db.delete(b"%d-%05d" % (i, j // 2))
                db.put(b"%d-%05d" % (i, j // 2), b"again")

    run_threads(work, 4)
    for i in range(4):
        assert db.get(b"%d-02999" % i) == b"%d-02999" % i
    assert len(list(db.iterator(include_value=False))) == 12000
    db.close()


def test_iterators_and_snapshots_stay_consistent_under_writes(path):
    db = strata.DB(path, create_if_missing=True, write_buffer_size=64 * 1024)
    for i in range(2000):
        db.put(b"%05d" % i, b"v0")
    stop = threading.Event()

    def writer(_):
        generation = 0
        while not stop.is_set():
            generation += 1
            with db.write_batch() as wb:  # every write changes all keys at once
                for i in range(0, 2000, 50):
                    wb.put(b"%05d" % i, b"v%d" % generation)

    def reader(_):
        for _ in range(15):
            with db.snapshot() as snap:
                values = {v for k, v in snap.iterator() if int(k) % 50 == 0}
                assert len(values) == 1, values  # one batch's generation, never a mix
            it = db.iterator(include_key=False)
            assert len(list(it)) == 2000

    t = threading.Thread(target=writer, args=(0,))
    t.start()
    try:
        run_threads(reader, 2)
    finally:
        stop.set()
        t.join()
    db.close()


def test_one_iterator_shared_by_threads_yields_each_entry_once(db):
    for i in range(5000):
        db.put(b"%05d" % i, b"")
    it = db.iterator(include_value=False)
    seen = [[] for _ in range(4)]

    def consume(i):
        for key in it:
            seen[i].append(key)

    run_threads(consume, 4)
    all_keys = sorted(k for part in seen for k in part)
    assert all_keys == [b"%05d" % i for i in range(5000)]


def test_close_while_other_threads_use_the_db(path):
    db = strata.DB(path, create_if_missing=True)
    for i in range(1000):
        db.put(b"%04d" % i, b"x" * 100)
    started = threading.Barrier(5)
    outcomes = []

    def user(i):
        started.wait()
        try:
            while True:
                db.put(b"t%d" % i, b"x")
                db.get(b"0001")
                for _ in db.iterator():
                    pass
        except RuntimeError:
            outcomes.append("closed")

    threads = [threading.Thread(target=user, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    started.wait()
    time.sleep(0.2)
    db.close()
    for t in threads:
        t.join(timeout=60)
    assert outcomes == ["closed"] * 4
    strata.DB(path).close()  # and the lock was released


def test_snapshot_and_iterator_usable_from_other_threads(db):
    db.put(b"a", b"1")
    snap = db.snapshot()
    it = db.iterator()
    db.put(b"a", b"2")
    results = []

    def use(_):
        results.append((snap.get(b"a"), list(it)))

    run_threads(use, 1)
    assert results == [(b"1", [(b"a", b"1")])]


@pytest.mark.parametrize("n", [8])
def test_many_threads_open_iterators_and_snapshots(db, n):
    for i in range(500):
        db.put(b"%03d" % i, b"v")

    def work(i):
        for _ in range(20):
            with db.snapshot() as s, s.iterator(start=b"%03d" % (i * 10)) as it:
                assert next(it)[0] == b"%03d" % (i * 10)
            raw = db.raw_iterator()
            raw.seek_to_last()
            assert raw.key() == b"499"
            raw.close()

    run_threads(work, n)
