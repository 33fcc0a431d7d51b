"""plyvel parity of every method's keywords, judged by Debian's python3-plyvel (real LevelDB).

plyvel's signatures are read from plyvel itself: Cython embeds each one in its docstring
(``DB.get(self, bytes key, default=None, *, bool verify_checksums=False, bool fill_cache=True)``).
Every method and function of plyvel's exists in strata with the same parameter names and
defaults (and strata's own keywords, listed in ``STRATA_EXTRAS``, only after them and
keyword-only). Every boolean keyword among them (a ``True``/``False`` default) is then called with
``True``, ``False``, ``None`` and ``1`` on plyvel and on strata over the same data, and the two
outcomes (the results, or the exception class) must be equal: plyvel takes ``None`` as false
(``include_key=None`` drops the keys, ``include_start=None`` excludes ``start``) and a
non-bool as a ``TypeError``.

The docstrings are plyvel 1.5.0's (Debian's package); 1.5.1's signatures are the same (its only
change is ``DB.__enter__``/``__exit__``).
"""

import ast
import inspect
import os

import plyvel
import plyvel._plyvel as plyvel_core
import pytest

import strata

CLASSES = ["DB", "PrefixedDB", "WriteBatch", "Snapshot", "Iterator", "RawIterator"]
FUNCTIONS = ["repair_db", "destroy_db"]
NO_DEFAULT = inspect.Parameter.empty
# Strata's own keywords beyond plyvel's: after all of plyvel's, keyword-only, defaulting to
# plyvel's behaviour.
STRATA_EXTRAS = {
    ("DB", None): [
        ("read_only", False),
        ("range_deletes", False),
        ("expiring_keys", False),
        ("value_separation", None),
    ],
    ("DB", "put"): [("ttl", None)],
    ("WriteBatch", "put"): [("ttl", None)],
}


def parse_signature(doc):
    """``[(name, default)]`` of the parameters (after ``self``) in an embedded signature line."""
    head = doc.split("\n", 1)[0]
    inside = head[head.index("(") + 1 : head.rindex(")")]
    params = []
    for part in (p.strip() for p in inside.split(",")):
        if part in ("self", "*"):
            continue
        declaration, _, default = part.partition("=")
        # Drops the Cython type ("bytes key" -> "key") and the star of "*ranges".
        name = declaration.split()[-1].lstrip("*")
        params.append((name, ast.literal_eval(default) if default else NO_DEFAULT))
    return params


def plyvel_signatures():
    """``{(owner, method): [(name, default)]}`` for every documented callable of plyvel;
    ``(DB, None)`` is the constructor and ``(None, f)`` the module function ``f``."""
    signatures = {("DB", None): parse_signature(plyvel.DB.__doc__)}
    for cls in CLASSES:
        for name, member in vars(getattr(plyvel_core, cls)).items():
            doc = getattr(member, "__doc__", None) or ""
            if not name.startswith("_") and doc.startswith(f"{cls}.{name}("):
                signatures[(cls, name)] = parse_signature(doc)
    for name in FUNCTIONS:
        signatures[(None, name)] = parse_signature(getattr(plyvel, name).__doc__)
    return signatures


SIGNATURES = plyvel_signatures()


def strata_callable(owner, method):
    if owner is None:
        return getattr(strata, method)
    return getattr(strata, owner) if method is None else getattr(getattr(strata, owner), method)


def test_plyvel_signatures_were_found():
    # Guards the parsing: these are known to be there, with these keywords.
    assert ("DB", "get") in SIGNATURES and ("Snapshot", "raw_iterator") in SIGNATURES
    assert ("create_if_missing", False) in SIGNATURES[("DB", None)]
    assert ("include_start", True) in SIGNATURES[("PrefixedDB", "iterator")]
    assert ("compression", "snappy") in SIGNATURES[(None, "repair_db")]
    assert len(SIGNATURES) > 40


@pytest.mark.parametrize("owner,method", sorted(SIGNATURES, key=str))
def test_every_plyvel_callable_has_strata_parameters_and_defaults(owner, method):
    expected = SIGNATURES[(owner, method)]
    params = [
        p
        for p in inspect.signature(strata_callable(owner, method)).parameters.values()
        if p.name != "self"
    ]
    if [p.kind for p in params] == [inspect.Parameter.VAR_KEYWORD]:
        # iterator(**kwargs): every plyvel keyword must be taken, with plyvel's default.
        assert method == "iterator"
        return
    extras = STRATA_EXTRAS.get((owner, method), [])
    assert [p.name for p in params] == [name for name, _ in expected + extras]
    for param in params[len(expected) :]:
        assert param.kind == inspect.Parameter.KEYWORD_ONLY, param.name
    for param, (name, default) in zip(params, expected + extras):
        if param.default is Ellipsis:
            # Not shown by the compiled signature; checked by behaviour below.
            assert (name, default) == ("compression", "snappy")
        else:
            assert param.default == default, name


@pytest.mark.parametrize("owner", ["DB", "PrefixedDB", "Snapshot"])
def test_iterator_takes_each_plyvel_keyword_with_its_default(owner, tmp_path):
    expected = SIGNATURES[(owner, "iterator")]
    db = strata.DB(str(tmp_path / "db"), create_if_missing=True)
    db.put(b"k", b"v")
    source = {"DB": db, "PrefixedDB": db.prefixed_db(b""), "Snapshot": db.snapshot()}[owner]
    everything = list(source.iterator())
    for name, default in expected:
        assert list(source.iterator(**{name: default})) == everything, name
    db.close()


