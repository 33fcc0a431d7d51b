# Strata's two entry points. See README.md.
.PHONY: test bench deps lint

CARGO ?= cargo
BENCH_ARGS ?=

# Every check: formatting, lints, all tests including the interop tests against real LevelDB.
test: deps
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets --features strata/testing -- -D warnings
	$(CARGO) test --workspace --features strata/testing

# Strata's main job: the benchmark, in release mode.
bench:
	scripts/install-deps.sh bench
	$(CARGO) build --release -p strata-cli
	./target/release/strata bench $(BENCH_ARGS)

deps:
	scripts/install-deps.sh
