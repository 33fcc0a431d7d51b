#!/usr/bin/env python3
"""Compares strata with plyvel (real LevelDB) on small items, in one run, same machine.

Run by hand, not by the tests, in a virtualenv that has a release build of strata and sees
plyvel (e.g. `python3 -m venv --system-site-packages` with Debian's python3-plyvel):

    maturin build --release -i python && pip install target/wheels/strata-*.whl
    python bench.py                 # 1M items
    python bench.py -n 100000       # quicker

Workloads, each on a fresh database per engine, with the same pre-built keys and values:

    put        n single puts, keys in random order
    get        n gets of existing keys, random order
    iterate    one forward scan over all n items (key, value) tuples
    iter_rev   one reverse scan
    batch_put  n puts in batches of 1000
    get_hot    n gets of one key in a 1000-key database: mostly the per-call cost of the binding
    get_miss   n gets of absent keys (bloom filter on): the engine's shortest read path

Each engine runs `--rounds` times, alternating, and the best time of each workload counts (the
machines this runs on are shared). Prints microseconds per operation for each engine and
strata's speed relative to plyvel (above 1: strata is faster).
"""

import argparse
import gc
import os
import random
import shutil
import sys
import tempfile
import time


def timed(fn):
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        fn()
        return time.perf_counter() - start
    finally:
        gc.enable()


def run_engine(module, workdir, keys, order, value, n):
    results = {}
    path = os.path.join(workdir, module.__name__)
    shutil.rmtree(path, ignore_errors=True)

    db = module.DB(path, create_if_missing=True, bloom_filter_bits=10)
    put = db.put

    def do_put():
        for i in order:
            put(keys[i], value)

    results["put"] = timed(do_put) / n
    db.compact_range()  # both engines read from the same shape: tables, empty memtable

    get = db.get

    def do_get():
        for i in order:
            get(keys[i])

    results["get"] = timed(do_get) / n
    assert db.get(keys[0]) == value

    def do_iterate():
        count = 0
        for _ in db.iterator():
            count += 1
        assert count == n, count

    results["iterate"] = timed(do_iterate) / n

    def do_iter_rev():
        count = 0
        for _ in db.iterator(reverse=True):
            count += 1
        assert count == n, count

    results["iter_rev"] = timed(do_iter_rev) / n

    missing = [k + b"-missing" for k in keys]

    def do_get_miss():
        for i in order:
            get(missing[i])

    results["get_miss"] = timed(do_get_miss) / n
    db.close()
    shutil.rmtree(path)

    db = module.DB(path, create_if_missing=True)

    def do_batch_put():
        for first in range(0, n, 1000):
            wb = db.write_batch()
            for i in order[first:first + 1000]:
                wb.put(keys[i], value)
            wb.write()

    results["batch_put"] = timed(do_batch_put) / n
    db.close()
    shutil.rmtree(path)

    db = module.DB(path, create_if_missing=True)
    for i in range(1000):
        db.put(keys[i], value)
    hot = keys[500]
    get = db.get

    def do_get_hot():
        for _ in range(n):
            get(hot)

    results["get_hot"] = timed(do_get_hot) / n
    db.close()
    shutil.rmtree(path)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=1_000_000, help="items (default 1M)")
    parser.add_argument("--value-size", type=int, default=100)
    parser.add_argument("--dir", default=None, help="where to put the databases")
    parser.add_argument("--engines", default="plyvel,strata")
    parser.add_argument("--rounds", type=int, default=3,
                        help="runs of every engine, alternating; the best time of each counts")
    args = parser.parse_args()

    modules = []
    for name in args.engines.split(","):
        try:
            modules.append(__import__(name))
        except ImportError as e:
            print(f"skipping {name}: {e}", file=sys.stderr)

    rng = random.Random(301)
    keys = [b"%016d" % i for i in range(args.n)]
    order = list(range(args.n))
    rng.shuffle(order)
    value = rng.randbytes(args.value_size // 2) * 2

    workdir = tempfile.mkdtemp(prefix="strata-bench-", dir=args.dir)
    try:
        table = {}
        for round_ in range(args.rounds):
            # Alternate the order so that neither engine always runs on a warmer machine.
            for module in modules[::-1] if round_ % 2 else modules:
                results = run_engine(module, workdir, keys, order, value, args.n)
                best = table.setdefault(module.__name__, results)
                for workload, seconds in results.items():
                    best[workload] = min(best[workload], seconds)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    names = list(table)
    print(f"{args.n} items, 16-byte keys, {len(value)}-byte values; microseconds per operation,"
          f" best of {args.rounds}")
    header = f"{'workload':<10}" + "".join(f"{name:>12}" for name in names)
    if "strata" in table and "plyvel" in table:
        header += f"{'strata vs plyvel':>20}"
    print(header)
    for workload in table[names[0]]:
        row = f"{workload:<10}" + "".join(f"{table[name][workload] * 1e6:>12.3f}" for name in names)
        if "strata" in table and "plyvel" in table:
            ratio = table["plyvel"][workload] / table["strata"][workload]
            row += f"{ratio:>19.2f}x"
        print(row)


if __name__ == "__main__":
    main()
