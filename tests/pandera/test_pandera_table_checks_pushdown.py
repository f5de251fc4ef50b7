"""A Pandera check that judges the whole table fails an empty table read by a SQL source too.

With pushdown, the row rules are counted in the database, where an empty table fails none;
a whole-table verdict (`pl.len() > 0`, a column's total) has no row predicate, so it is
judged in polars, which asks it of the empty table as Pandera does. Real DuckDB file, real
PostgreSQL server, real runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg
import duckdb
import pandera.polars as pa
import pytest
from dagster_duckdb import DuckDBResource
from postgres import PostgresResource, PostgresServer
from support import evaluations
from test_pandera_table_checks import has_rows, not_empty, positive_total

import dagster_dataframely as dd

SCHEMA = pa.DataFrameSchema(
    {"amount": pa.Column(int, checks=pa.Check(positive_total)), "note": pa.Column(str)},
    checks=[pa.Check(not_empty), pa.Check(has_rows)],
)
TABLE_CHECKS = {"dy_rule__not_empty", "dy_rule__has_rows", "dy_rule__amount__check__positive_total"}
ROW_CHECKS = {"dy_rule__amount__nullability", "dy_rule__note__nullability"}
ROWS = [(3, "x")]


def _outcomes(source: dd.sources.Source, resource: Any) -> dict[str, tuple[bool, str, int]]:
    """check name -> (passed, engine, failed rows), of a run of the checks of `payments`."""
    spec = dg.AssetSpec("payments")
    checks = dd.schema_checks(SCHEMA, asset="payments", source=source)
    defs = dg.Definitions(
        assets=[spec],
        asset_checks=[checks],
        jobs=[dd.checks_job(checks, name="checks")],
        resources={"warehouse": resource},
    )
    result = defs.resolve_job_def("checks").execute_in_process(raise_on_error=False)
    return {
        name: (e.passed, e.metadata["dy_engine"].value, e.metadata["dy_failed_count"].value)  # type: ignore[misc]
        for name, e in evaluations(result).items()
        if "dy_engine" in e.metadata
    }


def _duckdb(path: Path, rows: list[tuple[int, str]]) -> tuple[dd.sources.Source, Any]:
    with duckdb.connect(str(path)) as connection:
        connection.execute("CREATE TABLE payments (amount BIGINT NOT NULL, note VARCHAR NOT NULL)")
        for row in rows:
            connection.execute("INSERT INTO payments VALUES (?, ?)", row)
    return (
        dd.sources.DuckDBTableSource(resource_key="warehouse", table="payments"),
        DuckDBResource(database=str(path)),
    )


def _postgres(server: PostgresServer, rows: list[tuple[int, str]]) -> tuple[dd.sources.Source, Any]:
    with server.connect() as connection:
        connection.execute(
            "DROP TABLE IF EXISTS payments;"
            "CREATE TABLE payments (amount bigint NOT NULL, note text NOT NULL)"
        )
        for row in rows:
            connection.execute("INSERT INTO payments VALUES (%s, %s)", row)
    return (
        dd.sources.SQLTableSource(resource_key="warehouse", dialect="postgres", table="payments"),
        PostgresResource(conninfo=server.conninfo),
    )


@pytest.mark.parametrize("engine", ["duckdb", "postgres"])
def test_with_pushdown_an_empty_table_fails_the_table_checks_and_rows_pass_them(
    engine: str, postgres: PostgresServer, tmp_path: Path
) -> None:
    def source(rows: list[tuple[int, str]], name: str) -> tuple[dd.sources.Source, Any]:
        if engine == "duckdb":
            return _duckdb(tmp_path / f"{name}.duckdb", rows)
        return _postgres(postgres, rows)

    empty = _outcomes(*source([], "empty"))
    assert {name for name, (passed, _, _) in empty.items() if not passed} == TABLE_CHECKS
    for name in TABLE_CHECKS:
        _, ran_in, failed = empty[name]
        assert ran_in.startswith("polars (") and failed == 0
    assert {empty[name][1] for name in ROW_CHECKS} == {engine}  # the pushdown path was taken

    with_rows = _outcomes(*source(ROWS, "rows"))
    assert all(passed for passed, _, _ in with_rows.values())
    assert {with_rows[name][1] for name in ROW_CHECKS} == {engine}
