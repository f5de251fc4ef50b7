"""What each database can express exactly, one class per dialect.

A dialect says how a rule that SQL has no single portable form for is written there (NaN,
byte length, regex search) and which rules it cannot express with Dataframely's verdicts, so
they fall back to polars. sqlglot renders everything else.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import polars as pl
from sqlglot import exp

from . import catalog, sessions
from .columns import ColumnFacts
from .regex import POSTGRES_ARE, RE2, SNOWFLAKE_ERE, RegexEngine
from .sessions import Current, Value


class Dialect:
    """DuckDB, the reference: its float order and string comparisons are polars' own."""

    name: ClassVar[str] = "duckdb"
    #: How a message names the database.
    title: ClassVar[str] = "DuckDB"
    #: NaN sorts above every number and equals itself, as in polars.
    nan_is_largest: ClassVar[bool] = True
    #: String `<`, `>` compare bytes, as in polars (no collation).
    binary_string_order: ClassVar[bool] = True
    #: A float cast to a `DECIMAL` rounds to its scale as polars' cast does, within the
    #: digits the float holds (`read_dtypes="cast"`).
    float_to_decimal: ClassVar[bool] = True
    #: A float `+ - *` that overflows (or a product that underflows to zero) raises instead
    #: of giving ±inf (0) as polars does: DuckDB returns them.
    float_overflow_raises: ClassVar[bool] = False
    #: The wall-clock timestamp type of each polars time unit the database has.
    timestamp_types: ClassVar[dict[str, str]] = {
        "ms": "TIMESTAMP_MS",
        "us": "TIMESTAMP",
        "ns": "TIMESTAMP_NS",
    }
    #: Type names its driver reports (a DB-API description) that sqlglot reads otherwise
    #: than the database means them, with the names sqlglot reads rightly.
    reported_types: ClassVar[dict[str, str]] = {}
    #: The engine of `REGEXP_MATCHES`.
    regex_engine: ClassVar[RegexEngine] = RE2
    #: A regex match is made under `binary_collation`, as the engine refuses (or reads
    #: otherwise) a column of the column's own collation.
    regex_needs_binary_collation: ClassVar[bool] = False

    #: The collation that compares text by its bytes, as polars does (None: the dialect has
    #: none, so a rule over a collated column falls back).
    binary_collation: ClassVar[str | None] = "binary"
    #: `WITH x AS MATERIALIZED (...)` computes `x` once for all its references: a key's
    #: grouping is then summed and limited without a window over it (`repeated`).
    materialized_cte: ClassVar[bool] = True
    #: How a GRANT names a role (`TO ROLE r` in Snowflake; None: `TO r`), and the privilege
    #: that lets a role create a table in a schema: for the message of a refused failures table.
    grant_role_kind: ClassVar[str | None] = None
    create_privilege: ClassVar[str] = "CREATE"

    def current_role(self) -> exp.Expr | None:
        """The role the session acts as, for that message (None: the database has no roles)."""
        return None

    def info_schema(self, view: str, table: exp.Table, alias: str | None = None) -> exp.Table:
        """The standard `information_schema` `view` that describes `table`."""
        return exp.table_(view, db="information_schema", alias=alias)

    def catalog_query(self, table: exp.Table) -> exp.Select:
        """One query for the facts of `table`'s columns (see `catalog`)."""
        return catalog.duckdb_catalog(table)

    def column_facts(self, rows: pl.DataFrame) -> dict[str, ColumnFacts]:
        """The facts of `catalog_query`'s rows, by column name."""
        return catalog.duckdb_facts(rows, self.binary_collation)

    #: Session settings a check pins for its own queries, so that no setting of the user's
    #: session changes what they select or how values come back. DuckDB's `TimeZone` (its
    #: default here) is the zone a `TIMESTAMPTZ` reaches polars in and casts to a date in.
    session_settings: ClassVar[dict[str, Value]] = {"TimeZone": "Etc/UTC"}
    #: Each `connection.cursor()` is a session of its own (DuckDB): the settings are pinned
    #: on every cursor, and the user's connection is never changed.
    cursors_are_sessions: ClassVar[bool] = True
    #: A rollback undoes the settings set in its transaction: they are pinned again.
    rollback_unsets: ClassVar[bool] = False

    def set_session(self, settings: Mapping[str, Value | None]) -> list[exp.Expr]:
        """The statements that set `settings` for the session, one `SET SESSION` each (None:
        to its `DEFAULT`)."""
        return [sessions.set_statement(name, value) for name, value in settings.items()]

    def read_session(self, names: list[str]) -> exp.Expr:
        """A one-row query of the session's current value of each setting in `names`."""
        return sessions.current_settings(names)

    def current_session(self, rows: list[dict[str, Any]]) -> dict[str, Current]:
        """The session's settings from `read_session`'s rows (one, a column per setting)."""
        return {name: Current(str(value)) for name, value in rows[0].items()}

    def type_name(self, type_code: Any, connection: Any) -> str | None:
        """The SQL type name of a DB-API description's type code: an OID its `connection`
        knows (psycopg's `adapters`), or a type whose text is its name (a string, DuckDB's
        types); None where the driver says none (sqlite3)."""
        if type_code is None:
            return None
        if isinstance(type_code, int):
            adapters = getattr(connection, "adapters", None)
            info = adapters.types.get(type_code) if adapters is not None else None
            return getattr(info, "name", None)
        return str(type_code)

    def decimal_dtype(self, precision: int | None, scale: int | None) -> pl.DataType:
        """The polars dtype of a described `DECIMAL(precision, scale)` column."""
        if precision is None or not 0 < precision <= 38:
            return pl.Float64()  # no fixed scale: a bare NUMERIC
        return pl.Decimal(precision, scale or 0)

    def wall_clock(self) -> exp.DataType:
        """A timestamp without time zone (BigQuery writes it `DATETIME`)."""
        return exp.DataType.build("TIMESTAMP")

    def sql_type(self, dtype: pl.DataType) -> exp.DataType | None:
        """The SQL type of a polars `dtype` that literals are cast to, or None."""
        if dtype == pl.Float32:
            return exp.DataType.build("FLOAT")
        if dtype == pl.Float64:
            return exp.DataType.build("DOUBLE")
        if dtype == pl.Date:
            return exp.DataType.build("DATE")
        if isinstance(dtype, pl.Datetime) and dtype.time_zone is None:
            return self.wall_clock()
        return None

    def naive_timestamp(self, unit: str) -> exp.DataType | None:
        """The type of a timestamp without zone in `unit`, None where the database has none."""
        name = self.timestamp_types.get(unit)
        return None if name is None else exp.DataType.build(name, dialect=self.name)

    def byte_length(self, value: exp.Expr) -> exp.Expr | None:
        """The UTF-8 length in bytes of a string, as `str.len_bytes()`; None if inexpressible."""
        return exp.Anonymous(this="STRLEN", expressions=[value])

    def count_where(self, condition: exp.Expr) -> exp.Expr:
        """The number of rows where `condition` is true (not false, not null)."""
        return exp.Filter(this=exp.Count(this=exp.Star()), expression=exp.Where(this=condition))

    def is_nan(self, value: exp.Expr) -> exp.Expr:
        return exp.EQ(this=value, expression=_float("NaN"))

    def smallest(self, value: exp.Expr, n: int) -> exp.Expr | None:
        """An aggregate: the list of the `n` smallest `value`s (bounded state, so a sample
        rides along a count query), or None where the database has none."""
        return exp.Anonymous(this="MIN", expressions=[value, exp.Literal.number(n)])

    def contains(self, value: exp.Expr, pattern: str) -> exp.Expr:
        """`str.contains(pattern)` (a search, not a full match), the pattern written for the
        dialect's regex engine; `NotExact` names the construct the engine reads otherwise."""
        written = self.regex_engine.search_pattern(pattern)
        if self.regex_needs_binary_collation and self.binary_collation is not None:
            collation = exp.Identifier(this=self.binary_collation, quoted=True)
            value = exp.Collate(this=value, expression=collation)
        return exp.RegexpLike(this=value, expression=exp.Literal.string(written))


