"""A hundred tables at the cost of a few steps: `dd.with_schemas` over many external tables,
run as a team runs its checks job (the `dagster` CLI with a DAGSTER_HOME and the default
multiprocess executor), against a run with one step per asset; one unreadable table among
them; a single check run alone; concurrency and progress inside a step."""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import duckdb
import polars as pl
import pytest
from dagster_dataframely_demo._webserver import webserver
from dagster_duckdb import DuckDBResource
from support import printed_summaries

import dagster_dataframely as dd
from dagster_dataframely._checks.figures import Figures
from dagster_dataframely.errors import SourceReadError, TablesNotCheckedError

N = 100
#: Tables the warehouse lacks, and one whose reads fail, among the hundred.
MISSING = "t037"
BROKEN = "t041"


class Item(dy.Schema):
    """Five checks, as a team adds them to every table: a key, two not-nulls, a minimum."""

    id = dy.Int64(primary_key=True)
    name = dy.String()
    qty = dy.Int64(min=0)
    note = dy.String(nullable=True)


LOCATION = """\
import dagster as dg
import dataframely as dy
from dagster_duckdb import DuckDBResource

import dagster_dataframely as dd


class Item(dy.Schema):
    id = dy.Int64(primary_key=True)
    name = dy.String()
    qty = dy.Int64(min=0)
    note = dy.String(nullable=True)


tables = [
    dg.AssetSpec(f"t{{i:03d}}", metadata={{"dagster/table_name": f"shop.t{{i:03d}}"}})
    for i in range({n})
]
defs = dd.with_schemas(
    dg.Definitions(assets=tables, resources={{"duckdb": DuckDBResource(database={database!r})}}),
    {{spec.key: Item for spec in tables}},
    source=dd.sources.DuckDBTableSource(),
    checks_job="checks",
    checks_per_step={per_step},
)
# One check alone, as a team reruns the one that failed.
one = dg.AssetCheckKey(dg.AssetKey("t003"), "dy_rule__primary_key")
defs = dg.Definitions.merge(
    defs, dg.Definitions(jobs=[dg.define_asset_job("one", selection=dg.AssetSelection.checks(one))])
)
"""


def _frame(i: int) -> pl.DataFrame:
    """Table `i`'s rows: a duplicate key in every 7th, a null name in every 5th, a negative
    quantity in every 11th."""
    ids = list(range(20)) + ([3] if i % 7 == 3 else [])
    frame = pl.DataFrame(
        {
            "id": ids,
            "name": [None if (i % 5 == 1 and n == 2) else f"n{n}" for n in range(len(ids))],
            "qty": [-1 if (i % 11 == 2 and n == 4) else n for n in range(len(ids))],
            "note": [None] * len(ids),
        },
        schema={"id": pl.Int64, "name": pl.String, "qty": pl.Int64, "note": pl.String},
    )
    return frame


def _warehouse(path: Path, n: int = N) -> Path:
    """`n` tables `shop.t000`... in a DuckDB file, without `MISSING`, and `BROKEN` a view over
    a file that is gone."""
    with duckdb.connect(str(path)) as connection:
        connection.execute("create schema shop")
        for i in range(n):
            name = f"t{i:03d}"
            if name == MISSING:
                continue
            if name == BROKEN:
                gone = path.parent / "gone.parquet"
                _frame(i).write_parquet(gone)
                connection.execute(f"create view shop.{name} as select * from '{gone}'")
                gone.unlink()
                continue
            connection.register("frame", _frame(i).to_arrow())
            connection.execute(f"create table shop.{name} as select * from frame")
            connection.unregister("frame")
    return path


def _expected() -> dict[tuple[str, str], int]:
    """Every readable table's failing count per rule check, from Dataframely itself."""
    expected = {}
    for i in range(N):
        name = f"t{i:03d}"
        if name in (MISSING, BROKEN):
            continue
        _, failure = Item.filter(_frame(i))
        for rule, count in failure.counts().items():
            expected[(name, "dy_rule__" + rule.replace("|", "__"))] = count
    return expected


