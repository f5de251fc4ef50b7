"""The DuckDB cursors of `DuckDBTableSource`, each a session of its own with the dialect's
settings pinned, and the run's rows of the table as a relation, for streaming and pushdown
alike. The resource's own connection is never changed.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING, Any

import polars as pl

from ._partitions import Partition

if TYPE_CHECKING:  # sqlglot is imported only when the source opens
    from sqlglot import exp

DIALECT = "duckdb"
#: How often a read-only open waits for another process's write lock.
_LOCK_TRIES = 10
#: Settings of the source's own cursors, beside the dialect's pinned session settings: strings
#: handed over as Arrow string views, polars' own layout; no progress bar, which DuckDB draws
#: on the process's stderr (the step's log, the CLI) for any query of more than 2 s.
_CURSOR_SETTINGS = {
    "produce_arrow_string_view": "true",
    "arrow_output_version": "1.4",
    "enable_progress_bar": "false",
}


def relation(
    connection: Any,
    table: exp.Table | str,
    partition: Partition | None,
    partition_expr: exp.Expr | str | None,
) -> exp.Select:
    """`SELECT * FROM table`, filtered to `partition` on `partition_expr` (`_sql_query`'s
    relation, with DuckDB describing the expression's type on a pinned cursor)."""
    from ._sql_query import relation as sql_relation

    return sql_relation(
        lambda sql: _dtypes(connection, sql), table, DIALECT, partition, partition_expr
    )


def _dtypes(connection: Any, sql: str) -> dict[str, pl.DataType]:
    """The polars dtype of each column `sql` returns, from DuckDB's Arrow result."""
    cursor = own_cursor(connection)
    try:
        arrow = cursor.sql(sql).to_arrow_table()
    finally:
        cursor.close()
    return dict(pl.DataFrame(pl.from_arrow(arrow)).schema)


@contextmanager
def read_only(resource: Any) -> Iterator[Any]:
    """A read-only connection to the database file of `resource` (a `DuckDBResource`: its
    `database` and `connection_config`), open inside the context; the resource's own
    connection where it names no file, or where this process holds the file open
    read-write already (DuckDB opens one file with one configuration per process)."""
    import duckdb

    file = _file_of(resource)
    if file is None:
        with resource.get_connection() as connection:
            yield connection
        return
    try:
        connection = _connect(duckdb, *file)
    except duckdb.ConnectionException:  # open read-write in this process
        with resource.get_connection() as connection:
            yield connection
        return
    try:
        yield connection
    finally:
        connection.close()


@contextmanager
def held_read_only(resource: Any) -> Iterator[None]:
    """The database file of `resource` held open read-only while the context is open, so
    that each `read_only` connection inside it joins the open database (DuckDB keeps one
    instance per file and configuration in a process) instead of opening the file and
    reading its catalog again: 13 ms a table, for a file of a hundred tables.

    A file that cannot be opened at once (missing, locked, open read-write here) is not
    held: each read then opens it and fails, or waits for the lock, as its own."""
    import duckdb

    file = _file_of(resource)
    try:
        connection = None if file is None else _connect(duckdb, *file, tries=1)
    except duckdb.Error:
        connection = None
    try:
        yield
    finally:
        if connection is not None:
            connection.close()


def _file_of(resource: Any) -> tuple[str, dict[str, Any]] | None:
    """The database file `resource` names, and its configuration for a read-only open
    (without `access_mode`); None for an in-memory database."""
    database = getattr(resource, "database", None)
    if not isinstance(database, str) or not database or database.startswith(":memory:"):
        return None
    config = dict(getattr(resource, "connection_config", None) or {})
    config.pop("access_mode", None)
    return database, config


def _connect(duckdb: Any, database: str, config: dict[str, Any], tries: int = _LOCK_TRIES) -> Any:
    """`database` opened read-only, waiting for a writer in another process to let go of
    its lock as `DuckDBResource` waits (10 tries, doubling from 0.1 s)."""
    delay = 0.1
    for _ in range(tries - 1):
        try:
            return duckdb.connect(database, read_only=True, config=config)
        except duckdb.IOException as error:
            if "lock" not in str(error).lower():
                raise
            time.sleep(delay)
            delay *= 2
    return duckdb.connect(database, read_only=True, config=config)


def own_cursor(connection: Any) -> Any:
    """A cursor of `connection` (a DuckDB session of its own) with the dialect's session
    settings pinned (`TimeZone`: the zone a `TIMESTAMPTZ` reaches polars in) and strings
    exported as Arrow string views; the resource's connection keeps its own settings."""
    cursor = connection.cursor()
    for statement in _pinning():
        cursor.execute(statement)
    return cursor


@cache
def _pinning() -> list[str]:
    """The statements that pin a cursor's settings, rendered once per process."""
    from .._engine.sql.dialects import DIALECTS

    dialect = DIALECTS[DIALECT]
    settings = {**dialect.session_settings, **_CURSOR_SETTINGS}
    return [statement.sql(dialect=DIALECT) for statement in dialect.set_session(settings)]
