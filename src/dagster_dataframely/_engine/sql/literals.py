"""Constraint values as SQL literals of a column's type, so the database compares what polars
compares (a bound of a `Float32` column is a 32-bit float, a date is a `DATE`)."""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

import polars as pl
from sqlglot import exp

from .dialects import DIALECTS, described


def literal(value: Any, dtype: pl.DataType, dialect: str) -> exp.Expr | None:
    """`value` as a literal comparable with a column of `dtype` exactly as polars compares
    them, or None where the comparison would not be exact (an int column against a float, a
    zoned datetime, a decimal)."""
    if isinstance(value, bool):
        return exp.Boolean(this=value) if dtype == pl.Boolean else None
    if isinstance(value, int):
        if dtype.is_integer():
            return exp.Literal.number(value)
        if dtype.is_float():
            return _cast(exp.Literal.number(value), dtype, dialect)
        return None
    if isinstance(value, float):
        if not dtype.is_float():
            return None
        if math.isfinite(value):
            return _cast(exp.Literal.number(repr(value)), dtype, dialect)
        return _cast(exp.Literal.string(str(value)), dtype, dialect)  # 'inf', '-inf', 'nan'
    if isinstance(value, str):
        return exp.Literal.string(value) if dtype == pl.String else None
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None or not isinstance(dtype, pl.Datetime) or dtype.time_zone:
            return None
        return _instant(value, dtype, dialect)
    if isinstance(value, dt.date):
        return (
            _cast(exp.Literal.string(value.isoformat()), dtype, dialect)
            if dtype == pl.Date
            else None
        )
    return None


def _cast(value: exp.Expr, dtype: pl.DataType, dialect: str) -> exp.Expr | None:
    target = described(dialect).sql_type(dtype)
    return None if target is None else exp.cast(value, target)


def _instant(value: dt.datetime, dtype: pl.Datetime, dialect: str) -> exp.Expr | None:
    """A wall-clock bound of a column of `dtype`, as polars compares them: in the column's
    unit (a finer bound is floored to it, `2020-01-01 00:00:00.0015` is `.001` to a
    millisecond column), written as a literal of the column's own type, so the database
    compares in that unit too; None where the database has no type of that unit."""
    unit = dtype.time_unit
    seen = pl.Series([value], dtype=pl.Datetime("us")).cast(dtype).item()
    known = DIALECTS.get(dialect)
    target = known.naive_timestamp(unit) if known is not None else None
    if target is None and unit != "ns":
        target = described(dialect).wall_clock()  # microseconds hold a bound in ms or us exactly
    if target is None:
        return None
    return exp.cast(exp.Literal.string(seen.isoformat(sep=" ")), target)
