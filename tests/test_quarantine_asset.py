"""The quarantine of `dd.asset(quarantine=True)` is a declared asset: in the asset graph beside
the table (same upstreams, not downstream of it), described, with its own Columns tab, stored
and selected like the table, and materialized by Dagster on every run, before the table.
Real definitions and real runs."""

from typing import Any

import dagster as dg
import duckdb
import polars as pl
import pytest
from conftest import Storage
from support import evaluations, materialization, materialized, step_error

import dagster_dataframely as dd
from dagster_dataframely._engine.schema_version import schema_version
from dagster_dataframely.data import OrdersSchema, defective_orders
from dagster_dataframely.wiring import rules, schema_metadata

TABLE = dg.AssetKey(["sales", "orders"])
QUARANTINE = dg.AssetKey(["sales", "orders_quarantine"])
DAYS = dg.DailyPartitionsDefinition(start_date="2024-05-01", end_date="2024-05-03")


@dg.asset(key_prefix="sales")
def raw_orders() -> pl.DataFrame:
    return defective_orders()


@dg.asset(key_prefix="sales")
def fx_rates() -> int:
    return 1


@dd.asset(
    OrdersSchema,
    quarantine=True,
    key_prefix="sales",
    ins={"raw_orders": dg.AssetIn(key=["sales", "raw_orders"])},
    deps=[fx_rates],
    group_name="storefront",
    description="Order lines, validated.",
    owners=["team:finance"],
    kinds={"polars"},
    tags={"domain": "sales"},
    code_version="3",
    metadata={"owner": "finance", "dagster/table_name": "lake.orders"},
)
def orders(raw_orders: pl.DataFrame) -> pl.DataFrame:
    return raw_orders


def graph() -> Any:
    return dg.Definitions(assets=[raw_orders, fx_rates, orders]).resolve_asset_graph()


# ------------------------------------ the definition ------------------------------------ #


def test_the_quarantine_is_declared_beside_the_table_with_the_same_upstreams():
    table, quarantine = graph().get(TABLE), graph().get(QUARANTINE)

    assert quarantine.is_materializable
    expected = {dg.AssetKey(["sales", "raw_orders"]), dg.AssetKey(["sales", "fx_rates"])}
    assert table.parent_keys == quarantine.parent_keys == expected
    assert TABLE not in quarantine.parent_keys  # a sibling, not downstream of the table
    assert not table.child_keys and not quarantine.child_keys


def test_the_quarantine_is_grouped_owned_and_versioned_like_the_table():
    table, quarantine = orders.specs_by_key[TABLE], orders.specs_by_key[QUARANTINE]

    for spec in (table, quarantine):
        assert spec.group_name == "storefront"
        assert spec.owners == ["team:finance"]
        assert spec.kinds == {"polars", "dataframely"}
        assert spec.tags["domain"] == "sales"
        assert spec.code_version == f"3+schema.{schema_version(OrdersSchema)}"
        assert orders.get_io_manager_key_for_asset_key(spec.key) == "io_manager"
    assert table.description == "Order lines, validated."
    assert quarantine.description is not None
    assert "Rows of sales/orders that failed" in quarantine.description
    assert orders.can_subset  # the table is selected by its own name
    assert {spec.asset_key for spec in orders.check_specs} == {TABLE}  # checks guard the table


def test_the_quarantine_has_its_own_columns_tab_and_keeps_the_tables_storage_settings():
    table, quarantine = orders.specs_by_key[TABLE], orders.specs_by_key[QUARANTINE]
    rule_columns = [rule.check_name for rule in rules(OrdersSchema)]

    assert (
        table.metadata["dagster/column_schema"]
        == schema_metadata(OrdersSchema)["dagster/column_schema"]
    )
    columns = quarantine.metadata["dagster/column_schema"].columns
    assert [c.name for c in columns] == [*OrdersSchema.column_names(), *rule_columns]
    amount = next(c for c in columns if c.name == "amount")
    assert amount.constraints.other == []  # its rows are the ones that break them
    assert all(c.type == "String" for c in columns if c.name in rule_columns)
    assert quarantine.metadata["owner"] == "finance"  # an IO manager may read it
    assert "dagster/table_name" not in quarantine.metadata  # that names the table


