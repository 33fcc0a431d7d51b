# Strata's two entry points. See README.md.
.PHONY: test test-python test-node test-readonly bench deps lint

CARGO ?= cargo
# The default suite at 1M entries, three repeats (medians and spread), with the SVG charts.
# Override for other runs: make bench BENCH_ARGS='--num 100000 --benchmarks fillseq,readrandom'
BENCH_ARGS ?= --num 1000000 --repeat 3 --plot bench-out --json bench-out/results.json
# Then point lookups with LevelDB's bloom filter on (db_bench's default suite runs without one):
# hot keys (the first 1%, their blocks cached) and missing keys. Empty to skip.
BENCH_BLOOM_ARGS ?= --num 1000000 --repeat 3 --bloom_bits 10 \
	--benchmarks fillrandom,readhot,readmissing,readrandom --json bench-out/bloom.json
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
	$(CARGO) clippy --workspace --all-targets --features strata-kv/testing,strata-kv-cli/leveldb -- -D warnings
	$(CARGO) clippy -p strata-kv --lib -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc -p strata-kv --no-deps
	! $(CARGO) tree -p strata-kv -e normal --prefix none | grep -E '^(serde|base64|clap|arbitrary) '
	$(CARGO) test --workspace --features strata-kv/testing,strata-kv-cli/leveldb
	# The C API under valgrind and installed as libleveldb, the Go, Python, Node and Java
	# bindings, CometBFT validators on Strata, the releasable packages, read-only handles.
	$(MAKE) --no-print-directory capi-test go-test test-python test-node test-java test-cometbft \
		test-release test-readonly

# Value separation (issue 14; docs/design.md, section 4.4) alone, for work on it: the engine's
# value-file tests (with garbage collection's space bound, and damage to value files), the
# extension's marker, the tools on value files (dump, check, load, export, stress), and real
# LevelDB 1.23 refusing such a directory. `make test` runs every one of them in its workspace
# tests, so it leaves this target out (two more minutes of builds and runs of the same tests).
test-value-separation: deps
	$(CARGO) test -p strata-kv --features testing --test value_separation \
		--test value_separation_gc --test value_separation_at_rest --test value_separation_marker \
		--test value_separation_under_attack \
		--test value_file_damage --test value_file_syncs --test format_extensions
	$(CARGO) test -p strata-kv --features testing --lib -- vlog:: extension:: db::value_gc:: snapshot:: \
		tools::
	$(CARGO) test -p strata-kv-tools --lib -- stress::tests::a_run_with_value_separation
	$(CARGO) test -p strata-kv-cli --test tools_commands -- value_files
	$(CARGO) test -p strata-kv-leveldb-peer --test extension_refusal

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
	$(PYTHON_VENV)/bin/pip install -q --disable-pip-version-check --no-deps $(PYTHON_WHEELS)/strata_kv-*.whl
	cd bindings/python && $(PYTHON_VENV)/bin/pytest -q -p no:cacheprovider tests

# Strata's main job: the benchmark against LevelDB and RocksDB, in release mode.
bench:
	scripts/install-deps.sh bench
	CXXFLAGS_x86_64_unknown_linux_gnu="$(ROCKSDB_CXXFLAGS)" \
		$(CARGO) build --release -p strata-kv-cli --features $(BENCH_FEATURES)
	mkdir -p bench-out
	./target/release/strata bench $(BENCH_ARGS)
	$(if $(strip $(BENCH_BLOOM_ARGS)),./target/release/strata bench $(BENCH_BLOOM_ARGS))

deps:
	scripts/install-deps.sh

# ---- C API (crates/strata-capi, include/leveldb/c.h) and the Go binding (bindings/go) ----
.PHONY: capi install-c capi-test go-test

