"""Snowflake's NaN and infinity tests mean polars' `is_nan` and `is_infinite`, executed by
fakesnow (test_sql_float_forms.py holds the other dialects'; this file needs fakesnow, which
the oldest set lacks)."""

from __future__ import annotations

import fakesnow
import polars as pl
import snowflake.connector
from test_sql_float_forms import VALUES, _expected, _insert, _query, _verdicts


def test_snowflake_nan_equality_and_infinity_list_are_polars_verdicts() -> None:
    with fakesnow.patch(), snowflake.connector.connect(database="floats") as connection:
        cursor = connection.cursor()
        cursor.execute("CREATE SCHEMA IF NOT EXISTS floats.checked")
        cursor.execute("USE SCHEMA floats.checked")
        cursor.execute('CREATE TABLE floats ("i" INT, "d" FLOAT)')
        _insert(cursor.execute, "floats", 1, "FLOAT")
        rows = cursor.execute(_query("snowflake", "floats", "d")).fetchall()  # type: ignore[union-attr]

    assert _verdicts(rows) == _expected(VALUES, pl.Float64())
