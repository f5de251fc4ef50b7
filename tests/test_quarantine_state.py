"""What a run says about its quarantine, in real runs: every gated run with a quarantine
writes it (empty when nothing failed) and records it as a materialization of the quarantine
key, with the address its IO manager logged; a quarantine layout that changed fails before a
database loses a row; and the hand-wired asset of the hand-wiring page reports what
`dd.asset(quarantine=True)` reports."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import duckdb
import polars as pl
import pytest
from conftest import Storage
from defective import VALID, WARN_ONLY
from support import evaluations, materialization, step_error

import dagster_dataframely as dd
from dagster_dataframely.data import OrdersSchema, defective_orders, storefront_orders
from dagster_dataframely.io import parquet_path

ERROR_ROWS = 7  # rows of defective_orders() failing an "error" rule
QUARANTINE = dg.AssetKey("orders_quarantine")


class StricterOrders(OrdersSchema):
    """`OrdersSchema` plus one rule, so its quarantine has one more rule column."""

    @dy.rule()
    def amount_below_a_million(cls) -> pl.Expr:
        return pl.col("amount").is_null() | (pl.col("amount") < 1_000_000)


def gated(frame: Callable[[], pl.DataFrame], schema: type[dy.Schema] = OrdersSchema) -> Any:
    @dd.asset(schema, quarantine=True, name="orders")
    def orders() -> pl.DataFrame:
        return frame()

    return orders


def quarantine_events(result: dg.ExecuteInProcessResult) -> list[dg.AssetMaterialization]:
    return [
        e.materialization
        for e in result.get_asset_materialization_events()
        if e.asset_key == QUARANTINE
    ]


# ------------------------------- no stale quarantine ------------------------------- #


def test_a_clean_run_after_a_quarantining_run_empties_the_quarantine(storage: Storage):
    assert storage.materialize([gated(defective_orders)]).success
    quarantined = storage.read("orders_quarantine")
    assert quarantined is not None and quarantined.height == ERROR_ROWS

    result = storage.materialize([gated(storefront_orders)])

    assert result.success
    stored = storage.read("orders_quarantine")
    # DuckDB keeps the emptied table; the filesystem stores the empty frame
    assert stored is not None and stored.height == 0
    assert stored.columns == quarantined.columns
    table = materialization(result, "orders")
    assert table["dy_quarantined_rows"] == 0
    assert "orders_quarantine" in table["dy_quarantine"]
    assert "invalid_by_rules" not in table


def test_parquet_io_manager_quarantine_is_emptied_by_a_clean_run(tmp_path: Path):
    resources = {"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path))}
    file = parquet_path(tmp_path, QUARANTINE, None)

    assert dg.materialize([gated(defective_orders)], resources=resources).success
    assert pl.read_parquet(file).height == ERROR_ROWS
    result = dg.materialize([gated(storefront_orders)], resources=resources)

    assert result.success
    assert pl.read_parquet(file).height == 0
    (event,) = quarantine_events(result)
    assert event.metadata["dagster/row_count"].value == 0
    assert event.metadata["path"].value == str(file)  # logged by the IO manager
    assert materialization(result, "orders")["dy_quarantine"] == str(file)


def test_each_run_records_the_quarantine_in_the_catalog_with_its_history(storage: Storage):
    instance = dg.DagsterInstance.ephemeral()

    runs = [
        storage.materialize([gated(frame)], instance=instance)
        for frame in (defective_orders, storefront_orders)
    ]

    assert all(run.success for run in runs)
    records = instance.fetch_materializations(QUARANTINE, limit=10, ascending=True).records
    assert [r.run_id for r in records] == [run.run_id for run in runs]
    assert [r.asset_materialization.metadata["dagster/row_count"].value for r in records] == [
        ERROR_ROWS,
        0,
    ]
    for record, run in zip(records, runs, strict=True):
        metadata = record.asset_materialization.metadata
        assert metadata["dy_quarantine_of"].value == "orders"
        table = materialization(run, "orders")
        # the address the IO manager logged on the quarantine is the one the table names
        logged = metadata.get("dagster/table_name", metadata.get("path"))
        assert logged is not None and str(logged.value) == table["dy_quarantine"]
        assert table["dy_quarantined_rows"] == metadata["dagster/row_count"].value


def test_the_quarantine_event_names_the_runs_partition(filesystem: Storage):
    @dd.asset(OrdersSchema, quarantine=True, partitions_def=dg.StaticPartitionsDefinition(["paid"]))
    def orders() -> pl.DataFrame:
        return defective_orders().filter(pl.col("status") == "paid")

    result = filesystem.materialize([orders], partition_key="paid")

    (event,) = quarantine_events(result)
    assert event.partition == "paid"
    assert event.metadata["dagster/row_count"].value == 6


def test_a_run_that_writes_no_table_leaves_the_quarantine_alone(storage: Storage):
    assert storage.materialize([gated(defective_orders)]).success

    result = storage.materialize([gated(lambda: defective_orders().drop("amount"))])

    assert not result.success and step_error(result)[0] == "ColumnSchemaError"
    assert quarantine_events(result) == []
    stored = storage.read("orders_quarantine")
    assert stored is not None and stored.height == ERROR_ROWS


# ------------------------- a changed layout loses no row ------------------------- #


@pytest.mark.parametrize(
    ("before", "after", "change"),
    [
        (OrdersSchema, StricterOrders, "columns added: dy_rule__amount_below_a_million"),
        (StricterOrders, OrdersSchema, "columns removed: dy_rule__amount_below_a_million"),
    ],
)
def test_a_changed_layout_fails_before_the_database_quarantine_loses_a_row(
    warehouse: Storage, before: type[dy.Schema], after: type[dy.Schema], change: str
):
    assert warehouse.materialize([gated(defective_orders, before)]).success
    stored_before = warehouse.read("orders_quarantine")
    table_before = warehouse.read("orders")

    result = warehouse.materialize([gated(defective_orders, after)])

    assert not result.success
    name, message = step_error(result)
    assert name == "QuarantineLayoutError"
    assert "Asset orders" in message and change in message
    assert "ALTER TABLE public.orders_quarantine RENAME TO" in message
    assert warehouse.read("orders_quarantine").equals(stored_before)
    assert warehouse.read("orders").equals(table_before)  # the table was not written either
    assert quarantine_events(result) == []


def test_a_changed_layout_in_another_partition_keeps_every_stored_partition(warehouse: Storage):
    status = dg.StaticPartitionsDefinition(["paid", "shipped"])

    def partitioned(schema: type[dy.Schema]) -> dg.AssetsDefinition:
        @dd.asset(
            schema,
            quarantine=True,
            name="orders",
            partitions_def=status,
            metadata={"partition_expr": "status"},
        )
        def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
            return defective_orders().filter(pl.col("status") == context.partition_key)

        return orders

    assert warehouse.materialize([partitioned(OrdersSchema)], partition_key="paid").success
    result = warehouse.materialize([partitioned(StricterOrders)], partition_key="shipped")

    assert step_error(result)[0] == "QuarantineLayoutError"
    stored = warehouse.read("orders_quarantine")
    assert stored is not None and set(stored["status"]) == {"paid"} and stored.height == 6


def test_the_fix_the_layout_error_names_lets_the_next_run_write(warehouse: Storage):
    assert warehouse.materialize([gated(defective_orders)]).success
    failed = warehouse.materialize([gated(defective_orders, StricterOrders)])
    sql = step_error(failed)[1].split("rerun: ")[1].split(";")[0]

    with duckdb.connect(str(warehouse.database)) as connection:
        connection.execute(sql)
    result = warehouse.materialize([gated(defective_orders, StricterOrders)])

    assert result.success
    kept = warehouse.read("orders_quarantine_before_layout_change")
    assert kept is not None and kept.height == ERROR_ROWS
    written = warehouse.read("orders_quarantine")
    assert written is not None and "dy_rule__amount_below_a_million" in written.columns


def test_a_file_quarantine_takes_a_new_layout_without_complaint(filesystem: Storage):
    assert filesystem.materialize([gated(defective_orders)]).success

    result = filesystem.materialize([gated(defective_orders, StricterOrders)])

    assert result.success  # the file is replaced whole: no row of a kept layout is lost
    stored = filesystem.read("orders_quarantine")
    assert stored is not None and "dy_rule__amount_below_a_million" in stored.columns


# ---------------------- the hand-wired asset of the hand-wiring page ---------------------- #


def hand_wired(frame: Callable[[], pl.DataFrame]) -> dg.AssetsDefinition:
    """The quarantine example of spec/hand-wiring.md, verbatim but for the frame."""

    @dg.asset(
        metadata=dd.wiring.schema_metadata(OrdersSchema),
        check_specs=dd.wiring.check_specs(OrdersSchema, asset="orders"),
        output_required=False,
    )
    def orders(context: dg.AssetExecutionContext) -> dd.wiring.AssetYield:
        dd.wiring.validate_quarantine_key(context)
        yield from dd.wiring.validation_results(
            OrdersSchema,
            frame(),
            valid_key=context.asset_key,
            quarantine_writer=dd.wiring.delegating_writer(context),
        )

    return orders


def rows_of(frame: pl.DataFrame | None) -> list[tuple[str, int]]:
    assert frame is not None
    return list(zip(frame["order_id"], frame["line"], strict=True))


def test_the_hand_wired_example_quarantines_error_rows_and_succeeds(storage: Storage):
    result = storage.materialize([hand_wired(defective_orders)])

    assert result.success
    assert rows_of(storage.read("orders")) == VALID + WARN_ONLY
    quarantined = storage.read("orders_quarantine")
    assert quarantined is not None and quarantined.height == ERROR_ROWS
    failing = [e for e in evaluations(result).values() if not e.passed]
    assert failing and {e.severity for e in failing} == {dg.AssetCheckSeverity.WARN}
    regex = evaluations(result)["dy_rule__order_id__regex"]
    assert (
        regex.metadata["dy_quarantine"].value == materialization(result, "orders")["dy_quarantine"]
    )


def test_the_hand_wired_asset_reports_what_dd_asset_reports(filesystem: Storage):
    def outcome(result: dg.ExecuteInProcessResult) -> dict[str, Any]:
        return {
            "checks": {n: (e.passed, e.severity) for n, e in evaluations(result).items()},
            "table": materialization(result, "orders")["dy_quarantined_rows"],
            "quarantine": [
                e.metadata["dagster/row_count"].value for e in quarantine_events(result)
            ],
        }

    wired = filesystem.materialize([hand_wired(defective_orders)])
    decorated = filesystem.materialize([gated(defective_orders)])

    assert wired.success and decorated.success
    assert outcome(wired) == outcome(decorated)
