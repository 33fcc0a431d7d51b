# Strata's two entry points. See README.md.
.PHONY: test test-python test-node test-readonly bench deps lint

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
# The engine is also linted and documented as an embedder builds it (no features), and its
# dependency tree is checked to hold none of the tools' dependencies. The test that keeps the
# engine's modules importing one way is crates/strata/tests/module_layers.rs.
test: deps
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets --features strata/testing,strata-cli/leveldb -- -D warnings
	$(CARGO) clippy -p strata --lib -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc -p strata --no-deps
	! $(CARGO) tree -p strata -e normal --prefix none | grep -E '^(serde|base64|clap|arbitrary) '
	$(CARGO) test --workspace --features strata/testing,strata-cli/leveldb
	# The C API under valgrind and installed as libleveldb, the Go, Python and Node bindings,
	# CometBFT validators on Strata.
	$(MAKE) --no-print-directory capi-test go-test test-python test-node test-cometbft test-readonly

# The Python binding (bindings/python, its own cargo workspace): lints, then a fresh virtualenv
# built from the system Python with its site packages (Debian's python3-plyvel, i.e. real
# LevelDB, for the interop tests), maturin and pytest from PyPI, the wheel built and installed,
# and the pytest suite.
PYTHON_VENV := $(CURDIR)/target/python-venv
PYTHON_WHEELS := $(CURDIR)/target/python-wheels
test-python: deps
	rm -rf $(PYTHON_VENV) $(PYTHON_WHEELS)
	/usr/bin/python3 -m venv --system-site-packages $(PYTHON_VENV)
	$(PYTHON_VENV)/bin/pip install -q --disable-pip-version-check maturin pytest
	cd bindings/python && $(CARGO) fmt --check
	cd bindings/python && PYO3_PYTHON=$(PYTHON_VENV)/bin/python \
		$(CARGO) clippy --all-targets -- -D warnings
	cd bindings/python && $(PYTHON_VENV)/bin/maturin build --profile pytest \
		-i $(PYTHON_VENV)/bin/python --out $(PYTHON_WHEELS)
	$(PYTHON_VENV)/bin/pip install -q --disable-pip-version-check --no-deps $(PYTHON_WHEELS)/strata-*.whl
	cd bindings/python && $(PYTHON_VENV)/bin/pytest -q -p no:cacheprovider tests

# Strata's main job: the benchmark against LevelDB and RocksDB, in release mode.
bench:
	scripts/install-deps.sh bench
	CXXFLAGS_x86_64_unknown_linux_gnu="$(ROCKSDB_CXXFLAGS)" \
		$(CARGO) build --release -p strata-cli --features $(BENCH_FEATURES)
	mkdir -p bench-out
	./target/release/strata bench $(BENCH_ARGS)

deps:
	scripts/install-deps.sh

# ---- C API (crates/strata-capi, include/leveldb/c.h) and the Go binding (bindings/go) ----
.PHONY: capi install-c capi-test go-test

PREFIX ?= /usr/local
# Cargo profile of the installed library: release, or test/dev for a quick debug build.
CAPI_PROFILE ?= release
TARGET_DIR ?= $(CURDIR)/target
capi_profile_flag = $(if $(filter release,$(CAPI_PROFILE)),--release,--profile=$(CAPI_PROFILE))
capi_lib_dir = $(TARGET_DIR)/$(if $(filter release,$(CAPI_PROFILE)),release,debug)
GO ?= $(or $(shell command -v go 2>/dev/null),/usr/local/go/bin/go)
# The tests link the library cargo's test profile leaves in target/debug.
capi_test_prefix = $(TARGET_DIR)/capi-install
go_env = GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=1 \
	CGO_CFLAGS="-I$(CURDIR)/include" \
	CGO_LDFLAGS="-L$(TARGET_DIR)/debug -Wl,-rpath,$(TARGET_DIR)/debug"

# Builds libstrata.so and libstrata.a.
capi:
	$(CARGO) build -p strata-capi $(capi_profile_flag)

# Installs the headers (leveldb/c.h, and strata/c.h for Strata's extensions) and the library,
# also under LevelDB's names, so programs written for LevelDB's C API build unchanged with
# -lleveldb: make install-c PREFIX=/opt/strata
install-c: capi
	install -d $(DESTDIR)$(PREFIX)/include/leveldb $(DESTDIR)$(PREFIX)/include/strata $(DESTDIR)$(PREFIX)/lib
	install -m 644 include/leveldb/c.h $(DESTDIR)$(PREFIX)/include/leveldb/c.h
	install -m 644 include/strata/c.h $(DESTDIR)$(PREFIX)/include/strata/c.h
	install -m 755 $(capi_lib_dir)/libstrata.so $(DESTDIR)$(PREFIX)/lib/libstrata.so
	install -m 644 $(capi_lib_dir)/libstrata.a $(DESTDIR)$(PREFIX)/lib/libstrata.a
	ln -sf libstrata.so $(DESTDIR)$(PREFIX)/lib/libleveldb.so
	ln -sf libstrata.a $(DESTDIR)$(PREFIX)/lib/libleveldb.a

