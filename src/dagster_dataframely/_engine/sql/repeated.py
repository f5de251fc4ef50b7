"""A table's few repeated keys, fetched once and written as literals.

A `unique` or primary-key rule that failed few rows (`LISTED_ROWS`) has few repeated keys:
they are fetched by one grouping query (`SQLTable.repeated_keys`, kept for the run) and
listed in later queries, which then filter rows by literals instead of grouping the table
again: the rule's sample, and the valid rows a collection's filters read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import polars as pl
from sqlglot import exp

from .literals import literal

#: Up to this many rows failing a `unique` or primary-key rule, its repeated keys are listed.
LISTED_ROWS = 1_000


def listed(
    found: pl.DataFrame, keys: Sequence[str], dtypes: Mapping[str, pl.DataType], dialect: str
) -> list[list[exp.Expr]] | None:
    """The `found` rows' `keys`, each as literals of its columns' types in `dialect`, or None
    where there are none, or a key part is null or has no literal of its column's type."""
    rows: list[list[exp.Expr]] = []
    for row in found.select(list(keys)).iter_rows():
        values = [
            None if v is None else literal(v, dtypes[k], dialect)
            for k, v in zip(keys, row, strict=True)
        ]
        if any(value is None for value in values):
            return None
        rows.append([value for value in values if value is not None])
    return rows or None


def held(columns: Sequence[exp.Expr], keys: Sequence[Sequence[exp.Expr]]) -> exp.Expr:
    """On a row: its `columns` equal one of the listed `keys`. One column: `IN`; several: an
    `OR` of equalities, which DuckDB evaluates far faster than a row value `IN`. A null
    column matches none of the (null-free) listed keys: the result is then null."""
    if len(columns) == 1:
        return exp.In(this=columns[0], expressions=[values[0] for values in keys])
    return exp.or_(
        *(
            exp.and_(*(exp.EQ(this=c, expression=v) for c, v in zip(columns, values, strict=True)))
            for values in keys
        )
    )
