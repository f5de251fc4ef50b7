"""What `trends=` costs a gated asset: one read of the instance and the band, per run.

Usage: `python benchmarks/gate_trends.py [--rows 5000000] [--history 20] [--repeat 3]`

Writes `--rows` order lines of `OrdersSchema` (every row valid, `asset_overhead`'s frame) to
a temporary parquet file.
Each variant runs in its own process (`_measure`), round-robin: a fresh SQLite instance (a
DAGSTER_HOME as `dagster dev` makes one) that holds `--history` past evaluations of the
asset's `dy_table__trends` (each with every rule's figure, the worst case), then one
`dg.materialize` of `dd.asset(OrdersSchema)` reading the file, with and without
`trends=dd.Trends(window=--history)`. Prints the run's seconds, CPU seconds and peak RSS per
variant (medians), and the ratio of the trended run to the plain gate.
"""

import argparse
import tempfile
from pathlib import Path

from _measure import child_figures, closing, dispatch, interleaved, measured, opening, run_child
from asset_overhead import make_frames

VARIANTS = ("dd.asset", "dd.asset, trends")


def child(variant: str, source: str, history: str) -> dict[str, float]:
    """One run of one variant over a fresh instance holding `history` past evaluations."""
    import dagster as dg
    import polars as pl

    import dagster_dataframely as dd
    from dagster_dataframely._checks.history_internals import FIGURES
    from dagster_dataframely._engine.trends import ROWS
    from dagster_dataframely.data import OrdersSchema

    trends = dd.Trends(window=int(history)) if variant.endswith("trends") else None

    @dd.asset(OrdersSchema, name="orders", trends=trends)
    def orders() -> pl.DataFrame:
        return pl.read_parquet(source)

    names = [rule.name for rule in dd.wiring.rules(OrdersSchema)]
    with tempfile.TemporaryDirectory() as home, dg.DagsterInstance.local_temp(home) as instance:
        for run in range(int(history)):
            figures = {ROWS: 1_000_000.0 + run, **dict.fromkeys(names, 0.0001)}
            instance.report_runless_asset_event(
                dg.AssetCheckEvaluation(
                    asset_key=dg.AssetKey("orders"),
                    check_name="dy_table__trends",
                    passed=True,
                    metadata={FIGURES: dg.MetadataValue.json(figures)},
                )
            )
        storage = dg.FilesystemIOManager(base_dir=str(Path(home) / "storage"))
        with measured() as found:
            result = dg.materialize([orders], instance=instance, resources={"io_manager": storage})
    assert result.success
    return found


def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as temp:
        source = str(Path(temp) / "valid.parquet")
        run_child(__file__, "--rows", str(args.rows), "--make", temp, label="making the frame")

        def run(variant: str) -> dict[str, float]:
            return child_figures(__file__, variant, source, str(args.history), label=variant)

        opening(f"{'variant':<18} | {'s':>6} {'cpu s':>6} {'peak MB':>8}")
        figures = interleaved(VARIANTS, args.repeat, run)
    for variant, found in figures.items():
        print(
            f"{variant:<18} | {found['seconds']:6.2f} {found['cpu_seconds']:6.2f} "
            f"{found['peak_mb']:8.0f}"
        )
    plain, trended = (figures[v] for v in VARIANTS)
    print(
        f"trends / plain: CPU {trended['cpu_seconds'] / plain['cpu_seconds']:.3f}x, "
        f"peak {trended['peak_mb'] / plain['peak_mb']:.3f}x ({args.rows:,} rows, "
        f"{args.history} past evaluations)"
    )
    closing(args.repeat)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--history", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--make", help=argparse.SUPPRESS)

    def maybe_make(args: argparse.Namespace) -> None:
        if args.make:
            make_frames(args.rows, Path(args.make))
        else:
            main(args)

    dispatch(parser, child, maybe_make, ("VARIANT", "SOURCE", "HISTORY"))
