"""Iterator: ranges (start/stop/include_*), prefix, reverse, item shapes, stepping back and
forth, seeks, closing; checked exhaustively against the documented semantics and, op by op,
against plyvel over real LevelDB."""

import itertools
import random

import plyvel
import pytest

import strata

KEYS = [b"b", b"d", b"f", b"h"]
# Bounds and targets: every present key, every gap, the ends of the key space.
PROBES = [None, b"", b"a", b"b", b"c", b"d", b"e", b"f", b"g", b"h", b"i", b"\xff"]


@pytest.fixture
def small(db):
    for key in KEYS:
        db.put(key, key.upper())
    return db


def expected_range(keys, start, stop, include_start, include_stop, reverse):
    out = [
        k
        for k in sorted(keys)
        if (start is None or k > start or (include_start and k == start))
        and (stop is None or k < stop or (include_stop and k == stop))
    ]
    return out[::-1] if reverse else out


def test_iterating_the_db_gives_every_pair_in_order(small):
    assert list(small) == [(k, k.upper()) for k in KEYS]


def test_every_range_matches_its_definition(small):
    for start, stop, include_start, include_stop, reverse in itertools.product(
        PROBES, PROBES, [True, False], [True, False], [False, True]
    ):
        it = small.iterator(
            start=start,
            stop=stop,
            include_start=include_start,
            include_stop=include_stop,
            reverse=reverse,
            include_value=False,
        )
        expected = expected_range(KEYS, start, stop, include_start, include_stop, reverse)
        assert list(it) == expected, (start, stop, include_start, include_stop, reverse)


@pytest.mark.parametrize("reverse", [False, True])
def test_prefix_selects_keys_with_that_prefix(db, reverse):
    keys = [b"a", b"ab", b"abc", b"abd", b"ac", b"b", b"\xff", b"\xff\x00", b"\xff\xff", b"\xff\xff\x01"]
    for key in keys:
        db.put(key, b"")
    for prefix in [b"", b"a", b"ab", b"abc", b"abz", b"b", b"\xff", b"\xff\xff", b"z"]:
        expected = sorted(k for k in keys if k.startswith(prefix))
        got = list(db.iterator(prefix=prefix, include_value=False, reverse=reverse))
        assert got == (expected[::-1] if reverse else expected), prefix


def test_prefix_excludes_start_and_stop(db):
    with pytest.raises(TypeError):
        db.iterator(prefix=b"a", start=b"a")
    with pytest.raises(TypeError):
        db.iterator(prefix=b"a", stop=b"b")


def test_include_key_and_include_value_shape_items(small):
    assert next(small.iterator()) == (b"b", b"B")
    assert next(small.iterator(include_value=False)) == b"b"
    assert next(small.iterator(include_key=False)) == b"B"
    assert list(small.iterator(include_key=False, include_value=False)) == [None] * 4


@pytest.mark.parametrize("name", ["start", "stop", "prefix"])
def test_bounds_must_be_bytes(small, name):
    with pytest.raises(TypeError):
        small.iterator(**{name: "b"})


def test_iterator_keywords_are_checked_alike_on_db_prefixed_db_and_snapshot(small):
    snapshot = small.snapshot()
    for owner in [small, small.prefixed_db(b""), snapshot]:
        with pytest.raises(TypeError, match="unexpected keyword argument 'revers'"):
            owner.iterator(revers=True)
        with pytest.raises(TypeError):
            owner.iterator(True)  # keyword-only, as in plyvel
        # A flag given as None is false, as plyvel takes it (test_plyvel_parity.py compares).
        defaults = list(owner.iterator())
        assert list(owner.iterator(reverse=None, include_stop=None, verify_checksums=None,
                                   fill_cache=None)) == defaults
        assert list(owner.iterator(include_value=None)) == [key for key, _ in defaults]
        assert list(owner.iterator(include_key=None)) == [value for _, value in defaults]
        assert list(owner.iterator(start=defaults[0][0], include_start=None)) == defaults[1:]
        assert list(owner.iterator(reverse=True, start=None, stop=None, prefix=None)) == defaults[::-1]
        with pytest.raises(TypeError, match="argument 'reverse'"):
            owner.iterator(reverse=1)
    snapshot.close()


def test_user_guide_stepping_example(db):
    for i in range(1, 6):
        db.put(b"key-%d" % i, b"value-%d" % i)
    it = db.iterator(include_value=False)
    assert next(it) == b"key-1"
    assert next(it) == b"key-2"
    assert next(it) == b"key-3"
    assert it.prev() == b"key-3"
    assert next(it) == b"key-3"
    assert next(it) == b"key-4"
    assert next(it) == b"key-5"
    with pytest.raises(StopIteration):
        next(it)
    assert it.prev() == b"key-5"
    it = db.iterator(include_value=False)
    it.seek(b"key-3")
    assert next(it) == b"key-3"
    it.seek_to_start()
    assert next(it) == b"key-1"


def test_prev_at_the_start_raises_stop_iteration(small):
    it = small.iterator()
    with pytest.raises(StopIteration):
        it.prev()
    assert next(it) == (b"b", b"B")
    assert it.prev() == (b"b", b"B")
    with pytest.raises(StopIteration):
        it.prev()


