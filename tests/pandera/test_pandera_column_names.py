"""A Pandera model with column names Dagster cannot carry in a check name (`"order id"`,
`"größe"`) is checked like any other, under the check names its migrated Dataframely schema
derives, so Dagster's check history survives the migration."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pandera.polars as pa
import polars as pl
from pandera.api.polars.types import PolarsData
from pandera_support import load
from support import failed

import dagster_dataframely as dd
from dagster_dataframely.pandera import migrate

ERROR, WARN = dg.AssetCheckSeverity.ERROR, dg.AssetCheckSeverity.WARN


def _under_a_hundred(data: PolarsData) -> pl.LazyFrame:
    return data.lazyframe.select(pl.col(data.key) < 100)


lines = pa.DataFrameSchema(
    {
        "order id": pa.Column(int, pa.Check.ge(1), unique=True),
        "größe": pa.Column(str, pa.Check.isin(["S", "M"], raise_warning=True), nullable=True),
        "preis €": pa.Column(float, pa.Check(_under_a_hundred, name="unter hundert")),
    },
    name="lines",
)


def _names(schema: object) -> list[tuple[str, bool]]:
    return [(s.name, s.blocking) for s in dd.wiring.check_specs(schema, asset="lines")]


def test_check_names_equal_those_of_the_migrated_schema(tmp_path: Path) -> None:
    migrated = load(migrate(lines), tmp_path).Lines

    assert _names(migrated) == _names(lines)
    assert set(_names(lines)) >= {
        ("dy_rule__order_id__min", True),
        ("dy_rule__grosse__check__isin", False),
        ("dy_rule__preis___check__unter_hundert", True),
    }
    columns = [column.name for column in dd.wiring.table_schema(migrated).columns]
    assert columns == ["order id", "größe", "preis €"]


def test_a_sidecar_run_reports_them(tmp_path: Path) -> None:
    @dg.asset(name="lines")
    def stored() -> pl.DataFrame:
        return pl.DataFrame(
            {"order id": [1, 0, 2], "größe": ["S", "XL", None], "preis €": [5.0, 1.0, 500.0]}
        )

    result = dg.materialize(
        [stored, dd.schema_checks(lines, asset="lines")],
        resources={"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path))},
        raise_on_error=False,
    )

    assert failed(result) == {
        "dy_rule__order_id__min": (1, ERROR),
        "dy_rule__grosse__check__isin": (1, WARN),
        "dy_rule__preis___check__unter_hundert": (1, ERROR),
    }
