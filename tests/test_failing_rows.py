"""`keep_failing_rows=`: a sidecar run's failing rows kept where the data lives, in real runs:
a DuckDB file (pushed down and not, read cast, partitioned, concurrent partitions, a
read-only database, a table made for an earlier schema), parquet files and the IO manager's
storage; the cap."""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
import threading
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import duckdb
import polars as pl
import pytest
from dagster_duckdb import DuckDBResource
from defective import DEFECTIVE_COUNTS, VALID
from support import evaluations, logs
from test_sources import (
    DAYS,
    _check,
    _daily_orders,
    _warehouse,
    _warehouse_schema,
    daily_files,
    write_day,
)

import dagster_dataframely as dd
from dagster_dataframely.data import OrdersSchema, defective_orders

FLAGS = {f"dy_rule__{rule.replace('|', '__')}": n for rule, n in DEFECTIVE_COUNTS.items()}
FAILING_ROWS = defective_orders().height - len(VALID)


def _flag_counts(frame: pl.DataFrame) -> dict[str, int]:
    return {
        name: int(frame[name].sum())
        for name in frame.columns
        if name.startswith("dy_rule__") and frame[name].sum()
    }


def _on_duckdb(database: Path, schema: Any = None, **keep: Any) -> dg.Definitions:
    orders = dg.AssetSpec("orders", metadata={"dagster/table_name": "sales.orders"})
    return dd.with_schemas(
        dg.Definitions(
            assets=[orders], resources={"duckdb": DuckDBResource(database=str(database))}
        ),
        {"orders": schema or _warehouse_schema()},
        source=dd.sources.DuckDBTableSource(pushdown=keep.pop("pushdown", True)),
        keep_failing_rows=keep.pop("keep_failing_rows", True),
        **keep,
    )


def _kept(database: Path, table: str = "sales.orders__dy_failures") -> pl.DataFrame:
    """The failures table, read back."""
    with duckdb.connect(str(database), read_only=True) as connection:
        return pl.from_arrow(connection.sql(f"select * from {table}").to_arrow_table())  # type: ignore[return-value]


def test_duckdb_keeps_every_failing_row_with_one_flag_per_rule(tmp_path: Path) -> None:
    database = _warehouse(tmp_path / "shop.duckdb", defective_orders())

    result = _check(_on_duckdb(database))

    kept = _kept(database)
    assert kept.height == FAILING_ROWS
    assert _flag_counts(kept) == FLAGS
    assert set(kept["dy_run_id"]) == {result.run_id}
    assert kept["dy_partition_key"].null_count() == kept.height
    assert set(OrdersSchema.column_names()) < set(kept.columns)
    check = evaluations(result)["dy_rule__amount__min"]
    assert check.metadata["dy_failing_rows_table"].value == '"sales"."orders__dy_failures"'
    assert check.metadata["dy_failing_rows_kept"].value == FAILING_ROWS
    query = check.metadata["dy_failing_rows"].value
    with duckdb.connect(str(database), read_only=True) as connection:
        (rows,) = connection.sql(f"select count(*) from ({query})").fetchone()  # type: ignore[misc]
    assert rows == DEFECTIVE_COUNTS["amount|min"]


@pytest.mark.parametrize(
    ("stored", "read"),
    [
        (defective_orders(), {"pushdown": False}),
        (defective_orders().with_columns(pl.col("line").cast(pl.Int32)), {"read_dtypes": "cast"}),
    ],
    ids=["pushdown-off", "read-cast"],
)
def test_rules_evaluated_in_polars_keep_their_rows_in_the_database(
    tmp_path: Path, stored: pl.DataFrame, read: dict[str, Any]
) -> None:
    database = _warehouse(tmp_path / "shop.duckdb", stored)

    result = _check(_on_duckdb(database, **read))

    kept = _kept(database)
    assert kept.height == FAILING_ROWS
    assert _flag_counts(kept) == FLAGS
    assert set(kept["dy_run_id"]) == {result.run_id}
    check = evaluations(result)["dy_rule__amount__min"]
    assert check.metadata["dy_failing_rows_table"].value == '"sales"."orders__dy_failures"'
    assert check.metadata["dy_failing_rows_kept"].value == FAILING_ROWS


def test_the_cap_bounds_the_rows_kept_and_the_counts_stay_exact(tmp_path: Path) -> None:
    database = _warehouse(tmp_path / "shop.duckdb", defective_orders())

    result = _check(_on_duckdb(database, max_failing_rows=2))

    assert _kept(database).height == 2
    check = evaluations(result)["dy_rule__primary_key"]
    assert check.metadata["dy_failed_count"].value == DEFECTIVE_COUNTS["primary_key"]
    assert check.metadata["dy_failing_rows_cap"].value == 2
    assert check.metadata["dy_failing_rows_kept"].value == 2


