"""Trino (and Athena, which runs Trino's SQL): IEEE NaN, byte-ordered text, per-request sessions."""

from __future__ import annotations

import re
from typing import ClassVar

import polars as pl
from sqlglot import exp

from .. import catalog
from ..columns import ColumnFacts
from ..regex import TRINO
from ..sessions import Value
from .duckdb import Dialect


class TrinoDialect(Dialect):
    """Trino, from its documentation (https://trino.io/docs/current/): no collations (a
    `varchar` compares and groups by its UTF-8 bytes, as polars), `char(n)` padded,
    `timestamp(p)` a wall clock of `p` digits, `COUNT(*) FILTER (WHERE ...)`. No local
    Trino runs in tests: its SQL is held in golden files and parsed back."""

    name = "trino"
    title = "Trino"
    keys_streamed_from = None  # a server: its keys are grouped where they are
    #: NaN compares false with everything, itself included (IEEE 754 doubles); the form of
    #: a float bound written for that (`is_nan` beside the comparison) is exact under
    #: polars' order too, which matters where a connector evaluates the comparison in its
    #: own database (https://github.com/trinodb/trino/issues/21922: PostgreSQL's NaN order).
    nan_is_largest = False
    #: How a double cast to a `DECIMAL` rounds is not documented as polars' way.
    float_to_decimal = False
    #: Whether a double overflow gives ±inf or raises is not documented: assumed to raise,
    #: so float arithmetic that may overflow stays in polars.
    float_overflow_raises = True
    #: A cast that lowers a timestamp's precision rounds in Trino and truncates in polars:
    #: unit changes stay in polars, bounds are written in microseconds (`wall_clock`).
    timestamp_types: ClassVar[dict[str, str]] = {}
    regex_engine = TRINO  # `regexp_like`, a search
    #: No `COLLATE`, and none needed: no column has a collation.
    binary_collation = None
    #: `is_nan` and `is_infinite` are NULL for NULL, as polars' are.
    float_tests = True
    materialized_cte = False
    union_by_name = False
    #: Temporary tables do not exist, and `DELETE` only where the connector supports it:
    #: failing rows are kept in files, and a filter's keys are not staged.
    keeps_failing_rows = False
    temporary_tables = False
    #: Types that compare otherwise than polars' strings, by the name's start.
    unlike_types: ClassVar[dict[str, str]] = {"char": "padded char(n)"}
    #: Types whose comparisons are polars' (`uuid`, `json`, `ipaddress`, arrays and rows,
    #: which polars reads as text or not at all, are not among them).
    known_types: ClassVar[frozenset[str]] = frozenset(
        {
            "boolean",
            "tinyint",
            "smallint",
            "integer",
            "bigint",
            "real",
            "double",
            "decimal",
            "varchar",
            "char",
            "date",
            "timestamp",
            "timestamp with time zone",
            "time",
        }
    )
    #: Session properties travel with each request (the client's headers): the time zone
    #: is the client's, and nothing a check sends depends on it (a partition's bounds carry
    #: their offset, a zoned bound stays in polars, a `timestamp with time zone` keeps its
    #: zone), so nothing is pinned.
    session_settings: ClassVar[dict[str, Value]] = {}
    cursors_are_sessions = False

    def current_role(self) -> exp.Expr | None:
        return exp.CurrentUser()

    def info_schema(self, view: str, table: exp.Table, alias: str | None = None) -> exp.Table:
        """The `information_schema` of the table's catalog (each catalog has its own)."""
        return exp.table_(
            view, db="information_schema", catalog=table.args.get("catalog"), alias=alias
        )

    def catalog_query(self, table: exp.Table) -> exp.Expr:
        """`information_schema.columns`, which has no `collation_name`: Trino has no
        collations. An unnamed schema is `current_schema`, a keyword without parentheses."""
        query = catalog.information_schema(
            self.info_schema("columns", table), table, schema=True, collation=False
        )
        return query.transform(_current_schema)

    def column_facts(self, rows: pl.DataFrame) -> dict[str, ColumnFacts]:
        return catalog.information_schema_facts(rows, (), self.unlike)

    def unlike(self, data_type: str) -> str | None:
        """Why a column of `data_type` compares otherwise than polars, or None: a padded
        `char(n)`, or a `timestamp(p)` finer than the microseconds its values reach polars
        in (a bound would be compared with digits polars never sees)."""
        base = catalog.type_base(data_type)
        digits = re.match(r"\s*(?:timestamp|time)\s*\((\d+)\)", data_type.lower())
        if digits is not None and int(digits.group(1)) > 6:
            return f"{data_type}: finer than microseconds"
        if base not in self.known_types:
            return f"type {base} not known to compare as polars"
        return self.unlike_types.get(base)

    def wall_clock(self) -> exp.DataType:
        """`timestamp(6)`: a bare `TIMESTAMP` literal has 3 digits, and a bound in
        microseconds would be rounded to them."""
        return exp.DataType.build("TIMESTAMP(6)", dialect=self.name)

    def byte_length(self, value: exp.Expr) -> exp.Expr | None:
        """`length(to_utf8(s))`: `length` of a `varchar` counts code points."""
        utf8 = exp.Anonymous(this="TO_UTF8", expressions=[value])
        return exp.Anonymous(this="LENGTH", expressions=[utf8])

    def is_infinite(self, value: exp.Expr) -> exp.Expr:
        """`is_infinite` (sqlglot writes `IsInf` as `IS_INF`, which Trino does not have)."""
        return exp.Anonymous(this="IS_INFINITE", expressions=[value])

    def smallest(self, value: exp.Expr, n: int) -> exp.Expr | None:
        return None


class AthenaDialect(TrinoDialect):
    """Amazon Athena (engine version 3), whose SQL is Trino's: every fact above holds.
    https://docs.aws.amazon.com/athena/latest/ug/engine-versions-reference-0003.html"""

    name = "athena"
    title = "Athena"


def _current_schema(node: exp.Expr) -> exp.Expr:
    if isinstance(node, exp.Anonymous) and node.name.upper() == "CURRENT_SCHEMA":
        return exp.column("current_schema")
    return node
