#!/usr/bin/env bash
# The Python package as it is released: the strata-kv wheel and sdist.
#
#   tests/release/python-wheel.sh OUT [PROFILE [manylinux2014]]
#
# OUT holds the build environment and the artifacts; PROFILE is the cargo profile of the wheel
# (default `pytest`, the quick build `make test` uses; `release` for the wheel to publish).
# With `manylinux2014` the wheel is linked by zig (ziglang from PyPI) against glibc 2.17's
# symbols, for every Linux since 2014; without, it gets the tag this machine's glibc allows.
# 1. maturin builds one abi3 wheel for CPython >= 3.9, audited for manylinux by maturin, and
#    auditwheel agrees; the wheel holds the stubs, py.typed, the licences and strata-kv's metadata.
# 2. Under each Python 3 interpreter Debian provides (/usr/bin/python3.N), the wheel is installed
#    into a fresh virtual environment, offline, and wheel_smoke.py runs there with nothing but
#    that environment on PATH (no Rust toolchain).
# 3. The sdist holds what a build needs (the engine crate included), and a wheel builds from it.
set -euo pipefail

out=$(realpath -m "${1:?usage: $0 OUT [PROFILE [manylinux2014]]}")
profile=${2:-pytest}
compatibility=${3:-}
case "$compatibility" in
  "") linking=() tag=manylinux_ ;;
  manylinux2014) linking=(--zig --compatibility manylinux2014) tag=manylinux2014_ ;;
  *) echo "python-wheel: unknown compatibility '$compatibility'" >&2 && exit 2 ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$repo/bindings/python/Cargo.toml" | head -1)

fail() {
  echo "python-wheel: $*" >&2
  exit 1
}

rm -rf "$out"
mkdir -p "$out/dist"
/usr/bin/python3 -m venv "$out/build-venv"
"$out/build-venv/bin/pip" install -q --disable-pip-version-check maturin auditwheel \
  ${compatibility:+ziglang}
build=$out/build-venv/bin

# --- 1. The wheel ---
(cd "$repo/bindings/python" && PATH=$build:$PATH nice -n 10 "$build/maturin" build \
  --profile "$profile" "${linking[@]}" -i /usr/bin/python3 --out "$out/dist")
wheels=("$out/dist"/strata_kv-"$version"-cp39-abi3-"$tag"*x86_64.whl)
[[ ${#wheels[@]} == 1 && -f ${wheels[0]} ]] ||
  fail "want one strata_kv-$version-cp39-abi3-$tag*.whl, got: $(ls "$out/dist")"
wheel=${wheels[0]}
show=$("$build/auditwheel" show "$wheel" | tr -s ' \n' '  ')
grep -q 'consistent with the following platform tag: "manylinux_' <<<"$show" ||
  fail "auditwheel does not find the wheel manylinux-compliant:"$'\n'"$show"
"$build/python" - "$wheel" "$version" <<'PY' || fail "the wheel's contents are wrong"
import sys, zipfile
wheel, version = sys.argv[1], sys.argv[2]
names = set(zipfile.ZipFile(wheel).namelist())
info = f"strata_kv-{version}.dist-info"
want = {"strata/__init__.py", "strata/_strata.pyi", "strata/py.typed", "strata/_strata.abi3.so",
        f"{info}/METADATA", f"{info}/licenses/LICENSE-MIT", f"{info}/licenses/LICENSE-APACHE"}
missing = want - names
assert not missing, f"missing from the wheel: {sorted(missing)} (has {sorted(names)})"
metadata = zipfile.ZipFile(wheel).read(f"{info}/METADATA").decode()
for line in ["Name: strata-kv", f"Version: {version}", "Requires-Python: >=3.9"]:
    assert line in metadata.splitlines(), f"METADATA lacks {line!r}"
PY

# --- 2. A fresh venv for each of Debian's Python 3 interpreters, no Rust on PATH ---
interpreters=()
for python in /usr/bin/python3.*; do
  [[ $python =~ ^/usr/bin/python3\.[0-9]+$ ]] && interpreters+=("$python")
done
((${#interpreters[@]})) || fail "no /usr/bin/python3.N interpreter"
smoke=$(mktemp -d)
trap 'rm -rf "$smoke"' EXIT
cp "$here/wheel_smoke.py" "$smoke/"
for python in "${interpreters[@]}"; do
  venv=$out/venv-${python##*/}
  "$python" -m venv "$venv"
  env -i HOME="$smoke" PATH="$venv/bin" pip install -q --disable-pip-version-check \
    --no-index --no-deps --only-binary=:all: "$wheel" ||
    fail "${python##*/}: the wheel does not install offline"
  (cd "$smoke" && env -i HOME="$smoke" PATH="$venv/bin" python wheel_smoke.py) ||
    fail "${python##*/}: the smoke test failed"
done

# --- 3. The sdist, and a wheel built from it ---
(cd "$repo/bindings/python" && "$build/maturin" sdist --out "$out/dist")
sdist=$out/dist/strata_kv-$version.tar.gz
[[ -f $sdist ]] || fail "no $sdist"
listing=$(tar tzf "$sdist")
for file in pyproject.toml Cargo.toml LICENSE-MIT LICENSE-APACHE python/strata/py.typed \
  python/strata/_strata.pyi src/lib.rs; do
  grep -qx "strata_kv-$version/bindings/python/$file\|strata_kv-$version/$file" <<<"$listing" ||
    fail "the sdist lacks $file"
done
grep -q "/crates/strata/src/lib.rs$" <<<"$listing" || fail "the sdist lacks the engine crate"
# Built offline from the unpacked sdist with the build environment's maturin, sharing the
# binding's target directory so that only Strata's own crates compile again.
PATH=$build:$PATH CARGO_TARGET_DIR=$repo/bindings/python/target MATURIN_PEP517_ARGS="--profile $profile" \
  nice -n 10 "$build/pip" wheel -q --disable-pip-version-check --no-deps --no-index \
  --no-build-isolation "$sdist" -w "$out/from-sdist" || fail "no wheel builds from the sdist"
[[ -f $(echo "$out/from-sdist"/strata_kv-"$version"-cp39-abi3-*.whl) ]] ||
  fail "the sdist built no strata_kv wheel: $(ls "$out/from-sdist")"
echo "python-wheel: $(basename "$wheel") audited, smoke-tested under ${interpreters[*]##*/}; sdist builds: ok"
