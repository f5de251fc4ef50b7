"""`dd.asset` is a `@dg.asset`: it takes every asset keyword, binds context and inputs like any
asset, accepts each documented return value, and resolves its settings when it is defined."""

import inspect
from typing import Any

import dagster as dg
import pandas as pd
import polars as pl
import pytest
from support import evaluations, failure_text, logs, materialization

import dagster_dataframely as dd
from dagster_dataframely._engine.schema_version import schema_version
from dagster_dataframely.data import OrdersSchema, defective_orders, storefront_orders
from dagster_dataframely.errors import (
    InvalidSettingError,
    InvalidSeverityError,
    ValidationAbortError,
)
from dagster_dataframely.wiring import check_specs, rules, schema_metadata

COLUMN_SCHEMA = schema_metadata(OrdersSchema)["dagster/column_schema"]


def specs_of(asset: dg.AssetsDefinition) -> dict[str, dg.AssetCheckSpec]:
    return {spec.name: spec for spec in asset.check_specs}


# ------------------------------------- definition ------------------------------------- #


def test_it_is_an_asset_with_the_schemas_columns_tab_and_check_specs():
    extra = dg.AssetCheckSpec("row_count_is_plausible", asset=["sales", "orders"])

    @dd.asset(
        OrdersSchema,
        key_prefix="sales",
        group_name="storefront",
        description="Order lines, validated.",
        tags={"domain": "sales"},
        owners=["team:finance"],
        kinds={"polars"},
        code_version="3",
        io_manager_key="warehouse",
        metadata={"owner": "finance", "dagster/column_schema": dg.TableSchema(columns=[])},
        check_specs=[extra],
    )
    def orders() -> pl.DataFrame:
        return storefront_orders()

    (spec,) = orders.specs
    assert spec.key == dg.AssetKey(["sales", "orders"])
    assert spec.group_name == "storefront"
    assert spec.description == "Order lines, validated."
    assert spec.tags["domain"] == "sales"
    assert spec.owners == ["team:finance"]
    assert spec.kinds == {"polars", "dataframely"}
    assert spec.code_version == f"3+schema.{schema_version(OrdersSchema)}"
    assert orders.get_io_manager_key_for_asset_key(spec.key) == "warehouse"
    assert spec.metadata["owner"] == "finance"
    assert spec.metadata["dagster/column_schema"] == COLUMN_SCHEMA  # the schema's entry wins
    expected = check_specs(OrdersSchema, asset=["sales", "orders"])
    assert list(specs_of(orders).values()) == [*expected, extra]
    assert not orders.op.output_defs[0].is_required  # output_required=False


@pytest.mark.parametrize("quarantine", [False, True])
def test_the_catalog_describes_it_by_the_schemas_docstring_and_finds_it_by_kind(quarantine):
    @dd.asset(OrdersSchema, quarantine=quarantine, kinds={"duckdb"})
    def orders() -> pl.DataFrame:
        return storefront_orders()

    @dd.asset(OrdersSchema, quarantine=quarantine)
    def documented() -> pl.DataFrame:
        """Orders as the shop exported them."""
        return storefront_orders()

    table = orders.specs_by_key[dg.AssetKey("orders")]
    assert table.description == inspect.cleandoc(OrdersSchema.__doc__ or "")
    assert table.kinds == {"duckdb", "polars", "dataframely"}
    described = documented.specs_by_key[dg.AssetKey("documented")]
    assert described.description == "Orders as the shop exported them."
    assert described.kinds == {"polars", "dataframely"}


def test_compute_kind_is_kept_alone_since_dagster_takes_no_kinds_beside_it():
    @dd.asset(OrdersSchema, compute_kind="polars", description="Mine.")
    def orders() -> pl.DataFrame:
        return storefront_orders()

    (spec,) = orders.specs
    assert spec.description == "Mine."
    assert orders.op.tags["dagster/compute_kind"] == "polars"
    assert spec.kinds == set()


def test_key_and_name_name_the_asset_and_its_checks():
    @dd.asset(OrdersSchema, key=["shop", "lines"])
    def orders() -> pl.DataFrame:
        return storefront_orders()

    @dd.asset(OrdersSchema, name="order_lines")
    def build() -> pl.DataFrame:
        return storefront_orders()

    assert orders.key == dg.AssetKey(["shop", "lines"])
    assert {spec.asset_key for spec in orders.check_specs} == {orders.key}
    assert build.key == dg.AssetKey("order_lines")
    assert {spec.asset_key for spec in build.check_specs} == {build.key}


