#!/usr/bin/env bash
# Installs what `make test` and `make bench` need, only when it is missing. Idempotent and quiet.
#   scripts/install-deps.sh          test dependencies (LevelDB 1.23 and Snappy for interop tests;
#                                    python3-venv and python3-plyvel for the Python binding's tests)
#   scripts/install-deps.sh bench    also what the RocksDB peer needs to build (libclang)
set -euo pipefail

packages=(libleveldb-dev libsnappy-dev pkg-config python3-venv python3-plyvel)
if [[ "${1:-}" == "bench" ]]; then
  packages+=(libclang-dev clang)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "installing: ${missing[*]}" >&2
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

for component in rustfmt clippy; do
  if ! rustup component list --installed 2>/dev/null | grep -q "^$component"; then
    rustup component add "$component" >/dev/null 2>&1
  fi
done