class PostgresDialect(Dialect):
    name = "postgres"
    title = "PostgreSQL"
    #: Text order follows the database's collation, not bytes.
    binary_string_order = False
    #: `value out of range: overflow` (and `underflow`) for float8.
    float_overflow_raises = True
    timestamp_types: ClassVar[dict[str, str]] = {"us": "TIMESTAMP"}
    regex_engine = POSTGRES_ARE  # `~`
    #: `~` refuses a column of a nondeterministic collation; under "C" it matches code
    #: points, which is all the patterns it is given need.
    regex_needs_binary_collation = True
    #: Deterministic and in byte order (code point order in UTF-8) in every PostgreSQL.
    binary_collation = "C"
    #: Types whose comparisons no collation makes polars': blank-padded, case-folded.
    unlike_types: ClassVar[dict[str, str]] = {
        "bpchar": "padded character(n)",
        "citext": "citext compares case-insensitively",
    }

    #: Collations that compare by bytes.
    binary_collations: ClassVar[frozenset[str]] = frozenset({"C", "POSIX"})

    def catalog_query(self, table: exp.Table) -> exp.Select:
        return catalog.postgres_catalog(table)

    def column_facts(self, rows: pl.DataFrame) -> dict[str, ColumnFacts]:
        return catalog.postgres_facts(rows, self.binary_collations, self.unlike_types)

    def current_role(self) -> exp.Expr | None:
        return exp.CurrentUser()

    #: `DateStyle` sets how dates and timestamps are read from and written as text (psycopg
    #: parses only ISO), `TimeZone` the zone of a `timestamptz` cast to a date or text, and
    #: `standard_conforming_strings = off` reads a backslash in a string literal (a custom
    #: rule's `'C:\tmp'`) as an escape. Pinned on the resource's connection for the check
    #: and restored after it (see `sources/_sql.py`).
    session_settings: ClassVar[dict[str, Value]] = {
        "DateStyle": "ISO, MDY",
        "TimeZone": "UTC",
        "standard_conforming_strings": "on",
    }
    #: Every cursor of a connection shares its session.
    cursors_are_sessions = False
    #: `SET SESSION` in a transaction is undone by its rollback.
    rollback_unsets = True

    def byte_length(self, value: exp.Expr) -> exp.Expr | None:
        return exp.Anonymous(this="OCTET_LENGTH", expressions=[value])

    def smallest(self, value: exp.Expr, n: int) -> exp.Expr | None:
        return None


