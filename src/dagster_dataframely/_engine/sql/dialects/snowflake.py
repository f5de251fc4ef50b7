"""Snowflake: wire type names, collations and the session parameters a check pins."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import polars as pl
from sqlglot import exp

from .. import catalog, sessions
from ..columns import ColumnFacts
from ..regex import SNOWFLAKE_ERE
from ..sessions import Current, Value
from .duckdb import Dialect
from .forms import count_case


class SnowflakeDialect(Dialect):
    """NaN sorts above every number and equals itself, as in polars; strings compare by the
    column's collation, if it has one."""

    name = "snowflake"
    title = "Snowflake"
    keys_streamed_from = None  # a server: its keys are grouped where they are
    #: Its connector reports wire types: `FIXED` numbers, and `REAL` is 64 bits.
    reported_types: ClassVar[dict[str, str]] = {"FIXED": "NUMBER", "REAL": "DOUBLE"}
    binary_string_order = False
    #: How its float-to-NUMBER cast rounds is not known to be polars' way: such casts stay
    #: in polars, as do its timestamp unit changes.
    float_to_decimal = False
    #: Not known to return ±inf on overflow (fakesnow runs DuckDB): assumed to raise.
    float_overflow_raises = True
    timestamp_types: ClassVar[dict[str, str]] = {}
    float_tests = False  # no `isnan`/`isinf`: NaN equality and the `±inf` list
    regex_engine = SNOWFLAKE_ERE  # `REGEXP_LIKE`
    #: A collated column cannot be compared by bytes (`COLLATE 'utf8'` is not binary in
    #: every context): its rules fall back.
    binary_collation = None
    materialized_cte = False  # no MATERIALIZED keyword
    union_by_name = False  # each sample is a query of its own
    #: Collation names that mean byte order.
    binary_collations: ClassVar[frozenset[str]] = frozenset({"", "utf8", "binary"})
    grant_role_kind = "ROLE"
    create_privilege = "CREATE TABLE"

    def current_role(self) -> exp.Expr | None:
        return exp.Anonymous(this="CURRENT_ROLE")

    def info_schema(self, view: str, table: exp.Table, alias: str | None = None) -> exp.Table:
        """The `INFORMATION_SCHEMA` views of the table's database."""
        return exp.table_(
            view.upper(), db="INFORMATION_SCHEMA", catalog=table.args.get("catalog"), alias=alias
        )

    def catalog_query(self, table: exp.Table) -> exp.Select:
        """`information_schema.columns` of the table's database."""
        return catalog.information_schema(self.info_schema("columns", table), table, schema=True)

    def column_facts(self, rows: pl.DataFrame) -> dict[str, ColumnFacts]:
        return catalog.information_schema_facts(rows, self.binary_collations)

    #: `TIMEZONE`: the zone a `TIMESTAMP_LTZ` is cast to a date or compared in;
    #: `TIMESTAMP_TYPE_MAPPING`: what a bare `TIMESTAMP` (in a `partition_expr`) means;
    #: `DATE_INPUT_FORMAT`, `TIMESTAMP_INPUT_FORMAT`: how a literal's text is read (a
    #: bound's ISO text under `AUTO`); `QUOTED_IDENTIFIERS_IGNORE_CASE`: whether the quoted
    #: names of the table and columns mean exactly what they say; `ROWS_PER_RESULTSET`: a
    #: cap on a result's rows, which would cut the rows read into polars. Pinned with
    #: `ALTER SESSION` for the check, and put back after it (see `sessions`).
    session_settings: ClassVar[dict[str, Value]] = {
        "TIMEZONE": "Etc/UTC",
        "TIMESTAMP_TYPE_MAPPING": "TIMESTAMP_NTZ",
        "DATE_INPUT_FORMAT": "AUTO",
        "TIMESTAMP_INPUT_FORMAT": "AUTO",
        "QUOTED_IDENTIFIERS_IGNORE_CASE": False,
        "ROWS_PER_RESULTSET": 0,
    }
    cursors_are_sessions = False

    def set_session(self, settings: Mapping[str, Value | None]) -> list[exp.Expr]:
        """`ALTER SESSION SET` each setting (None: `UNSET`, so it is inherited again)."""
        return [sessions.alter_session(name, value) for name, value in settings.items()]

    def read_session(self, names: list[str]) -> exp.Expr:
        """`SHOW PARAMETERS IN SESSION`: every session parameter, its value and the level
        it is set at (sqlglot reads the statement as a command; it has no node for it)."""
        return exp.Command(this="SHOW", expression="PARAMETERS IN SESSION")

    def current_session(self, rows: list[dict[str, Any]]) -> dict[str, Current]:
        return {
            row["key"]: Current(str(row["value"]), own=row["level"] == "SESSION")
            for row in rows
            if row["key"] in self.session_settings
        }

    def type_name(self, type_code: Any, connection: Any) -> str | None:
        """The connector's type codes are field ids (`FIXED`, `REAL`, `TEXT`, ...)."""
        if isinstance(type_code, int):
            from snowflake.connector.constants import FIELD_ID_TO_NAME

            return FIELD_ID_TO_NAME.get(type_code) or None
        return super().type_name(type_code, connection)

    def primary_key_queries(self, table: exp.Table) -> list[exp.Expr]:
        """`SHOW PRIMARY KEYS` first: Snowflake's `information_schema` has no
        `key_column_usage`."""
        keys = exp.Show(this="PRIMARY KEYS", scope_kind="TABLE", scope=table.copy())
        return [keys, *super().primary_key_queries(table)]

    def stored_type(self, declared: exp.DataType) -> exp.DataType:
        """Every integer type is stored as `NUMBER(38, 0)`, every float type as 64 bits
        (sqlglot 26 reads Snowflake's `FLOAT` as 32 bits)."""
        if declared.is_type(*exp.DataType.INTEGER_TYPES):
            return exp.DataType.build("DECIMAL(38, 0)")
        if declared.is_type(exp.DataType.Type.FLOAT):
            return exp.DataType.build("DOUBLE")
        return declared

    def decimal_dtype(self, precision: int | None, scale: int | None) -> pl.DataType:
        """`INT`, `BIGINT`, `SMALLINT` are `NUMBER(38, 0)`: read as `Int64`."""
        if precision is not None and 0 < precision <= 38 and not scale:
            return pl.Int64()
        return super().decimal_dtype(precision, scale)

    def wall_clock(self) -> exp.DataType:
        """`TIMESTAMP_NTZ`: a bare `TIMESTAMP` follows the account's
        `TIMESTAMP_TYPE_MAPPING`."""
        return exp.DataType.build("TIMESTAMP_NTZ", dialect="snowflake")

    def count_where(self, condition: exp.Expr) -> exp.Expr:
        return count_case(condition)  # no FILTER clause

    def byte_length(self, value: exp.Expr) -> exp.Expr | None:
        return exp.Anonymous(this="OCTET_LENGTH", expressions=[value])  # LENGTH counts characters

    def smallest(self, value: exp.Expr, n: int) -> exp.Expr | None:
        return None