# Where `make install-c` installs, with GNU's names: PREFIX, then LIBDIR, INCLUDEDIR and
# PKGCONFIGDIR below it unless given; DESTDIR stages the whole tree elsewhere (for packaging).
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
# Strata's one version (the workspace's), and the C library's ABI version, its major number.
VERSION := $(shell sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
SOVERSION := $(firstword $(subst ., ,$(VERSION)))
# Cargo profile of the installed library: release, or test/dev for a quick debug build.
CAPI_PROFILE ?= release
TARGET_DIR ?= $(CURDIR)/target
capi_profile_flag = $(if $(filter release,$(CAPI_PROFILE)),--release,--profile=$(CAPI_PROFILE))
capi_lib_dir = $(TARGET_DIR)/$(if $(filter release,$(CAPI_PROFILE)),release,debug)
GO ?= $(or $(shell command -v go 2>/dev/null),/usr/local/go/bin/go)
# The tests' installs: a debug build (cargo's test profile) under PREFIX=$(1), whatever
# install directories the make command line was given.
install_c_test = $(MAKE) --no-print-directory install-c CAPI_PROFILE=test DESTDIR= PREFIX=$(1) \
	LIBDIR=$(1)/lib INCLUDEDIR=$(1)/include PKGCONFIGDIR=$(1)/lib/pkgconfig
capi_test_prefix = $(TARGET_DIR)/capi-install
# The Go binding finds the library through pkg-config (`#cgo pkg-config: strata`), here an
# installed copy; the tests run against it through LD_LIBRARY_PATH.
go_env = GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=1 \
	PKG_CONFIG_PATH=$(capi_test_prefix)/lib/pkgconfig LD_LIBRARY_PATH=$(capi_test_prefix)/lib

# Builds libstrata.so and libstrata.a.
capi:
	$(CARGO) build -p strata-capi $(capi_profile_flag)

# Installs the headers (leveldb/c.h, and strata/c.h for Strata's extensions), the library (libstrata.so.$(VERSION), SONAME libstrata.so.$(SOVERSION)),
# its pkg-config file strata.pc, and the same library under LevelDB's names: libleveldb.so and
# .a and leveldb.pc, so programs written for LevelDB's C API build unchanged with -lleveldb, and
# libleveldb.so.1d (the SONAME of Debian's libleveldb1d), so programs already built against
# Debian's LevelDB run on Strata with LD_LIBRARY_PATH=$(LIBDIR).
#   make install-c PREFIX=/opt/strata
#   make install-c DESTDIR=/tmp/stage PREFIX=/usr LIBDIR=/usr/lib/x86_64-linux-gnu
install-c: capi
	install -d $(DESTDIR)$(INCLUDEDIR)/leveldb $(DESTDIR)$(INCLUDEDIR)/strata $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR)
	install -m 644 include/leveldb/c.h $(DESTDIR)$(INCLUDEDIR)/leveldb/c.h
	install -m 644 include/strata/c.h $(DESTDIR)$(INCLUDEDIR)/strata/c.h
	install -m 755 $(capi_lib_dir)/libstrata.so $(DESTDIR)$(LIBDIR)/libstrata.so.$(VERSION)
	ln -sf libstrata.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libstrata.so.$(SOVERSION)
	ln -sf libstrata.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libstrata.so
	install -m 644 $(capi_lib_dir)/libstrata.a $(DESTDIR)$(LIBDIR)/libstrata.a
	ln -sf libstrata.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libleveldb.so.1d
	ln -sf libstrata.so $(DESTDIR)$(LIBDIR)/libleveldb.so
	ln -sf libstrata.a $(DESTDIR)$(LIBDIR)/libleveldb.a
	for pc in strata leveldb; do \
		sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
			-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
			crates/strata-capi/pkgconfig/$$pc.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/$$pc.pc || exit 1; \
	done

# The C tests under valgrind (installed when missing), then the README's C example built against
# an installed copy with -lleveldb, exactly as a LevelDB program would be (it records Strata's
# SONAME, so it keeps loading Strata).
capi-test:
	command -v valgrind >/dev/null 2>&1 || { sudo=$$([ "$$(id -u)" -eq 0 ] || echo sudo); \
		$$sudo apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq valgrind >/dev/null; }
	STRATA_CAPI_VALGRIND=1 $(CARGO) test -p strata-capi --test c_programs
	rm -rf $(capi_test_prefix)
	$(call install_c_test,$(capi_test_prefix))
	$(CC) -std=gnu11 -Wall -Werror -I$(capi_test_prefix)/include \
		crates/strata-capi/tests/c/example.c -L$(capi_test_prefix)/lib -lleveldb \
		-Wl,-rpath,$(capi_test_prefix)/lib -o $(capi_test_prefix)/example
	ldd $(capi_test_prefix)/example | \
		grep -q "libstrata.so.$(SOVERSION) => $(capi_test_prefix)/lib/libstrata.so.$(SOVERSION)"
	tmp=$$(mktemp -d) && TEST_TMPDIR=$$tmp $(capi_test_prefix)/example >/dev/null; \
		status=$$?; rm -rf $$tmp; exit $$status

