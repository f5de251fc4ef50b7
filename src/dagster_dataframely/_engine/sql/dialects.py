"""What each database can express exactly, one class per dialect.

A dialect says how a rule that SQL has no single portable form for is written there (NaN,
byte length, regex search) and which rules it cannot express with Dataframely's verdicts, so
they fall back to polars. sqlglot renders everything else.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import polars as pl
import sqlglot
from sqlglot import exp

from .columns import ColumnFacts
from .regex import POSTGRES_ARE, RE2, SNOWFLAKE_ERE, RegexEngine


class Dialect:
    """DuckDB, the reference: its float order and string comparisons are polars' own."""

    name: ClassVar[str] = "duckdb"
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
    #: The engine of `REGEXP_MATCHES`.
    regex_engine: ClassVar[RegexEngine] = RE2
    #: The collation a regex match is made under, where the column's may refuse one.
    regex_collation: ClassVar[str | None] = None

    #: The collation that compares text by its bytes, as polars does (None: the dialect has
    #: none, so a rule over a collated column falls back).
    binary_collation: ClassVar[str | None] = "binary"
    #: `WITH x AS MATERIALIZED (...)` computes `x` once for all its references: a key's
    #: grouping is then summed and limited without a window over it (`repeated`).
    materialized_cte: ClassVar[bool] = True

    def catalog_query(self, table: exp.Table) -> exp.Select:
        """One query for the facts of `table`'s columns (`catalog`): their names and types in
        order (`pragma_table_info`, which finds the table as the query does), the table's
        `CREATE` statement (its columns' collations; none for a view) and the connection's
        `default_collation`."""
        info = exp.Table(
            this=exp.Anonymous(
                this="pragma_table_info",
                expressions=[exp.Literal.string(table.sql(dialect=self.name))],
            ),
            alias=exp.TableAlias(this=exp.to_identifier("c")),
        )
        created = (
            exp.select(exp.column("sql"))
            .from_(exp.Table(this=exp.Anonymous(this="duckdb_tables", expressions=[])))
            .where(*_located(table, "table_name", "schema_name", "database_name"))
        )
        setting = exp.Anonymous(
            this="current_setting", expressions=[exp.Literal.string("default_collation")]
        )
        return (
            exp.select(
                exp.column("name", "c"),
                exp.column("type", "c"),
                exp.column("sql", "t"),
                exp.alias_(setting, "default_collation"),
            )
            .from_(info)
            .join(created.subquery("t"), on=exp.true(), join_type="left")
            .order_by(exp.column("cid", "c"))
        )

    def column_facts(self, rows: pl.DataFrame) -> dict[str, ColumnFacts]:
        """The facts of `catalog_query`'s rows: a `VARCHAR`'s collation is the one its
        `CREATE` statement declares, else the connection's `default_collation` (a view's
        columns: always, as their collation is not declared)."""
        facts: dict[str, ColumnFacts] = {}
        declared: dict[str, str] = {}
        for name, data_type, create, default in rows.rows():
            text = data_type == "VARCHAR"
            declared = declared or (_declared_collations(create) if create else {})
            collation = declared.get(name) or default or (None if create else "undeclared")
            binary = collation is None or collation.lower() == "binary"
            facts[name] = ColumnFacts(
                name, data_type, None if binary or not text else collation, collatable=text
            )
        return facts

    #: Session settings a check pins for its own queries, so that no setting of the user's
    #: session changes what they select or how values come back. DuckDB's `TimeZone` (its
    #: default here) is the zone a `TIMESTAMPTZ` reaches polars in and casts to a date in.
    session_settings: ClassVar[dict[str, str]] = {"TimeZone": "Etc/UTC"}
    #: Each `connection.cursor()` is a session of its own (DuckDB): the settings are pinned
    #: on every cursor, and the user's connection is never changed.
    cursors_are_sessions: ClassVar[bool] = True

    def set_session(self, settings: Mapping[str, str]) -> list[exp.Expr]:
        """The statements that set `settings` for the session, one `SET SESSION` each."""
        return [
            exp.Set(
                expressions=[
                    exp.SetItem(
                        this=exp.EQ(this=exp.column(name), expression=exp.Literal.string(value)),
                        kind="SESSION",
                    )
                ]
            )
            for name, value in settings.items()
        ]

    def read_session(self, names: list[str]) -> exp.Select:
        """A one-row query of the session's current value of each setting in `names`."""
        return exp.select(
            *(
                exp.alias_(
                    exp.Anonymous(this="current_setting", expressions=[exp.Literal.string(n)]),
                    n,
                    quoted=True,
                )
                for n in names
            )
        )

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
        if self.regex_collation is not None:
            collation = exp.Identifier(this=self.regex_collation, quoted=True)
            value = exp.Collate(this=value, expression=collation)
        return exp.RegexpLike(this=value, expression=exp.Literal.string(written))


