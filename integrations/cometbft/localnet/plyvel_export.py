"""Prints every pair of the LevelDB database in argv[1] as JSON Lines, {"key": hex, "value": hex}
in key order, read through plyvel, that is through real LevelDB, with every check it offers on:
paranoid_checks at open and verified checksums on every block read. Fails if there is no
database there."""

import json
import sys

import plyvel

db = plyvel.DB(sys.argv[1], create_if_missing=False, paranoid_checks=True)
try:
    for key, value in db.iterator(verify_checksums=True):
        sys.stdout.write(json.dumps({"key": key.hex(), "value": value.hex()}) + "\n")
finally:
    db.close()
