"""Benchmark: the pushed-down check against its floor, a hand-written single aggregate query.

    .venv/bin/python benchmarks/pushdown_floor.py [--duckdb-rows 2_000_000]
        [--postgres-rows 1_000_000] [--repeat 3] [--primary-key no yes]
        [--databases duckdb postgres] [--regex PATTERN]
        [--methods floor streaming pushdown base] [--baseline ../main/src]

Builds issue 29's table (5 columns, 9 rules, about 1% of rows failing each rule; with
`--primary-key yes`, `id` is the schema's primary key, a 10th rule, with about 1% of rows in
repeated keys) in a DuckDB file and in a throwaway PostgreSQL server (`tests/postgres.py`),
then measures, each run in a fresh process after the imports, round-robin:

- floor: one hand-written aggregate query counting every rule's failing rows (with the key,
  a subquery counting the rows of repeated keys), fetched as one row;
- streaming: the table streamed into polars (`pushdown=False`), every rule evaluated there;
- pushdown: the evaluation a check runs with pushdown: the source's relation, its scan and
  `SQLTable`, then `evaluate_schema`, as the sidecar calls it (failure samples included);
- base (with `--baseline SRC`): pushdown, measured on another tree's package (`SRC`, its
  `src` folder), in the same round robin: a before/after ratio under the same load.

Dagster's own cost of a check run is left out: no `dg.materialize`, only the package's
evaluation. `cost s` is the check process's CPU plus the server's (PostgreSQL's backends and
workers; DuckDB runs in the process), the figure the ratios compare.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _measure import (
    COST_HEADER,
    baseline_env,
    child_figures,
    closing,
    cost_row,
    dispatch,
    interleaved,
    measured,
    opening,
    postmaster,
    server_cpu,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

METHODS = ("floor", "streaming", "pushdown", "base")
#: The issue's pattern; PostgreSQL reads it as polars does.
REGEX = r"^[a-z0-9.]+@[a-z]+\.[a-z]+$"
TABLE = "orders"


def schema(primary_key: bool, regex: str) -> type:
    import dataframely as dy

    class Orders(dy.Schema):  # 9 rules, a 10th with the primary key
        id = dy.Int64(primary_key=primary_key, nullable=False)  # nullability
        email = dy.String(nullable=True, regex=regex)  # regex
        country = dy.String(nullable=True, min_length=2, max_length=2)  # 2 lengths
        amount = dy.Float64(nullable=True, min=0)  # min, inf, nan
        quantity = dy.Int32(nullable=True, min=1, max=6)  # min, max

    return Orders


def _columns(i: str, countries: str) -> str:
    """The table's columns over the row number `i`: row `i % 100 == k` fails rule `k`; with
    the key, rows `i % 200 == 1` repeat the next row's `id`."""
    return f"""
        CASE WHEN {i} % 100 = 0 THEN NULL WHEN {i} % 200 = 1 THEN {i} + 1 ELSE {i} END AS id,
        CASE WHEN {i} % 100 = 2 THEN 'User' || {i} || '@x.com'
             ELSE 'user' || ({i} % 100000) || '@example.com' END AS email,
        CASE {i} % 100 WHEN 3 THEN 'D' WHEN 4 THEN 'DEU' ELSE {countries} END AS country,
        CASE {i} % 100 WHEN 5 THEN -1.0 WHEN 6 THEN CAST('NaN' AS DOUBLE PRECISION)
             WHEN 7 THEN CAST('Infinity' AS DOUBLE PRECISION)
             ELSE CAST({i} % 10000 AS DOUBLE PRECISION) END AS amount,
        CAST(CASE {i} % 100 WHEN 8 THEN 0 WHEN 9 THEN 7 ELSE {i} % 6 + 1 END AS INTEGER)
            AS quantity
    """


