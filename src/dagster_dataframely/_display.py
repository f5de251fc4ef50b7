"""Frames as Dagster metadata, bounded so the event log stays small.

However wide the schema or long the values, a table here holds at most a few rows, a few
columns and short cells: a few KB per check or materialization.
"""

from __future__ import annotations

import math
from typing import Any

import dagster as dg
import polars as pl

MAX_ROWS = 20
MAX_COLUMNS = 10
MAX_CELL = 80


def cell(value: Any) -> str | int | float | bool | None:
    """A value Dagster's table metadata can carry, strings cut to `MAX_CELL` characters."""
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    text = str(value)
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"


def type_name(value: Any) -> str:
    """A value's type as a message names it: `dict`, `pandas.DataFrame`, `polars.LazyFrame`."""
    kind = type(value)
    package = kind.__module__.split(".")[0]
    return kind.__qualname__ if package == "builtins" else f"{package}.{kind.__qualname__}"


def shorten(text: str, limit: int = 2000) -> str:
    """`text`, cut to `limit` characters with a marker saying so."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def table(frame: pl.DataFrame, *, max_rows: int = MAX_ROWS) -> dg.TableMetadataValue:
    """The first rows and columns of `frame` as a Dagster table."""
    shown = frame.select(frame.columns[:MAX_COLUMNS]).head(min(max_rows, MAX_ROWS))
    schema = dg.TableSchema(
        columns=[dg.TableColumn(name, _column_type(dtype)) for name, dtype in shown.schema.items()]
    )
    records = [
        dg.TableRecord({name: cell(value) for name, value in row.items()})
        for row in shown.iter_rows(named=True)
    ]
    return dg.MetadataValue.table(records=records, schema=schema)


def _column_type(dtype: pl.DataType) -> str:
    if dtype.is_integer():
        return "int"
    if dtype.is_float():
        return "float"
    if dtype == pl.Boolean:
        return "bool"
    return "string"
