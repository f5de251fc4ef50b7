"""What `dd.asset(Schema, quarantine=True)` costs on a `pl.scan_parquet` LazyFrame, beside a
plain asset returning the same scan and beside Dataframely's own `Schema.filter` by hand.

Usage: `python benchmarks/gate_streaming.py [--rows 10000000 50000000] [--repeat 3]
[--before /work/main/src] [--key] [--clean] [--only VARIANT ...] [--shape SHAPE] [--dir DIR]`

Per size, writes a parquet file (kept in `--dir` for the next run): by default 6 narrow
columns in which about 1% of the rows break a rule (`amount < 0`; none with `--clean`); with
`--shape orders-duckdb` the order table of issue 40 (an id, an amount, a quantity, an e-mail
checked by a regex and a note checked by its length, about 1% of the rows breaking each
rule, no key), written by DuckDB's `COPY` with its default row groups, or with `--shape
orders-polars` the same rows written by polars. Then it measures each variant in a fresh
process (round-robin, the median of `--repeat`): CPU seconds (user + system) and peak RSS
(imports included), each run's figures printed as it ends. Variants:

- `plain @dg.asset`: returns the scan; `dd.ParquetIOManager` streams it to parquet;
- `Schema.filter + sink_parquet`: Dataframely's lazy filter, the valid rows and the failure
  info each written with `sink_parquet`, no Dagster;
- `dd.asset, quarantine`: `@dd.asset(Schema, quarantine=True)` returning the scan, both the
  table and its quarantine stored by `dd.ParquetIOManager`; once more with
  `statistics=False`, which shows what the statistics pass costs;
- `dd.asset, quarantine, scan prefiltered`: the same scan made with
  `pl.scan_parquet(parallel="prefiltered")` (polars' late materialization of the columns a
  pushed-down predicate does not read; its streaming engine already decodes so by default);
- `dd.asset, quarantine, table checks`: the same with `expect_rows=` and `expect_fresh=`
  (on `ordered_at`), judged from the gate's one streaming pass (issue 25: no second pass);
- `plain + dd.schema_checks`: the plain asset and the sidecar checking what it wrote, in one
  run (validation without a gate; with `--key` the sidecar's memory for the same key);
- `--only` measures the variants named (the plain asset always, as the ratios' base);
- with `--before DIR`, the same `dd.asset` run with the package's sources from `DIR` first on
  the path (e.g. the main branch), to show before and after side by side.

With `--key`, the schema's `id` column is its primary key (memory then grows with the number
of distinct keys, in the gate as in the sidecar and Dataframely). Targets (issue 23): the gate
at most 1.3x the plain asset's peak RSS and 1.4x its CPU, flat from the smallest size to the
largest within 1.1x; on the order table (issue 40), at 10M, 50M and 100M rows, at most 1.3x
the plain asset's peak and 1.6x its CPU. `docs/asset.md` ("A table with text") has the
figures.
"""

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

from _measure import child_figures, dispatch, interleaved, load_average, measured

FAILING_EVERY = 100  # one row in a hundred breaks `amount|min`
#: The sources: 6 narrow columns (polars' writer), or the order table of issue 40 written by
#: DuckDB or by polars.
SHAPES = ("lines", "orders-duckdb", "orders-polars")


def make_source(rows: int, path: Path, clean: bool = False, shape: str = "lines") -> None:
    """`rows` rows of `shape` (`SHAPES`), written in one streaming pass; with `clean`, no row
    breaks a rule."""
    if shape != "lines":
        _make_orders(rows, path, clean, writer=shape.removeprefix("orders-"))
        return
    import polars as pl

    i = pl.int_range(rows, dtype=pl.Int64)
    pl.LazyFrame().select(id=i).select(
        "id",
        amount=pl.when((pl.col("id") % FAILING_EVERY == 7) & pl.lit(not clean))
        .then(-1.0)
        .otherwise((pl.col("id") % 997).cast(pl.Float64)),
        quantity=(pl.col("id") % 50 + 1).cast(pl.Int32),
        sku=pl.format("SKU-{}", pl.col("id") % 1_000),
        shipped=pl.col("id") % 3 == 0,
        ordered_at=pl.datetime(2024, 1, 1) + pl.duration(seconds=pl.col("id")),
    ).sink_parquet(path)


