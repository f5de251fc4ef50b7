"""Benchmark: the trend check's one read of the instance, with 1,000 past evaluations.

    .venv/bin/python benchmarks/trend_history.py [--evaluations 1000] [--rules 10 1000]

Records `--evaluations` evaluations of an asset's `dy_table__trends` check in a throwaway
SQLite instance (a DAGSTER_HOME as `dagster dev` makes one), each with the figures of
`--rules` failing rules (the worst case: every rule's fraction recorded), then times
`past_figures` (the step's one read) for a window of 20 and of every evaluation, and the
band computation over them. Prints the median of `--repeat` reads.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time


def main(args: argparse.Namespace) -> None:
    import dagster as dg

    from dagster_dataframely._checks.history_internals import FIGURES, past_figures
    from dagster_dataframely._engine.trends import ROWS, Trends, deviations

    key = dg.AssetCheckKey(dg.AssetKey("orders"), "dy_table__trends")
    print(f"{'rules':>6} {'window':>7} | {'read ms':>8} {'band ms':>8} | {'KB per result':>13}")
    for rules in args.rules:
        with tempfile.TemporaryDirectory() as home, dg.DagsterInstance.local_temp(home) as instance:
            names = [f"column_{i}|min" for i in range(rules)]
            for run in range(args.evaluations):
                figures = {ROWS: 1_000_000.0 + run, **{n: 0.000123 + run * 1e-9 for n in names}}
                instance.report_runless_asset_event(
                    dg.AssetCheckEvaluation(
                        asset_key=key.asset_key,
                        check_name=key.name,
                        passed=True,
                        metadata={FIGURES: dg.MetadataValue.json(figures)},
                    )
                )
            size = len(json.dumps(figures)) / 1024
            for window in (20, args.evaluations):
                reads, bands = [], []
                for _ in range(args.repeat):
                    start = time.perf_counter()
                    history = past_figures(instance, key, partition=None, limit=window)
                    reads.append(time.perf_counter() - start)
                    start = time.perf_counter()
                    deviations(Trends(window=window), figures, history, [ROWS, *names])
                    bands.append(time.perf_counter() - start)
                assert len(history) == window, len(history)
                print(
                    f"{rules:>6} {window:>7} | {statistics.median(reads) * 1000:8.1f} "
                    f"{statistics.median(bands) * 1000:8.1f} | {size:13.1f}",
                    flush=True,
                )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evaluations", type=int, default=1000)
    parser.add_argument("--rules", type=int, nargs="+", default=[10, 1000])
    parser.add_argument("--repeat", type=int, default=5)
    main(parser.parse_args())
