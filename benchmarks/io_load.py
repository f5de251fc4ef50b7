"""Benchmark: memory of a lazy load through `dd.ParquetIOManager`, which scans an open file.

    .venv/bin/python benchmarks/io_load.py [--rows 10_000_000 40_000_000] [--repeat 3]

Writes parquet files of generated numbers (in a temporary directory deleted afterwards), then
measures, each in its own subprocess: a streaming aggregation over

- io manager: the `pl.LazyFrame` that `ParquetIOManager.load_input` hands an input typed
  `pl.LazyFrame` (a scan of the file it opened once);
- path scan: `pl.scan_parquet(path)`, the scan the loader handed over before it opened the file;
- read: `pl.read_parquet(path)`, the whole table in memory, for scale.

For each: seconds, peak RSS and peak RSS above the RSS before the load (median of `--repeat`).
Target: the io manager's scan streams like the path scan, its peak memory independent of the
table's size.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _measure import child_figures, dispatch, interleaved, measured

METHODS = ("io manager", "path scan", "read")


def generate(path: Path, rows: int) -> None:
    import polars as pl

    n = pl.col("n")
    pl.LazyFrame().select(n=pl.int_range(0, rows, dtype=pl.Int64)).select(
        a=(n * 2_654_435_761) % 1_000_003, b=n.hash(), c=(n.hash() % 97).cast(pl.Float64)
    ).sink_parquet(path, row_group_size=1_000_000)


def measure(method: str, path: str) -> dict[str, float]:
    import dagster as dg
    import polars as pl

    import dagster_dataframely as dd

    context = dg.build_input_context(
        asset_key=dg.AssetKey(Path(path).stem), dagster_type=dg.In(pl.LazyFrame).dagster_type
    )
    with measured() as figures:
        if method == "io manager":
            scan = dd.ParquetIOManager(base_dir=str(Path(path).parent)).load_input(context)
            assert isinstance(scan, pl.LazyFrame)
        elif method == "path scan":
            scan = pl.scan_parquet(path)
        else:
            scan = pl.read_parquet(path).lazy()
        totals = scan.select(pl.len(), pl.col("a").sum(), pl.col("b").max(), pl.col("c").mean())
        totals.collect(engine="streaming")
    return figures


def main(rows: list[int], repeat: int) -> None:
    header = f"{'rows':>5} | " + " | ".join(
        f"{m:>10} s {'peak MB':>8} {'above':>6}" for m in METHODS
    )
    print(header)
    print("-" * len(header))
    with tempfile.TemporaryDirectory(prefix="dd-bench-") as directory:
        for count in rows:
            path = Path(directory) / f"numbers_{count}.parquet"
            generate(path, count)
            found = interleaved(
                METHODS, repeat, lambda m, path=path: child_figures(__file__, m, str(path), label=m)
            )
            cells = [
                f"{f['seconds']:12.1f} {f['peak_mb']:8.0f} {f['above_start_mb']:6.0f}"
                for f in (found[m] for m in METHODS)
            ]
            print(f"{count // 1_000_000:>4}M | " + " | ".join(cells), flush=True)
            path.unlink()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000_000, 40_000_000])
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (median)")
    dispatch(parser, measure, lambda a: main(sorted(a.rows), a.repeat), ("METHOD", "PATH"))