@pytest.mark.parametrize("spelling", ["quarantine", "filter"])
def test_filter_is_another_spelling_of_quarantine(spelling):
    @dd.asset(OrdersSchema, **{spelling: True})
    def orders() -> pl.DataFrame:
        return storefront_orders()

    specs = specs_of(orders)
    assert specs["dy_schema__columns"].blocking
    assert not any(spec.blocking for name, spec in specs.items() if name.startswith("dy_rule"))


def test_filter_and_quarantine_cannot_disagree():
    with pytest.raises(InvalidSettingError, match="filter"):
        dd.asset(OrdersSchema, quarantine=True, filter=False)
    dd.asset(OrdersSchema, quarantine=True, filter=True)  # agreeing is fine


def test_without_a_quarantine_error_rule_checks_are_blocking():
    @dd.asset(OrdersSchema)
    def orders() -> pl.DataFrame:
        return storefront_orders()

    blocking = {name for name, spec in specs_of(orders).items() if spec.blocking}
    error_checks = {r.check_name for r in rules(OrdersSchema) if r.severity == "error"}
    assert blocking == {"dy_schema__columns", *error_checks}


def test_mistakes_are_reported_when_the_asset_is_defined():
    with pytest.raises(TypeError, match="output_required"):
        dd.asset(OrdersSchema, output_required=True)
    with pytest.raises(InvalidSeverityError, match="no_such_rule"):

        @dd.asset(OrdersSchema, warn=["no_such_rule"])
        def orders() -> pl.DataFrame:
            return storefront_orders()

    with pytest.raises(TypeError, match="generator"):

        @dd.asset(OrdersSchema)
        def streamed() -> Any:
            yield storefront_orders()


def test_settings_are_resolved_once_when_the_asset_is_defined(monkeypatch, filesystem):
    monkeypatch.setenv("DAGSTER_DATAFRAMELY_QUARANTINE", "true")
    monkeypatch.setenv("DAGSTER_DATAFRAMELY_ROW_SAMPLE", "0")

    @dd.asset(OrdersSchema)
    def orders() -> pl.DataFrame:
        return defective_orders()

    monkeypatch.delenv("DAGSTER_DATAFRAMELY_QUARANTINE")
    monkeypatch.delenv("DAGSTER_DATAFRAMELY_ROW_SAMPLE")
    result = filesystem.materialize([orders])

    assert result.success  # quarantined, as the environment said at definition time
    assert "dy_row_sample" not in materialization(result, "orders")
    assert filesystem.read("orders_quarantine") is not None


def test_an_invalid_setting_names_where_it_came_from(monkeypatch):
    monkeypatch.setenv("DAGSTER_DATAFRAMELY_STATISTICS", "sometimes")

    with pytest.raises(InvalidSettingError, match="DAGSTER_DATAFRAMELY_STATISTICS"):
        dd.asset(OrdersSchema)


@pytest.mark.parametrize("granularity", ["rule", "column", "schema"])
def test_results_match_the_specs_at_every_granularity(filesystem, granularity):
    @dd.asset(OrdersSchema, quarantine=True, check_granularity=granularity)
    def orders() -> pl.DataFrame:
        return defective_orders()

    result = filesystem.materialize([orders])

    assert result.success
    reported = {e.check_name for e in result.get_asset_check_evaluations()}
    assert reported == set(specs_of(orders))


# ------------------------------------ binding inputs ------------------------------------ #


def test_context_and_upstream_inputs_are_bound_like_any_asset(filesystem):
    @dg.asset
    def raw_orders() -> pl.DataFrame:
        return storefront_orders().with_columns(channel=pl.lit("web"))

    seen: list[Any] = []

    @dd.asset(OrdersSchema, warn=["sku"])
    def orders(context: dg.AssetExecutionContext, raw_orders: pl.DataFrame) -> pl.DataFrame:
        seen.append((context.asset_key, raw_orders.height))
        return raw_orders.with_columns(pl.col("sku").str.to_lowercase())

    result = filesystem.materialize([raw_orders, orders])

    assert result.success
    assert seen == [(dg.AssetKey("orders"), 12)]
    written = filesystem.read("orders")
    assert written is not None and "channel" not in written.columns
    assert orders.keys_by_input_name == {"raw_orders": dg.AssetKey("raw_orders")}


