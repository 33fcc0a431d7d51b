# Strata's two entry points. See README.md.
.PHONY: test bench deps lint

CARGO ?= cargo
# The default suite at 1M entries, three repeats (medians and spread), with the SVG charts.
# Override for other runs: make bench BENCH_ARGS='--num 100000 --benchmarks fillseq,readrandom'
BENCH_ARGS ?= --num 1000000 --repeat 3 --plot bench-out --json bench-out/results.json
# The peers compiled into the benchmark binary (RocksDB builds from source once, then is cached).
BENCH_FEATURES ?= leveldb,rocksdb
# RocksDB's C++ gets hardware CRC32C, as its own build does (the rocksdb crate otherwise follows
# Rust's baseline x86-64 target and falls back to a software CRC, which would flatter Strata).
# Keep this identical between builds: changing it recompiles RocksDB (minutes).
ROCKSDB_CXXFLAGS ?= -msse4.2 -mpclmul

# Every check: formatting, lints, all tests including the interop tests against real LevelDB
# and the `strata bench` smoke test with LevelDB as the peer (RocksDB stays out: its build is long).
test: deps
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets --features strata/testing,strata-cli/leveldb -- -D warnings
	$(CARGO) test --workspace --features strata/testing,strata-cli/leveldb

# Strata's main job: the benchmark against LevelDB and RocksDB, in release mode.
bench:
	scripts/install-deps.sh bench
	CXXFLAGS_x86_64_unknown_linux_gnu="$(ROCKSDB_CXXFLAGS)" \
		$(CARGO) build --release -p strata-cli --features $(BENCH_FEATURES)
	mkdir -p bench-out
	./target/release/strata bench $(BENCH_ARGS)

deps:
	scripts/install-deps.sh
