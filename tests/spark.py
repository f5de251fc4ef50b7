"""A real local Spark for the tests: pyspark's own JVM (Java 17, Debian's
`openjdk-17-jre-headless`), one per test process, `local[1]` with an in-memory catalog whose
tables live in a temporary warehouse folder, stopped at the end.

Every Spark test module is in the xdist group `spark`, so one worker starts the JVM. A missing
Java fails the tests that need it with the command that installs it: never a skip.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

#: The xdist group of every test that uses the session: one worker, one JVM.
GROUP = pytest.mark.xdist_group("spark")


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """A local SparkSession with the defaults a user's has (ANSI on, binary strings)."""
    if shutil.which("java") is None:
        pytest.fail(
            "These tests need a Java runtime for Spark and found no `java` on PATH: install it "
            "with `apt-get install openjdk-17-jre-headless` (.ci/run does that on a fresh "
            "machine).",
            pytrace=False,
        )
    from pyspark.sql import SparkSession

    warehouse = tempfile.mkdtemp(prefix="dy-spark-")
    session = (
        SparkSession.builder.master("local[1]")
        .appName("dagster-dataframely tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.warehouse.dir", warehouse)
        .config("spark.driver.memory", "1g")
        .config("spark.pyspark.python", sys.executable)
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("OFF")
    try:
        yield session
    finally:
        session.stop()
        shutil.rmtree(warehouse, ignore_errors=True)


def spark_view(session: Any, name: str, frame: Any, *, collated: tuple[str, ...] = ()) -> str:
    """`frame` (polars) as the temporary view `name`, each column of the Spark type of its
    dtype: a naive datetime a `TIMESTAMP_NTZ` (sent as text, so no session zone moves it), a
    column of `collated` a `STRING COLLATE UTF8_LCASE`. Returns `name`."""
    import polars as pl

    naive = [c for c, d in frame.schema.items() if isinstance(d, pl.Datetime) and not d.time_zone]
    sent = frame.with_columns(pl.col(c).dt.strftime("%Y-%m-%d %H:%M:%S%.6f") for c in naive)
    session.createDataFrame(sent.to_arrow()).createOrReplaceTempView(f"{name}__sent")
    columns = ", ".join(
        f"CAST(`{c}` AS TIMESTAMP_NTZ) AS `{c}`"
        if c in naive
        else f"`{c}` COLLATE UTF8_LCASE AS `{c}`"
        if c in collated
        else f"`{c}`"
        for c in frame.columns
    )
    session.sql(
        f"CREATE OR REPLACE TEMPORARY VIEW `{name}` AS SELECT {columns} FROM `{name}__sent`"
    )
    return name


def stamps() -> tuple[Any, Any]:
    """A schema whose counts a session's settings could move, and its two rows: 02:30 on
    2024-03-10 is in New York's DST gap (a zone would move it, a wall clock not), and the
    regex is case-sensitive."""
    import datetime as dt

    import dataframely as dy
    import polars as pl

    class Stamps(dy.Schema):
        at = dy.Datetime(min=dt.datetime(2024, 3, 10, 2, 30))
        total = dy.Float64(check={"doubled": lambda c: c * 2.0 < 100.0})
        code = dy.String(regex="^a")

    frame = pl.DataFrame(
        {
            "at": [dt.datetime(2024, 3, 10, 2, 29), dt.datetime(2024, 3, 10, 2, 30)],
            "total": [1.0, 50.0],
            "code": ["ab", "Ab"],
        }
    )
    return Stamps, frame
