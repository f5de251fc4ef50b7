"""Amazon Redshift: PostgreSQL's syntax with its own text, float and regex semantics."""

from __future__ import annotations

from typing import Any, ClassVar

import polars as pl
from sqlglot import exp

from .. import catalog
from ..columns import ColumnFacts
from ..exactness import NotExact
from ..regex import REDSHIFT_POSIX
from ..sessions import Value
from .duckdb import Dialect
from .forms import count_case, equal_or_both_null

#: Trailing blanks of a `VARCHAR` or `CHAR` do not count when Redshift compares text
#: (https://docs.aws.amazon.com/redshift/latest/dg/r_Character_types.html), so equality,
#: `IN`, grouping and joins of text differ from polars'; a case-insensitive collation (of
#: the column or the database), which no catalog view reports, changes them too.
TRAILING_BLANKS = "text compares without trailing blanks in Redshift"
#: Redshift documents neither how NaN compares and sorts nor whether it is stored.
FLOATS_UNKNOWN = "NaN and infinity are not documented in Redshift"


class RedshiftDialect(Dialect):
    """Redshift reads PostgreSQL's syntax (sqlglot's `redshift` writes it) but differs in
    what a rule's verdict rests on: text compares without trailing blanks, its float
    semantics are undocumented, its regex engine is not PostgreSQL's, and it has no
    `FILTER` clause. What is pushed is what needs none of these: nulls, integer, date and
    timestamp bounds, integer `is_in`, integer keys and custom rules over those."""

    name = "redshift"
    title = "Redshift"
    keys_streamed_from = None  # a server: its keys are grouped where they are
    nan_is_largest = False  # so a float bound asks `is_nan`, which declines
    binary_string_order = False
    float_to_decimal = False
    #: Not documented to give ±inf on overflow: float arithmetic that may stays in polars.
    float_overflow_raises = True
    #: Casts to another unit stay in polars (its `TIMESTAMP` is microseconds).
    timestamp_types: ClassVar[dict[str, str]] = {}
    regex_engine = REDSHIFT_POSIX
    float_tests = False  # no `isnan`/`isinf` (and `is_nan` declines, see below)
    materialized_cte = False  # PostgreSQL 12's keyword; Redshift's CTEs have none
    union_by_name = False  # each sample is a query of its own
    #: Its `CREATE TABLE AS` and `ALTER TABLE ADD COLUMN` take no `IF NOT EXISTS`.
    keeps_failing_rows = False
    #: Its `COLLATE(text, 'case_sensitive')` is a function, and comparisons would still
    #: ignore trailing blanks: no collation makes its text compare as polars'.
    binary_collation = None
    #: Text types, by the name `information_schema` gives them.
    text_types: ClassVar[frozenset[str]] = frozenset(
        {"character varying", "character", "varchar", "char", "text", "bpchar", "nvarchar"}
    )
    #: Types whose comparisons are polars' (for the floats, where they are pushed at all).
    known_types: ClassVar[frozenset[str]] = frozenset(
        {
            "smallint",
            "integer",
            "bigint",
            "real",
            "double precision",
            "numeric",
            "boolean",
            "date",
            "timestamp without time zone",
            "timestamp with time zone",
        }
    )
    #: `SET timezone`: the zone a `TIMESTAMPTZ` is cast to a date or text in;
    #: `datestyle`: how dates are written as text (the drivers parse ISO). Read with
    #: `current_setting`, pinned with `SET SESSION` and restored after the check.
    session_settings: ClassVar[dict[str, Value]] = {"datestyle": "ISO, MDY", "timezone": "UTC"}
    #: Every cursor of a connection shares its session; `SET` in a transaction is undone
    #: by its rollback (https://docs.aws.amazon.com/redshift/latest/dg/r_SET.html).
    cursors_are_sessions = False
    rollback_unsets = True
    #: The OIDs Redshift reports for its types (PostgreSQL's own), for drivers that keep no
    #: registry of them (`redshift_connector`, psycopg2).
    type_oids: ClassVar[dict[int, str]] = {
        16: "boolean",
        20: "bigint",
        21: "smallint",
        23: "integer",
        25: "text",
        700: "real",
        701: "double precision",
        1042: "character",
        1043: "character varying",
        1082: "date",
        1083: "time",
        1114: "timestamp",
        1184: "timestamptz",
        1700: "numeric",
    }

    def catalog_query(self, table: exp.Table) -> exp.Expr:
        """`information_schema.columns` of the table's schema; no view reports a column's
        collation (`collation_name` is NULL)."""
        return catalog.information_schema(
            self.info_schema("columns", table), table, schema=True, collation=False
        )

    def column_facts(self, rows: pl.DataFrame) -> dict[str, ColumnFacts]:
        return catalog.information_schema_facts(rows, (), self.unlike)

    def unlike(self, data_type: str) -> str | None:
        """Every text column compares otherwise than polars (`TRAILING_BLANKS`), and so may
        a type not known here (`SUPER`, `VARBYTE`, `GEOMETRY`, ...)."""
        base = catalog.type_base(data_type)
        if base in self.text_types:
            return TRAILING_BLANKS
        return None if base in self.known_types else f"type {base} not known to compare as polars"

    def type_name(self, type_code: Any, connection: Any) -> str | None:
        named = super().type_name(type_code, connection)
        if named is None and isinstance(type_code, int):
            return self.type_oids.get(type_code)
        return named

    def current_role(self) -> exp.Expr | None:
        return exp.CurrentUser()

    def byte_length(self, value: exp.Expr) -> exp.Expr | None:
        return exp.Anonymous(this="OCTET_LENGTH", expressions=[value])  # LENGTH counts characters

    def smallest(self, value: exp.Expr, n: int) -> exp.Expr | None:
        return None

    def count_where(self, condition: exp.Expr) -> exp.Expr:
        return count_case(condition)  # no FILTER clause

    def same(self, left: exp.Expr, right: exp.Expr) -> exp.Expr:
        """Written out: `IS NOT DISTINCT FROM` is in none of Redshift's documented
        comparison conditions (it came to PostgreSQL in 8.2; Redshift forked 8.0)."""
        return equal_or_both_null(left, right)

    def is_nan(self, value: exp.Expr) -> exp.Expr:
        raise NotExact(FLOATS_UNKNOWN)

    def is_infinite(self, value: exp.Expr) -> exp.Expr:
        raise NotExact(FLOATS_UNKNOWN)
