# Two commands on a fresh machine with python3, pip and make: `make demo` and `make test`.
# Everything else (uv, the virtual environment, the dependencies) is bootstrapped here.

PYTHON ?= python3
UV_VERSION := 0.13.9
UV := .uv/bin/uv
# The environment the targets below use: `.venv`, uv.lock on the newest supported Python the
# machine has (pyenv's 3.13, else the machine's python3), so `make test` tests the newest end of
# the supported range. `VENV=.venv-<env>` runs the targets in a matrix environment instead.
VENV ?= .venv
BIN := $(VENV)/bin

# uv must use the machine's interpreter: it cannot download one here.
export UV_PYTHON_DOWNLOADS := never
# Every environment is built with bytecode (`uv sync`, `uv pip sync`/`install` all read this):
# uv does not compile by default, and where PYTHONDONTWRITEBYTECODE is set (CI shells, this
# machine) Python never caches it, so each Dagster step process would compile Dagster and its
# dependencies again, 4-4.8 s of start-up per process instead of 1.5 s.
export UV_COMPILE_BYTECODE := 1

# The demo's tables, its Dagster instance (DAGSTER_HOME) and logs: kept, so `make ui` shows them.
DEMO_DIR := $(CURDIR)/.demo
DEMO_ENV := DEMO_DIR=$(DEMO_DIR) DAGSTER_HOME=$(DEMO_DIR)/dagster_home DEMO_STORAGE=$(DEMO_DIR)/data

# The ends of the supported range, each in its own virtual environment `.venv-<env>`:
# py310-oldest: the oldest Python with the oldest dependency set ($(OLDEST), pinned from
#   pyproject.toml's lower bounds by `make constraints`);
# py313: the newest Python with uv.lock, like the default environment `.venv`.
# CI runs the whole suite once on each end: `make test` (lint, typecheck, the suite and the docs
# in `.venv`, the newest end), then `make unit-py310-oldest`. Not a third time on 3.11: it lies
# inside the range and shares the newest end's lock.
# pyenv's shims refuse a version that is not selected, so take its interpreters directly.
PY310 ?= $(firstword $(wildcard $(HOME)/.pyenv/versions/3.10*/bin/python3.10) python3.10)
PY313 ?= $(firstword $(wildcard $(HOME)/.pyenv/versions/3.13*/bin/python3.13) python3.13)
NEWEST ?= $(firstword $(wildcard $(HOME)/.pyenv/versions/3.13*/bin/python3.13) $(PYTHON))
MATRIX := py310-oldest py313
OLDEST := constraints/py310-oldest.txt

.PHONY: install lint typecheck unit unit-duckdb2 docs test matrix constraints demo ui screenshots bench bench-compare clean

$(UV):
	$(PYTHON) -m venv .uv
	.uv/bin/python -m pip install --quiet --disable-pip-version-check "uv==$(UV_VERSION)"

.venv/.synced: $(UV) pyproject.toml uv.lock examples/pyproject.toml
	@$(UV) sync --quiet --frozen --all-extras --python $(NEWEST)
	@touch $@

install: $(VENV)/.synced

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install
	$(BIN)/mypy

# Two workers; `loadgroup` keeps the tests that read the one demo run (xdist group "demo") on
# one worker, so the suite runs the demo once (tests/conftest.py keeps the grouping working on
# pytest 9.2). The suite prints a line per test file as it ends (tests/conftest.py), so
# pytest's own percentage after the dots is off.
PYTEST := pytest -n 2 --dist loadgroup -o console_output_style=classic

unit: install
	@echo "The test suite on two workers: a line as each test file ends (share of the suite done, time since the start, its outcomes)."
	$(BIN)/$(PYTEST)

# The documentation site, into site/ (git-ignored). --strict: a broken link or a docstring
# mkdocstrings cannot render fails the build. Offline: nothing is fetched at build time.
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

test: lint typecheck unit docs

# The suite on both ends of the range, each in its own environment.
matrix: $(MATRIX:%=unit-%)

unit-%: .venv-%/.synced
	.venv-$*/bin/$(PYTEST)

.venv-py313/.synced: $(UV) pyproject.toml uv.lock examples/pyproject.toml
	UV_PROJECT_ENVIRONMENT=.venv-py313 $(UV) sync --frozen --all-extras --python $(PY313)
	touch $@

