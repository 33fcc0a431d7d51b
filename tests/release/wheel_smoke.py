"""Smoke test of the strata-kv wheel as a user gets it: run by tests/release/python-wheel.sh
with the interpreter of a fresh virtual environment, from outside the repository, with nothing
but that environment on PATH.

Checks that no Rust toolchain is reachable (the wheel must not need one), that `strata` is the
installed copy with its type information, and that the plyvel API works end to end."""

import importlib.metadata
import os
import shutil
import sys
import tempfile

for tool in ("cargo", "rustc", "rustup"):
    assert shutil.which(tool) is None, f"{tool} is on PATH: the test would not prove anything"
assert sys.version_info >= (3, 9)

import strata as plyvel  # the drop-in use the package promises  # noqa: E402

package = os.path.dirname(plyvel.__file__)
assert package.startswith(sys.prefix), f"strata imported from {package}, not the venv"
for name in ("py.typed", "_strata.pyi"):
    assert os.path.isfile(os.path.join(package, name)), f"{name} missing from the wheel"
assert plyvel._strata.__file__.endswith(".abi3.so"), plyvel._strata.__file__
assert plyvel.__version__ == importlib.metadata.version("strata-kv")

with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "db")
    with plyvel.DB(path, create_if_missing=True, bloom_filter_bits=10) as db:
        db.put(b"user:1", b"ada")
        with db.write_batch(transaction=True) as batch:
            batch.put(b"user:2", b"grace")
            batch.put(b"user:3", b"barbara")
            batch.delete(b"user:1")
        with db.snapshot() as snapshot:
            db.put(b"user:4", b"frances")
            assert list(snapshot.iterator(include_value=False)) == [b"user:2", b"user:3"]
        users = db.prefixed_db(b"user:")
        assert list(users.iterator(start=b"3")) == [(b"3", b"barbara"), (b"4", b"frances")]
        assert db.get(b"user:1") is None and db.get(b"user:2", fill_cache=None) == b"grace"
        db.compact_range()
    plyvel.repair_db(path)
    with plyvel.DB(path) as db:
        assert len(list(db)) == 3
    plyvel.destroy_db(path)
    assert not os.path.exists(os.path.join(path, "CURRENT"))

print(f"wheel smoke test: ok on Python {sys.version.split()[0]} ({sys.executable})")
