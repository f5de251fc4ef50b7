"""Mistakes in a `SchemaChecksComponent`'s `defs.yaml` a user makes, refused when the defs
folder loads with the file, the entry and the fix; and `collections:` entries over
partitioned members, run for real."""

from __future__ import annotations

import textwrap
from pathlib import Path

import dagster as dg
import pytest
from dagster.components.testing import DefsFolderSandbox
from shop import MEMBERS, SHOP_FAILURES
from support import load_error, scaffold_checks

import dagster_dataframely as dd
from dagster_dataframely.errors import (
    InvalidSettingError,
    InvalidSourceError,
    InvalidTableCheckError,
    MemberPartitionsError,
    UnknownAssetError,
)

ORDERS = "dagster_dataframely.data:OrdersSchema"

#: A module of the defs folder storing the shop's tables, each partitioned as `{partitions}`.
SHOP_ASSETS = """\
import dagster as dg
import polars as pl

from shop import MEMBERS, shop_frames

DAYS = dg.DailyPartitionsDefinition(start_date="2024-05-01", end_date="2024-05-04")
REGIONS = dg.StaticPartitionsDefinition(["eu", "us"])


def _stored(member: str, partitions_def) -> dg.AssetsDefinition:
    @dg.asset(name=MEMBERS[member], partitions_def=partitions_def)
    def table() -> pl.DataFrame:
        return shop_frames()[member]

    return table


customers = _stored("customers", {customers})
orders = _stored("orders", {orders})
lines = _stored("lines", {lines})
"""


def _declare_shop(sandbox: DefsFolderSandbox, *, customers: str, orders: str, lines: str) -> None:
    module = SHOP_ASSETS.format(customers=customers, orders=orders, lines=lines)
    (sandbox.defs_folder_path / "shop_assets.py").write_text(textwrap.dedent(module))


def _shop_entry(**fields: object) -> dict[str, object]:
    return {"collection": "shop:Shop", "members": MEMBERS, **fields}


def _failed_by_member(result: dg.ExecuteInProcessResult) -> dict[tuple[str, str], int]:
    members = {asset: member for member, asset in MEMBERS.items()}
    return {
        (members[e.asset_key.to_user_string()], e.check_name): e.metadata["dy_failed_count"].value
        for e in result.get_asset_check_evaluations()
        if not e.passed
    }


def _load_messages(sandbox: DefsFolderSandbox, path: Path) -> str:
    """What loading the component at `path` raised, with every error it was caused by, one a
    line: Dagster's (with the file and line) over this package's."""
    with pytest.raises(Exception) as raised, sandbox.load_component_and_build_defs(defs_path=path):
        pass
    messages = []
    error: BaseException | None = raised.value
    while error is not None:
        messages.append(str(error))
        error = error.__cause__
    return "\n".join(messages)


# ------------------------------------- unknown keys ------------------------------------- #


def test_a_wrong_key_inside_an_entry_is_named_with_the_closest_key(
    sandbox: DefsFolderSandbox,
) -> None:
    entries = {
        "assets_outside_defs": True,
        "checks": [{"asset": "orders", "schemas": ORDERS}],
        "collections": [{"collection": "shop:Shop", "members": MEMBERS, "granularity": "rule"}],
    }
    path = scaffold_checks(sandbox, entries)

    message = _load_messages(sandbox, path)
    assert (
        "an entry of checks: has key(s) 'schemas' that it does not take. Did you mean 'schema' "
        "for 'schemas'? The keys of an entry are asset, schema, warn," in message
    )
    assert (
        "an entry of collections: has key(s) 'granularity' that it does not take. Did you mean "
        "'check_granularity' for 'granularity'?" in message
    )
    assert f"{path / 'defs.yaml'}:3" in message  # where `checks:` starts


def test_an_entry_key_misspelled_beside_checks_is_named_with_the_entry_key_and_where_it_goes(
    sandbox: DefsFolderSandbox,
) -> None:
    """`tolerance:` beside `checks:`: pydantic alone says "Extra inputs are not permitted";
    the component's attributes have no `tolerate`, each entry of `checks:` has."""
    entries = {
        "assets_outside_defs": True,
        "tolerance": {"amount": {"warn_above": 1}},
        "checks": [{"asset": "orders", "schema": ORDERS}],
    }
    path = scaffold_checks(sandbox, entries)

    message = " ".join(_load_messages(sandbox, path).split())
    assert (
        "attributes: has key(s) 'tolerance' that it does not take. Did you mean 'tolerate' for "
        "'tolerance'? It is a key of each entry of checks:, not of attributes. The keys of "
        "attributes are checks, collections, blocking," in message
    )
    assert f"{path / 'defs.yaml'}:" in message


