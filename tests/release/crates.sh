#!/usr/bin/env bash
# The Rust crates as crates.io would get them:
#
#   tests/release/crates.sh
#
# 1. Each published crate's package holds its README and both licence files, and every other
#    crate (workspace members, the bindings' and the fuzz targets' crates) says publish = false.
# 2. `cargo publish --dry-run` packages the four published crates together (the unpublished
#    ones among them resolved locally, the rest against the crates.io index) and stops before
#    uploading.
# 3. The engine's package builds on its own, from the .crate file (`cargo package` verifies it).
# CARGO names the cargo command (default: cargo).
set -euo pipefail
cd "$(dirname "$0")/../.."

cargo=${CARGO:-cargo}
published=(strata-kv strata-kv-tools strata-kv-cli strata-kv-leveldb-peer)

fail() {
  echo "crates: $*" >&2
  exit 1
}

# --- 1. What each package holds, and what is not published ---
for crate in "${published[@]}"; do
  files=$("$cargo" package --list --allow-dirty --quiet -p "$crate" 2>/dev/null) ||
    fail "cargo package --list -p $crate failed"
  for file in Cargo.toml README.md LICENSE-MIT LICENSE-APACHE; do
    grep -qx "$file" <<<"$files" || fail "the $crate package lacks $file"
  done
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for manifest in Cargo.toml bindings/python/Cargo.toml bindings/node/Cargo.toml fuzz/Cargo.toml; do
  "$cargo" metadata --no-deps --format-version 1 --manifest-path "$manifest" >"$work/metadata.json"
  /usr/bin/python3 - "$work/metadata.json" "${published[@]}" <<'PY' || exit 1
import json, sys
metadata, published = sys.argv[1], set(sys.argv[2:])
for package in json.load(open(metadata))["packages"]:
    meant = package["name"] in published
    if (package["publish"] != []) != meant:  # cargo's "publish": [] means publish = false
        sys.exit(f"crates: {package['name']} should {'' if meant else 'not '}be published")
PY
done

# --- 2. The dry run of the publication ---
args=()
for crate in "${published[@]}"; do args+=(-p "$crate"); done
"$cargo" publish --dry-run --no-verify --allow-dirty "${args[@]}" 2>&1 |
  grep -v '^warning: ignoring test .* is not included in the published package$' ||
  true
[[ ${PIPESTATUS[0]} == 0 ]] || fail "cargo publish --dry-run failed"

# --- 3. The engine built from its package ---
"$cargo" package --allow-dirty -p strata-kv 2>&1 |
  grep -v '^warning: ignoring test .* is not included in the published package$' || true
[[ ${PIPESTATUS[0]} == 0 ]] || fail "the strata-kv package does not build"
echo "crates: ${published[*]} package with their README and licences; the dry run passes; strata-kv builds from its package: ok"
