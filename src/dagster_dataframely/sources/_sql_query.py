"""The SQL `SQLTableSource` sends, built with sqlglot for its dialect: the run's rows of the
table, a projection of them, and the polars dtype of a column the database describes.

sqlglot is imported here, so only when such a source opens.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import polars as pl
import sqlglot
from sqlglot import exp

from ..errors import InvalidSourceError
from ._partitions import Partition

_T = exp.DataType.Type
_DTYPES: dict[Any, pl.DataType] = {
    _T.BOOLEAN: pl.Boolean(),
    _T.TINYINT: pl.Int8(),
    _T.SMALLINT: pl.Int16(),
    _T.INT: pl.Int32(),
    _T.BIGINT: pl.Int64(),
    _T.UTINYINT: pl.UInt8(),
    _T.USMALLINT: pl.UInt16(),
    _T.UINT: pl.UInt32(),
    _T.UBIGINT: pl.UInt64(),
    _T.FLOAT: pl.Float32(),
    _T.DOUBLE: pl.Float64(),
    _T.DATE: pl.Date(),
    _T.TIME: pl.Time(),
    _T.TIMESTAMP: pl.Datetime("us"),
    _T.DATETIME: pl.Datetime("us"),
    _T.TIMESTAMPTZ: pl.Datetime("us", "UTC"),
    _T.VARBINARY: pl.Binary(),
    _T.BINARY: pl.Binary(),
}
if hasattr(_T, "BLOB"):  # sqlglot 26 reads BLOB as VARBINARY; later releases have a type of its own
    _DTYPES[_T.BLOB] = pl.Binary()
#: A description says no more than this of a column: anything not above is read as text.
_TEXT = pl.String()
_ROWS = "__dy_rows"
#: How a message names a dialect.
_NAMES = {"duckdb": "DuckDB", "postgres": "PostgreSQL", "snowflake": "Snowflake"}


def relation(
    dtypes: Callable[[str], dict[str, pl.DataType]],
    table: str,
    dialect: str,
    partition: Partition | None,
    partition_expr: str | None,
) -> exp.Select:
    """`SELECT * FROM <table>`, filtered to `partition` on `partition_expr`; `dtypes` describes
    a query's columns (to tell a zoned timestamp from a wall-clock one)."""
    select = exp.select(exp.Star()).from_(_table(table))
    if partition is None or partition_expr is None:
        return select
    try:
        expr = sqlglot.parse_one(partition_expr, read=dialect)
    except sqlglot.errors.ParseError as error:
        raise InvalidSourceError(
            f"partition_expr={partition_expr!r} is not a {_NAMES.get(dialect, dialect)} SQL "
            f"expression ({error}). "
            "Give the column that holds the partition, or an expression over the table's "
            "columns, e.g. partition_expr='order_date'."
        ) from None
    if partition.window is None:
        text = exp.cast(exp.paren(expr), exp.DataType.build("TEXT"))
        keys = [exp.Literal.string(key) for key in partition.keys]
        return select.where(exp.In(this=text, expressions=keys))
    probe = exp.select(exp.alias_(expr.copy(), "value")).from_(_table(table)).limit(0)
    dtype = dtypes(probe.sql(dialect=dialect))["value"]
    zoned = isinstance(dtype, pl.Datetime) and dtype.time_zone is not None
    start, end = (_bound(bound, zoned=zoned) for bound in partition.window)
    return select.where(
        exp.and_(
            exp.GTE(this=exp.paren(expr.copy()), expression=start),
            exp.LT(this=exp.paren(expr.copy()), expression=end),
        )
    )


def _bound(bound: datetime, *, zoned: bool) -> exp.Expr:
    """A partition bound as a literal: the instant for a zoned column, else the wall clock in
    the partition's zone (what a naive column holds for it)."""
    if zoned or bound.tzinfo is None:
        kind = "TIMESTAMPTZ" if bound.tzinfo is not None else "TIMESTAMP"
        return exp.cast(exp.Literal.string(bound.isoformat(sep=" ")), exp.DataType.build(kind))
    wall_clock = bound.replace(tzinfo=None).isoformat(sep=" ")
    return exp.cast(exp.Literal.string(wall_clock), exp.DataType.build("TIMESTAMP"))


def projected(
    rows: exp.Select, columns: Sequence[str] | None, dialect: str, *, limit: int | None
) -> str:
    """`rows` narrowed to `columns` (all: None) and `limit` rows, as SQL of `dialect`."""
    names = [exp.column(name, quoted=True) for name in columns] if columns else [exp.Star()]
    query = exp.select(*names).from_(rows.copy().subquery(_ROWS))
    return (query if limit is None else query.limit(limit)).sql(dialect=dialect)


def polars_dtype(type_name: str | None, description: Sequence[Any], dialect: str) -> pl.DataType:
    """The polars dtype of a column of SQL type `type_name` (a DB-API description's column:
    precision and scale at 4 and 5), text where the type is unknown."""
    if type_name is None:
        return _TEXT
    try:
        kind = exp.DataType.build(type_name, dialect=dialect).this
    except (sqlglot.errors.ParseError, ValueError):
        return _TEXT
    if kind == _T.DECIMAL:
        precision, scale = description[4:6] if len(description) >= 6 else (None, None)
        if precision is None or not 0 < precision <= 38:
            return pl.Float64()  # no fixed scale: a bare NUMERIC
        return pl.Decimal(precision, scale or 0)
    return _DTYPES.get(kind, _TEXT)


def _table(table: str) -> exp.Table:
    """`catalog.schema.table`, each part quoted (a name from metadata is not SQL)."""
    parts = [part.strip('"') for part in table.split(".")]
    if not all(parts) or len(parts) > 3:
        raise InvalidSourceError(
            f"{table!r} is not a table name: write 'table', 'schema.table' or "
            "'database.schema.table'."
        )
    return exp.Table(
        this=exp.to_identifier(parts[-1], quoted=True),
        db=exp.to_identifier(parts[-2], quoted=True) if len(parts) > 1 else None,
        catalog=exp.to_identifier(parts[-3], quoted=True) if len(parts) > 2 else None,
    )
