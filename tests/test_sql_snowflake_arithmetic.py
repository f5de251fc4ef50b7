"""Property: rule arithmetic near the integer limits counts the same through fakesnow
(Snowflake SQL) as `Schema.filter`, and no overflow fails the step.

Every Snowflake integer is a `NUMBER(38, 0)`, read as an `Int64`: polars wraps its sums at the
Int64 limits, Snowflake does not, so nearly every sum falls back here. fakesnow runs the SQL in
DuckDB, which raises on an Int64 overflow as a step failure would show.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import fakesnow
import polars as pl
import pytest
import snowflake.connector
from hypothesis import HealthCheck, given, settings
from test_sql_arithmetic import Tree, _assert_counts_alike, _expr, _frames, _read_back, _rules
from test_sql_snowflake_parity import _in_snowflake as in_snowflake

from dagster_dataframely._engine.sql.backend import SQLTable

#: Two integer columns, as a Snowflake table holds them.
SNOWFLAKE = ("i64", "j64")


@pytest.fixture(scope="module")
def snowflake_connection() -> Iterator[Any]:
    with fakesnow.patch():
        connection = snowflake.connector.connect(database="shop", schema="finance")
        yield connection
        connection.close()


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(rule=_rules(SNOWFLAKE), frame=_frames(SNOWFLAKE))
def test_snowflake_sql_counts_arithmetic_near_the_integer_limits_as_polars_does(
    snowflake_connection: Any, rule: Tree, frame: pl.DataFrame
) -> None:
    def table(frame: pl.DataFrame) -> tuple[SQLTable, pl.LazyFrame]:
        return _read_back(in_snowflake(snowflake_connection, frame), "snowflake", frame)

    _assert_counts_alike(table, SNOWFLAKE, _expr(rule), frame)