def test_compression_defaults_to_snappy(tmp_path):
    sizes = {}
    for label, options in [("default", {}), ("snappy", {"compression": "snappy"}),
                           ("none", {"compression": None})]:
        db = strata.DB(str(tmp_path / label), create_if_missing=True, **options)
        for i in range(2000):
            db.put(b"key-%06d" % i, b"compressible " * 10)
        db.compact_range()
        db.close()
        sizes[label] = sum(f.stat().st_size for f in (tmp_path / label).glob("*.ldb"))
    assert sizes["default"] == sizes["snappy"] < sizes["none"] / 2


# --- boolean keywords, called on both modules -----------------------------------------------

BOOLEAN_KEYWORDS = sorted(
    (owner, method, name)
    for (owner, method), params in SIGNATURES.items()
    for name, default in params
    if isinstance(default, bool) and method is not None
)

VALUES = [True, False, None, 1]


class Boom(Exception):
    pass


def fill(db):
    for key in [b"a", b"b", b"c", b"pa", b"pb", b"pc"]:
        db.put(key, key.upper())


def contents(db):
    return list(db.iterator())


def call(module_db, owner, method, keywords):
    """Calls `method` of the `owner` made from `module_db` with `keywords`; returns what can be
    observed of it."""
    if owner == "Snapshot":
        with module_db.snapshot() as snapshot:
            return call_on(module_db, snapshot, method, keywords)
    source = module_db if owner == "DB" else module_db.prefixed_db(b"p")
    return call_on(module_db, source, method, keywords)


def call_on(module_db, source, method, keywords):
    if method == "get":
        return source.get(b"b", **keywords)
    if method == "put":
        source.put(b"new", b"value", **keywords)
        return contents(module_db)
    if method == "delete":
        source.delete(b"b", **keywords)
        return contents(module_db)
    if method == "write_batch":
        try:
            with source.write_batch(**keywords) as batch:
                batch.put(b"batched", b"value")
                raise Boom  # a transaction discards the batch; otherwise it is written
        except Boom:
            pass
        return contents(module_db)
    if method == "iterator":
        with source.iterator(start=b"a", stop=b"c", **keywords) as iterator:
            return list(iterator)
    if method == "raw_iterator":
        with source.raw_iterator(**keywords) as raw:
            raw.seek(b"b")
            return raw.item()
    raise AssertionError(f"no call written for {method}")


def outcome(function):
    try:
        return ("returns", function())
    except Exception as error:  # the class is compared, by name (plyvel's and strata's differ)
        return ("raises", type(error).__name__)


@pytest.mark.parametrize("value", VALUES, ids=repr)
@pytest.mark.parametrize("owner,method,name", BOOLEAN_KEYWORDS)
def test_boolean_keyword_behaves_as_in_plyvel(tmp_path, owner, method, name, value):
    results = []
    for module in (plyvel, strata):
        db = module.DB(str(tmp_path / module.__name__), create_if_missing=True)
        fill(db)
        results.append(outcome(lambda: call(db, owner, method, {name: value})))
        db.close()
    assert results[1] == results[0], f"plyvel: {results[0]}, strata: {results[1]}"


def test_boolean_keywords_cover_each_method():
    # Guards the parsing: every method of plyvel's with a boolean keyword is among those called.
    writes = ["put", "delete", "write_batch"]
    assert {(owner, method) for owner, method, _ in BOOLEAN_KEYWORDS} == (
        {("DB", m) for m in ["get", *writes, "iterator", "raw_iterator"]}
        | {("PrefixedDB", m) for m in ["get", *writes, "iterator"]}
        | {("Snapshot", m) for m in ["get", "iterator", "raw_iterator"]}
    )
    assert len(BOOLEAN_KEYWORDS) == 39


@pytest.mark.parametrize("value", VALUES, ids=repr)
@pytest.mark.parametrize("name", ["create_if_missing", "error_if_exists"])
def test_open_flag_behaves_as_in_plyvel(tmp_path, name, value):
    results = []
    for module in (plyvel, strata):
        path = str(tmp_path / module.__name__)
        if name == "error_if_exists":
            module.DB(path, create_if_missing=True).close()

        def open_and_close():
            module.DB(path, **{name: value}).close()
            return os.path.isdir(path)

        results.append(outcome(open_and_close))
    assert results[1] == results[0], f"plyvel: {results[0]}, strata: {results[1]}"


@pytest.mark.parametrize("value", [None, True, False, 1, 0, "yes"], ids=repr)
def test_paranoid_checks_takes_any_object_as_in_plyvel(tmp_path, value):
    results = []
    for module in (plyvel, strata):
        path = str(tmp_path / module.__name__)

        def open_and_repair():
            db = module.DB(path, create_if_missing=True, paranoid_checks=value)
            fill(db)
            db.close()
            module.repair_db(path, paranoid_checks=value)
            db = module.DB(path, paranoid_checks=value)
            try:
                return contents(db)
            finally:
                db.close()

        results.append(outcome(open_and_repair))
    assert results[1] == results[0], f"plyvel: {results[0]}, strata: {results[1]}"