# The Go binding: vet and tests (with the race detector) against the freshly built library,
# installed with its pkg-config file.
go-test:
	$(call install_c_test,$(capi_test_prefix))
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
	$(call install_c_test,$(COMETBFT_OUT)/strata)
	$(CARGO) build -p strata-kv-cli --profile=test
	GO=$(GO) integrations/cometbft/build.sh strata $(COMETBFT_OUT)/strata $(COMETBFT_OUT)/cometbft-strata
	GO=$(GO) integrations/cometbft/build.sh leveldb $(COMETBFT_OUT)/cometbft-leveldb
	cd integrations/cometbft && GOTOOLCHAIN=local $(GO) vet ./...
	cd integrations/cometbft && $(cometbft_test_env) $(GO) test -count=1 -timeout 15m -v ./...

# ---- The Java binding (bindings/java: Maven, with its JNI library in Rust in native/) ----
.PHONY: test-java

# Lints and unit tests of the JNI crate, then Maven: cargo builds the library (the quick jtest profile) into the
# jar, and the JUnit 5 suite runs, with leveldbjni 1.8 from Maven Central as real LevelDB. A JDK
# and Maven come from Debian when missing; Maven fetches the rest from Maven Central.
# Where Maven has cargo build (pom.xml's cargo.target.dir), shared with clippy.
JAVA_CARGO_TARGET := $(CURDIR)/bindings/java/target/cargo
test-java:
	command -v mvn >/dev/null 2>&1 && command -v javac >/dev/null 2>&1 || { \
		sudo=$$([ "$$(id -u)" -eq 0 ] || echo sudo); \
		$$sudo apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq default-jdk-headless maven >/dev/null; }
	cd bindings/java/native && $(CARGO) fmt --check
	cd bindings/java/native && $(CARGO) clippy --locked --all-targets --profile jtest \
		--target-dir $(JAVA_CARGO_TARGET) -- -D warnings
	cd bindings/java/native && $(CARGO) test --locked --profile jtest --target-dir $(JAVA_CARGO_TARGET)
	cd bindings/java && mvn -B --no-transfer-progress -Dnative.profile=jtest verify

# ---- Releasable packages (tests/release): names, one version, the artifacts users install ----
.PHONY: test-release

RELEASE_OUT = $(TARGET_DIR)/release-test
# Where the staged install says it lives: a LIBDIR outside PREFIX/lib, as a distribution's.
release_prefix = /opt/strata
release_libdir = $(release_prefix)/lib64

# One version in every manifest; the crates as crates.io would get them (package contents,
# publish = false elsewhere, `cargo publish --dry-run`, the engine built from its .crate); the C
# library installed into a DESTDIR staging tree (layout, SONAME, pkg-config files) and run by a
# program built against Debian's LevelDB, without relinking; the Go binding built through
# pkg-config by a module outside the repository; the Python wheel audited, installed offline
# into a fresh venv under each of Debian's Python 3 interpreters with no Rust on PATH and
# smoke-tested, and a wheel built from the sdist. Debug builds (cargo's test profile, the
# binding's pytest profile) shared with the targets above.
test-release: deps
	/usr/bin/python3 tests/release/check_versions.py
	CARGO=$(CARGO) tests/release/crates.sh
	rm -rf $(RELEASE_OUT)
	$(MAKE) --no-print-directory install-c CAPI_PROFILE=test DESTDIR=$(RELEASE_OUT)/stage \
		PREFIX=$(release_prefix) LIBDIR=$(release_libdir) INCLUDEDIR=$(release_prefix)/include \
		PKGCONFIGDIR=$(release_libdir)/pkgconfig
	tests/release/c-library.sh $(RELEASE_OUT)/stage $(release_prefix) $(release_libdir) \
		$(release_prefix)/include $(VERSION)
	$(call install_c_test,$(RELEASE_OUT)/prefix)
	GO=$(GO) tests/release/go-pkgconfig.sh $(RELEASE_OUT)/prefix
	tests/release/python-wheel.sh $(RELEASE_OUT)/python

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
	$(CARGO) test -p strata-kv --features testing --test readers_beside_a_writer -- --ignored
	rm -rf $(READONLY_PREFIX)
	$(call install_c_test,$(READONLY_PREFIX))
	$(CC) -std=gnu11 -Wall -Wextra -Werror -I$(READONLY_PREFIX)/include \
		crates/strata-capi/tests/c/strata_ext_test.c -L$(READONLY_PREFIX)/lib -lstrata \
		-Wl,-rpath,$(READONLY_PREFIX)/lib -o $(READONLY_PREFIX)/strata_ext_test
	tmp=$$(mktemp -d) && TEST_TMPDIR=$$tmp $(READONLY_PREFIX)/strata_ext_test; \
		status=$$?; rm -rf $$tmp; exit $$status
