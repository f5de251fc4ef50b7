"""Where a gated run's CPU and memory go: the CPU seconds and peak RSS of each polars pass of
one run, by pass.

`python benchmarks/gate_passes.py [--rows N] [--repeat R] [--before SRC] [--clean]
[--prefiltered] [--shape SHAPE] [--dir DIR]`

Writes a source of `gate_streaming.py` (`--shape`: narrow columns with 1% of the rows
breaking an `"error"` rule, none with `--clean`, or the order table of issue 40), then runs
`@dd.asset(Schema, quarantine=True)` returning its scan, stored by `dd.ParquetIOManager`,
and the plain asset returning the same scan, each in a fresh process, interleaved,
`--repeat` times. In the child, every `LazyFrame.collect`, `sink_parquet` and
`pl.collect_all` is timed (CPU seconds, user + system) and named by the package function
that ran it: the counting pass (`evaluate`), the count of the split (`split_lazily`), the
quarantine's and the table's sinks (the IO manager's `write_frame`, in that order), the row
sample and the statistics (`materialization`). The process's peak RSS is reset before each
pass (Linux's `clear_refs`), so each pass has its own peak: the largest of its calls,
imports included, and never below the RSS the pass started with (memory an earlier pass left
allocated). What no pass accounts for is the step's Python: Dagster's events and the
package's own work. Medians per pass; `--before SRC` runs the gate on another source tree
too; `--prefiltered` runs it once more on a scan made with `parallel="prefiltered"`.
"""

import argparse
import os
import resource
import shutil
import sys
import tempfile
import traceback
from pathlib import Path

from _measure import MB, child_figures, dispatch, interleaved, load_average, measured, peak_rss

_PASSES = (("LazyFrame", "collect"), ("LazyFrame", "sink_parquet"), (None, "collect_all"))


_CLEAR_REFS = Path("/proc/self/clear_refs")
_PEAK = " peak MB"  # the suffix of a pass's peak RSS among the figures


def measure(variant: str, source: str, store: str, shape: str) -> dict[str, float]:
    import dagster as dg
    import polars as pl
    from gate_streaming import schema

    import dagster_dataframely as dd

    spent: dict[str, float] = {}
    for owner_name, name in _PASSES:
        owner = pl if owner_name is None else getattr(pl, owner_name)
        setattr(owner, name, _timed(getattr(owner, name), name, spent))

    @dg.asset(name="lines")
    def plain() -> pl.LazyFrame:
        return pl.scan_parquet(source)

    scan = {"parallel": "prefiltered"} if variant == "gated-prefiltered" else {}

    @dd.asset(schema(False, shape), quarantine=True, name="lines")
    def gated() -> pl.LazyFrame:
        return pl.scan_parquet(source, **scan)

    shutil.rmtree(store, ignore_errors=True)
    io = dd.ParquetIOManager(base_dir=store)
    with measured() as figures:
        result = dg.materialize(
            [plain if variant == "plain" else gated], resources={"io_manager": io}
        )
    assert result.success
    passes = sum(seconds for label, seconds in spent.items() if not label.endswith(_PEAK))
    spent["Python (no pass)"] = figures["cpu_seconds"] - passes
    return {**spent, "total": figures["cpu_seconds"]}


def _timed(function, name, spent):  # type: ignore[no-untyped-def]
    """`function`, adding its CPU seconds to `spent` under the package function that called it
    (the quarantine's sink is the one the gate's `_store` runs), and keeping the largest peak
    RSS of its calls there (`label peak MB`)."""

    def timed(*args, **kwargs):  # type: ignore[no-untyped-def]
        _CLEAR_REFS.write_text("5")  # resets VmHWM to the RSS now
        before = _cpu()
        try:
            return function(*args, **kwargs)
        finally:
            callers = [
                frame.name
                for frame in traceback.extract_stack()[:-1]
                if "dagster_dataframely" in frame.filename
            ]
            if "write_frame" in callers:  # the IO manager; the quarantine's through `_store`
                label = "quarantine sink" if "_store" in callers else "table sink"
            else:
                passes = ("evaluate", "split_lazily", "materialization")
                where = next((c for c in callers if c in passes), "?")
                label = f"{where} ({name})"
            spent[label] = spent.get(label, 0.0) + _cpu() - before
            peak = spent.get(label + _PEAK, 0.0)
            spent[label + _PEAK] = max(peak, peak_rss() / MB)

    return timed


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main(args: argparse.Namespace) -> None:
    from gate_streaming import make_source, source_path

    here = str(Path(__file__).resolve())
    root = Path(args.dir or tempfile.mkdtemp(prefix="gate-passes-"))
    root.mkdir(parents=True, exist_ok=True)
    source = source_path(root, args.rows, args.clean, args.shape)
    if not source.exists():
        make_source(args.rows, source, args.clean, args.shape)
    variants = {"plain @dg.asset": "plain", "dd.asset, quarantine": "gated"}
    if args.prefiltered:
        variants["dd.asset, quarantine, scan prefiltered"] = "gated-prefiltered"
    envs: dict[str, dict[str, str] | None] = dict.fromkeys(variants)
    if args.before:
        variants["dd.asset, quarantine (before)"] = "gated"
        envs["dd.asset, quarantine (before)"] = {**os.environ, "PYTHONPATH": args.before}
    clean = "no failing rows" if args.clean else "1% failing rows"
    print(f"load average {load_average()}; {args.rows:,} rows of {args.shape}, {clean}", flush=True)
    try:
        found = interleaved(
            variants,
            args.repeat,
            lambda name: child_figures(
                here,
                variants[name],
                str(source),
                str(root / "store"),
                args.shape,
                label=name,
                env=envs[name],
            ),
        )
    finally:
        if not args.dir:
            shutil.rmtree(root, ignore_errors=True)
    plain = found["plain @dg.asset"]["total"]
    for name, passes in found.items():
        print(f"\n{name}: {passes['total']:.2f} s CPU, {passes['total'] / plain:.2f}x plain")
        for label, seconds in passes.items():
            if label != "total" and not label.endswith(_PEAK) and seconds >= 0.005:
                peak = passes.get(label + _PEAK)
                shown = "" if peak is None else f" {peak:7.0f} MB peak"
                print(f"  {label:45} {seconds:6.2f} s {seconds / plain:6.2f}x plain{shown}")
    print(f"\nmedians of {args.repeat}; load average {load_average()}")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    from gate_streaming import SHAPES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--before", help="sources of the package to compare with (a src dir)")
    parser.add_argument("--clean", action="store_true", help="a source no row of breaks a rule")
    parser.add_argument(
        "--prefiltered", action="store_true", help='also the scan with parallel="prefiltered"'
    )
    parser.add_argument("--shape", choices=SHAPES, default="lines", help="the source's columns")
    parser.add_argument("--dir", help="keep the source here (default: a temporary directory)")
    dispatch(parser, measure, main, ("VARIANT", "SOURCE", "STORE", "SHAPE"))
