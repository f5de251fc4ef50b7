"""Benchmark: the evaluator on wide schemas vs Dataframely's `Schema.filter`.

    .venv/bin/python benchmarks/wide.py [--columns 100 250 500 1000] [--rows 10000]

A generated schema of `--columns` columns (integers with bounds, strings with a length and a
pattern, nullable floats with a bound, finite; the first column is the primary key) and a frame of
`--rows` rows, in two cases:

- failing: every rule fails on a third of the rows, the primary key included;
- mixed: one column in a hundred holds failing rows, one row in a thousand.

Each case and method runs in its own subprocess, the frame built before the clock starts:

- evaluator: `evaluate` on the frame (counts, and up to 5 failing rows per failing rule),
  what every check and `dd.asset` runs;
- results: `dd.wiring.check_results` on the frame, from the schema class (its rule catalogue
  built on the clock) to one `AssetCheckResult` per rule, metadata and samples included:
  what a check step pays in all;
- filter: `Schema.filter(frame, cast=False)` and `failure.counts()`.

Printed: seconds and CPU seconds (each the median of `--repeat` runs; CPU time is steadier
on a busy machine), the evaluator's and the results' ratios to `Schema.filter`, and the
evaluator's CPU milliseconds per column, which stay flat when its time grows linearly with the
width. Targets at 1,000 columns: the evaluator within 3x of `Schema.filter` (issue 8), the
results within 1.5x (issue 19).
"""

from __future__ import annotations

import argparse

from _measure import child_figures, dispatch, interleaved, measured

CASES = ("failing", "mixed")
METHODS = ("evaluator", "results", "filter")
SAMPLES = 5
TARGET = 3.0
RESULTS_TARGET = 1.5


def schema(columns: int) -> type:
    """A schema of `columns` columns, three kinds in turn; `c0` is the primary key."""
    import dataframely as dy

    kinds = (
        lambda: dy.Int64(min=0, max=100),
        lambda: dy.String(min_length=2, regex=r"^[a-z]+$"),
        lambda: dy.Float64(nullable=True, min=0.0),
    )
    others = {f"c{i}": kinds[i % 3]() for i in range(1, columns)}
    return type(f"Wide{columns}", (dy.Schema,), {"c0": dy.Int64(primary_key=True), **others})


def frame(columns: int, rows: int, case: str) -> object:
    """`rows` rows for `schema(columns)`: where a column fails, one row in three breaks each
    of its rules in turn ("failing"), or one row in a thousand breaks one ("mixed")."""
    import polars as pl

    n = pl.int_range(rows, dtype=pl.Int64)
    every = 3 if case == "failing" else 1_000

    def column(i: int) -> pl.Expr:
        broken = n % every == 0 if case == "failing" or i % 100 == 1 else pl.lit(False)
        turn = n // every % 3
        if i == 0:  # the primary key: null, or one key repeated
            return pl.when(broken).then(pl.when(turn > 0).then(-1)).otherwise(n)
        if i % 3 == 0:  # null, below the minimum, above the maximum
            bad = pl.when(turn == 0).then(None).when(turn == 1).then(-1).otherwise(1_000)
            return pl.when(broken).then(bad).otherwise(n % 100)
        if i % 3 == 1:  # null, too short, not matching the pattern
            bad = pl.when(turn == 0).then(None).when(turn == 1).then(pl.lit("a"))
            return pl.when(broken).then(bad.otherwise(pl.lit("A1"))).otherwise(pl.lit("ok"))
        # below the minimum, NaN, infinite (and nulls, which pass)
        bad = pl.when(turn == 0).then(-1.0).when(turn == 1).then(float("nan"))
        valid = pl.when(n % 7 == 0).then(None).otherwise(1.0)
        return pl.when(broken).then(bad.otherwise(float("inf"))).otherwise(valid)

    return pl.select(column(i).alias(f"c{i}") for i in range(columns))


