# pqsift — the two commands of the README, and the steps they are made of.
#
#   make demo   set everything up, then run the demo
#   make test   set everything up, then run the gates (make lint) and every test
#               (cargo test + pytest)
#
# Set-up is idempotent: a virtual environment in .venv, the Python packages of
# requirements-dev.txt, and the release wheel (Rust extension and Python package) installed into it.
# Running either command again only redoes what changed.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMPS := .stamps

export VIRTUAL_ENV := $(abspath $(VENV))
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: bench-allocator bench-first-scan demo demo-selection test lint setup build test-rust test-python test-slow bench bench-peers bench-object-store plot-peers bench-spark clean

demo: build
	$(BIN)/python -m pqsift.demo

demo-selection: build
	$(BIN)/python -m pqsift.selection_demo

test: lint build test-rust test-python docs wheel-check

# The gates: formatting, clippy with warnings denied (every target, the PyO3 layer too), the
# crate's layers looking only down (tools/check_layers.py), ruff and mypy --strict.
# Configured in rustfmt.toml, Cargo.toml's [lints] and pyproject.toml.
lint: setup
	cargo fmt --check
	PYO3_PYTHON=$(abspath $(BIN))/python cargo clippy --locked --all-targets --all-features --quiet -- -D warnings
	$(BIN)/python tools/check_layers.py
	$(BIN)/ruff check python tests benches tools
	$(BIN)/ruff format --check python tools
	$(BIN)/mypy
	$(BIN)/mypy --strict tools

test-rust:
	cargo test --locked

# Tests marked `slow` (long campaigns) run with `make test-slow`, not in CI.
test-python: build
	$(BIN)/python -m pytest -q -m "not slow"

test-slow: build
	$(BIN)/python -m pytest -q -m slow || [ $$? -eq 5 ]  # 5: none collected

# The documentation site (mkdocs.yml, docs/) built into site/, a warning failing the build.
# The API reference is read from the sources and python/pqsift/_core.pyi: no build needed.
.PHONY: docs
docs: setup
	$(BIN)/mkdocs build --strict --site-dir site

# The wheel users install: abi3 (one wheel for CPython 3.11 and later), manylinux2014 (glibc
# 2.17: zig, from the ziglang package, links it against that glibc), stripped.
.PHONY: wheel wheel-check
wheel: setup
	rm -f target/wheels/pqsift-*.whl
	$(BIN)/maturin build --release --locked --quiet --zig --compatibility manylinux2014 --out target/wheels

# The wheel installed into a fresh virtual environment (nothing else in it) and a scan run
# from there (tools/wheel_smoke.py).
wheel-check: wheel
	$(BIN)/python tools/wheel_smoke.py target/wheels/pqsift-*.whl

setup: $(STAMPS)/python-deps

# The release build is the wheel itself, installed into .venv: the tests run what users install,
# and one release build serves both (a `maturin develop` beside the wheel built the crate twice).
# The install is not editable: after changing python/, run `make build` again.
build: wheel
	@rm -f python/pqsift/_core.*.so  # left by an editable install; only the installed copy is used
	$(BIN)/python -m pip install --quiet --no-deps --force-reinstall target/wheels/pqsift-*.whl
	@$(BIN)/python -c "import pqsift; print('pqsift', pqsift.__version__, 'built and installed in $(VENV)')"

bench: build
	cargo bench --locked --bench selection

# Times the peers on both datasets at 2 and 1 threads (benches/results/peers.json and .md),
# then draws benches/results/peers.png. Options through ARGS, e.g. a smoke run
# (results in benches/out/):  make bench-peers ARGS=--quick
bench-peers: build $(STAMPS)/bench-deps
	$(BIN)/python benches/peers.py $(ARGS)

# pqsift and the same peers reading from a local S3 (moto behind a proxy adding 25 ms per request):
# benches/results/object_store.json and .md. Options through ARGS, e.g.
#   make bench-object-store ARGS="--delay 50 --gaps 0,65536,262144,1048576,4194304"
bench-object-store: build $(STAMPS)/bench-deps
	$(BIN)/python benches/object_store.py $(ARGS)

# The allocator A/B (benches/results/allocator.md): jemalloc as configured in
# rust/allocator.rs against other settings, timed on the peers shapes and measured as 4
# workers' memory.
bench-allocator: build $(STAMPS)/bench-deps
	$(BIN)/maturin build --release --locked --quiet -o target/ab/current-wheel
	$(BIN)/python benches/allocator_ab.py $(ARGS)

# A query's first runs in fresh processes (benches/results/first_scan.md): pqsift with
# and without huge pages asked of the kernel, beside Polars and pyarrow (ARGS=--peers).
bench-first-scan: build $(STAMPS)/bench-deps
	$(BIN)/python benches/first_scan.py $(ARGS)

# Redraws the chart from the committed peers.json, without running the benchmark.
plot-peers: $(STAMPS)/bench-deps
	$(BIN)/python benches/plot_peers.py

# Spark's native reader against pqsift in Spark (benches/results/spark.md). Options
# through ARGS, e.g. as a Spark Connect client of a local server (spark_connect.md):
#   make bench-spark ARGS="--connect --driver-sweep"
bench-spark: build
	$(BIN)/python benches/spark_bench.py $(ARGS)

$(STAMPS)/bench-deps: requirements-bench.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet -r requirements-bench.txt
	@mkdir -p $(STAMPS) && touch $@

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMPS)/python-deps: requirements-dev.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	@mkdir -p $(STAMPS) && touch $@

clean:
	rm -rf $(VENV) $(STAMPS) target python/pqsift/*.so