def test_reverse_swaps_next_and_prev(small):
    it = small.iterator(reverse=True, include_value=False)
    assert next(it) == b"h"
    assert next(it) == b"f"
    assert it.prev() == b"f"
    assert it.prev() == b"h"
    with pytest.raises(StopIteration):
        it.prev()
    assert list(it) == [b"h", b"f", b"d", b"b"]


def test_seek_to_stop_then_prev_walks_back(small):
    it = small.iterator(start=b"c", stop=b"g", include_value=False)
    it.seek_to_stop()
    with pytest.raises(StopIteration):
        next(it)
    assert it.prev() == b"f"
    assert it.prev() == b"d"
    with pytest.raises(StopIteration):
        it.prev()
    it.seek_to_start()
    assert list(it) == [b"d", b"f"]


def test_seek_is_clamped_to_the_range(small):
    it = small.iterator(start=b"c", stop=b"g", include_value=False)
    it.seek(b"a")
    assert next(it) == b"d"
    it.seek(b"e")
    assert next(it) == b"f"
    it.seek(b"z")
    with pytest.raises(StopIteration):
        next(it)
    assert it.prev() == b"f"


def test_seek_past_everything(small):
    it = small.iterator(include_value=False)
    it.seek(b"\xff")
    with pytest.raises(StopIteration):
        next(it)
    assert it.prev() == b"h"


def test_seek_on_reverse_iterator_yields_keys_before_target(small):
    it = small.iterator(reverse=True, include_value=False)
    it.seek(b"e")
    assert next(it) == b"d"
    assert next(it) == b"b"
    with pytest.raises(StopIteration):
        next(it)


def test_exhausted_iterator_stays_exhausted(small):
    it = small.iterator(include_value=False)
    assert list(it) == KEYS
    with pytest.raises(StopIteration):
        next(it)
    assert list(it) == []


def test_empty_database(db):
    assert list(db) == []
    it = db.iterator()
    with pytest.raises(StopIteration):
        it.prev()
    it.seek(b"a")
    with pytest.raises(StopIteration):
        next(it)
    assert list(db.iterator(reverse=True)) == []


def test_iterator_sees_the_database_as_of_its_creation(small):
    it = small.iterator(include_value=False)
    small.put(b"c", b"C")
    small.delete(b"d")
    assert list(it) == KEYS
    assert list(small.iterator(include_value=False)) == [b"b", b"c", b"f", b"h"]


def test_iterator_survives_compaction(path):
    db = strata.DB(path, create_if_missing=True, write_buffer_size=64 * 1024)
    for i in range(5000):
        db.put(b"%06d" % i, b"x" * 50)
    it = db.iterator(include_value=False)
    assert next(it) == b"000000"
    for i in range(5000):
        db.delete(b"%06d" % i)
    db.compact_range()
    assert list(db) == []
    assert len(list(it)) == 4999
    db.close()


def test_close_and_context_manager(small):
    it = small.iterator()
    it.close()
    it.close()
    for call in [lambda: next(it), it.prev, it.seek_to_start, it.seek_to_stop, lambda: it.seek(b"a")]:
        with pytest.raises(RuntimeError):
            call()
    with small.iterator() as it:
        assert next(it) == (b"b", b"B")
    with pytest.raises(RuntimeError):
        it.seek_to_start()


def test_closing_the_db_closes_its_iterators(path):
    db = strata.DB(path, create_if_missing=True)
    db.put(b"a", b"1")
    it = db.iterator()
    raw = db.raw_iterator()
    db.close()
    with pytest.raises(RuntimeError):
        next(it)
    with pytest.raises(RuntimeError):
        raw.seek_to_first()
    # The lock is free again even though the iterators are alive.
    strata.DB(path).close()


def test_iterator_keeps_its_database_open(path):
    db = strata.DB(path, create_if_missing=True)
    db.put(b"a", b"1")
    db.close()
    it = strata.DB(path).iterator()  # the DB object is dropped at once
    assert list(it) == [(b"a", b"1")]


# --- where plyvel misbehaves, strata does what plyvel documents --------------------------------


def test_reverse_iterator_yields_an_inclusive_start_that_is_the_last_key(db):
    db.put(b"a", b"")
    db.put(b"b", b"")
    assert list(db.iterator(reverse=True, start=b"b", include_value=False)) == [b"b"]
    it = db.iterator(start=b"b", include_value=False)
    it.seek_to_stop()
    assert it.prev() == b"b"


def test_prev_after_seek_below_start_stays_in_range(small):
    it = small.iterator(start=b"d", include_value=False)
    it.seek(b"a")
    with pytest.raises(StopIteration):
        it.prev()
    assert next(it) == b"d"


def test_seek_onto_excluded_start_skips_it(small):
    it = small.iterator(start=b"d", include_start=False, include_value=False)
    it.seek(b"d")
    assert next(it) == b"f"


# --- differential: the same operations on plyvel (real LevelDB) and strata ----------------------

