"""Shared test fixtures: real storage for real runs, a defs-folder sandbox for the Component,
and the one run of the demo; the suite's Java runtime and its progress, a line per test file."""

from __future__ import annotations

import pickle
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib.metadata import version
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb
import polars as pl
import pytest
from dagster.components.testing import DefsFolderSandbox, create_defs_folder_sandbox
from dagster_duckdb_polars import DuckDBPolarsIOManager
from demo_run import DemoRun, run_demo
from postgres import postgres  # noqa: F401  (one server for the session, shared here)
from spark import (
    spark,  # noqa: F401  (one local Spark for the session, shared here)
    use_packaged_java,
)

# The oldest set (constraints/py310-oldest.txt) has no fakesnow: every fakesnow release pins
# sqlglot exactly, dagster-dbt 0.29.18 (beside the dagster floor) caps sqlglot below 28.1, and
# the fakesnow releases below that need a DuckDB older than the 1.5 the DuckDB source reads
# with. There Snowflake's SQL is checked by its golden files (test_sql_golden.py), not run;
# anywhere else a missing fakesnow fails the import, as it should.
_SQLGLOT = tuple(int(part) for part in version("sqlglot").split(".")[:2])
_SNOWFLAKE_RUNS = [
    "test_sql_snowflake.py",
    "test_sql_snowflake_parity.py",
    "test_sql_snowflake_arithmetic.py",
    "test_read_dtypes_snowflake.py",
    "test_table_checks_snowflake.py",
    "test_infer_snowflake.py",
    "test_failing_rows_collections_snowflake.py",
    "test_sql_snowflake_float_forms.py",
]
collect_ignore = _SNOWFLAKE_RUNS if _SQLGLOT < (26, 3) and not find_spec("fakesnow") else []

# ------------------------------ the runtimes and the progress ------------------------------ #


@pytest.hookimpl(trylast=True)  # after the terminal reporter is registered
def pytest_configure(config: pytest.Config) -> None:
    use_packaged_java()
    terminal = config.pluginmanager.get_plugin("terminalreporter")
    quiet = config.get_verbosity() <= 0
    if terminal is not None and quiet and not hasattr(config, "workerinput"):
        config.pluginmanager.register(FileProgress(terminal), "file-progress")


class FileProgress:
    """A line per test file as its last test ends (the share of the suite done, the time since
    the start, the file's outcomes) instead of a dot per test: a suite of 1,500 tests on two
    workers says where it is, and a failure is named when its file ends, not only at the end."""

    def __init__(self, terminal: Any) -> None:
        self.terminal, self.started = terminal, time.monotonic()
        self.left: Counter[str] = Counter()
        self.outcomes: dict[str, Counter[str]] = {}
        self.total = self.done = 0

    def _expect(self, nodeids: Sequence[str]) -> None:
        if not self.total:  # each xdist worker sends the same collection: count it once
            self.left.update(nodeid.split("::")[0] for nodeid in nodeids)
            self.total = len(nodeids)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self._expect([item.nodeid for item in session.items])

    def pytest_xdist_node_collection_finished(self, node: Any, ids: Sequence[str]) -> None:
        self._expect(ids)

    @pytest.hookimpl(wrapper=True)
    def pytest_report_teststatus(self, report: pytest.TestReport) -> Iterator[None]:
        category, _, word = yield  # no letter: this plugin's lines say it per file
        return category, "", word

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        file = report.nodeid.split("::")[0]
        outcomes = self.outcomes.setdefault(file, Counter())
        if report.failed:
            outcomes["failed" if report.when == "call" else "error"] += 1
        elif report.when == "call" or report.skipped:
            outcomes[report.outcome] += 1
        if report.when != "teardown":
            return
        self.done += 1
        self.left[file] -= 1
        if self.left[file] <= 0:
            minutes, seconds = divmod(int(time.monotonic() - self.started), 60)
            said = ", ".join(f"{count} {outcome}" for outcome, count in outcomes.items())
            share = 100 * self.done // max(self.total, 1)
            self.terminal.write_line(f"[{share:3d}%] {minutes:2d}:{seconds:02d}  {file}: {said}")


