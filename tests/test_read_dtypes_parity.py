"""Property: the numeric casts of `read_dtypes="cast"` convert the same values in DuckDB, in
PostgreSQL and in polars, where rounding decides (a float to a `Decimal`, a float to an
integer) and where a range does (an integer, a `Decimal` to a narrower one).

Generated values lie on the declared scale's grid, one float step off it, half a step off
it, at and past each limit, or anywhere (NaN and ±inf included); half the tables keep only
the rows polars casts. The casts' failures count alike in the three engines, every cast runs
in the database, and on a table whose every value was cast (the only one the rules are
reported on) the rules that read the cast columns count alike too.
"""

from __future__ import annotations

import decimal
import math
from collections.abc import Iterator

import dagster as dg
import dataframely as dy
import duckdb
import polars as pl
import psycopg
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from postgres import PostgresServer
from psycopg import sql
from sqlglot import exp

import dagster_dataframely as dd
from dagster_dataframely._engine.catalogue import rules
from dagster_dataframely._engine.evaluate import evaluate
from dagster_dataframely._engine.read_dtypes import Casts
from dagster_dataframely._engine.sql.backend import SQLTable
from dagster_dataframely.sources._sql import _Database
from dagster_dataframely.sources._sql_query import relation


class Numbers(dy.Schema):
    row = dy.Int64(primary_key=True)
    cents = dy.Decimal(8, 2, nullable=True, min=decimal.Decimal(0))
    fine = dy.Decimal(15, 4, nullable=True)
    narrow = dy.Decimal(6, 2, nullable=True)
    whole = dy.Int32(nullable=True, min=0)
    small = dy.Int16(nullable=True)
    rescaled = dy.Decimal(8, 2, nullable=True)
    tiny = dy.Int8(nullable=True, max=100)


#: column -> (dtype read, PostgreSQL type)
READ: dict[str, tuple[pl.DataType, str]] = {
    "row": (pl.Int64(), "bigint"),
    "cents": (pl.Float64(), "double precision"),
    "fine": (pl.Float64(), "double precision"),
    "narrow": (pl.Float32(), "real"),
    "whole": (pl.Float64(), "double precision"),
    "small": (pl.Float32(), "real"),
    "rescaled": (pl.Decimal(12, 4), "numeric(12, 4)"),
    "tiny": (pl.Int64(), "bigint"),
}
SCHEMA = pl.Schema({name: dtype for name, (dtype, _) in READ.items()})


def _near_grid(digits: int, scale: int) -> st.SearchStrategy[float | None]:
    """Floats on the grid of `Decimal(digits, scale)` (to past its limit), a float step or
    half a grid step off it, or any float."""
    limit = 10**digits + 2

    def moved(step: int, how: str) -> float:
        value = step / 10**scale
        if how == "up":
            return math.nextafter(value, math.inf)
        if how == "down":
            return math.nextafter(value, -math.inf)
        if how == "half":
            return (step + 0.5) / 10**scale
        return value

    grid = st.builds(
        moved, st.integers(-limit, limit), st.sampled_from(["on", "up", "down", "half"])
    )
    return st.one_of(st.none(), grid, st.floats())


def _integral(bits: int) -> st.SearchStrategy[float | None]:
    edge = 2 ** (bits - 1)
    near_edges = st.integers(-edge - 2, edge + 2) | st.integers(-edge - 2, -edge + 2)
    return st.one_of(
        st.none(),
        near_edges.map(float),
        st.integers(-edge, edge).map(lambda value: value + 0.5),
        st.floats(),
    )


ROW = st.fixed_dictionaries(
    {
        "cents": _near_grid(6, 2),
        "fine": _near_grid(11, 4),
        "narrow": _near_grid(4, 2),
        "whole": _integral(32),
        "small": _integral(16),
        "rescaled": st.one_of(
            st.none(),
            st.integers(-(10**10), 10**10),
            st.integers(10**10 - 3, 10**10 + 3),
            st.integers(-(10**11) + 1, 10**11 - 1),
        ).map(lambda units: None if units is None else decimal.Decimal(units).scaleb(-4)),
        "tiny": st.one_of(st.none(), st.integers(-130, 130), st.integers(-(2**63), 2**63 - 1)),
    }
)
SOURCE = dd.sources.SQLTableSource(resource_key="warehouse", dialect="postgres")


