"""Benchmark: a fallback read through the Databricks SQL connector, as Arrow
(`fetchmany_arrow`) vs as the connector's rows (`fetchmany`, the generic DB-API path).

    PYTHONPATH=src .venv/bin/python benchmarks/databricks_fetch.py [--rows 500_000] [--repeat 3]

Writes a 6-column table of `--rows` rows in a local Spark (`local[1]`), serves it from the
stand-in warehouse of the tests (`tests/databricks_sea.py`: the connector's SEA backend over
HTTPS on 127.0.0.1, results inline as Arrow), and collects `SQLTableSource`'s scan of it (the
projected `SELECT` a rule without a SQL form reads) into polars, alternately: `arrow` through
the connector's cursor, `rows` through the same cursor with its Arrow methods hidden. Both get
the same bytes from the warehouse; what differs is the client's decoding. Prints the median
wall time of each and the ratio.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


class _RowsOnly:
    """A connection whose cursors lack the connector's Arrow methods: the DB-API row path."""

    def __init__(self, connection: Any) -> None:
        self.connection = connection

    def cursor(self, *args: Any, **kwargs: Any) -> Any:
        return _RowCursor(self.connection.cursor(*args, **kwargs))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.connection, name)


class _RowCursor:
    def __init__(self, cursor: Any) -> None:
        self.cursor = cursor

    def __getattr__(self, name: str) -> Any:
        if name in ("fetchmany_arrow", "fetchall_arrow"):
            raise AttributeError(name)
        return getattr(self.cursor, name)


def _collect(connection: Any) -> float:
    import dagster as dg

    from dagster_dataframely.sources import SQLTableSource
    from dagster_dataframely.sources._sql import _Database
    from dagster_dataframely.sources._sql_query import relation

    source = SQLTableSource(resource_key="databricks", dialect="databricks", table="orders")
    database = _Database(connection, source, dg.AssetKey("orders"), lambda _: None)
    assert source.reference.table is not None
    rows = relation(database.dtypes, source.reference.table, "databricks", None, None)
    started = time.perf_counter()
    frame = database.scan(rows).collect()
    took = time.perf_counter() - started
    database.reads.stop()
    assert frame.height > 0
    return took


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=500_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from databricks import sql
    from databricks_sea import HTTP_PATH, TOKEN, warehouse
    from pyspark.sql import SparkSession

    workdir = Path(tempfile.mkdtemp(prefix="dy-dbx-bench-"))
    spark = (
        SparkSession.builder.master("local[1]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.warehouse.dir", str(workdir / "spark"))
        .config("spark.driver.memory", "2g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("OFF")
    spark.sql("DROP TABLE IF EXISTS orders")
    spark.sql(
        f"""CREATE TABLE orders USING parquet AS SELECT id, id % 1000 AS customer,
        CAST(id AS DOUBLE) / 7 AS amount, CONCAT('code-', id % 97) AS code,
        DATE_ADD(DATE'2020-01-01', CAST(id % 1500 AS INT)) AS day, id % 3 = 0 AS flag
        FROM range({args.rows})"""
    )
    times: dict[str, list[float]] = {"arrow": [], "rows": []}
    with warehouse(spark, workdir) as served:
        connection = sql.connect(
            server_hostname="127.0.0.1",
            port=served.port,
            http_path=HTTP_PATH,
            access_token=TOKEN,
            **served.connect_args,
        )
        _collect(connection)  # warm: Spark's code generation, the warehouse's session
        for _ in range(args.repeat):
            times["arrow"].append(_collect(connection))
            times["rows"].append(_collect(_RowsOnly(connection)))
        connection.close()
    spark.stop()
    arrow, rows = statistics.median(times["arrow"]), statistics.median(times["rows"])
    print(f"{args.rows:,} rows, 6 columns, median of {args.repeat}:")
    print(f"  rows  (fetchmany)       {rows:7.2f} s")
    print(f"  arrow (fetchmany_arrow) {arrow:7.2f} s")
    print(f"  rows / arrow            {rows / arrow:7.2f}x")


if __name__ == "__main__":
    main()
