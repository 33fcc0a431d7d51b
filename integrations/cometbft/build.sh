#!/usr/bin/env bash
# Builds CometBFT (the version go.mod pins) from the Go module proxy, one storage engine a binary:
#   build.sh strata PREFIX OUT   -tags cleveldb against Strata installed by `make install-c
#                                PREFIX=...` (libleveldb.so -> libstrata.so, so the binary needs
#                                Strata's SONAME libstrata.so.N), rpath to PREFIX/lib
#   build.sh leveldb OUT         -tags cleveldb against Debian's libleveldb-dev
#   build.sh goleveldb OUT       no tag: CometBFT's default pure-Go goleveldb
# and checks with ldd that a cleveldb binary loads the LevelDB (or Strata) it was built against.
# GO names the go command (default: go on PATH, else /usr/local/go/bin/go).
set -euo pipefail
cd "$(dirname "$0")"

go=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
export GOTOOLCHAIN=local CGO_ENABLED=1
usage="usage: $0 strata PREFIX OUT | leveldb OUT | goleveldb OUT"

engine=${1:?$usage}
case "$engine" in
  strata)
    prefix=$(realpath "${2:?$usage}")
    out=${3:?$usage}
    export CGO_CFLAGS="-I$prefix/include" CGO_LDFLAGS="-L$prefix/lib -Wl,-rpath,$prefix/lib"
    tags=(-tags cleveldb)
    want=$(realpath "$prefix/lib/libstrata.so")
    ;;
  leveldb)
    out=${2:?$usage}
    unset CGO_CFLAGS CGO_LDFLAGS
    tags=(-tags cleveldb)
    want=$(realpath "$(gcc -print-file-name=libleveldb.so)")
    ;;
  goleveldb)
    out=${2:?$usage}
    tags=()
    want=""
    ;;
  *)
    echo "$usage" >&2
    exit 2
    ;;
esac

nice -n 10 "$go" build "${tags[@]}" -o "$out" github.com/cometbft/cometbft/cmd/cometbft

if [[ -n "$want" ]]; then
  got=$(ldd "$out" | awk '$1 ~ /^lib(leveldb|strata)\.so/ && $2 == "=>" { print $3 }')
  if [[ -z "$got" || "$(realpath "$got")" != "$want" ]]; then
    echo "$out: libleveldb resolves to '${got:-nothing}', want $want" >&2
    ldd "$out" >&2
    exit 1
  fi
  echo "$out: libleveldb -> $want"
fi