class PostgresDialect(Dialect):
    name = "postgres"
    #: Text order follows the database's collation, not bytes.
    binary_string_order = False
    #: `value out of range: overflow` (and `underflow`) for float8.
    float_overflow_raises = True
    timestamp_types: ClassVar[dict[str, str]] = {"us": "TIMESTAMP"}
    regex_engine = POSTGRES_ARE  # `~`
    #: `~` refuses a column of a nondeterministic collation; under "C" it matches code
    #: points, which is all the patterns it is given need.
    regex_collation = "C"
    #: Deterministic and in byte order (code point order in UTF-8) in every PostgreSQL.
    binary_collation = "C"
    #: Types whose comparisons no collation makes polars': blank-padded, case-folded.
    unlike_types: ClassVar[dict[str, str]] = {
        "bpchar": "padded character(n)",
        "citext": "citext compares case-insensitively",
    }

    def catalog_query(self, table: exp.Table) -> exp.Select:
        """`pg_attribute` of the relation the name resolves to (as the query will resolve
        it, through `regclass`), with each column's type and collation."""
        relation = exp.cast(
            exp.Literal.string(table.sql(dialect=self.name)),
            exp.DataType.build("REGCLASS", dialect=self.name),
        )
        column = exp.column
        return (
            exp.select(
                column("attname", "a"),
                exp.Anonymous(
                    this="format_type",
                    expressions=[column("atttypid", "a"), column("atttypmod", "a")],
                ),
                column("typname", "t"),
                column("collname", "k"),
                column("collisdeterministic", "k"),
            )
            .from_(_catalog_table("pg_attribute", "a"))
            .join(
                _catalog_table("pg_type", "t"),
                on=exp.EQ(this=column("oid", "t"), expression=column("atttypid", "a")),
            )
            .join(
                _catalog_table("pg_collation", "k"),
                on=exp.EQ(this=column("oid", "k"), expression=column("attcollation", "a")),
                join_type="left",
            )
            .where(
                exp.EQ(this=column("attrelid", "a"), expression=relation),
                exp.GT(this=column("attnum", "a"), expression=exp.Literal.number(0)),
                exp.not_(column("attisdropped", "a")),
            )
            .order_by(column("attnum", "a"))
        )

    def column_facts(self, rows: pl.DataFrame) -> dict[str, ColumnFacts]:
        """A column compares by bytes under `C` or `POSIX` (or none: not text); any other
        collation (the database's default, libc, ICU, nondeterministic) is overridden."""
        facts: dict[str, ColumnFacts] = {}
        for name, data_type, type_name, collation, _deterministic in rows.rows():
            binary = collation is None or collation in ("C", "POSIX")
            facts[name] = ColumnFacts(
                name,
                data_type,
                None if binary else collation,
                collatable=collation is not None,
                unlike=self.unlike_types.get(type_name),
            )
        return facts

    #: `DateStyle` sets how dates and timestamps are read from and written as text (psycopg
    #: parses only ISO), `TimeZone` the zone of a `timestamptz` cast to a date or text, and
    #: `standard_conforming_strings = off` reads a backslash in a string literal (a custom
    #: rule's `'C:\tmp'`) as an escape. Pinned on the resource's connection for the check
    #: and restored after it (see `sources/_sql.py`).
    session_settings: ClassVar[dict[str, str]] = {
        "DateStyle": "ISO, MDY",
        "TimeZone": "UTC",
        "standard_conforming_strings": "on",
    }
    #: Every cursor of a connection shares its session.
    cursors_are_sessions = False

    def byte_length(self, value: exp.Expr) -> exp.Expr | None:
        return exp.Anonymous(this="OCTET_LENGTH", expressions=[value])

    def smallest(self, value: exp.Expr, n: int) -> exp.Expr | None:
        return None


class SnowflakeDialect(Dialect):
    """NaN sorts above every number and equals itself, as in polars; strings compare by the
    column's collation, if it has one."""

    name = "snowflake"
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

    def catalog_query(self, table: exp.Table) -> exp.Select:
        """`information_schema.columns` of the table: each column's type and collation."""
        source = exp.Table(
            this=exp.to_identifier("COLUMNS"),
            db=exp.to_identifier("INFORMATION_SCHEMA"),
            catalog=table.args.get("catalog"),
        )
        return _information_schema(source, table)

    def column_facts(self, rows: pl.DataFrame) -> dict[str, ColumnFacts]:
        facts: dict[str, ColumnFacts] = {}
        for name, data_type, collation in rows.rows():
            binary = collation is None or collation.lower() in self.binary_collations
            facts[name] = ColumnFacts(name, data_type, None if binary else collation)
        return facts

    #: Nothing pinned: no check query reads or writes a date or timestamp as text, and the
    #: zone of a `TIMESTAMP_LTZ` is read from the value itself.
    session_settings: ClassVar[dict[str, str]] = {}
    cursors_are_sessions = False

    def count_where(self, condition: exp.Expr) -> exp.Expr:
        return _count_case(condition)  # no FILTER clause

    def byte_length(self, value: exp.Expr) -> exp.Expr | None:
        return exp.Anonymous(this="OCTET_LENGTH", expressions=[value])  # LENGTH counts characters

    def smallest(self, value: exp.Expr, n: int) -> exp.Expr | None:
        return None


