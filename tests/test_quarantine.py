"""The quarantine: its frame, where each writer puts it (per key prefix and per partition), and
the guards against a key another asset already materializes: Dagster's, for the quarantine
`dd.asset` declares, and `validate_quarantine_key`, for a hand-wired one."""

from pathlib import Path

import dagster as dg
import polars as pl
import pytest
from dagster._core.errors import DagsterInvalidPropertyError
from polars.testing import assert_frame_equal
from support import materialization, step_error
from test_quarantine_state import hand_wired

import dagster_dataframely as dd
from dagster_dataframely.data import OrdersSchema, defective_orders, storefront_orders
from dagster_dataframely.wiring import (
    delegating_writer,
    file_writer,
    quarantine_frame,
    quarantine_path,
    rules,
    validate_quarantine_key,
)

CHECK_NAMES = [rule.check_name for rule in rules(OrdersSchema)]
STATUS = dg.StaticPartitionsDefinition(["paid", "shipped"])


def by_status(context: dg.AssetExecutionContext) -> pl.DataFrame:
    return defective_orders().filter(pl.col("status") == context.partition_key)


def other_quarantine() -> dg.AssetsDefinition:
    """Another asset that materializes the key `orders_quarantine`."""

    @dg.asset
    def orders_quarantine() -> pl.DataFrame:
        return pl.DataFrame({"kept": [1, 2]})

    return orders_quarantine


# ------------------------------------- the frame ------------------------------------- #


def test_quarantine_frame_is_the_invalid_rows_then_one_string_column_per_rule():
    _, failure = OrdersSchema.filter(defective_orders(), cast=False)

    frame = quarantine_frame(OrdersSchema, failure)

    assert frame.columns == [*OrdersSchema.column_names(), *CHECK_NAMES]
    assert all(frame.schema[name] == pl.String for name in CHECK_NAMES)
    assert_frame_equal(frame.select(OrdersSchema.column_names()), failure.invalid())
    row = frame.row(by_predicate=pl.col("order_id") == "ORD-20011", named=True)
    broken = {name for name in CHECK_NAMES if row[name] == "invalid"}
    assert broken == {
        "dy_rule__paid_orders_have_amount",
        "dy_rule__amount__min",
        "dy_rule__shipped_after_ordered",
    }
    assert {row[name] for name in CHECK_NAMES} == {"valid", "invalid"}


def test_quarantine_frame_of_a_clean_filter_is_empty_with_the_same_columns():
    _, failure = OrdersSchema.filter(storefront_orders(), cast=False)

    frame = quarantine_frame(OrdersSchema, failure)

    assert frame.height == 0
    assert frame.columns == [*OrdersSchema.column_names(), *CHECK_NAMES]


# ---------------------------------- paths and files ---------------------------------- #


def test_quarantine_path_keeps_the_prefix_and_puts_partitions_in_their_own_files(tmp_path):
    assert quarantine_path("orders", tmp_path) == tmp_path / "orders_quarantine.parquet"
    assert quarantine_path(["sales", "eu", "orders"], tmp_path) == (
        tmp_path / "sales" / "eu" / "orders_quarantine.parquet"
    )
    assert quarantine_path(dg.AssetKey(["sales", "orders"]), tmp_path, "2024-05-01") == (
        tmp_path / "sales" / "orders_quarantine" / "2024-05-01.parquet"
    )


@pytest.mark.parametrize(
    "keys", [("2024-05-01-00:00", "2024-05-01-01:00"), ("a/b", "a_b"), ("..", "."), ("x|y", "x")]
)
def test_two_partitions_never_share_a_quarantine_file(tmp_path, keys):
    first, second = (quarantine_path("orders", tmp_path, key) for key in keys)

    assert first != second
    for path in (first, second):
        assert path.parent == tmp_path / "orders_quarantine"  # no key escapes its directory


def test_direct_invocation_lays_out_files_as_the_parquet_io_manager_does(tmp_path):
    # A quarantine written under direct invocation sits where a run's would.
    manager = dd.ParquetIOManager(base_dir=str(tmp_path))
    for partition in (None, "2024-05-01-00:00"):
        assert quarantine_path(["sales", "orders"], tmp_path, partition) == manager.path_for(
            dg.AssetKey(["sales", "orders_quarantine"]), partition
        )


