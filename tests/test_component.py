"""`dd.SchemaChecksComponent` loaded from real `defs.yaml` files in a defs folder, beside the
Python modules that declare the assets it checks, as in a `dg` project."""

from __future__ import annotations

import textwrap
from pathlib import Path

import dagster as dg
import polars as pl
from dagster.components.testing import DefsFolderSandbox
from support import evaluations, load_error, scaffold_checks

import dagster_dataframely as dd
from dagster_dataframely.data import defective_orders, storefront_orders

ORDERS = "dagster_dataframely.data:OrdersSchema"
#: A module of the defs folder declaring the assets most tests check.
ASSETS = """\
import dagster as dg
import polars as pl

from dagster_dataframely.data import defective_orders


@dg.asset
def orders() -> pl.DataFrame:
    return defective_orders()


@dg.asset(key=["raw", "orders"])
def raw_orders() -> pl.DataFrame:
    return defective_orders()


archive = dg.AssetSpec("archive")
"""


def _declare(sandbox: DefsFolderSandbox, source: str = ASSETS, *, module: str = "assets") -> None:
    """A Python module of the defs folder, as `dg scaffold defs dagster.asset` makes one."""
    (sandbox.defs_folder_path / f"{module}.py").write_text(textwrap.dedent(source))


def _check_keys(defs: dg.Definitions) -> dict[str, dg.AssetCheckSpec]:
    return {
        spec.key.name: spec
        for checks in defs.asset_checks or []
        for spec in checks.check_specs  # type: ignore[union-attr]
    }


def test_scaffolded_component_loads_with_no_checks(sandbox: DefsFolderSandbox) -> None:
    path = sandbox.scaffold_component(component_cls=dd.SchemaChecksComponent, defs_path="quality")

    assert "checks: []" in (path / "defs.yaml").read_text()
    with sandbox.load_component_and_build_defs(defs_path=path) as (component, defs):
        assert isinstance(component, dd.SchemaChecksComponent)
        assert not defs.asset_checks


