"""`source=`: checks on tables no IO manager of the asset stores, in real runs: an external
`AssetSpec` on DuckDB (whole and by partition), parquet files, a Delta table, a function; the
run's resources (and run config) reach the reader; failures name the asset and the reader."""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import duckdb
import polars as pl
import pytest
from dagster.components.testing import DefsFolderSandbox
from dagster_duckdb import DuckDBResource
from defective import DEFECTIVE_COUNTS
from support import evaluations, failed, load_error, logs, scaffold_checks

import dagster_dataframely as dd
from dagster_dataframely.data import OrdersSchema, defective_orders, storefront_orders
from dagster_dataframely.errors import (
    InvalidSourceError,
    IOManagerLoadError,
    SourceReadError,
    UnknownAssetError,
    UnloadableAssetError,
)

DAYS = dg.DailyPartitionsDefinition(start_date="2024-01-01", end_date="2024-01-04")
EXPECTED = {
    f"dy_rule__{rule.replace('|', '__')}": count for rule, count in DEFECTIVE_COUNTS.items()
}


def _counts(result: dg.ExecuteInProcessResult) -> dict[str, int]:
    return {name: count for name, (count, _) in failed(result).items()}


def _check(
    defs: dg.Definitions,
    key: str = "orders",
    instance: dg.DagsterInstance | None = None,
    **kwargs: Any,
) -> dg.ExecuteInProcessResult:
    """Run only the checks of `key` (an external asset is never materialized)."""
    job = dg.define_asset_job(
        "checks",
        selection=dg.AssetSelection.checks_for_assets(key),
        partitions_def=kwargs.pop("partitions_def", None),
    )
    defs = dg.Definitions.merge(defs, dg.Definitions(jobs=[job]))
    return defs.resolve_job_def("checks").execute_in_process(
        instance=instance or dg.DagsterInstance.ephemeral(), raise_on_error=False, **kwargs
    )


def _user_error(result: dg.ExecuteInProcessResult) -> tuple[str, str]:
    """The class and message of the error the step's code raised (its causes left out: a
    read error is raised from the reader's own)."""
    (failure,) = result.get_step_failure_events()
    error = failure.step_failure_data.error
    assert error is not None and error.cause is not None
    return error.cause.cls_name or "", error.cause.message


def _warehouse(path: Path, frame: pl.DataFrame, table: str = "sales.orders") -> Path:
    """A DuckDB file holding `frame` as `table`, written outside Dagster."""
    with duckdb.connect(str(path)) as connection:
        connection.execute(f"create schema if not exists {table.split('.')[0]}")
        connection.register("frame", frame.to_arrow())
        connection.execute(f"create table {table} as select * from frame")
    return path


class ReadOrders(OrdersSchema):
    """`OrdersSchema` as `DuckDBTableSource` and Delta hand it back: the Enum is a String, the
    zone `UTC` (the source pins DuckDB's `TimeZone` to it)."""

    status = dy.String()
    ordered_at = dy.Datetime(time_zone="UTC")


def _warehouse_schema() -> Any:
    return ReadOrders


# --------------------------------------- DuckDB --------------------------------------- #


def _external_on_duckdb(database: Path, schema: Any) -> dg.Definitions:
    """An external `orders` spec whose table is `sales.orders` in `database`, with checks."""
    orders = dg.AssetSpec("orders", metadata={"dagster/table_name": "sales.orders"})
    return dd.with_schemas(
        dg.Definitions(
            assets=[orders], resources={"duckdb": DuckDBResource(database=str(database))}
        ),
        {"orders": schema},
        source=dd.sources.DuckDBTableSource(),
    )


def test_external_asset_on_duckdb_is_checked_through_the_resource(tmp_path: Path) -> None:
    database = _warehouse(tmp_path / "shop.duckdb", defective_orders())
    defs = _external_on_duckdb(database, _warehouse_schema())

    instance = dg.DagsterInstance.ephemeral()
    result = _check(defs, instance=instance)

    assert _counts(result) == EXPECTED
    read = logs(instance, result)
    assert any("from DuckDB table 'sales.orders' via resource" in line for line in read)


