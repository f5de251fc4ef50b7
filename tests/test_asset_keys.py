"""One reading of an asset key at every entry point (`"raw/orders"` is `["raw", "orders"]`,
an asset's definition is its key), a sidecar on a key nothing declares refused with the
closest declared keys, and sidecar steps of their own for keys that differ only in characters
a step name drops."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest
from dagster.components.testing import DefsFolderSandbox
from support import evaluations, failed, scaffold_checks

import dagster_dataframely as dd
from dagster_dataframely.data import OrdersSchema, defective_orders, storefront_orders
from dagster_dataframely.errors import InvalidAssetKeyError, UnknownAssetError
from dagster_dataframely.wiring import quarantine_path

RAW_ORDERS = dg.AssetKey(["raw", "orders"])
SPELLINGS = ["raw/orders", ["raw", "orders"], ("raw", "orders"), RAW_ORDERS]


def _stored(key: list[str], frame: pl.DataFrame) -> dg.AssetsDefinition:
    @dg.asset(key=key)
    def stored() -> pl.DataFrame:
        return frame

    return stored


def _run(assets: list[Any], tmp_path: Path) -> dg.ExecuteInProcessResult:
    return _run_selected(assets, tmp_path, None)


def _run_selected(
    assets: list[Any], tmp_path: Path, selection: dg.AssetSelection | None
) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        assets,
        selection=selection,
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
        (3, r"asset=3 is not an asset key\. Pass the asset's definition .*, a dg\.AssetKey"),
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


# ----------------------------------- declared keys ----------------------------------- #

CHECKS_ONLY = dg.AssetSelection.all_asset_checks()


def _read_orders(_context: dg.AssetCheckExecutionContext) -> pl.DataFrame:
    """A source that reads whatever key it is asked for: the checks of a typo would pass."""
    return storefront_orders()


def test_a_sidecar_on_a_misspelled_key_fails_the_definitions_with_the_closest_keys(
    tmp_path: Path,
) -> None:
    checks = dd.schema_checks(OrdersSchema, asset="raw/order", source=_read_orders)
    defs = dg.Definitions(assets=[_stored(["raw", "orders"], defective_orders())])

    with pytest.raises(UnknownAssetError) as refused:
        dg.Definitions.validate_loadable(
            dg.Definitions.merge(defs, dg.Definitions(asset_checks=[checks]))
        )
    with pytest.raises(UnknownAssetError):
        _run_selected([*(defs.assets or []), checks], tmp_path, CHECKS_ONLY)

    message = str(refused.value)
    assert "dd.schema_checks(asset='raw/order')" in message
    assert "Closest declared keys: raw/orders." in message
    assert "pass the asset's definition itself (its @dg.asset or dg.AssetSpec)" in message


def test_a_dependency_nothing_declares_stays_a_stub_for_other_code() -> None:
    """Only this package's checks are refused: Dagster's stub for a plain dependency (a table
    upstream of everything) and for another library's check still load."""

    @dg.asset(deps=["landing_zone"])
    def orders() -> None: ...

    @dg.asset_check(asset="ordres")
    def hand_written() -> dg.AssetCheckResult:
        return dg.AssetCheckResult(passed=True)

    graph = dg.Definitions(assets=[orders], asset_checks=[hand_written]).resolve_asset_graph()

    assert graph.get(dg.AssetKey("landing_zone")).assets_def.is_auto_created_stub
    assert graph.get(dg.AssetKey("ordres")).assets_def.is_auto_created_stub


@pytest.mark.parametrize("spelling", ["definition", "user string", "AssetKey", "parts"])
def test_every_spelling_of_a_declared_key_runs_its_checks(spelling: str, tmp_path: Path) -> None:
    stored = _stored(["raw", "orders"], defective_orders())
    asset = {
        "definition": stored,
        "user string": "raw/orders",
        "AssetKey": RAW_ORDERS,
        "parts": ["raw", "orders"],
    }[spelling]
    checks = dd.schema_checks(OrdersSchema, asset=asset)

    result = _run([stored, checks], tmp_path)

    assert failed(result)["dy_rule__primary_key"] == (2, dg.AssetCheckSeverity.ERROR)
    assert {e.asset_key for e in result.get_asset_check_evaluations()} == {RAW_ORDERS}


def test_an_external_asset_spec_is_declared_and_checked(tmp_path: Path) -> None:
    """A table another tool makes (dbt, a warehouse job), declared as a `dg.AssetSpec`."""
    orders, refunds = dg.AssetSpec(["warehouse", "orders"]), dg.AssetSpec("refunds")
    by_spec = dd.schema_checks(OrdersSchema, asset=orders, source=_read_orders)
    by_key = dd.schema_checks(OrdersSchema, asset="refunds", source=_read_orders)

    result = _run_selected([orders, refunds, by_spec, by_key], tmp_path, CHECKS_ONLY)

    assert result.get_step_failure_events() == []
    evaluated = result.get_asset_check_evaluations()
    assert len(evaluated) == 2 * len(_names())
    assert {e.asset_key.to_user_string() for e in evaluated} == {"warehouse/orders", "refunds"}


