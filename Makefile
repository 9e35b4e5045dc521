# mobiflow: set up, test, reproduce.
#
#   make setup       .venv with pinned Python deps + the package built in release mode
#   make test        Rust fmt/clippy/tests, ruff, pytest, the wheel (what CI runs via .ci/run)
#   make test-fuzz   the fuzz targets and the protocol property tests, overflow checks on
#   make wheel       build the wheel (extension, scenarios, traces, mobiflow-live) in dist/,
#                    the extension profile-guided (PGO) where llvm-tools is installed
#   make test-wheel  install that wheel in a fresh venv outside the tree and use it there
#   make lint        the lint half of `make test` (fmt, clippy, ruff, mypy)
#   make fmt         format Rust and Python in place
#   make reproduce   run every example scenario, tables on stdout, files in out/examples/
#   make validate    cross-check the simulator against ns-2 on twin scenarios
#   make golden      check every reproduction table, the validation and every scenario's
#                    summary against golden/ (make golden-update rewrites them: see
#                    golden/README.md for when that is allowed)
#   make docs-tables rewrite the generated tables of docs/scenarios.md and
#                    docs/architecture.md from the code (a test checks them)
#   make bench       cost per packet (instructions, paired wall clock) and memory per flow,
#                    against ns-2 run in the same script, beside the speed and memory goals
#                    (mobiflow-run built with PGO where llvm-tools is installed);
#                    BENCH_ARGS="--flows 1,10 --rounds 40 --no-callgrind --no-memory"
#                    resolves a wall-clock verdict the default rounds leave open
#   make bench-sweep a 24-run sweep on 1 and on 2 worker processes: the wall-time ratio
#   make clean       remove .venv, out/, the built extension (not target/)
#
# Needs: cargo (Rust >= 1.80 via rustup, with rustfmt and clippy), python3 (>= 3.11) with
# the venv module, and network access to crates.io and PyPI the first time.
#
# PGO: `make wheel` and `make bench` build profile-guided when the toolchain has
# llvm-profdata (`rustup component add llvm-tools`), from a profile of the project's own
# runs (tools/pgo.sh: the bench's bulk scenario and scenarios/examples); without it, or
# with PGO=0, they build as before. PGO builds live in target/pgo.

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-builtin-rules

PYTHON ?= python3
CARGO ?= cargo
VENV ?= .venv
VENV_ABS := $(abspath $(VENV))
VPY := $(VENV_ABS)/bin/python
OUT ?= out

# Build the extension and the Rust tests against the venv's interpreter, so that
# pyo3's build script sees the same Python every time (no spurious rebuilds).
export PYO3_PYTHON := $(VPY)

