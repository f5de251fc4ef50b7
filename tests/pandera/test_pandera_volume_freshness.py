"""A Pandera model gets the package's table checks too: `expect_rows=` and `expect_fresh=` on
the sidecar judge its stored table in a real run, the freshness column named as in the model."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import dagster as dg
import pandera.polars as pa
import polars as pl
from support import evaluations, materialized

import dagster_dataframely as dd

ERROR, WARN = dg.AssetCheckSeverity.ERROR, dg.AssetCheckSeverity.WARN


class Visits(pa.DataFrameModel):
    """Page visits, one row each."""

    visit_id: int = pa.Field(ge=1, unique=True)
    seen_at: dt.datetime


def test_a_pandera_models_table_takes_volume_and_freshness_checks(tmp_path: Path) -> None:
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)

    @dg.asset(name="visits")
    def stored() -> pl.DataFrame:
        return pl.DataFrame({"visit_id": [1, 2], "seen_at": [now - dt.timedelta(hours=5), now]})

    @dg.asset(deps=[stored])
    def downstream() -> None:
        """Runs unless a blocking check failed at ERROR."""

    checks = dd.schema_checks(
        Visits,
        asset=stored,
        expect_rows=dd.ExpectRows(min=5, severity="warn"),
        expect_fresh=dd.ExpectFresh("seen_at", within="1h"),
    )
    result = dg.materialize(
        [stored, downstream, checks],
        resources={"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path))},
        raise_on_error=False,
    )

    checked = evaluations(result)
    rows, fresh = checked["dy_table__row_count"], checked["dy_table__freshness"]
    assert (rows.passed, rows.severity) == (False, WARN)
    assert rows.metadata["dy_row_count"].value == 2
    assert fresh.passed and fresh.metadata["dy_age_seconds"].value < 600
    assert "downstream" in materialized(result)  # a WARN does not block
