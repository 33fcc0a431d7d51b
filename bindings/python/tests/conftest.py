"""Shared fixtures: a fresh database directory and an open database in it."""

import os
import sys

import pytest

import strata

# Helper scripts run in subprocesses (lock holders, deadlock and abort checks) use this
# interpreter, so they see the same strata and plyvel.
PYTHON = sys.executable


@pytest.fixture
def path(tmp_path):
    """A database directory that does not exist yet."""
    return os.path.join(str(tmp_path), "db")


@pytest.fixture
def db(path):
    """An open, empty database, closed after the test."""
    database = strata.DB(path, create_if_missing=True)
    yield database
    database.close()


def fill(db, n, prefix=b"key-", value_size=16):
    """Puts n keys `prefix + %08d` (in batches of 100) with values derived from the key; returns
    the dict written."""
    data = {}
    for first in range(0, n, 100):
        with db.write_batch() as wb:
            for i in range(first, min(first + 100, n)):
                key = prefix + b"%08d" % i
                value = (b"v%d-" % i * value_size)[:value_size]
                wb.put(key, value)
                data[key] = value
    return data
