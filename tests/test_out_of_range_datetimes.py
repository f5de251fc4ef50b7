"""Dates and datetimes polars stores but Python cannot hold (after year 9999) in metadata.

Dataframely validates and filters such values like any other; converting one to Python
panics polars (`PanicException`, a `BaseException`). Row samples, statistics and failure
samples show them as text, and every check is still reported.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import dagster as dg
import dataframely as dy
import polars as pl
from support import materialization

import dagster_dataframely as dd

#: Year ~302,000 in milliseconds since 1970: beyond Python's datetime (and chrono's display).
FAR = 300_000 * 365 * 86_400 * 1000


class Events(dy.Schema):
    id = dy.Int64(primary_key=True)
    at = dy.Datetime(time_unit="ms", nullable=True)
    until = dy.Datetime(time_unit="ms", nullable=True, max=dt.datetime(2100, 1, 1))
    day = dy.Date(nullable=True)


def _events() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "id": [1, 2, 3],
            "at": [1_700_000_000_000, FAR, -FAR],
            "until": [1_700_000_000_000, FAR, None],
            "day": [1, 100_000_000, None],
        }
    ).with_columns(pl.col("at", "until").cast(pl.Datetime("ms")), pl.col("day").cast(pl.Date))


def _cells(table: dg.TableMetadataValue, column: str) -> list[object]:
    return [record.data[column] for record in table.records]


def test_a_gated_asset_shows_far_datetimes_as_text_and_reports_every_check(
    tmp_path: Path,
) -> None:
    @dd.asset(Events, quarantine=True)
    def events() -> pl.DataFrame:
        return _events()

    result = dg.materialize(
        [events], resources={"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path))}
    )
    expected = Events.filter(_events()).failure.counts()
    checks = {e.check_name: e for e in result.get_asset_check_evaluations()}
    assert {
        name: e.metadata["dy_failed_count"].value for name, e in checks.items() if not e.passed
    } == {"dy_rule__until__max": 1}
    assert expected == {"until|max": 1}
    assert _cells(checks["dy_rule__until__max"].metadata["dy_failed_sample"].value, "until") == [
        f"{FAR} ms from 1970-01-01"
    ]
    written = materialization(result, "events")
    assert _cells(written["dy_row_sample"], "at") == [
        "2023-11-14 22:13:20",
        f"{-FAR} ms from 1970-01-01",
    ]
    statistics = {r.data["column"]: r.data for r in written["dy_statistics"].records}
    assert statistics["at"]["min"] == f"{-FAR} ms from 1970-01-01"


def test_a_sidecar_check_counts_far_datetimes_as_dataframely_does(tmp_path: Path) -> None:
    @dg.asset
    def events() -> pl.DataFrame:
        return _events()

    result = dg.materialize(
        [events, dd.schema_checks(Events, asset="events")],
        resources={"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path))},
        raise_on_error=False,
    )
    failing = {e.check_name: e for e in result.get_asset_check_evaluations() if not e.passed}
    assert {name: e.metadata["dy_failed_count"].value for name, e in failing.items()} == {
        "dy_rule__until__max": Events.filter(_events()).failure.counts()["until|max"]
    }
    sample = failing["dy_rule__until__max"].metadata["dy_failed_sample"].value
    assert _cells(sample, "until") == [f"{FAR} ms from 1970-01-01"]
