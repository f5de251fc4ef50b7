"""What `dd.asset` costs over a plain `@dg.asset` that returns the same frame.

Usage: `python benchmarks/asset_overhead.py [--rows 10000000] [--repeat 3] [--dir DIR]`

Writes a frame of `OrdersSchema` order lines to a temporary parquet file (every row valid),
plus a copy in which one row in a thousand breaks an `"error"` rule. Each variant then runs in
its own subprocess, so its peak memory is its own: one `dg.materialize` of an asset that
reads the parquet file and returns the frame. The value is stored by Dagster's default
filesystem IO manager (what the targets are about), and once more by an IO manager that
discards it, which isolates what validation itself costs. Reported per variant: Dagster's
step duration (best of `--repeat` runs), its ratio to the plain asset with the same storage,
the CPU seconds the run used (a steadier measure on a busy machine), and the process's peak
RSS (the RSS after imports, ~130 MB, is in every figure), each with its ratio.

Targets (issue 3): `dd.asset` at most 1.5x the plain asset's step time and 2x its peak RSS.
"""

import argparse
import os
import shutil
import tempfile
from pathlib import Path

from _measure import child_figures, dispatch, interleaved, measured, run_child

#: label -> (asset kind, frame, storage)
VARIANTS = {
    "plain @dg.asset": ("plain", "valid", "filesystem"),
    "dd.asset": ("gated", "valid", "filesystem"),
    "dd.asset, quarantine, 0.1% error rows": ("quarantine", "defective", "filesystem"),
    "plain @dg.asset, value discarded": ("plain", "valid", "discard"),
    "dd.asset, value discarded": ("gated", "valid", "discard"),
}


def make_frames(rows: int, directory: Path) -> None:
    """Order lines valid under `OrdersSchema`, and a copy with one error row in a thousand."""
    import polars as pl

    from dagster_dataframely.data import STATUSES

    i = pl.col("i")
    status = (i % 4).replace_strict(dict(enumerate(STATUSES)), return_dtype=pl.Enum(STATUSES))
    ordered_at = pl.datetime(2024, 1, 1, time_zone="UTC") + pl.duration(minutes=i % 500_000)
    frame = (
        pl.select(i=pl.int_range(rows, dtype=pl.Int64))
        .with_columns(status=status, ordered_at=ordered_at)
        .select(
            order_id=pl.format("ORD-{}", (i // 100 % 100_000).cast(pl.String).str.zfill(5)),
            line=i % 100 + 1,
            line_item_id=i,
            sku=pl.format("SKU-{}", i % 1_000),
            customer_email=pl.format("c{}@example.com", i % 50_000),
            status=pl.col("status"),
            amount=(i % 4_999 + 1).cast(pl.Float64),
            ordered_at=pl.col("ordered_at"),
            shipped_on=pl.when(pl.col("status") == "shipped").then(
                pl.col("ordered_at").dt.date() + pl.duration(days=1)
            ),
            note=pl.when(i % 10 == 0).then(pl.lit("gift wrap")),
        )
    )
    frame.write_parquet(directory / "valid.parquet")
    broken = pl.when(pl.col("line_item_id") % 1_000 == 0).then(-1.0).otherwise("amount")
    frame.with_columns(amount=broken).write_parquet(directory / "defective.parquet")


def child(kind: str, source: str, storage: str, io: str) -> dict[str, float]:
    """One run of one variant, and its figures."""
    import dagster as dg
    import polars as pl

    import dagster_dataframely as dd
    from dagster_dataframely.data import OrdersSchema

    if kind == "plain":

        @dg.asset
        def orders() -> pl.DataFrame:
            return pl.read_parquet(source)

    else:

        @dd.asset(OrdersSchema, quarantine=kind == "quarantine")
        def orders() -> pl.DataFrame:
            return pl.read_parquet(source)

    class Discard(dg.IOManager):
        def handle_output(self, context: dg.OutputContext, obj: object) -> None:
            pass

        def load_input(self, context: dg.InputContext) -> None:
            raise NotImplementedError

    io_manager = (
        dg.FilesystemIOManager(base_dir=str(storage))
        if io == "filesystem"
        else dg.IOManagerDefinition.hardcoded_io_manager(Discard())
    )
    with measured() as figures:
        result = dg.materialize([orders], resources={"io_manager": io_manager})
    (step,) = result.get_step_success_events()
    return {
        "step_seconds": step.event_specific_data.duration_ms / 1000,
        "cpu_seconds": figures["cpu_seconds"],
        "peak_rss_mb": figures["peak_mb"],
    }


def main(args: argparse.Namespace) -> None:
    if args.make:
        make_frames(args.rows, Path(args.make))
        return

    # Every step runs in a fresh process (`_measure`), so its peak RSS is its own. Runs go
    # round-robin over the variants, and each run's stored value is deleted after it (on
    # tmpfs it would hold memory).
    with tempfile.TemporaryDirectory(dir=args.dir) as temp:
        directory = Path(temp)
        run_child(
            __file__, "--rows", str(args.rows), "--make", str(directory), label="making the frames"
        )

        def run(label: str) -> dict[str, float]:
            kind, data, io = VARIANTS[label]
            storage = directory / "storage"
            source = directory / f"{data}.parquet"
            try:
                return child_figures(__file__, kind, str(source), str(storage), io, label=label)
            finally:
                shutil.rmtree(storage, ignore_errors=True)

        figures = interleaved(VARIANTS, args.repeat, run, pick=min)

    load = " ".join(f"{n:.1f}" for n in os.getloadavg())
    print(f"{args.rows:,} rows of OrdersSchema, best of {args.repeat} runs per variant, ", end="")
    print(f"{os.cpu_count()} CPUs, load average {load}\n")
    header = f"{'variant':<40}{'step s':>8}{'x':>6}{'CPU s':>8}{'x':>6}{'peak RSS MB':>13}{'x':>6}"
    print(header)
    print("-" * len(header))
    for label, (_, _, io) in VARIANTS.items():
        row = figures[label]
        plain = figures["plain @dg.asset" + ("" if io == "filesystem" else ", value discarded")]
        print(
            f"{label:<40}"
            + "".join(
                f"{row[name]:>{width}.{digits}f}{row[name] / plain[name]:>6.2f}"
                for name, width, digits in (
                    ("step_seconds", 8, 2),
                    ("cpu_seconds", 8, 2),
                    ("peak_rss_mb", 13, 0),
                )
            )
        )
    print("\nx: ratio to the plain asset with the same storage (targets: step 1.5, RSS 2)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=3, help="runs per variant; best is shown")
    parser.add_argument(
        "--dir",
        default="/dev/shm" if Path("/dev/shm").is_dir() else None,
        help="where frames and stored values go (default: tmpfs where there is one, so disk "
        "write-back does not drown the figures)",
    )
    parser.add_argument("--make", metavar="DIR", help=argparse.SUPPRESS)
    dispatch(parser, child, main, ("KIND", "SOURCE", "STORAGE", "IO"))