@pytest.fixture(scope="module")
def connection(postgres: PostgresServer) -> Iterator[psycopg.Connection]:
    with postgres.connect() as connection:
        yield connection


def _frame(rows: list[dict[str, object]]) -> pl.DataFrame:
    numbered = [{"row": index, **row} for index, row in enumerate(rows)]
    return pl.DataFrame(numbered, schema=SCHEMA, orient="row")


def _in_postgres(connection: psycopg.Connection, frame: pl.DataFrame) -> _Database:
    columns = sql.SQL(", ").join(
        sql.SQL("{} {}").format(sql.Identifier(name), sql.SQL(kind))
        for name, (_, kind) in READ.items()
    )
    connection.execute("DROP TABLE IF EXISTS numbers")
    connection.execute(sql.SQL("CREATE TABLE numbers ({})").format(columns))
    with connection.cursor().copy("COPY numbers FROM STDIN") as copy:
        for row in frame.iter_rows():
            copy.write_row(row)
    return _Database(connection, SOURCE, dg.AssetKey("numbers"), log=lambda _: None)


def _in_duckdb(frame: pl.DataFrame) -> SQLTable:
    connection = duckdb.connect()
    connection.register("numbers", frame.to_arrow())
    return SQLTable.of(
        exp.select(exp.Star()).from_("numbers"),
        dialect="duckdb",
        run=lambda query: pl.DataFrame(pl.from_arrow(connection.sql(query).to_arrow_table())),
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(rows=[], only_cast=False)
@example(
    rows=[{"cents": 999999.995, "narrow": 9999.995, "whole": 2.0**31, "tiny": 128}],
    only_cast=False,
)
@given(rows=st.lists(ROW, max_size=12), only_cast=st.booleans())
def test_the_numeric_casts_convert_the_same_values_in_duckdb_postgres_and_polars(
    connection: psycopg.Connection, rows: list[dict[str, object]], only_cast: bool
) -> None:
    frame = _frame([{name: row.get(name) for name in READ if name != "row"} for row in rows])
    casts = Casts.plan(Numbers, frame.schema, "cast")
    catalogue = [*rules(Numbers), *casts.rules]
    columns = Numbers.column_names()
    if only_cast:
        cast = pl.all_horizontal(rule.expr for rule in casts.rules).alias("cast")
        frame = frame.filter(casts.frame(frame.lazy(), columns).select(cast).collect()["cast"])
    database = _in_postgres(connection, frame)
    select = relation(database.dtypes, "numbers", "postgres", None, None)
    scanned = database.scan(select)

    reference = evaluate(casts.frame(frame.lazy(), columns), catalogue, max_failure_samples=0)
    found = {
        engine.dialect.name: engine.evaluate(
            casts.frame(lf, columns), catalogue, max_failure_samples=0, casts=casts.casts
        )
        for engine, lf in (
            (_in_duckdb(frame), frame.lazy()),
            (SQLTable.of(select, dialect="postgres", run=database.run), scanned),
        )
    }

    assert scanned.collect_schema() == frame.schema
    assert len(casts.casts) == len(READ) - 1
    cast_failed = {cast.rule.name: reference.failed[cast.rule.name] for cast in casts.casts}
    for dialect, evaluation in found.items():
        assert {name: evaluation.failed[name] for name in cast_failed} == cast_failed, dialect
        assert {evaluation.engines[name] for name in cast_failed} == {dialect}
        # The rules are reported only on a table every value of which was cast: on a value
        # that failed, polars keeps what its cast made of it (-1 of -1.5), SQL a null.
        if not any(cast_failed.values()):
            assert dict(evaluation.failed) == dict(reference.failed), dialect
