"""A database table's columns: dtypes as the package's sources read them, `NOT NULL` and the
primary key from the standard `information_schema`, the declared types from the catalog the
pushdown reads (`_engine.sql.catalog`).

DuckDB is read as `DuckDBTableSource` reads it (Arrow, on a cursor with the dialect's session
pinned), any other database as `SQLTableSource` reads it (its cursor's description), so a
schema inferred here passes the column-schema check of the source that checks the table.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

import dagster as dg
import polars as pl
import sqlglot
from sqlglot import exp

from .._engine.sql import catalog
from .._engine.sql.catalog import read_facts
from .._engine.sql.columns import TableFacts
from .._engine.sql.dialects import DIALECTS, described
from .._writing.literals import literal
from ..errors import (
    DagsterDataframelyError,
    InvalidSourceError,
    SourceConnectionError,
    TableNotFoundError,
)
from ..sources._duckdb_cursors import _dtypes as duckdb_dtypes
from ..sources._duckdb_cursors import own_cursor
from ..sources._names import dialect_name, parse_table
from ..sources._sql import SQLTableSource, _Database
from ._columns import InferredColumn

#: Type names of text that a DB-API driver hands over as `str` (PostgreSQL's `bpchar` too).
_TEXT = exp.DataType.TEXT_TYPES | {exp.DataType.Type.BPCHAR}


@dataclass(frozen=True)
class Database:
    """One connection, queried as the package's source for its dialect queries it."""

    dialect: str
    run: Callable[[str], pl.DataFrame]
    dtypes: Callable[[str], dict[str, pl.DataType]]

    @property
    def reads_arrow(self) -> bool:
        """DuckDB hands over Arrow, whose dtypes are the values' own; a DB-API driver's
        description says a type name, read as text where this package knows no other."""
        return self.dialect == "duckdb"


@contextmanager
def database(connection: Any, dialect: str | None) -> Iterator[Database]:
    """`connection` (a DuckDB or DB-API connection, or a resource that gives one) as a
    `Database`; `dialect` None means DuckDB's connection, recognized by its module."""
    from ..sources._sql import connection_of

    stack = ExitStack()
    try:
        opened = stack.enter_context(connection_of(connection, "connection"))
    except DagsterDataframelyError:
        raise
    except Exception as error:  # the driver's: a refused login, an unknown host
        reason = " ".join(str(error).split())[:300]
        raise SourceConnectionError(
            f"Cannot connect through {type(connection).__name__}: {reason}. Check the "
            "resource's (or connection's) account, credentials and network access."
        ) from error
    with stack:
        name = dialect or (
            "duckdb" if type(opened).__module__.lstrip("_").startswith("duckdb") else None
        )
        if name is None:
            raise InvalidSourceError(
                f"Cannot tell the SQL dialect of connection {type(opened).__name__}: pass "
                "dialect= (--dialect on the command line; sqlglot's name: 'postgres', "
                "'snowflake', 'bigquery', ...)."
            )
        if name == "duckdb":
            yield Database(name, _duckdb_run(opened), lambda sql: duckdb_dtypes(opened, sql))
            return
        source = SQLTableSource(resource_key="connection", dialect=name)
        found = _Database(opened, source, dg.AssetKey("inferred"), lambda _: None)
        with found.pinned():
            yield Database(name, found.run, found.dtypes)


def read_columns(db: Database, name: str) -> tuple[exp.Table, list[InferredColumn], TableFacts]:
    """The columns of table `name`, in order, and the catalog's facts of them."""
    table = parse_table(name, db.dialect, where="table")
    rows = exp.select(exp.Star()).from_(table)
    try:
        dtypes = _readable_dtypes(db, rows)
    except Exception as error:
        raise _not_found(db, table, error) from error
    facts = read_facts(rows, DIALECTS[db.dialect], db.run) if db.dialect in DIALECTS else None
    declared, nullable, keys = _constraints(db, table)
    enums = _enum_labels(db, table)
    columns = []
    for column, dtype in dtypes.items():
        known = facts.columns.get(column) if facts is not None else None
        text = known.data_type if known is not None else declared.get(column, "unknown")
        labels = enums.get(column) if dtype == pl.String() else None
        why = unreadable(dtype, text, None if db.reads_arrow else db.dialect)
        columns.append(
            InferredColumn(
                name=column,
                dtype=dtype,
                declared=text,
                nullable=nullable.get(column, True),
                primary_key=column in keys,
                unreadable=None if labels else why,
                checks={"enum": f"lambda col: col.is_in({literal(labels).text})"} if labels else {},
            )
        )
    return table, columns, facts or TableFacts(read=False)