# The C tests under valgrind (installed when missing), then the README's C example built against an installed copy
# with -lleveldb, exactly as a LevelDB program would be.
capi-test:
	command -v valgrind >/dev/null 2>&1 || { sudo=$$([ "$$(id -u)" -eq 0 ] || echo sudo); \
		$$sudo apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq valgrind >/dev/null; }
	STRATA_CAPI_VALGRIND=1 $(CARGO) test -p strata-capi --test c_programs
	rm -rf $(capi_test_prefix)
	$(MAKE) --no-print-directory install-c CAPI_PROFILE=test PREFIX=$(capi_test_prefix)
	$(CC) -std=gnu11 -Wall -Werror -I$(capi_test_prefix)/include \
		crates/strata-capi/tests/c/example.c -L$(capi_test_prefix)/lib -lleveldb \
		-Wl,-rpath,$(capi_test_prefix)/lib -o $(capi_test_prefix)/example
	ldd $(capi_test_prefix)/example | grep -q "$(capi_test_prefix)/lib/libleveldb.so"
	tmp=$$(mktemp -d) && TEST_TMPDIR=$$tmp $(capi_test_prefix)/example >/dev/null; \
		status=$$?; rm -rf $$tmp; exit $$status

# The Go binding: vet and tests (with the race detector) against the freshly built library.
go-test:
	$(CARGO) build -p strata-capi --profile=test
	cd bindings/go && $(go_env) $(GO) vet ./...
	cd bindings/go && $(go_env) $(GO) test -race -count=1 ./...

# ---- The Node.js binding (bindings/node, npm package strata-kv, its own cargo workspace) ----

# Node.js and npm from apt when missing; the npm dependencies from package-lock.json (classic-level
# is real LevelDB for the interop tests); lints; the native module in the test-node profile;
# the TypeScript declarations type-checked; abstract-level's suite (tape); the binding's own
# tests (node --test); and the npm tarball installed into an empty project without Rust.
NODE_DIR := bindings/node
test-node:
	command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || { \
		sudo=$$([ "$$(id -u)" -eq 0 ] || echo sudo); \
		$$sudo apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq nodejs npm >/dev/null; }
	cd $(NODE_DIR) && npm ci --no-audit --no-fund --loglevel=error
	cd $(NODE_DIR) && $(CARGO) fmt --check
	cd $(NODE_DIR) && $(CARGO) clippy -- -D warnings
	cd $(NODE_DIR) && npx napi build --platform --profile test-node --no-js --dts native.d.ts
	cd $(NODE_DIR) && npx tsc -p tsconfig.json
	cd $(NODE_DIR) && node test/abstract-level-suite.js > target/abstract-level-suite.tap; \
		status=$$?; grep -A12 '^not ok' target/abstract-level-suite.tap; \
		tail -n 5 target/abstract-level-suite.tap; exit $$status
	cd $(NODE_DIR) && node --test test/*.test.js test/*.test.mjs
	cd $(NODE_DIR) && sh test/pack.sh

# ---- CometBFT on Strata (integrations/cometbft) ----
.PHONY: test-cometbft

COMETBFT_OUT = $(TARGET_DIR)/cometbft
cometbft_test_env = GOTOOLCHAIN=local \
	COMETBFT_STRATA=$(COMETBFT_OUT)/cometbft-strata COMETBFT_LEVELDB=$(COMETBFT_OUT)/cometbft-leveldb \
	STRATA_LIB=$(COMETBFT_OUT)/strata/lib/libstrata.so STRATA_CLI=$(TARGET_DIR)/debug/strata

# CometBFT v0.38.17 (pinned in integrations/cometbft/go.mod, from the Go module proxy) built with
# -tags cleveldb twice: against Strata installed as libleveldb (a debug build of the C library)
# and against Debian's LevelDB, each checked with ldd; then the localnet test (four validators
# on 127.0.0.1 moving LevelDB -> Strata -> LevelDB, one killed and restarted under load) and the
# tests of its checks. The hand-run engine comparison is integrations/cometbft/compare.sh.
test-cometbft: deps
	rm -rf $(COMETBFT_OUT)
	$(MAKE) --no-print-directory install-c CAPI_PROFILE=test PREFIX=$(COMETBFT_OUT)/strata
	$(CARGO) build -p strata-cli --profile=test
	GO=$(GO) integrations/cometbft/build.sh strata $(COMETBFT_OUT)/strata $(COMETBFT_OUT)/cometbft-strata
	GO=$(GO) integrations/cometbft/build.sh leveldb $(COMETBFT_OUT)/cometbft-leveldb
	cd integrations/cometbft && GOTOOLCHAIN=local $(GO) vet ./...
	cd integrations/cometbft && $(cometbft_test_env) $(GO) test -count=1 -timeout 15m -v ./...

# ---- Read-only handles beside a writer, and checkpoints ----

# The process tests of crates/strata/tests/readers_beside_a_writer.rs, which a plain cargo test
# leaves out (they run readers as user nobody through setpriv, which needs root): a Strata
# writer, then real LevelDB through python3-plyvel, each writing, flushing, compacting and
# reopening for a few seconds beside two reader processes, and a read-only open of a
# chmod -R a-w directory. Then strata/c.h as installed by install-c, in the C test of the
# extensions. (The other tests of the feature run in cargo test, capi-test, go-test and
# test-python; the 60-second runs are scripts/readers-soak.sh.)
READONLY_PREFIX = $(TARGET_DIR)/readonly-install
test-readonly: deps
	$(CARGO) test -p strata --features testing --test readers_beside_a_writer -- --ignored
	rm -rf $(READONLY_PREFIX)
	$(MAKE) --no-print-directory install-c CAPI_PROFILE=test PREFIX=$(READONLY_PREFIX)
	$(CC) -std=gnu11 -Wall -Wextra -Werror -I$(READONLY_PREFIX)/include \
		crates/strata-capi/tests/c/strata_ext_test.c -L$(READONLY_PREFIX)/lib -lstrata \
		-Wl,-rpath,$(READONLY_PREFIX)/lib -o $(READONLY_PREFIX)/strata_ext_test
	tmp=$$(mktemp -d) && TEST_TMPDIR=$$tmp $(READONLY_PREFIX)/strata_ext_test; \
		status=$$?; rm -rf $$tmp; exit $$status