def test_a_passing_run_leaves_no_stale_rows(tmp_path: Path) -> None:
    database = _warehouse(tmp_path / "shop.duckdb", defective_orders())
    defs = _on_duckdb(database)
    _check(defs)
    with duckdb.connect(str(database)) as connection:
        connection.execute("delete from sales.orders")
        connection.register("frame", _daily_orders("2024-01-01").drop("day").to_arrow())
        connection.execute("insert into sales.orders select * from frame")

    _check(defs)

    assert _kept(database).height == 0


@dg.asset(name="orders", partitions_def=DAYS)
def _daily(context: dg.AssetExecutionContext, duckdb: DuckDBResource) -> None:
    frame = _daily_orders(context.partition_key).with_columns(pl.col("status").cast(pl.String))
    if context.partition_key != "2024-01-01":  # every day but the first fails
        frame = defective_orders().with_columns(
            pl.col("status").cast(pl.String), day=pl.lit(context.partition_key).str.to_date()
        )
    write_day(duckdb, context.partition_key, frame)


def _daily_checks(**keep: Any) -> list[Any]:
    source = dd.sources.DuckDBTableSource(table="sales.orders", partition_expr="day")
    checks = dd.schema_checks(
        _warehouse_schema(), asset="orders", partitions_def=DAYS, source=source, **keep
    )
    return [_daily, checks]


def test_a_partitioned_run_replaces_only_its_partition(tmp_path: Path) -> None:
    database = tmp_path / "shop.duckdb"
    resources = {"duckdb": DuckDBResource(database=str(database))}
    assets = _daily_checks(keep_failing_rows=True)

    for day in ("2024-01-02", "2024-01-03", "2024-01-02", "2024-01-01"):
        dg.materialize(assets, resources=resources, partition_key=day, raise_on_error=False)

    kept = _kept(database)
    by_day = dict(kept.group_by("dy_partition_key").len().iter_rows())
    assert by_day == {"2024-01-02": FAILING_ROWS, "2024-01-03": FAILING_ROWS}
    assert kept.group_by("dy_partition_key").agg(pl.col("dy_run_id").n_unique())[
        "dy_run_id"
    ].to_list() == [1, 1]


