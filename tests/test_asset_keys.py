"""One reading of an asset key at every entry point (`"raw/orders"` is `["raw", "orders"]`),
and sidecar steps of their own for keys that differ only in characters a step name drops."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest
from dagster.components.testing import DefsFolderSandbox
from support import evaluations, failed, scaffold_checks

import dagster_dataframely as dd
from dagster_dataframely.data import OrdersSchema, defective_orders, storefront_orders
from dagster_dataframely.errors import InvalidAssetKeyError
from dagster_dataframely.wiring import quarantine_path

RAW_ORDERS = dg.AssetKey(["raw", "orders"])
SPELLINGS = ["raw/orders", ["raw", "orders"], ("raw", "orders"), RAW_ORDERS]


def _stored(key: list[str], frame: pl.DataFrame) -> dg.AssetsDefinition:
    @dg.asset(key=key)
    def stored() -> pl.DataFrame:
        return frame

    return stored


def _run(assets: list[Any], tmp_path: Path) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        assets,
        resources={"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path))},
        raise_on_error=False,
    )


# ------------------------------------- one parser ------------------------------------- #


@pytest.mark.parametrize("key", SPELLINGS, ids=["user string", "list", "tuple", "AssetKey"])
def test_every_entry_point_reads_a_key_the_same_way(key: Any, tmp_path: Path) -> None:
    assert {s.asset_key for s in dd.wiring.check_specs(OrdersSchema, asset=key)} == {RAW_ORDERS}
    checked = dd.wiring.check_results(OrdersSchema, storefront_orders(), asset_key=key)
    assert {r.asset_key for r in checked} == {RAW_ORDERS}
    validated = dd.wiring.validation_results(OrdersSchema, storefront_orders(), valid_key=key)
    assert {e.asset_key for e in validated} == {RAW_ORDERS}
    assert quarantine_path(key, tmp_path) == quarantine_path(RAW_ORDERS, tmp_path)
    assert quarantine_path(key, tmp_path).parts[-2:] == ("raw", "orders_quarantine.parquet")
    writer = dd.wiring.file_writer(key, tmp_path)
    assert writer(pl.DataFrame({"x": [1]})) == str(quarantine_path(RAW_ORDERS, tmp_path))
    assert dd.schema_checks(OrdersSchema, asset=key).check_keys == {
        dg.AssetCheckKey(RAW_ORDERS, name) for name in _names()
    }
    stored = dg.asset(key=RAW_ORDERS)(storefront_orders)  # with_schemas reads a stored table
    defs = dd.with_schemas(
        dg.Definitions(assets=[stored]),
        {key if not isinstance(key, list) else tuple(key): OrdersSchema},
    )
    assert dg.Definitions.validate_loadable(defs) is None


def _names() -> list[str]:
    return [spec.name for spec in dd.wiring.check_specs(OrdersSchema, asset=RAW_ORDERS)]


def test_schema_checks_with_a_user_string_runs_against_the_prefixed_asset(tmp_path: Path) -> None:
    checks = dd.schema_checks(OrdersSchema, asset="raw/orders")
    result = _run([_stored(["raw", "orders"], defective_orders()), checks], tmp_path)

    assert checks.node_def.name == "raw__orders__dy_checks"
    assert failed(result)["dy_rule__primary_key"] == (2, dg.AssetCheckSeverity.ERROR)
    assert {e.asset_key for e in result.get_asset_check_evaluations()} == {RAW_ORDERS}


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (3, r"asset=3 is not an asset key\. Pass a dg\.AssetKey, its user string"),
        (["raw", 3], r"asset=\['raw', 3\] is not an asset key"),
        ("raw//orders", r"asset='raw//orders' has an empty key part"),
        ("", r"asset='' has an empty key part"),
    ],
)
def test_a_value_that_is_no_key_is_refused_with_the_spellings_that_work(
    value: Any, message: str
) -> None:
    with pytest.raises(InvalidAssetKeyError, match=message):
        dd.schema_checks(OrdersSchema, asset=value)


def test_a_bad_key_names_the_argument_it_came_from() -> None:
    with pytest.raises(InvalidAssetKeyError, match="valid_key='raw/'"):
        list(dd.wiring.validation_results(OrdersSchema, storefront_orders(), valid_key="raw/"))
    with pytest.raises(InvalidAssetKeyError, match="with_schemas key='/orders'"):
        dd.with_schemas(dg.Definitions(), {"/orders": OrdersSchema})


@pytest.mark.parametrize("key", ["raw/orders", ["raw", "orders"]], ids=["user string", "parts"])
def test_the_component_reads_a_key_the_same_way(sandbox: DefsFolderSandbox, key: Any) -> None:
    path = scaffold_checks(
        sandbox,
        {
            "assets_outside_defs": True,  # no asset in this project: only specs are read
            "checks": [{"asset": key, "schema": "dagster_dataframely.data:OrdersSchema"}],
        },
    )

    with sandbox.load_component_and_build_defs(defs_path=path) as (_, defs):
        (checks,) = defs.asset_checks or []
        assert {spec.asset_key for spec in checks.check_specs} == {RAW_ORDERS}  # type: ignore[union-attr]


# ------------------------------------- step names ------------------------------------- #


def test_keys_differing_only_in_dropped_characters_get_steps_of_their_own(
    tmp_path: Path,
) -> None:
    dashed, underscored = ["sales-eu", "orders"], ["sales_eu", "orders"]

    @dg.multi_asset(outs={"a": dg.AssetOut(key=dashed), "b": dg.AssetOut(key=underscored)})
    def both() -> tuple[pl.DataFrame, pl.DataFrame]:
        return defective_orders(), storefront_orders()

    defs = dd.with_schemas(
        dg.Definitions(assets=[both]),
        {"sales-eu/orders": OrdersSchema, "sales_eu/orders": OrdersSchema},
    )
    steps = sorted(checks.node_def.name for checks in defs.asset_checks or [])  # type: ignore[union-attr]

    assert steps == ["sales_eu__orders___9d9e1dd5__dy_checks", "sales_eu__orders__dy_checks"]
    assets = [*(defs.assets or []), *(defs.asset_checks or [])]
    result = _run(assets, tmp_path)
    evaluated = result.get_asset_check_evaluations()
    failing = {e.asset_key.to_user_string() for e in evaluated if not e.passed}
    assert failing == {"sales-eu/orders"}  # the defective table; the other one is clean
    assert len(evaluated) == 2 * len(_names())
    assert evaluations(result)["dy_schema__columns"].passed


@pytest.mark.parametrize(
    "keys",
    [
        [["a__b"], ["a", "b"]],  # a part holding `__` against two parts
        [["a_"], ["a"]],
        [["sales.eu", "orders"], ["sales_eu", "orders"]],
        [["x", "_y"], ["x_", "y"]],
    ],
)
def test_step_names_are_valid_and_distinct(keys: list[list[str]]) -> None:
    checks = [dd.schema_checks(OrdersSchema, asset=key) for key in keys]
    defs = dg.Definitions(
        assets=[dg.AssetSpec(key) for key in keys],
        asset_checks=checks,
    )

    dg.Definitions.validate_loadable(defs)
    assert len({c.node_def.name for c in checks}) == len(keys)
