"""DuckDB, the reference dialect: the base class every dialect refines."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import polars as pl
from sqlglot import exp

from .. import catalog, sessions
from ..columns import ColumnFacts
from ..regex import RE2, RegexEngine
from ..sessions import Current, Value
from .forms import equals_nan, infinite


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
    #: `isnan(x)` and `isinf(x)` are NULL for NULL, as polars' `is_nan`/`is_infinite`, and
    #: cost less per row than comparing with cast `'NaN'` and listing cast `±inf`, which a
    #: dialect without them (or whose `isnan(NULL)` is false) writes instead.
    float_tests: ClassVar[bool] = True
    #: `UNION ALL BY NAME` matches columns by name, NULL where a branch lacks one: the
    #: samples of many rules are fetched in one query (`samples`).
    union_by_name: ClassVar[bool] = True
    #: The samples of all failing rules come from one bounded query, each row flagged per
    #: rule (`samples`): for a database that runs each query as a job of its own, where a
    #: sample query costs a scan's start however few rows it brings back.
    shared_samples: ClassVar[bool] = False
    #: `WITH x AS MATERIALIZED (...)` computes `x` once for all its references: a key's
    #: grouping is then summed and limited without a window over it (`repeated`).
    materialized_cte: ClassVar[bool] = True
    #: The database runs in the checking process (a DuckDB file): from this many rows (the
    #: catalog's count; a view's, unknown, counts as many), a key's repeated rows are counted
    #: in polars over the key's columns streamed, for less CPU and memory than the database's
    #: grouping of every key: 0.63x its CPU and half its memory at 20M rows, 0.77x at 4M,
    #: even at 1M (`benchmarks/pushdown_floor.py`). Below it, starting the stream costs more
    #: than the grouping (8 ms a table at 100,000 rows, `benchmarks/many_tables.py`). None:
    #: never; a server's grouping stays there, as streaming its keys would cross the network.
    keys_streamed_from: ClassVar[int | None] = 1_000_000
    #: How a GRANT names a role (`TO ROLE r` in Snowflake; None: `TO r`), and the privilege
    #: that lets a role create a table in a schema: for the message of a refused failures table.
    grant_role_kind: ClassVar[str | None] = None
    #: Failing rows are kept in a table beside the checked one (`CREATE TABLE IF NOT EXISTS
    #: ... AS`, `ADD COLUMN IF NOT EXISTS`, `DELETE`, `INSERT` in a transaction); where the
    #: database is not known to run those statements, they are kept in parquet files.
    keeps_failing_rows: ClassVar[bool] = True
    create_privilege: ClassVar[str] = "CREATE"
    #: `CREATE TEMPORARY TABLE` stages a filter's kept keys once (`staging`).
    temporary_tables: ClassVar[bool] = True

    def current_role(self) -> exp.Expr | None:
        """The role the session acts as, for that message (None: the database has no roles)."""
        return None

    def info_schema(self, view: str, table: exp.Table, alias: str | None = None) -> exp.Table:
        """The standard `information_schema` `view` that describes `table`."""
        return exp.table_(view, db="information_schema", alias=alias)

    def catalog_query(self, table: exp.Table) -> exp.Expr:
        """One query for the facts of `table`'s columns (see `catalog`)."""
        return catalog.duckdb_catalog(table)

    def column_facts(self, rows: pl.DataFrame) -> dict[str, ColumnFacts]:
        """The facts of `catalog_query`'s rows, by column name."""
        return catalog.duckdb_facts(rows, self.binary_collation)

    def primary_key_queries(self, table: exp.Table) -> list[exp.Expr]:
        """Queries with a `column_name` column of `table`'s primary key, tried in order
        until one runs: the standard `information_schema` views."""
        usage = self.info_schema("key_column_usage", table, "k")
        constraints = self.info_schema("table_constraints", table, "c")
        return [catalog.information_schema_key(table, usage, constraints)]

    def enum_labels(self, table: exp.Table) -> exp.Select | None:
        """A query of `column, label` rows of `table`'s enum-typed columns that a source
        reads as text, in label order; None where there are none (DuckDB's `ENUM` reaches
        polars as a `Categorical`)."""
        return None

    #: Session settings a check pins for its own queries, so that no setting of the user's
    #: session changes what they select or how values come back. DuckDB's `TimeZone` (its
    #: default here) is the zone a `TIMESTAMPTZ` reaches polars in and casts to a date in.
    session_settings: ClassVar[dict[str, Value]] = {"TimeZone": "UTC"}
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
        types); None where the driver says none (sqlite3). psycopg finds an array's OID
        under its element's type: the array is `<element>[]` (`int4[]`), never the element."""
        if type_code is None:
            return None
        if isinstance(type_code, int):
            adapters = getattr(connection, "adapters", None)
            info = adapters.types.get(type_code) if adapters is not None else None
            if info is None:
                return None
            array = type_code != info.oid and type_code == getattr(info, "array_oid", None)
            return f"{info.name}[]" if array else str(info.name)
        return str(type_code)

    #: A DB-API description of a `DECIMAL` column carries its precision and scale.
    described_precision: ClassVar[bool] = True

    def stored_type(self, declared: exp.DataType) -> exp.DataType:
        """The type a column declared `declared` (in a dbt contract) is stored, and so
        described, as."""
        return declared

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

    def same(self, left: exp.Expr, right: exp.Expr) -> exp.Expr:
        """`left` equals `right`, a null equal to a null (a key's rows, a filter's join)."""
        return exp.NullSafeEQ(this=left, expression=right)

    def is_nan(self, value: exp.Expr) -> exp.Expr:
        """`value` is NaN (NULL for NULL), as polars' `is_nan`."""
        return exp.IsNan(this=value) if self.float_tests else equals_nan(value)

    def is_infinite(self, value: exp.Expr) -> exp.Expr:
        """`value` is +inf or -inf (not NaN; NULL for NULL), as polars' `is_infinite`."""
        return exp.IsInf(this=value) if self.float_tests else infinite(value)

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
