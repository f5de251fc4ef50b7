"""`dd.testing.run_asset`: a user's unit test calls a `dd.asset` directly and reads the rows
it would write, its quarantine and its check results, with no Dagster run."""

# No `from __future__ import annotations`: Dagster reads the `context` annotation.

from pathlib import Path

import dagster as dg
import polars as pl
from defective import DEFECTIVE_COUNTS, ERROR_COUNTS, VALID, WARN_ONLY

import dagster_dataframely as dd
from dagster_dataframely.data import OrdersSchema, defective_orders, storefront_orders
from dagster_dataframely.errors import ColumnSchemaError, ValidationAbortError
from dagster_dataframely.testing import run_asset
from dagster_dataframely.wiring import check_name


def test_a_valid_frame_is_written_whole_with_every_check_passing() -> None:
    @dd.asset(OrdersSchema)
    def orders(raw_orders: pl.DataFrame) -> pl.LazyFrame:
        return raw_orders.lazy()

    run = run_asset(orders, raw_orders=storefront_orders())

    assert run.error is None and run.quarantine is None
    assert run.frame is not None and run.frame.equals(storefront_orders())
    assert run.failed == {}
    assert run.checks and all(result.passed for result in run.checks.values())
    assert run.metadata["dagster/row_count"] == storefront_orders().height


def test_a_quarantine_is_read_back_beside_the_rows_written(tmp_path: Path) -> None:
    @dd.asset(OrdersSchema, quarantine=True, quarantine_dir=str(tmp_path))
    def orders() -> pl.DataFrame:
        return defective_orders()

    run = run_asset(orders)

    assert run.error is None
    assert run.frame is not None
    assert sorted(run.frame.select("order_id", "line").rows()) == sorted(VALID + WARN_ONLY)
    assert run.quarantine is not None
    assert run.quarantine.height == defective_orders().height - len(VALID) - len(WARN_ONLY)
    assert run.failed == {check_name(rule): n for rule, n in DEFECTIVE_COUNTS.items()}
    assert run.metadata["dy_quarantine"].startswith(str(tmp_path))


def test_an_aborted_write_returns_the_error_and_the_failed_checks() -> None:
    @dd.asset(OrdersSchema)
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return defective_orders()

    run = run_asset(orders)

    assert isinstance(run.error, ValidationAbortError)
    assert run.error.counts == ERROR_COUNTS
    assert run.frame is None and run.quarantine is None
    assert run.failed == {check_name(rule): n for rule, n in DEFECTIVE_COUNTS.items()}


def test_a_partitioned_asset_gets_a_context_for_the_partition() -> None:
    days = dg.StaticPartitionsDefinition(["paid", "shipped"])

    @dd.asset(OrdersSchema, partitions_def=days)
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return storefront_orders().filter(pl.col("status") == context.partition_key)

    run = run_asset(orders, partition_key="shipped")

    assert run.frame is not None and run.frame["status"].unique().to_list() == ["shipped"]


def test_a_column_mismatch_is_returned_as_the_error() -> None:
    @dd.asset(OrdersSchema)
    def orders() -> pl.DataFrame:
        return storefront_orders().with_columns(pl.col("line").cast(pl.String))

    run = run_asset(orders)

    assert isinstance(run.error, ColumnSchemaError)
    assert not run.checks["dy_schema__columns"].passed