# ---------------------------------------- sources ---------------------------------------- #


def test_an_unknown_source_kind_names_the_file_the_entry_and_the_kinds(
    sandbox: DefsFolderSandbox,
) -> None:
    entry = {"asset": "orders", "schema": ORDERS, "source": {"kind": "duckdb"}}
    path = scaffold_checks(sandbox, {"assets_outside_defs": True, "checks": [entry]})

    error = load_error(sandbox, path)

    assert isinstance(error, InvalidSourceError)
    assert str(error).startswith(
        f"{path / 'defs.yaml'}: checks[0] (asset orders, schema OrdersSchema): source: kind "
        "'duckdb' is not a source kind. Did you mean 'duckdb_table'? The kinds are "
        "'io_manager', 'duckdb_table', 'sql', 'spark', 'parquet', 'delta', 'function'."
    )


def test_an_unknown_source_kind_of_a_collection_member_names_the_member(
    sandbox: DefsFolderSandbox,
) -> None:
    entry = _shop_entry(sources={"orders": {"kind": "csv", "path": "orders.csv"}})
    path = scaffold_checks(
        sandbox, {"assets_outside_defs": True, "checks": [], "collections": [entry]}
    )

    error = load_error(sandbox, path)

    assert isinstance(error, InvalidSourceError)
    assert "defs.yaml: collections[0] (Shop): sources.orders: kind 'csv' is not" in str(error)
    assert "'parquet', 'delta'" in str(error)


def test_a_collection_member_source_without_its_resource_key_names_the_member(
    sandbox: DefsFolderSandbox,
) -> None:
    entry = _shop_entry(sources={"lines": {"kind": "sql", "dialect": "postgres"}})
    path = scaffold_checks(
        sandbox, {"assets_outside_defs": True, "checks": [], "collections": [entry]}
    )

    error = load_error(sandbox, path)

    assert isinstance(error, InvalidSourceError)
    assert str(error) == (
        f"{path / 'defs.yaml'}: collections[0] (Shop): sources.lines: source kind 'sql' needs "
        "resource_key, e.g. {kind: sql, resource_key: warehouse, dialect: postgres}."
    )


def test_a_source_an_entry_cannot_build_names_its_field(sandbox: DefsFolderSandbox) -> None:
    entry = {"asset": "orders", "schema": ORDERS, "source": {"kind": "parquet"}}
    path = scaffold_checks(sandbox, {"assets_outside_defs": True, "checks": [entry]})

    error = load_error(sandbox, path)

    assert str(error) == (
        f"{path / 'defs.yaml'}: checks[0] (asset orders, schema OrdersSchema): source: source "
        "kind 'parquet' needs a path (a file, glob or URL)."
    )


# --------------------------------- values Dagster checks late --------------------------------- #


@pytest.mark.parametrize("where", ["entry", "component"])
def test_a_blocking_that_is_not_true_or_false_names_the_file_the_entry_and_the_fix(
    sandbox: DefsFolderSandbox, where: str
) -> None:
    """Not Dagster's ParameterCheckError from deep in AssetCheckSpec, without file or entry."""
    entry = {"asset": "orders", "schema": ORDERS}
    shared = {"blocking": "sometimes"}
    attributes = (
        {"checks": [{**entry, **shared}]} if where == "entry" else {"checks": [entry], **shared}
    )
    path = scaffold_checks(sandbox, {"assets_outside_defs": True, **attributes})

    error = load_error(sandbox, path)

    assert isinstance(error, InvalidSettingError)
    assert str(error) == (
        f"{path / 'defs.yaml'}: checks[0] (asset orders, schema OrdersSchema): Invalid setting "
        "from argument blocking='sometimes' (the checks of asset orders): expected true or "
        "false. Fix the argument, or unset it so that each check blocks when it fails at ERROR."
    )