def measure(method: str, case: str, columns: str, rows: str) -> dict[str, float]:
    """Run one method on one case in this process and report its figures (JSON on stdout)."""
    from dagster_dataframely._engine.catalogue import rules
    from dagster_dataframely._engine.evaluate import evaluate
    from dagster_dataframely.wiring import check_results

    wide = schema(int(columns))
    data = frame(int(columns), int(rows), case)
    catalogue = rules(wide) if method == "evaluator" else []
    with measured() as figures:
        if method == "evaluator":
            found = evaluate(
                data.lazy(),  # type: ignore[attr-defined]
                catalogue,
                max_failure_samples=SAMPLES,
                identify=wide.primary_key(),  # type: ignore[attr-defined]
            )
            failed = {name: count for name, count in found.failed.items() if count}
            assert all(sample.height <= SAMPLES for sample in found.samples.values())
        elif method == "results":
            found = list(check_results(wide, data, asset_key="wide", max_failure_samples=SAMPLES))
            failed = {
                str(result.check_name): result.metadata["dy_failed_count"].value
                for result in found
                if not result.passed
            }
        else:
            _, failure = wide.filter(data, cast=False)  # type: ignore[attr-defined]
            failed = failure.counts()
    return {**figures, "failed": sum(failed.values()), "rules": len(failed)}


def main(columns: list[int], rows: int, repeat: int) -> None:
    header = (
        f"{'case':7} {'columns':>7} {'failing rules':>13} | {'evaluator s':>11} "
        f"{'results s':>9} {'filter s':>9} {'ratios':>11} | {'evaluator cpu s':>15} "
        f"{'results cpu s':>13} {'filter cpu s':>12} {'ratios':>11} | "
        f"{'evaluator cpu ms/column':>23}"
    )
    print(header)
    print("-" * len(header))
    ratios: dict[str, dict[str, tuple[float, float]]] = {}
    for case in CASES:
        for width in columns:

            def run(method: str, case: str = case, width: int = width) -> dict[str, float]:
                arguments = (method, case, str(width), str(rows))
                return child_figures(__file__, *arguments, label=f"{method} {case} {width}")

            found = interleaved(METHODS, repeat, run)
            ours, full, theirs = found["evaluator"], found["results"], found["filter"]
            if not ours["failed"] == full["failed"] == theirs["failed"]:
                raise SystemExit(f"{case} {width}: failing-row counts differ from Dataframely's")
            ratios[case] = {
                method: (
                    found[method]["seconds"] / theirs["seconds"],
                    found[method]["cpu_seconds"] / theirs["cpu_seconds"],
                )
                for method in ("evaluator", "results")
            }
            (wall, cpu), (full_wall, full_cpu) = ratios[case].values()
            print(
                f"{case:7} {width:>7} {int(ours['rules']):>13} | {ours['seconds']:11.2f} "
                f"{full['seconds']:9.2f} {theirs['seconds']:9.2f} {wall:5.2f} {full_wall:5.2f} | "
                f"{ours['cpu_seconds']:15.2f} {full['cpu_seconds']:13.2f} "
                f"{theirs['cpu_seconds']:12.2f} {cpu:5.2f} {full_cpu:5.2f} | "
                f"{ours['cpu_seconds'] * 1000 / width:23.2f}",
                flush=True,
            )
    widest = max(columns)
    for case, by_method in ratios.items():
        for method, (wall, cpu) in by_method.items():
            target = TARGET if method == "evaluator" else RESULTS_TARGET
            print(
                f"{case}: {method} {wall:.2f}x Schema.filter's time ({cpu:.2f}x its CPU time) "
                f"at {widest} columns (target <= {target}x)"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--columns", type=int, nargs="+", default=[100, 250, 500, 1000])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (median)")
    dispatch(
        parser,
        measure,
        lambda a: main(sorted(a.columns), a.rows, a.repeat),
        ("METHOD", "CASE", "COLUMNS", "ROWS"),
    )