def test_concurrent_partitions_never_delete_each_others_rows(tmp_path: Path) -> None:
    database = tmp_path / "shop.duckdb"
    connection = duckdb.connect(str(database))

    class Shared(dg.ConfigurableResource):
        def get_connection(self) -> Any:
            from contextlib import nullcontext

            return nullcontext(connection.cursor())

    resources = {"duckdb": Shared()}
    assets = _daily_checks(keep_failing_rows=True)
    for day in ("2024-01-02", "2024-01-03"):
        dg.materialize(assets, resources=resources, partition_key=day, raise_on_error=False)

    def run(day: str) -> None:
        for _ in range(3):
            dg.materialize(assets, resources=resources, partition_key=day, raise_on_error=False)

    threads = [threading.Thread(target=run, args=(day,)) for day in ("2024-01-02", "2024-01-03")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    kept = pl.from_arrow(connection.sql("select * from sales.orders__dy_failures").to_arrow_table())
    connection.close()
    assert dict(kept.group_by("dy_partition_key").len().iter_rows()) == {  # type: ignore[union-attr]
        "2024-01-02": FAILING_ROWS,
        "2024-01-03": FAILING_ROWS,
    }


def test_a_read_only_database_still_reports_the_verdicts(tmp_path: Path) -> None:
    database = _warehouse(tmp_path / "shop.duckdb", defective_orders())
    orders = dg.AssetSpec("orders", metadata={"dagster/table_name": "sales.orders"})
    defs = dd.with_schemas(
        dg.Definitions(
            assets=[orders],
            resources={
                "duckdb": DuckDBResource(
                    database=str(database), connection_config={"access_mode": "READ_ONLY"}
                )
            },
        ),
        {"orders": _warehouse_schema()},
        source=dd.sources.DuckDBTableSource(),
        keep_failing_rows=True,
    )

    result = _check(defs)

    checks = evaluations(result)
    assert {
        n: c.metadata["dy_failed_count"].value for n, c in checks.items() if not c.passed
    } == FLAGS
    error = checks["dy_rule__amount__min"].metadata["dy_failing_rows_error"].value
    assert '"sales"."orders__dy_failures"' in error and "reported all the same" in error


def test_a_table_made_for_an_earlier_schema_is_refused_naming_the_column_and_the_fix(
    tmp_path: Path,
) -> None:
    database = _warehouse(tmp_path / "shop.duckdb", defective_orders())
    first = _check(_on_duckdb(database))
    with duckdb.connect(str(database)) as connection:
        connection.execute("alter table sales.orders add column channel varchar default 'web'")

    class Gained(_warehouse_schema()):  # type: ignore[misc]
        channel = dy.String()

    result = _check(_on_duckdb(database, Gained))

    checks = evaluations(result)
    assert {
        n: c.metadata["dy_failed_count"].value for n, c in checks.items() if not c.passed
    } == FLAGS
    error = checks["dy_rule__amount__min"].metadata["dy_failing_rows_error"].value
    assert error.startswith("FailingRowsWriteError: ")
    assert '"sales"."orders__dy_failures"' in error and "no column 'channel'" in error
    assert "Rename or drop the table" in error and "reported all the same" in error
    assert "RuleEvaluationError" not in error and "evaluate the rules" not in error
    assert set(_kept(database)["dy_run_id"]) == {first.run_id}  # refused before any delete


# ------------------------------- files and the IO manager ------------------------------- #


def _query_rows(check: Any) -> int:
    """Rows of the ready-to-run query a failing check carries, run as written."""
    code = check.metadata["dy_failing_rows"].value
    return int(eval(code, {"pl": pl}).select(pl.len()).collect().item())


def test_parquet_keeps_one_file_per_partition_beside_the_table(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    orders_files = daily_files(lake)
    source = dd.sources.ParquetSource(str(lake / "*.parquet"), partition_expr="day")
    checks = dd.schema_checks(
        OrdersSchema, asset="orders", source=source, keep_failing_rows=True, partitions_def=DAYS
    )

    assets = [orders_files, checks]
    dg.materialize(assets, partition_key="2024-01-01", raise_on_error=False)
    result = dg.materialize(assets, partition_key="2024-01-02", raise_on_error=False)

    kept = tmp_path / "lake__dy_failures"
    assert sorted(p.name for p in kept.iterdir()) == ["2024-01-01.parquet", "2024-01-02.parquet"]
    assert pl.read_parquet(kept / "2024-01-01.parquet").height == 0
    day_two = pl.read_parquet(kept / "2024-01-02.parquet")
    assert day_two.height == FAILING_ROWS and _flag_counts(day_two) == FLAGS
    assert set(day_two["dy_partition_key"]) == {"2024-01-02"}
    check = evaluations(result)["dy_rule__order_id__regex"]
    assert check.metadata["dy_failing_rows_table"].value == str(kept / "2024-01-02.parquet")
    assert _query_rows(check) == DEFECTIVE_COUNTS["order_id|regex"]


def test_an_io_manager_source_keeps_its_rows_in_the_instance_storage(tmp_path: Path) -> None:
    @dg.asset(name="orders")
    def orders() -> pl.DataFrame:
        return defective_orders()

    (tmp_path / "home").mkdir()
    instance = dg.DagsterInstance.local_temp(str(tmp_path / "home"))
    checks = dd.schema_checks(OrdersSchema, asset=orders, keep_failing_rows=True)
    resources = {"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path / "warehouse"))}

    dg.materialize([orders, checks], resources=resources, instance=instance, raise_on_error=False)

    kept = pl.read_parquet(
        Path(instance.storage_directory()) / "orders__dy_failures" / "__unpartitioned.parquet"
    )
    assert kept.height == FAILING_ROWS and _flag_counts(kept) == FLAGS


def test_the_failing_rows_are_an_asset_downstream_of_the_checked_one(tmp_path: Path) -> None:
    defs = _on_duckdb(tmp_path / "shop.duckdb")

    specs = {spec.key: spec for spec in defs.resolve_all_asset_specs()}

    failures = specs[dg.AssetKey("orders__dy_failures")]
    assert [dep.asset_key for dep in failures.deps] == [dg.AssetKey("orders")]
    columns = [c.name for c in failures.metadata["dagster/column_schema"].columns]
    assert set(columns[: len(OrdersSchema.column_names())]) == set(OrdersSchema.column_names())
    assert set(FLAGS) < set(columns) and columns[-2:] == ["dy_run_id", "dy_partition_key"]


# ------------------------------ collections and the Component ------------------------------ #


def test_a_collection_keeps_each_members_failing_rows(tmp_path: Path) -> None:
    from shop import MEMBERS, Shop, shop_frames
    from test_collection_checks import _shop_assets

    kept = tmp_path / "kept"
    checks = dd.collection_checks(Shop, members=MEMBERS, keep_failing_rows=str(kept))
    resources = {"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path / "warehouse"))}

    dg.materialize(
        [*_shop_assets(shop_frames()), checks], resources=resources, raise_on_error=False
    )

    orders = pl.read_parquet(kept / "orders__dy_failures" / "__unpartitioned.parquet")
    lines = pl.read_parquet(kept / "order_lines__dy_failures" / "__unpartitioned.parquet")
    assert _flag_counts(orders) == {"dy_rule__amount__min": 1}
    assert _flag_counts(lines) == {"dy_rule__primary_key": 2}


def test_the_component_keeps_failing_rows_where_its_yaml_says(tmp_path: Path, sandbox: Any) -> None:
    from support import scaffold_checks
    from test_component import ORDERS, _declare

    _declare(sandbox)
    kept = tmp_path / "kept"
    scaffold_checks(
        sandbox,
        {"keep_failing_rows": str(kept), "checks": [{"asset": "orders", "schema": ORDERS}]},
    )

    with sandbox.build_component_tree() as tree:
        defs = tree.build_defs()
        specs = {spec.key: spec for spec in defs.resolve_all_asset_specs()}
        failures = specs[dg.AssetKey("orders__dy_failures")]
        assert [dep.asset_key for dep in failures.deps] == [dg.AssetKey("orders")]
        dg.materialize(
            [*(defs.assets or []), *(defs.asset_checks or [])],
            selection=["orders"],
            resources={"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path / "warehouse"))},
            raise_on_error=False,
        )

    rows = pl.read_parquet(kept / "orders__dy_failures" / "__unpartitioned.parquet")
    assert rows.height == FAILING_ROWS and _flag_counts(rows) == FLAGS


def test_a_named_schema_holds_the_failures_table(tmp_path: Path) -> None:
    database = _warehouse(tmp_path / "shop.duckdb", defective_orders())
    with duckdb.connect(str(database)) as connection:
        connection.execute("create schema audit")

    result = _check(_on_duckdb(database, keep_failing_rows="audit"))

    assert _kept(database, "audit.sales__orders__dy_failures").height == FAILING_ROWS
    check = evaluations(result)["dy_rule__amount__min"]
    assert check.metadata["dy_failing_rows_table"].value == '"audit"."sales__orders__dy_failures"'


def test_a_cap_beyond_any_frame_keeps_every_row(tmp_path: Path) -> None:
    defective_orders().write_parquet(tmp_path / "orders.parquet")
    checks = dd.schema_checks(
        OrdersSchema,
        asset="orders",
        source=dd.sources.ParquetSource(str(tmp_path / "orders.parquet")),
        keep_failing_rows=True,
        max_failing_rows=1 << 62,
    )

    _check(dg.Definitions(assets=[dg.AssetSpec("orders")], asset_checks=[checks]))

    kept = pl.read_parquet(tmp_path / "orders__dy_failures" / "__unpartitioned.parquet")
    assert kept.height == FAILING_ROWS


class Payments(dy.Schema):
    """Rules DuckDB evaluates exactly, the key rules among them."""

    payment_id = dy.Int64(primary_key=True)
    invoice = dy.String(nullable=True, unique=True)
    amount = dy.Float64(nullable=True, min=0)
    currency = dy.String(regex=r"^[A-Z]{3}$")


PAYMENTS = pl.DataFrame(
    {
        "payment_id": [1, 2, 2, 3, 4, 5],
        "invoice": ["a", "b", "b", None, None, "c"],
        "amount": [1.0, -1.0, 2.0, None, float("nan"), -3.0],
        "currency": ["EUR", "EUR", "eur", "USD", "CHF", "E"],
    }
)


def test_rows_are_selected_inside_duckdb_and_flag_what_dataframely_counts(
    tmp_path: Path,
) -> None:
    database = _warehouse(tmp_path / "shop.duckdb", PAYMENTS, table="sales.payments")
    spec = dg.AssetSpec("payments", metadata={"dagster/table_name": "sales.payments"})
    defs = dd.with_schemas(
        dg.Definitions(assets=[spec], resources={"duckdb": DuckDBResource(database=str(database))}),
        {"payments": Payments},
        source=dd.sources.DuckDBTableSource(),
        keep_failing_rows=True,
    )
    instance = dg.DagsterInstance.ephemeral()

    result = _check(defs, "payments", instance=instance)

    kept = _kept(database, "sales.payments__dy_failures")
    valid, failures = Payments.filter(PAYMENTS)
    counts = {f"dy_rule__{k.replace('|', '__')}": n for k, n in failures.counts().items() if n}
    assert _flag_counts(kept) == counts
    assert kept.height == PAYMENTS.height - valid.height
    lines = [line.strip() for entry in logs(instance, result) for line in entry.splitlines()]
    sent = [line for line in lines if line.startswith("Pushed down to DuckDB")]
    assert any('INSERT INTO "sales"."payments__dy_failures"' in line for line in sent)
    assert not any("VALUES" in line for line in sent)
