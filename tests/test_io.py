"""`dd.ParquetIOManager` through real Dagster runs: what a user storing polars frames relies on."""

import copy
import datetime as dt
import threading
import time
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import dagster as dg
import pandas as pd
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from support import failure_text, materialization
from upath import UPath

from dagster_dataframely.errors import UnsupportedFrameError
from dagster_dataframely.io import ParquetIOManager, _polars_source

# --------------------------------------- helpers --------------------------------------- #


def _materialize(
    assets: list[Any], base_dir: str | Path, **kwargs: Any
) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        assets, resources={"io_manager": ParquetIOManager(base_dir=str(base_dir))}, **kwargs
    )


def _rich_frame() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "id": pl.Series([1, 2, 3], dtype=pl.Int32),
            "status": pl.Series(["open", "paid", "open"], dtype=pl.Enum(["open", "paid"])),
            "at": pl.Series(
                [dt.datetime(2024, 1, 1, 12), dt.datetime(2024, 6, 1), dt.datetime(2025, 1, 1)],
                dtype=pl.Datetime("us", "Europe/Amsterdam"),
            ),
            "amount": pl.Series([Decimal("1.50"), Decimal("20.00"), None], dtype=pl.Decimal(10, 2)),
            "tags": pl.Series([["a"], [], ["b", "c"]], dtype=pl.List(pl.String)),
            "address": pl.Series(
                [{"city": "Utrecht", "zip": 1}, {"city": None, "zip": 2}, None],
                dtype=pl.Struct({"city": pl.String, "zip": pl.Int64}),
            ),
        }
    )


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


# -------------------------------------- round trips ------------------------------------ #


def test_dataframe_round_trip_keeps_every_dtype(tmp_path: Path) -> None:
    received: dict[str, Any] = {}

    @dg.asset(key_prefix=["sales"])
    def orders() -> pl.DataFrame:
        return _rich_frame()

    @dg.asset(ins={"orders": dg.AssetIn(key=["sales", "orders"])})
    def report(orders: pl.DataFrame) -> None:
        received["orders"] = orders

    result = _materialize([orders, report], tmp_path)

    assert result.success
    assert _files(tmp_path) == ["sales/orders.parquet"]
    assert type(received["orders"]) is pl.DataFrame
    assert_frame_equal(received["orders"], _rich_frame())
    assert materialization(result, "sales/orders") == {
        "dagster/row_count": 3,
        "path": str(tmp_path / "sales" / "orders.parquet"),
    }


def test_lazyframe_output_is_streamed_and_loads_as_scan_or_frame(tmp_path: Path) -> None:
    received: dict[str, Any] = {}

    @dg.asset
    def events() -> pl.LazyFrame:
        return pl.LazyFrame({"n": range(10_000)}).with_columns(double=pl.col("n") * 2)

    @dg.asset
    def lazy_reader(events: pl.LazyFrame) -> None:
        received["lazy"] = events

    @dg.asset
    def eager_reader(events: pl.DataFrame) -> None:
        received["eager"] = events

    @dg.asset
    def unannotated_reader(events) -> None:  # type: ignore[no-untyped-def]
        received["unannotated"] = events

    result = _materialize([events, lazy_reader, eager_reader, unannotated_reader], tmp_path)

    assert result.success
    expected = pl.DataFrame({"n": range(10_000)}).with_columns(double=pl.col("n") * 2)
    assert_frame_equal(pl.read_parquet(tmp_path / "events.parquet"), expected)
    assert isinstance(received["lazy"], pl.LazyFrame)
    assert_frame_equal(received["lazy"].collect(), expected)
    assert type(received["eager"]) is pl.DataFrame
    assert_frame_equal(received["eager"], expected)
    assert type(received["unannotated"]) is pl.DataFrame
    assert materialization(result, "events")["dagster/row_count"] == 10_000


def test_optional_lazyframe_annotation_gets_a_scan(tmp_path: Path) -> None:
    received: dict[str, Any] = {}

    @dg.asset
    def events() -> pl.DataFrame:
        return pl.DataFrame({"n": [1, 2]})

    @dg.asset
    def reader(events: pl.LazyFrame | None) -> None:
        received["events"] = events

    assert _materialize([events, reader], tmp_path).success
    assert isinstance(received["events"], pl.LazyFrame)


def test_none_output_writes_nothing(tmp_path: Path) -> None:
    @dg.asset
    def nothing_today():  # type: ignore[no-untyped-def]
        return None

    result = _materialize([nothing_today], tmp_path)

    assert result.success
    assert _files(tmp_path) == []


# -------------------------------------- partitions ------------------------------------- #


