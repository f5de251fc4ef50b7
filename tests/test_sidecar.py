"""`dd.schema_checks` in real runs: the stored table is read back through the asset's own IO
manager (pickle, parquet, DuckDB with polars or pandas) and every rule is reported with the
counts and severities Dataframely itself finds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from dagster_duckdb_pandas import DuckDBPandasIOManager
from dagster_duckdb_polars import DuckDBPolarsIOManager
from defective import DEFECTIVE_COUNTS
from support import evaluations, failed, logs, materialized

import dagster_dataframely as dd
from dagster_dataframely.data import (
    OrdersSchema,
    defective_orders,
    mistyped_orders,
    storefront_orders,
)
from dagster_dataframely.errors import (
    ColumnSchemaError,
    InvalidSeverityError,
    UnsupportedFrameError,
)
from dagster_dataframely.io import ParquetIOManager
from dagster_dataframely.wiring import rules

ERROR, WARN = dg.AssetCheckSeverity.ERROR, dg.AssetCheckSeverity.WARN


class WarehouseOrders(OrdersSchema):
    """`OrdersSchema` as DuckDB hands it back to polars: no Enum, the `Etc/UTC` zone."""

    status = dy.String()
    ordered_at = dy.Datetime(time_zone="Etc/UTC")


class PandasWarehouseOrders(OrdersSchema):
    """`OrdersSchema` as DuckDB hands it back to pandas, converted to polars."""

    status = dy.Categorical()
    ordered_at = dy.Datetime(time_zone="Etc/UTC")
    shipped_on = dy.Datetime(time_unit="ms", nullable=True)


def _orders_asset(frame: Any, **kwargs: Any) -> dg.AssetsDefinition:
    @dg.asset(name="orders", **kwargs)
    def orders() -> Any:
        return frame

    return orders


@dg.asset(deps=["orders"])
def downstream() -> int:
    return 1


def _run(
    assets: list[Any], resources: dict[str, Any] | None = None, **kwargs: Any
) -> tuple[dg.ExecuteInProcessResult, dg.DagsterInstance]:
    instance = dg.DagsterInstance.ephemeral()
    result = dg.materialize(
        assets, resources=resources, instance=instance, raise_on_error=False, **kwargs
    )
    return result, instance


def _expected(schema: type[dy.Schema], frame: pl.DataFrame) -> dict[str, tuple[int, Any]]:
    """What Dataframely's own `filter` finds, with each rule's severity."""
    severity = {r.name: WARN if r.severity == "warn" else ERROR for r in rules(schema)}
    counts = schema.filter(frame, cast=False).failure.counts()
    return {f"dy_rule__{n.replace('|', '__')}": (c, severity[n]) for n, c in counts.items()}


def _step_error(result: dg.ExecuteInProcessResult, step: str) -> Any:
    """The user error a failed step raised (Dagster wraps it in a step execution error)."""
    failure = result.failure_data_for_node(step)
    assert failure is not None and failure.error is not None and failure.error.cause is not None
    return failure.error.cause


# --------------------------------- each IO manager --------------------------------- #


def test_default_io_manager_reports_every_rule_with_its_count_and_severity() -> None:
    checks = dd.schema_checks(OrdersSchema, asset="orders")
    result, instance = _run([_orders_asset(defective_orders()), checks])

    failing = failed(result)
    assert failing == _expected(OrdersSchema, defective_orders())
    assert {name: count for name, (count, _) in failing.items()} == {
        f"dy_rule__{rule.replace('|', '__')}": count for rule, count in DEFECTIVE_COUNTS.items()
    }
    assert failing["dy_rule__amount__max"][1] == WARN
    assert failing["dy_rule__primary_key"][1] == ERROR
    passed = evaluations(result)["dy_rule__sku__min_length"]
    assert passed.passed and passed.metadata["dy_failed_count"].value == 0
    assert any("as a polars.DataFrame; evaluating in memory" in m for m in logs(instance, result))


def test_parquet_io_manager_hands_the_check_a_scan_so_it_streams(tmp_path: Path) -> None:
    checks = dd.schema_checks(OrdersSchema, asset="orders")
    io_manager = ParquetIOManager(base_dir=str(tmp_path))
    result, instance = _run(
        [_orders_asset(defective_orders()), checks], resources={"io_manager": io_manager}
    )

    assert failed(result) == _expected(OrdersSchema, defective_orders())
    sample = evaluations(result)["dy_rule__primary_key"].metadata["dy_failed_sample"].value
    assert [row.data for row in sample.records] == [{"order_id": "ORD-20003", "line": 1}] * 2  # type: ignore[attr-defined]
    loaded = [m for m in logs(instance, result) if m.startswith("Loaded orders")]
    assert loaded == [
        "Loaded orders through IO manager 'io_manager' as a polars.LazyFrame; evaluating streaming."
    ]


def test_duckdb_polars_io_manager_is_read_eagerly(tmp_path: Path) -> None:
    io_manager = DuckDBPolarsIOManager(database=str(tmp_path / "warehouse.duckdb"))
    checks = dd.schema_checks(WarehouseOrders, asset="orders")
    result, instance = _run(
        [_orders_asset(defective_orders(), io_manager_key="warehouse"), checks],
        resources={"warehouse": io_manager},
    )

    stored = defective_orders().with_columns(
        pl.col("status").cast(pl.String), pl.col("ordered_at").dt.convert_time_zone("Etc/UTC")
    )
    assert failed(result) == _expected(WarehouseOrders, stored)
    assert failed(result)["dy_rule__paid_orders_have_amount"] == (2, ERROR)
    assert any(
        "through IO manager 'warehouse' as a polars.DataFrame; evaluating in memory" in m
        for m in logs(instance, result)
    )


def test_duckdb_round_trip_drift_fails_the_column_schema_check_and_never_casts(
    tmp_path: Path,
) -> None:
    io_manager = DuckDBPolarsIOManager(database=str(tmp_path / "warehouse.duckdb"))
    checks = dd.schema_checks(OrdersSchema, asset="orders")
    result, instance = _run(
        [_orders_asset(storefront_orders()), checks], resources={"io_manager": io_manager}
    )

    assert not result.success
    evaluated = evaluations(result)
    # One problem, one failure: no rule is evaluated, and none reads as a failed rule; one
    # warning names them.
    assert set(evaluated) == {"dy_schema__columns"}
    (skipped,) = [m for m in logs(instance, result) if "check(s) not evaluated" in m]
    assert skipped.startswith(
        f"{len(checks.check_keys) - 1} check(s) not evaluated: dy_schema__columns failed"
    )
    assert "orders:dy_rule__primary_key" in skipped
    assert evaluated["dy_schema__columns"].metadata["dy_mismatched_columns"].value == 2
    error = _step_error(result, "orders__dy_checks")
    assert error.cls_name == ColumnSchemaError.__name__
    assert 'read_dtypes="cast"' in error.message  # the sidecar's remedy, not the asset's


def test_duckdb_pandas_io_manager_value_is_converted(tmp_path: Path) -> None:
    io_manager = DuckDBPandasIOManager(database=str(tmp_path / "warehouse.duckdb"))
    checks = dd.schema_checks(PandasWarehouseOrders, asset="orders")
    result, instance = _run(
        [_orders_asset(defective_orders().to_pandas()), checks],
        resources={"io_manager": io_manager},
    )

    failing = failed(result)
    assert {name: count for name, (count, _) in failing.items()} == {
        f"dy_rule__{rule.replace('|', '__')}": count for rule, count in DEFECTIVE_COUNTS.items()
    }
    assert failing["dy_rule__shipped_after_ordered"] == (2, WARN)
    assert any("as a pandas.DataFrame" in m for m in logs(instance, result))


def test_a_value_that_is_no_table_names_its_type_and_the_io_manager() -> None:
    checks = dd.schema_checks(OrdersSchema, asset="orders")
    result, _ = _run([_orders_asset({"order_id": ["ORD-10001"]}), checks])

    error = _step_error(result, "orders__dy_checks")
    assert error.cls_name == UnsupportedFrameError.__name__
    assert "IO manager 'io_manager' loaded asset orders as a dict" in error.message


def test_column_schema_mismatch_fails_the_step_with_the_remedy(tmp_path: Path) -> None:
    checks = dd.schema_checks(OrdersSchema, asset="orders")
    result, _ = _run(
        [_orders_asset(mistyped_orders()), downstream, checks],
        resources={"io_manager": ParquetIOManager(base_dir=str(tmp_path))},
    )

    assert not result.success
    assert evaluations(result)["dy_schema__columns"].severity == ERROR
    assert "downstream" not in materialized(result)


# ------------------------------------- blocking ------------------------------------- #


def test_a_failing_error_rule_stops_the_downstream_asset() -> None:
    checks = dd.schema_checks(OrdersSchema, asset="orders")
    result, _ = _run([_orders_asset(defective_orders()), downstream, checks])

    assert not result.success
    assert materialized(result) == {"orders"}


def test_warn_makes_the_failing_rules_non_blocking() -> None:
    error_rules = [r.name for r in rules(OrdersSchema) if r.severity == "error"]
    checks = dd.schema_checks(OrdersSchema, asset="orders", warn=error_rules)
    result, _ = _run([_orders_asset(defective_orders()), downstream, checks])

    assert result.success
    assert materialized(result) == {"orders", "downstream"}
    assert {severity for _, severity in failed(result).values()} == {WARN}


def test_blocking_false_lets_error_failures_through_at_their_severity() -> None:
    checks = dd.schema_checks(OrdersSchema, asset="orders", blocking=False)
    result, _ = _run([_orders_asset(defective_orders()), downstream, checks])

    assert result.success
    assert materialized(result) == {"orders", "downstream"}
    assert failed(result)["dy_rule__primary_key"] == (2, ERROR)


# -------------------------------- definition and subsets ----------------------------- #


def test_two_assets_sharing_a_schema_get_steps_of_their_own() -> None:
    raw = dd.schema_checks(OrdersSchema, asset=["raw", "orders"])
    clean = dd.schema_checks(OrdersSchema, asset="orders")
    defs = dg.Definitions(
        assets=[dg.AssetSpec(["raw", "orders"]), dg.AssetSpec("orders")], asset_checks=[raw, clean]
    )

    dg.Definitions.validate_loadable(defs)
    assert {raw.node_def.name, clean.node_def.name} == {
        "raw__orders__dy_checks",
        "orders__dy_checks",
    }
    named = dd.schema_checks(OrdersSchema, asset="orders", name="orders_contract")
    assert named.node_def.name == "orders_contract"


def test_unknown_warn_rule_fails_at_definition_time() -> None:
    with pytest.raises(InvalidSeverityError, match="'amount_max' is neither a rule nor a column"):
        dd.schema_checks(OrdersSchema, asset="orders", warn=["amount_max"])


def test_settings_are_resolved_once_at_definition_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DAGSTER_DATAFRAMELY_CHECK_GRANULARITY", "column")
    checks = dd.schema_checks(OrdersSchema, asset="orders")
    monkeypatch.setenv("DAGSTER_DATAFRAMELY_CHECK_GRANULARITY", "schema")
    result, _ = _run([_orders_asset(defective_orders()), checks])

    assert "dy_col__amount" in evaluations(result)
    assert failed(result)["dy_col__amount"][0] == 2  # amount|min and amount|max


def test_only_the_selected_checks_are_evaluated(tmp_path: Path) -> None:
    checks = dd.schema_checks(OrdersSchema, asset="orders")
    orders = _orders_asset(defective_orders())
    resources = {"io_manager": ParquetIOManager(base_dir=str(tmp_path))}
    _run([orders], resources=resources)

    regex = dg.AssetCheckKey(dg.AssetKey("orders"), "dy_rule__order_id__regex")
    result, _ = _run(
        [orders, checks], resources=resources, selection=dg.AssetSelection.checks(regex)
    )

    assert materialized(result) == set()
    assert list(evaluations(result)) == ["dy_rule__order_id__regex"]
    assert failed(result) == {"dy_rule__order_id__regex": (1, ERROR)}


# ------------------------------------ partitions ------------------------------------ #


def _partitioned_orders(partitions_def: dg.PartitionsDefinition) -> dg.AssetsDefinition:
    """`orders` partitioned into "good" (`storefront_orders()`) and "bad" (`defective_orders()`)."""

    @dg.asset(name="orders", partitions_def=partitions_def)
    def orders(context) -> pl.DataFrame:  # type: ignore[no-untyped-def]
        return storefront_orders() if context.partition_key == "good" else defective_orders()

    return orders


def test_partitioned_checks_evaluate_only_the_partition_the_run_materialized(
    tmp_path: Path,
) -> None:
    days = dg.StaticPartitionsDefinition(["good", "bad"])

    orders = _partitioned_orders(days)

    checks = dd.schema_checks(OrdersSchema, asset="orders", partitions_def=days)
    resources = {"io_manager": ParquetIOManager(base_dir=str(tmp_path))}

    bad, instance = _run([orders, checks], resources=resources, partition_key="bad")
    good, _ = _run([orders, checks], resources=resources, partition_key="good")

    assert {e.partition for e in bad.get_asset_check_evaluations()} == {"bad"}
    assert failed(bad) == _expected(OrdersSchema, defective_orders())
    assert any(m.startswith("Loaded orders (partition bad)") for m in logs(instance, bad))
    assert good.success and failed(good) == {}
    assert {e.partition for e in good.get_asset_check_evaluations()} == {"good"}


def test_unpartitioned_checks_on_a_partitioned_asset_read_the_run_partition(
    tmp_path: Path,
) -> None:
    halves = dg.StaticPartitionsDefinition(["good", "bad"])

    orders = _partitioned_orders(halves)

    checks = dd.schema_checks(OrdersSchema, asset="orders")  # as the Component builds them
    resources = {"io_manager": ParquetIOManager(base_dir=str(tmp_path))}
    _run([orders, checks], resources=resources, partition_key="good")
    bad, _ = _run([orders, checks], resources=resources, partition_key="bad")

    rows = {
        e.metadata["dy_row_count"].value
        for e in bad.get_asset_check_evaluations()
        if e.metadata.get("dy_row_count")
    }
    assert rows == {defective_orders().height}
    assert {e.partition for e in bad.get_asset_check_evaluations()} == {None}
