#!/usr/bin/env bash
# The seed 002 benchmark: Strata, leveldbjni 1.8 and iq80 LevelDB 0.12 side by side, in one JVM
# run, with the JNI library in its release build, and the same cached get made from Rust, for
# the per-call JNI overhead. Arguments go to Seed002Bench (--num N, --repeat R, --dir DIR).
#   bindings/java/bench/run.sh --num 1000000 --repeat 3
set -euo pipefail
bench=$(cd "$(dirname "$0")" && pwd)
java_dir=$(dirname "$bench")

# The engine's own get of a cached key, without JNI (same key and value sizes, release build):
# the Java run makes the same calls through it after each of its own, for the per-call JNI
# overhead.
cargo build -q --release --locked --manifest-path "$java_dir/native/Cargo.toml" \
  --target-dir "$java_dir/target/cargo" --example cached_get

# The binding, release build, into the local Maven repository.
mvn -B -q --no-transfer-progress -f "$java_dir/pom.xml" -DskipTests -Dnative.profile=release install
mvn -B -q --no-transfer-progress -f "$bench/pom.xml" package dependency:build-classpath \
  -Dmdep.outputFile="$bench/target/classpath.txt"
classpath="$bench/target/classes:$(cat "$bench/target/classpath.txt")"
java -Xms2g -Xmx2g -cp "$classpath" io.github.stratakv.bench.Seed002Bench \
  --rust-cached-get "$java_dir/target/cargo/release/examples/cached_get" "$@"
