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

from .._engine.sql.literals import wall_clock
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
for _name, _dtype in (
    ("TIMESTAMPNTZ", pl.Datetime("us")),
    ("TIMESTAMPLTZ", pl.Datetime("us", "UTC")),
):
    if hasattr(_T, _name):  # sqlglot 26 reads Snowflake's TIMESTAMP_NTZ as TIMESTAMP
        _DTYPES[getattr(_T, _name)] = _dtype
if hasattr(_T, "BLOB"):  # sqlglot 26 reads BLOB as VARBINARY; later releases have a type of its own
    _DTYPES[_T.BLOB] = pl.Binary()
#: A description says no more than this of a column: anything not above is read as text.
_TEXT = pl.String()
_ROWS = "__dy_rows"
#: Type names a driver reports that sqlglot would read otherwise than the database means
#: them: Snowflake's connector reports its wire types (`FIXED` numbers, `REAL` is 64 bits),
#: BigQuery's its legacy names (`INTEGER` and `FLOAT` are 64 bits).
_REPORTED = {
    "snowflake": {"FIXED": "NUMBER", "REAL": "DOUBLE"},
    "bigquery": {"INTEGER": "INT64", "FLOAT": "FLOAT64"},
}
#: How each database folds an unquoted name; the others take it as written.
_FOLDS: dict[str, Callable[[str], str]] = {"snowflake": str.upper, "postgres": str.lower}
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
    select = exp.select(exp.Star()).from_(_table(table, dialect))
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
    probe = exp.select(exp.alias_(expr.copy(), "value", quoted=True))
    probe = probe.from_(_table(table, dialect)).limit(0)
    dtype = dtypes(probe.sql(dialect=dialect))["value"]
    zoned = isinstance(dtype, pl.Datetime) and dtype.time_zone is not None
    start, end = (_bound(bound, dialect, zoned=zoned) for bound in partition.window)
    return select.where(
        exp.and_(
            exp.GTE(this=exp.paren(expr.copy()), expression=start),
            exp.LT(this=exp.paren(expr.copy()), expression=end),
        )
    )


def _bound(bound: datetime, dialect: str, *, zoned: bool) -> exp.Expr:
    """A partition bound as a literal: the instant for a zoned column, else the wall clock in
    the partition's zone (what a naive column holds for it)."""
    if zoned and bound.tzinfo is not None:
        return exp.cast(exp.Literal.string(bound.isoformat(sep=" ")), "TIMESTAMPTZ")
    naive = bound.replace(tzinfo=None).isoformat(sep=" ")
    return exp.cast(exp.Literal.string(naive), wall_clock(dialect))


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
    type_name = _REPORTED.get(dialect, {}).get(type_name.upper(), type_name)
    try:
        kind = exp.DataType.build(type_name, dialect=dialect).this
    except (sqlglot.errors.ParseError, ValueError):
        return _TEXT
    if kind == _T.DECIMAL:
        precision, scale = description[4:6] if len(description) >= 6 else (None, None)
        if precision is None or not 0 < precision <= 38:
            return pl.Float64()  # no fixed scale: a bare NUMERIC
        if dialect == "snowflake" and not scale:
            return pl.Int64()  # INT, BIGINT, SMALLINT are NUMBER(38, 0) in Snowflake
        return pl.Decimal(precision, scale or 0)
    return _DTYPES.get(kind, _TEXT)


def _table(table: str, dialect: str) -> exp.Table:
    """`catalog.schema.table`, each part quoted (a name from metadata is not SQL). A part
    written in double quotes is taken as it is; a bare part names what the database names by
    it unquoted: Snowflake reads `finance.payments` as `FINANCE.PAYMENTS`, PostgreSQL as
    `finance.payments`; BigQuery and DuckDB take it as written."""
    parts = [_part(part.strip(), dialect) for part in table.split(".")]
    if not all(part.name for part in parts) or len(parts) > 3:
        raise InvalidSourceError(
            f"{table!r} is not a table name: write 'table', 'schema.table' or "
            "'database.schema.table'."
        )
    return exp.Table(
        this=parts[-1],
        db=parts[-2] if len(parts) > 1 else None,
        catalog=parts[-3] if len(parts) > 2 else None,
    )


def _part(part: str, dialect: str) -> exp.Identifier:
    if len(part) > 1 and part.startswith('"') and part.endswith('"'):
        return exp.to_identifier(part[1:-1], quoted=True)
    name = part.strip('"')
    folds = _FOLDS.get(dialect)
    return exp.to_identifier(folds(name) if folds else name, quoted=True)