class SnowflakeDialect(Dialect):
    """NaN sorts above every number and equals itself, as in polars; strings compare by the
    column's collation, if it has one."""

    name = "snowflake"
    title = "Snowflake"
    #: Its connector reports wire types: `FIXED` numbers, and `REAL` is 64 bits.
    reported_types: ClassVar[dict[str, str]] = {"FIXED": "NUMBER", "REAL": "DOUBLE"}
    binary_string_order = False
    #: How its float-to-NUMBER cast rounds is not known to be polars' way: such casts stay
    #: in polars, as do its timestamp unit changes.
    float_to_decimal = False
    #: Not known to return ±inf on overflow (fakesnow runs DuckDB): assumed to raise.
    float_overflow_raises = True
    timestamp_types: ClassVar[dict[str, str]] = {}
    regex_engine = SNOWFLAKE_ERE  # `REGEXP_LIKE`
    #: A collated column cannot be compared by bytes (`COLLATE 'utf8'` is not binary in
    #: every context): its rules fall back.
    binary_collation = None
    materialized_cte = False  # no MATERIALIZED keyword
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
        return _count_case(condition)  # no FILTER clause

    def byte_length(self, value: exp.Expr) -> exp.Expr | None:
        return exp.Anonymous(this="OCTET_LENGTH", expressions=[value])  # LENGTH counts characters

    def smallest(self, value: exp.Expr, n: int) -> exp.Expr | None:
        return None


