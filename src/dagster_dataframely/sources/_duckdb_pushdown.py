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
from typing import Any

import polars as pl
from sqlglot import exp

from .._engine.sql.backend import SQLTable
from .._engine.sql.catalog import read_facts
from .._engine.sql.dialects import DIALECTS
from .._engine.sql.staging import Session, dropping
from ._base import logged
from ._partitions import Partition
from ._sql_query import relation as sql_relation

DIALECT = "duckdb"


def relation(
    connection: Any, table: str, partition: Partition | None, partition_expr: str | None
) -> exp.Select:
    """`SELECT * FROM <table>`, filtered to `partition` on `partition_expr` (`_sql_query`'s
    relation, with DuckDB describing the expression's type)."""
    return sql_relation(
        lambda sql: _dtypes(connection, sql), table, DIALECT, partition, partition_expr
    )


def _dtypes(connection: Any, sql: str) -> dict[str, pl.DataType]:
    """The polars dtype of each column `sql` returns, from DuckDB's Arrow result."""
    cursor = connection.cursor()
    try:
        arrow = cursor.sql(sql).to_arrow_table()
    finally:
        cursor.close()
    return dict(pl.DataFrame(pl.from_arrow(arrow)).schema)


def pushdown(
    connection: Any, select: exp.Select, log: Callable[[str], None], *, resource_key: str
) -> SQLTable:
    """The rows of `select`, evaluated by queries on cursors of `connection`, each logged,
    after one catalog query for the facts of its table's columns.
    Tables read through one resource are in one database: a filter may join them. A session
    is one cursor (DuckDB's temporary tables belong to the cursor that made them)."""

    def on(cursor: Any, sql: str) -> pl.DataFrame:
        log(f"Pushed down to DuckDB: {logged(sql)}")
        return pl.DataFrame(pl.from_arrow(cursor.sql(sql).to_arrow_table()))

    def run(sql: str) -> pl.DataFrame:
        cursor = connection.cursor()
        try:
            return on(cursor, sql)
        finally:
            cursor.close()

    @contextmanager
    def session() -> Iterator[Session]:
        cursor = connection.cursor()

        def execute(sql: str) -> None:
            log(f"Pushed down to DuckDB: {logged(sql)}")
            cursor.execute(sql)

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
        facts=read_facts(select, DIALECTS[DIALECT], run, log),
    )
