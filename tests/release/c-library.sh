#!/usr/bin/env bash
# The C library as `make install-c` installs it, checked in a DESTDIR staging tree:
#
#   tests/release/c-library.sh STAGE PREFIX LIBDIR INCLUDEDIR VERSION
#
# after `make install-c DESTDIR=STAGE PREFIX=PREFIX LIBDIR=LIBDIR INCLUDEDIR=INCLUDEDIR`.
# 1. The files: libstrata.so.VERSION with the SONAME libstrata.so.MAJOR and the links
#    libstrata.so.MAJOR and libstrata.so; libstrata.a; LevelDB's names libleveldb.so.1d (the
#    SONAME of Debian's libleveldb1d), libleveldb.so and .a; leveldb/c.h; strata.pc and
#    leveldb.pc, naming the install directories, not the staging tree.
# 2. The README's C example, built through each pkg-config file, runs on Strata.
# 3. A program built against Debian's LevelDB (libleveldb-dev) runs, without relinking, on
#    LevelDB, then on Strata through LD_LIBRARY_PATH, then on LevelDB again, each run reading
#    what the others wrote; /proc/self/maps shows which library each run loaded.
set -euo pipefail

stage=$(realpath "${1:?usage: $0 STAGE PREFIX LIBDIR INCLUDEDIR VERSION}")
prefix=${2:?} libdir=${3:?} includedir=${4:?} version=${5:?}
major=${version%%.*}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
lib=$stage$libdir
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() {
  echo "c-library: $*" >&2
  exit 1
}

# --- 1. The installed files ---
[[ -f $lib/libstrata.so.$version && ! -L $lib/libstrata.so.$version ]] ||
  fail "$lib/libstrata.so.$version is not a file"
soname=$(readelf --dynamic "$lib/libstrata.so.$version" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[[ $soname == "libstrata.so.$major" ]] || fail "SONAME is '$soname', want libstrata.so.$major"
for link in "libstrata.so.$major:libstrata.so.$version" "libstrata.so:libstrata.so.$major" \
  "libleveldb.so.1d:libstrata.so.$version" "libleveldb.so:libstrata.so" \
  "libleveldb.a:libstrata.a"; do
  name=${link%%:*} want=${link#*:}
  [[ $(readlink "$lib/$name") == "$want" ]] || fail "$lib/$name should link to $want"
done
[[ -f $lib/libstrata.a ]] || fail "no $lib/libstrata.a"
cmp -s "$repo/include/leveldb/c.h" "$stage$includedir/leveldb/c.h" ||
  fail "$stage$includedir/leveldb/c.h is not include/leveldb/c.h"

export PKG_CONFIG_PATH=$lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$stage
for pc in strata leveldb; do
  file=$lib/pkgconfig/$pc.pc
  [[ -f $file ]] || fail "no $file"
  grep -q "$stage" "$file" && fail "$file names the staging tree"
  grep -qx "prefix=$prefix" "$file" && grep -qx "libdir=$libdir" "$file" &&
    grep -qx "includedir=$includedir" "$file" || fail "$file does not name the install directories"
  pkg-config --validate "$pc" || fail "pkg-config rejects $file"
done
[[ $(pkg-config --modversion strata) == "$version" ]] || fail "strata.pc is not version $version"
[[ $(pkg-config --modversion leveldb) == 1.23 ]] || fail "leveldb.pc is not version 1.23"

# --- 2. The README's example, built through each pkg-config file ---
for pc in strata leveldb; do
  # shellcheck disable=SC2046 # pkg-config prints several flags
  cc -std=gnu11 -Wall -Werror "$repo/crates/strata-capi/tests/c/example.c" \
    $(pkg-config --cflags --libs "$pc") -o "$work/example-$pc"
  needed=$(readelf --dynamic "$work/example-$pc" | grep -o 'Shared library: \[lib\(strata\|leveldb\)[^]]*\]')
  [[ $needed == "Shared library: [libstrata.so.$major]" ]] ||
    fail "example built with $pc.pc needs '$needed', want libstrata.so.$major"
  mkdir "$work/tmp-$pc"
  out=$(LD_LIBRARY_PATH=$lib TEST_TMPDIR=$work/tmp-$pc "$work/example-$pc")
  [[ $out == *"banana = yellow"* ]] || fail "example built with $pc.pc printed: $out"
done
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR

# --- 3. A program built against Debian's LevelDB, run on Strata without relinking ---
debian=$(realpath "$(cc -print-file-name=libleveldb.so)")
[[ -f $debian && $debian != "$stage"* ]] || fail "Debian's libleveldb.so is not installed"
cc -std=gnu11 -Wall -Wextra -Werror "$here/leveldb_program.c" -lleveldb -o "$work/program"
readelf --dynamic "$work/program" | grep -q 'Shared library: \[libleveldb.so.1d\]' ||
  fail "the program does not need libleveldb.so.1d"
strata=$(realpath "$lib/libstrata.so.$version")
db=$work/db

run() { # run NAME LIBRARY [env...]: the program's output, checked to have loaded LIBRARY only
  local name=$1 want=$2 out
  shift 2
  out=$(env "$@" "$work/program" "$db" "$name") || fail "the $name run failed: $out"
  [[ $(grep '^loaded ' <<<"$out") == "loaded $want" ]] ||
    fail "the $name run should load $want only; it printed:"$'\n'"$out"
  printf '%s\n' "$out"
}
run 1-leveldb "$debian" >/dev/null
out=$(run 2-strata "$strata" LD_LIBRARY_PATH="$lib")
[[ $out == *$'\n'"1-leveldb=$debian"* ]] || fail "Strata did not read LevelDB's write: $out"
out=$(run 3-leveldb "$debian")
[[ $out == *$'\n'"1-leveldb=$debian"$'\n'"2-strata=$strata"* ]] ||
  fail "LevelDB did not read Strata's write: $out"
echo "c-library: install layout, pkg-config files, and a LevelDB program run on Strata ($strata): ok"
