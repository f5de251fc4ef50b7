"""The pushdown path of `DuckDBTableSource`: the run's rows of the table as a SQL relation,
evaluated in DuckDB by the engine's SQL backend; the same rows, streamed, for every rule that
falls back to polars (and for the column-schema check, which reads only their dtypes).

The partition is selected as Dagster's DuckDB IO manager selects it, `start <= expr < end`
(or `expr IN (keys)`), with a naive `TIMESTAMP` (or `DATE`) column compared as wall-clock
time in the partition's time zone and a `TIMESTAMPTZ` column as the instant.
sqlglot is imported here, so only when a pushdown runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

import polars as pl
from sqlglot import exp

from .._engine.sql.backend import SQLTable
from .._engine.sql.catalog import read_facts
from .._engine.sql.dialects import DIALECTS
from .._engine.sql.staging import Session, dropping
from ._base import logged
from ._duckdb_cursors import DIALECT, own_cursor, relation

__all__ = ["pushdown", "relation"]


def pushdown(
    connection: Any,
    select: exp.Select,
    log: Callable[[str], None],
    *,
    resource_key: str,
    failed: Callable[[Exception, str], Exception] | None = None,
    evaluates: bool = True,
) -> SQLTable:
    """The rows of `select`, evaluated by queries on a cursor of `connection` (the session
    pinned, see `own_cursor`), each logged, after one catalog query for the facts of its
    table's columns (not read unless it `evaluates` the rules: rows are only kept there);
    `failed` names a query's failure (a rule DuckDB cannot evaluate, a table it cannot read).
    Tables read through one resource are in one database: a filter may join them. A session
    is one cursor (DuckDB's temporary tables belong to the cursor that made them)."""

    def on(cursor: Any, sql: str) -> pl.DataFrame:
        log(f"Pushed down to DuckDB: {logged(sql)}")
        try:
            return pl.DataFrame(pl.from_arrow(cursor.sql(sql).to_arrow_table()))
        except Exception as error:
            if failed is None:
                raise
            raise failed(error, sql) from error

    @cache
    def queries() -> Any:
        """The one pinned cursor of every `run` query, opened on the first: a cursor and its
        pinning per query cost more than a sample query. It closes with `connection`."""
        return own_cursor(connection)

    def run(sql: str) -> pl.DataFrame:
        return on(queries(), sql)

    @contextmanager
    def session() -> Iterator[Session]:
        cursor = own_cursor(connection)

        def execute(sql: str) -> None:
            log(f"Pushed down to DuckDB: {logged(sql)}")
            try:
                cursor.execute(sql)
            except Exception as error:
                if failed is None:
                    raise
                raise failed(error, sql) from error

        try:
            opened = Session(DIALECTS[DIALECT], lambda sql: on(cursor, sql), execute, log)
            with dropping(opened) as staging:
                yield staging
        finally:
            cursor.close()

    return SQLTable.of(
        select,
        dialect=DIALECT,
        run=run,
        database=("DuckDBTableSource", resource_key),
        session=session,
        log=log,
        facts=read_facts(select, DIALECTS[DIALECT], run, log) if evaluates else None,
    )
