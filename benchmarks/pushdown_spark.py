"""Benchmark: a parquet table's rules run in a local Spark (pushdown) vs read into polars vs
one hand-written Spark aggregate.

    .venv/bin/python benchmarks/pushdown_spark.py [--rows 20_000_000] [--repeat 1]
        [--methods pushdown main:pushdown handwritten] [--baseline-src ../main/src]
        [--data /tmp/orders-20m]

Writes the pushdown benchmark's orders (6 columns, 10 rules, no primary key) as parquet with
Spark (`local[2]`), then measures, each in its own subprocess with its own JVM:

- pushdown: `SparkTableSource(path=...)`'s evaluation: one aggregate query and bounded
  sample queries in Spark;
- scan: the same source's rows brought into polars as Arrow and every rule evaluated there,
  as a rule without a SQL form is;
- handwritten: one `SELECT count_if(...), ...` written by hand for the same ten rules, the
  floor pushdown is held to (target: at most 1.1x its cost);
- `main:<method>`: that method on the sources of `--baseline-src` (another checkout's `src`),
  in the same round robin, for a before/after under the same load.

pushdown and scan open the table as a check does (`SparkTableSource.open_table`: the session's
settings pinned, the path resolved, the column facts read) and evaluate the schema through it.
`--data` keeps the generated parquet in a folder and reuses it on the next run. `--warm`
measures each contender's second run in its JVM (its queries' code generated and compiled
by the first), not its first.

`cpu s` is the check process's CPU time, `jvm s` the Spark JVM's (the driver runs the
executors in `local` mode), `peak MB` the check process's peak RSS (the JVM's heap is its
own, `spark.driver.memory`). The JVM's start-up (`start s`) is measured before the figures
and reported apart.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

from _measure import child_figures, closing, dispatch, interleaved, measured, opening, server_cpu
from _table_checks import BASELINE, variant_env
from pushdown import schema

METHODS = ("pushdown", "scan", "handwritten")
#: Set (by `--warm`) for the children: each runs its work once before measuring it again.
_WARM = "DY_SPARK_BENCH_WARM"
#: The ten rules of `pushdown.schema()`, by hand: what a user would write for one pass.
HANDWRITTEN = """
SELECT
    count(*),
    count_if(order_id IS NULL),
    count_if(NOT email RLIKE '^[a-z0-9]+@example\\\\.com\\\\z'),
    count_if(octet_length(country) < 2),
    count_if(octet_length(country) > 2),
    count_if(amount < 0),
    count_if(amount > 10000),
    count_if(quantity IS NULL),
    count_if(quantity < 1),
    count_if(quantity > 6),
    count_if(created_at IS NULL)