UNIVERSE = [b"k%02d" % i for i in range(40)]
PRESENT = UNIVERSE[::2]  # even numbers are keys; odd ones are gaps
ABSENT = UNIVERSE[1::2] + [b"k", b"k\xff", b"j", b"l"]


def _step(it, op):
    try:
        if op[0] == "next":
            return ("item", next(it))
        if op[0] == "prev":
            return ("item", it.prev())
        if op[0] == "seek":
            return ("none", it.seek(op[1]))
        if op[0] == "seek_to_start":
            return ("none", it.seek_to_start())
        return ("none", it.seek_to_stop())
    except StopIteration:
        return ("stop", None)


def _random_iterator_args(rng):
    args = {
        "reverse": rng.random() < 0.5,
        "include_key": True,  # needed to tell plyvel's out-of-range answers
        "include_value": rng.random() < 0.7,
    }
    shape = rng.random()
    if shape < 0.2:
        args["prefix"] = rng.choice([b"k0", b"k1", b"k2", b"k3", b"k"])
    elif shape < 0.9:
        # Mostly bounds between keys; bounds on keys reach plyvel's edge cases.
        bounds = ABSENT * 3 + PRESENT
        if rng.random() < 0.7:
            args["start"] = rng.choice(bounds)
            args["include_start"] = rng.random() < 0.5
        if rng.random() < 0.7:
            args["stop"] = rng.choice(bounds)
            args["include_stop"] = rng.random() < 0.5
    return args


def _in_range(key, args):
    if "prefix" in args:
        return key.startswith(args["prefix"])
    start, stop = args.get("start"), args.get("stop")
    include_start, include_stop = args.get("include_start", True), args.get("include_stop", False)
    return (start is None or key > start or (include_start and key == start)) and (
        stop is None or key < stop or (include_stop and key == stop)
    )


def _key(result, args):
    return result[1][0] if args["include_value"] else result[1]


def _plyvel_departs(ours, theirs, args):
    """True when plyvel's answer is one of its known edge-case departures and ours is what
    plyvel documents (see the tests above)."""
    if theirs[0] == "item" and not _in_range(_key(theirs, args), args):
        # plyvel stepped out of the range (prev after seek, seek onto excluded start); we must
        # not have.
        return ours[0] == "stop" or (ours[0] == "item" and _in_range(_key(ours, args), args))
    return (
        theirs[0] == "stop"
        and ours[0] == "item"
        and _key(ours, args) == args.get("start")
        and args.get("include_start", True)
    )  # plyvel drops an inclusive start that is the last key going backwards


def _compare_runs(rng, pdb, sdb, cases, data_changes=True):
    compared = departures = 0
    for case in range(cases):
        if data_changes and case % 50 == 0:  # change the data now and then, deletions included
            for key in rng.sample(PRESENT, 4):
                if rng.random() < 0.5:
                    pdb.delete(key)
                    sdb.delete(key)
                else:
                    pdb.put(key, b"new")
                    sdb.put(key, b"new")
        args = _random_iterator_args(rng)
        pit, sit = pdb.iterator(**args), sdb.iterator(**args)
        for _ in range(30):
            r = rng.random()
            if r < 0.45:
                op = ("next",)
            elif r < 0.8:
                op = ("prev",)
            elif r < 0.9:
                op = ("seek", rng.choice(UNIVERSE + ABSENT))
            elif r < 0.95:
                op = ("seek_to_start",)
            else:
                op = ("seek_to_stop",)
            ours, theirs = _step(sit, op), _step(pit, op)
            if ours != theirs:
                assert _plyvel_departs(ours, theirs, args), (case, args, op, ours, theirs)
                departures += 1
                break  # the two iterators now stand in different places
            compared += 1
        pit.close()
        sit.close()
    return compared, departures


def test_iterators_agree_with_plyvel(tmp_path):
    rng = random.Random(20240601)
    pdb = plyvel.DB(str(tmp_path / "plyvel"), create_if_missing=True)
    sdb = strata.DB(str(tmp_path / "strata"), create_if_missing=True)
    for key in PRESENT:
        pdb.put(key, key + b"-value")
        sdb.put(key, key + b"-value")
    compared, departures = _compare_runs(rng, pdb, sdb, 500)
    assert compared > 10000
    assert departures < 200
    pdb.close()
    sdb.close()


def test_prefixed_iterators_agree_with_plyvel(tmp_path):
    rng = random.Random(7)
    pdb = plyvel.DB(str(tmp_path / "plyvel"), create_if_missing=True)
    sdb = strata.DB(str(tmp_path / "strata"), create_if_missing=True)
    # Only keys after the prefixed region besides it: plyvel's prev() can leave a region
    # backwards and return a mangled key, which no comparison could classify.
    for outer in [b"p", b"q"]:
        for key in PRESENT:
            pdb.put(outer + key, key + b"-value")
            sdb.put(outer + key, key + b"-value")
    compared, departures = _compare_runs(
        rng, pdb.prefixed_db(b"p"), sdb.prefixed_db(b"p"), 300, data_changes=False
    )
    assert compared > 6000
    pdb.close()
    sdb.close()
