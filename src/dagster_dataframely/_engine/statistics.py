"""Per-dtype column statistics of a written table, for its materialization metadata.

One pass over the table (a streaming aggregation for a `LazyFrame`) computes, per column,
what its dtype makes meaningful: the null count always; min and max for numbers, booleans
and temporal columns; the mean, rounded to two decimals, for numbers that measure something
(not for booleans, and not for an integer column whose values are (nearly) all distinct: an
identifier's mean means nothing); the longest value (in characters) for strings. Only the
first columns are described, as many as a metadata table shows, so a wide schema costs no
more than a narrow one.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from .display import MAX_ROWS, dtype_name, python_rows

_FIELDS = ("nulls", "min", "max", "mean", "max_length", "distinct", "values")
_SCHEMA = {
    "column": pl.String,
    "dtype": pl.String,
    "nulls": pl.Int64,
    "min": pl.String,
    "max": pl.String,
    "mean": pl.Float64,
    "max_length": pl.Int64,
}


def statistics(frame: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """One row per described column of `frame`: column, dtype, nulls, min, max, mean,
    max_length (null where the dtype has no such statistic)."""
    schema = frame.collect_schema()
    described = schema.names()[:MAX_ROWS]
    exprs: list[pl.Expr] = []
    for index, name in enumerate(described):
        exprs.extend(
            expr.alias(f"{index}|{field}")
            for field, expr in _expressions(pl.col(name), schema[name]).items()
        )
    selected = frame.select(exprs)
    aggregated = (
        selected if isinstance(selected, pl.DataFrame) else selected.collect(engine="streaming")
    )
    values = python_rows(aggregated)[0] if exprs else {}
    rows = []
    for index, name in enumerate(described):
        found = {field: values.get(f"{index}|{field}") for field in _FIELDS}
        rows.append(
            {
                "column": name,
                "dtype": dtype_name(schema[name]),
                "nulls": found["nulls"],
                "min": _text(found["min"]),
                "max": _text(found["max"]),
                "mean": _mean(found["mean"], found["distinct"], found["values"]),
                "max_length": found["max_length"],
            }
        )
    return pl.DataFrame(rows, schema=_SCHEMA)


def _expressions(column: pl.Expr, dtype: pl.DataType) -> dict[str, pl.Expr]:
    found = {"nulls": column.null_count()}
    if dtype.is_numeric():
        found |= {"min": column.min(), "max": column.max(), "mean": column.mean()}
        if dtype.is_integer():
            # An estimate in constant memory, so a large table costs no more than a small one.
            found |= {"distinct": column.approx_n_unique(), "values": column.count()}
    elif dtype == pl.Boolean or dtype.is_temporal():
        found |= {"min": column.min(), "max": column.max()}
    elif dtype == pl.String:
        found["max_length"] = column.str.len_chars().max()
    return found


def _mean(mean: Any, distinct: int | None, values: int | None) -> float | None:
    """The rounded mean, or None where it means nothing: an identifier, whose values are all
    distinct but for a few duplicates (which its checks report) and the estimate's error."""
    if mean is None or (values and distinct is not None and distinct >= 0.9 * values):
        return None
    return round(float(mean), 2)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
