"""Benchmark: the sidecar's evaluation vs reading the table and calling `Schema.filter`.

    .venv/bin/python benchmarks/sidecar.py [--rows 10_000_000 50_000_000]
        [--methods sidecar filter sidecar+checks main:sidecar] [--baseline-src ../main/src]

Writes parquet files of generated order events (polars, in a temporary directory that is
deleted afterwards), then measures, each in its own subprocess with the same imports:

- sidecar: `check_results` on the `pl.scan_parquet` scan `dd.ParquetIOManager` hands a
  check (an input typed `pl.LazyFrame`), i.e. what a `dd.schema_checks` step evaluates;
- filter: `pl.read_parquet` + `Schema.filter(cast=False)` + `failure.counts()`;
- sidecar+checks: the sidecar with a tolerance on every rule, a row-count check and a
  freshness check on `created_at` (issue 25: within 3% of the sidecar's CPU and peak memory);
- `main:<method>`: that method on the sources of `--baseline-src` (another checkout's `src`).

For each: seconds after imports, peak RSS of the process, and peak RSS above the RSS right
after imports, each the median of `--repeat` runs. Two schemas: one without a primary key,
one with (grouped counts); the key's peak memory over the no-key one is printed at each size
(issue 19: at most 1.3x at 10M rows).
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Iterator
from pathlib import Path

from _measure import child_figures, dispatch, interleaved, load_average, measured
from _table_checks import BASELINE, checked_settings, variant_env

CHUNK = 5_000_000
TARGETS = {
    "no_pk": {"time": 0.5, "memory": 0.25},
    "pk": {"time": 0.9, "memory": 0.6},
}


def schemas() -> dict[str, type]:
    import dataframely as dy
    import polars as pl

    class Events(dy.Schema):
        event_id = dy.Int64()
        email = dy.String(regex=r"^[a-z0-9]+@example\.com$")
        country = dy.String(min_length=2, max_length=2)
        status = dy.Enum(["new", "paid", "shipped"])
        amount = dy.Float64(nullable=True, min=0, max=10_000)
        created_at = dy.Datetime(time_zone="UTC")
        note = dy.String(nullable=True, max_length=40)

        @dy.rule()
        def paid_has_amount(cls) -> pl.Expr:
            return (cls.status.col == "new") | cls.amount.col.is_not_null()

    class KeyedEvents(Events):
        event_id = dy.Int64(primary_key=True)

    return {"no_pk": Events, "pk": KeyedEvents}


# ------------------------------------- data ------------------------------------- #


def generate(path: Path, rows: int) -> None:
    """`rows` events, about 1% failing some rule, written chunk by chunk."""
    import polars as pl

    parts = []
    for start in range(0, rows, CHUNK):
        part = path.with_suffix(f".part{start // CHUNK}.parquet")
        _chunk(start, min(start + CHUNK, rows)).write_parquet(part)
        parts.append(part)
    pl.scan_parquet(parts).sink_parquet(path)
    for part in parts:
        part.unlink()


def _chunk(start: int, stop: int) -> object:
    import polars as pl

    n = pl.col("event_id")
    spread = (n * 2_654_435_761) % 10_000  # a cheap, deterministic scatter
    frame = pl.select(pl.int_range(start, stop, dtype=pl.Int64).alias("event_id"))
    return frame.with_columns(
        email=pl.format("user{}@example.com", n % 250_000),
        country=pl.when(spread == 7).then(pl.lit("DEU")).otherwise(pl.lit("DE")),
        status=pl.when(spread < 3_000)
        .then(pl.lit("new"))
        .when(spread < 8_000)
        .then(pl.lit("paid"))
        .otherwise(pl.lit("shipped"))
        .cast(pl.Enum(["new", "paid", "shipped"])),
        amount=pl.when(spread % 97 == 0)
        .then(None)
        .when(spread == 13)
        .then(-1.0)
        .otherwise((spread % 500).cast(pl.Float64) + 0.99),
        created_at=(pl.lit(1_700_000_000_000_000) + n * 1_000_000)
        .cast(pl.Datetime("us"))
        .dt.replace_time_zone("UTC"),
        note=pl.when(spread % 10 == 0).then(pl.lit("leave at the door")).otherwise(None),
    ).with_columns(
        # a repeated key every 100k rows, so the primary key has failures too
        event_id=pl.when(n % 100_000 == 99_999).then(n - 1).otherwise(n),
    )


# ---------------------------------- measurements ---------------------------------- #


def measure(method: str, schema_name: str, path: str) -> dict[str, float]:
    """Run one method in this process and report its time and memory (JSON on stdout)."""
    import dagster as dg
    import polars as pl

    import dagster_dataframely as dd

    schema = schemas()[schema_name]
    base_dir = str(Path(path).parent)
    key = dg.AssetKey(Path(path).stem)
    # What a check step's input would get: an input typed `pl.LazyFrame` (built before the
    # clock starts; it is Dagster's bookkeeping, not evaluation).
    context = dg.build_input_context(asset_key=key, dagster_type=dg.In(pl.LazyFrame).dagster_type)
    with measured() as figures:
        if method.startswith("sidecar"):
            extra = checked_settings(schema, "created_at") if method == "sidecar+checks" else {}
            scan = dd.ParquetIOManager(base_dir=base_dir).load_input(context)
            assert isinstance(scan, pl.LazyFrame)
            results = list(dd.wiring.check_results(schema, scan, asset_key=key, **extra))
            failed = {
                r.check_name: r.metadata["dy_failed_count"].value
                for r in results
                if "dy_failed_count" in r.metadata
            }
        else:
            frame = pl.read_parquet(path)
            _, failure = schema.filter(frame, cast=False)
            failed = failure.counts()
    return {
        **figures,
        "failed": sum(int(v) for v in failed.values()),  # type: ignore[call-overload]
    }


def _median_runs(
    name: str, path: Path, repeat: int, methods: list[str], baseline: str | None
) -> dict[str, dict[str, float]]:
    """Each method `repeat` times, interleaved so background load hits them alike; the
    median of each figure."""

    def run(variant: str) -> dict[str, float]:
        method, env = variant_env(variant, baseline)
        return child_figures(__file__, method, name, str(path), label=variant, env=env)

    return interleaved(methods, repeat, run)


def main(rows: list[int], repeat: int, methods: list[str], baseline: str | None) -> None:
    if methods != ["sidecar", "filter"]:
        _compare(rows, repeat, methods, baseline)
        return
    rows_by_size: dict[str, dict[int, dict[str, dict[str, float]]]] = {}
    header = (
        f"{'schema':6} {'rows':>6} | {'sidecar s':>9} {'filter s':>9} {'ratio':>6} | "
        f"{'sidecar MB':>10} {'filter MB':>10} {'ratio':>6} | {'above imports MB':>17}"
    )
    print(header)
    print("-" * len(header))
    for count, path in _tables(rows):
        for name in TARGETS:
            medians = _median_runs(name, path, repeat, ["sidecar", "filter"], None)
            side, base = medians["sidecar"], medians["filter"]
            rows_by_size.setdefault(name, {})[count] = {"sidecar": side, "filter": base}
            print(
                f"{name:6} {count // 1_000_000:>5}M | {side['seconds']:9.2f} "
                f"{base['seconds']:9.2f} {side['seconds'] / base['seconds']:6.2f} | "
                f"{side['peak_mb']:10.0f} {base['peak_mb']:10.0f} "
                f"{side['peak_mb'] / base['peak_mb']:6.2f} | "
                f"{side['above_start_mb']:7.0f} vs {base['above_start_mb']:7.0f}",
                flush=True,
            )
    _verdict(rows_by_size, rows)


def _tables(rows: list[int]) -> Iterator[tuple[int, Path]]:
    """A generated parquet table of each size in `rows`, deleted after its turn."""
    with tempfile.TemporaryDirectory(prefix="dd-bench-") as directory:
        for count in rows:
            path = Path(directory) / f"events_{count}.parquet"
            generate(path, count)
            yield count, path
            path.unlink()


def _compare(rows: list[int], repeat: int, methods: list[str], baseline: str | None) -> None:
    """Each of `methods` side by side, CPU and peak memory against the first method."""
    header = (
        f"{'schema':6} {'rows':>6} {'method':16} | {'s':>7} {'cpu s':>7} {'peak MB':>8} | "
        f"vs {methods[0]}"
    )
    print(f"load average before: {load_average()}")
    print(header)
    print("-" * len(header))
    for count, path in _tables(rows):
        for name in TARGETS:
            medians = _median_runs(name, path, repeat, methods, baseline)
            assert len({m["failed"] for m in medians.values()}) == 1, medians
            first = medians[methods[0]]
            for method, m in medians.items():
                print(
                    f"{name:6} {count // 1_000_000:>5}M {method:16} | {m['seconds']:7.2f} "
                    f"{m['cpu_seconds']:7.2f} {m['peak_mb']:8.0f} | cpu "
                    f"{m['cpu_seconds'] / first['cpu_seconds']:.3f}x, peak "
                    f"{m['peak_mb'] / first['peak_mb']:.3f}x",
                    flush=True,
                )
    print(f"load average after: {load_average()}; medians of {repeat} interleaved runs")


def _verdict(results: dict[str, dict[int, dict[str, dict[str, float]]]], rows: list[int]) -> None:
    print()
    smallest, largest = min(rows), max(rows)
    for name, target in TARGETS.items():
        run = results[name][smallest]
        time_ratio = run["sidecar"]["seconds"] / run["filter"]["seconds"]
        memory_ratio = run["sidecar"]["peak_mb"] / run["filter"]["peak_mb"]
        print(
            f"{name}: time {time_ratio:.2f}x (target <= {target['time']}x), peak memory "
            f"{memory_ratio:.2f}x (target <= {target['memory']}x) at {smallest // 1_000_000}M rows"
        )
        if name == "no_pk" and largest != smallest:
            growth = results[name][largest]["sidecar"]["peak_mb"] / run["sidecar"]["peak_mb"]
            print(
                f"{name}: sidecar peak memory at {largest // 1_000_000}M rows is {growth:.2f}x "
                f"that at {smallest // 1_000_000}M (target <= 1.3x)"
            )
        if name == "pk":
            keyed = {r: results["pk"][r]["sidecar"]["peak_mb"] for r in rows}
            ratios = ", ".join(
                f"{keyed[r] / results['no_pk'][r]['sidecar']['peak_mb']:.2f}x at "
                f"{r // 1_000_000}M rows"
                for r in rows
            )
            print(f"pk: sidecar peak memory with the key over without: {ratios} (target <= 1.3x)")
        counts = {r: results[name][r]["sidecar"]["failed"] for r in rows}
        same = all(counts[r] == results[name][r]["filter"]["failed"] for r in rows)
        print(f"{name}: failing-row counts equal Dataframely's: {same} {counts}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000_000, 50_000_000])
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (median)")
    methods = ["sidecar", "filter", "sidecar+checks"]
    parser.add_argument(
        "--methods",
        nargs="+",
        choices=[*methods, *(BASELINE + m for m in methods[:2])],
        default=methods[:2],
    )
    parser.add_argument("--baseline-src", help="the src folder main: variants run on")
    dispatch(
        parser,
        measure,
        lambda a: main(sorted(a.rows), a.repeat, a.methods, a.baseline_src),
        ("METHOD", "SCHEMA", "PATH"),
    )