def test_quarantine_dir_defaults_to_its_setting(tmp_path, monkeypatch):
    monkeypatch.setenv("DAGSTER_DATAFRAMELY_QUARANTINE_DIR", str(tmp_path / "from-env"))

    assert quarantine_path("orders") == tmp_path / "from-env" / "orders_quarantine.parquet"


def test_file_writer_writes_parquet_where_quarantine_path_says(tmp_path):
    frame = storefront_orders()

    address = file_writer(["sales", "orders"], tmp_path, "2024-05-01")(frame)

    path = quarantine_path(["sales", "orders"], tmp_path, "2024-05-01")
    assert address == str(path)
    assert_frame_equal(pl.read_parquet(path), frame)
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # nothing staged is left


# ------------------------------- the delegating writer ------------------------------- #


def test_the_quarantine_goes_through_the_assets_own_io_manager_with_its_key_prefix(storage):
    @dd.asset(OrdersSchema, quarantine=True, key_prefix=["sales", "eu"])
    def orders() -> pl.DataFrame:
        return defective_orders()

    result = storage.materialize([orders])

    assert result.success
    assert storage.read(["sales", "eu", "orders"]) is not None
    quarantined = storage.read(["sales", "eu", "orders_quarantine"])
    assert quarantined is not None and quarantined.height == 7
    address = materialization(result, "sales/eu/orders")["dy_quarantine"]
    assert "orders_quarantine" in address and "eu" in address


def test_each_partition_keeps_its_own_quarantine_on_the_filesystem(filesystem):
    @dd.asset(OrdersSchema, quarantine=True, partitions_def=STATUS)
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return by_status(context)

    for key in ("paid", "shipped", "paid"):
        assert filesystem.materialize([orders], partition_key=key).success

    paid = filesystem.read("orders_quarantine", "paid")
    shipped = filesystem.read("orders_quarantine", "shipped")
    assert paid is not None and set(paid["status"]) == {"paid"} and paid.height == 6
    assert shipped is not None and shipped["order_id"].to_list() == ["ORD-20011"]


def test_the_partition_passes_through_to_a_database_io_manager(warehouse):
    @dd.asset(
        OrdersSchema, quarantine=True, partitions_def=STATUS, metadata={"partition_expr": "status"}
    )
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return by_status(context)

    for key in ("shipped", "paid", "paid"):
        assert warehouse.materialize([orders], partition_key=key).success

    # re-running "paid" replaced only that partition's rows, in the table and in the quarantine
    quarantined = warehouse.read("orders_quarantine")
    assert quarantined is not None
    assert quarantined.group_by("status").len().sort("status").rows() == [
        ("paid", 6),
        ("shipped", 1),
    ]
    table = warehouse.read("orders")
    assert table is not None and table.height == 5  # paid: 1 valid + 2 warn-only; shipped: 1 + 1


def test_delegating_writer_needs_a_step():
    with pytest.raises(DagsterInvalidPropertyError, match="file_writer"):
        delegating_writer(dg.build_asset_context())


# ---------------------------------- the key guard ---------------------------------- #


def test_definitions_with_another_asset_of_the_quarantine_key_do_not_load():
    # dd.asset declares the quarantine, so Dagster refuses the duplicate when it loads the
    # code location, before any run: even an AssetSpec of that key collides.
    @dd.asset(OrdersSchema, quarantine=True)
    def orders() -> pl.DataFrame:
        return storefront_orders()

    @dg.asset
    def orders_quarantine() -> int:
        return 0

    for other in (orders_quarantine, dg.AssetSpec("orders_quarantine")):
        with pytest.raises(dg.DagsterInvalidDefinitionError, match="orders_quarantine"):
            dg.Definitions(assets=[orders, other]).resolve_asset_graph()


