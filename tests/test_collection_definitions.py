"""A Collection entry in `dd.with_schemas` and in `SchemaChecksComponent`'s `defs.yaml`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest
from dagster.components.testing import DefsFolderSandbox
from shop import MEMBERS, SHOP_FAILURES, Orders, Shop, shop_frames
from support import load_error, scaffold_checks

import dagster_dataframely as dd
from dagster_dataframely.errors import (
    CollectionMemberError,
    MemberPartitionsError,
    UnknownAssetError,
)
from dagster_dataframely.io import ParquetIOManager

_ASSETS = {member: asset for member, asset in MEMBERS.items()}


def _defs(tmp_path: Path, **kwargs: Any) -> dg.Definitions:
    frames = shop_frames()

    def stored(member: str) -> dg.AssetsDefinition:
        @dg.asset(name=_ASSETS[member], **kwargs)
        def table() -> pl.DataFrame:
            return frames[member]

        return table

    return dg.Definitions(
        assets=[stored(member) for member in _ASSETS],
        resources={"io_manager": ParquetIOManager(base_dir=str(tmp_path))},
    )


def _failed(defs: dg.Definitions) -> dict[tuple[str, str], int]:
    result = defs.resolve_implicit_global_asset_job_def().execute_in_process(
        instance=dg.DagsterInstance.ephemeral(), raise_on_error=False
    )
    members = {asset: member for member, asset in _ASSETS.items()}
    return {
        (members[e.asset_key.to_user_string()], e.check_name): e.metadata["dy_failed_count"].value
        for e in result.get_asset_check_evaluations()
        if not e.passed
    }


def _checks_on(defs: dg.Definitions, asset: str) -> list[str]:
    return sorted(
        key.name
        for checks in defs.asset_checks or []
        for key in checks.check_keys  # type: ignore[union-attr]
        if key.asset_key.to_user_string() == asset
    )


def test_with_schemas_takes_a_collection_entry(tmp_path: Path) -> None:
    defs = dd.with_schemas(_defs(tmp_path), {Shop: MEMBERS})

    assert _failed(defs) == SHOP_FAILURES
    spec = defs.resolve_assets_def("orders").specs_by_key[dg.AssetKey("orders")]
    assert "dagster/column_schema" in spec.metadata  # the member's Columns tab


def test_a_member_with_its_own_entry_keeps_its_own_checks(tmp_path: Path) -> None:
    defs = dd.with_schemas(_defs(tmp_path), {"orders": Orders, Shop: MEMBERS}, warn=["amount"])

    # One check per name on orders (no duplicate keys), its rules `warn` as the entry says.
    on_orders = _checks_on(defs, "orders")
    assert len(on_orders) == len(set(on_orders))
    assert _failed(defs) == SHOP_FAILURES
    (own,) = [c for c in defs.asset_checks or [] if c.node_def.name == "orders__dy_checks"]  # type: ignore[union-attr]
    spec = {s.key.name: s for s in own.check_specs}  # type: ignore[union-attr]
    assert not spec["dy_rule__amount__min"].blocking


def test_an_unknown_member_asset_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UnknownAssetError, match="do not declare: lines"):
        dd.with_schemas(_defs(tmp_path), {Shop: {**MEMBERS, "lines": "lines"}})


def test_members_partitioned_differently_are_refused_when_defined(tmp_path: Path) -> None:
    days = dg.StaticPartitionsDefinition(["mon"])
    defs = _defs(tmp_path)
    orders = _defs(tmp_path / "p", partitions_def=days).resolve_assets_def("orders")
    mixed = dg.Definitions(
        assets=[*(a for a in defs.assets or [] if a.key != dg.AssetKey("orders")), orders]  # type: ignore[union-attr]
    )
    with pytest.raises(MemberPartitionsError, match="orders: partitioned by"):
        dd.with_schemas(mixed, {Shop: MEMBERS})


# ------------------------------------- Component ------------------------------------- #


def test_the_component_builds_collection_checks_from_yaml(
    sandbox: DefsFolderSandbox, tmp_path: Path
) -> None:
    path = scaffold_checks(
        sandbox,
        {
            "assets_outside_defs": True,  # the members are merged in below
            "checks": [],
            "collections": [
                {"collection": "shop:Shop", "members": MEMBERS, "warn": ["order_has_lines"]}
            ],
        },
    )
    with sandbox.load_component_and_build_defs(defs_path=path) as (_, defs):
        merged = dg.Definitions.merge(_defs(tmp_path), defs)
        assert _failed(merged) == SHOP_FAILURES
        (checks,) = defs.asset_checks or []
        specs = {(s.asset_key.path[0], s.key.name): s for s in checks.check_specs}  # type: ignore[union-attr]
        assert not specs["orders", "dy_filter__order_has_lines"].blocking


def test_a_component_entry_with_a_missing_member_names_the_file(
    sandbox: DefsFolderSandbox,
) -> None:
    entry = {"collection": "shop:Shop", "members": {}}
    error = load_error(sandbox, scaffold_checks(sandbox, {"checks": [], "collections": [entry]}))
    assert isinstance(error, CollectionMemberError)
    assert "defs.yaml: collections[0] (Shop)" in str(error)
    assert "required members missing: customers, lines, orders" in str(error)