def test_expect_rows_given_a_bare_number_shows_the_forms_it_takes_at_its_line(
    sandbox: DefsFolderSandbox,
) -> None:
    entry = {"asset": "orders", "schema": ORDERS, "expect_rows": 300000}
    path = scaffold_checks(sandbox, {"assets_outside_defs": True, "checks": [entry]})

    shown = _load_messages(sandbox, path)
    assert f"{path / 'defs.yaml'}:" in shown and "attributes.checks.0.expect_rows" in shown
    assert (
        "InvalidTableCheckError: expect_rows is the number 300000, which says no bound: write "
        "{min: 300000} for at least 300,000 rows, {max: 300000} for at most, or both." in shown
    )


def test_expect_rows_given_a_bare_number_in_python_shows_the_forms_it_takes() -> None:
    with pytest.raises(InvalidTableCheckError) as raised:
        dd.schema_checks(dd.data.OrdersSchema, asset="orders", expect_rows=300000)  # type: ignore[arg-type]

    assert str(raised.value) == (
        "expect_rows= for schema OrdersSchema is the number 300000, which says no bound: write "
        "dd.ExpectRows(min=300000) for at least 300,000 rows, dd.ExpectRows(max=300000) for at "
        "most, or both."
    )


# ------------------------------------ collection members ------------------------------------ #


def test_a_collection_member_naming_an_undeclared_asset_fails_with_the_closest_keys(
    sandbox: DefsFolderSandbox,
) -> None:
    _declare_shop(sandbox, customers="None", orders="None", lines="None")
    entry = _shop_entry(members={**MEMBERS, "lines": "order_line"})
    path = scaffold_checks(sandbox, {"checks": [], "collections": [entry]})

    error = load_error(sandbox)

    assert isinstance(error, UnknownAssetError)
    assert str(error).startswith(
        f"{path / 'defs.yaml'}: collections[0] (Shop): members.lines: asset order_line is not "
        "declared in this project's defs folder, which declares 3 asset(s). Closest declared "
        "keys: order_lines, orders."
    )


def test_collection_checks_take_the_members_daily_partitions_and_check_the_runs_partition(
    sandbox: DefsFolderSandbox, tmp_path: Path
) -> None:
    _declare_shop(sandbox, customers="DAYS", orders="DAYS", lines="DAYS")
    scaffold_checks(sandbox, {"checks": [], "collections": [_shop_entry()]})

    with sandbox.build_component_tree() as tree:
        defs = tree.build_defs()
        result = dg.materialize(
            [*(defs.assets or []), *(defs.asset_checks or [])],  # type: ignore[list-item]
            partition_key="2024-05-02",
            resources={"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path))},
            raise_on_error=False,
        )

    (checks,) = defs.asset_checks or []
    days = dg.DailyPartitionsDefinition(start_date="2024-05-01", end_date="2024-05-04")
    assert {spec.partitions_def for spec in checks.check_specs} == {days}  # type: ignore[union-attr]
    assert _failed_by_member(result) == SHOP_FAILURES
    assert {e.partition for e in result.get_asset_check_evaluations()} == {"2024-05-02"}


def test_a_collection_entry_declares_its_partitions_in_yaml(sandbox: DefsFolderSandbox) -> None:
    regions = {"type": "static", "partition_keys": ["eu", "us"]}
    path = scaffold_checks(
        sandbox,
        {
            "assets_outside_defs": True,
            "checks": [],
            "collections": [_shop_entry(partitions_def=regions)],
        },
    )

    with sandbox.load_component_and_build_defs(defs_path=path) as (_, defs):
        (checks,) = defs.asset_checks or []

    assert {spec.partitions_def for spec in checks.check_specs} == {  # type: ignore[union-attr]
        dg.StaticPartitionsDefinition(["eu", "us"])
    }


def test_members_partitioned_differently_fail_at_load_with_advice_yaml_can_follow(
    sandbox: DefsFolderSandbox,
) -> None:
    _declare_shop(sandbox, customers="DAYS", orders="REGIONS", lines="DAYS")
    scaffold_checks(sandbox, {"checks": [], "collections": [_shop_entry()]})

    error = load_error(sandbox)

    assert isinstance(error, MemberPartitionsError)
    message = str(error)
    assert "defs.yaml: collections[0] (Shop): Collection Shop:" in message
    assert "orders: partitioned by" in message
    assert "`partitions_def:` on a YAML entry" in message