def _evaluations(instance: dg.DagsterInstance, run_id: str) -> list[dg.AssetCheckEvaluation]:
    return [
        entry.dagster_event.event_specific_data  # type: ignore[union-attr,misc]
        for entry in instance.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION)
    ]


def _failed_counts(evaluations: list[dg.AssetCheckEvaluation]) -> dict[tuple[str, str], Any]:
    return {
        (e.asset_key.to_user_string(), e.check_name): (
            e.metadata["dy_failed_count"].value if "dy_failed_count" in e.metadata else None
        )
        for e in evaluations
    }


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The checks job of a hundred tables through `dagster job execute` with a DAGSTER_HOME:
    the default executor, a process per step."""
    folder = tmp_path_factory.mktemp("many")
    database = _warehouse(folder / "warehouse.duckdb")
    (folder / "location.py").write_text(LOCATION.format(n=N, database=str(database), per_step=50))
    home = folder / "home"
    home.mkdir()
    env = {**os.environ, "DAGSTER_HOME": str(home), "NO_COLOR": "1"}
    dagster = Path(sys.executable).parent / "dagster"
    run = subprocess.run(
        [str(dagster), "job", "execute", "-f", "location.py", "-j", "checks"],
        cwd=folder, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    with dg.DagsterInstance.from_config(str(home)) as instance:
        (record,) = [r for r in instance.get_runs() if r.job_name == "checks"]
        evaluations = _evaluations(instance, record.run_id)
        steps = {
            entry.step_key: entry.dagster_event.event_type  # type: ignore[union-attr]
            for entry in instance.all_logs(record.run_id)
            if entry.dagster_event is not None
            and entry.dagster_event.event_type
            in (dg.DagsterEventType.STEP_SUCCESS, dg.DagsterEventType.STEP_FAILURE)
        }
        lines = [entry.user_message for entry in instance.all_logs(record.run_id)]
        failures = [
            str(entry.dagster_event.step_failure_data.error)  # type: ignore[union-attr]
            for entry in instance.all_logs(record.run_id, of_type=dg.DagsterEventType.STEP_FAILURE)
        ]
        step_of = {
            entry.dagster_event.event_specific_data.asset_key.to_user_string(): entry.step_key  # type: ignore[union-attr]
            for entry in instance.all_logs(
                record.run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION
            )
        }
    return {
        "step_of": step_of,
        "process": run,
        "run": record,
        "evaluations": evaluations,
        "steps": steps,
        "lines": lines,
        "failures": "\n".join(failures),
        "database": database,
    }


def test_a_hundred_tables_are_checked_in_two_steps_of_the_default_executor(
    cli_run: dict[str, Any],
) -> None:
    steps = cli_run["steps"]
    assert len(steps) == 2, steps
    assert all(key.startswith("dy_checks__duckdb__") for key in steps)
    # Every check of every table has a result, in its own asset's name.
    evaluations = cli_run["evaluations"]
    assert len({e.asset_key for e in evaluations}) == N
    assert len(evaluations) == N * (len(dd.wiring.rules(Item)) + 1)


def test_each_table_has_the_counts_dataframely_gives_it(cli_run: dict[str, Any]) -> None:
    found = _failed_counts(cli_run["evaluations"])
    expected = _expected()
    assert {key: found[key] for key in expected} == expected
    assert sum(1 for count in expected.values() if count) > 20  # the run has failures to find


def test_an_unreadable_table_fails_its_own_checks_and_hides_no_other(
    cli_run: dict[str, Any],
) -> None:
    evaluations = cli_run["evaluations"]
    for name, said in ((MISSING, "does not exist"), (BROKEN, "gone.parquet")):
        own = [e for e in evaluations if e.asset_key == dg.AssetKey(name)]
        assert own and all(not e.passed for e in own)
        assert all(said in e.metadata["dy_error"].value for e in own), own[0].metadata
    # The run fails, naming both tables, as `dbt test` exits 1; the other step's verdicts
    # decide nothing about this one.
    assert cli_run["run"].status == dg.DagsterRunStatus.FAILURE
    assert cli_run["process"].returncode != 0
    # The step's failure as the run records it: the CLI prints a step's last lines through
    # Dagster's mirror of its captured logs, which loses them now and then on a loaded machine.
    output = cli_run["failures"]
    assert TablesNotCheckedError.__name__ in output
    assert "2 of 50 tables could not be checked" in output and MISSING in output
    assert BROKEN in output


def test_each_step_logs_its_progress_table_by_table(cli_run: dict[str, Any]) -> None:
    lines = cli_run["lines"]
    assert sum("50/50 tables checked" in line for line in lines) == 2
    assert any(f"({MISSING}: could not be checked)" in line for line in lines)
    assert any("blocking check(s) failed at ERROR" in line for line in lines)


def test_each_step_prints_a_summary_cut_at_twenty_rows_with_the_checks_figures(
    cli_run: dict[str, Any],
) -> None:
    printed = re.findall(
        r" - (dy_checks__\S+) - dagster-dataframely: ",
        cli_run["process"].stdout + cli_run["process"].stderr,
    )
    summaries = printed_summaries(cli_run["process"].stdout + cli_run["process"].stderr)
    assert len(summaries) == len(printed) == 2
    checked = {(e.asset_key.to_user_string(), e.check_name): e for e in cli_run["evaluations"]}
    figures = {(f.asset, f.rule): f for f in map(Figures.of, checked.values())}
    for step, summary in zip(printed, summaries, strict=True):
        own = [f for f in map(Figures.of, checked.values()) if cli_run["step_of"][f.asset] == step]
        failed = [f for f in own if f.verdict == "failed"]
        assert summary.headline == (
            f"{len(own)} checks of 50 assets: {len(failed)} failed, 0 warned, "
            f"{len(own) - len(failed)} passed."
        )
        assert summary.passed == f"Passed: {len(own) - len(failed)} checks."
        # A table that could not be checked is one row for its checks (each carries its error).
        unreadable = [f.asset for f in failed if f.error is not None]
        assert len(summary.rows) == 20
        assert summary.more == len(failed) - len(unreadable) + len(set(unreadable)) - 20 > 0
        for row in summary.rows:
            if row["failing rows"] == "not checked":
                assert row["rule"] == f"every check ({unreadable.count(row['asset'])})"
                continue
            shown = figures[(row["asset"], row["rule"])]
            assert row["failing rows"] == f"{shown.failed_count} of {shown.row_count}"
            assert float(row["fraction"].removesuffix("%")) == round(100 * shown.failed_fraction, 1)
            assert (row["tolerance"], row["verdict"]) == ("error above 0 rows", "failed")
            assert row["engine"] == shown.engine == "duckdb"
            assert "failing rows kept in" not in row  # no rows kept: the column is left out
    assert sum(summary.more + len(summary.rows) for summary in summaries) == sum(
        1 for f in figures.values() if f.verdict == "failed" and f.error is None
    ) + len({MISSING, BROKEN})


def test_verdicts_equal_those_of_one_step_per_asset(
    cli_run: dict[str, Any], tmp_path: Path
) -> None:
    """The same hundred tables with one step per asset (`checks_per_step=1`), in process."""
    defs = _defs(cli_run["database"], checks_per_step=1)
    assert len(defs.asset_checks or []) == N
    result = defs.resolve_job_def("checks").execute_in_process(raise_on_error=False)
    one_each = {
        (e.asset_key.to_user_string(), e.check_name): (e.passed, e.severity)
        for e in result.get_asset_check_evaluations()
    }
    grouped = {
        (e.asset_key.to_user_string(), e.check_name): (e.passed, e.severity)
        for e in cli_run["evaluations"]
    }
    assert grouped == one_each


def _defs(database: Path, **settings: Any) -> dg.Definitions:
    tables = [
        dg.AssetSpec(f"t{i:03d}", metadata={"dagster/table_name": f"shop.t{i:03d}"})
        for i in range(N)
    ]
    return dd.with_schemas(
        dg.Definitions(assets=tables, resources={"duckdb": DuckDBResource(database=str(database))}),
        {spec.key: Item for spec in tables},
        source=dd.sources.DuckDBTableSource(),
        checks_job="checks",
        **settings,
    )


def test_one_check_runs_alone_in_one_step_from_the_cli(cli_run: dict[str, Any]) -> None:
    folder = cli_run["database"].parent
    env = {**os.environ, "DAGSTER_HOME": str(folder / "home"), "NO_COLOR": "1"}
    dagster = Path(sys.executable).parent / "dagster"
    run = subprocess.run(
        [str(dagster), "job", "execute", "-f", "location.py", "-j", "one"],
        cwd=folder, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip

    with dg.DagsterInstance.from_config(str(folder / "home")) as instance:
        (record,) = [r for r in instance.get_runs() if r.job_name == "one"]
        (evaluation,) = _evaluations(instance, record.run_id)
        steps = {e.step_key for e in instance.all_logs(record.run_id) if e.step_key}
    assert evaluation.asset_check_key == dg.AssetCheckKey(
        dg.AssetKey("t003"), "dy_rule__primary_key"
    )
    assert evaluation.metadata["dy_failed_count"].value == 2  # the duplicated id, twice
    (step,) = steps
    assert step.startswith("dy_checks__duckdb__1_of_2")
    assert run.returncode != 0  # the check is blocking, and fails


def test_steps_group_by_partitions_resources_and_blocking_downstream(tmp_path: Path) -> None:
    daily = dg.DailyPartitionsDefinition(start_date="2024-01-01", timezone="America/New_York")
    leaves = [dg.AssetSpec(f"leaf{i}") for i in range(5)]
    days = [dg.AssetSpec(f"day{i}", partitions_def=daily) for i in range(3)]
    feeding = [dg.AssetSpec("a"), dg.AssetSpec("b")]
    other = dg.AssetSpec("c")
    consumers = [
        dg.AssetSpec("mart", deps=["a", "b"]),
        dg.AssetSpec("report", deps=["c"]),
    ]
    defs = dd.with_schemas(
        dg.Definitions(assets=[*leaves, *days, *feeding, other, *consumers]),
        {spec.key: Item for spec in [*leaves, *days, *feeding, other]},
        source={
            **{spec.key: dd.sources.DuckDBTableSource() for spec in [*leaves, *feeding, other]},
            **{
                spec.key: dd.sources.DuckDBTableSource(resource_key="lake", partition_expr="day")
                for spec in days
            },
        },
        checks_per_step=3,
    )
    steps = sorted(
        sorted({spec.asset_key.to_user_string() for spec in checks.check_specs})  # type: ignore[union-attr]
        for checks in defs.asset_checks or []
    )
    # leaves: 5 in two even steps of at most 3; the partitioned tables on their own resource;
    # a and b feed the same mart, c its own report: a failure of c must not stop the mart.
    assert steps == [
        ["a", "b"],
        ["c"],
        ["day0", "day1", "day2"],
        ["leaf0", "leaf1", "leaf2"],
        ["leaf3", "leaf4"],
    ]


def test_a_single_unreadable_table_raises_its_own_error_after_the_others_results(
    tmp_path: Path,
) -> None:
    database = _warehouse(tmp_path / "warehouse.duckdb", n=40)
    defs = _defs(database)
    job = dg.define_asset_job(
        "some", selection=dg.AssetSelection.checks_for_assets(*[f"t{i:03d}" for i in range(30, 40)])
    )
    merged = dg.Definitions.merge(defs, dg.Definitions(jobs=[job]))

    result = merged.resolve_job_def("some").execute_in_process(raise_on_error=False)

    (failure,) = result.get_step_failure_events()
    error = failure.step_failure_data.error
    assert error is not None and error.cause is not None
    assert error.cause.cls_name == SourceReadError.__name__
    assert f"asset {MISSING}" in error.cause.message
    checked = {
        e.asset_key.to_user_string() for e in result.get_asset_check_evaluations() if e.passed
    }
    assert checked == {f"t{i:03d}" for i in range(30, 40)} - {MISSING}


LAUNCH = """
mutation Launch($params: ExecutionParams!) {
  launchPipelineExecution(executionParams: $params) {
    __typename
    ... on LaunchRunSuccess { run { runId } }
    ... on PythonError { message }
    ... on InvalidSubsetError { message }
  }
}
"""
STATUS = "query Status($id: ID!) { runOrError(runId: $id) { ... on Run { status } } }"
REPOSITORIES = (
    "{ repositoriesOrError { ... on RepositoryConnection { nodes { name location { name } } } } }"
)


def _graphql(url: str, query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
    request = urllib.request.Request(
        f"{url}/graphql",
        data=json.dumps({"query": query, "variables": variables or {}}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        answer = json.load(response)
    assert "errors" not in answer, answer
    return answer["data"]


def test_one_check_launched_through_the_webservers_graphql_runs_alone(
    cli_run: dict[str, Any], tmp_path: Path
) -> None:
    """As the UI's "Execute" of one check sends it: the asset job, one check selected."""
    (tmp_path / "location.py").write_text(
        LOCATION.format(n=N, database=str(cli_run["database"]), per_step=50)
    )
    (tmp_path / "dagster_home").mkdir()
    # Runs start as the webserver launches them; no daemon dequeues them here.
    (tmp_path / "dagster_home" / "dagster.yaml").write_text(
        "run_coordinator:\n  module: dagster._core.run_coordinator\n"
        "  class: DefaultRunCoordinator\n"
    )
    with webserver(tmp_path, target=("-f", str(tmp_path / "location.py"))) as url:
        (repository,) = _graphql(url, REPOSITORIES)["repositoriesOrError"]["nodes"]
        params = {
            "selector": {
                "repositoryLocationName": repository["location"]["name"],
                "repositoryName": repository["name"],
                "pipelineName": "__ASSET_JOB",
                "assetSelection": [],
                "assetCheckSelection": [
                    {"assetKey": {"path": ["t003"]}, "name": "dy_rule__primary_key"}
                ],
            },
            "mode": "default",
            "runConfigData": {},
        }
        launched = _graphql(url, LAUNCH, {"params": params})["launchPipelineExecution"]
        assert launched["__typename"] == "LaunchRunSuccess", launched
        run_id = launched["run"]["runId"]
        deadline = time.monotonic() + 300
        while (status := _graphql(url, STATUS, {"id": run_id})["runOrError"]["status"]) not in (
            "SUCCESS",
            "FAILURE",
            "CANCELED",
        ):
            assert time.monotonic() < deadline, status
            time.sleep(1)
    with dg.DagsterInstance.from_config(str(tmp_path / "dagster_home")) as instance:
        (evaluation,) = _evaluations(instance, run_id)
    # The duplicated key fails the blocking check, and so the run, as in the UI.
    assert status == "FAILURE"
    assert evaluation.asset_check_key == dg.AssetCheckKey(
        dg.AssetKey("t003"), "dy_rule__primary_key"
    )
    assert evaluation.metadata["dy_failed_count"].value == 2