def _enum_labels(db: Database, table: exp.Table) -> dict[str, list[str]]:
    """The values of each enum-typed column the database declares (none where the dialect
    lists none, or its catalog cannot be read): a declaration, as `NOT NULL` is."""
    query = DIALECTS[db.dialect].enum_labels(table) if db.dialect in DIALECTS else None
    if query is None:
        return {}
    try:
        rows = db.run(query.sql(dialect=db.dialect)).rows()
    except Exception:  # a role that cannot read the catalog: the column stays undeclared
        return {}
    labels: dict[str, list[str]] = {}
    for column, label in rows:
        labels.setdefault(str(column), []).append(str(label))
    return labels


def _readable_dtypes(db: Database, rows: exp.Select) -> dict[str, pl.DataType | None]:
    """Each column's dtype; where the whole table cannot be read (a type polars refuses,
    such as DuckDB's `INTERVAL` or `UNION`), column by column, None for those it refuses."""
    sql = rows.limit(0).sql(dialect=db.dialect)
    try:
        return dict(db.dtypes(sql))
    except BaseException as error:  # polars panics (not an Exception) on some Arrow types
        if isinstance(error, (KeyboardInterrupt, SystemExit)):
            raise
        names = _names(db, rows, error)
    found: dict[str, pl.DataType | None] = {}
    for column in names:
        one = exp.select(exp.column(column, quoted=True)).from_(rows.subquery("t")).limit(0)
        try:
            found[column] = db.dtypes(one.sql(dialect=db.dialect))[column]
        except BaseException as error:
            if isinstance(error, (KeyboardInterrupt, SystemExit)):
                raise
            found[column] = None
    return found


def _names(db: Database, rows: exp.Select, error: BaseException) -> list[str]:
    """The column names of `rows`, read without their values' types (DuckDB's `DESCRIBE`)."""
    if db.dialect != "duckdb":
        raise error
    described = db.run(exp.Describe(this=rows.copy()).sql(dialect=db.dialect))
    return [str(name) for name in described["column_name"]]


def unreadable(dtype: pl.DataType | None, declared: str, described: str | None) -> str | None:
    """Why a column has no Dataframely type, None where it has one. `described`: the dialect
    whose type names were mapped to dtypes (`polars_dtype`), which reads a name it does not
    know as text; None for dtypes read from Arrow, which are the values' own."""
    if dtype is None:
        return "polars cannot read it"
    if described is None or dtype != pl.String() or is_text(declared, described):
        return None
    return "the source reads a type it does not know as text, which its values may not be"


def is_text(declared: str, dialect: str) -> bool:
    """Whether `declared` is a text type of `dialect` (not one read as text: an enum type)."""
    try:
        kind = exp.DataType.build(declared, dialect=dialect)
    except (sqlglot.errors.ParseError, ValueError):
        return False
    return kind.is_type(*_TEXT)


def _constraints(
    db: Database, table: exp.Table
) -> tuple[dict[str, str], dict[str, bool], set[str]]:
    """Each column's declared type and nullability from the standard `information_schema`,
    and the primary key's columns from the first of the dialect's key queries that runs
    (none runs: no key)."""
    located = catalog.located(table)
    columns = exp.select("column_name", "is_nullable", "data_type").from_(
        described(db.dialect).info_schema("columns", table)
    )
    rows = db.run(columns.where(*located).sql(dialect=db.dialect))
    declared = {str(r[0]): str(r[2]) for r in rows.rows()}
    nullable = {str(r[0]): str(r[1]).upper() != "NO" for r in rows.rows()}
    for query in described(db.dialect).primary_key_queries(table):
        try:
            keys = db.run(query.sql(dialect=db.dialect))
        except Exception:  # a view the database does not have: the next query
            continue
        named = next((c for c in keys.columns if c.lower() == "column_name"), None)
        return declared, nullable, set() if named is None else {str(v) for v in keys[named]}
    return declared, nullable, set()


def _not_found(db: Database, table: exp.Table, error: Exception) -> TableNotFoundError:
    """The error of a table the database cannot read, with the closest names it has."""
    query = exp.select("table_name").from_(described(db.dialect).info_schema("tables", table))
    try:
        names = [
            str(r[0]) for r in db.run(query.where(catalog.located(table)[1]).sql(db.dialect)).rows()
        ]
    except Exception:
        names = []
    close = difflib.get_close_matches(table.name, names, n=3)
    hint = f" Did you mean {', '.join(close)}?" if close else ""
    reason = " ".join(str(error).split())[:300]
    return TableNotFoundError(
        f"Cannot infer a schema for {dialect_name(db.dialect)} table "
        f"{table.sql(dialect=db.dialect)}: the database cannot read it ({reason}).{hint} "
        "Name an existing table as 'schema.table' (or 'table' in the current schema)."
    )


def _duckdb_run(connection: Any) -> Callable[[str], pl.DataFrame]:
    def run(sql: str) -> pl.DataFrame:
        cursor = own_cursor(connection)
        try:
            return pl.DataFrame(pl.from_arrow(cursor.sql(sql).to_arrow_table()))
        finally:
            cursor.close()

    return run
