"""The run's partition as a row filter on a `partition_expr` column (a sqlglot predicate for a
database or for DataFusion to prune a Delta table's files, or polars).

A time-window partition (or a range of them) selects `start <= expr < end`; other partitions
select `expr IN (keys)`. This is how Dagster's database IO managers read a partition. A column
without a zone (a naive timestamp) holds wall-clock times, compared with the window's bounds in
the partitions definition's zone (midnight in New York for a New York day); a zoned column is
compared by the instant.

A run over several partitions (a backfill's range) reads them at once; `key_sql` and
`key_polars` tell which of them each row is in, by the same comparisons.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

import dagster as dg
import polars as pl

from .._engine.failing_rows import RowKey
from ..errors import InvalidSourceError

if TYPE_CHECKING:  # sqlglot is imported only when a database source opens
    from sqlglot import exp

    from .._engine.sql.backend import SQLTable


@dataclass(frozen=True)
class Partition:
    """The partition a run checks: a time window, or partition keys."""

    keys: tuple[str, ...]
    window: tuple[datetime, datetime] | None = None
    #: Over several time windows: the start of each key's window, in key order.
    starts: tuple[datetime, ...] = ()

    def describe(self) -> str:
        if self.window is not None:
            return f"{self.window[0].isoformat()} <= … < {self.window[1].isoformat()}"
        return ", ".join(self.keys)

    def select(self, expr: exp.Expr, dtype: pl.DataType, dialect: str) -> exp.Expr:
        """A predicate on `expr` (a sqlglot tree, of polars `dtype` when read) that selects
        what `polars` does, with literals of the column's own type, never a cast of the column
        to text (whose form follows the session: PostgreSQL's `DateStyle`). A window compares
        a zoned value by the instant and anything else (a naive timestamp, a date) by the
        wall-clock time in the partitions' zone, as Dagster's database IO managers read a
        partition."""
        from sqlglot import exp

        if self.window is None:
            keys = _key_literals(self.keys, dtype, dialect)
            return exp.In(this=exp.paren(expr.copy()), expressions=keys) if keys else exp.false()
        zoned = isinstance(dtype, pl.Datetime) and dtype.time_zone is not None
        start, end = (_sql_bound(bound, dialect, zoned=zoned) for bound in self.window)
        return exp.and_(
            exp.GTE(this=exp.paren(expr.copy()), expression=start),
            exp.LT(this=exp.paren(expr.copy()), expression=end),
        )

    def key_sql(self, expr: exp.Expr, dtype: pl.DataType, dialect: str) -> exp.Expr | None:
        """The partition key of a row `select` selects, from `expr` (of polars `dtype`): the
        key whose window holds it (a balanced `CASE` on the windows' starts, a few
        comparisons per row however long the range), or whose key equals it; None where
        the keys' windows are not known (a multi-partition range)."""
        from sqlglot import exp

        if self.window is None:
            branches = [
                exp.If(
                    this=exp.EQ(this=exp.paren(expr.copy()), expression=value),
                    true=exp.Literal.string(key),
                )
                for key in self.keys
                for value in _key_literals((key,), dtype, dialect)
            ]
            return exp.Case(ifs=branches) if branches else exp.Null()
        if len(self.starts) != len(self.keys):
            return None
        zoned = isinstance(dtype, pl.Datetime) and dtype.time_zone is not None

        def within(low: int, high: int) -> exp.Expr:
            if low == high:
                return exp.Literal.string(self.keys[low])
            middle = (low + high + 1) // 2
            bound = _sql_bound(self.starts[middle], dialect, zoned=zoned)
            later = exp.GTE(this=exp.paren(expr.copy()), expression=bound)
            return exp.Case(
                ifs=[exp.If(this=later, true=within(middle, high))], default=within(low, middle - 1)
            )

        return within(0, len(self.keys) - 1)

    def key_polars(self, column: str, dtype: pl.DataType) -> pl.Expr | None:
        """The partition key of a row `polars` selects, from `column` of `dtype`, as
        `key_sql` finds it."""
        if self.window is None or dtype == pl.String:  # a key column: the key is its text
            return pl.col(column).cast(pl.String)
        if len(self.starts) != len(self.keys):
            return None

        def within(low: int, high: int) -> pl.Expr:
            if low == high:
                return pl.lit(self.keys[low], dtype=pl.String)
            middle = (low + high + 1) // 2
            later = pl.col(column) >= _bound(self.starts[middle], dtype)
            return pl.when(later).then(within(middle, high)).otherwise(within(low, middle - 1))

        return within(0, len(self.keys) - 1)

    def row_key(
        self,
        column: str | None,
        expr: exp.Expr | None,
        dtypes: Mapping[str, pl.DataType],
        pushdown: SQLTable | None,
    ) -> RowKey:
        """Each row's key, as a source selects rows on its `partition_expr`: `column` of
        `dtypes` in polars, `expr` in the database `pushdown` reads (its type read as the
        source reads it, by a query of no rows); None on a side that cannot tell it."""
        in_polars = None
        if column is not None and column in dtypes:
            in_polars = self.key_polars(column, dtypes[column])
        in_sql = None
        if pushdown is not None and expr is not None:
            from sqlglot import exp

            probe = exp.select(exp.alias_(expr.copy(), "value", quoted=True))
            sql = probe.from_(pushdown.rows()).limit(0).sql(dialect=pushdown.dialect.name)
            with suppress(Exception):  # untold, the rows are not kept: `Stamp.untold` says why
                dtype = pushdown.run(sql).schema["value"]
                in_sql = self.key_sql(expr, dtype, pushdown.dialect.name)
        return RowKey(in_polars, in_sql)

    def datafusion(self, column: str, dtype: pl.DataType) -> exp.Expr | None:
        """A predicate on `column` of `dtype` that selects what `polars` does, for DataFusion
        to prune a Delta table's files; None where none is sure to (`polars` still filters
        the rows). Literals are strings DataFusion casts to the column's type."""
        from sqlglot import exp

        name = exp.column(column, quoted=True)
        if dtype == pl.String:  # keys, as `polars` matches them on a string column
            return exp.In(this=name, expressions=[exp.Literal.string(key) for key in self.keys])
        if self.window is None:
            return None
        if dtype == pl.Date:
            bounds = [bound.date().isoformat() for bound in self.window]
        elif isinstance(dtype, pl.Datetime) and dtype.time_zone is None:
            bounds = [bound.replace(tzinfo=None).isoformat() for bound in self.window]
        elif isinstance(dtype, pl.Datetime) and all(b.tzinfo for b in self.window):
            bounds = [bound.isoformat() for bound in self.window]
        else:
            return None
        start, end = (exp.Literal.string(bound) for bound in bounds)
        return exp.and_(
            exp.GTE(this=name, expression=start), exp.LT(this=name.copy(), expression=end)
        )

    def polars(self, column: str, dtype: pl.DataType) -> pl.Expr:
        """A polars predicate on `column` of `dtype`."""
        if self.window is None or dtype == pl.String:  # a key column: match the keys
            return pl.col(column).cast(pl.String).is_in(list(self.keys))
        col = pl.col(column)
        start, end = (_bound(value, dtype) for value in self.window)
        return (col >= start) & (col < end)


def run_partition(context: dg.AssetCheckExecutionContext) -> Partition | None:
    """The partition the run materialized, or None for an unpartitioned run."""
    if not (context.has_partition_key or context.has_partition_key_range):
        return None
    keys = tuple(context.partition_keys)
    try:
        window = context.partition_time_window
    except Exception:  # not a time-window partition: Dagster raises its own check error
        return Partition(keys=keys)
    return Partition(keys=keys, window=(window.start, window.end), starts=_starts(context, keys))


def _starts(context: dg.AssetCheckExecutionContext, keys: tuple[str, ...]) -> tuple[datetime, ...]:
    """The start of each key's window, for a run over several windows of a time-window
    partitions definition (the job's, else the checks'); none otherwise."""
    if len(keys) < 2:
        return ()
    found = context.job_def.partitions_def or next(
        (spec.partitions_def for spec in context.check_specs if spec.partitions_def), None
    )
    if not isinstance(found, dg.TimeWindowPartitionsDefinition):
        return ()
    return tuple(found.time_window_for_partition_key(key).start for key in keys)


def require_expr(partition: Partition | None, partition_expr: str | None, what: str) -> None:
    """A partitioned run needs `partition_expr` to select its rows: say so, do not read all."""
    if partition is not None and partition_expr is None:
        raise InvalidSourceError(
            f"The run checks partition(s) {partition.describe()}, but {what} has no "
            "partition_expr. Give the column (or SQL expression) that holds the partition, "
            "e.g. partition_expr='order_date'."
        )


def _bound(value: datetime, dtype: pl.DataType) -> pl.Expr:
    """A window bound comparable with a column of `dtype` (a date, a naive or zoned datetime)."""
    if dtype == pl.Date:
        return pl.lit(value.date())
    if isinstance(dtype, pl.Datetime):
        bound = pl.lit(value)
        if dtype.time_zone is None:
            return bound.dt.replace_time_zone(None) if value.tzinfo else bound
        return bound.dt.convert_time_zone(dtype.time_zone)
    return pl.lit(value)


def _key_literals(keys: tuple[str, ...], dtype: pl.DataType, dialect: str) -> list[exp.Expr]:
    """The keys as literals of the column's type, each where `polars` would match it: a key
    is matched as the text of the column's value (`cast(pl.String)`), so `"7"` selects 7 of
    an integer column and `"007"` selects nothing."""
    from .._engine.sql.literals import literal

    if not (dtype == pl.String or dtype == pl.Date or dtype == pl.Boolean or dtype.is_integer()):
        raise InvalidSourceError(
            f"partition keys cannot select rows of a {dtype} partition_expr exactly (its text "
            "depends on the database). Give a text, integer or date expression, e.g. "
            "partition_expr='CAST(order_date AS DATE)'."
        )
    text = pl.Series(keys, dtype=pl.String)
    if dtype == pl.Date:
        values = text.str.to_date("%Y-%m-%d", strict=False)
    elif dtype == pl.Boolean:
        values = text.replace_strict({"true": True, "false": False}, default=None)
    else:
        values = text.cast(dtype, strict=False)
    found = [
        literal(value, dtype, dialect)
        for key, value, text in zip(keys, values, values.cast(pl.String), strict=True)
        if value is not None and text == key
    ]
    return [value for value in found if value is not None]


def _sql_bound(bound: datetime, dialect: str, *, zoned: bool) -> exp.Expr:
    """A window bound as a typed literal in ISO form (read alike under any `DateStyle`): the
    instant, its offset written, for a zoned column; else the wall clock in the partition's
    zone (what a naive column holds for it)."""
    from sqlglot import exp

    from .._engine.sql.dialects import described

    if zoned and bound.tzinfo is not None:
        return exp.cast(exp.Literal.string(bound.isoformat(sep=" ")), "TIMESTAMPTZ")
    naive = bound.replace(tzinfo=None).isoformat(sep=" ")
    return exp.cast(exp.Literal.string(naive), described(dialect).wall_clock())
