#!/usr/bin/env bash
# The long run of crates/strata/tests/readers_beside_a_writer.rs, by hand (make test runs the
# same tests for a few seconds each): a writer process — Strata, then real LevelDB through
# python3-plyvel — writes, flushes and compacts while reader processes, as user nobody, open
# the database read-only and read, iterate and refresh, checking every state they see.
#   scripts/readers-soak.sh [SECONDS [READERS]]     defaults: 60 seconds, 4 readers
# Needs root (the readers run through setpriv) and scripts/install-deps.sh's packages.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-60}"
readers="${2:-4}"
scripts/install-deps.sh
STRATA_READERS_SECS="$secs" STRATA_READERS="$readers" \
  nice -n 10 cargo test -p strata-kv --features testing --test readers_beside_a_writer -- \
  --ignored --test-threads=1 --nocapture readers_beside_a