FROM parquet.`{path}`
"""


def _session(memory: str = "4g"):  # type: ignore[no-untyped-def]
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", memory)
        .config("spark.pyspark.python", sys.executable)
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("OFF")
    return session


def generate(path: Path, rows: int) -> None:
    session = _session()
    session.range(rows).selectExpr(
        "id AS order_id",
        "concat('user', CAST(id % 100000 AS STRING), '@example.com') AS email",
        "element_at(array('DE', 'FR', 'US', 'XX1'), CAST(id % 4 AS INT) + 1) AS country",
        "CAST((id % 20000) - 10 AS DOUBLE) AS amount",
        "CAST((id % 7) + 1 AS INT) AS quantity",
        "CAST(TIMESTAMP_NTZ '2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, id) "
        "AS TIMESTAMP_NTZ) AS created_at",
    ).write.parquet(str(path))
    session.stop()


def measure(method: str, path: str) -> dict[str, float]:
    import dagster_dataframely.sources  # noqa: F401  (imported before the figures, as in a check)

    checked = schema()
    started = time.perf_counter()
    session = _session()
    session.sql("SELECT 1").collect()
    start_seconds = time.perf_counter() - started
    jvm = session.sparkContext._gateway.proc.pid
    if os.environ.get(_WARM):
        _checked(session, method, path, checked)  # the JVM compiles every query's code once
    jvm_before = server_cpu(jvm)
    with measured() as figures:
        failed = _checked(session, method, path, checked)
    spent = server_cpu(jvm) - jvm_before
    session.stop()
    return {
        **figures,
        "server_cpu_seconds": spent,
        "start_seconds": start_seconds,
        "failed": failed,
    }


def _checked(session: object, method: str, path: str, checked: type) -> int:
    """The failed rows `method` counts over the parquet at `path`."""
    import dagster as dg

    from dagster_dataframely.sources import SparkTableSource

    if method == "handwritten":
        counts = session.sql(HANDWRITTEN.format(path=path)).collect()[0]  # type: ignore[attr-defined]
        return int(sum(counts[1:]))
    source = SparkTableSource(path=path)
    with source.open_table(_context(session), dg.AssetKey("orders")) as stored:
        return _failed(checked, stored, method)


def _context(session: object) -> SimpleNamespace:
    """What `open_table` reads of a check's context: an unpartitioned run of a job that does
    not define the asset, the session as resource `spark`, a log that drops its lines."""
    layer = SimpleNamespace(has=lambda _: False)
    return SimpleNamespace(
        job_def=SimpleNamespace(asset_layer=layer),
        has_partition_key=False,
        has_partition_key_range=False,
        resources=SimpleNamespace(spark=session),
        log=SimpleNamespace(info=lambda _: None),
    )


def _failed(checked: type, stored: object, method: str) -> int:
    """The failed rows of `checked`'s rules over the opened table: `method` "pushdown" in
    Spark (each rule must run there), else every rule in polars over the rows read out."""
    from dagster_dataframely._checks.results import evaluate_schema
    from dagster_dataframely._engine.backends import backend_for
    from dagster_dataframely._engine.catalogue import rules
    from dagster_dataframely._engine.settings import CheckSettings

    pushed = stored.pushdown if method == "pushdown" else None  # type: ignore[attr-defined]
    evaluation = evaluate_schema(
        checked,
        stored.frame,  # type: ignore[attr-defined]
        rules(checked),
        CheckSettings.resolve(),
        backend=backend_for(pushed),
    )
    if method == "pushdown":
        assert set(evaluation.engines.values()) == {"spark"}, evaluation.engines
    return sum(evaluation.failed.values())


def main(args: argparse.Namespace) -> None:
    if args.warm:
        os.environ[_WARM] = "1"
    opening(
        f"{'rows':>5} {'method':16} | {'s':>7} {'cpu s':>7} {'jvm s':>7} {'peak MB':>8} "
        f"{'start s':>7} | vs handwritten"
    )
    folder = Path(args.data or tempfile.mkdtemp(prefix="dy-spark-bench-"))
    try:
        path = folder / "orders"
        if not path.exists():
            generate(path, args.rows)

        def run(variant: str) -> dict[str, float]:
            method, env = variant_env(variant, args.baseline_src)
            return child_figures(__file__, method, str(path), label=variant, env=env)

        medians = interleaved(args.methods, args.repeat, run)
    finally:
        if args.data is None:
            shutil.rmtree(folder, ignore_errors=True)
    assert len({m["failed"] for m in medians.values()}) == 1, medians
    floor = medians.get("handwritten")
    for method, m in medians.items():
        spent = m["seconds"]
        versus = (
            f"time {spent / floor['seconds']:.2f}x, "
            f"jvm cpu {m['server_cpu_seconds'] / floor['server_cpu_seconds']:.2f}x"
            if floor
            else ""
        )
        print(
            f"{args.rows / 1_000_000:>4.1f}M {method:16} | {spent:7.2f} {m['cpu_seconds']:7.2f} "
            f"{m['server_cpu_seconds']:7.2f} {m['peak_mb']:8.0f} {m['start_seconds']:7.2f} "
            f"| {versus}",
            flush=True,
        )
    closing(args.repeat, "the JVM's start-up is in `start s`, outside the other figures")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument(
        "--methods",
        nargs="+",
        choices=[*METHODS, *(BASELINE + method for method in METHODS)],
        default=list(METHODS),
    )
    parser.add_argument("--baseline-src", help="the src folder `main:` variants run on")
    parser.add_argument("--data", help="a folder that keeps the generated table between runs")
    parser.add_argument(
        "--warm", action="store_true", help="measure a second run in the same JVM, not the first"
    )
    dispatch(parser, measure, main, ("METHOD", "PATH"))
