"""Benchmark: a DuckDB table's rules run in DuckDB (pushdown) vs streamed into polars vs
loaded whole and `Schema.filter`.

    .venv/bin/python benchmarks/pushdown.py [--rows 20_000_000 ...] [--repeat 1]
        [--methods pushdown streaming eager] [--primary-key] [--memory-limits none 256MB]
        [--profile]

Writes generated orders (5 columns, 9 rules, no primary key unless `--primary-key`) to a
DuckDB file in a temporary directory, for each `--rows`, then measures, each in its own
subprocess with the same imports:

- pushdown: the evaluation `DuckDBTableSource(pushdown=True)` runs: one aggregate query and
  bounded sample queries in DuckDB;
- streaming: `DuckDBTableSource(pushdown=False)`'s Arrow batches evaluated by polars;
- eager: the table read whole (`connection.sql(...).pl()`), then `Schema.filter`.

`--memory-limits` runs each method once per DuckDB `memory_limit` ("none": DuckDB's default,
80% of RAM), set as `DuckDBResource(connection_config={...})` sets it, spilling to the
temporary directory. Several `--rows` also print each variant's peak memory against the
smallest table's. `--profile` prints DuckDB's `EXPLAIN ANALYZE` of the pushdown's count query.

Targets (issue 16): pushdown <= 0.3x the time of streaming, <= 0.5x its peak memory, and its
peak memory flat in table size (within 1.2x from 20M to 100M rows, no primary key).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from _measure import child_figures, dispatch, interleaved, load_average, measured

METHODS = ("pushdown", "streaming", "eager")
NO_LIMIT = "none"


def schema(primary_key: bool = False) -> type:
    import dataframely as dy

    class Orders(dy.Schema):  # 9 rules, a 10th with the primary key
        order_id = dy.Int64(primary_key=primary_key)  # nullability
        email = dy.String(nullable=True, regex=r"^[a-z0-9]+@example\.com$")  # regex
        country = dy.String(nullable=True, min_length=2, max_length=2)  # 2 lengths
        amount = dy.Float64(nullable=True, min=0, max=10_000, allow_nan=True, allow_inf=True)
        quantity = dy.Int32(min=1, max=6)  # nullability, min, max

    return Orders


def generate(directory: Path, rows: int) -> Path:
    import duckdb

    path = directory / f"orders-{rows}.duckdb"
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


def connect(path: str, memory_limit: str) -> Any:
    """A read-only connection, with `memory_limit` (spilling beside the file) unless "none"."""
    import duckdb

    config = {}
    if memory_limit != NO_LIMIT:
        config = {"memory_limit": memory_limit, "temp_directory": f"{path}.spill"}
    return duckdb.connect(path, read_only=True, config=config)


def measure(method: str, path: str, memory_limit: str, primary_key: str) -> dict[str, float]:
    from dagster_dataframely._checks.results import evaluate_schema
    from dagster_dataframely._engine.backends import backend_for
    from dagster_dataframely._engine.catalogue import rules
    from dagster_dataframely._engine.settings import CheckSettings
    from dagster_dataframely.sources._duckdb import scan_duckdb
    from dagster_dataframely.sources._duckdb_pushdown import pushdown, relation

    checked = schema(primary_key == "1")
    catalogue = rules(checked)
    settings = CheckSettings.resolve()
    with measured() as figures, connect(path, memory_limit) as connection:
        if method == "eager":
            frame = connection.sql("SELECT * FROM orders").pl()
            _, failure = checked.filter(frame, cast=False)
            failed = sum(failure.counts().values())
        else:
            rows = relation(connection, "orders", None, None)
            with scan_duckdb(connection, rows.sql("duckdb")) as scan:
                table = (
                    pushdown(connection, rows, lambda _: None, resource_key="duckdb")
                    if method == "pushdown"
                    else None
                )
                evaluation = evaluate_schema(
                    checked, scan, catalogue, settings, backend=backend_for(table)
                )
            failed = sum(evaluation.failed.values())
            if method == "pushdown":
                assert set(evaluation.engines.values()) == {"duckdb"}, evaluation.engines
    return {**figures, "failed": failed}


def profile(path: Path, primary_key: bool) -> None:
    """DuckDB's `EXPLAIN ANALYZE` of the count query the pushdown sends."""
    from dagster_dataframely._engine.catalogue import rules
    from dagster_dataframely._engine.sql.backend import compile_rules
    from dagster_dataframely.sources._duckdb_pushdown import pushdown, relation

    checked = schema(primary_key)
    catalogue = rules(checked)
    with connect(str(path), NO_LIMIT) as connection:
        rows = relation(connection, "orders", None, None)
        table = pushdown(connection, rows, print, resource_key="duckdb")
        dtypes = dict(connection.sql("SELECT * FROM orders LIMIT 0").pl().schema)
        compiled = compile_rules(catalogue, dtypes, table.dialect).conditions
        pushed = [rule for rule in catalogue if rule.name in compiled and not rule.distinct_over]
        sql = table.sql(table.counts(pushed, compiled))
        print(connection.sql(f"EXPLAIN ANALYZE {sql}").fetchall()[0][1])


