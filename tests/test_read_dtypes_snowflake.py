"""`read_dtypes="cast"` on `SQLTableSource(dialect="snowflake")`, its cast SQL executed by
fakesnow in real check runs: each cast kind Snowflake pushes (an `Enum` or `Categorical` of
text, a zone's alias, a narrower integer, a float to an integer, a narrower `Decimal`), at
both sides of its limit, counts, shows and fails as the polars path does on the same rows in
the dtypes Snowflake's connector hands over; the kinds Snowflake leaves to polars fall back.

fakesnow runs the SQL in DuckDB, so these runs prove the SQL's logic (the guards, the bounds,
NaN and ±inf outside every integer range), not Snowflake's own semantics where DuckDB's
differ: the `Enum` cast compares categories with `IN`, which in Snowflake a column's
case-insensitive collation may make take `'B'` for `'b'` (as for `is_in`), and a
`TIMESTAMP_TZ` keeps each value's offset there, where DuckDB keeps only the instant (the
zone alias passes the column on unchanged, so only the instants are compared either way).
"""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
import datetime as dt
import decimal
from collections.abc import Iterator
from typing import Any

import dagster as dg
import dataframely as dy
import fakesnow
import polars as pl
import pytest
from support import evaluations, logs, step_error
from test_read_dtypes import BOUNDARIES
from test_read_dtypes_pushdown import COLUMNS, _casts, _polars, _rules, _run, _shown
from test_sql_snowflake import SnowflakeWarehouse

import dagster_dataframely as dd
from dagster_dataframely.errors import ColumnSchemaError

UTC = dt.timezone.utc


class SnowflakeDrifted(dy.Schema):
    """A column per cast kind a Snowflake table drifts into, most with a rule that reads the
    cast values."""

    row = dy.Int64(primary_key=True)
    decimal_decimal = dy.Decimal(8, 2, nullable=True)
    int_int = dy.Int16(nullable=True, max=32000)
    int_uint = dy.UInt32(nullable=True)
    float_int = dy.Int32(nullable=True, min=0)
    string_enum = dy.Enum(["a", "b"])
    string_categorical = dy.Categorical(nullable=True)
    zone_alias = dy.Datetime(time_zone="Etc/UTC", nullable=True)
    #: Left to polars in Snowflake (`float_to_decimal`, no `timestamp_types`).
    float_decimal = dy.Decimal(8, 2, nullable=True)
    datetime_date = dy.Date(nullable=True, min=dt.date(2024, 6, 1))

    @dy.rule()
    def small_ints_stay_below_the_floats(cls) -> pl.Expr:
        return pl.col("int_int") >= pl.col("float_int")


#: column -> (Snowflake type, dtype its connector reads, values cast, values just past the
#: cast's limit): `tests/test_read_dtypes.py`'s boundaries, with the lower limits too.
VALUES: dict[str, tuple[str, pl.DataType, list[Any], list[Any]]] = {
    "decimal_decimal": (
        "NUMBER(10, 3)",
        pl.Decimal(10, 3),
        [decimal.Decimal("999999.990"), decimal.Decimal("-999999.990")],
        [decimal.Decimal(text) for text in ("1000000.000", "-1000000.000", "1.005")],
    ),
    "int_int": ("INT", pl.Int64(), *BOUNDARIES["int_int"][2:]),
    "int_uint": ("INT", pl.Int64(), [0, 2**32 - 1], [-1, 2**32]),
    "float_int": (
        "FLOAT",
        pl.Float64(),
        BOUNDARIES["float_int"][2],
        [2147483648.0, -2147483649.0, 1.5, float("inf"), float("-inf"), float("nan")],
    ),
    "string_enum": ("VARCHAR", pl.String(), *BOUNDARIES["string_enum"][2:]),
    "string_categorical": ("VARCHAR", pl.String(), *BOUNDARIES["string_categorical"][2:]),
    "zone_alias": (
        "TIMESTAMP_TZ",
        pl.Datetime("us", "UTC"),
        [dt.datetime(2024, 5, 1, 8, tzinfo=UTC), dt.datetime(1900, 1, 1, tzinfo=UTC)],
        [],
    ),
    "float_decimal": ("FLOAT", pl.Float64(), *BOUNDARIES["float_decimal"][2:]),
    "datetime_date": ("TIMESTAMP_NTZ", pl.Datetime("us"), *BOUNDARIES["datetime_date"][2:]),
}
IN_POLARS = {"float_decimal", "datetime_date"}


def _frame(*, outside: bool) -> pl.DataFrame:
    """A row per value of each column, in the dtypes Snowflake's connector reads; `outside`
    adds the values past each cast's limit. Shorter columns are padded with nulls."""
    values = {
        name: inside + (past if outside else []) for name, (_, _, inside, past) in VALUES.items()
    }
    height = max(map(len, values.values()))
    return pl.DataFrame(
        [pl.Series("row", range(height), pl.Int64)]
        + [
            pl.Series(name, column + [None] * (height - len(column)), VALUES[name][1])
            for name, column in values.items()
        ]
    )


