"""Benchmark: a DuckDB table's rules run in DuckDB (pushdown) vs streamed into polars vs
loaded whole and `Schema.filter`.

    .venv/bin/python benchmarks/pushdown.py [--rows 20_000_000] [--repeat 1]

Writes generated orders (5 columns, 9 rules, no primary key) to a DuckDB file in a temporary
directory, then measures, each in its own subprocess with the same imports:

- pushdown: the evaluation `DuckDBTableSource(pushdown=True)` runs: one aggregate query and
  bounded sample queries in DuckDB;
- streaming: `DuckDBTableSource(pushdown=False)`'s Arrow batches evaluated by polars;
- eager: the table read whole (`connection.sql(...).pl()`), then `Schema.filter`.

Targets (issue 16): pushdown <= 0.3x the time of streaming, <= 0.5x its peak memory.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _measure import child_figures, dispatch, interleaved, load_average, measured

CHUNK = 2_000_000


def schema() -> type:
    import dataframely as dy

    class Orders(dy.Schema):  # 9 rules
        order_id = dy.Int64()  # nullability
        email = dy.String(nullable=True, regex=r"^[a-z0-9]+@example\.com$")  # regex
        country = dy.String(nullable=True, min_length=2, max_length=2)  # 2 lengths
        amount = dy.Float64(nullable=True, min=0, max=10_000, allow_nan=True, allow_inf=True)
        quantity = dy.Int32(min=1, max=6)  # nullability, min, max

    return Orders


def generate(directory: Path, rows: int) -> Path:
    import duckdb

    path = directory / "orders.duckdb"
    with duckdb.connect(str(path)) as connection:
        connection.execute(
            f"""
            CREATE TABLE orders AS
            SELECT
                i AS order_id,
                'user' || (i % 100000) || '@example.com' AS email,
                ['DE', 'FR', 'US', 'XX1'][(i % 4) + 1] AS country,
                ((i % 20000) - 10)::DOUBLE AS amount,
                ((i % 7) + 1)::INTEGER AS quantity
            FROM range({rows}) AS t(i)
            """
        )
    return path


def measure(method: str, path: str) -> dict[str, float]:
    import duckdb

    from dagster_dataframely._checks.results import evaluate_schema
    from dagster_dataframely._engine.catalogue import rules
    from dagster_dataframely._engine.settings import CheckSettings
    from dagster_dataframely.sources._duckdb import scan_duckdb
    from dagster_dataframely.sources._duckdb_pushdown import pushdown, relation

    checked = schema()
    catalogue = rules(checked)
    settings = CheckSettings.resolve()
    with measured() as figures, duckdb.connect(path, read_only=True) as connection:
        if method == "eager":
            frame = connection.sql("SELECT * FROM orders").pl()
            _, failure = checked.filter(frame, cast=False)
            failed = sum(failure.counts().values())
        else:
            rows = relation(connection, ["orders"], None, None)
            with scan_duckdb(connection, rows.sql("duckdb")) as scan:
                table = pushdown(connection, rows, lambda _: None) if method == "pushdown" else None
                evaluation = evaluate_schema(checked, scan, catalogue, settings, pushdown=table)
            failed = sum(evaluation.failed.values())
            if method == "pushdown":
                assert set(evaluation.engines.values()) == {"duckdb"}, evaluation.engines
    return {**figures, "failed": failed}


def main(args: argparse.Namespace) -> None:
    print(f"load average before: {load_average()} (2 cores; CPU seconds are steadier under load)")
    header = f"{'rows':>5} {'method':9} | {'s':>7} {'cpu s':>7} {'peak MB':>8} | vs streaming"
    print(header)
    print("-" * len(header))
    with tempfile.TemporaryDirectory(prefix="dd-bench-pushdown-") as directory:
        path = generate(Path(directory), args.rows)

        def run(method: str) -> dict[str, float]:
            return child_figures(__file__, method, str(path), label=method)

        medians = interleaved(["pushdown", "streaming", "eager"], args.repeat, run)
        base = medians["streaming"]
        assert len({m["failed"] for m in medians.values()}) == 1, medians
        for method, m in medians.items():
            time, memory = m["seconds"] / base["seconds"], m["peak_mb"] / base["peak_mb"]
            print(
                f"{args.rows / 1_000_000:>4.1f}M {method:9} | {m['seconds']:7.2f} "
                f"{m['cpu_seconds']:7.2f} {m['peak_mb']:8.0f} | time {time:.2f}x, "
                f"memory {memory:.2f}x",
                flush=True,
            )
    print(f"load average after: {load_average()}; medians of {args.repeat} interleaved runs")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--repeat", type=int, default=1)
    dispatch(parser, measure, main, ("METHOD", "PATH"))