class Notes(dy.Schema):
    note = dy.String(nullable=True, max_length=12, regex=r"^[^X]")


class _SharedConnection:
    """A resource handing out the one connection the caller holds (as a pooled one would)."""

    def __init__(self, connection: duckdb.DuckDBPyConnection) -> None:
        self.connection = connection

    @contextmanager
    def get_connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        yield self.connection


def test_strings_read_exactly_and_the_connection_keeps_its_settings(tmp_path: Path) -> None:
    # Empty, inline (<= 12 bytes) and long strings, multi-byte ones and nulls, over batches.
    values = ["", "short", "exactly12byt", "thirteen byte", "größe über zwölf", "Xenon", None]
    frame = pl.DataFrame({"note": pl.Series(values * 40_000, dtype=pl.String)})
    connection = duckdb.connect(str(_warehouse(tmp_path / "shop.duckdb", frame)))
    checks = dd.schema_checks(
        Notes, asset="orders", source=dd.sources.DuckDBTableSource(table="sales.orders")
    )
    defs = dg.Definitions(
        assets=[dg.AssetSpec("orders")],
        asset_checks=[checks],
        resources={
            "duckdb": dg.ResourceDefinition.hardcoded_resource(_SharedConnection(connection))
        },
    )

    result = _check(defs)

    _, failure = Notes.filter(connection.sql("select * from sales.orders").pl(), cast=False)
    assert _counts(result) == {
        f"dy_rule__{rule.replace('|', '__')}": count for rule, count in failure.counts().items()
    }
    samples = {
        name: e.metadata["dy_failed_sample"].value
        for name, e in evaluations(result).items()
        if not e.passed
    }
    assert "größe über zwölf" in str(samples["dy_rule__note__max_length"])
    assert connection.execute("select current_setting('produce_arrow_string_view')").fetchone() == (
        False,
    )
    connection.close()


def _daily_orders(day: str) -> pl.DataFrame:
    """The defective orders on 2024-01-02, the valid ones on any other day."""
    frame = defective_orders() if day == "2024-01-02" else storefront_orders()
    return frame.with_columns(day=pl.lit(day).str.to_date())


@dg.asset(name="orders", partitions_def=DAYS)
def daily_orders_in_duckdb(context: dg.AssetExecutionContext, duckdb: DuckDBResource) -> None:
    """Writes its partition to DuckDB itself, as a dbt model would: no IO manager stores it."""
    frame = _daily_orders(context.partition_key).with_columns(pl.col("status").cast(pl.String))
    write_day(duckdb, context.partition_key, frame)


def write_day(duckdb: DuckDBResource, day: str, frame: pl.DataFrame) -> None:
    """`frame` as the rows of `day` in `sales.orders`, replacing that day's earlier rows."""
    with duckdb.get_connection() as connection:
        connection.execute("create schema if not exists sales")
        connection.register("frame", frame.to_arrow())
        connection.execute("create table if not exists sales.orders as select * from frame limit 0")
        connection.execute(f"delete from sales.orders where day = '{day}'")
        connection.execute("insert into sales.orders select * from frame")


def _daily_duckdb(database: Path, source: dd.sources.Source) -> list[Any]:
    assets = [daily_orders_in_duckdb]
    return [
        *assets,
        dd.schema_checks(_warehouse_schema(), asset="orders", partitions_def=DAYS, source=source),
    ]


#: A process of its own that leaves a scan of `scan_duckdb` while a collect on another thread
#: is still reading it, as polars leaves a batch read running after a sample's `head`.
READ_LEFT_RUNNING = """
import sys, threading, time
import duckdb
import polars as pl
from dagster_dataframely.sources._duckdb import scan_duckdb

total = int(sys.argv[1])
counted = []
connection = duckdb.connect()
with scan_duckdb(connection, f"SELECT md5(i::VARCHAR) AS h FROM range({total}) t(i)") as scan:
    def count():
        counted.append(scan.select(pl.len()).collect(engine="streaming").item())
    worker = threading.Thread(target=count)
    worker.start()
    time.sleep(0.5)
worker.join()
connection.close()
print(counted[0], flush=True)
"""


