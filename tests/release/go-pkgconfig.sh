#!/usr/bin/env bash
# The Go binding as a user builds it: a module outside the repository requires
# github.com/strata-db/strata/bindings/go (here replaced by this checkout, with the module proxy
# off), and `go build` finds Strata's installed C library through pkg-config alone:
#
#   tests/release/go-pkgconfig.sh PREFIX     (after make install-c PREFIX=PREFIX)
#
# No CGO_CFLAGS or CGO_LDFLAGS are set; the program runs against PREFIX's libstrata.so.N.
# GO names the go command (default: go on PATH, else /usr/local/go/bin/go).
set -euo pipefail

prefix=$(realpath "${1:?usage: $0 PREFIX}")
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
go=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() {
  echo "go-pkgconfig: $*" >&2
  exit 1
}

module=github.com/strata-db/strata/bindings/go
[[ $(cd "$repo/bindings/go" && GOTOOLCHAIN=local "$go" list -m) == "$module" ]] ||
  fail "bindings/go is not the module $module"
grep -qx '#cgo pkg-config: strata' "$repo/bindings/go/db.go" ||
  fail "bindings/go does not ask pkg-config for strata"

mkdir "$work/consumer"
cp "$here/go-consumer/main.go" "$work/consumer/"
cat >"$work/consumer/go.mod" <<MOD
module example.com/consumer

go 1.21

require $module v0.0.0
replace $module => $repo/bindings/go
MOD

(
  cd "$work/consumer"
  unset CGO_CFLAGS CGO_LDFLAGS CGO_CPPFLAGS
  export GOTOOLCHAIN=local GOPROXY=off GOFLAGS=-mod=mod GOWORK=off CGO_ENABLED=1 \
    PKG_CONFIG_PATH=$prefix/lib/pkgconfig
  nice -n 10 "$go" build -o "$work/consumer-bin" .
) || fail "go build through pkg-config failed"

lib=$(LD_LIBRARY_PATH=$prefix/lib ldd "$work/consumer-bin" | awk '$1 ~ /^libstrata\.so/ { print $3 }')
[[ $lib == "$prefix/lib/libstrata.so."* ]] || fail "the program loads '$lib', not $prefix/lib/libstrata.so.N"
out=$(LD_LIBRARY_PATH=$prefix/lib "$work/consumer-bin") || fail "the program failed: $out"
[[ $out == "ok through pkg-config" ]] || fail "the program printed: $out"
echo "go-pkgconfig: a module requiring $module built through pkg-config alone and ran on $lib: ok"
