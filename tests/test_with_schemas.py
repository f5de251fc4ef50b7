"""`dd.with_schemas`: the same Definitions, plus the Columns tab and the sidecar checks."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import polars as pl
import pytest
from support import evaluations

import dagster_dataframely as dd
from dagster_dataframely.data import OrdersSchema, defective_orders, storefront_orders
from dagster_dataframely.errors import UnknownAssetError
from dagster_dataframely.io import ParquetIOManager
from dagster_dataframely.wiring import table_schema

COLUMN_SCHEMA = "dagster/column_schema"


@dg.asset(
    key_prefix="shop",
    io_manager_key="warehouse",
    metadata={"owner_note": "kept", COLUMN_SCHEMA: dg.TableSchema(columns=[])},
    group_name="sales",
)
def orders() -> pl.DataFrame:
    return defective_orders()


@dg.asset
def customers() -> pl.DataFrame:
    return pl.DataFrame({"email": ["ana@example.com"]})


def _defs(tmp_path: Path) -> dg.Definitions:
    return dg.Definitions(
        assets=[orders, customers],
        resources={"warehouse": ParquetIOManager(base_dir=str(tmp_path))},
    )


def test_named_assets_get_the_columns_tab_and_keep_everything_else(tmp_path: Path) -> None:
    defs = dd.with_schemas(_defs(tmp_path), {"shop/orders": OrdersSchema})

    spec = defs.get_assets_def(["shop", "orders"]).specs_by_key[dg.AssetKey(["shop", "orders"])]
    assert spec.metadata[COLUMN_SCHEMA] == table_schema(OrdersSchema)  # the schema's wins
    assert spec.metadata["owner_note"] == "kept"
    assert spec.group_name == "sales"
    assets_def = defs.get_assets_def(["shop", "orders"])
    assert assets_def.get_io_manager_key_for_asset_key(spec.key) == "warehouse"
    assert (
        COLUMN_SCHEMA
        not in defs.get_assets_def("customers").specs_by_key[dg.AssetKey("customers")].metadata
    )


def test_the_asset_runs_unchanged_and_the_checks_run_beside_it(tmp_path: Path) -> None:
    defs = dd.with_schemas(
        _defs(tmp_path), {dg.AssetKey(["shop", "orders"]): OrdersSchema}, blocking=False
    )
    result = defs.resolve_implicit_global_asset_job_def().execute_in_process(
        instance=dg.DagsterInstance.ephemeral()
    )

    assert result.success
    stored = pl.read_parquet(tmp_path / "shop" / "orders.parquet")
    assert stored.equals(defective_orders())  # the compute function and IO manager as before
    evaluated = evaluations(result)
    assert evaluated["dy_rule__primary_key"].metadata["dy_failed_count"].value == 2
    assert evaluated["dy_rule__primary_key"].severity == dg.AssetCheckSeverity.ERROR
    assert evaluated["dy_schema__columns"].passed


def test_settings_reach_the_checks(tmp_path: Path) -> None:
    defs = dd.with_schemas(
        _defs(tmp_path), {"shop/orders": OrdersSchema}, check_granularity="schema", warn=["sku"]
    )

    specs = {key.name for key in defs.resolve_asset_graph().asset_check_keys}
    assert specs == {"dy_schema__columns", "dy_schema__rules"}


def test_an_unknown_key_lists_the_keys_the_definitions_have(tmp_path: Path) -> None:
    with pytest.raises(UnknownAssetError) as raised:
        dd.with_schemas(_defs(tmp_path), {"orders": OrdersSchema})

    message = str(raised.value)
    assert "do not declare: orders." in message
    assert "The Definitions declare: customers, shop/orders." in message


def test_a_partitioned_asset_gets_partitioned_checks(tmp_path: Path) -> None:
    halves = dg.StaticPartitionsDefinition(["first", "second"])

    @dg.asset(partitions_def=halves)
    def daily_orders(context) -> pl.DataFrame:  # type: ignore[no-untyped-def]
        frame = storefront_orders()
        return frame.head(6) if context.partition_key == "first" else frame.tail(6)

    defs = dd.with_schemas(
        dg.Definitions(
            assets=[daily_orders],
            resources={"io_manager": ParquetIOManager(base_dir=str(tmp_path))},
        ),
        {"daily_orders": OrdersSchema},
    )
    result = defs.resolve_implicit_global_asset_job_def().execute_in_process(
        partition_key="second", instance=dg.DagsterInstance.ephemeral()
    )

    evaluated = result.get_asset_check_evaluations()
    assert result.success and evaluated
    assert {e.partition for e in evaluated} == {"second"}
    assert {
        e.metadata["dy_row_count"].value for e in evaluated if e.check_name != "dy_schema__columns"
    } == {6}
