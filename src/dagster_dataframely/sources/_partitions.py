"""The run's partition as a row filter on a `partition_expr` column (DuckDB SQL, polars, or
DataFusion SQL to prune a Delta table's files).

A time-window partition (or a range of them) selects `start <= expr < end`; other partitions
select `expr IN (keys)`. This is how Dagster's database IO managers read a partition. A column
without a zone (a naive timestamp) holds wall-clock times, compared with the window's bounds in
the partitions definition's zone (midnight in New York for a New York day); a zoned column is
compared by the instant.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import dagster as dg
import polars as pl

from ..errors import InvalidSourceError


@dataclass(frozen=True)
class Partition:
    """The partition a run checks: a time window, or partition keys."""

    keys: tuple[str, ...]
    window: tuple[datetime, datetime] | None = None

    def describe(self) -> str:
        if self.window is not None:
            return f"{self.window[0].isoformat()} <= … < {self.window[1].isoformat()}"
        return ", ".join(self.keys)

    def sql(self, expr: str, *, zoned: bool) -> str:
        """A SQL predicate on `expr` (DuckDB dialect); `zoned` when `expr` is a `TIMESTAMP
        WITH TIME ZONE`. A window compares a zoned value by the instant and anything else (a
        naive `TIMESTAMP`, a `DATE`) by the wall-clock time in the partitions' zone, as
        Dagster's DuckDB IO manager reads a partition."""
        if self.window is not None:
            start, end = (_sql_timestamp(bound, zoned=zoned) for bound in self.window)
            return f"({expr}) >= {start} AND ({expr}) < {end}"
        keys = ", ".join(_sql_string(key) for key in self.keys)
        return f"CAST(({expr}) AS VARCHAR) IN ({keys})"

    def datafusion(self, column: str, dtype: pl.DataType) -> str | None:
        """A DataFusion SQL predicate on `column` of `dtype` that selects what `polars` does,
        for pruning a Delta table's files; None where none is sure to (`polars` still filters
        the rows). Literals are strings DataFusion casts to the column's type."""
        name = '"' + column.replace('"', '""') + '"'
        if dtype == pl.String:  # keys, as `polars` matches them on a string column
            return f"{name} IN ({', '.join(_sql_string(key) for key in self.keys)})"
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
        start, end = (_sql_string(bound) for bound in bounds)
        return f"{name} >= {start} AND {name} < {end}"

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
    return Partition(keys=keys, window=(window.start, window.end))


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


def _sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _sql_timestamp(value: datetime, *, zoned: bool) -> str:
    if zoned and value.tzinfo is not None:
        return f"TIMESTAMPTZ '{value.isoformat(sep=' ')}'"
    return f"TIMESTAMP '{value.replace(tzinfo=None).isoformat(sep=' ')}'"
