"""Frames as Dagster metadata, bounded so the event log stays small.

However wide the schema or long the values, a table here holds at most a few rows, a few
columns and short cells: a few KB per check or materialization.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

import dagster as dg
import polars as pl
from polars.datatypes import DataTypeClass

MAX_ROWS = 20
MAX_COLUMNS = 10
MAX_CELL = 80


def cell(value: Any, *, null: str | None = None) -> str | int | float | bool | None:
    """A value Dagster's table metadata can carry, strings cut to `MAX_CELL` characters, a
    whole float as text (`-1.0`) and a missing value as `null` (Dagster shows `None` as an
    empty cell)."""
    if value is None:
        return null
    if isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        # The UI shows a number as JavaScript does: -1.0 as `-1`, like the integer it is not.
        return value if math.isfinite(value) and not value.is_integer() else str(value)
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


def share(part: int, whole: int) -> str:
    """`part` of `whole` rows in words: `2 of 25 rows, 8%`, `1 of 40,000 rows, <0.1%`."""
    if not whole:
        return f"{part:,} of 0 rows"
    return f"{part:,} of {whole:,} rows, {percent(part / whole)}"


def percent(fraction: float) -> str:
    """A fraction as a percentage to one decimal that never rounds to a wrong verdict: `8%`,
    `16.7%`, `<0.1%` for a few rows of many, `>99.9%` for all but a few."""
    shown = f"{100 * fraction:.1f}".removesuffix(".0")
    if fraction and shown == "0":
        shown = "<0.1"
    elif fraction < 1 and shown == "100":
        shown = ">99.9"
    return f"{shown}%"


def duration_words(span: timedelta, *, exact: bool = False) -> str:
    """A duration as people write it: `3 h 20 min`, `1 day 12 h`, `4,722 days`, `0.25 s`.

    An age (the default) shows its largest unit and the next when it is not zero, and whole
    days only from 10 days on (`4,722 days`, not `4722 days, 20:31:26.571913`). `exact` shows
    every unit down to the second, for a setting such as a freshness limit."""
    seconds = span.total_seconds()
    if seconds < 0:
        return "-" + duration_words(-span, exact=exact)
    if seconds < 1:
        return f"{seconds:.2g} s"
    days, rest = divmod(int(seconds), 86400)
    parts = [(days, "day" if days == 1 else "days"), (rest // 3600, "h")]
    parts += [(rest % 3600 // 60, "min"), (rest % 60, "s")]
    shown = [(n, unit) for n, unit in parts if n]
    if not exact:
        first = next(i for i, (n, _) in enumerate(parts) if n)
        shown = [parts[first]] if days >= 10 else [p for p in parts[first : first + 2] if p[0]]
    return " ".join(f"{n:,} {unit}" for n, unit in shown)


def dtype_name(dtype: pl.DataType | DataTypeClass) -> str:
    """A dtype as a reader writes it: `Datetime(us, UTC)`, `Enum(pending, paid, …)`,
    `List(String)`, not its constructor call."""
    if isinstance(dtype, pl.Datetime):
        return f"Datetime({', '.join(filter(None, (dtype.time_unit, dtype.time_zone)))})"
    if isinstance(dtype, pl.Duration):
        return f"Duration({dtype.time_unit})"
    if isinstance(dtype, pl.Enum):
        return shorten(f"Enum({', '.join(dtype.categories.to_list())})", MAX_CELL)
    if isinstance(dtype, pl.Decimal):
        return f"Decimal({dtype.precision}, {dtype.scale})"
    if isinstance(dtype, pl.List):
        return f"List({dtype_name(dtype.inner)})"
    if isinstance(dtype, pl.Array):
        return f"Array({dtype_name(dtype.inner)}, {dtype.size})"
    if isinstance(dtype, pl.Struct):
        fields = ", ".join(f"{f.name}: {dtype_name(f.dtype)}" for f in dtype.fields)
        return shorten(f"Struct({fields})", MAX_CELL)
    return str(dtype)


def table(
    frame: pl.DataFrame, *, max_rows: int = MAX_ROWS, null: str | None = None
) -> dg.TableMetadataValue:
    """The first rows and columns of `frame` as a Dagster table; a missing value is `null`
    (for rows of data, pass `null="null"`) or an empty cell (the default, for tables where a
    missing value means "not applicable").

    Built from the frame's own rows, with no query: a check step builds one per failing
    check, thousands on a wide schema.
    """
    rows = min(max_rows, MAX_ROWS)
    if frame.width > MAX_COLUMNS:
        frame = frame.select(frame.columns[:MAX_COLUMNS])
    if frame.height > rows:
        frame = frame.head(rows)
    names = frame.columns
    records = [
        dg.TableRecord(
            {name: cell(value, null=null) for name, value in zip(names, row, strict=True)}
        )
        for row in _python_tuples(frame)
    ]
    schema = _table_schema(tuple(zip(names, map(_column_type, frame.dtypes), strict=True)))
    return dg.MetadataValue.table(records=records, schema=schema)


def _python_tuples(frame: pl.DataFrame) -> list[tuple[Any, ...]]:
    """`frame.rows()`, through `python_values` where a column holds dates or datetimes."""
    if not any(isinstance(dtype, (pl.Date, pl.Datetime)) for dtype in frame.dtypes):
        return frame.rows()
    return list(zip(*(python_values(series) for series in frame.get_columns()), strict=True))


@lru_cache(maxsize=1024)
def _table_schema(columns: tuple[tuple[str, str], ...]) -> dg.TableSchema:
    """One `TableSchema` per shape: the samples of a column's rules share theirs."""
    return dg.TableSchema(columns=[dg.TableColumn(name, kind) for name, kind in columns])


def python_rows(frame: pl.DataFrame) -> list[dict[str, Any]]:
    """`frame.iter_rows(named=True)`, with each column converted by `python_values`."""
    columns = {series.name: python_values(series) for series in frame.get_columns()}
    return [dict(zip(columns, row, strict=True)) for row in zip(*columns.values(), strict=True)]


def python_values(series: pl.Series) -> list[Any]:
    """`series.to_list()`, except that a date or datetime Python cannot hold (before year 1 or
    after 9999, which polars stores) is text: polars panics converting it."""
    dtype = series.dtype
    if not isinstance(dtype, (pl.Date, pl.Datetime)):
        return series.to_list()
    unit = dtype.time_unit if isinstance(dtype, pl.Datetime) else "d"
    if unit == "ns":
        return series.to_list()  # 64 bits of nanoseconds span only the years 1677 to 2262
    physical = series.to_physical()
    outside = (physical < _physical(datetime.min, unit)) | (
        physical > _physical(datetime.max, unit)
    )
    if not outside.any():
        return series.to_list()
    values = pl.select(pl.when(~outside).then(series)).to_series().to_list()
    for index in outside.arg_true().to_list():
        values[index] = f"{physical[index]} {_UNITS[unit]} from 1970-01-01"
    return values


_UNITS = {"d": "days", "ms": "ms", "us": "us", "ns": "ns"}


def _physical(moment: datetime, unit: str) -> int:
    """`moment` as polars stores it in `unit`: days or ms/us/ns since 1970-01-01."""
    since = moment - datetime(1970, 1, 1)
    if unit == "d":
        return since.days
    micros = since // timedelta(microseconds=1)
    return {"ms": micros // 1000, "us": micros, "ns": micros * 1000}[unit]


def _column_type(dtype: pl.DataType) -> str:
    if dtype.is_integer():
        return "int"
    if dtype.is_float():
        return "float"
    if dtype == pl.Boolean:
        return "bool"
    return "string"
