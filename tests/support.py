"""What a test reads from a finished in-process run: its check evaluations, which checks failed
with what count and severity, what it materialized, and the error that failed its step; and a
`SchemaChecksComponent` scaffolded into a defs-folder sandbox, with the error loading it raised."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest
from dagster.components.testing import DefsFolderSandbox
from dagster_duckdb import DuckDBResource

import dagster_dataframely as dd
from dagster_dataframely._engine.sql.backend import SQLTable
from dagster_dataframely._engine.sql.dialects import Dialect

#: The `dy_engine` of the `unique`/primary-key rule of a large table (a million rows) of an
#: embedded DuckDB: its key columns stream into polars, which counts repeated keys for less
#: than DuckDB's grouping of every key.
KEY_IN_POLARS = "polars (keys cost less here than in an embedded database)"
#: DuckDB's dialect as if it were a server's, which groups its keys in SQL whatever the
#: table's size: the tests of the SQL key path run it on DuckDB.
GROUPING_DUCKDB = type("GroupingDuckDB", (Dialect,), {"keys_streamed_from": None})()


def grouping_keys(table: SQLTable) -> SQLTable:
    """`table` with its key rules counted by DuckDB's grouping, not in polars."""
    return replace(table, dialect=GROUPING_DUCKDB)


def evaluations(result: dg.ExecuteInProcessResult) -> dict[str, dg.AssetCheckEvaluation]:
    """check name -> the run's evaluation of that check."""
    return {e.check_name: e for e in result.get_asset_check_evaluations()}


def failed(
    outcomes: dg.ExecuteInProcessResult | Iterable[dg.AssetCheckResult],
) -> dict[str, tuple[int, dg.AssetCheckSeverity]]:
    """check name -> (failed count, severity), for the failing checks of a run or of the
    `AssetCheckResult`s a check function yields."""
    checked: Iterable[Any] = (
        outcomes.get_asset_check_evaluations()
        if isinstance(outcomes, dg.ExecuteInProcessResult)
        else outcomes
    )
    return {
        e.check_name: (e.metadata["dy_failed_count"].value, e.severity)
        for e in checked
        if not e.passed
    }


def materialized(result: dg.ExecuteInProcessResult) -> set[str]:
    """The assets the run materialized, as user strings (`"sales/orders"`)."""
    return {
        e.asset_key.to_user_string()
        for e in result.get_asset_materialization_events()
        if e.asset_key is not None
    }


def materialization(result: dg.ExecuteInProcessResult, key: str | None = None) -> dict[str, Any]:
    """The metadata values of the run's materialization of `key` (a user string such as
    `"sales/orders"`), or of its one materialization when no key is given."""
    events = result.get_asset_materialization_events()
    if key is None:
        (event,) = events
    else:
        wanted = dg.AssetKey.from_user_string(key)
        matching = [e for e in events if e.materialization.asset_key == wanted]
        if not matching:
            raise AssertionError(f"no materialization of {key}")
        event = matching[0]
    return {name: value.value for name, value in event.materialization.metadata.items()}


def step_error(result: dg.ExecuteInProcessResult) -> tuple[str, str]:
    """The class name and message of the user error that failed the run's one step."""
    (failure,) = result.get_step_failure_events()
    error = failure.step_failure_data.error
    assert error is not None
    while error.cause is not None:
        error = error.cause
    return error.cls_name or "", error.message


def failure_text(result: dg.ExecuteInProcessResult) -> str:
    """The whole error chain of the run's one failed step, as one string."""
    (failure,) = result.get_step_failure_events()
    error = failure.step_failure_data.error
    assert error is not None
    return error.to_string()


def logs(instance: dg.DagsterInstance, result: dg.ExecuteInProcessResult) -> list[str]:
    """The user messages of the run's event log."""
    return [entry.user_message for entry in instance.all_logs(result.run_id)]


def scaffold_checks(
    sandbox: DefsFolderSandbox, attributes: Mapping[str, Any], *, at: str = "quality"
) -> Path:
    """A `SchemaChecksComponent` at `defs/<at>/defs.yaml`, as `dg scaffold defs` writes one."""
    return sandbox.scaffold_component(
        component_cls=dd.SchemaChecksComponent,
        defs_path=at,
        defs_yaml_contents={
            "type": "dagster_dataframely.SchemaChecksComponent",
            "attributes": dict(attributes),
        },
    )