# DuckDB 2 over the newest lock (constraints/duckdb2.txt says why it is not in uv.lock): the
# tests of the package's own DuckDB code (sources, pushdown, SQL), none of which loads through
# dagster-duckdb-polars' IO manager.
DUCKDB2_TESTS := tests/test_sources.py tests/test_source_names.py tests/test_source_sessions.py \
	tests/test_source_errors.py tests/test_pushdown.py tests/test_pushdown_parity.py \
	tests/test_sql_source.py tests/test_sql_collations.py tests/test_sql_regex_parity.py \
	tests/test_sql_arithmetic.py tests/test_sql_snowflake.py tests/test_collection_pushdown.py \
	tests/test_read_dtypes_pushdown.py tests/test_sql_filters.py tests/test_sources_dbt.py

unit-duckdb2: .venv-duckdb2/.synced
	.venv-duckdb2/bin/$(PYTEST) $(DUCKDB2_TESTS)

.venv-duckdb2/.synced: $(UV) pyproject.toml uv.lock constraints/duckdb2.txt examples/pyproject.toml
	UV_PROJECT_ENVIRONMENT=.venv-duckdb2 $(UV) sync --quiet --frozen --all-extras --python $(NEWEST)
	$(UV) pip install --quiet --python .venv-duckdb2 -r constraints/duckdb2.txt
	touch $@

.venv-py310-oldest/.synced: $(UV) $(OLDEST) pyproject.toml examples/pyproject.toml
	$(UV) venv --clear --python $(PY310) .venv-py310-oldest
	$(UV) pip sync --python .venv-py310-oldest $(OLDEST)
	$(UV) pip install --python .venv-py310-oldest --no-deps -e . -e ./examples
	touch $@

# Regenerate $(OLDEST) after changing dependencies: the lowest versions pyproject.toml allows
# for the package's own dependencies, the newest that fit them for the rest (dev tools; the
# lowest of those would be ancient). `-e .` makes the demo's requirement on this package
# resolve to this checkout, not to PyPI.
constraints: $(UV)
	$(UV) pip compile pyproject.toml --all-extras --resolution lowest-direct --python-version 3.10 \
		--annotation-style line --quiet --output-file .uv/lowest.txt
	grep '(pyproject.toml)$$' .uv/lowest.txt > .uv/lowest-direct.txt
	printf -- '-e .\n' | $(UV) pip compile - pyproject.toml --all-extras --group pyproject.toml:dev --group pyproject.toml:spark \
		--group pyproject.toml:databricks \
		--constraints .uv/lowest-direct.txt --python-version 3.10 \
		--no-emit-package dagster-dataframely --no-emit-package dagster-dataframely-demo \
		--custom-compile-command 'make constraints' --quiet --output-file $(OLDEST)

# Materialize the demo pipeline through the `dagster` CLI and print what the checks found.
# The two editable packages are compiled first (uv compiles only what it installs; a no-op
# when the bytecode is current), so no step process compiles them again.
demo: install
	@$(BIN)/python -m compileall -q src examples/src
	@$(DEMO_ENV) $(BIN)/python -m dagster_dataframely_demo

# The Dagster UI over the demo's instance, on this machine only.
ui: install
	@mkdir -p $(DEMO_DIR)/dagster_home
	$(DEMO_ENV) $(BIN)/dagster dev -m dagster_dataframely_demo.definitions -h 127.0.0.1 -p 3000

# The docs' pictures of the real UI (docs/images/): runs the demo, serves it on 127.0.0.1 and
# has Debian's headless chromium render the pages. Installs chromium with apt (needs root).
screenshots: demo
	apt-get update -qq && apt-get install -y -qq chromium pngquant >/dev/null
	@$(DEMO_ENV) $(BIN)/python scripts/screenshots.py

# Figures, not pass/fail: each script prints its own table (minutes, and a few GB of disk).
bench: install
	for script in benchmarks/[!_]*.py; do $(BIN)/python $$script || exit 1; done

# Our pushdown against Soda Core 4 and GX 1.x: those live in .bench-venv (built on first
# use from benchmarks/compare/requirements.txt), never in the package's environment.
bench-compare: install
	$(BIN)/python benchmarks/compare/run.py

clean:
	rm -rf .uv $(VENV) .bench-venv $(MATRIX:%=.venv-%) .venv-duckdb2 site .pytest_cache .mypy_cache .ruff_cache .hypothesis $(DEMO_DIR)
