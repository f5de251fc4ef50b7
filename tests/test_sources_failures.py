"""A source that cannot read says which asset, which source and what to fix, in real runs:
a `partition_expr` column the parquet files or the Delta table lack, a function that raises
(when called or when its LazyFrame is collected) or returns something that is not a table."""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest

import dagster_dataframely as dd
from dagster_dataframely.data import OrdersSchema, defective_orders

DAYS = dg.DailyPartitionsDefinition(start_date="2024-01-01", end_date="2024-01-04")


class DeltaOrders(OrdersSchema):
    # Delta has no Enum and stores timestamps in UTC: the schema says what Delta hands back.
    status = dy.String()
    ordered_at = dy.Datetime(time_zone="UTC")


def _check(
    source: Any, *, schema: type[dy.Schema] = OrdersSchema, partition_key: str | None = None
) -> dg.ExecuteInProcessResult:
    """Run the checks that `source` reads for asset `orders`, which a tool other than Dagster
    writes (the asset's own step writes nothing), for `partition_key` of `DAYS` if given."""
    partitions_def = DAYS if partition_key else None

    @dg.asset(name="orders", partitions_def=partitions_def)
    def orders() -> None:
        return None

    checks = dd.schema_checks(schema, asset=orders, source=source)
    return dg.materialize([orders, checks], partition_key=partition_key, raise_on_error=False)


def _errors(result: dg.ExecuteInProcessResult) -> list[tuple[str, str]]:
    """The class and message of the error the step's code raised, then of each of its causes."""
    (failure,) = result.get_step_failure_events()
    error = failure.step_failure_data.error
    assert error is not None
    chain = []
    while error.cause is not None:
        error = error.cause
        chain.append((error.cls_name or "", error.message))
    return chain


# ------------------------------- a partition column missing ------------------------------- #


def _daily() -> pl.DataFrame:
    return defective_orders().with_columns(day=pl.lit("2024-01-02").str.to_date())


def test_parquet_without_the_partition_column_names_the_asset_source_and_column(
    tmp_path: Path,
) -> None:
    _daily().write_parquet(tmp_path / "orders.parquet")
    source = dd.sources.ParquetSource(str(tmp_path / "*.parquet"), partition_expr="order_day")

    ((cls_name, message), *_) = _errors(_check(source, partition_key="2024-01-02"))

    assert cls_name == "SourceReadError"
    assert f"Could not read asset orders from parquet '{tmp_path}/*.parquet'" in message
    assert "partition_expr 'order_day' is not a column of the table" in message
    assert "whose columns are order_id, " in message and ", day. Give the column" in message


def test_delta_without_the_partition_column_names_the_asset_source_and_column(
    tmp_path: Path,
) -> None:
    table = str(tmp_path / "orders_delta")
    _daily().with_columns(
        pl.col("status").cast(pl.String), pl.col("ordered_at").dt.convert_time_zone("UTC")
    ).write_delta(table)
    source = dd.sources.DeltaSource(table, partition_expr="order_day")

    ((cls_name, message), *_) = _errors(
        _check(source, schema=DeltaOrders, partition_key="2024-01-02")
    )

    assert cls_name == "SourceReadError"
    assert f"Could not read asset orders from Delta table '{table}'" in message
    assert "partition_expr 'order_day' is not a column of the table" in message


# ------------------------------------ a function fails ------------------------------------ #


def read_orders_from_the_lake(context: dg.AssetCheckExecutionContext) -> Any:
    raise ValueError("the lake is frozen")


def read_orders_lazily(context: dg.AssetCheckExecutionContext) -> pl.LazyFrame:
    # The dtype stays String, so the column-schema check passes and the rules collect it.
    broken = pl.col("order_id").cast(pl.Int64).cast(pl.String)
    return defective_orders().lazy().with_columns(broken)


@pytest.mark.parametrize(
    ("function", "what", "cause"),
    [
        (read_orders_from_the_lake, "it raised: ValueError: the lake is frozen.", "ValueError"),
        (
            read_orders_lazily,
            "it returned a LazyFrame that failed when collected: InvalidOperationError",
            "InvalidOperationError",
        ),
    ],
    ids=["when called", "when collected"],
)
def test_a_function_that_fails_is_named_with_the_asset_and_keeps_its_cause(
    function: Any, what: str, cause: str
) -> None:
    ((cls_name, message), (cause_name, _), *_) = _errors(_check(function))

    assert cls_name == "SourceReadError"
    assert message.startswith(
        f"dagster_dataframely.errors.SourceReadError: Could not read asset orders from "
        f"function {function.__qualname__} (the checks' source=): {what}"
    )
    assert cause_name == cause


@pytest.mark.parametrize(
    ("returned", "named"),
    [({"order_id": ["A-1"]}, "returned a dict,"), (None, "returned None (no return statement?),")],
    ids=["dict", "None"],
)
def test_a_function_returning_no_table_is_told_what_to_return(returned: Any, named: str) -> None:
    def read_orders(context: dg.AssetCheckExecutionContext) -> Any:
        return returned

    ((cls_name, message), *_) = _errors(_check(read_orders))

    assert cls_name == "UnsupportedFrameError"
    qualname = read_orders.__qualname__
    assert f"function {qualname}, the source= of the checks of asset orders, {named}" in message
    assert "Make it return the table: a polars DataFrame or LazyFrame" in message
    assert "IO manager" not in message


# ------------------------------------ an old DuckDB ------------------------------------ #


@pytest.mark.parametrize("pushdown", [True, False], ids=["pushdown", "streamed"])
def test_a_duckdb_older_than_the_source_reads_with_is_named_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pushdown: bool
) -> None:
    # DuckDB 1.4 fails deep in the read ("This relation does not contain a column by the name
    # of 'to_arrow_reader'"); one environment holds one DuckDB, so its version is what is faked.
    import duckdb
    from dagster_duckdb import DuckDBResource

    database = tmp_path / "shop.duckdb"
    with duckdb.connect(str(database)) as connection:
        frame = defective_orders().to_arrow()  # noqa: F841 (read by DuckDB by name)
        connection.execute("CREATE TABLE orders AS SELECT * FROM frame")
    monkeypatch.setattr(duckdb, "__version__", "1.4.5")

    @dg.asset(name="orders")
    def orders() -> None:
        return None

    checks = dd.schema_checks(
        OrdersSchema, asset=orders, source=dd.sources.DuckDBTableSource(pushdown=pushdown)
    )
    result = dg.materialize(
        [orders, checks],
        resources={"duckdb": DuckDBResource(database=str(database))},
        raise_on_error=False,
    )
    (failure,) = result.get_step_failure_events()
    error = failure.step_failure_data.error
    assert error is not None and error.cause is not None
    assert (error.cause.cls_name, error.cause.message) == (
        "InvalidSourceError",
        "dagster_dataframely.errors.InvalidSourceError: DuckDBTableSource reads with DuckDB "
        ">= 1.5, and this environment has duckdb 1.4.5: upgrade it "
        "(pip install 'duckdb>=1.5,<2').\n",
    )