def test_the_partitions_and_op_settings_apply_to_both():
    @dd.asset(
        OrdersSchema,
        quarantine=True,
        partitions_def=DAYS,
        io_manager_key="lake",
        op_tags={"team": "finance"},
        retry_policy=dg.RetryPolicy(max_retries=2),
        pool="warehouse",
    )
    def daily() -> pl.DataFrame:
        return defective_orders()

    assert daily.partitions_def == DAYS
    assert {spec.partitions_def for spec in daily.specs} == {DAYS}
    assert {daily.get_io_manager_key_for_asset_key(k) for k in daily.keys} == {"lake"}
    assert daily.op.tags["team"] == "finance"
    assert daily.op.retry_policy == dg.RetryPolicy(max_retries=2)
    assert daily.op.name == "daily"  # the step keeps the name @dg.asset gives it


def test_key_names_the_table_and_the_quarantine_takes_its_prefix():
    @dd.asset(OrdersSchema, quarantine=True, key=["shop", "lines"])
    def build() -> pl.DataFrame:
        return defective_orders()

    assert build.keys == {dg.AssetKey(["shop", "lines"]), dg.AssetKey(["shop", "lines_quarantine"])}
    with pytest.raises(dg.DagsterInvalidDefinitionError, match="key="):
        dd.asset(OrdersSchema, quarantine=True, key="lines", name="lines")(lambda: None)


def test_a_keyword_dg_asset_does_not_take_is_a_type_error():
    with pytest.raises(TypeError, match="io_manger_key"):
        dd.asset(OrdersSchema, quarantine=True, io_manger_key="lake")(lambda: None)


# ---------------------------------------- runs ---------------------------------------- #


def test_each_run_materializes_the_quarantine_before_the_table(filesystem: Storage):
    result = filesystem.materialize([raw_orders, fx_rates, orders])

    assert result.success
    stored = [
        e.event_specific_data.materialization.asset_key
        for e in result.all_events
        if e.event_type_value == "ASSET_MATERIALIZATION" and e.step_key == "sales__orders"
    ]
    assert stored == [QUARANTINE, TABLE]
    # the body wrote the quarantine through the IO manager itself; Dagster hands it the table
    handled = [
        e.event_specific_data.output_name
        for e in result.all_events
        if e.event_type_value == "HANDLED_OUTPUT" and e.step_key == "sales__orders"
    ]
    assert handled == ["result"]
    quarantine = materialization(result, "sales/orders_quarantine")
    assert quarantine["dagster/row_count"] == 7
    assert quarantine["path"] == materialization(result, "sales/orders")["dy_quarantine"]
    assert filesystem.read(["sales", "orders_quarantine"]).height == 7


def test_every_row_invalid_materializes_the_quarantine_only_and_fails(storage: Storage):
    @dd.asset(OrdersSchema, quarantine=True)
    def lines() -> pl.DataFrame:
        return defective_orders().filter(pl.col("order_id") == "ORD-20011")

    result = storage.materialize([lines])

    assert not result.success
    assert step_error(result)[0] == "NoValidRowsError"
    assert {e.asset_key for e in result.get_asset_materialization_events()} == {
        dg.AssetKey("lines_quarantine")
    }
    assert materialization(result, "lines_quarantine")["dagster/row_count"] == 1
    assert storage.read("lines") is None


