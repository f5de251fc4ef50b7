"""Benchmark: a Pandera model's checks evaluated by the sidecar vs Pandera's own `validate`.

    .venv/bin/python benchmarks/pandera_validate.py [--rows 10_000_000] [--repeat 3]

(Not `benchmarks/pandera.py`: run as a script, that file would shadow the `pandera` package.)

Writes a parquet file of generated order events (`sidecar.generate`, about 1% of rows failing
some check) into a temporary directory that is deleted afterwards, then measures, each in a
process of its own with the same imports (dagster, dagster_dataframely, pandera.polars):

- sidecar: `dd.wiring.check_results(model, pl.scan_parquet(path), asset_key=...)`, what a
  `dd.schema_checks` step evaluates on the scan `dd.ParquetIOManager` hands it (the model's
  translation included);
- pandera, scan: `model.validate(pl.scan_parquet(path), lazy=True)` at validation depth
  `SCHEMA_AND_DATA` (on a LazyFrame Pandera checks only the schema by default);
- pandera, frame: `model.validate(pl.read_parquet(path), lazy=True)`, the read included.

One-time costs are paid before the clock starts, by a run on an empty frame: the model's
translation for the sidecar, Pandera's registration of its polars backends for Pandera.

For each: seconds after imports and the process's peak RSS (imports included), each the
median of `--repeat` interleaved runs, and the sidecar's ratio to each Pandera variant.
Two models of built-in checks and one traceable dataframe check: one without and one with
a `unique` column (a grouped count, whose memory grows with the distinct keys).
Targets (issue 5): the sidecar at least 2x faster than Pandera, and at most 0.5x its memory.
"""

# No `from __future__ import annotations`: Pandera reads the models' annotations at runtime,
# and `pl` is imported inside `models()`.
import argparse
import datetime as dt
import os
import tempfile
import warnings
from pathlib import Path
from typing import Any

from _measure import child_figures, dispatch, interleaved, measured

TARGETS = {"time": 0.5, "memory": 0.5}
METHODS = {
    "sidecar": "sidecar (scan)",
    "pandera_scan": "pandera, scan",
    "pandera_frame": "pandera, frame",
}
STATUSES = ["new", "paid", "shipped"]


def models() -> dict[str, Any]:
    import pandera.polars as pa
    import polars as pl
    from pandera.api.polars.types import PolarsData

    class Events(pa.DataFrameModel):
        """Order events, one row per event."""

        event_id: int = pa.Field(ge=0)
        email: str = pa.Field(str_matches=r"[a-z0-9]+@example\.com$")
        country: str = pa.Field(str_length={"min_value": 2, "max_value": 2}, isin=["DE", "FR"])
        status: pl.Enum(STATUSES)  # type: ignore[valid-type]
        amount: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": 10_000})
        created_at: pl.Datetime("us", "UTC") = pa.Field(  # type: ignore[valid-type]
            ge=dt.datetime(2023, 1, 1, tzinfo=dt.timezone.utc)
        )
        note: str = pa.Field(nullable=True, str_length={"max_value": 40}, raise_warning=True)

        @pa.dataframe_check
        def paid_has_amount(cls, data: PolarsData) -> pl.LazyFrame:
            """A paid or shipped event has an amount."""
            return data.lazyframe.select(
                (pl.col("status") == "new") | pl.col("amount").is_not_null()
            )

    class KeyedEvents(Events):
        event_id: int = pa.Field(ge=0, unique=True)

    return {"no_key": Events, "unique": KeyedEvents}


# ---------------------------------- measurements ---------------------------------- #


def measure(method: str, model_name: str, path: str) -> dict[str, float]:
    """Run one method in this process; its figures, and the failures it found that an
    error check reports (warning checks left out on both sides)."""
    import dagster as dg
    import polars as pl
    from pandera.config import ValidationDepth, config_context
    from pandera.errors import SchemaErrors, SchemaWarning

    import dagster_dataframely as dd

    model = models()[model_name]
    warnings.simplefilter("ignore", SchemaWarning)

    def sidecar(frame: pl.DataFrame | pl.LazyFrame) -> int:
        results = dd.wiring.check_results(model, frame, asset_key="events")
        return sum(
            r.metadata["dy_failed_count"].value  # type: ignore[misc]
            for r in results
            if not r.passed and r.severity == dg.AssetCheckSeverity.ERROR
        )

    def pandera(frame: pl.DataFrame | pl.LazyFrame) -> int:
        with config_context(validation_depth=ValidationDepth.SCHEMA_AND_DATA):
            try:
                model.validate(frame, lazy=True)
            except SchemaErrors as errors:
                return errors.failure_cases.height
        return 0

    # One-time costs stay off the clock: the model's translation (sidecar) and the
    # registration of Pandera's polars backends on first use (about 0.4 s).
    validate = sidecar if method == "sidecar" else pandera
    validate(pl.scan_parquet(path).head(0))
    with measured() as figures:
        if method == "pandera_frame":
            failures = validate(pl.read_parquet(path))
        else:
            failures = validate(pl.scan_parquet(path))
    return {**figures, "failures": failures}


def _medians(model: str, path: Path, repeat: int) -> dict[str, dict[str, float]]:
    """The median figures of each method on `model`, from `repeat` interleaved runs."""

    def run(method: str) -> dict[str, float]:
        label = f"{METHODS[method]} ({model})"
        return child_figures(__file__, method, model, str(path), label=label)

    return interleaved(METHODS, repeat, run)


def main(rows: int, repeat: int) -> None:
    from sidecar import generate

    with tempfile.TemporaryDirectory(prefix="dd-bench-pandera-") as directory:
        path = Path(directory) / "events.parquet"
        generate(path, rows)
        figures = {model: _medians(model, path, repeat) for model in models()}

    load = " ".join(f"{n:.1f}" for n in os.getloadavg())
    print(f"{rows:,} rows, median of {repeat} runs, {os.cpu_count()} CPUs, load {load}\n")
    header = (
        f"{'model':8}{'method':16}{'seconds':>9}{'CPU s':>8}{'peak RSS MB':>13}"
        f"{'above start':>13}{'failures':>10}"
    )
    print(header)
    print("-" * len(header))
    for model, by_method in figures.items():
        for method, label in METHODS.items():
            row = by_method[method]
            print(
                f"{model:8}{label:16}{row['seconds']:9.2f}{row['cpu_seconds']:8.2f}"
                f"{row['peak_mb']:13.0f}{row['above_start_mb']:13.0f}{int(row['failures']):10,}"
            )
    print()
    for model, by_method in figures.items():
        side = by_method["sidecar"]
        for method in ("pandera_scan", "pandera_frame"):
            other = by_method[method]
            time_ratio = side["seconds"] / other["seconds"]
            memory_ratio = side["peak_mb"] / other["peak_mb"]
            verdict = (
                "meets"
                if time_ratio <= TARGETS["time"] and memory_ratio <= TARGETS["memory"]
                else "MISSES"
            )
            print(
                f"{model}: sidecar vs {METHODS[method]}: time {time_ratio:.2f}x "
                f"({1 / time_ratio:.1f}x faster), peak RSS {memory_ratio:.2f}x: {verdict} the "
                f"targets (time <= {TARGETS['time']}x, memory <= {TARGETS['memory']}x)"
            )
        same = len({int(by_method[m]["failures"]) for m in METHODS}) == 1
        print(f"{model}: failures found by error checks equal on every side: {same}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (median)")
    dispatch(parser, measure, lambda a: main(a.rows, a.repeat), ("METHOD", "MODEL", "PATH"))
