"""Benchmark: `dd.check_report` over 10,000 check evaluations (100 assets x 20 checks x 5 runs).

    .venv/bin/python benchmarks/report.py [--assets 100] [--checks 20] [--runs 5] [--home DIR]

Stores the evaluations in a throwaway SQLite instance (a DAGSTER_HOME as `dagster dev`
makes one) through the instance's public `report_runless_asset_event`, with the metadata a
rule's check writes (counts, fraction, tolerance, engine; a sample of failing rows on one
check in ten), then times the report in each format and counts the event-log storage's
reads it made (every `get_*`/`fetch_*` call, counted on the storage itself). Target: under
10 s, one read per asset.

Storing is the slow part (one SQLite transaction per event, synced to disk: minutes for
10,000); `--home DIR` keeps the instance there and reuses it on the next run.
"""

from __future__ import annotations

import argparse
import functools
import json
import tempfile
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any


def store(instance: Any, assets: int, checks: int, runs: int) -> None:
    import dagster as dg

    for run in range(runs):
        for a in range(assets):
            key = dg.AssetKey(["warehouse", f"table_{a:03d}"])
            rows = 100_000 + 1_000 * run + a
            for c in range(checks):
                failed = (a + c + run) % 7
                metadata: dict[str, Any] = {
                    "dy_failed_count": dg.MetadataValue.int(failed),
                    "dy_row_count": dg.MetadataValue.int(rows),
                    "dy_failed_fraction": dg.MetadataValue.float(failed / rows),
                    "dy_tolerance": dg.MetadataValue.text("error above 5 rows"),
                    "dy_tolerance_margin": dg.MetadataValue.int(5 - failed),
                    "dy_engine": dg.MetadataValue.text("duckdb"),
                    "dy_rule": dg.MetadataValue.text(f"column_{c}|min"),
                }
                if c % 10 == 0 and failed:
                    metadata["dy_failed_sample"] = dg.MetadataValue.table(
                        [dg.TableRecord({"id": i, f"column_{c}": -i}) for i in range(failed)]
                    )
                instance.report_runless_asset_event(
                    dg.AssetCheckEvaluation(
                        asset_key=key,
                        check_name=f"dy_rule__column_{c}__min",
                        passed=failed <= 5,
                        metadata=metadata,
                        severity=dg.AssetCheckSeverity.ERROR,
                    )
                )


def counting(storage: Any) -> Counter[str]:
    """Count every read of `storage` (a call of a `get_`/`fetch_` method), by method."""
    reads: Counter[str] = Counter()
    for name in dir(type(storage)):
        if name.startswith(("get_", "fetch_")) and callable(getattr(type(storage), name)):
            setattr(storage, name, _counted(getattr(storage, name), name, reads))
    return reads


def _counted(method: Any, name: str, reads: Counter[str]) -> Any:
    @functools.wraps(method)
    def counted(*args: Any, **kwargs: Any) -> Any:
        reads[name] += 1
        return method(*args, **kwargs)

    return counted


def main(args: argparse.Namespace) -> None:
    import dagster as dg

    import dagster_dataframely as dd

    total = args.assets * args.checks * args.runs
    shape = {"assets": args.assets, "checks": args.checks, "runs": args.runs}
    with ExitStack() as stack:
        home = args.home or Path(stack.enter_context(tempfile.TemporaryDirectory()))
        home.mkdir(parents=True, exist_ok=True)
        instance = stack.enter_context(dg.DagsterInstance.local_temp(str(home)))
        stored = home / "benchmark.json"
        if stored.exists() and json.loads(stored.read_text()) == shape:
            print(f"reusing {total:,} evaluations in {home}", flush=True)
        else:
            start = time.perf_counter()
            store(instance, args.assets, args.checks, args.runs)
            stored.write_text(json.dumps(shape))
            elapsed = time.perf_counter() - start
            print(f"stored {total:,} evaluations in {elapsed:.1f} s", flush=True)
        print(f"{'format':>9} | {'s':>6} | {'reads':>5} | {'KB':>7}")
        reads = counting(instance.event_log_storage)
        for format in ("json", "markdown", "html"):
            reads.clear()
            start = time.perf_counter()
            text = dd.check_report(format=format, instance=instance)
            elapsed = time.perf_counter() - start
            print(
                f"{format:>9} | {elapsed:6.2f} | {sum(reads.values()):5d} | "
                f"{len(text.encode()) / 1024:7.0f}   {dict(reads)}",
                flush=True,
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assets", type=int, default=100)
    parser.add_argument("--checks", type=int, default=20)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--home", type=Path, help="keep the instance here, and reuse it")
    main(parser.parse_args())