# ------------------------------- test distribution (xdist) -------------------------------- #


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep `--dist loadgroup` grouping: pytest-xdist 3.8 marks a test of group `g` by writing
    `nodeid@g` to `Item._nodeid`, which pytest 9.2 no longer reads (`Item.nodeid` comes from
    `Item._id`), so each test of a group went to any worker, and every worker that drew a demo
    test ran the demo. Where xdist's suffix did not take, set it where pytest reads it."""
    if not config.getoption("loadgroup", default=False):
        return
    for item in items:
        groups = {
            str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
            for mark in item.iter_markers("xdist_group")
        }
        suffix = "@" + "_".join(sorted(groups))
        if groups and not item.nodeid.endswith(suffix):
            from _pytest.nodeid import NodeId  # pytest >= 9.2, where the suffix did not take

            item._id = NodeId.parse(item.nodeid + suffix)  # type: ignore[attr-defined]


# ------------------------------------ the demo, once -------------------------------------- #


@pytest.fixture(scope="session")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """`make demo`'s run, shared by every test that reads it. Defined here, once: a session
    fixture imported into two test modules is two fixtures, and ran the demo twice."""
    return run_demo(tmp_path_factory.mktemp("demo"))


# ------------------------- gated assets: storage the run writes to ------------------------- #


@dataclass(frozen=True)
class Storage:
    """Where a run's IO manager writes: Dagster's pickling filesystem IO manager, or a DuckDB
    database file through dagster-duckdb-polars; `read` gets a stored table back."""

    kind: str
    root: Path

    @property
    def database(self) -> Path:
        return self.root / "warehouse.duckdb"

    def io_manager(self) -> Any:
        if self.kind == "duckdb":
            return DuckDBPolarsIOManager(database=str(self.database))
        return dg.FilesystemIOManager(base_dir=str(self.root / "storage"))

    def materialize(self, assets: Sequence[Any], **kwargs: Any) -> dg.ExecuteInProcessResult:
        kwargs.setdefault("raise_on_error", False)
        return dg.materialize(assets, resources={"io_manager": self.io_manager()}, **kwargs)

    def read(self, key: str | Sequence[str], partition: str | None = None) -> pl.DataFrame | None:
        """The stored table of `key` (one partition of it on the filesystem), None if absent."""
        path = dg.AssetKey.from_coercible(key).path
        if self.kind == "duckdb":
            if not self.database.exists():
                return None
            schema, table = (path[-2] if len(path) > 1 else "public"), path[-1]
            with duckdb.connect(str(self.database), read_only=True) as connection:
                found = connection.execute(
                    "select count(*) from information_schema.tables "
                    "where table_schema = ? and table_name = ?",
                    [schema, table],
                ).fetchone()
                if not found or not found[0]:
                    return None
                return connection.sql(f"select * from {schema}.{table}").pl()
        file = self.root.joinpath("storage", *path, *([partition] if partition else []))
        if not file.is_file():
            return None
        with file.open("rb") as stream:
            stored = pickle.load(stream)
        return stored.collect() if isinstance(stored, pl.LazyFrame) else stored


@pytest.fixture(params=["filesystem", "duckdb"])
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Storage:
    """Each test using it runs once with Dagster's filesystem IO manager, once with DuckDB."""
    return Storage(request.param, tmp_path)


@pytest.fixture
def filesystem(tmp_path: Path) -> Storage:
    return Storage("filesystem", tmp_path)


@pytest.fixture
def warehouse(tmp_path: Path) -> Storage:
    return Storage("duckdb", tmp_path)


# ----------------------------- the Component: a defs folder ----------------------------- #


@pytest.fixture
def sandbox() -> Iterator[DefsFolderSandbox]:
    """An empty `defs` folder of a dg project, in a temporary directory."""
    with create_defs_folder_sandbox() as sandbox:
        yield sandbox


@pytest.fixture
def streamed_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """An embedded DuckDB's key rules counted in polars whatever the table's size, as a table
    of a million rows has them counted (`Dialect.keys_streamed_from`): the tests of that path
    keep their small tables."""
    from dagster_dataframely._engine.sql.dialects import Dialect

    monkeypatch.setattr(Dialect, "keys_streamed_from", 0)
