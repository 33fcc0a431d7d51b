# Strata's two entry points. See README.md.
.PHONY: test test-python bench deps lint

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
	# The C API under valgrind and installed as libleveldb, the Go, Python and Java bindings.
	$(MAKE) --no-print-directory capi-test go-test test-python test-java

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

# Installs the header and the library, also under LevelDB's names, so programs written for
# LevelDB's C API build unchanged with -lleveldb: make install-c PREFIX=/opt/strata
install-c: capi
	install -d $(DESTDIR)$(PREFIX)/include/leveldb $(DESTDIR)$(PREFIX)/lib
	install -m 644 include/leveldb/c.h $(DESTDIR)$(PREFIX)/include/leveldb/c.h
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

# ---- The Java binding (bindings/java: Maven, with its JNI library in Rust in native/) ----
.PHONY: test-java

# Lints of the JNI crate, then Maven: cargo builds the library (the quick jtest profile) into the
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
	cd bindings/java && mvn -B --no-transfer-progress -Dnative.profile=jtest verify
