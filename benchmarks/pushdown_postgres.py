"""Benchmark: a PostgreSQL table's rules run in PostgreSQL (pushdown) vs read into polars.

    .venv/bin/python benchmarks/pushdown_postgres.py [--rows 5_000_000] [--repeat 1]

Starts a throwaway PostgreSQL server as the tests do (`tests/postgres.py`: Debian's binaries,
127.0.0.1), loads the pushdown benchmark's orders (5 columns, 9 rules, no primary key), then
measures, each in its own subprocess with the same imports:

- pushdown: `SQLTableSource(dialect="postgres")`'s evaluation: one aggregate query and
  bounded sample queries in PostgreSQL;
- scan: the same source's rows fetched in batches (a server-side cursor) and every rule
  evaluated by polars, as a rule without a SQL form is;
- pull: the table read whole with psycopg, `pl.read_database`, then `Schema.filter`;
- copy: the table read whole as `COPY ... TO STDOUT (FORMAT csv)`, `pl.read_csv`, then
  `Schema.filter` (the fastest pull psycopg offers; no ADBC driver for PostgreSQL here).

`cpu s` is the check process's CPU time, `server cpu s` the server's (its backends and
parallel workers): pushdown's work is the server's.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

from _measure import (
    child_figures,
    closing,
    dispatch,
    interleaved,
    measured,
    opening,
    postmaster,
    server_cpu,
)
from _sql_source import evaluated
from pushdown import schema

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

METHODS = ("pushdown", "scan", "pull", "copy")


def generate(conninfo: str, rows: int) -> None:
    import psycopg

    with psycopg.connect(conninfo, autocommit=True) as connection:
        connection.execute(
            f"""
            CREATE TABLE orders AS
            SELECT
                i::bigint AS order_id,
                'user' || (i % 100000) || '@example.com' AS email,
                (ARRAY['DE', 'FR', 'US', 'XX1'])[(i % 4) + 1] AS country,
                ((i % 20000) - 10)::double precision AS amount,
                ((i % 7) + 1)::integer AS quantity
            FROM generate_series(0, {rows - 1}) AS t(i)
            """
        )
        connection.execute("VACUUM ANALYZE orders")  # hint bits set: no scan writes pages


def measure(method: str, conninfo: str) -> dict[str, float]:
    import dagster as dg
    import polars as pl
    import psycopg

    from dagster_dataframely.sources import SQLTableSource
    from dagster_dataframely.sources._sql import _Database

    checked = schema()
    columns = {name: column.dtype for name, column in checked.columns().items()}
    connection = psycopg.connect(conninfo)
    server = postmaster(connection)
    server_before = server_cpu(server)
    with measured() as figures, connection:
        if method in ("pull", "copy"):
            if method == "pull":
                frame = pl.read_database(
                    "SELECT * FROM orders", connection, schema_overrides=columns
                )
            else:
                buffer = io.BytesIO()
                with connection.cursor().copy("COPY orders TO STDOUT (FORMAT csv)") as copy:
                    for block in copy:
                        buffer.write(block)
                frame = pl.read_csv(buffer.getvalue(), has_header=False, schema=columns)
            _, failure = checked.filter(frame, cast=False)
            failed = sum(failure.counts().values())
        else:
            source = SQLTableSource(resource_key="postgres", dialect="postgres", table="orders")
            database = _Database(connection, source, dg.AssetKey("orders"), lambda _: None)
            failed = evaluated(database, "orders", "postgres", checked, method)
        spent = server_cpu(server) - server_before  # while the backend lives
    return {
        **figures,
        "server_cpu_seconds": spent,
        "failed": failed,
    }


def main(args: argparse.Namespace) -> None:
    from postgres import running_server

    opening(
        f"{'rows':>5} {'method':8} | {'s':>7} {'cpu s':>7} {'server cpu s':>12} "
        f"{'peak MB':>8} | vs pull"
    )
    with running_server() as server:
        generate(server.conninfo, args.rows)

        def run(method: str) -> dict[str, float]:
            return child_figures(__file__, method, server.conninfo, label=method)

        medians = interleaved(args.methods, args.repeat, run)
    assert len({m["failed"] for m in medians.values()}) == 1, medians
    base = medians.get("pull")
    for method, m in medians.items():
        versus = (
            f"time {m['seconds'] / base['seconds']:.2f}x, "
            f"memory {m['peak_mb'] / base['peak_mb']:.2f}x"
            if base
            else ""
        )
        print(
            f"{args.rows / 1_000_000:>4.1f}M {method:8} | {m['seconds']:7.2f} "
            f"{m['cpu_seconds']:7.2f} {m['server_cpu_seconds']:12.2f} {m['peak_mb']:8.0f} "
            f"| {versus}",
            flush=True,
        )
    closing(args.repeat)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    dispatch(parser, measure, main, ("METHOD", "CONNINFO"))