@pytest.fixture(scope="module")
def warehouse() -> Iterator[SnowflakeWarehouse]:
    with fakesnow.patch():
        resource = SnowflakeWarehouse(database="shop")
        with resource.get_connection() as connection:
            connection.cursor().execute("CREATE SCHEMA IF NOT EXISTS shop.finance")
        yield resource


def _in_snowflake(warehouse: SnowflakeWarehouse, frame: pl.DataFrame) -> None:
    """`frame` as the table `finance.drifted`, created in Snowflake's types (quoted names keep
    Dataframely's lower-case ones) and loaded in bulk through the DuckDB under fakesnow."""
    columns = ", ".join(
        f'"{name}" {"INT" if name == "row" else VALUES[name][0]}' for name in frame.columns
    )
    with warehouse.get_connection() as connection:
        connection.cursor().execute(f"CREATE OR REPLACE TABLE finance.drifted ({columns})")
        duck = connection._duck_conn  # type: ignore[attr-defined]
        duck.register("drifted_arrow", frame.to_arrow())
        duck.execute("INSERT INTO shop.finance.drifted SELECT * FROM drifted_arrow")
        duck.unregister("drifted_arrow")


def _runs(
    warehouse: SnowflakeWarehouse, *, outside: bool
) -> tuple[dg.DagsterInstance, dg.ExecuteInProcessResult, dg.ExecuteInProcessResult]:
    """The checks of `SnowflakeDrifted` on a Snowflake table, and on its rows in polars."""
    frame = _frame(outside=outside)
    _in_snowflake(warehouse, frame)
    source = dd.sources.SQLTableSource(resource_key="warehouse", dialect="snowflake")
    instance, pushed = _run(SnowflakeDrifted, source, {"warehouse": warehouse})
    return instance, pushed, _polars(SnowflakeDrifted, frame)


def _samples(result: dg.ExecuteInProcessResult) -> dict[str, set[tuple[Any, ...]]]:
    """check name -> the rows each failed rule check shows."""
    return {
        name: {tuple(row.data.items()) for row in e.metadata["dy_failed_sample"].value.records}  # type: ignore[attr-defined]
        for name, e in evaluations(result).items()
        if name != COLUMNS and "dy_failed_sample" in e.metadata
    }


def _engine(column: str) -> str:
    return "polars (the cast has no exact SQL form)" if column in IN_POLARS else "snowflake"


def test_every_cast_at_its_limit_is_made_in_snowflake_and_the_rules_count_as_polars(
    warehouse: SnowflakeWarehouse,
) -> None:
    instance, pushed, reference = _runs(warehouse, outside=False)

    assert evaluations(pushed)[COLUMNS].passed and evaluations(reference)[COLUMNS].passed
    # The dtypes read are the connector's, and those the polars run was handed.
    assert _casts(pushed) == {
        column: (read, 0, _engine(column)) for column, (read, _, _) in _casts(reference).items()
    }
    assert set(_casts(pushed)) == set(VALUES)
    assert (
        evaluations(pushed)[COLUMNS].metadata["dy_engine"].value
        == "polars (the cast has no exact SQL form), snowflake"
    )
    rules = _rules(pushed)
    assert {name: (f, n) for name, (f, n, _) in rules.items()} == {
        name: (f, n) for name, (f, n, _) in _rules(reference).items()
    }
    assert {name for name, (f, _, _) in rules.items() if f} == {
        "dy_rule__int_int__max",
        "dy_rule__float_int__min",
        "dy_rule__string_enum__nullability",
        "dy_rule__datetime_date__min",
        "dy_rule__small_ints_stay_below_the_floats",
    }
    assert _samples(pushed) == _samples(reference)
    # The cast value shown, as the rule read it: -2147483648.0 made an Int32 in Snowflake.
    assert _samples(pushed)["dy_rule__float_int__min"] == {(("row", 1), ("float_int", -(2**31)))}
    assert {name for name, (_, _, engine) in rules.items() if engine.startswith("polars")} == {
        "dy_rule__datetime_date__min"  # the rule of a column polars casts
    }
    sent = [line for line in logs(instance, pushed) if line.startswith("Pushed down to snowflake:")]
    cast = 'CASE WHEN "__dy_read"."int_int" BETWEEN -32768 AND 32767 THEN "__dy_read"."int_int"'
    assert any("COUNT(CASE WHEN" in line and cast in line for line in sent)


def test_a_value_just_past_a_casts_limit_fails_in_snowflake_counted_and_shown_as_in_polars(
    warehouse: SnowflakeWarehouse,
) -> None:
    _, pushed, reference = _runs(warehouse, outside=True)

    assert _casts(pushed) == {
        column: (read, failed, _engine(column))
        for column, (read, failed, _) in _casts(reference).items()
    }
    assert {column: failed for column, (_, failed, _) in _casts(pushed).items()} == {
        column: len(past) for column, (_, _, _, past) in VALUES.items()
    }
    assert _shown(pushed) == _shown(reference)
    assert {("float_int", "NaN"), ("int_uint", "-1"), ("string_enum", "B")} <= _shown(pushed)
    error, message = step_error(pushed)
    assert error == ColumnSchemaError.__name__
    assert message == step_error(reference)[1]
    assert "decimal_decimal: 3 value(s) read as Decimal(10, 3) are not Decimal(8, 2)" in message
