"""Benchmark: the cost of reading a table's column facts (types, collations) before pushdown.

    .venv/bin/python benchmarks/catalog_facts.py [--repeat 20] [--tables 1,200] [--columns 5,100]

A pushdown reads what the database says of the checked table's columns in one catalog query
per table per run (`_engine/sql/catalog.py`). This prints its wall-clock time in ms (median
of `--repeat` runs, after one warm-up), for DuckDB (an in-memory database) and a throwaway
PostgreSQL server (`tests/postgres.py`), for a checked table of `--columns` columns in a
catalog of `--tables` tables, beside a `SELECT 1` round trip on the same connection (the
floor of any query) and the ratio of the two.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def median_ms(action: Callable[[], object], repeat: int) -> float:
    action()  # warm-up: the first query plans and caches
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def columns_sql(columns: int, text: str, collate: str) -> str:
    parts = [f"c{i} {text} {collate}" if i % 2 else f"c{i} bigint" for i in range(columns)]
    return ", ".join(parts)


def facts_cost(
    dialect_name: str, run: Callable[[str], pl.DataFrame], repeat: int
) -> tuple[float, float]:
    from dagster_dataframely._engine.sql.catalog import read_facts
    from dagster_dataframely._engine.sql.dialects import DIALECTS
    from dagster_dataframely.sources._sql_query import relation

    dialect = DIALECTS[dialect_name]
    select = relation(lambda _: {}, "checked", dialect_name, None, None)
    facts = read_facts(select, dialect, run)
    assert facts.read and facts.columns, "the catalog query found no columns"
    return (
        median_ms(lambda: read_facts(select, dialect, run), repeat),
        median_ms(lambda: run("SELECT 1"), repeat),
    )


def duckdb_figures(tables: int, columns: int, repeat: int) -> tuple[float, float]:
    import duckdb

    connection = duckdb.connect()
    for index in range(tables - 1):
        connection.execute(f"CREATE TABLE other_{index} ({columns_sql(columns, 'VARCHAR', '')})")
    collated = columns_sql(columns, "VARCHAR", "COLLATE NOCASE")
    connection.execute(f"CREATE TABLE checked ({collated})")

    def run(sql: str) -> pl.DataFrame:
        cursor = connection.cursor()
        try:
            return pl.DataFrame(pl.from_arrow(cursor.sql(sql).to_arrow_table()))
        finally:
            cursor.close()

    return facts_cost("duckdb", run, repeat)


def postgres_figures(conninfo: str, tables: int, columns: int, repeat: int) -> tuple[float, float]:
    import psycopg

    with psycopg.connect(conninfo, autocommit=True) as connection:
        connection.execute("DROP SCHEMA IF EXISTS bench CASCADE")
        connection.execute("CREATE SCHEMA bench")
        connection.execute("SET search_path = bench")
        for index in range(tables - 1):
            connection.execute(f"CREATE TABLE other_{index} ({columns_sql(columns, 'text', '')})")
        collated = columns_sql(columns, "text", 'COLLATE "C"')
        connection.execute(f"CREATE TABLE checked ({collated})")

        def run(sql: str) -> pl.DataFrame:
            with connection.cursor() as cursor:
                cursor.execute(sql)
                names = [column[0] for column in cursor.description]
                return pl.DataFrame(cursor.fetchall(), schema=names, orient="row")

        return facts_cost("postgres", run, repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--tables", default="1,200")
    parser.add_argument("--columns", default="5,100")
    args = parser.parse_args()
    shapes = [
        (int(tables), int(columns))
        for tables in args.tables.split(",")
        for columns in args.columns.split(",")
    ]
    header = ("database", "tables", "columns", "facts ms", "SELECT 1 ms", "ratio")
    print("{:<11}{:>7}{:>8}{:>10}{:>13}{:>7}".format(*header))

    def show(database: str, tables: int, columns: int, figures: tuple[float, float]) -> None:
        facts, floor = figures
        print(
            f"{database:<11}{tables:>7}{columns:>8}{facts:>10.2f}{floor:>13.2f}"
            f"{facts / floor:>6.1f}x"
        )

    for tables, columns in shapes:
        show("duckdb", tables, columns, duckdb_figures(tables, columns, args.repeat))

    from postgres import running_server

    with running_server() as server:
        for tables, columns in shapes:
            figures = postgres_figures(server.conninfo, tables, columns, args.repeat)
            show("postgres", tables, columns, figures)


if __name__ == "__main__":
    main()