def main(args: argparse.Namespace) -> None:
    print(f"load average before: {load_average()} (2 cores; CPU seconds are steadier under load)")
    header = (
        f"{'rows':>6} {'method@memory_limit':19} | {'s':>7} {'cpu s':>7} {'peak MB':>8} "
        f"{'start MB':>8} | vs streaming"
    )
    print(header)
    print("-" * len(header))
    variants = [f"{m}@{limit}" for m in args.methods for limit in args.memory_limits]
    peaks: dict[str, list[float]] = {variant: [] for variant in variants}
    with tempfile.TemporaryDirectory(prefix="dd-bench-pushdown-") as directory:
        for rows in args.rows:
            path = generate(Path(directory), rows)
            if args.profile:
                profile(path, args.primary_key)

            def run(variant: str, path: Path = path) -> dict[str, float]:
                method, limit = variant.split("@")
                key = str(int(args.primary_key))
                return child_figures(__file__, method, str(path), limit, key, label=variant)

            medians = interleaved(variants, args.repeat, run)
            assert len({m["failed"] for m in medians.values()}) == 1, medians
            base = next((m for v, m in medians.items() if v.startswith("streaming@")), None)
            for variant, m in medians.items():
                peaks[variant].append(m["peak_mb"])
                versus = (
                    f"time {m['seconds'] / base['seconds']:.2f}x, "
                    f"memory {m['peak_mb'] / base['peak_mb']:.2f}x"
                    if base
                    else ""
                )
                start = m["peak_mb"] - m["above_start_mb"]
                print(
                    f"{rows / 1_000_000:>5.1f}M {variant:19} | {m['seconds']:7.2f} "
                    f"{m['cpu_seconds']:7.2f} {m['peak_mb']:8.0f} {start:8.0f} | {versus}",
                    flush=True,
                )
            path.unlink()
    if len(args.rows) > 1:
        for variant, found in peaks.items():
            growth = ", ".join(f"{peak / found[0]:.2f}x" for peak in found[1:])
            print(f"peak memory of {variant} against {args.rows[0]:,} rows: {growth}")
    print(
        f"load average after: {load_average()}; medians of {args.repeat} interleaved runs; "
        "start MB: the RSS after the imports, before the check"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, nargs="+", default=[20_000_000])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    parser.add_argument("--primary-key", action="store_true")
    parser.add_argument("--memory-limits", nargs="+", default=[NO_LIMIT])
    parser.add_argument("--profile", action="store_true")
    dispatch(parser, measure, main, ("METHOD", "PATH", "MEMORY_LIMIT", "PRIMARY_KEY"))
