"""`dd.SchemaChecksComponent` loaded from real `defs.yaml` files in a defs folder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest
from dagster.components.testing import DefsFolderSandbox, create_defs_folder_sandbox
from support import evaluations

import dagster_dataframely as dd
from dagster_dataframely.data import defective_orders

TYPE = "dagster_dataframely.SchemaChecksComponent"
ORDERS = "dagster_dataframely.data:OrdersSchema"


@pytest.fixture
def sandbox() -> Iterator[DefsFolderSandbox]:
    with create_defs_folder_sandbox() as sandbox:
        yield sandbox


def _component(sandbox: DefsFolderSandbox, attributes: dict[str, Any]) -> Path:
    return sandbox.scaffold_component(
        component_cls=dd.SchemaChecksComponent,
        defs_path="quality",
        defs_yaml_contents={"type": TYPE, "attributes": attributes},
    )


def _check_keys(defs: dg.Definitions) -> dict[str, dg.AssetCheckSpec]:
    return {
        spec.key.name: spec
        for checks in defs.asset_checks or []
        for spec in checks.check_specs  # type: ignore[union-attr]
    }


def _load_error(sandbox: DefsFolderSandbox, path: Path) -> BaseException | None:
    """What loading the component at `path` raised, from under Dagster's tree error."""
    with pytest.raises(Exception) as raised, sandbox.load_component_and_build_defs(defs_path=path):
        pass
    return raised.value.__cause__


def test_scaffolded_component_loads_with_no_checks(sandbox: DefsFolderSandbox) -> None:
    path = sandbox.scaffold_component(component_cls=dd.SchemaChecksComponent, defs_path="quality")

    assert "checks: []" in (path / "defs.yaml").read_text()
    with sandbox.load_component_and_build_defs(defs_path=path) as (component, defs):
        assert isinstance(component, dd.SchemaChecksComponent)
        assert not defs.asset_checks


def test_entries_take_shared_settings_unless_they_set_their_own(
    sandbox: DefsFolderSandbox,
) -> None:
    path = _component(
        sandbox,
        {
            "check_granularity": "schema",
            "blocking": False,
            "checks": [
                {"asset": "orders", "schema": ORDERS},
                {"asset": "raw/orders", "schema": ORDERS, "check_granularity": "column"},
            ],
        },
    )

    with sandbox.load_component_and_build_defs(defs_path=path) as (_, defs):
        steps = {checks.node_def.name: checks for checks in defs.asset_checks or []}  # type: ignore[union-attr]
        assert set(steps) == {"orders__dy_checks", "raw__orders__dy_checks"}
        shared = {spec.name: spec for spec in steps["orders__dy_checks"].check_specs}
        assert set(shared) == {"dy_schema__columns", "dy_schema__rules"}
        assert not shared["dy_schema__rules"].blocking
        own = {spec.name for spec in steps["raw__orders__dy_checks"].check_specs}
        assert "dy_col__amount" in own


def test_component_checks_run_against_the_stored_table(
    sandbox: DefsFolderSandbox, tmp_path: Path
) -> None:
    path = _component(
        sandbox, {"checks": [{"asset": "orders", "schema": ORDERS, "warn": ["primary_key"]}]}
    )

    @dg.asset
    def orders() -> pl.DataFrame:
        return defective_orders()

    with sandbox.load_component_and_build_defs(defs_path=path) as (_, defs):
        result = dg.materialize(
            [orders, *(defs.asset_checks or [])],
            resources={"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path))},
            raise_on_error=False,
        )

    evaluated = evaluations(result)
    assert evaluated["dy_rule__primary_key"].severity == dg.AssetCheckSeverity.WARN
    assert evaluated["dy_rule__primary_key"].metadata["dy_failed_count"].value == 2
    assert evaluated["dy_rule__order_id__regex"].severity == dg.AssetCheckSeverity.ERROR


def test_a_schema_path_that_does_not_import_names_the_file_and_line(
    sandbox: DefsFolderSandbox,
) -> None:
    path = _component(
        sandbox,
        {
            "checks": [
                {"asset": "orders", "schema": ORDERS},
                {"asset": "refunds", "schema": "dagster_dataframely.data:RefundsSchema"},
            ]
        },
    )

    cause = _load_error(sandbox, path)
    message = str(cause)
    assert f"{path / 'defs.yaml'}:" in message
    assert "attributes.checks.1.schema" in message
    assert "module 'dagster_dataframely.data' has no 'RefundsSchema'" in message


def test_an_unknown_rule_in_warn_names_the_file_and_the_entry(sandbox: DefsFolderSandbox) -> None:
    path = _component(
        sandbox,
        {
            "checks": [
                {"asset": "orders", "schema": ORDERS},
                {"asset": "archive", "schema": ORDERS, "warn": ["amount_max"]},
            ]
        },
    )

    cause = _load_error(sandbox, path)
    assert isinstance(cause, dd.errors.InvalidSeverityError)
    assert str(cause).startswith(
        f"{path / 'defs.yaml'}: checks[1] (asset archive, schema OrdersSchema): 'amount_max' is "
        "neither a rule nor a column"
    )


def test_a_bad_setting_names_the_file_and_the_entry(sandbox: DefsFolderSandbox) -> None:
    path = _component(
        sandbox, {"checks": [{"asset": "orders", "schema": ORDERS, "max_failure_samples": -1}]}
    )

    cause = _load_error(sandbox, path)
    assert isinstance(cause, dd.errors.InvalidSettingError)
    assert "checks[0] (asset orders, schema OrdersSchema)" in str(cause)
