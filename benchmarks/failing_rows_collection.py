"""Benchmark: `dd.collection_checks` with `keep_failing_rows=True` against the same checks
without it: the rows each member fails and the rows its filters remove, kept.

    .venv/bin/python benchmarks/failing_rows_collection.py [--lines 10_000_000] [--repeat 1]

The members of `collection_checks.py` (customers, orders, order lines; about 1% of orders
with an unknown customer, so their lines are removed too), then the real checks run
(`dg.materialize`), each variant in its own subprocess:

- duckdb: members as tables of one DuckDB file, `DuckDBTableSource()` (rules and filters in
  DuckDB); kept rows by `INSERT ... SELECT` there;
- parquet: members as parquet files, `ParquetSource`; kept rows streamed by polars sinks.

`cpu s` is the check process's CPU time, `peak MB` its peak RSS; the ratios against `off`
are the cost of keeping.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _measure import child_figures, dispatch, interleaved, load_average, measured
from collection_checks import MEMBERS, collection, generate

BACKENDS = ("duckdb", "parquet")
VARIANTS = ("off", "keep")


def measure(backend: str, variant: str, directory: str) -> dict[str, float]:
    import dagster as dg
    from dagster_duckdb import DuckDBResource

    import dagster_dataframely as dd

    folder = Path(directory)
    if backend == "duckdb":
        sources: dict[str, dd.sources.Source] = {
            member: dd.sources.DuckDBTableSource(table=asset) for member, asset in MEMBERS.items()
        }
        resources = {"duckdb": DuckDBResource(database=str(folder / "shop.duckdb"))}
    else:
        sources = {
            member: dd.sources.ParquetSource(str(folder / f"{asset}.parquet"))
            for member, asset in MEMBERS.items()
        }
        resources = {}
    keep = str(folder / "kept") if backend == "parquet" else True
    checks = dd.collection_checks(
        collection(),
        members=MEMBERS,
        sources=sources,
        keep_failing_rows=keep if variant == "keep" else False,
        max_failing_rows=1 << 62,
    )
    with measured() as figures:
        result = dg.materialize(
            [*(dg.AssetSpec(asset) for asset in MEMBERS.values()), checks],
            resources=resources,
            selection=dg.AssetSelection.all_asset_checks(),
            raise_on_error=False,
        )
    evaluations = result.get_asset_check_evaluations()
    failed = sum(int(e.metadata["dy_failed_count"].value) for e in evaluations if not e.passed)
    kept = {
        (e.asset_key, e.check_name): e.metadata["dy_failing_rows_kept"].value
        for e in evaluations
        if "dy_failing_rows_kept" in e.metadata
    }
    assert variant == "off" or kept, "nothing kept"
    return {**figures, "failed": float(failed), "kept": float(max(kept.values(), default=0))}


def main(args: argparse.Namespace) -> None:
    print(f"load average before: {load_average()}")
    header = f"{'backend':8} {'variant':7} | {'s':>7} {'cpu s':>7} {'peak MB':>8} | keep vs off"
    print(f"{args.lines / 1e6:.0f}M order lines, {args.lines / 4e6:.1f}M orders")
    print(header)
    print("-" * len(header))
    with tempfile.TemporaryDirectory(prefix="dd-bench-") as directory:
        generate(Path(directory), args.lines)
        for backend in args.backends:

            def run(variant: str, backend: str = backend) -> dict[str, float]:
                return child_figures(__file__, backend, variant, directory, label=variant)

            medians = interleaved(VARIANTS, args.repeat, run)
            off = medians["off"]
            for variant, m in medians.items():
                print(
                    f"{backend:8} {variant:7} | {m['seconds']:7.2f} {m['cpu_seconds']:7.2f} "
                    f"{m['peak_mb']:8.0f} | time {m['seconds'] / off['seconds']:.2f}x, "
                    f"cpu {m['cpu_seconds'] / off['cpu_seconds']:.2f}x, "
                    f"memory {m['peak_mb'] / off['peak_mb']:.2f}x; counts agree: "
                    f"{m['failed'] == off['failed']}",
                    flush=True,
                )
    print(f"load average after: {load_average()}; medians of {args.repeat} interleaved runs")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=list(BACKENDS))
    dispatch(parser, measure, main, ("BACKEND", "VARIANT", "DIRECTORY"))