EXAMPLES := $(sort $(wildcard scenarios/examples/*.toml))
# Inputs of the compiled extension: when none changed, `make setup` does nothing.
RUST_INPUTS := Cargo.toml $(wildcard Cargo.lock) py/pyproject.toml \
	$(shell find crates -name '*.rs' -o -name 'Cargo.toml' 2>/dev/null)

PGO ?= 1
# The PGO profile (tools/pgo.sh profile); absent without llvm-tools.
PGO_PROFILE := target/pgo/merged.profdata
PGO_DEP := $(if $(filter 1,$(PGO)),$(PGO_PROFILE))
# RUSTFLAGS of the profile-guided builds: empty without a profile or with PGO=0.
PGO_FLAGS = $(if $(filter 1,$(PGO)),$$(tools/pgo.sh flags))

DEPS_STAMP := $(VENV)/.mobiflow-deps
BUILD_STAMP := $(VENV)/.mobiflow-build

.PHONY: help setup build-dev test test-rust test-python test-wheel wheel lint lint-rust \
	lint-python test-fuzz fmt docs-tables reproduce validate golden golden-update bench bench-sweep clean \
	pgo-profile

help:
	@sed -n '3,24s/^# \{0,1\}//p' Makefile

# --- set-up -------------------------------------------------------------------------

$(DEPS_STAMP): requirements-dev.txt
	@test -x $(VPY) || $(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --quiet --disable-pip-version-check --no-input \
		-r requirements-dev.txt
	@touch $@

$(BUILD_STAMP): $(DEPS_STAMP) $(RUST_INPUTS)
	cd py && VIRTUAL_ENV=$(VENV_ABS) $(VENV_ABS)/bin/maturin develop --release
	$(CARGO) build --release -p mobiflow-live
	@touch $@

## The venv with pinned deps and the package (editable Python, release-built Rust).
setup: $(BUILD_STAMP)

## Rebuild the extension even if make thinks it is up to date.
build-dev: $(DEPS_STAMP)
	cd py && VIRTUAL_ENV=$(VENV_ABS) $(VENV_ABS)/bin/maturin develop --release
	$(CARGO) build --release -p mobiflow-live
	@touch $(BUILD_STAMP)

# --- tests and lints ----------------------------------------------------------------

test: setup lint test-rust test-fuzz test-python test-wheel

test-rust: $(DEPS_STAMP)
	$(CARGO) test --workspace --release

# The fuzz targets (crates/mobiflow-sim/tests/fuzz.rs) and the protocol invariants on
# generated scenarios (crates/mobiflow-sim/src/engine/props.rs) in the test profile,
# where arithmetic overflow panics. Their default budgets are CI's short run; see
# docs/fuzzing.md for longer ones (MOBIFLOW_FUZZ_SECS, MOBIFLOW_PROP_CASES, seeds).
test-fuzz: $(DEPS_STAMP)
	MOBIFLOW_REQUIRE_OVERFLOW_CHECKS=1 $(CARGO) test -p mobiflow-sim --test fuzz
	MOBIFLOW_REQUIRE_OVERFLOW_CHECKS=1 $(CARGO) test -p mobiflow-sim --lib engine::props

# pytest exits 5 when it collected no test: that is a broken suite, say so loudly.
test-python: setup
	@status=0; $(VPY) -m pytest py/tests || status=$$?; \
	if [ $$status -eq 5 ]; then \
		echo "error: pytest collected no tests in py/tests" >&2; exit 1; \
	fi; exit $$status

# The wheel: the extension, the shipped scenarios, traces and ns-2 twins, and the
# mobiflow-live program (copied into the package for the build only).
# With a PGO profile the extension is built with it in target/pgo (RUSTFLAGS are part
# of cargo's fingerprint: target/release keeps its plain build).
wheel: $(DEPS_STAMP) $(PGO_DEP)
	$(CARGO) build --release -p mobiflow-live
	mkdir -p py/python/mobiflow/bin
	install -m 755 target/release/mobiflow-live py/python/mobiflow/bin/mobiflow-live
	rm -f dist/mobiflow-*.whl
	@flags="$(PGO_FLAGS)"; tdir=$(abspath target); \
	if [ -n "$$flags" ]; then tdir=$(abspath target/pgo); echo "wheel: PGO ($$flags)"; fi; \
	status=0; (cd py && RUSTFLAGS="$$flags" CARGO_TARGET_DIR=$$tdir VIRTUAL_ENV=$(VENV_ABS) \
		$(VENV_ABS)/bin/maturin build --release --out ../dist) || status=$$?; \
	rm -rf py/python/mobiflow/bin; exit $$status

# The built wheel in a fresh venv outside the tree: see tools/test_wheel.sh.
test-wheel: wheel
	PYTHON=$(PYTHON) tools/test_wheel.sh dist

lint: lint-rust lint-python

lint-rust: $(DEPS_STAMP)
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

lint-python: $(DEPS_STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	cd py && $(VENV_ABS)/bin/mypy --cache-dir $(VENV_ABS)/.mypy_cache

fmt: $(DEPS_STAMP)
	$(CARGO) fmt --all
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

## The parameter tables of docs/scenarios.md, from the declarations (one per table) in
## crates/mobiflow-sim/src/scenario; tests/docs_tables.rs fails when they differ.
docs-tables:
	$(CARGO) run --release -q -p mobiflow-sim --bin mobiflow-run -- --doc-tables docs

# --- results ------------------------------------------------------------------------

## Run every example scenario, then `mobiflow reproduce all` (the seed reproductions
## done so far, and the ns-2 cross-validation where ns-2 is installed).
reproduce: setup
	@if [ -z "$(EXAMPLES)" ]; then \
		echo "error: no scenarios in scenarios/examples/" >&2; exit 1; \
	fi
	@for f in $(EXAMPLES); do \
		name=$$(basename "$$f" .toml); \
		echo; echo "== $$f -> $(OUT)/examples/$$name/"; \
		$(VENV)/bin/mobiflow run "$$f" --out "$(OUT)/examples/$$name"; \
	done
	@echo; echo "== seed documents -> $(OUT)/reproduce/report.html"
	$(VENV)/bin/mobiflow reproduce all --out $(OUT)/reproduce

## Cross-check against ns-2 on twin scenarios (needs `ns`: apt-get install -y ns2).
validate: setup
	$(VPY) validation/ns2/validate.py --require-ns

GOLDEN_RUN ?= $(OUT)/golden

## Check a fresh `mobiflow reproduce all` and every scenario's summary against golden/.
golden: setup
	$(VENV)/bin/mobiflow reproduce all --out $(GOLDEN_RUN)
	$(VPY) tools/golden.py check-tables $(GOLDEN_RUN)
	$(VPY) tools/golden.py check-validation $(GOLDEN_RUN)
	$(VPY) tools/golden.py check-summaries

## Rewrite golden/ from fresh runs: commit the result on its own, saying why numbers moved.
golden-update: setup
	$(VENV)/bin/mobiflow reproduce all --out $(GOLDEN_RUN)
	$(VPY) tools/golden.py update-tables $(GOLDEN_RUN)
	$(VPY) tools/golden.py update-validation $(GOLDEN_RUN)
	$(VPY) tools/golden.py update-summaries

# --- profile-guided optimisation -------------------------------------------------------

## The PGO profile of the release builds, from the project's own runs (tools/pgo.sh).
$(PGO_PROFILE): $(RUST_INPUTS) tools/pgo.sh bench/bench.py $(EXAMPLES) | $(DEPS_STAMP)
	PYTHON=$(VPY) CARGO=$(CARGO) tools/pgo.sh profile

pgo-profile: $(PGO_PROFILE)

## Benchmark against ns-2 (speed, memory) and the scale table; mobiflow-run with PGO
## when there is a profile (PGO=0: the plain release build).
bench: setup $(PGO_DEP)
	@if [ -n "$(PGO_FLAGS)" ]; then run=$$(tools/pgo.sh run); \
	else $(CARGO) build --release -p mobiflow-sim --bin mobiflow-run; \
		run=$(abspath target/release/mobiflow-run); fi; \
	echo "bench: $$run"; MOBIFLOW_RUN=$$run $(VPY) bench/bench.py $(BENCH_ARGS)

## Time a 24-run sweep on 1 and on 2 local worker processes and print the ratio.
bench-sweep: setup
	$(VPY) bench/sweep_scaling.py

clean:
	rm -rf $(VENV) $(OUT) dist .pytest_cache .ruff_cache py/.pytest_cache
	rm -f py/python/mobiflow/_mobiflow*.so
	find py -name __pycache__ -type d -prune -exec rm -rf {} +