def floor_sql(dialect: str, primary_key: bool, regex: str) -> str:
    """The hand-written aggregate: what a user would write to count each rule's failures."""
    pattern = regex.replace("'", "''")
    matches = (
        f"regexp_full_match(email, '{pattern}')" if dialect == "duckdb" else f"email ~ '{pattern}'"
    )
    nan = "'NaN'::DOUBLE" if dialect == "duckdb" else "'NaN'::double precision"
    inf = "isinf(amount)" if dialect == "duckdb" else "amount IN ('Infinity', '-Infinity')"
    failing = [
        "id IS NULL",
        f"NOT {matches}",
        "length(country) < 2",
        "length(country) > 2",
        "amount < 0",
        inf,
        f"amount = {nan}" if dialect == "postgres" else "isnan(amount)",
        "quantity < 1",
        "quantity > 6",
    ]
    counts = [f"count(*) FILTER (WHERE {condition})" for condition in failing]
    if primary_key:
        counts.append(
            "(SELECT coalesce(sum(n), 0) FROM (SELECT id, count(*) AS n FROM orders "
            "GROUP BY id HAVING count(*) > 1) AS repeated)"
        )
    return f"SELECT count(*), {', '.join(counts)} FROM {TABLE}"


def generate_duckdb(path: Path, rows: int) -> None:
    import duckdb

    with duckdb.connect(str(path)) as connection:
        columns = _columns("i", "['DE', 'FR', 'US', 'NL'][(i % 4) + 1]")
        connection.execute(f"CREATE TABLE {TABLE} AS SELECT {columns} FROM range({rows}) t(i)")


def generate_postgres(conninfo: str, rows: int) -> None:
    import psycopg

    with psycopg.connect(conninfo, autocommit=True) as connection:
        columns = _columns("i", "(ARRAY['DE', 'FR', 'US', 'NL'])[(i % 4) + 1]")
        connection.execute(
            f"CREATE TABLE {TABLE} AS SELECT {columns} "
            f"FROM generate_series(0::bigint, {rows - 1}) AS t(i)"
        )
        connection.execute(f"VACUUM ANALYZE {TABLE}")  # hint bits set: no scan writes pages


def warm(database: str) -> None:
    """Import what the evaluation imports on first use (pyarrow for DuckDB's results,
    sqlglot's dialect): imports are left out for every contender."""
    import pyarrow  # noqa: F401
    import sqlglot

    sqlglot.Dialect.get_or_raise(database)


def measure(method: str, database: str, where: str, key: str, regex: str) -> dict[str, Any]:
    from dagster_dataframely._checks.results import evaluate_schema
    from dagster_dataframely._engine.backends import backend_for
    from dagster_dataframely._engine.catalogue import rules
    from dagster_dataframely._engine.settings import CheckSettings

    checked = schema(key == "yes", regex)
    catalogue = rules(checked)
    settings = CheckSettings.resolve()
    warm(database)
    if database == "duckdb":
        import duckdb

        from dagster_dataframely.sources._duckdb import scan_duckdb
        from dagster_dataframely.sources._duckdb_pushdown import pushdown, relation

        connection = duckdb.connect(where, read_only=True)
        with measured() as figures:
            if method == "floor":
                counts = connection.execute(floor_sql("duckdb", key == "yes", regex)).fetchone()
                failed, engines = int(sum(counts[1:])), {}  # type: ignore[index]
            else:
                rows = relation(connection, TABLE, None, None)
                with scan_duckdb(connection, rows.sql("duckdb")) as scan:
                    table = (
                        pushdown(connection, rows, lambda _: None, resource_key="duckdb")
                        if method == "pushdown"
                        else None
                    )
                    evaluation = evaluate_schema(
                        checked, scan, catalogue, settings, backend=backend_for(table)
                    )
                failed, engines = sum(evaluation.failed.values()), evaluation.engines
        connection.close()
        return {**figures, "server_cpu_seconds": 0.0, "failed": failed, "engines": engines}
    import dagster as dg
    import psycopg

    from dagster_dataframely._engine.sql.backend import SQLTable
    from dagster_dataframely.sources import SQLTableSource
    from dagster_dataframely.sources._sql import _Database
    from dagster_dataframely.sources._sql_query import relation as sql_relation

    connection = psycopg.connect(where)
    server = postmaster(connection)
    server_before = server_cpu(server)
    with measured() as figures:
        if method == "floor":
            counts = connection.execute(floor_sql("postgres", key == "yes", regex)).fetchone()
            failed, engines = int(sum(counts[1:])), {}  # type: ignore[index]
        else:
            source = SQLTableSource(resource_key="postgres", dialect="postgres", table=TABLE)
            opened = _Database(connection, source, dg.AssetKey(TABLE), lambda _: None)
            rows = sql_relation(opened.dtypes, TABLE, "postgres", None, None)
            table = (
                SQLTable.of(rows, dialect="postgres", run=opened.run, session=opened.session)
                if method == "pushdown"
                else None
            )
            evaluation = evaluate_schema(
                checked, opened.scan(rows), catalogue, settings, backend=backend_for(table)
            )
            failed, engines = sum(evaluation.failed.values()), evaluation.engines
        spent = server_cpu(server) - server_before  # while the backend lives
    connection.close()
    return {**figures, "server_cpu_seconds": spent, "failed": failed, "engines": engines}


