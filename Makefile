# Strata's two entry points. See README.md.
.PHONY: test test-python bench deps lint

CARGO ?= cargo
BENCH_ARGS ?=

# Every check: formatting, lints, all tests including the interop tests against real LevelDB.
test: deps
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets --features strata/testing -- -D warnings
	$(CARGO) test --workspace --features strata/testing
	$(MAKE) test-python

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

# Strata's main job: the benchmark, in release mode.
bench:
	scripts/install-deps.sh bench
	$(CARGO) build --release -p strata-cli
	./target/release/strata bench $(BENCH_ARGS)

deps:
	scripts/install-deps.sh