def test_a_hand_wired_quarantine_key_another_asset_materializes_fails_before_the_function(
    filesystem,
):
    result = filesystem.materialize([hand_wired(defective_orders), other_quarantine()])

    assert not result.success
    failure = next(e for e in result.get_step_failure_events() if e.step_key == "orders")
    error = failure.step_failure_data.error
    assert error is not None and "QuarantineKeyCollisionError" in error.to_string()
    assert "orders_quarantine" in error.to_string()


def test_the_guard_sees_assets_the_run_did_not_select(filesystem):
    orders, quarantine = hand_wired(defective_orders), other_quarantine()

    assert filesystem.materialize([quarantine]).success
    result = filesystem.materialize([orders, quarantine], selection=["orders"])

    assert not result.success
    assert step_error(result)[0] == "QuarantineKeyCollisionError"
    assert filesystem.read("orders_quarantine").equals(pl.DataFrame({"kept": [1, 2]}))


def test_a_job_that_selects_only_the_hand_wired_asset_is_guarded(filesystem):
    defs = dg.Definitions(
        assets=[hand_wired(defective_orders), other_quarantine()],
        jobs=[dg.define_asset_job("gated_only", selection=["orders"])],
        resources={"io_manager": filesystem.io_manager()},
    )

    result = defs.resolve_job_def("gated_only").execute_in_process(raise_on_error=False)

    assert not result.success
    assert step_error(result)[0] == "QuarantineKeyCollisionError"
    assert filesystem.read("orders_quarantine") is None


def test_a_hand_wired_quarantine_declared_as_a_spec_is_fine_and_gets_its_events(filesystem):
    # How a hand-wired asset gets the quarantine into the catalog and the lineage: a spec
    # of the key, which nobody materializes; `delegating_writer` records each write on it.
    declared = dg.AssetSpec("orders_quarantine", description="Rows orders held back.")
    defs = dg.Definitions(assets=[hand_wired(defective_orders), declared])
    assert defs.resolve_asset_graph().has(dg.AssetKey("orders_quarantine"))

    result = filesystem.materialize([hand_wired(defective_orders), declared])

    assert result.success
    assert materialization(result, "orders_quarantine")["dagster/row_count"] == 7


def test_a_quarantine_key_with_another_prefix_is_another_key(filesystem):
    @dd.asset(OrdersSchema, quarantine=True)
    def orders() -> pl.DataFrame:
        return storefront_orders()

    assert filesystem.materialize([orders, dg.AssetSpec(["sales", "orders_quarantine"])]).success


def test_without_a_quarantine_the_key_is_not_guarded(filesystem):
    @dd.asset(OrdersSchema)
    def orders() -> pl.DataFrame:
        return storefront_orders()

    @dg.asset
    def orders_quarantine() -> int:
        return 0

    assert filesystem.materialize([orders, orders_quarantine]).success


def test_validate_quarantine_key_does_nothing_under_direct_invocation():
    @dg.asset
    def orders(context: dg.AssetExecutionContext) -> int:
        validate_quarantine_key(context)
        return 1

    assert orders(dg.build_asset_context()) == 1


# --------------------------------- direct invocation --------------------------------- #


def test_direct_invocation_writes_the_quarantine_to_parquet(tmp_path: Path):
    @dd.asset(OrdersSchema, quarantine=True, quarantine_dir=str(tmp_path), key_prefix="sales")
    def orders() -> pl.DataFrame:
        return defective_orders()

    events = list(orders())

    (materialized,) = [e for e in events if isinstance(e, dg.MaterializeResult)]
    path = quarantine_path(["sales", "orders"], tmp_path)
    assert materialized.metadata is not None
    assert materialized.metadata["dy_quarantine"] == str(path)
    assert pl.read_parquet(path).height == 7
    assert materialized.value.height == 6


def test_direct_invocation_of_a_partition_writes_that_partitions_quarantine(tmp_path: Path):
    @dd.asset(OrdersSchema, quarantine=True, quarantine_dir=str(tmp_path), partitions_def=STATUS)
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return by_status(context)

    for key in ("paid", "shipped"):
        list(orders(dg.build_asset_context(partition_key=key)))

    assert pl.read_parquet(quarantine_path("orders", tmp_path, "paid")).height == 6
    assert pl.read_parquet(quarantine_path("orders", tmp_path, "shipped")).height == 1
