"""The column facts of a checked table, read from the database's catalog in one query.

A source reads them once per table per run, before any rule is compiled (`SQLTable.facts`).
The query and the reading of its rows are the dialect's (`Dialect.catalog_query`,
`Dialect.column_facts`), built from the helpers here, one pair per kind of catalog. A
catalog that cannot be read (a role without access to it, a database that lacks it) leaves
the facts unread, so every rule over a text column falls back to polars rather than risk a
count under an unknown collation.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Protocol

import polars as pl
import sqlglot
from sqlglot import exp

from .columns import ColumnFacts, TableFacts

#: The column of a catalog query's rows that holds the table's rows as the catalog counts
#: them, where it has that count (`TableFacts.rows`).
ESTIMATED_ROWS = "estimated_rows"


class Catalog(Protocol):
    """What `read_facts` needs of a `Dialect` (which imports this module's helpers)."""

    @property
    def name(self) -> str: ...

    def catalog_query(self, table: exp.Table) -> exp.Expr: ...

    def column_facts(self, rows: pl.DataFrame) -> dict[str, ColumnFacts]: ...


def read_facts(
    relation: exp.Select,
    dialect: Catalog,
    run: Callable[[str], pl.DataFrame],
    log: Callable[[str], None] = lambda _: None,
) -> TableFacts:
    """The facts of the columns of the table `relation` selects from, by `run`ning the
    dialect's catalog query."""
    clause = relation.find(exp.From)
    source = None if clause is None else clause.this
    if not isinstance(source, exp.Table):
        return TableFacts(read=False)
    query = dialect.catalog_query(source).sql(dialect=dialect.name)
    try:
        rows = run(query)
    except Exception as error:  # any failure leaves the facts unknown
        log(
            f"Could not read the column types and collations of {source.sql(dialect.name)} "
            f"({type(error).__name__}: {error}); rules over its text columns run in polars."
        )
        return TableFacts(read=False)
    facts = dialect.column_facts(rows)
    if not facts:
        return TableFacts(read=False)
    estimated = rows.get_column(ESTIMATED_ROWS)[0] if ESTIMATED_ROWS in rows.columns else None
    return TableFacts(facts, rows=None if estimated is None else int(estimated))


def duckdb_catalog(table: exp.Table) -> exp.Select:
    """DuckDB: the names, types and positions of `table`'s columns (`pragma_table_info`,
    which finds the table as the query does), the table's `CREATE` statement (its columns'
    collations; none for a view), its rows as its storage counts them (none for a view) and
    the connection's `default_collation`. The rows are put
    in column order by `duckdb_facts`: an `ORDER BY` here cost DuckDB more than the query."""
    info = exp.Table(
        this=exp.Anonymous(
            this="pragma_table_info", expressions=[exp.Literal.string(table.sql(dialect="duckdb"))]
        ),
        alias=exp.TableAlias(this=exp.to_identifier("c")),
    )
    created = (
        exp.select(exp.column("sql"), exp.column("estimated_size"))
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
            exp.column("cid", "c"),
            exp.alias_(exp.column("estimated_size", "t"), ESTIMATED_ROWS),
        )
        .from_(info)
        .join(created.subquery("t"), on=exp.true(), join_type="left")
    )


def duckdb_facts(rows: pl.DataFrame, binary_collation: str | None) -> dict[str, ColumnFacts]:
    """The facts of `duckdb_catalog`'s rows: a `VARCHAR`'s collation is the one its `CREATE`
    statement declares, else the connection's `default_collation` (a view's columns: always,
    as their collation is not declared)."""
    facts: dict[str, ColumnFacts] = {}
    listed = sorted(rows.rows(), key=lambda row: row[4])  # in column order
    create = next((row[2] for row in listed if row[2]), None)  # the table's, on every row
    declared = _declared_collations(create) if create else {}
    for name, data_type, create, default, *_ in listed:
        text = data_type == "VARCHAR"
        collation = declared.get(name) or default or (None if create else "undeclared")
        binary = collation is None or collation.lower() == binary_collation
        facts[name] = ColumnFacts(
            name, data_type, None if binary or not text else collation, collatable=text
        )
    return facts


