"""Dagster's own drift checks work over a `dd.asset`: each materialization that writes the
table (and its quarantine) records `dagster/column_schema`, built from what was written, and
`dagster/row_count`, so `dg.build_column_schema_change_checks` sees a column added between
runs and `dg.build_metadata_bounds_checks` bounds the rows written."""

from collections.abc import Callable

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from support import materialization

import dagster_dataframely as dd
from dagster_dataframely.data import OrdersSchema, defective_orders, storefront_orders


class ChannelOrdersSchema(OrdersSchema):
    """Order lines with their sales channel: the next version of the table."""

    channel = dy.String(nullable=True, description="Where the order was placed.")


def with_channel(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(channel=pl.lit("web"))


def orders_of(
    schema: type[dy.Schema], frame: pl.DataFrame, *, quarantine: bool = True
) -> dg.AssetsDefinition:
    @dd.asset(schema, quarantine=quarantine, name="orders")
    def orders() -> pl.DataFrame:
        return frame

    return orders


def run(instance: dg.DagsterInstance, asset: dg.AssetsDefinition) -> dg.ExecuteInProcessResult:
    """Materialize `asset` with both Dagster factories' checks over it."""
    drift = dg.build_column_schema_change_checks(assets=[asset])
    bounds = dg.build_metadata_bounds_checks(
        assets=[asset], metadata_key="dagster/row_count", min_value=1, max_value=8
    )
    return dg.materialize([asset, *drift, *bounds], instance=instance, raise_on_error=False)


def checked(result: dg.ExecuteInProcessResult) -> dict[tuple[str, str], dg.AssetCheckEvaluation]:
    """(asset, check name) -> the run's evaluation."""
    return {
        (e.asset_key.to_user_string(), e.check_name): e
        for e in result.get_asset_check_evaluations()
    }


@pytest.mark.parametrize(
    ("quarantine", "frame", "drifted"),
    [
        (False, storefront_orders, ["orders"]),
        (True, defective_orders, ["orders", "orders_quarantine"]),
    ],
    ids=["all rows written", "rows quarantined"],
)
def test_a_column_added_between_runs_fails_the_column_schema_change_check(
    quarantine: bool, frame: Callable[[], pl.DataFrame], drifted: list[str]
):
    instance = dg.DagsterInstance.ephemeral()
    first = run(instance, orders_of(OrdersSchema, frame(), quarantine=quarantine))
    second = run(
        instance, orders_of(ChannelOrdersSchema, with_channel(frame()), quarantine=quarantine)
    )
    third = run(
        instance, orders_of(ChannelOrdersSchema, with_channel(frame()), quarantine=quarantine)
    )

    assert first.success and second.success and third.success
    for asset in drifted:
        assert checked(first)[asset, "column_schema_change"].passed  # nothing to compare with
        drift = checked(second)[asset, "column_schema_change"]
        assert not drift.passed, asset
        assert "Added columns: channel" in (drift.description or ""), asset
        assert checked(third)[asset, "column_schema_change"].passed, asset  # no change since


def test_the_written_columns_carry_their_dtypes_and_the_schemas_descriptions():
    asset = orders_of(ChannelOrdersSchema, with_channel(storefront_orders()))
    result = run(dg.DagsterInstance.ephemeral(), asset)

    written = materialization(result, "orders")["dagster/column_schema"]
    by_name = {column.name: column for column in written.columns}
    assert list(by_name) == ChannelOrdersSchema.column_names()
    assert (by_name["channel"].type, by_name["channel"].description) == (
        "String",
        "Where the order was placed.",
    )
    declared = asset.specs_by_key[dg.AssetKey("orders")].metadata["dagster/column_schema"]
    assert written == declared  # what was written is what the Columns tab declares


def test_the_row_count_bounds_check_judges_the_rows_written_not_the_rows_returned():
    instance = dg.DagsterInstance.ephemeral()
    quarantined = run(instance, orders_of(OrdersSchema, defective_orders()))
    clean = run(instance, orders_of(OrdersSchema, storefront_orders()))

    assert materialization(quarantined, "orders")["dagster/row_count"] == 6
    assert checked(quarantined)["orders", "dagster_row_count_bounds_check"].passed
    assert materialization(clean, "orders")["dagster/row_count"] == 12
    bounds = checked(clean)["orders", "dagster_row_count_bounds_check"]
    assert not bounds.passed
    assert "12" in (bounds.description or "")
