"""A table's repeated keys: one grouping query counts them and brings the first few back.

A `unique` or primary-key rule is counted by grouping the table by its keys once
(`SQLTable.repeated_head`): the query returns the rows of every repeated key (`__dy_failed`),
and the first repeated keys in key order with their rows (`__dy_count`), at most
`LISTED_ROWS` of them (or the sample size, if larger). The rule's sample is built from those
keys, and where they are all of them, a collection's filters list them as literals instead
of grouping the table again (`listed`, `held`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import polars as pl
from sqlglot import exp

from .literals import literal

#: Up to this many rows failing a `unique` or primary-key rule, its repeated keys are listed.
LISTED_ROWS = 1_000
#: The columns of a repeated key's rows, and of the rows of all repeated keys.
COUNT = "__dy_count"
FAILED = "__dy_failed"


@dataclass(frozen=True)
class RepeatedHead:
    """The first repeated keys of a table in key order (`found`: the key columns, `COUNT`
    and `FAILED`), fetched with a bound of `bound` rows: all of them where fewer came back."""

    found: pl.DataFrame
    bound: int

    @property
    def failed(self) -> int:
        """The rows of all repeated keys: those a `unique` or primary-key rule fails."""
        return int(self.found[FAILED][0] or 0) if self.found.height else 0

    @property
    def complete(self) -> bool:
        return self.found.height < self.bound

    def rows(self, columns: Sequence[str], limit: int) -> pl.DataFrame:
        """The first `limit` rows of the first repeated keys, in key order, of `columns` (key
        columns): each key as many times as it occurs."""
        first = self.found.head(limit)
        index = first.select(
            pl.int_range(pl.len(), dtype=pl.UInt32)
            .repeat_by(pl.col(COUNT).cast(pl.Int64))
            .explode()
        ).to_series()
        return first.select(list(columns))[index].head(limit)

    def keys(self, keys: Sequence[str]) -> pl.DataFrame:
        """The repeated keys with how often each occurs (`COUNT`)."""
        return self.found.select(*keys, COUNT)


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