def test_a_component_of_a_hundred_entries_checks_them_in_two_steps(tmp_path: Path) -> None:
    from dagster.components.testing import create_defs_folder_sandbox
    from support import scaffold_checks

    database = _warehouse(tmp_path / "warehouse.duckdb")
    with create_defs_folder_sandbox() as sandbox:
        (sandbox.defs_folder_path / "tables.py").write_text(
            "import dagster as dg\n\n"
            + "".join(
                f"t{i:03d} = dg.AssetSpec('t{i:03d}', "
                f"metadata={{'dagster/table_name': 'shop.t{i:03d}'}})\n"
                for i in range(N)
            )
        )
        source = {"kind": "duckdb_table", "resource_key": "duckdb"}
        entries = [
            {"asset": f"t{i:03d}", "schema": "test_many_tables:Item", "source": source}
            for i in range(N)
        ]
        scaffold_checks(sandbox, {"checks": entries, "checks_job": "quality"})
        with sandbox.build_component_tree() as tree:
            defs = dg.Definitions.merge(
                tree.build_defs(),
                dg.Definitions(resources={"duckdb": DuckDBResource(database=str(database))}),
            )
            result = defs.resolve_job_def("quality").execute_in_process(raise_on_error=False)

    steps = {e.step_key for e in result.all_events if e.is_step_start}
    assert len(steps) == 2 and all(step.startswith("dy_checks__duckdb__") for step in steps)
    assert len({e.asset_key for e in result.get_asset_check_evaluations()}) == N
    found = _failed_counts(list(result.get_asset_check_evaluations()))
    expected = _expected()
    assert {key: found[key] for key in expected} == expected
    assert not result.success


