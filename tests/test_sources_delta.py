"""Checks on an asset stored by dagster-deltalake-polars' `DeltaLakePolarsIOManager`, read
through the asset's IO manager (the default source) and through `DeltaSource` on the table it
wrote, whole and by the IO manager's partition column, in real runs; and what `DeltaSource`
reads that polars' own Delta scan does not."""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
import shutil
from pathlib import Path

import dagster as dg
import dataframely as dy
import polars as pl
from dagster_deltalake import LocalConfig
from dagster_deltalake_polars import DeltaLakePolarsIOManager
from defective import DEFECTIVE_COUNTS
from deltalake import write_deltalake
from support import failed, logs

import dagster_dataframely as dd
from dagster_dataframely.data import OrdersSchema, defective_orders, storefront_orders

DAYS = dg.DailyPartitionsDefinition(start_date="2024-01-01", end_date="2024-01-04")
EXPECTED = {
    f"dy_rule__{rule.replace('|', '__')}": count for rule, count in DEFECTIVE_COUNTS.items()
}


class DeltaOrders(OrdersSchema):
    # Delta has no Enum and stores timestamps in UTC: the schema says what Delta hands back.
    status = dy.String()
    ordered_at = dy.Datetime(time_zone="UTC")


def _as_delta(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(
        pl.col("status").cast(pl.String), pl.col("ordered_at").dt.convert_time_zone("UTC")
    )


def _lake(root: Path) -> dict[str, DeltaLakePolarsIOManager]:
    return {
        "io_manager": DeltaLakePolarsIOManager(root_uri=str(root), storage_options=LocalConfig())
    }


def _table(root: Path) -> str:
    """Where the IO manager writes asset `orders`: `<root>/<schema>/<table>`."""
    return str(root / "public" / "orders")


def _counts(result: dg.ExecuteInProcessResult) -> dict[str, int]:
    return {name: count for name, (count, _) in failed(result).items()}


@dg.asset(name="orders")
def orders() -> pl.DataFrame:
    return _as_delta(defective_orders())


@dg.asset(name="orders", partitions_def=DAYS, metadata={"partition_expr": "day"})
def daily_orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
    """The defective orders on 2024-01-02, the valid ones on any other day."""
    day = context.partition_key
    frame = defective_orders() if day == "2024-01-02" else storefront_orders()
    return _as_delta(frame).with_columns(day=pl.lit(day).str.to_date())


def test_the_io_manager_source_reads_the_delta_table_it_wrote(tmp_path: Path) -> None:
    defs = dd.with_schemas(
        dg.Definitions(assets=[orders], resources=_lake(tmp_path)), {"orders": DeltaOrders}
    )

    instance = dg.DagsterInstance.ephemeral()
    result = defs.resolve_implicit_global_asset_job_def().execute_in_process(
        instance=instance, raise_on_error=False
    )

    assert _counts(result) == EXPECTED
    assert any(
        "through IO manager 'io_manager' as a polars.LazyFrame" in line
        for line in logs(instance, result)
    )


def test_delta_source_reads_the_table_the_io_manager_wrote(tmp_path: Path) -> None:
    source = dd.sources.DeltaSource(_table(tmp_path))
    checks = dd.schema_checks(DeltaOrders, asset="orders", source=source)

    result = dg.materialize([orders, checks], resources=_lake(tmp_path), raise_on_error=False)

    assert _counts(result) == EXPECTED


def test_the_io_manager_source_reads_only_the_run_partition(tmp_path: Path) -> None:
    defs = dd.with_schemas(
        dg.Definitions(assets=[daily_orders], resources=_lake(tmp_path)), {"orders": DeltaOrders}
    )
    job = defs.resolve_implicit_global_asset_job_def()
    runs = {
        day: job.execute_in_process(
            instance=dg.DagsterInstance.ephemeral(), partition_key=day, raise_on_error=False
        )
        for day in ("2024-01-01", "2024-01-02", "2024-01-03")
    }

    assert _counts(runs["2024-01-01"]) == {}
    assert _counts(runs["2024-01-02"]) == EXPECTED
    assert _counts(runs["2024-01-03"]) == {}
    assert pl.scan_delta(_table(tmp_path)).select(pl.len()).collect().item() == (
        2 * storefront_orders().height + defective_orders().height
    )


def test_delta_source_reads_only_the_run_partition(tmp_path: Path) -> None:
    source = dd.sources.DeltaSource(_table(tmp_path), partition_expr="day")
    assets = [
        daily_orders,
        dd.schema_checks(DeltaOrders, asset="orders", partitions_def=DAYS, source=source),
    ]
    runs = {
        day: dg.materialize(
            assets, resources=_lake(tmp_path), partition_key=day, raise_on_error=False
        )
        for day in ("2024-01-02", "2024-01-01", "2024-01-03")
    }

    assert _counts(runs["2024-01-01"]) == {}
    assert _counts(runs["2024-01-02"]) == EXPECTED
    assert _counts(runs["2024-01-03"]) == {}


def test_delta_source_reads_only_the_files_of_the_run_partition(tmp_path: Path) -> None:
    source = dd.sources.DeltaSource(_table(tmp_path), partition_expr="day")
    checks = dd.schema_checks(DeltaOrders, asset="orders", partitions_def=DAYS, source=source)
    for day in ("2024-01-01", "2024-01-02"):
        dg.materialize([daily_orders], resources=_lake(tmp_path), partition_key=day)
    # Another day's files gone: a read that did not prune them would fail.
    (other,) = Path(_table(tmp_path)).glob("day=2024-01-01")
    shutil.rmtree(other)

    result = dg.materialize(
        [daily_orders, checks],
        resources=_lake(tmp_path),
        partition_key="2024-01-02",
        raise_on_error=False,
    )

    assert _counts(result) == EXPECTED


def test_delta_source_reads_a_column_mapped_table(tmp_path: Path) -> None:
    # Column mapping (Spark's and Databricks' renames and drops): `pl.scan_delta` refuses it.
    path = str(tmp_path / "mapped")
    write_deltalake(
        path,
        _as_delta(defective_orders()).to_arrow(),
        configuration={
            "delta.columnMapping.mode": "name",
            "delta.minReaderVersion": "2",
            "delta.minWriterVersion": "5",
        },
    )
    checks = dd.schema_checks(DeltaOrders, asset="orders", source=dd.sources.DeltaSource(path))

    result = dg.materialize(
        [dg.AssetSpec("orders"), checks],
        selection=dg.AssetSelection.checks_for_assets("orders"),
        raise_on_error=False,
    )

    assert _counts(result) == EXPECTED


def test_a_missing_data_file_fails_naming_the_asset_and_the_table(tmp_path: Path) -> None:
    dg.materialize([orders], resources=_lake(tmp_path))
    for file in Path(_table(tmp_path)).glob("*.parquet"):
        file.unlink()
    source = dd.sources.DeltaSource(_table(tmp_path))
    checks = dd.schema_checks(DeltaOrders, asset="orders", source=source)

    result = dg.materialize(
        [orders, checks],
        resources=_lake(tmp_path),
        selection=dg.AssetSelection.checks_for_assets("orders"),
        raise_on_error=False,
    )

    (failure,) = result.get_step_failure_events()
    error = failure.step_failure_data.error
    assert error is not None and error.cause is not None
    assert error.cause.cls_name == "SourceReadError"
    assert f"Could not read asset orders from Delta table '{_table(tmp_path)}'" in (
        error.cause.message
    )
