"""A day of a partitions definition in another time zone selects the rows of that day's wall
clock from a naive timestamp column, as Dagster's DuckDB IO manager reads the partition, and
the rows of that day's instants from a zoned one: every row near midnight is checked in
exactly one partition. Real DuckDB files, parquet files and Delta tables, in real runs."""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
from datetime import datetime
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import duckdb
import polars as pl
import pytest
from dagster_duckdb import DuckDBResource
from support import evaluations

import dagster_dataframely as dd

#: Wall-clock times, without a zone, as a warehouse that stores local time holds them.
WALL_CLOCK = [
    datetime(2024, 1, 1, 23, 30),  # the last half hour of 1 January
    datetime(2024, 1, 2, 0, 30),  # the first of 2 January
    datetime(2024, 1, 2, 1, 0),
    datetime(2024, 1, 2, 12, 0),
    datetime(2024, 1, 3, 2, 0),
]


class Readings(dy.Schema):
    reading_id = dy.Int64(primary_key=True)
    taken_at = dy.Datetime()


class ZonedReadings(dy.Schema):
    reading_id = dy.Int64(primary_key=True)
    taken_at = dy.Datetime(time_zone="UTC")


def _frame(times: list[datetime]) -> pl.DataFrame:
    return pl.DataFrame({"reading_id": range(len(times)), "taken_at": times})


def _rows_checked(
    source: dd.sources.Source,
    schema: type[dy.Schema],
    zone: str,
    day: str,
    resources: dict[str, Any] | None = None,
) -> int:
    """The rows the checks of partition `day` (of daily partitions in `zone`) read."""
    days = dg.DailyPartitionsDefinition(start_date="2024-01-01", timezone=zone)

    @dg.asset(name="readings", partitions_def=days)
    def readings() -> None:
        """Written by another tool: the run only checks it."""

    checks = dd.schema_checks(schema, asset=readings, source=source)
    result = dg.materialize([readings, checks], partition_key=day, resources=resources)
    (rows,) = {
        e.metadata["dy_row_count"].value
        for e in evaluations(result).values()
        if "dy_row_count" in e.metadata
    }
    assert isinstance(rows, int)
    return rows


def _duckdb(tmp_path: Path, frame: pl.DataFrame) -> dict[str, Any]:
    database = str(tmp_path / "plant.duckdb")
    with duckdb.connect(database) as connection:
        connection.register("frame", frame.to_arrow())
        connection.execute("create table readings as select * from frame")
    return {"duckdb": DuckDBResource(database=database)}


def _source(kind: str, tmp_path: Path, frame: pl.DataFrame) -> tuple[Any, dict[str, Any]]:
    if kind == "duckdb":
        source = dd.sources.DuckDBTableSource(table="readings", partition_expr="taken_at")
        return source, _duckdb(tmp_path, frame)
    if kind == "parquet":
        frame.write_parquet(tmp_path / "readings.parquet")
        return dd.sources.ParquetSource(str(tmp_path / "*.parquet"), partition_expr="taken_at"), {}
    frame.write_delta(str(tmp_path / "readings"))
    return dd.sources.DeltaSource(str(tmp_path / "readings"), partition_expr="taken_at"), {}


@pytest.mark.parametrize("kind", ["duckdb", "parquet", "delta"])
@pytest.mark.parametrize(
    ("zone", "day", "rows"),
    [
        ("America/New_York", "2024-01-01", 1),
        ("America/New_York", "2024-01-02", 3),
        ("Asia/Tokyo", "2024-01-02", 3),
        ("UTC", "2024-01-02", 3),
    ],
)
def test_a_naive_column_is_read_as_wall_clock_time_in_the_partitions_zone(
    kind: str, zone: str, day: str, rows: int, tmp_path: Path
) -> None:
    source, resources = _source(kind, tmp_path, _frame(WALL_CLOCK))

    assert _rows_checked(source, Readings, zone, day, resources) == rows


def test_a_zoned_duckdb_column_is_read_by_the_instant(tmp_path: Path) -> None:
    """04:30 UTC is 23:30 on 1 January in New York, 05:30 UTC half past midnight on the 2nd."""
    instants = pl.Series([datetime(2024, 1, 2, 4, 30), datetime(2024, 1, 2, 5, 30)])
    frame = _frame(list(instants)).with_columns(pl.col("taken_at").dt.replace_time_zone("UTC"))
    resources = _duckdb(tmp_path, frame)
    source = dd.sources.DuckDBTableSource(table="readings", partition_expr="taken_at")

    zone = "America/New_York"
    assert _rows_checked(source, ZonedReadings, zone, "2024-01-01", resources) == 1
    assert _rows_checked(source, ZonedReadings, zone, "2024-01-02", resources) == 1
