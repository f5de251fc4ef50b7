"""Property: a schema's rules count the same in PostgreSQL, in DuckDB and in polars.

The generated tables of `test_pushdown_parity` (nulls, NaN, ±inf, -0.0, float32 rounding,
multi-byte and newline strings, duplicate and null keys, empty tables) are copied into a real
PostgreSQL server and read back through `SQLTableSource`'s connection code: its aggregate and
sample queries for the rules PostgreSQL expresses exactly, its batched `SELECT` (with the
dtypes it reads off the description) for the rest. Every rule but the one whose regex has
`\\d` (Unicode digits in polars) runs in PostgreSQL, so the property is about its SQL.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import dagster as dg
import polars as pl
import psycopg
import pytest
import test_pushdown_parity as generated
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from postgres import PostgresServer
from psycopg import sql

import dagster_dataframely as dd
from dagster_dataframely._engine.catalogue import rules
from dagster_dataframely._engine.evaluate import evaluate
from dagster_dataframely._engine.sql.backend import SQLTable
from dagster_dataframely.sources._sql import _Database
from dagster_dataframely.sources._sql_query import relation

COLUMNS = {
    "id": "bigint",
    "ref": "text",
    "amount": "double precision",
    "ratio": "real",
    "code": "text",
    "digits": "text",
    "level": "smallint",
    "day": "date",
    "at": "timestamp",
}
SOURCE = dd.sources.SQLTableSource(resource_key="warehouse", dialect="postgres")


@pytest.fixture(scope="module")
def connection(postgres: PostgresServer) -> Iterator[psycopg.Connection]:
    with postgres.connect() as connection:
        yield connection


def _in_postgres(
    connection: psycopg.Connection, frame: pl.DataFrame, types: Mapping[str, str] = COLUMNS
) -> _Database:
    """`frame` as the table `generated`, its columns of the PostgreSQL `types`."""
    columns = sql.SQL(", ").join(
        sql.SQL("{} {}").format(sql.Identifier(name), sql.SQL(kind)) for name, kind in types.items()
    )
    connection.execute("DROP TABLE IF EXISTS generated")
    connection.execute(sql.SQL("CREATE TABLE generated ({})").format(columns))
    with connection.cursor().copy("COPY generated FROM STDIN") as copy:
        for row in frame.iter_rows():
            copy.write_row(row)
    return _Database(connection, SOURCE, dg.AssetKey("generated"), log=lambda _: None)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(rows=[])
@given(rows=st.lists(generated.ROW, max_size=12))
def test_postgres_and_duckdb_count_what_the_polars_evaluator_counts(
    connection: psycopg.Connection, rows: list[dict[str, object]]
) -> None:
    frame = pl.DataFrame(rows, schema=generated.SCHEMA, orient="row")
    catalogue = rules(generated.Everything)
    database = _in_postgres(connection, frame)
    select = relation(database.dtypes, "generated", "postgres", None, None)
    table = SQLTable.of(select, dialect="postgres", run=database.run)
    scanned = database.scan(select)

    in_postgres = table.evaluate(scanned, catalogue, max_failure_samples=3, identify=["id"])
    in_duckdb = generated._in_duckdb(frame).evaluate(
        frame.lazy(), catalogue, max_failure_samples=3, identify=["id"]
    )
    reference = evaluate(frame.lazy(), catalogue, max_failure_samples=3, identify=["id"])

    assert scanned.collect_schema() == frame.schema
    assert in_postgres.row_count == reference.row_count == frame.height
    assert dict(in_postgres.failed) == dict(reference.failed) == dict(in_duckdb.failed)
    fallen_back = {
        name for name, engine in in_postgres.engines.items() if engine.startswith("polars")
    }
    assert fallen_back == generated.FALLBACK | {"known_refs"}  # float8 * 2 may overflow
    assert set(in_postgres.engines) == {rule.name for rule in catalogue}
    for name, sample in in_postgres.samples.items():
        assert 0 < sample.height <= 3
        assert sample.height == reference.samples[name].height
