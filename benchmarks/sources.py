"""Benchmark: checks through a source vs loading the table eagerly and calling `Schema.filter`.

    .venv/bin/python benchmarks/sources.py [--duckdb-rows 10_000_000] [--delta-rows 5_000_000]

Writes generated orders to a DuckDB file and a Delta table (in a temporary directory, deleted
afterwards), then measures, each in its own subprocess with the same imports:

- duckdb source: `check_results` on `DuckDBTableSource`'s streamed scan (Arrow batches);
- duckdb eager: the table read whole as dagster-duckdb-polars loads it
  (`connection.sql(...).pl()`), then `Schema.filter(cast=False)` + `failure.counts()`;
- delta source: `check_results` on `DeltaSource`'s scan (deltalake's engine, in batches);
- delta eager: `pl.read_delta` + `Schema.filter`.

Targets (issue 9): peak memory <= 0.3x of the eager path, time <= 1x.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from _measure import child_figures, dispatch, interleaved, measured

CHUNK = 2_000_000


def schema() -> type:
    import dataframely as dy

    class Orders(dy.Schema):
        order_id = dy.Int64()
        email = dy.String(regex=r"^[a-z0-9]+@example\.com$")
        country = dy.String(min_length=2, max_length=2)
        amount = dy.Float64(nullable=True, min=0, max=10_000)
        quantity = dy.Int32(min=1)

    return Orders


def _chunk(start: int, stop: int) -> object:
    import polars as pl

    index = pl.int_range(start, stop, eager=True)
    return pl.DataFrame(
        {
            "order_id": index,
            "email": "user" + (index % 100_000).cast(pl.String) + "@example.com",
            "country": pl.Series(["DE", "FR", "US", "XX1"]).gather(index % 4),
            "amount": ((index % 20_000) - 10).cast(pl.Float64),
            "quantity": ((index % 7) + 1).cast(pl.Int32),
        }
    )


def generate(directory: Path, rows: int, kind: str) -> Path:
    import duckdb
    import polars as pl

    if kind == "duckdb":
        path = directory / "orders.duckdb"
        with duckdb.connect(str(path)) as connection:
            for start in range(0, rows, CHUNK):
                frame = _chunk(start, min(start + CHUNK, rows))
                connection.register("chunk", frame.to_arrow())  # type: ignore[attr-defined]
                if start == 0:
                    connection.execute("create table orders as select * from chunk")
                else:
                    connection.execute("insert into orders select * from chunk")
        return path
    path = directory / "orders_delta"
    for start in range(0, rows, CHUNK):
        frame = _chunk(start, min(start + CHUNK, rows))
        assert isinstance(frame, pl.DataFrame)
        frame.write_delta(str(path), mode="overwrite" if start == 0 else "append")
    return path


def measure(method: str, path: str) -> dict[str, float]:
    import dagster as dg
    import duckdb
    import polars as pl

    import dagster_dataframely as dd
    from dagster_dataframely.sources._duckdb import scan_duckdb

    checked = schema()
    key = dg.AssetKey("orders")
    with measured() as figures:
        if method.endswith("source"):
            if method.startswith("duckdb"):
                with (
                    duckdb.connect(path, read_only=True) as connection,
                    scan_duckdb(connection, 'SELECT * FROM "orders"') as scan,
                ):
                    results = list(dd.wiring.check_results(checked, scan, asset_key=key))
            else:
                scan = dd.sources.DeltaSource(path).scan()
                results = list(dd.wiring.check_results(checked, scan, asset_key=key))
            failed = sum(
                int(r.metadata["dy_failed_count"].value)
                for r in results
                if "dy_failed_count" in r.metadata
            )
        else:
            if method.startswith("duckdb"):
                with duckdb.connect(path, read_only=True) as connection:
                    frame = connection.sql("SELECT * FROM orders").pl()
            else:
                frame = pl.read_delta(path)
            _, failure = checked.filter(frame, cast=False)
            failed = sum(failure.counts().values())
    return {**figures, "failed": failed}


def main(args: argparse.Namespace) -> None:
    header = (
        f"{'table':7} {'rows':>5} | {'source s':>8} {'eager s':>8} {'ratio':>6} | "
        f"{'cpu s':>5} {'cpu s':>5} {'ratio':>6} | {'source MB':>9} {'eager MB':>9} {'ratio':>6}"
    )
    print(f"load average before: {_load()} (2-core machine; CPU seconds are steadier under load)")
    print(header)
    print("-" * len(header))
    with tempfile.TemporaryDirectory(prefix="dd-bench-sources-") as directory:
        for kind, rows in (("duckdb", args.duckdb_rows), ("delta", args.delta_rows)):
            path = generate(Path(directory), rows, kind)

            def run(method: str, path: Path = path) -> dict[str, float]:
                return child_figures(__file__, method, str(path), label=method)

            medians = interleaved([f"{kind}-source", f"{kind}-eager"], args.repeat, run)
            side, base = medians[f"{kind}-source"], medians[f"{kind}-eager"]
            assert side["failed"] == base["failed"], (side, base)
            print(
                f"{kind:7} {rows // 1_000_000:>4}M | {side['seconds']:8.2f} {base['seconds']:8.2f} "
                f"{side['seconds'] / base['seconds']:6.2f} | {side['cpu_seconds']:5.2f} "
                f"{base['cpu_seconds']:5.2f} {side['cpu_seconds'] / base['cpu_seconds']:6.2f} | "
                f"{side['peak_mb']:9.0f} {base['peak_mb']:9.0f} "
                f"{side['peak_mb'] / base['peak_mb']:6.2f}",
                flush=True,
            )
    print(f"load average after: {_load()}; medians of {args.repeat} interleaved runs")


def _load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--duckdb-rows", type=int, default=10_000_000)
    parser.add_argument("--delta-rows", type=int, default=5_000_000)
    parser.add_argument("--repeat", type=int, default=1)
    dispatch(parser, measure, main, ("METHOD", "PATH"))
