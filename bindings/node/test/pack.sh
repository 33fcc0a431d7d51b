#!/bin/sh
# The npm package installs and works with no Rust toolchain: packs bindings/node (which must
# hold a built native module), installs the tarball into an empty project with a PATH that
# has no cargo or rustc, and opens, writes and reads a database there.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cd "$here"
tarball=$(npm pack --silent --pack-destination "$work" | tail -n 1)
tar -tzf "$work/$tarball" | grep -qx 'package/strata-kv.linux-x64-gnu.node' \
  || { echo "pack test: $tarball has no native module" >&2; exit 1; }

# A PATH with node and npm but no Rust toolchain.
node_dir=$(dirname "$(command -v node)")
npm_dir=$(dirname "$(command -v npm)")
bare_path="$node_dir:$npm_dir:/usr/bin:/bin"
bare_path=$(printf '%s' "$bare_path" | tr ':' '\n' | grep -v '\.cargo' | paste -sd: -)
if PATH="$bare_path" sh -c 'command -v cargo || command -v rustc' >/dev/null 2>&1; then
  echo "pack test: cargo or rustc is still on the PATH $bare_path" >&2
  exit 1
fi

mkdir "$work/app"
cd "$work/app"
PATH="$bare_path" npm init -y >/dev/null
PATH="$bare_path" npm install --no-audit --no-fund --silent "$work/$tarball"
PATH="$bare_path" node -e '
  const assert = require("node:assert/strict")
  const { StrataLevel } = require("strata-kv")
  const db = new StrataLevel(require("node:path").join(process.cwd(), "db"))
  db.put("key", "value")
    .then(() => db.get("key"))
    .then((value) => { assert.equal(value, "value"); return db.close() })
    .then(() => console.log("pack test: the installed tarball opens, writes and reads a database"))
'