def test_entries_take_shared_settings_unless_they_set_their_own(
    sandbox: DefsFolderSandbox,
) -> None:
    _declare(sandbox)
    path = scaffold_checks(
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
        specs = [spec for checks in defs.asset_checks or [] for spec in checks.check_specs]  # type: ignore[union-attr]
        shared = {s.name: s for s in specs if s.asset_key == dg.AssetKey("orders")}
        assert set(shared) == {"dy_schema__columns", "dy_schema__rules"}
        assert not shared["dy_schema__rules"].blocking
        own = {s.name for s in specs if s.asset_key == dg.AssetKey(["raw", "orders"])}
        assert "dy_col__amount" in own


def test_component_checks_run_against_the_stored_table(
    sandbox: DefsFolderSandbox, tmp_path: Path
) -> None:
    _declare(sandbox)
    scaffold_checks(
        sandbox, {"checks": [{"asset": "orders", "schema": ORDERS, "warn": ["primary_key"]}]}
    )

    with sandbox.build_component_tree() as tree:
        defs = tree.build_defs()
        result = dg.materialize(
            [*(defs.assets or []), *(defs.asset_checks or [])],
            selection="orders",
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
    path = scaffold_checks(
        sandbox,
        {
            "checks": [
                {"asset": "orders", "schema": ORDERS},
                {"asset": "refunds", "schema": "dagster_dataframely.data:RefundsSchema"},
            ]
        },
    )

    cause = load_error(sandbox, path)
    message = str(cause)
    assert f"{path / 'defs.yaml'}:" in message
    assert "attributes.checks.1.schema" in message
    assert "module 'dagster_dataframely.data' has no 'RefundsSchema'" in message


def test_an_unknown_rule_in_warn_names_the_file_and_the_entry(sandbox: DefsFolderSandbox) -> None:
    _declare(sandbox)
    path = scaffold_checks(
        sandbox,
        {
            "checks": [
                {"asset": "orders", "schema": ORDERS},
                {"asset": "archive", "schema": ORDERS, "warn": ["amount_max"]},
            ]
        },
    )

    cause = load_error(sandbox, path)
    assert isinstance(cause, dd.errors.InvalidSeverityError)
    assert str(cause).startswith(
        f"{path / 'defs.yaml'}: checks[1] (asset archive, schema OrdersSchema): 'amount_max' is "
        "neither a rule nor a column"
    )


def test_a_bad_setting_names_the_file_and_the_entry(sandbox: DefsFolderSandbox) -> None:
    _declare(sandbox)
    path = scaffold_checks(
        sandbox, {"checks": [{"asset": "orders", "schema": ORDERS, "max_failure_samples": -1}]}
    )

    cause = load_error(sandbox, path)
    assert isinstance(cause, dd.errors.InvalidSettingError)
    assert "checks[0] (asset orders, schema OrdersSchema)" in str(cause)


# ------------------------- keys the project's defs folder declares ------------------------- #


def test_an_entry_naming_an_undeclared_asset_fails_with_the_closest_keys(
    sandbox: DefsFolderSandbox,
) -> None:
    _declare(sandbox)
    path = scaffold_checks(sandbox, {"checks": [{"asset": "order", "schema": ORDERS}]})

    error = load_error(sandbox)

    assert isinstance(error, dd.errors.UnknownAssetError)
    message = str(error)
    assert message.startswith(
        f"{path / 'defs.yaml'}: checks[0] (asset order, schema OrdersSchema): asset order is "
        "not declared in this project's defs folder, which declares 3 asset(s). Closest "
        "declared keys: orders, raw/orders."
    )
    assert "assets_outside_defs: true" in message


def test_assets_a_definitions_function_hides_are_named_with_the_reason(
    sandbox: DefsFolderSandbox,
) -> None:
    """Dagster loads only what a module's `@dg.definitions` function returns: the assets
    beside it are in no Definitions, and the entry says why it sees 0 assets."""
    beside = (
        ASSETS
        + "\n\n@dg.definitions\ndef resources() -> dg.Definitions:\n    return dg.Definitions()\n"
    )
    _declare(sandbox, beside)
    scaffold_checks(sandbox, {"checks": [{"asset": "orders", "schema": ORDERS}]})

    error = load_error(sandbox)

    assert isinstance(error, dd.errors.UnknownAssetError)
    message = str(error)
    assert "which declares 0 asset(s)" in message
    assert (
        "assets.py define(s) a @dg.definitions function beside assets: from such a module "
        "Dagster loads only what that function returns" in message
    )


def test_a_source_asset_is_refused_as_with_schemas_refuses_it(sandbox: DefsFolderSandbox) -> None:
    _declare(sandbox, 'import dagster as dg\n\nledger = dg.SourceAsset("ledger")\n')
    scaffold_checks(sandbox, {"checks": [{"asset": "ledger", "schema": ORDERS}]})

    error = load_error(sandbox)

    assert isinstance(error, dd.errors.UnloadableAssetError)
    assert "checks[0] (asset ledger, schema OrdersSchema): SchemaChecksComponent" in str(error)
    assert "it is a SourceAsset" in str(error)


def test_assets_merged_from_python_are_checked_when_the_component_says_so(
    sandbox: DefsFolderSandbox, tmp_path: Path
) -> None:
    path = scaffold_checks(
        sandbox,
        {"assets_outside_defs": True, "checks": [{"asset": "orders", "schema": ORDERS}]},
    )

    @dg.asset
    def orders() -> pl.DataFrame:
        return defective_orders()

    with sandbox.load_component_and_build_defs(defs_path=path) as (_, defs):
        merged = dg.Definitions.merge(dg.Definitions(assets=[orders]), defs)
        result = dg.materialize(
            [*(merged.assets or []), *(merged.asset_checks or [])],  # type: ignore[list-item]
            resources={"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path))},
            raise_on_error=False,
        )

    assert evaluations(result)["dy_rule__primary_key"].metadata["dy_failed_count"].value == 2


def test_a_component_built_on_its_own_has_no_project_to_check_keys_against() -> None:
    component = dd.SchemaChecksComponent.resolve_from_yaml(
        f"checks: [{{asset: orders, schema: '{ORDERS}'}}]"
    )

    defs = dg.build_defs_for_component(component)

    assert {key.asset_key for key in _check_keys(defs).values()} == {dg.AssetKey("orders")}


# --------------------------------------- partitions --------------------------------------- #

DAILY = """\
import dagster as dg
import polars as pl

from dagster_dataframely.data import defective_orders, storefront_orders

DAYS = dg.DailyPartitionsDefinition(start_date="2024-05-01", end_date="2024-05-04")


@dg.asset(partitions_def=DAYS)
def daily_orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
    if context.partition_key == "2024-05-02":
        return defective_orders()
    return storefront_orders()
"""


def test_checks_take_the_partitions_of_the_asset_and_evaluate_the_runs_partition(
    sandbox: DefsFolderSandbox, tmp_path: Path
) -> None:
    _declare(sandbox, DAILY)
    scaffold_checks(sandbox, {"checks": [{"asset": "daily_orders", "schema": ORDERS}]})
    storage = {"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path))}

    with sandbox.build_component_tree() as tree:
        defs = tree.build_defs()
        everything = [*(defs.assets or []), *(defs.asset_checks or [])]
        good = dg.materialize(everything, partition_key="2024-05-01", resources=storage)
        bad = dg.materialize(
            everything, partition_key="2024-05-02", resources=storage, raise_on_error=False
        )

    (asset,) = defs.assets or []
    specs = _check_keys(defs).values()
    assert {spec.partitions_def for spec in specs} == {asset.partitions_def}  # type: ignore[union-attr]
    assert all(e.passed and e.partition == "2024-05-01" for e in evaluations(good).values())
    failing = {e.check_name: e for e in evaluations(bad).values() if not e.passed}
    assert failing["dy_rule__primary_key"].partition == "2024-05-02"
    assert failing["dy_rule__primary_key"].metadata["dy_failed_count"].value == 2


def test_checks_job_runs_the_files_checks_of_one_partition_alone(
    sandbox: DefsFolderSandbox, tmp_path: Path
) -> None:
    _declare(sandbox, DAILY)
    entries = {"checks": [{"asset": "daily_orders", "schema": ORDERS}], "checks_job": "quality"}
    scaffold_checks(sandbox, entries)
    storage = {"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path))}

    with sandbox.build_component_tree() as tree:
        defs = tree.build_defs()
        (asset,) = defs.assets or []
        dg.materialize([asset], partition_key="2024-05-02", resources=storage)
        job = dg.Definitions.merge(defs, dg.Definitions(resources=storage)).resolve_job_def(
            "quality"
        )
        result = job.execute_in_process(partition_key="2024-05-02", raise_on_error=False)

    assert result.get_asset_materialization_events() == []
    failing = {e.check_name: e for e in evaluations(result).values() if not e.passed}
    assert failing["dy_rule__primary_key"].partition == "2024-05-02"
    assert failing["dy_rule__primary_key"].metadata["dy_failed_count"].value == 2


def test_an_entry_declares_its_partitions_in_yaml(
    sandbox: DefsFolderSandbox, tmp_path: Path
) -> None:
    regions = {"type": "static", "partition_keys": ["eu", "us"]}
    path = scaffold_checks(
        sandbox,
        {
            "assets_outside_defs": True,
            "checks": [{"asset": "orders", "schema": ORDERS, "partitions_def": regions}],
        },
    )

    @dg.asset(partitions_def=dg.StaticPartitionsDefinition(["eu", "us"]))
    def orders(context) -> pl.DataFrame:  # type: ignore[no-untyped-def]
        return defective_orders() if context.partition_key == "us" else storefront_orders()

    with sandbox.load_component_and_build_defs(defs_path=path) as (_, defs):
        result = dg.materialize(
            [orders, *(defs.asset_checks or [])],
            partition_key="us",
            resources={"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path))},
            raise_on_error=False,
        )

    assert {spec.partitions_def for spec in _check_keys(defs).values()} == {
        dg.StaticPartitionsDefinition(["eu", "us"])
    }
    primary_key = evaluations(result)["dy_rule__primary_key"]
    assert (primary_key.passed, primary_key.partition) == (False, "us")


# ---------------------------------- one check, two entries ---------------------------------- #


def test_two_entries_checking_one_asset_name_both_entries(sandbox: DefsFolderSandbox) -> None:
    _declare(sandbox)
    path = scaffold_checks(
        sandbox,
        {
            "checks": [
                {"asset": "orders", "schema": ORDERS},
                {"asset": "raw/orders", "schema": ORDERS},
                {"asset": "orders", "schema": ORDERS, "warn": ["note"]},
            ]
        },
    )

    error = load_error(sandbox)

    assert isinstance(error, dd.errors.DuplicateChecksError)
    file = path / "defs.yaml"
    assert str(error).startswith(
        f"{file}: checks[2] (asset orders, schema OrdersSchema) defines asset checks that "
        f"{file}: checks[0] (asset orders, schema OrdersSchema) defines too, on asset orders: "
    )
    assert "remove one of the entries" in str(error)


def test_two_schemas_on_one_asset_clash_on_their_shared_check_names(
    sandbox: DefsFolderSandbox,
) -> None:
    _declare(sandbox)
    scaffold_checks(
        sandbox,
        {
            "checks": [
                {"asset": "orders", "schema": ORDERS},
                {"asset": "orders", "schema": "dagster_dataframely_demo.schema:DailySales"},
            ]
        },
    )

    error = load_error(sandbox)

    assert isinstance(error, dd.errors.DuplicateChecksError)
    assert "checks[1] (asset orders, schema DailySales) defines asset checks that" in str(error)
    assert "dy_schema__columns" in str(error)


def test_two_defs_folders_checking_one_asset_name_both_files(sandbox: DefsFolderSandbox) -> None:
    _declare(sandbox)
    sales = scaffold_checks(
        sandbox, {"checks": [{"asset": "orders", "schema": ORDERS}]}, at="sales"
    )
    audit = scaffold_checks(
        sandbox, {"checks": [{"asset": "orders", "schema": ORDERS}]}, at="audit"
    )

    error = load_error(sandbox)

    assert isinstance(error, dd.errors.DuplicateChecksError)
    origins = [f"{folder / 'defs.yaml'}: checks[0] (asset orders" for folder in (sales, audit)]
    assert all(origin in str(error) for origin in origins), str(error)