class BigQueryDialect(Dialect):
    name = "bigquery"
    title = "BigQuery"
    #: Its client reports legacy names: `INTEGER` and `FLOAT` are 64 bits.
    reported_types: ClassVar[dict[str, str]] = {"INTEGER": "INT64", "FLOAT": "FLOAT64"}
    #: NaN compares false with every value, itself included (IEEE 754).
    nan_is_largest = False
    float_to_decimal = False
    #: Its SQL (ZetaSQL) reports a floating point overflow as an error.
    float_overflow_raises = True
    timestamp_types: ClassVar[dict[str, str]] = {}
    regex_engine = RE2  # `REGEXP_CONTAINS`
    #: No collation compares bytes: a collated (`und:ci`) column's rules fall back.
    binary_collation = None
    materialized_cte = False  # a CTE is computed again for each reference
    #: BigQuery writes an uncollated column's collation as the text `NULL`.
    binary_collations: ClassVar[frozenset[str]] = frozenset({"", "null"})

    def info_schema(self, view: str, table: exp.Table, alias: str | None = None) -> exp.Table:
        """The `INFORMATION_SCHEMA` views live in the table's dataset."""
        return exp.Table(
            this=exp.to_identifier(f"INFORMATION_SCHEMA.{view.upper()}", quoted=True),
            db=table.args.get("db"),
            catalog=table.args.get("catalog"),
            alias=exp.TableAlias(this=exp.to_identifier(alias)) if alias else None,
        )

    def catalog_query(self, table: exp.Table) -> exp.Select:
        """The dataset's `INFORMATION_SCHEMA.COLUMNS`: each column's type and collation."""
        return catalog.information_schema(self.info_schema("columns", table), table, schema=False)

    def column_facts(self, rows: pl.DataFrame) -> dict[str, ColumnFacts]:
        return catalog.information_schema_facts(rows, self.binary_collations)

    #: Nothing pinned: BigQuery has no session settings that change a check's query.
    session_settings: ClassVar[dict[str, Value]] = {}
    cursors_are_sessions = False

    def byte_length(self, value: exp.Expr) -> exp.Expr | None:
        return exp.Anonymous(this="BYTE_LENGTH", expressions=[value])

    def is_nan(self, value: exp.Expr) -> exp.Expr:
        return exp.Anonymous(this="IS_NAN", expressions=[value])

    def count_where(self, condition: exp.Expr) -> exp.Expr:
        return _count_case(condition)  # no FILTER clause

    def smallest(self, value: exp.Expr, n: int) -> exp.Expr | None:
        return None


DIALECTS: dict[str, Dialect] = {
    dialect.name: dialect
    for dialect in (Dialect(), PostgresDialect(), SnowflakeDialect(), BigQueryDialect())
}


def described(name: str) -> Dialect:
    """The Dialect that reads dialect `name`'s descriptions and writes its wall-clock type:
    its own, or for a dialect this package pushes nothing down to, the reference's (sqlglot's
    and the driver's own readings)."""
    return DIALECTS.get(name, DIALECTS["duckdb"])


def _count_case(condition: exp.Expr) -> exp.Expr:
    """`COUNT(CASE WHEN condition THEN 1 END)`: `count_where` in every SQL dialect."""
    return exp.Count(this=exp.Case(ifs=[exp.If(this=condition, true=exp.Literal.number(1))]))


def _float(text: str) -> exp.Expr:
    return exp.cast(exp.Literal.string(text), exp.DataType.build("DOUBLE"))


def infinite(value: exp.Expr) -> exp.Expr:
    """`value` is +inf or -inf, in every dialect (NaN is neither)."""
    return exp.In(this=value, expressions=[_float("inf"), _float("-inf")])
