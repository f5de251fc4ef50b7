# Two commands on a fresh machine with python3, pip and make: `make demo` and `make test`.
# Everything else (uv, the virtual environment, the dependencies) is bootstrapped here.

PYTHON ?= python3
UV_VERSION := 0.13.9
UV := .uv/bin/uv
VENV := .venv
BIN := $(VENV)/bin

# uv must use the machine's interpreter: it cannot download one here.
export UV_PYTHON_DOWNLOADS := never

# The demo's tables, its Dagster instance (DAGSTER_HOME) and logs: kept, so `make ui` shows them.
DEMO_DIR := $(CURDIR)/.demo
DEMO_ENV := DEMO_DIR=$(DEMO_DIR) DAGSTER_HOME=$(DEMO_DIR)/dagster_home DEMO_STORAGE=$(DEMO_DIR)/data

.PHONY: install lint typecheck unit docs test demo ui screenshots bench clean

$(UV):
	$(PYTHON) -m venv .uv
	.uv/bin/python -m pip install --quiet --disable-pip-version-check "uv==$(UV_VERSION)"

$(VENV)/.synced: $(UV) pyproject.toml uv.lock examples/pyproject.toml
	@$(UV) sync --quiet --frozen --all-extras --python $(PYTHON)
	@touch $@

install: $(VENV)/.synced

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install
	$(BIN)/mypy

unit: install
	$(BIN)/pytest -n 2 --dist loadgroup

# The documentation site, into site/ (git-ignored). --strict: a broken link or a docstring
# mkdocstrings cannot render fails the build. Offline: nothing is fetched at build time.
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

test: lint typecheck unit docs

# Materialize the demo pipeline through the `dagster` CLI and print what the checks found.
demo: install
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

clean:
	rm -rf .uv $(VENV) site .pytest_cache .mypy_cache .ruff_cache .hypothesis $(DEMO_DIR)