def add_table_arguments(parser: argparse.ArgumentParser, duckdb: int, postgres: int) -> None:
    """The table's arguments, shared with `compare/run.py`: its sizes (`duckdb`, `postgres`
    rows by default), the key, the databases, the regex and how many runs to take the
    median of."""
    parser.add_argument("--duckdb-rows", type=int, default=duckdb)
    parser.add_argument("--postgres-rows", type=int, default=postgres)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--primary-key", nargs="+", choices=("no", "yes"), default=["no", "yes"])
    parser.add_argument("--databases", nargs="+", choices=("duckdb", "postgres"),
                        default=["duckdb", "postgres"])  # fmt: skip
    parser.add_argument("--regex", default=REGEX)


def over_tables(args: argparse.Namespace, measure_all: Callable[[str, str, int], None]) -> None:
    """`measure_all(database, where, rows)` on the table built in each of `args.databases`:
    a DuckDB file in a temporary directory, a throwaway PostgreSQL server."""
    if "duckdb" in args.databases:
        with tempfile.TemporaryDirectory(prefix="dd-bench-floor-") as directory:
            path = Path(directory) / "orders.duckdb"
            generate_duckdb(path, args.duckdb_rows)
            measure_all("duckdb", str(path), args.duckdb_rows)
    if "postgres" in args.databases:
        from postgres import running_server

        with running_server() as server:
            generate_postgres(server.conninfo, args.postgres_rows)
            measure_all("postgres", server.conninfo, args.postgres_rows)


def main(args: argparse.Namespace) -> None:
    methods = [m for m in args.methods if m != "base" or args.baseline]
    opening(f"{'database':8} {'rows':>6} {'key':>3} {'method':9} | {COST_HEADER}")
    fallbacks: set[str] = set()

    def measure_all(database: str, where: str, rows: int) -> None:
        for key in args.primary_key:
            engines: dict[str, str] = {}

            def run(method: str, key: str = key, engines: dict[str, str] = engines) -> Any:
                arguments = (database, where, key, args.regex)
                if method == "base":
                    figures = child_figures(
                        __file__, "pushdown", *arguments, label=method,
                        env=baseline_env(args.baseline),
                    )  # fmt: skip
                else:
                    figures = child_figures(__file__, method, *arguments, label=method)
                found = figures.pop("engines")
                if method == "pushdown":
                    engines.update(found)
                return figures

            medians = interleaved(methods, args.repeat, run)
            counted = {method: m["failed"] for method, m in medians.items()}
            assert len(set(counted.values())) == 1, counted
            fallbacks.update(
                f"{database}: {name} -> {engine}"
                for name, engine in engines.items()
                if engine != database
            )
            for method, m in medians.items():
                label = f"{database:8} {rows / 1_000_000:>5.1f}M {key:>3} {method:9}"
                print(cost_row(label, m, medians.get("floor")), flush=True)

    over_tables(args, measure_all)
    for line in sorted(fallbacks):
        print(f"pushdown fell back: {line}")
    closing(args.repeat, "cost s = cpu s (this process) + srv s (PostgreSQL's processes)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    add_table_arguments(parser, duckdb=2_000_000, postgres=1_000_000)
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    parser.add_argument("--baseline", metavar="SRC", help="a tree's src to measure as base")
    dispatch(parser, measure, main, ("METHOD", "DATABASE", "WHERE", "KEY", "REGEX"))
    # The figures are printed: skip the interpreter's teardown, where a PostgreSQL read left
    # fetching on a polars thread aborted the process ("FATAL: exception not rethrown") before
    # `_Database.reads` stopped them (a check's step stops them; this script measures without
    # one), which would lose the run.
    sys.stdout.flush()
    os._exit(0)
