"""Benchmark: a sidecar check with `keep_failing_rows=True` against the same check without it.

    .venv/bin/python benchmarks/failing_rows.py [--duckdb-rows 20_000_000]
        [--postgres-rows 5_000_000] [--parquet-rows 10_000_000] [--failing 0.01]
        [--backends duckdb postgres parquet] [--repeat 1]

Generates orders (4 columns, 6 rules) of which `--failing` (1%) fail `amount|min`, then runs
the real checks job (`execute_in_process`), each variant in its own subprocess:

- duckdb: a DuckDB file, `DuckDBTableSource()` (pushdown); kept rows by `INSERT ... SELECT`;
- postgres: a throwaway server (`tests/postgres.py`), `SQLTableSource(dialect="postgres")`;
- parquet: one parquet file, `ParquetSource`; kept rows by a polars sink to a parquet file.

`cpu s` is the check process's CPU time, `server cpu s` PostgreSQL's (its backends);
`peak MB` the check process's peak RSS. Keeping costs one more scan where rows fail: the
ratios against `off` are the figures the issue asks for (parquet: peak memory flat in the
number of failing rows, so compare `--failing 0.01` with `--failing 0.1`).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from _measure import child_figures, dispatch, interleaved, load_average, measured

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

BACKENDS = ("duckdb", "postgres", "parquet")
VARIANTS = ("off", "keep")


def schema() -> type:
    import dataframely as dy

    class Orders(dy.Schema):  # 6 rules
        order_id = dy.Int64()  # nullability
        customer = dy.String(min_length=2)  # nullability, min_length
        amount = dy.Float64(min=0)  # nullability, min: the failing rule
        quantity = dy.Int32(min=1, max=6)  # (nullability counted above), min, max

    return Orders


def _select(rows: int, failing: float, series: str) -> str:
    every = max(round(1 / failing), 1)
    return f"""
        SELECT i::BIGINT AS order_id,
               'c' || (i % 100000)::VARCHAR AS customer,
               CASE WHEN i % {every} = 0 THEN -1.0 ELSE (i % 1000)::DOUBLE PRECISION END
                   AS amount,
               ((i % 6) + 1)::INTEGER AS quantity
        FROM {series}
    """


def generate(backend: str, rows: int, failing: float, folder: Path, conninfo: str) -> str:
    """The table of `backend`, made; returns where it is (a file, or the conninfo)."""
    import duckdb

    if backend == "postgres":
        import psycopg

        with psycopg.connect(conninfo, autocommit=True) as connection:
            connection.execute("DROP TABLE IF EXISTS orders, orders__dy_failures")
            series = f"generate_series(0, {rows - 1}) AS t(i)"
            connection.execute(f"CREATE TABLE orders AS {_select(rows, failing, series)}")
            connection.execute("VACUUM ANALYZE orders")
        return conninfo
    database = folder / "shop.duckdb"
    with duckdb.connect(str(database)) as connection:
        query = _select(rows, failing, f"range({rows}) AS t(i)")
        connection.execute(f"CREATE OR REPLACE TABLE orders AS {query}")
        if backend == "parquet":
            connection.execute(f"COPY orders TO '{folder / 'orders.parquet'}' (FORMAT parquet)")
            return str(folder / "orders.parquet")
    return str(database)


def measure(backend: str, variant: str, location: str) -> dict[str, float]:
    import dagster as dg
    from dagster_duckdb import DuckDBResource
    from pushdown_postgres import server_cpu

    import dagster_dataframely as dd

    resources: dict[str, object] = {}
    if backend == "duckdb":
        source: dd.sources.Source = dd.sources.DuckDBTableSource(table="orders")
        resources["duckdb"] = DuckDBResource(database=location)
    elif backend == "postgres":
        from postgres import PostgresResource

        source = dd.sources.SQLTableSource(
            resource_key="warehouse", dialect="postgres", table="orders"
        )
        resources["warehouse"] = PostgresResource(conninfo=location)
    else:
        source = dd.sources.ParquetSource(location)
    checks = dd.schema_checks(
        schema(),
        asset="orders",
        source=source,
        keep_failing_rows=variant == "keep",
        max_failing_rows=1 << 62,
    )
    job = dg.define_asset_job("checks", selection=dg.AssetSelection.checks_for_assets("orders"))
    defs = dg.Definitions(
        assets=[dg.AssetSpec("orders")], asset_checks=[checks], jobs=[job], resources=resources
    )
    job_def = defs.resolve_job_def("checks")
    postmaster, before = _server(location) if backend == "postgres" else (None, 0.0)
    with measured() as figures:
        result = job_def.execute_in_process(raise_on_error=False)
    server = server_cpu(postmaster) - before if postmaster is not None else 0.0
    (failed,) = [
        e.metadata["dy_failed_count"].value
        for e in result.get_asset_check_evaluations()
        if e.check_name == "dy_rule__amount__min"
    ]
    kept = [
        e.metadata["dy_failing_rows_kept"].value
        for e in result.get_asset_check_evaluations()
        if "dy_failing_rows_kept" in e.metadata
    ]
    assert variant == "off" or kept == [failed], (kept, failed)
    return {**figures, "server_cpu_seconds": server, "failed": float(failed)}  # type: ignore[arg-type]


def _server(conninfo: str) -> tuple[int, float]:
    """The postmaster's pid and its CPU seconds so far."""
    import psycopg
    from pushdown_postgres import server_cpu

    with psycopg.connect(conninfo) as connection:
        backend = connection.execute("SELECT pg_backend_pid()").fetchone()[0]  # type: ignore[index]
        stat = Path(f"/proc/{backend}/stat").read_text()
        postmaster = int(stat.rsplit(")", 1)[1].split()[1])
    return postmaster, server_cpu(postmaster)


