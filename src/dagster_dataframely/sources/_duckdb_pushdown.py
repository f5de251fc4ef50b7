"""The pushdown path of `DuckDBTableSource`: the run's rows of the table as a SQL relation,
evaluated in DuckDB by the engine's SQL backend; the same rows, streamed, for every rule that
falls back to polars (and for the column-schema check, which reads only their dtypes).

The partition is selected as Dagster's DuckDB IO manager selects it, `start <= expr < end`
(or `expr IN (keys)`), with a naive `TIMESTAMP` (or `DATE`) column compared as wall-clock
time in the partition's time zone and a `TIMESTAMPTZ` column as the instant.
sqlglot is imported here, so only when a pushdown runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import polars as pl
import sqlglot
from sqlglot import exp

from .._engine.sql.backend import SQLTable
from ..errors import InvalidSourceError
from ._partitions import Partition

DIALECT = "duckdb"
#: The longest SQL text the step log shows of one query.
_LOGGED_SQL = 2000


def relation(
    connection: Any, parts: Sequence[str], partition: Partition | None, partition_expr: str | None
) -> exp.Select:
    """`SELECT * FROM <table>`, filtered to `partition` on `partition_expr`."""
    table = exp.Table(
        this=exp.to_identifier(parts[-1], quoted=True),
        db=exp.to_identifier(parts[-2], quoted=True) if len(parts) > 1 else None,
        catalog=exp.to_identifier(parts[-3], quoted=True) if len(parts) > 2 else None,
    )
    select = exp.select(exp.Star()).from_(table)
    if partition is None or partition_expr is None:
        return select
    try:
        expr = sqlglot.parse_one(partition_expr, read=DIALECT)
    except sqlglot.errors.ParseError as error:
        raise InvalidSourceError(
            f"partition_expr={partition_expr!r} is not a DuckDB SQL expression ({error}). "
            "Give the column that holds the partition, or an expression over the table's "
            "columns, e.g. partition_expr='order_date' or 'CAST(ordered_at AS DATE)'."
        ) from None
    if partition.window is None:
        keys = [exp.Literal.string(key) for key in partition.keys]
        text = exp.cast(exp.paren(expr), exp.DataType.build("VARCHAR"))
        return select.where(exp.In(this=text, expressions=keys))
    zoned = _zoned(connection, select, expr)
    start, end = (_bound(bound, zoned=zoned) for bound in partition.window)
    return select.where(
        exp.and_(
            exp.GTE(this=exp.paren(expr.copy()), expression=start),
            exp.LT(this=exp.paren(expr.copy()), expression=end),
        )
    )


def _zoned(connection: Any, select: exp.Select, expr: exp.Expr) -> bool:
    """Whether `expr` is a `TIMESTAMPTZ` (an instant) rather than a wall-clock value."""
    probe = select.copy()
    probe.set("expressions", [exp.alias_(expr.copy(), "value")])
    cursor = connection.cursor()
    try:
        arrow = cursor.sql(probe.limit(0).sql(DIALECT)).to_arrow_table()
    finally:
        cursor.close()
    dtype = pl.DataFrame(pl.from_arrow(arrow)).schema["value"]
    return isinstance(dtype, pl.Datetime) and dtype.time_zone is not None


def _bound(bound: datetime, *, zoned: bool) -> exp.Expr:
    if zoned or bound.tzinfo is None:
        kind = "TIMESTAMPTZ" if bound.tzinfo is not None else "TIMESTAMP"
        return exp.cast(exp.Literal.string(bound.isoformat(sep=" ")), exp.DataType.build(kind))
    # The wall clock in the partition's zone: what a naive column holds for it.
    wall_clock = bound.replace(tzinfo=None).isoformat(sep=" ")
    return exp.cast(exp.Literal.string(wall_clock), exp.DataType.build("TIMESTAMP"))


def pushdown(connection: Any, select: exp.Select, log: Callable[[str], None]) -> SQLTable:
    """The rows of `select`, evaluated by queries on cursors of `connection`, each logged."""

    def run(sql: str) -> pl.DataFrame:
        shown = sql if len(sql) <= _LOGGED_SQL else sql[:_LOGGED_SQL] + "…"
        log(f"Pushed down to DuckDB: {shown}")
        cursor = connection.cursor()
        try:
            return pl.DataFrame(pl.from_arrow(cursor.sql(sql).to_arrow_table()))
        finally:
            cursor.close()

    return SQLTable.of(select, dialect=DIALECT, run=run)