def test_partitioned_asset_writes_one_file_per_partition_and_loads_a_range(
    tmp_path: Path,
) -> None:
    regions = dg.StaticPartitionsDefinition(["eu", "us"])
    received: dict[str, Any] = {}

    @dg.asset(partitions_def=regions)
    def sales(context: dg.AssetExecutionContext) -> pl.LazyFrame:
        return pl.LazyFrame({"region": [context.partition_key] * 2, "n": [1, 2]})

    @dg.asset(ins={"sales": dg.AssetIn()})
    def lazy_total(sales: pl.LazyFrame) -> None:
        received["lazy"] = sales

    @dg.asset(ins={"sales": dg.AssetIn()})
    def eager_total(sales: pl.DataFrame) -> None:
        received["eager"] = sales

    for region in ["eu", "us"]:
        assert _materialize([sales], tmp_path, partition_key=region).success
    assert _files(tmp_path) == ["sales/eu.parquet", "sales/us.parquet"]

    result = _materialize(
        [sales, lazy_total, eager_total], tmp_path, selection=[lazy_total, eager_total]
    )

    assert result.success
    expected = pl.DataFrame({"region": ["eu", "eu", "us", "us"], "n": [1, 2, 1, 2]})
    assert isinstance(received["lazy"], pl.LazyFrame)
    assert_frame_equal(received["lazy"].collect(), expected, check_row_order=False)
    assert type(received["eager"]) is pl.DataFrame
    assert_frame_equal(received["eager"], expected, check_row_order=False)


