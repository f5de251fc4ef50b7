"""The largest value of a column (a freshness check's newest timestamp), found by a `MAX`
in the rules' aggregate query: no second scan.

`MAX` is pushed down only for a `Datetime` or `Date` column the database holds as polars
reads it (not one cast in polars), and its value is kept only when it comes back as polars
would give it (a date as a date, a zoned timestamp aware, a naive one naive). Anything else
is found by polars over that one column, and the step log says why.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import date, datetime
from typing import Any

import polars as pl
from sqlglot import exp


def pushable(
    columns: Sequence[str], dtypes: Mapping[str, pl.DataType], skip: Collection[str]
) -> list[str]:
    """The `columns` whose `MAX` the database computes as polars would."""
    return [
        column
        for column in columns
        if column not in skip and isinstance(dtypes.get(column), (pl.Datetime, pl.Date))
    ]


def aggregates(columns: Sequence[str]) -> list[exp.Expr]:
    """`MAX("column")` for each of `columns`, aliased `__dy_m<index>`."""
    return [
        exp.alias_(exp.Max(this=exp.column(column, quoted=True)), f"__dy_m{index}")
        for index, column in enumerate(columns)
    ]


def agreeing(
    found: Mapping[str, Any], dtypes: Mapping[str, pl.DataType], log: Callable[[str], None]
) -> dict[str, Any]:
    """The values of `found` (column -> `MAX`) of the type polars gives that column."""
    kept: dict[str, Any] = {}
    for column, value in found.items():
        dtype = dtypes[column]
        if value is None or _agrees(value, dtype):
            kept[column] = value
        else:
            log(
                f"The newest {column!r} is read again by polars: the database returned "
                f"{value!r} for a {dtype} column."
            )
    return kept


def _agrees(value: Any, dtype: pl.DataType) -> bool:
    if isinstance(dtype, pl.Datetime):
        zoned = dtype.time_zone is not None
        return isinstance(value, datetime) and (value.tzinfo is not None) == zoned
    return isinstance(value, date) and not isinstance(value, datetime)


def in_polars(lf: pl.LazyFrame, columns: Sequence[str]) -> dict[str, Any]:
    """The largest value of each of `columns`, by polars, reading only those columns."""
    if not columns:
        return {}
    row = lf.select(pl.col(c).max() for c in columns).collect(engine="streaming").row(0)
    return dict(zip(columns, row, strict=True))
