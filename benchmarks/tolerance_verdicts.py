"""Benchmark: what tolerances add to a sidecar step, which is only the verdicts on the counts.

    .venv/bin/python benchmarks/tolerance_verdicts.py [--columns 500] [--repeat 5]

The evaluation pass is unchanged by tolerances (they read the counts it returns), so the cost
is in turning counts into check results. This times `results()` for a schema of `--columns`
columns with two rules each, on counts a real evaluation would return (every other rule
failing), with no tolerance and with a tolerance on every rule. Run it against another
checkout (`PYTHONPATH=../main/src`) for the figure without tolerances before this change.
"""

from __future__ import annotations

import argparse
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--columns", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    import dagster as dg
    import dataframely as dy

    from dagster_dataframely._checks.results import results
    from dagster_dataframely._checks.specs import plan
    from dagster_dataframely._engine.catalogue import rules
    from dagster_dataframely._engine.evaluate import Evaluation
    from dagster_dataframely._engine.settings import CheckSettings

    wide = type("Wide", (dy.Schema,), {f"c{i}": dy.Int64(min=0) for i in range(args.columns)})
    catalogues = {"no tolerance": rules(wide)}
    try:
        import dagster_dataframely as dd

        every = {f"c{i}": dd.Tolerance(warn_above=3, error_above="1%") for i in range(args.columns)}
        catalogues["a tolerance on every rule"] = rules(wide, tolerate=every)
    except (AttributeError, TypeError):  # a checkout without tolerances
        pass
    rows = 1_000_000
    evaluation = Evaluation(
        row_count=rows,
        failed={r.name: (i % 2) * 5_000 for i, r in enumerate(catalogues["no tolerance"])},
        samples={},
    )
    key = dg.AssetKey("wide")
    for granularity in ("rule", "column"):
        settings = CheckSettings(check_granularity=granularity)  # type: ignore[arg-type]
        for label, catalogue in catalogues.items():
            planned = plan(catalogue, settings, "Wide")
            times = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                list(results(planned, evaluation, asset_key=key))
                times.append(time.perf_counter() - start)
            print(
                f"{granularity:6} granularity, {len(catalogue)} rules, {label:26}: "
                f"{min(times) * 1000:7.1f} ms per step (best of --repeat)"
            )


if __name__ == "__main__":
    main()