def test_a_duckdb_file_that_does_not_exist_is_a_connection_error_and_stays_absent(
    tmp_path: Path,
) -> None:
    """Checks read: they open the file read-only, so a wrong path is not a new empty file."""
    database = tmp_path / "nowhere.duckdb"
    job = dg.define_asset_job("one", selection=dg.AssetSelection.checks_for_assets("t001"))
    merged = dg.Definitions.merge(_defs(database), dg.Definitions(jobs=[job]))

    result = merged.resolve_job_def("one").execute_in_process(raise_on_error=False)

    (failure,) = result.get_step_failure_events()
    error = failure.step_failure_data.error
    assert error is not None and error.cause is not None
    assert error.cause.cls_name == "SourceConnectionError"
    assert "does not exist" in error.cause.message and "asset t001" in error.cause.message
    assert not database.exists()


def test_a_step_opens_its_duckdb_file_once_and_each_table_joins_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opening a file reads its whole catalog (13 ms a table for a file of a hundred
    tables): a step holds the file open read-only while it runs, and each table's read joins
    the open database; a missing and a broken table among them still fail on their own."""
    from dagster_dataframely.sources import _duckdb

    database = _warehouse(tmp_path / "warehouse.duckdb")
    held: list[str] = []
    joined: list[bool] = []
    holding = _duckdb.held_read_only
    reading = _duckdb.read_only

    @contextmanager
    def spied_hold(resource: Any) -> Iterator[None]:
        held.append(resource.database)
        with holding(resource):
            yield

    @contextmanager
    def spied_read(resource: Any) -> Iterator[Any]:
        with reading(resource) as connection:
            # A setting of the database, not of the session: seen by every connection to the
            # same open database, and reset where the file is opened anew.
            joined.append(connection.sql("select current_setting('threads')").fetchone()[0] == 1)
            connection.execute("set global threads = 1")
            yield connection

    monkeypatch.setattr(_duckdb, "held_read_only", spied_hold)
    monkeypatch.setattr(_duckdb, "read_only", spied_read)
    defs = _defs(database, checks_per_step=50, check_concurrency=1)

    result = defs.resolve_job_def("checks").execute_in_process(raise_on_error=False)

    assert held == [str(database), str(database)]  # one hold a step, 50 tables each
    assert len(joined) == N and sum(joined) == N - 2  # the first table of each step opens it
    failed_tables = {
        e.asset_key.to_user_string()
        for e in result.get_asset_check_evaluations()
        if e.metadata.get("dy_error") is not None
    }
    assert failed_tables == {MISSING, BROKEN}


def test_a_duckdb_file_another_process_writes_when_the_step_starts_is_not_held(
    tmp_path: Path,
) -> None:
    """A file locked at the start of the step is not held: each table's read waits for the
    lock as its own, and the tables are checked once the writer lets go."""
    from dagster_dataframely.sources._duckdb_cursors import held_read_only, read_only

    database = _warehouse(tmp_path / "warehouse.duckdb", n=3)
    writer = subprocess.Popen(
        [sys.executable, "-c", "import duckdb, sys, time\n"
         "c = duckdb.connect(sys.argv[1]); print('locked', flush=True); time.sleep(1.5)",
         str(database)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert writer.stdout is not None and writer.stdout.readline().strip() == "locked"
    resource = DuckDBResource(database=str(database))
    with held_read_only(resource), read_only(resource) as connection:
        assert connection.sql("select count(*) from shop.t000").fetchone() == (20,)
    writer.wait(timeout=30)