class BigQueryDialect(Dialect):
    name = "bigquery"
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

    def catalog_query(self, table: exp.Table) -> exp.Select:
        """The dataset's `INFORMATION_SCHEMA.COLUMNS`: each column's type and collation."""
        source = exp.Table(
            this=exp.to_identifier("INFORMATION_SCHEMA.COLUMNS", quoted=True),
            db=table.args.get("db"),
            catalog=table.args.get("catalog"),
        )
        return _information_schema(source, table, schema=False)

    column_facts = SnowflakeDialect.column_facts

    #: Nothing pinned: BigQuery has no session settings that change a check's query.
    session_settings: ClassVar[dict[str, str]] = {}
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


def _catalog_table(name: str, alias: str) -> exp.Table:
    """A PostgreSQL system catalog, named in `pg_catalog` so no table of the user hides it."""
    return exp.table_(name, db="pg_catalog", alias=alias)


def _current_schema() -> exp.Expr:
    """`CURRENT_SCHEMA()`, which every dialect here reads (sqlglot 26, the oldest supported,
    has no node of its own for it)."""
    return exp.Anonymous(this="CURRENT_SCHEMA", expressions=[])


def _located(table: exp.Table, name: str, schema: str, catalog: str) -> list[exp.Expr]:
    """Conditions on a catalog's `name`, `schema` and `catalog` columns that find `table`
    where its query finds it: an unnamed schema or database is the session's current one."""
    parts: list[tuple[str, exp.Identifier | None, exp.Expr]] = [
        (name, table.this, exp.Null()),
        (schema, table.args.get("db"), _current_schema()),
        (catalog, table.args.get("catalog"), exp.Anonymous(this="current_database")),
    ]
    return [
        exp.EQ(
            this=exp.column(column),
            expression=current if part is None else exp.Literal.string(part.name),
        )
        for column, part, current in parts
    ]


def _information_schema(source: exp.Table, table: exp.Table, *, schema: bool = True) -> exp.Select:
    """`column_name, data_type, collation_name` of `table` from an `information_schema`
    `columns` view (`source`), in the table's column order; `schema`: the view spans
    schemas, so it is narrowed to the table's (else the session's current one)."""
    located = exp.EQ(this=exp.column("table_name"), expression=exp.Literal.string(table.name))
    query = (
        exp.select(exp.column("column_name"), exp.column("data_type"), exp.column("collation_name"))
        .from_(source)
        .where(located)
        .order_by(exp.column("ordinal_position"))
    )
    if schema:
        db = table.args.get("db")
        query = query.where(
            exp.EQ(
                this=exp.column("table_schema"),
                expression=exp.Literal.string(db.name) if db is not None else _current_schema(),
            )
        )
    return query


def _declared_collations(create: str) -> dict[str, str]:
    """Each column's collation as a DuckDB `CREATE TABLE` statement declares it
    (`NOCASE.NOACCENT` for a chain); DuckDB's catalog has no column of its own for it."""
    try:
        statement = sqlglot.parse_one(create, read="duckdb")
    except sqlglot.errors.ParseError:
        return {}
    return {
        definition.name: constraint.args["kind"].this.sql(dialect="duckdb")
        for definition in statement.find_all(exp.ColumnDef)
        for constraint in definition.constraints
        if isinstance(constraint.args.get("kind"), exp.CollateColumnConstraint)
    }


def _count_case(condition: exp.Expr) -> exp.Expr:
    """`COUNT(CASE WHEN condition THEN 1 END)`: `count_where` in every SQL dialect."""
    return exp.Count(this=exp.Case(ifs=[exp.If(this=condition, true=exp.Literal.number(1))]))


def _float(text: str) -> exp.Expr:
    return exp.cast(exp.Literal.string(text), exp.DataType.build("DOUBLE"))


def infinite(value: exp.Expr) -> exp.Expr:
    """`value` is +inf or -inf, in every dialect (NaN is neither)."""
    return exp.In(this=value, expressions=[_float("inf"), _float("-inf")])