def test_the_checks_of_a_partitioned_definition_take_its_partitions() -> None:
    daily = dg.DailyPartitionsDefinition(start_date="2024-01-01")

    @dg.asset(partitions_def=daily)
    def orders() -> pl.DataFrame:
        return storefront_orders()

    checks = dd.schema_checks(OrdersSchema, asset=orders)

    assert {spec.partitions_def for spec in checks.check_specs} == {daily}
    dg.Definitions.validate_loadable(dg.Definitions(assets=[orders], asset_checks=[checks]))


def test_a_multi_asset_definition_is_refused_with_its_keys() -> None:
    @dg.multi_asset(specs=[dg.AssetSpec("orders"), dg.AssetSpec("refunds")])
    def shop():  # type: ignore[no-untyped-def]  # Dagster reads a `-> None` as one output
        ...

    with pytest.raises(InvalidAssetKeyError) as refused:
        dd.schema_checks(OrdersSchema, asset=shop)

    message = str(refused.value)
    assert "asset=shop is a multi-asset of 2 assets (orders, refunds)" in message
    assert "asset='orders'" in message
    dd.schema_checks(OrdersSchema, asset=shop.specs_by_key[dg.AssetKey("orders")])


CODE_LOCATION = """\
import dagster as dg
import polars as pl

import dagster_dataframely as dd
from dagster_dataframely.data import OrdersSchema, defective_orders, storefront_orders


@dg.asset(key_prefix="raw")
def orders() -> pl.DataFrame:
    return defective_orders()


@dg.asset(key_prefix="raw")
def returns() -> pl.DataFrame:
    return defective_orders()


external = dg.AssetSpec("payments")


def read_orders(context):
    return storefront_orders()


defs = dg.Definitions(
    assets=[orders, returns, external],
    asset_checks=[
        dd.schema_checks(OrdersSchema, asset=orders),
        dd.schema_checks(OrdersSchema, asset="raw/returns"),
        dd.schema_checks(OrdersSchema, asset={payments}, source=read_orders),
    ],
    jobs=[
        dg.define_asset_job(
            "quality", selection=dg.AssetSelection.checks_for_assets("payments")
        )
    ],
    resources={{"io_manager": dd.ParquetIOManager(base_dir={warehouse!r})}},
    executor=dg.in_process_executor,  # one process: the run's steps need no imports of their own
)
"""


def _dagster(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {**os.environ, "DAGSTER_HOME": str(home), "NO_COLOR": "1"}
    dagster = Path(sys.executable).parent / "dagster"
    return subprocess.run(
        [str(dagster), *args], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300
    )


def test_a_code_location_with_a_misspelled_key_fails_to_load_and_validate(
    tmp_path: Path,
) -> None:
    """Through the `dagster` CLI, where teams look: `dagster definitions validate` fails on the
    typo with the closest key, and so does loading the location for a run; with the key fixed
    the same location validates and the checks of the external `AssetSpec` run and pass."""
    location = tmp_path / "location.py"
    warehouse = str(tmp_path / "w")
    location.write_text(
        textwrap.dedent(CODE_LOCATION).format(payments="'payment'", warehouse=warehouse)
    )

    validated = _dagster(tmp_path, "definitions", "validate", "-f", str(location))
    output = validated.stdout + validated.stderr
    assert validated.returncode != 0
    assert "UnknownAssetError: dd.schema_checks(asset='payment')" in output
    assert "Closest declared keys: payments." in output
    ran = _dagster(tmp_path, "job", "execute", "-f", str(location), "-j", "quality")
    assert ran.returncode != 0
    assert "UnknownAssetError" in ran.stdout + ran.stderr

    location.write_text(
        textwrap.dedent(CODE_LOCATION).format(payments="external", warehouse=warehouse)
    )
    validated = _dagster(tmp_path, "definitions", "validate", "-f", str(location))
    assert validated.returncode == 0, validated.stderr[-3000:]
    ran = _dagster(tmp_path, "job", "execute", "-f", str(location), "-j", "quality")
    assert ran.returncode == 0, (ran.stdout + ran.stderr)[-3000:]
    # The run's record, not its log lines: a step's events print while Dagster captures the
    # step's output, so their order on the terminal is not the order they happened in.
    with dg.DagsterInstance.from_config(str(tmp_path / "home")) as instance:
        (run,) = instance.get_runs(limit=1)
        checked = {
            (e.asset_key.to_user_string(), e.check_name, e.passed)
            for e in (
                entry.dagster_event.event_specific_data
                for entry in instance.all_logs(
                    run.run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION
                )
                if entry.dagster_event is not None
            )
        }
    assert run.status == dg.DagsterRunStatus.SUCCESS
    assert checked and {(key, passed) for key, _, passed in checked} == {("payments", True)}


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
        checks_per_step=1,  # a step per asset, named after it
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
