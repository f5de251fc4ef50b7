"""Each dialect's NaN and infinity tests mean polars' `is_nan` and `is_infinite`, executed
by the database itself on NaN, ±inf, ±0.0, the largest finite values and NULL.

DuckDB writes them `isnan(x)` and `isinf(x)` (its own functions, the cheapest per row);
PostgreSQL, Snowflake and Spark compare with `CAST('NaN' AS DOUBLE)` (NaN equals itself
there) and list `±inf` (Snowflake's in test_sql_snowflake_float_forms.py, beside the other
fakesnow runs); BigQuery's `IS_NAN` and list are held in its golden files (test_sql_golden.py),
as no BigQuery server runs in tests. The `nan`, `inf` and bound rules built on them are
counted against Dataframely in test_pushdown_parity.py and test_sql_source_parity.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
from postgres import PostgresServer
from spark import GROUP
from sqlglot import exp
from test_sql_golden import GOLDEN

from dagster_dataframely._engine.sql.dialects import DIALECTS

VALUES = [math.nan, math.inf, -math.inf, -0.0, 0.0, 1.5, -1.7976931348623157e308, None]
#: Float32 has no 1.8e308: its largest finite value instead.
VALUES32 = [*VALUES[:6], -3.4028234663852886e38, None]


def _expected(values: list[float | None], dtype: pl.DataType) -> dict[str, list[bool | None]]:
    """What polars says of each value: NaN, infinite, or null for a null."""
    series = pl.Series(values, dtype=dtype)
    return {"nan": series.is_nan().to_list(), "inf": series.is_infinite().to_list()}


def _query(dialect: str, table: str, column: str) -> str:
    """The dialect's NaN and infinity tests of `column`, in row order."""
    written = DIALECTS[dialect]
    value = exp.column(column, quoted=True)
    return (
        exp.select(
            exp.alias_(written.is_nan(value.copy()), "nan", quoted=True),
            exp.alias_(written.is_infinite(value.copy()), "inf", quoted=True),
        )
        .from_(exp.to_table(table))
        .order_by(exp.column("i", quoted=True))
        .sql(dialect)
    )


def _verdicts(rows: list[tuple[object, object]]) -> dict[str, list[bool | None]]:
    return {
        "nan": [None if nan is None else bool(nan) for nan, _ in rows],
        "inf": [None if inf is None else bool(inf) for _, inf in rows],
    }


def _cast(value: float | None, cast: str) -> str:
    if value is None:
        return "NULL"
    text = "NaN" if math.isnan(value) else repr(value).replace("inf", "Infinity")
    return f"CAST('{text}' AS {cast})"


def _insert(execute: Callable[[str], object], table: str, columns: int, cast: str) -> None:
    """The rows of `VALUES` (`VALUES32` in a second column) after their row number `i`."""
    for i, values in enumerate(zip(VALUES, VALUES32, strict=True)):
        written = ", ".join(_cast(value, cast) for value in values[:columns])
        execute(f"INSERT INTO {table} VALUES ({i}, {written})")


def test_duckdb_isnan_and_isinf_are_polars_verdicts_on_double_and_float(tmp_path: Path) -> None:
    with duckdb.connect(str(tmp_path / "floats.duckdb")) as connection:
        connection.execute('CREATE TABLE floats ("i" INTEGER, "d" DOUBLE, "f" FLOAT)')
        _insert(connection.execute, "floats", 2, "DOUBLE")
        double = connection.execute(_query("duckdb", "floats", "d")).fetchall()
        single = connection.execute(_query("duckdb", "floats", "f")).fetchall()

    assert _verdicts(double) == _expected(VALUES, pl.Float64())
    assert _verdicts(single) == _expected(VALUES32, pl.Float32())


def test_postgres_nan_equality_and_infinity_list_are_polars_verdicts(
    postgres: PostgresServer,
) -> None:
    """`double precision` and `real`: NaN equals NaN in PostgreSQL, and is in no list."""
    with postgres.connect() as connection:
        connection.autocommit = True
        connection.execute("DROP TABLE IF EXISTS floats")
        connection.execute('CREATE TABLE floats ("i" integer, "d" double precision, "f" real)')
        _insert(connection.execute, "floats", 2, "double precision")
        double = connection.execute(_query("postgres", "floats", "d")).fetchall()
        single = connection.execute(_query("postgres", "floats", "f")).fetchall()
        connection.execute("DROP TABLE floats")

    assert _verdicts(double) == _expected(VALUES, pl.Float64())
    assert _verdicts(single) == _expected(VALUES32, pl.Float32())


def test_bigquery_keeps_is_nan_and_the_infinity_list_in_its_golden_sql() -> None:
    """BigQuery's NaN compares false with everything (IEEE), so NaN is tested with `IS_NAN`
    and is in no list: both as sent, in the golden count query."""
    counts = (GOLDEN / "bigquery" / "counts.sql").read_text()

    assert _query("bigquery", "t", "amount") == (
        "SELECT IS_NAN(`amount`) AS `nan`, "
        "`amount` IN (CAST('inf' AS FLOAT64), CAST('-inf' AS FLOAT64)) AS `inf` "
        "FROM t ORDER BY `i`"
    )
    assert "NOT (NOT IS_NAN(`amount`))" in counts
    assert "NOT `amount` IN (CAST('inf' AS FLOAT64), CAST('-inf' AS FLOAT64))" in counts


@GROUP
def test_spark_nan_equality_and_infinity_list_are_polars_verdicts(spark: Any) -> None:
    """Spark has no `isinf`, and its `isnan(NULL)` is false where polars says null: it keeps
    NaN equality (NaN equals itself in Spark) and the `±inf` list, on `DOUBLE` and `FLOAT`."""
    rows = ", ".join(
        f"({i}, {_cast(double, 'DOUBLE')}, {_cast(single, 'FLOAT')})"
        for i, (double, single) in enumerate(zip(VALUES, VALUES32, strict=True))
    )
    spark.sql(
        f"CREATE OR REPLACE TEMPORARY VIEW floats AS SELECT * FROM VALUES {rows} AS t(i, d, f)"
    )
    double = [tuple(row) for row in spark.sql(_query("spark", "floats", "d")).collect()]
    single = [tuple(row) for row in spark.sql(_query("spark", "floats", "f")).collect()]

    assert _verdicts(double) == _expected(VALUES, pl.Float64())
    assert _verdicts(single) == _expected(VALUES32, pl.Float32())