def postgres_catalog(table: exp.Table) -> exp.Select:
    """PostgreSQL: `pg_attribute` of the relation the name resolves to (as the query will
    resolve it, through `regclass`), with each column's type and collation."""
    relation = _regclass(table)
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
        .from_(_pg_catalog("pg_attribute", "a"))
        .join(
            _pg_catalog("pg_type", "t"),
            on=exp.EQ(this=column("oid", "t"), expression=column("atttypid", "a")),
        )
        .join(
            _pg_catalog("pg_collation", "k"),
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


def postgres_enum_labels(table: exp.Table) -> exp.Select:
    """PostgreSQL: `column, label` of each enum-typed column of `table`, in the column's
    order and its type's label order (`pg_enum`)."""
    column = exp.column
    return (
        exp.select(column("attname", "a"), column("enumlabel", "e"))
        .from_(_pg_catalog("pg_attribute", "a"))
        .join(
            _pg_catalog("pg_enum", "e"),
            on=exp.EQ(this=column("enumtypid", "e"), expression=column("atttypid", "a")),
        )
        .where(
            exp.EQ(this=column("attrelid", "a"), expression=_regclass(table)),
            exp.GT(this=column("attnum", "a"), expression=exp.Literal.number(0)),
            exp.not_(column("attisdropped", "a")),
        )
        .order_by(column("attnum", "a"), column("enumsortorder", "e"))
    )


def _regclass(table: exp.Table) -> exp.Expr:
    """The relation `table` names, resolved as a query resolves it."""
    return exp.cast(
        exp.Literal.string(table.sql(dialect="postgres")),
        exp.DataType.build("REGCLASS", dialect="postgres"),
    )


def postgres_facts(
    rows: pl.DataFrame, binary_collations: Collection[str], unlike_types: Mapping[str, str]
) -> dict[str, ColumnFacts]:
    """The facts of `postgres_catalog`'s rows: a column compares by bytes under one of
    `binary_collations` (or none: not text); any other collation (the database's default,
    libc, ICU, nondeterministic) is overridden; a type in `unlike_types` compares otherwise
    whatever its collation."""
    facts: dict[str, ColumnFacts] = {}
    for name, data_type, type_name, collation, _deterministic in rows.rows():
        binary = collation is None or collation in binary_collations
        facts[name] = ColumnFacts(
            name,
            data_type,
            None if binary else collation,
            collatable=collation is not None,
            unlike=unlike_types.get(type_name),
        )
    return facts


def information_schema(
    source: exp.Table, table: exp.Table, *, schema: bool, collation: bool = True
) -> exp.Select:
    """`column_name, data_type, collation_name` of `table` from an `information_schema`
    `columns` view (`source`), in the table's column order; `schema`: the view spans
    schemas, so it is narrowed to the table's (else the session's current one);
    `collation`: the view has a `collation_name` (else it is NULL: no collations)."""
    named, in_schema = located(table)
    collated = (
        exp.column("collation_name")
        if collation
        else exp.alias_(exp.cast(exp.Null(), exp.DataType.build("VARCHAR")), "collation_name")
    )
    query = (
        exp.select(exp.column("column_name"), exp.column("data_type"), collated)
        .from_(source)
        .where(named)
        .order_by(exp.column("ordinal_position"))
    )
    return query.where(in_schema) if schema else query


def located(table: exp.Table) -> tuple[exp.Expr, exp.Expr]:
    """The conditions on an `information_schema` view's `table_name` and `table_schema` that
    find `table` (an unnamed schema is the session's current one)."""
    db = table.args.get("db")
    return (
        exp.EQ(this=exp.column("table_name"), expression=exp.Literal.string(table.name)),
        exp.EQ(
            this=exp.column("table_schema"),
            expression=exp.Literal.string(db.name) if db is not None else _current_schema(),
        ),
    )


def information_schema_key(
    table: exp.Table, usage: exp.Table, constraints: exp.Table
) -> exp.Select:
    """`column_name` of each column of `table`'s primary key, from the standard
    `key_column_usage` (`usage`, aliased `k`) and `table_constraints` (`c`) views."""
    conditions = [condition.copy() for condition in located(table)]
    for condition in conditions:
        for column in condition.find_all(exp.Column):
            column.set("table", exp.to_identifier("k"))
    return (
        exp.select(exp.column("column_name", "k"))
        .from_(usage)
        .join(
            constraints,
            on=exp.and_(
                *(
                    exp.column(part, "k").eq(exp.column(part, "c"))
                    for part in ("constraint_name", "table_schema", "table_name")
                )
            ),
        )
        .where(
            exp.column("constraint_type", "c").eq(exp.Literal.string("PRIMARY KEY")), *conditions
        )
    )


def information_schema_facts(
    rows: pl.DataFrame,
    binary_collations: Collection[str],
    unlike: Callable[[str], str | None] = lambda _: None,
) -> dict[str, ColumnFacts]:
    """The facts of `information_schema`'s rows: a collation named in `binary_collations`
    (lower case) means byte order; `unlike` says why a column of a data type compares
    otherwise than polars whatever its collation (None: it does not)."""
    facts: dict[str, ColumnFacts] = {}
    for name, data_type, collation in rows.rows():
        binary = collation is None or collation.lower() in binary_collations
        facts[name] = ColumnFacts(
            name, data_type, None if binary else collation, unlike=unlike(data_type)
        )
    return facts


def type_base(data_type: str) -> str:
    """A catalog's type name without its parameters, in lower case (`char(3)` is `char`)."""
    return data_type.split("(")[0].strip().lower()


def spark_facts(rows: pl.DataFrame, binary_collations: Collection[str]) -> dict[str, ColumnFacts]:
    """The facts of Spark's `DESCRIBE` rows (`col_name`, `data_type`, `comment`): a string
    type names its collation (`string collate UTF8_LCASE`); none, or one of
    `binary_collations`, compares bytes."""
    facts: dict[str, ColumnFacts] = {}
    for name, data_type, *_ in rows.rows():
        kind, _, collation = data_type.partition(" collate ")
        text = kind.lower() == "string"
        binary = not collation or collation in binary_collations
        facts[name] = ColumnFacts(name, data_type, None if binary else collation, collatable=text)
    return facts


def _pg_catalog(name: str, alias: str) -> exp.Table:
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


def _declared_collations(create: str) -> dict[str, str]:
    """Each column's collation as a DuckDB `CREATE TABLE` statement declares it
    (`NOCASE.NOACCENT` for a chain); DuckDB's catalog has no column of its own for it.
    A statement without the word declares none: it is not parsed."""
    if "collate" not in create.lower():
        return {}
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
