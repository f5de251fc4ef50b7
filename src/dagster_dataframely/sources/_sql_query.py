"""The SQL `SQLTableSource` sends, built with sqlglot for its dialect: the run's rows of the
table, a projection of them, and the polars dtype of a column the database describes.

sqlglot is imported here, so only when such a source opens.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import polars as pl
import sqlglot
from sqlglot import exp

from ._names import parse_expression, parse_table
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


def relation(
    dtypes: Callable[[str], dict[str, pl.DataType]],
    table: exp.Table | str,
    dialect: str,
    partition: Partition | None,
    partition_expr: exp.Expr | str | None,
) -> exp.Select:
    """`SELECT * FROM table`, filtered to `partition` on `partition_expr` (as parsed by
    `_names`, or text it parses); `dtypes` describes a query's columns, so the partition is
    compared in the expression's own type (a zoned timestamp by the instant, a date with a
    date)."""
    if isinstance(table, str):
        table = parse_table(table, dialect, where="table")
    if isinstance(partition_expr, str):
        partition_expr = parse_expression(partition_expr, dialect, where=f"table {table.sql()}")
    select = exp.select(exp.Star()).from_(table.copy())
    if partition is None or partition_expr is None:
        return select
    probe = exp.select(exp.alias_(partition_expr.copy(), "value", quoted=True))
    dtype = dtypes(probe.from_(table.copy()).limit(0).sql(dialect=dialect))["value"]
    return select.where(partition.select(partition_expr, dtype, dialect))


def projected(
    rows: exp.Select, columns: Sequence[str] | None, dialect: str, *, limit: int | None
) -> str:
    """`rows` narrowed to `columns` (all: None) and `limit` rows, as SQL of `dialect`."""
    names = [exp.column(name, quoted=True) for name in columns] if columns else [exp.Star()]
    query = exp.select(*names).from_(rows.copy().subquery(_ROWS))
    return (query if limit is None else query.limit(limit)).sql(dialect=dialect)


def polars_dtype(type_name: str | None, description: Sequence[Any], dialect: str) -> pl.DataType:
    """The polars dtype of a column of SQL type `type_name` (a DB-API description's column:
    precision and scale at 4 and 5), text where the type is unknown; the dialect's
    `reported_types` and `decimal_dtype` say what its driver's names mean."""
    from .._engine.sql.dialects import described

    if type_name is None:
        return _TEXT
    facts = described(dialect)
    type_name = facts.reported_types.get(type_name.upper(), type_name)
    try:
        built = exp.DataType.build(type_name, dialect=dialect)
    except (sqlglot.errors.ParseError, ValueError):
        return _TEXT
    if built.this == _T.DECIMAL:
        precision, scale = description[4:6] if len(description) >= 6 else (None, None)
        return facts.decimal_dtype(precision, scale)
    if built.this == _T.ARRAY:
        return _list_dtype(built)
    return _DTYPES.get(built.this, _TEXT)


def _list_dtype(array: exp.DataType) -> pl.DataType:
    """A one-dimensional array of a type read above (or of text) as a polars list; of any
    other element (a decimal of unknown scale, a type read as text), text, as that type is.
    (A PostgreSQL array's type does not say its dimensions: a value of two does not read.)"""
    element = array.expressions[0] if array.expressions else None
    if not isinstance(element, exp.DataType):
        return _TEXT
    if element.is_type(*exp.DataType.TEXT_TYPES):
        return pl.List(pl.String())
    inner = _DTYPES.get(element.this)
    return _TEXT if inner is None else pl.List(inner)