def test_a_partitioned_run_materializes_that_partition_of_the_quarantine(filesystem: Storage):
    @dd.asset(OrdersSchema, quarantine=True, partitions_def=DAYS)
    def lines(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return defective_orders().with_columns(note=pl.lit(context.partition_key))

    instance = dg.DagsterInstance.ephemeral()
    for day in ("2024-05-01", "2024-05-02"):
        assert filesystem.materialize([lines], partition_key=day, instance=instance).success

    partitions = instance.get_materialized_partitions(dg.AssetKey("lines_quarantine"))
    assert partitions == {"2024-05-01", "2024-05-02"}
    stored = filesystem.read("lines_quarantine", "2024-05-02")
    assert stored is not None and set(stored["note"]) == {"2024-05-02"}


# ------------------------------- a quarantine key of one's own ------------------------------- #

REJECTS = dg.AssetKey(["restricted", "orders_rejects"])


def rejecting(**settings: Any) -> dg.AssetsDefinition:
    @dd.asset(OrdersSchema, quarantine=True, quarantine_key="restricted/orders_rejects", **settings)
    def orders() -> pl.DataFrame:
        return defective_orders()

    return orders


@pytest.mark.parametrize("selection", [None, ["orders"]], ids=["both", "the table alone"])
def test_quarantine_key_names_the_quarantine_asset_and_where_it_is_stored(
    warehouse: Storage, selection: Any
):
    orders = rejecting()
    assert orders.keys == {dg.AssetKey("orders"), REJECTS}

    result = warehouse.materialize([orders], selection=selection)

    assert result.success
    assert materialized(result) == {"orders", "restricted/orders_rejects"}
    held_back = warehouse.read(["restricted", "orders_rejects"])
    assert held_back is not None and held_back.height == 7
    assert warehouse.read("orders_quarantine") is None
    address = materialization(result, "orders")["dy_quarantine"]
    assert "restricted.orders_rejects" in address
    assert evaluations(result)["dy_rule__amount__min"].metadata["dy_quarantine"].value == address


def test_the_layout_check_follows_the_quarantine_key(warehouse: Storage):
    with duckdb.connect(str(warehouse.database)) as connection:
        connection.execute("create schema restricted")
        connection.execute("create table restricted.orders_rejects (order_id varchar)")

    result = warehouse.materialize([rejecting()])

    assert not result.success
    name, message = step_error(result)
    assert name == "QuarantineLayoutError" and "restricted.orders_rejects" in message
    assert warehouse.read("orders") is None


def test_the_collision_guard_follows_the_quarantine_key():
    taken = dg.AssetSpec(REJECTS)

    with pytest.raises(dg.DagsterInvalidDefinitionError, match="'restricted', 'orders_rejects'"):
        dg.Definitions(assets=[rejecting(), taken]).resolve_asset_graph()


def test_direct_invocation_writes_the_quarantine_under_its_key(tmp_path):
    list(rejecting(quarantine_dir=str(tmp_path))())

    assert pl.read_parquet(tmp_path / "restricted" / "orders_rejects.parquet").height == 7


def test_a_quarantine_key_needs_a_quarantine_and_another_key_than_the_table():
    with pytest.raises(dd.errors.InvalidSettingError, match="quarantine=True"):
        dd.asset(OrdersSchema, quarantine_key="held")

    with pytest.raises(dd.errors.InvalidSettingError, match="overwrite the table"):

        @dd.asset(OrdersSchema, quarantine=True, quarantine_key="orders")
        def orders() -> pl.DataFrame:
            return defective_orders()


@pytest.mark.parametrize("selection", [None, ["orders"]], ids=["both", "the table alone"])
def test_quarantine_io_manager_key_stores_the_quarantine_apart(tmp_path, selection: Any):
    @dd.asset(OrdersSchema, quarantine=True, quarantine_io_manager_key="restricted")
    def orders() -> pl.DataFrame:
        return defective_orders()

    lake, restricted = Storage("filesystem", tmp_path / "lake"), Storage("duckdb", tmp_path)
    assert orders.get_io_manager_key_for_asset_key(dg.AssetKey("orders_quarantine")) == (
        "restricted"
    )

    result = dg.materialize(
        [orders],
        selection=selection,
        resources={"io_manager": lake.io_manager(), "restricted": restricted.io_manager()},
        raise_on_error=False,
    )

    assert result.success
    assert lake.read("orders") is not None and lake.read("orders_quarantine") is None
    held_back = restricted.read("orders_quarantine")
    assert held_back is not None and held_back.height == 7
    assert "public.orders_quarantine" in materialization(result, "orders")["dy_quarantine"]


def test_quarantine_io_manager_key_needs_a_quarantine():
    with pytest.raises(dd.errors.InvalidSettingError, match="quarantine_io_manager_key"):
        dd.asset(OrdersSchema, quarantine_io_manager_key="restricted")