def test_downstream_window_loads_two_daily_partitions(tmp_path: Path) -> None:
    daily = dg.DailyPartitionsDefinition(start_date="2024-01-01", end_date="2024-01-04")
    received: dict[str, Any] = {}

    @dg.asset(partitions_def=daily)
    def visits(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return pl.DataFrame({"day": [context.partition_key]})

    @dg.asset(
        partitions_def=daily,
        ins={
            "visits": dg.AssetIn(partition_mapping=dg.TimeWindowPartitionMapping(start_offset=-1))
        },
    )
    def two_days(visits: pl.LazyFrame) -> None:
        received["visits"] = visits

    for day in ["2024-01-01", "2024-01-02"]:
        assert _materialize([visits], tmp_path, partition_key=day).success
    result = _materialize(
        [visits, two_days], tmp_path, selection=[two_days], partition_key="2024-01-02"
    )

    assert result.success
    days = received["visits"].collect()["day"].sort().to_list()
    assert days == ["2024-01-01", "2024-01-02"]


def test_multi_partition_keys_become_one_directory_level_per_dimension(
    tmp_path: Path,
) -> None:
    parts = dg.MultiPartitionsDefinition(
        {
            "region": dg.StaticPartitionsDefinition(["eu", "us"]),
            "date": dg.DailyPartitionsDefinition(start_date="2024-01-01"),
        }
    )
    received: dict[str, Any] = {}

    @dg.asset(partitions_def=parts)
    def sales() -> pl.DataFrame:
        return pl.DataFrame({"n": [7]})

    @dg.asset(partitions_def=parts)
    def copy_of_sales(sales: pl.LazyFrame) -> None:
        received["sales"] = sales

    key = dg.MultiPartitionKey({"region": "eu", "date": "2024-01-02"})
    result = _materialize([sales, copy_of_sales], tmp_path, partition_key=key)

    assert result.success
    assert _files(tmp_path) == ["sales/date=2024-01-02/region=eu.parquet"]
    assert received["sales"].collect()["n"].to_list() == [7]


def test_partition_keys_are_encoded_as_portable_file_names(tmp_path: Path) -> None:
    manager = ParquetIOManager(base_dir=str(tmp_path))
    key = dg.AssetKey(["raw", "clicks"])

    assert manager.path_for(key, "2024-01-01-00:00").name == "2024-01-01-00~3A00.parquet"
    assert manager.path_for(key, "a/b|c").name == "a~2Fb~7Cc.parquet"
    assert manager.path_for(key, "..").name == "~2E..parquet"
    assert manager.path_for(key, "café~").name == "caf~C3~A9~7E.parquet"
    assert manager.path_for(key, "plain_key-1.0").name == "plain_key-1.0.parquet"
    multi = dg.MultiPartitionKey({"region": "n/a", "date": "2024-01-01"})
    assert str(manager.path_for(key, multi).relative_to(tmp_path)) == (
        "raw/clicks/date=2024-01-01/region=n~2Fa.parquet"
    )


def test_output_covering_several_partitions_is_refused(tmp_path: Path) -> None:
    manager = ParquetIOManager(base_dir=str(tmp_path))
    context = dg.build_output_context(
        asset_key=dg.AssetKey("sales"),
        asset_partitions_def=dg.StaticPartitionsDefinition(["eu", "us"]),
        asset_partition_key_range=dg.PartitionKeyRange("eu", "us"),
    )

    with pytest.raises(ValueError, match="covers 2 partitions"):
        manager.handle_output(context, pl.DataFrame({"n": [1]}))
    assert _files(tmp_path) == []


# ------------------------------------ atomic writes ------------------------------------ #


def _strict_cast_fails() -> pl.LazyFrame:
    return pl.LazyFrame({"a": ["1", "2", "x"]}).select(pl.col("a").cast(pl.Int64, strict=True))


def _udf_fails_midway() -> pl.LazyFrame:
    def explode_on_late_rows(batch: pl.Series) -> pl.Series:
        if batch.max() >= 150_000:  # type: ignore[operator]
            raise RuntimeError("upstream service went away")
        return batch

    return pl.LazyFrame({"a": range(200_000)}).select(
        pl.col("a").map_batches(explode_on_late_rows, return_dtype=pl.Int64)
    )


@pytest.mark.parametrize("failing_plan", [_strict_cast_fails, _udf_fails_midway])
def test_failing_lazy_plan_keeps_the_previous_file_and_leaves_no_temp_file(
    tmp_path: Path, failing_plan: Any
) -> None:
    fail = {"now": False}

    @dg.asset
    def ledger() -> pl.LazyFrame:
        return failing_plan() if fail["now"] else pl.LazyFrame({"a": [1, 2, 3]})

    assert _materialize([ledger], tmp_path).success
    good = (tmp_path / "ledger.parquet").read_bytes()

    fail["now"] = True
    result = _materialize([ledger], tmp_path, raise_on_error=False)

    assert not result.success
    assert _files(tmp_path) == ["ledger.parquet"]
    assert (tmp_path / "ledger.parquet").read_bytes() == good


def test_failing_first_write_leaves_no_file_at_all(tmp_path: Path) -> None:
    @dg.asset
    def ledger() -> pl.LazyFrame:
        return _strict_cast_fails()

    result = _materialize([ledger], tmp_path, raise_on_error=False)

    assert not result.success
    assert _files(tmp_path) == []


def test_many_failing_writes_never_leave_a_late_temp_file(tmp_path: Path) -> None:
    """polars can create a sink's file after the sink has raised; none may be left behind."""
    manager = ParquetIOManager(base_dir=str(tmp_path))
    context = dg.build_output_context(asset_key=dg.AssetKey("ledger"))
    manager.handle_output(context, pl.DataFrame({"a": [1]}))

    for _ in range(300):
        with pytest.raises(pl.exceptions.InvalidOperationError):
            manager.handle_output(context, _strict_cast_fails())
    time.sleep(0.2)  # a late file would have appeared by now

    assert _files(tmp_path) == ["ledger.parquet"]
    assert_frame_equal(pl.read_parquet(tmp_path / "ledger.parquet"), pl.DataFrame({"a": [1]}))


# ---------------------------------- readers during a rewrite ---------------------------------- #


def _version(k: int) -> pl.DataFrame:
    """Version `k` of a table: each has its own row count, values and schema."""
    rows = 20_000 + 5_000 * k
    frame = pl.DataFrame({"n": range(k, k + rows), "s": [f"row {i}" for i in range(rows)]})
    frame = frame.with_columns(pl.col("n").cast([pl.Int64, pl.Int32, pl.Float64][k]))
    return frame.with_columns(flag=pl.lit(True)) if k == 1 else frame


def test_loads_racing_rewrites_get_the_old_or_the_new_table_whole(tmp_path: Path) -> None:
    """A step loading an asset while another run rematerializes it gets one whole version.

    Two writer threads rewrite the table through the IO manager while this thread loads it,
    eagerly and lazily; a lazy load reads its schema first and collects a little later, as
    a check does, so a rewrite often lands in between. Bounded: 3 seconds and 100 loads at
    least, 30 seconds at most (on main, 3 failures came within 2 seconds).
    """
    manager = ParquetIOManager(base_dir=str(tmp_path))
    key = dg.AssetKey(["sales", "ledger"])
    versions = [_version(k) for k in range(3)]
    manager.handle_output(dg.build_output_context(asset_key=key), versions[0])
    eager = dg.build_input_context(asset_key=key)
    lazy = dg.build_input_context(
        asset_key=key, dagster_type=dg.PythonObjectDagsterType(pl.LazyFrame)
    )
    stop = threading.Event()

    def rewrite(first: int) -> None:
        k = first
        while not stop.is_set():
            k += 1
            manager.handle_output(dg.build_output_context(asset_key=key), versions[k % 3])

    writers = [threading.Thread(target=rewrite, args=(first,)) for first in (0, 1)]
    failures: list[str] = []
    loads = 0
    start = time.monotonic()
    for writer in writers:
        writer.start()
    try:
        while len(failures) < 3 and (elapsed := time.monotonic() - start) < 30:
            if elapsed > 3 and loads >= 100:
                break
            loads += 1
            try:
                if loads % 2:
                    loaded = manager.load_input(eager)
                else:
                    scan = manager.load_input(lazy)
                    schema = scan.collect_schema()
                    time.sleep(0.005)
                    loaded = scan.collect()
                    assert loaded.schema == schema, f"schema {schema}, rows {loaded.schema}"
                assert any(loaded.equals(version) for version in versions), loaded.shape
            except BaseException as error:  # a polars panic is a BaseException
                if not isinstance(error, Exception | pl.exceptions.PanicException):
                    raise
                failures.append(f"{type(error).__name__}: {str(error)[:200]}")
    finally:
        stop.set()
        for writer in writers:
            writer.join()

    assert failures == [], f"{len(failures)} failed loads of {loads}"


# ---------------------------------------- errors --------------------------------------- #


def test_missing_upstream_file_names_asset_path_and_fix(tmp_path: Path) -> None:
    @dg.asset(key_prefix=["sales"])
    def orders() -> pl.DataFrame:
        return pl.DataFrame({"n": [1]})

    @dg.asset(ins={"orders": dg.AssetIn(key=["sales", "orders"])})
    def report(orders: pl.LazyFrame) -> None:
        pass

    result = _materialize([orders, report], tmp_path, selection=[report], raise_on_error=False)

    assert not result.success
    text = failure_text(result)
    assert "FileNotFoundError" in text
    assert "sales/orders" in text
    assert str(tmp_path / "sales" / "orders.parquet") in text
    assert "Materialize sales/orders first" in text


def test_missing_partition_names_the_partition(tmp_path: Path) -> None:
    manager = ParquetIOManager(base_dir=str(tmp_path))
    context = dg.build_input_context(
        asset_key=dg.AssetKey("sales"),
        partition_key="eu",
        asset_partitions_def=dg.StaticPartitionsDefinition(["eu", "us"]),
    )

    with pytest.raises(FileNotFoundError, match=r"sales \(partition eu\).*eu\.parquet"):
        manager.load_input(context)


@pytest.mark.parametrize(
    ("value", "type_name"),
    [
        (pd.DataFrame({"n": [1]}), "pandas.DataFrame"),
        ({"n": [1]}, "dict"),
    ],
)
def test_unsupported_output_type_is_a_type_error_naming_both_types(
    tmp_path: Path, value: Any, type_name: str
) -> None:
    @dg.asset
    def legacy():  # type: ignore[no-untyped-def]
        return value

    result = _materialize([legacy], tmp_path, raise_on_error=False)

    assert not result.success
    text = failure_text(result)
    assert "UnsupportedFrameError" in text
    assert f"type {type_name}" in text
    assert "pl.DataFrame and pl.LazyFrame" in text
    assert _files(tmp_path) == []
    assert issubclass(UnsupportedFrameError, TypeError)


# ------------------------------- contexts built by hand -------------------------------- #


def test_path_derives_only_from_asset_key_and_partition(tmp_path: Path) -> None:
    """The quarantine writer reuses the step's context with only the asset key changed."""
    manager = ParquetIOManager(base_dir=str(tmp_path))
    context = dg.build_output_context(
        asset_key=dg.AssetKey(["sales", "orders_quarantine"]), partition_key="2024-01-02"
    )

    manager.handle_output(context, pl.LazyFrame({"n": [1, 2]}))

    assert _files(tmp_path) == ["sales/orders_quarantine/2024-01-02.parquet"]
    assert context.get_logged_metadata()["dagster/row_count"].value == 2


def test_copied_step_context_with_a_new_asset_key_writes_beside_the_asset(
    tmp_path: Path,
) -> None:
    """As the quarantine writer does: a copy of the real step context, asset key renamed.

    The copy is taken before the table is written (the quarantine goes first): a copy taken
    later would carry the table's `path` metadata, and logging it again is an error in Dagster.
    """
    inner = ParquetIOManager(base_dir=str(tmp_path))
    logged: dict[str, Any] = {}

    class QuarantineFirst(dg.ConfigurableIOManager):
        def handle_output(self, context: dg.OutputContext, obj: pl.DataFrame) -> None:
            quarantine = copy.copy(context)
            *prefix, name = context.asset_key.path
            quarantine._asset_key = dg.AssetKey([*prefix, f"{name}_quarantine"])
            inner.handle_output(quarantine, obj.head(1))
            logged.update(quarantine.get_logged_metadata())
            inner.handle_output(context, obj)

        def load_input(self, context: dg.InputContext) -> Any:
            return inner.load_input(context)

    @dg.asset(key_prefix=["sales"], partitions_def=dg.StaticPartitionsDefinition(["eu"]))
    def orders() -> pl.DataFrame:
        return pl.DataFrame({"n": [1, 2]})

    result = dg.materialize(
        [orders], resources={"io_manager": QuarantineFirst()}, partition_key="eu"
    )

    assert result.success
    assert _files(tmp_path) == ["sales/orders/eu.parquet", "sales/orders_quarantine/eu.parquet"]
    assert pl.read_parquet(tmp_path / "sales/orders_quarantine/eu.parquet").height == 1
    assert logged["path"].value == str(tmp_path / "sales/orders_quarantine/eu.parquet")
    assert materialization(result, "sales/orders") == {
        "dagster/row_count": 2,
        "path": str(tmp_path / "sales/orders/eu.parquet"),
    }


# ------------------------------------- fsspec URLs ------------------------------------- #


def test_file_url_base_dir(tmp_path: Path) -> None:
    received: dict[str, Any] = {}

    @dg.asset
    def events() -> pl.LazyFrame:
        return pl.LazyFrame({"n": [1, 2, 3]})

    @dg.asset
    def reader(events: pl.LazyFrame) -> None:
        received["events"] = events

    result = _materialize([events, reader], tmp_path.as_uri())

    assert result.success
    assert _files(tmp_path) == ["events.parquet"]
    assert received["events"].collect()["n"].to_list() == [1, 2, 3]
    assert materialization(result, "events")["path"] == (tmp_path / "events.parquet").as_uri()


def test_memory_url_base_dir_round_trips_without_a_local_path() -> None:
    base = f"memory://dagster-dataframely-tests/{uuid.uuid4().hex}"
    regions = dg.StaticPartitionsDefinition(["eu", "us"])
    received: dict[str, Any] = {}

    @dg.asset
    def orders() -> pl.DataFrame:
        return _rich_frame()

    @dg.asset(partitions_def=regions)
    def events(context: dg.AssetExecutionContext) -> pl.LazyFrame:
        return pl.LazyFrame({"region": [context.partition_key]})

    @dg.asset(ins={"events": dg.AssetIn()})
    def reader(orders: pl.DataFrame, events: pl.LazyFrame) -> None:
        received.update(orders=orders, events=events)

    for region in ["eu", "us"]:
        assert _materialize([events], base, partition_key=region).success
    result = _materialize([orders, events, reader], base, selection=[orders, reader])

    assert result.success
    root = UPath(base)
    stored = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    assert stored == ["events/eu.parquet", "events/us.parquet", "orders.parquet"]
    assert_frame_equal(received["orders"], _rich_frame())
    assert isinstance(received["events"], pl.LazyFrame)
    assert sorted(received["events"].collect()["region"]) == ["eu", "us"]
    assert materialization(result, "orders")["path"] == f"{base}/orders.parquet"


def test_memory_url_failed_write_keeps_previous_object_and_no_temp() -> None:
    base = f"memory://dagster-dataframely-tests/{uuid.uuid4().hex}"
    manager = ParquetIOManager(base_dir=base)
    context = dg.build_output_context(asset_key=dg.AssetKey("ledger"))
    manager.handle_output(context, pl.DataFrame({"a": [1]}))
    good = UPath(base, "ledger.parquet").read_bytes()

    with pytest.raises(pl.exceptions.InvalidOperationError):
        manager.handle_output(context, _strict_cast_fails())

    assert [p.name for p in UPath(base).iterdir()] == ["ledger.parquet"]
    assert UPath(base, "ledger.parquet").read_bytes() == good


def test_cloud_urls_are_handed_to_polars_with_their_storage_options() -> None:
    """polars opens cloud URLs itself, so their scans stream."""
    source, options = _polars_source(UPath("s3://bucket/warehouse/orders.parquet"))
    assert (source, options) == ("s3://bucket/warehouse/orders.parquet", None)

    azure = UPath("abfs://lake@account.dfs.core.windows.net/warehouse/orders.parquet")
    source, options = _polars_source(azure)
    assert (source, options) == (
        "abfs://lake/warehouse/orders.parquet",
        {"account_name": "account"},
    )