def load_error(sandbox: DefsFolderSandbox, path: Path | None = None) -> BaseException:
    """What loading the component at `path` (else building the whole project) raised: this
    package's error, from under Dagster's."""
    with pytest.raises(Exception) as raised:
        if path is None:
            with sandbox.build_component_tree() as tree:
                tree.build_defs()
        else:
            with sandbox.load_component_and_build_defs(defs_path=path):
                pass
    error: BaseException = raised.value
    while not isinstance(error, dd.errors.DagsterDataframelyError) and error.__cause__:
        error = error.__cause__
    return error


def stored_table(
    tmp_path: Path, source: str, name: str, frame: pl.DataFrame
) -> tuple[dg.AssetsDefinition, dict[str, Any], dict[str, Any]]:
    """An asset `name` holding `frame`: parquet through `dd.ParquetIOManager` (`source`
    "parquet"), or a DuckDB table the asset writes itself ("duckdb"). Returns the asset, the
    run's resources, and the `source=` its checks read it with (none for parquet)."""
    if source == "parquet":

        @dg.asset(name=name)
        def parquet() -> pl.DataFrame:
            return frame

        return parquet, {"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path))}, {}

    @dg.asset(name=name)
    def in_duckdb(duckdb: DuckDBResource) -> None:
        with duckdb.get_connection() as connection:
            connection.register("frame", frame.to_arrow())
            connection.execute(f"create or replace table {name} as select * from frame")

    resources = {"duckdb": DuckDBResource(database=str(tmp_path / "shop.duckdb"))}
    return in_duckdb, resources, {"source": dd.sources.DuckDBTableSource(table=name)}


def dg_launch(
    folder: Path, job: str, *, partition: str | None = None
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """`dg launch --job <job>` (of one `--partition`) on `folder/location.py`, from the CLI,
    with the DAGSTER_HOME `folder/home`: the finished process and the home."""
    home = folder / "home"
    home.mkdir(exist_ok=True)
    env = {**os.environ, "DAGSTER_HOME": str(home), "NO_COLOR": "1"}
    chosen = ["--partition", partition] if partition else []
    dg_cli = str(Path(sys.executable).parent / "dg")
    launched = subprocess.run(
        [dg_cli, "launch", "--job", job, *chosen, "-f", "location.py"],
        cwd=folder, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    return launched, home


def materialize_project(sandbox: DefsFolderSandbox, tmp_path: Path) -> dg.ExecuteInProcessResult:
    """Every asset and check of the sandbox's project, materialized in one run that stores
    tables as parquet under `tmp_path`."""
    with sandbox.build_component_tree() as tree:
        defs = tree.build_defs()
        return dg.materialize(
            [*(defs.assets or []), *(defs.asset_checks or [])],
            resources={"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path))},
            raise_on_error=False,
        )


def rule_outcomes(result: dg.ExecuteInProcessResult) -> dict[str, tuple[int, str]]:
    """check name -> (failed rows, engine) of each rule check of the run."""
    return {
        name: (e.metadata["dy_failed_count"].value, e.metadata["dy_engine"].value)  # type: ignore[misc]
        for name, e in evaluations(result).items()
        if "dy_failed_count" in e.metadata
    }


def dataframely_rule_counts(schema: Any, frame: pl.DataFrame) -> dict[str, int]:
    """check name -> what Dataframely's `filter` counts on `frame`, zeros included."""
    _, failures = schema.filter(frame)
    return {"dy_rule__" + n.replace("|", "__"): c for n, c in failures.counts().items()}


@dataclass(frozen=True)
class PrintedSummary:
    """A check step's summary as the run's log prints it, read back cell by cell."""

    headline: str
    #: One mapping a row: the table's header -> the cell.
    rows: list[dict[str, str]]
    more: int
    passed: str


def printed_summaries(text: str) -> list[PrintedSummary]:
    """Every step summary in `text` (a CLI's output, or the run's log messages joined)."""
    found = []
    for block in text.split("dagster-dataframely: ")[1:]:
        lines = block.splitlines()
        headline, table = lines[0], []
        for line in lines[1:]:
            if line.startswith("Passed: "):
                break
            table.append(line)
        more = 0
        if table and table[-1].startswith("... and "):
            more = int(table.pop().split()[2])
        header = re.split(r" {2,}", table[0]) if table else []
        rows = [dict(zip(header, re.split(r" {2,}", line), strict=True)) for line in table[1:]]
        found.append(PrintedSummary(headline, rows, more, line))
    return found