def test_ins_and_deps_pass_through(filesystem):
    @dg.asset
    def upstream_lines() -> pl.DataFrame:
        return storefront_orders()

    @dg.asset
    def refreshed() -> None:
        return None

    @dd.asset(OrdersSchema, ins={"lines": dg.AssetIn("upstream_lines")}, deps=[refreshed])
    def orders(lines: pl.DataFrame) -> pl.LazyFrame:
        return lines.lazy()

    result = filesystem.materialize([upstream_lines, refreshed, orders])

    assert result.success
    written = filesystem.read("orders")
    assert isinstance(written, pl.DataFrame) and written.height == 12  # a LazyFrame is collected


# --------------------------------------- returns --------------------------------------- #


def test_a_returned_materialize_result_keeps_its_metadata_tags_and_data_version(filesystem):
    plausible = dg.AssetCheckSpec("row_count_is_plausible", asset="orders")

    @dd.asset(OrdersSchema, quarantine=True, check_specs=[plausible])
    def orders() -> dg.MaterializeResult:
        return dg.MaterializeResult(
            value=defective_orders(),
            metadata={"source": "storefront export", "dagster/row_count": 13},
            tags={"batch": "2024-05-11"},
            data_version=dg.DataVersion("v7"),
            check_results=[dg.AssetCheckResult(check_name=plausible.name, passed=True)],
        )

    result = filesystem.materialize([orders])

    assert result.success
    (event,) = [
        e for e in result.get_asset_materialization_events() if e.asset_key == dg.AssetKey("orders")
    ]
    materialization = event.materialization
    assert materialization.metadata["source"].value == "storefront export"
    assert materialization.metadata["dagster/row_count"].value == 6  # rows actually written
    assert materialization.tags is not None
    assert materialization.tags["batch"] == "2024-05-11"
    assert materialization.tags["dagster/data_version"] == "v7"
    assert evaluations(result)["row_count_is_plausible"].passed


@pytest.mark.parametrize("returned", [None, dg.MaterializeResult(value=None)])
def test_none_means_no_source_data_the_run_skips_and_succeeds(storage, returned):
    @dd.asset(OrdersSchema, quarantine=True)
    def orders() -> pl.DataFrame | None:
        return returned

    instance = dg.DagsterInstance.ephemeral()
    result = storage.materialize([orders], instance=instance)

    assert result.success
    assert result.get_asset_materialization_events() == []
    assert storage.read("orders") is None
    evaluated = result.get_asset_check_evaluations()
    assert {e.check_name for e in evaluated} == set(specs_of(orders))
    for evaluation in evaluated:  # Dagster requires a result per check: passed, on no rows
        assert evaluation.passed
        assert "returned None" in evaluation.metadata["dy_skipped"].value
    assert any("returned None (no source data)" in message for message in logs(instance, result))


@pytest.mark.parametrize(
    ("returned", "named"),
    [
        ({"order_id": ["ORD-1"]}, "returned a dict"),
        (pd.DataFrame({"order_id": ["ORD-1"]}), "returned a pandas.DataFrame"),
        (dg.MaterializeResult(metadata={"a": 1}), "dg.MaterializeResult with no value="),
        (dg.MaterializeResult(value=[1]), "value= of type list"),
    ],
)
def test_any_other_return_value_fails_the_run_naming_what_was_returned(filesystem, returned, named):
    @dd.asset(OrdersSchema)
    def orders() -> Any:
        return returned

    result = filesystem.materialize([orders])

    assert not result.success
    message = failure_text(result)
    assert "UnsupportedFrameError" in message and named in message


# ---------------------------------- direct invocation ---------------------------------- #


def test_direct_invocation_yields_the_materialization_and_the_check_results():
    @dd.asset(OrdersSchema)
    def orders(raw_orders: pl.DataFrame) -> pl.DataFrame:
        return raw_orders

    events = list(orders(storefront_orders()))

    (materialized,) = [e for e in events if isinstance(e, dg.MaterializeResult)]
    assert materialized.value.height == 12
    checks = [e for e in events if isinstance(e, dg.AssetCheckResult)]
    assert len(checks) == len(specs_of(orders)) and all(c.passed for c in checks)


def test_direct_invocation_raises_the_outcome_errors():
    @dd.asset(OrdersSchema)
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return defective_orders()

    with pytest.raises(ValidationAbortError, match="primary_key: 2 row"):
        list(orders(dg.build_asset_context()))