def main(args: argparse.Namespace) -> None:
    from contextlib import ExitStack

    print(f"load average before: {load_average()} (2 cores; CPU seconds are steadier under load)")
    header = (
        f"{'backend':8} {'rows':>6} {'variant':7} | {'s':>7} {'cpu s':>7} {'server cpu s':>12} "
        f"{'peak MB':>8} | keep vs off"
    )
    print(header)
    print("-" * len(header))
    rows = {
        "duckdb": args.duckdb_rows,
        "postgres": args.postgres_rows,
        "parquet": args.parquet_rows,
    }
    with ExitStack() as stack, tempfile.TemporaryDirectory() as scratch:
        conninfo = ""
        if "postgres" in args.backends:
            from postgres import running_server

            conninfo = stack.enter_context(running_server()).conninfo
        for backend in args.backends:
            folder = Path(scratch) / backend
            folder.mkdir()
            location = generate(backend, rows[backend], args.failing, folder, conninfo)

            def run(variant: str, backend: str = backend, location: str = location) -> dict:
                return child_figures(__file__, backend, variant, location, label=variant)

            medians = interleaved(VARIANTS, args.repeat, run)
            off = medians["off"]
            for variant, m in medians.items():
                ratio = (
                    f"time {m['seconds'] / off['seconds']:.2f}x, "
                    f"cpu {m['cpu_seconds'] / off['cpu_seconds']:.2f}x, "
                    f"memory {m['peak_mb'] / off['peak_mb']:.2f}x"
                    + (
                        f", server {m['server_cpu_seconds'] / off['server_cpu_seconds']:.2f}x"
                        if off["server_cpu_seconds"]
                        else ""
                    )
                )
                print(
                    f"{backend:8} {rows[backend] / 1e6:>5.1f}M {variant:7} | {m['seconds']:7.2f} "
                    f"{m['cpu_seconds']:7.2f} {m['server_cpu_seconds']:12.2f} "
                    f"{m['peak_mb']:8.0f} | {ratio}",
                    flush=True,
                )
    print(f"load average after: {load_average()}; medians of {args.repeat} interleaved runs")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--duckdb-rows", type=int, default=20_000_000)
    parser.add_argument("--postgres-rows", type=int, default=5_000_000)
    parser.add_argument("--parquet-rows", type=int, default=10_000_000)
    parser.add_argument("--failing", type=float, default=0.01)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=list(BACKENDS))
    dispatch(parser, measure, main, ("BACKEND", "VARIANT", "LOCATION"))