#: The order table of issue 40, as SQL over `i` in `range(rows)`: about 1% of the rows break
#: each rule (`id` null, `amount` below 0 or above 1000, `quantity` null, 0 or 101, an
#: upper-case e-mail, a 25-character note), scattered through every row group; with `clean`
#: only the valid values (the nullable columns keep their nulls).
_ORDERS = {
    "id": ("i", "CASE WHEN i % 100 = 50 THEN NULL WHEN i % 200 = 3 THEN i - 1 ELSE i END"),
    "amount": (
        "CAST(CASE WHEN i % 50 = 7 THEN NULL ELSE (i % 1000) + 0.5 END AS DOUBLE)",
        "CAST(CASE WHEN i % 50 = 7 THEN NULL WHEN i % 200 = 11 THEN -5"
        " WHEN i % 200 = 111 THEN 1500 ELSE (i % 1000) + 0.5 END AS DOUBLE)",
    ),
    "quantity": (
        "CAST((i % 100) + 1 AS INTEGER)",
        "CAST(CASE WHEN i % 300 = 13 THEN NULL WHEN i % 300 = 113 THEN 0"
        " WHEN i % 300 = 213 THEN 101 ELSE (i % 100) + 1 END AS INTEGER)",
    ),
    "email": (
        "CASE WHEN i % 20 = 3 THEN NULL ELSE 'user.' || (i % 100000) || '@shop.com' END",
        "CASE WHEN i % 20 = 3 THEN NULL WHEN i % 100 = 29 THEN 'Bad.User@Shop.com'"
        " ELSE 'user.' || (i % 100000) || '@shop.com' END",
    ),
    "note": (
        "CASE WHEN i % 4 = 0 THEN NULL ELSE 'note ' || (i % 10000000) END",
        "CASE WHEN i % 4 = 0 THEN NULL WHEN i % 100 = 37 THEN 'a note of 25 characters..'"
        " ELSE 'note ' || (i % 10000000) END",
    ),
}


def _make_orders(rows: int, path: Path, clean: bool, writer: str) -> None:
    """The order table written by DuckDB's `COPY ... (FORMAT parquet)` (its default row
    groups); for `writer="polars"`, that file rewritten by polars' `sink_parquet` (the same
    rows in polars' row groups and encodings)."""
    import duckdb

    if writer == "polars":
        written = path.with_name(path.name.replace("orders-polars", "orders-duckdb"))
        if not written.exists():
            _make_orders(rows, written, clean, "duckdb")
        import polars as pl

        pl.scan_parquet(written).sink_parquet(path)
        return
    columns = ", ".join(f"{sql[not clean]} AS {name}" for name, sql in _ORDERS.items())
    with duckdb.connect() as connection:
        connection.execute(
            f"COPY (SELECT {columns} FROM range({rows}) AS t(i)) TO '{path}' (FORMAT parquet)"
        )


def schema(key: bool, shape: str = "lines") -> type:
    import dataframely as dy

    if shape != "lines":

        class Orders(dy.Schema):
            """An order table with text columns and no key (issue 40)."""

            id = dy.Int64(nullable=False)
            amount = dy.Float64(nullable=True, min=0, max=1_000)
            quantity = dy.Int32(nullable=False, min=1, max=100)
            email = dy.String(nullable=True, regex=r"^[a-z0-9.]+@[a-z]+\.[a-z]+$")
            note = dy.String(nullable=True, max_length=12)

        return Orders

    class Lines(dy.Schema):
        """A narrow order line."""

        id = dy.Int64(primary_key=key)
        amount = dy.Float64(min=0)
        quantity = dy.Int32(min=1, max=1_000)
        sku = dy.String(max_length=12)
        shipped = dy.Bool()
        ordered_at = dy.Datetime()

    return Lines


def source_path(root: Path, rows: int, clean: bool, shape: str) -> Path:
    """Where under `root` the source of `rows` rows of `shape` is kept, to be reused."""
    name = "source" if shape == "lines" else shape
    return root / f"{name}-{rows}{'-clean' if clean else ''}.parquet"


def measure(variant: str, source: str, store: str, key: str, shape: str) -> dict[str, float]:
    import dagster as dg
    import polars as pl

    import dagster_dataframely as dd

    Lines = schema(key == "key", shape)
    shutil.rmtree(store, ignore_errors=True)
    io = dd.ParquetIOManager(base_dir=store)
    if variant == "dataframely":
        with measured() as figures:
            good, failure = Lines.filter(pl.scan_parquet(source))
            os.makedirs(store)
            good.sink_parquet(os.path.join(store, "lines.parquet"))
            failure.sink_parquet(os.path.join(store, "lines_failure.parquet"))
        return figures

    @dg.asset(name="lines")
    def plain() -> pl.LazyFrame:
        return pl.scan_parquet(source)

    table_checks: dict = {}
    if variant == "gated-table":
        table_checks["expect_rows"] = dd.ExpectRows(min=1)
        if shape == "lines":  # the order table has no time column
            table_checks["expect_fresh"] = dd.ExpectFresh("ordered_at", within="100000d")

    scan = {"parallel": "prefiltered"} if variant == "gated-prefiltered" else {}

    @dd.asset(
        Lines,
        quarantine=True,
        name="lines",
        statistics=variant != "gated-nostats",
        **table_checks,
    )
    def gated() -> pl.LazyFrame:
        return pl.scan_parquet(source, **scan)

    assets: list = [plain] if variant == "plain" else [gated]
    if variant == "sidecar":
        assets = [plain, dd.schema_checks(Lines, asset="lines", blocking=False)]
    with measured() as figures:
        result = dg.materialize(assets, resources={"io_manager": io})
    assert result.success
    return figures