def test_a_duckdb_read_still_running_when_its_scan_closes_is_stopped_first(
    tmp_path: Path,
) -> None:
    # The scan closed its cursors under a batch read still running on a polars thread: the
    # process then aborted now and then ("pure virtual method called"), or hung. Closing the
    # scan now stops the read at its next batch and waits for it before closing anything.
    script = tmp_path / "read_left_running.py"
    script.write_text(READ_LEFT_RUNNING)
    total = 20_000_000
    run = subprocess.run(
        [sys.executable, str(script), str(total)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert int(run.stdout.split()[-1]) < total  # the read ended with the scan, not after it


def test_duckdb_partition_reads_only_the_run_partition(tmp_path: Path) -> None:
    resources = {"duckdb": DuckDBResource(database=str(tmp_path / "shop.duckdb"))}
    source = dd.sources.DuckDBTableSource(table="sales.orders", partition_expr="day")
    assets = _daily_duckdb(tmp_path, source)

    day_one = dg.materialize(
        assets, resources=resources, partition_key="2024-01-01", raise_on_error=False
    )
    day_two = dg.materialize(
        assets, resources=resources, partition_key="2024-01-02", raise_on_error=False
    )

    assert _counts(day_one) == {}
    assert _counts(day_two) == EXPECTED
    rows = {
        e.metadata["dy_row_count"].value
        for e in evaluations(day_two).values()
        if "dy_row_count" in e.metadata
    }
    assert rows == {defective_orders().height}


def test_a_partition_with_no_rows_says_so(tmp_path: Path) -> None:
    resources = {"duckdb": DuckDBResource(database=str(tmp_path / "shop.duckdb"))}
    wrong = dd.sources.DuckDBTableSource(table="sales.orders", partition_expr="day + 1")
    dg.materialize(_daily_duckdb(tmp_path, wrong), resources=resources, partition_key="2024-01-03")
    instance = dg.DagsterInstance.ephemeral()

    result = dg.materialize(
        _daily_duckdb(tmp_path, wrong),
        resources=resources,
        partition_key="2024-01-03",
        instance=instance,
    )

    rows = {
        e.metadata["dy_row_count"].value
        for e in evaluations(result).values()
        if "dy_row_count" in e.metadata
    }
    assert rows == {0}
    assert any(
        "loaded 0 rows" in line and "partition_expr" in line for line in logs(instance, result)
    )


def test_a_column_mismatch_is_one_failure_and_one_warning_names_the_rules_not_evaluated(
    tmp_path: Path,
) -> None:
    database = _warehouse(tmp_path / "shop.duckdb", storefront_orders())
    defs = _external_on_duckdb(database, OrdersSchema)  # the Enum DuckDB does not hand back
    instance = dg.DagsterInstance.ephemeral()

    result = _check(defs, instance=instance)

    evaluated = evaluations(result)
    assert list(evaluated) == ["dy_schema__columns"]
    assert not evaluated["dy_schema__columns"].passed
    (skipped,) = [m for m in logs(instance, result) if "check(s) not evaluated" in m]
    assert "dy_schema__columns failed (1 column(s)" in skipped
    assert "so no rule is reported on this table. Not evaluated: orders:dy_rule__" in skipped


def test_a_partitioned_run_without_partition_expr_says_so(tmp_path: Path) -> None:
    resources = {"duckdb": DuckDBResource(database=str(tmp_path / "shop.duckdb"))}
    assets = _daily_duckdb(tmp_path, dd.sources.DuckDBTableSource(table="sales.orders"))

    result = dg.materialize(
        assets, resources=resources, partition_key="2024-01-02", raise_on_error=False
    )

    cls_name, message = _user_error(result)
    assert cls_name == InvalidSourceError.__name__
    assert "partition_expr" in message


def test_a_missing_duckdb_table_names_the_asset_and_the_source(tmp_path: Path) -> None:
    database = _warehouse(tmp_path / "shop.duckdb", storefront_orders(), table="sales.other")
    defs = _external_on_duckdb(database, _warehouse_schema())

    result = _check(defs)

    cls_name, message = _user_error(result)
    assert cls_name == SourceReadError.__name__
    assert "asset orders" in message and "resource 'duckdb'" in message


# ---------------------------------- files and functions ---------------------------------- #


def daily_files(lake: Path) -> dg.AssetsDefinition:
    """A daily `orders` asset that writes each partition to its own file in `lake`."""

    @dg.asset(name="orders", partitions_def=DAYS)
    def orders_files(context: dg.AssetExecutionContext) -> None:
        lake.mkdir(exist_ok=True)
        _daily_orders(context.partition_key).write_parquet(
            lake / f"{context.partition_key}.parquet"
        )

    return orders_files


def test_parquet_glob_is_scanned_by_partition(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    orders_files = daily_files(lake)
    source = dd.sources.ParquetSource(str(lake / "*.parquet"), partition_expr="day")
    assets = [
        orders_files,
        dd.schema_checks(OrdersSchema, asset="orders", partitions_def=DAYS, source=source),
    ]

    day_one = dg.materialize(assets, partition_key="2024-01-01", raise_on_error=False)
    day_two = dg.materialize(assets, partition_key="2024-01-02", raise_on_error=False)

    assert _counts(day_one) == {}
    assert _counts(day_two) == EXPECTED


def test_delta_table_is_scanned(tmp_path: Path) -> None:
    # Delta has no Enum and stores timestamps in UTC: the schema says what Delta hands back.
    frame = defective_orders().with_columns(
        pl.col("status").cast(pl.String), pl.col("ordered_at").dt.convert_time_zone("UTC")
    )
    frame.write_delta(str(tmp_path / "orders_delta"))
    checks = dd.schema_checks(
        ReadOrders, asset="orders", source=dd.sources.DeltaSource(str(tmp_path / "orders_delta"))
    )
    defs = dg.Definitions(assets=[dg.AssetSpec("orders")], asset_checks=[checks])

    assert _counts(_check(defs)) == EXPECTED


def test_a_function_reads_through_a_resource_the_check_requires(tmp_path: Path) -> None:
    class Lake(dg.ConfigurableResource):
        root: str

    def read(context: dg.AssetCheckExecutionContext) -> pl.DataFrame:
        return pl.read_parquet(Path(context.resources.lake.root) / "orders.parquet")

    defective_orders().write_parquet(tmp_path / "orders.parquet")
    checks = dd.schema_checks(
        OrdersSchema, asset="orders", source=dd.sources.CallableSource(read, resource_keys=["lake"])
    )
    defs = dg.Definitions(
        assets=[dg.AssetSpec("orders")],
        asset_checks=[checks],
        resources={"lake": Lake.configure_at_launch()},
    )

    result = _check(defs, run_config={"resources": {"lake": {"config": {"root": str(tmp_path)}}}})

    assert _counts(result) == EXPECTED


def test_a_plain_function_is_a_source() -> None:
    checks = dd.schema_checks(
        OrdersSchema, asset="orders", source=lambda context: defective_orders()
    )
    defs = dg.Definitions(assets=[dg.AssetSpec("orders")], asset_checks=[checks])

    assert _counts(_check(defs)) == EXPECTED


def test_something_else_is_not_a_source() -> None:
    with pytest.raises(InvalidSourceError, match="is not a source"):
        dd.schema_checks(OrdersSchema, asset="orders", source="orders.parquet")  # type: ignore[arg-type]


# ------------------------------------- IO managers ------------------------------------- #


@dg.asset(io_manager_key="lake_io")
def orders() -> pl.DataFrame:
    return defective_orders()


def test_io_manager_comes_from_the_run_with_its_run_config(tmp_path: Path) -> None:
    defs = dd.with_schemas(
        dg.Definitions(
            assets=[orders], resources={"lake_io": dd.ParquetIOManager.configure_at_launch()}
        ),
        {"orders": OrdersSchema},
    )
    config = {"resources": {"lake_io": {"config": {"base_dir": str(tmp_path)}}}}

    instance = dg.DagsterInstance.ephemeral()
    result = defs.resolve_implicit_global_asset_job_def().execute_in_process(
        run_config=config, instance=instance, raise_on_error=False
    )

    assert _counts(result) == EXPECTED
    assert any(
        "through IO manager 'lake_io' as a polars.LazyFrame" in line
        for line in logs(instance, result)
    )


def test_a_truncated_file_names_the_asset_and_the_io_manager(tmp_path: Path) -> None:
    io_manager = dd.ParquetIOManager(base_dir=str(tmp_path))
    defs = dd.with_schemas(
        dg.Definitions(assets=[orders], resources={"lake_io": io_manager}), {"orders": OrdersSchema}
    )
    instance = dg.DagsterInstance.ephemeral()
    job = defs.resolve_implicit_global_asset_job_def()
    job.execute_in_process(instance=instance, raise_on_error=False)
    stored = io_manager.path_for(dg.AssetKey("orders"))
    stored.write_bytes(stored.read_bytes()[:100])

    result = (
        job.execute_in_process(
            instance=instance, raise_on_error=False, asset_check_selection=[], asset_selection=[]
        )
        if False
        else _check(defs)
    )

    cls_name, message = _user_error(result)
    assert cls_name == IOManagerLoadError.__name__
    assert "IO manager 'lake_io' could not load asset orders" in message


def test_an_io_manager_that_raises_is_named() -> None:
    class Broken(dg.ConfigurableIOManager):
        def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
            pass

        def load_input(self, context: dg.InputContext) -> Any:
            raise ConnectionError("warehouse unreachable")

    defs = dd.with_schemas(
        dg.Definitions(assets=[orders], resources={"lake_io": Broken()}), {"orders": OrdersSchema}
    )

    result = defs.resolve_implicit_global_asset_job_def().execute_in_process(
        instance=dg.DagsterInstance.ephemeral(), raise_on_error=False
    )

    cls_name, message = _user_error(result)
    assert cls_name == IOManagerLoadError.__name__
    assert "IO manager 'lake_io' could not load asset orders" in message
    assert "warehouse unreachable" in message


# ------------------------------------ definition time ------------------------------------ #


def test_an_external_asset_without_a_source_is_refused() -> None:
    with pytest.raises(UnloadableAssetError, match="asset orders: it has no IO manager"):
        dd.with_schemas(dg.Definitions(assets=[dg.AssetSpec("orders")]), {"orders": OrdersSchema})


def test_a_source_asset_is_refused_with_the_fix() -> None:
    defs = dg.Definitions(assets=[dg.SourceAsset("orders")])

    with pytest.raises(UnloadableAssetError, match=r"orders: it is a SourceAsset.*AssetSpec"):
        dd.with_schemas(defs, {"orders": OrdersSchema})


def test_a_source_for_an_asset_without_a_schema_is_an_error() -> None:
    with pytest.raises(UnknownAssetError, match="without a schema: customers"):
        dd.with_schemas(
            dg.Definitions(assets=[orders]),
            {"orders": OrdersSchema},
            source={"customers": dd.sources.DuckDBTableSource()},
        )


# --------------------------------------- Component --------------------------------------- #


def test_a_component_source_with_a_field_of_another_kind_names_the_file(
    sandbox: DefsFolderSandbox,
) -> None:
    entry = {
        "asset": "orders",
        "schema": "dagster_dataframely.data:OrdersSchema",
        "source": {"kind": "duckdb_table", "path": "orders.parquet"},
    }
    error = load_error(sandbox, scaffold_checks(sandbox, {"checks": [entry]}))

    assert isinstance(error, InvalidSourceError)
    assert "defs.yaml: checks[0] (asset orders" in str(error)
    assert (
        "'duckdb_table' takes partition_expr, pushdown, resource_key, table; it does not take path"
        in str(error)
    )
