#!/usr/bin/env bash
# The hand-run comparison (not part of `make test`): the same 4-validator localnet on CometBFT's
# default goleveldb, on Debian's LevelDB 1.23 (cleveldb) and on Strata (cleveldb, release build),
# side by side in one run, printed as one table. Flags go to cmd/compare, for example
#   integrations/cometbft/compare.sh -txs 10000 -rounds 3
# Takes about a minute a run (rounds x 3 runs) on a 2-core machine, plus the builds.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$root/target/cometbft-compare
go=${GO:-$(command -v go || echo /usr/local/go/bin/go)}

"$root/scripts/install-deps.sh"
rm -rf "$out"
make -C "$root" --no-print-directory install-c CAPI_PROFILE=release PREFIX="$out/strata"
GO=$go "$here/build.sh" strata "$out/strata" "$out/cometbft-strata"
GO=$go "$here/build.sh" leveldb "$out/cometbft-leveldb"
GO=$go "$here/build.sh" goleveldb "$out/cometbft-goleveldb"

cd "$here"
GOTOOLCHAIN=local "$go" build -o "$out/compare" ./cmd/compare
"$out/compare" -goleveldb "$out/cometbft-goleveldb" -leveldb "$out/cometbft-leveldb" \
  -strata "$out/cometbft-strata" "$@"