VARIANTS = {
    "plain @dg.asset": "plain",
    "Schema.filter + sink_parquet": "dataframely",
    "dd.asset, quarantine": "gated",
    "dd.asset, quarantine, statistics=False": "gated-nostats",
    "dd.asset, quarantine, scan prefiltered": "gated-prefiltered",
    "dd.asset, quarantine, table checks": "gated-table",
    "plain + dd.schema_checks": "sidecar",
}


def main(args: argparse.Namespace) -> None:
    here = str(Path(__file__).resolve())
    root = Path(args.dir or tempfile.mkdtemp(prefix="gate-streaming-"))
    root.mkdir(parents=True, exist_ok=True)
    variants = {
        name: variant
        for name, variant in VARIANTS.items()
        if not args.only or variant == "plain" or variant in args.only
    }
    envs: dict[str, dict[str, str] | None] = dict.fromkeys(variants)
    if args.before:
        variants["dd.asset, quarantine (before)"] = "gated"
        envs["dd.asset, quarantine (before)"] = {**os.environ, "PYTHONPATH": args.before}
    key = "key" if args.key else "nokey"
    if args.key and args.shape != "lines":
        sys.exit("--key needs --shape lines: the order table has no key")
    print(
        f"load average {load_average()}; shape: {args.shape}; primary key: {args.key}; "
        f"clean: {args.clean}",
        flush=True,
    )
    peaks: dict[str, list[float]] = {name: [] for name in variants}
    try:
        for rows in args.rows:
            source = source_path(root, rows, args.clean, args.shape)
            if not source.exists():
                make_source(rows, source, args.clean, args.shape)
            found = interleaved(
                variants,
                args.repeat,
                lambda name, rows=rows, source=source: _shown(
                    f"{name} at {rows:,} rows",
                    child_figures(
                        here,
                        variants[name],
                        str(source),
                        str(root / "store"),
                        key,
                        args.shape,
                        label=f"{name} at {rows:,} rows",
                        env=envs[name],
                    ),
                ),
                pick=_median,
            )
            plain = found["plain @dg.asset"]
            print(f"\n{rows:,} rows ({source.stat().st_size / 2**20:.0f} MB of parquet)")
            print(f"{'variant':40} {'CPU s':>7} {'x plain':>8} {'peak MB':>8} {'x plain':>8}")
            for name, figures in found.items():
                peaks[name].append(figures["peak_mb"])
                print(
                    f"{name:40} {figures['cpu_seconds']:7.1f} "
                    f"{figures['cpu_seconds'] / plain['cpu_seconds']:8.2f} "
                    f"{figures['peak_mb']:8.0f} {figures['peak_mb'] / plain['peak_mb']:8.2f}",
                    flush=True,
                )
        if len(args.rows) > 1:
            print(f"\npeak RSS, largest size over smallest ({args.rows[-1]:,} / {args.rows[0]:,})")
            for name, found_peaks in peaks.items():
                print(f"{name:40} {found_peaks[-1] / found_peaks[0]:8.2f}")
    finally:
        if not args.dir:
            shutil.rmtree(root, ignore_errors=True)
    print(f"\nload average {load_average()}")


def _shown(label: str, figures: dict[str, float]) -> dict[str, float]:
    """`figures`, printed as they come: a run's own figures, for the spread of the medians."""
    print(f"  run: {label}: {figures['cpu_seconds']:.1f} s CPU, {figures['peak_mb']:.0f} MB")
    return figures


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--before", help="sources of the package to compare with (a src dir)")
    parser.add_argument("--key", action="store_true", help="make `id` the primary key")
    parser.add_argument("--clean", action="store_true", help="a source no row of breaks a rule")
    parser.add_argument(
        "--only", nargs="+", choices=sorted(set(VARIANTS.values())), help="variants to measure"
    )
    parser.add_argument("--shape", choices=SHAPES, default="lines", help="the source's columns")
    parser.add_argument("--dir", help="keep sources here (default: a temporary directory)")
    dispatch(parser, measure, main, ("VARIANT", "SOURCE", "STORE", "KEY", "SHAPE"))
