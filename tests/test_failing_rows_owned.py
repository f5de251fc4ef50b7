"""Kept failing rows in the user's warehouse, on a real DuckDB file and the real PostgreSQL
server: a table of the kept name that the package did not create is refused and left as it
was; assets whose rows meet in one audit schema never delete each other's; a run over a range
of partitions keeps each row under its own partition and replaces every partition it covers."""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import duckdb
import polars as pl
import pytest
from dagster_duckdb import DuckDBResource
from postgres import PostgresResource
from support import evaluations

import dagster_dataframely as dd

DAYS = dg.DailyPartitionsDefinition(start_date="2024-01-01", end_date="2024-01-04")


class Orders(dy.Schema):
    order_id = dy.Int64(primary_key=True)
    amount = dy.Float64(min=0)
    day = dy.Date()


@dataclass(frozen=True)
class Warehouse:
    """One database the tests keep rows in, and how to reach it from a run and from a test."""

    resources: dict[str, Any]
    source: Any  # (**settings) -> a database source reading through `resources`
    run: Any  # (sql) -> rows, as a list of tuples (statements return [])
    columns: Any  # (table) -> its column names, in order

    def orders(self, table: str, rows: list[tuple[int, float, str]]) -> None:
        """`rows` as the table `table` (its schema created)."""
        self.run(f"CREATE SCHEMA IF NOT EXISTS {table.rsplit('.', 1)[0]}")
        self.run(f"CREATE TABLE {table} (order_id BIGINT, amount DOUBLE PRECISION, day DATE)")
        values = ", ".join(f"({i}, {a}, DATE '{d}')" for i, a, d in rows)
        self.run(f"INSERT INTO {table} VALUES {values}")


def _duckdb(path: Path) -> Warehouse:
    def run(sql: str) -> list[tuple[Any, ...]]:
        with duckdb.connect(str(path)) as connection:
            cursor = connection.execute(sql)
            return cursor.fetchall() if sql.startswith("SELECT") else []

    def columns(table: str) -> list[str]:
        with duckdb.connect(str(path)) as connection:
            return list(connection.sql(f"SELECT * FROM {table} LIMIT 0").columns)

    return Warehouse(
        {"warehouse": DuckDBResource(database=str(path))},
        lambda **settings: dd.sources.DuckDBTableSource(resource_key="warehouse", **settings),
        run,
        columns,
    )


def _postgres(server: Any) -> Warehouse:
    def run(sql: str) -> list[tuple[Any, ...]]:
        with server.connect() as connection:
            cursor = connection.execute(sql)
            return cursor.fetchall() if sql.startswith("SELECT") else []

    def columns(table: str) -> list[str]:
        with server.connect() as connection:
            cursor = connection.execute(f"SELECT * FROM {table} LIMIT 0")
            return [column.name for column in cursor.description or []]

    return Warehouse(
        {"warehouse": PostgresResource(conninfo=server.conninfo)},
        lambda **settings: dd.sources.SQLTableSource(
            resource_key="warehouse", dialect="postgres", **settings
        ),
        run,
        columns,
    )


@pytest.fixture(params=["duckdb", "postgres"])
def warehouse(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Warehouse]:
    if request.param == "duckdb":
        yield _duckdb(tmp_path / "shop.duckdb")
    else:
        yield _postgres(request.getfixturevalue("postgres"))


@pytest.fixture
def schema() -> str:
    """A schema name no other test uses (the PostgreSQL server is shared)."""
    return f"s{uuid.uuid4().hex[:8]}"


def _checks(
    warehouse: Warehouse, asset: str, table: str, **settings: Any
) -> dg.ExecuteInProcessResult:
    """Run only the checks of `asset`, whose table is `table`, keeping failing rows."""
    spec = dg.AssetSpec(asset, metadata={"dagster/table_name": table})
    checks = dd.schema_checks(
        Orders,
        asset=spec,
        source=warehouse.source(),
        keep_failing_rows=settings.pop("keep_failing_rows", True),
    )
    return dg.materialize(
        [spec, checks],
        resources=warehouse.resources,
        selection=dg.AssetSelection.all_asset_checks(),
        raise_on_error=False,
        **settings,
    )


def _count(warehouse: Warehouse, query: str) -> int:
    ((n,),) = warehouse.run(f"SELECT count(*) FROM ({query}) AS q")
    return int(n)


def test_a_table_the_package_did_not_create_is_refused_and_left_as_it_was(
    warehouse: Warehouse, schema: str
) -> None:
    warehouse.orders(f"{schema}.orders", [(1, -1.0, "2024-01-01"), (2, 5.0, "2024-01-01")])
    mine = f"{schema}.orders__dy_failures"
    warehouse.run(f"CREATE TABLE {mine} (note TEXT, n INTEGER)")
    warehouse.run(f"INSERT INTO {mine} VALUES ('mine', 1)")

    result = _checks(warehouse, "orders", f"{schema}.orders")

    assert warehouse.columns(mine) == ["note", "n"]
    assert warehouse.run(f"SELECT * FROM {mine}") == [("mine", 1)]
    check = evaluations(result)["dy_rule__amount__min"]
    assert check.metadata["dy_failed_count"].value == 1  # the verdict all the same
    error = check.metadata["dy_failing_rows_error"].value
    assert f'"{schema}"."orders__dy_failures"' in error
    assert "not created by dagster-dataframely" in error and "keep_failing_rows=" in error
    assert "drop" not in error.lower()


def test_a_table_kept_by_the_previous_release_is_recognised_and_marked(
    warehouse: Warehouse, schema: str
) -> None:
    warehouse.orders(f"{schema}.orders", [(1, -1.0, "2024-01-01"), (2, 5.0, "2024-01-01")])
    kept = f"{schema}.orders__dy_failures"
    warehouse.run(  # the layout the previous release wrote: no dy_asset_key
        f"CREATE TABLE {kept} (order_id BIGINT, amount DOUBLE PRECISION, day DATE, "
        "dy_rule__primary_key BOOLEAN, dy_rule__amount__min BOOLEAN, dy_run_id TEXT, "
        "dy_partition_key TEXT)"
    )
    warehouse.run(f"INSERT INTO {kept} VALUES (7, -7.0, DATE '2024-01-01', false, true, 'r', NULL)")

    result = _checks(warehouse, "orders", f"{schema}.orders")

    assert "dy_failing_rows_error" not in evaluations(result)["dy_rule__amount__min"].metadata
    assert "dy_asset_key" in warehouse.columns(kept)
    assert warehouse.run(f"SELECT order_id, dy_asset_key FROM {kept}") == [(1, "orders")]


def test_assets_sharing_an_audit_schema_keep_each_others_rows(
    warehouse: Warehouse, schema: str
) -> None:
    warehouse.orders(f"{schema}_a.orders", [(1, -1.0, "2024-01-01"), (2, 5.0, "2024-01-01")])
    warehouse.orders(f"{schema}_b.orders", [(i, -1.0, "2024-01-01") for i in (1, 2, 3)])
    warehouse.run(f"CREATE SCHEMA {schema}_audit")

    queries = {}
    for name, kept in (("a", 1), ("b", 3)):
        result = _checks(
            warehouse,
            f"{name}_orders",
            f"{schema}_{name}.orders",
            keep_failing_rows=f"{schema}_audit",
        )
        metadata = evaluations(result)["dy_rule__amount__min"].metadata
        assert metadata["dy_failing_rows_kept"].value == kept
        queries[name] = metadata["dy_failing_rows"].value

    assert {name: _count(warehouse, query) for name, query in queries.items()} == {"a": 1, "b": 3}


def test_assets_whose_kept_tables_share_a_name_keep_each_others_rows(
    warehouse: Warehouse, schema: str
) -> None:
    # `x__y.orders` and `x.y__orders` both keep in `audit.x__y__orders__dy_failures`
    warehouse.orders(f"{schema}__y.orders", [(1, -1.0, "2024-01-01")])
    warehouse.orders(f"{schema}.y__orders", [(i, -1.0, "2024-01-01") for i in (1, 2, 3)])
    warehouse.run(f"CREATE SCHEMA {schema}_audit")

    for asset, table in (("one", f"{schema}__y.orders"), ("two", f"{schema}.y__orders")):
        _checks(warehouse, asset, table, keep_failing_rows=f"{schema}_audit")

    kept = f"{schema}_audit.{schema}__y__orders__dy_failures"
    counts = warehouse.run(f"SELECT dy_asset_key, count(*) FROM {kept} GROUP BY 1 ORDER BY 1")
    assert counts == [("one", 1), ("two", 3)]


def _daily_checks(
    asset: dg.AssetsDefinition, source: Any, resources: dict[str, Any], **keys: Any
) -> dg.ExecuteInProcessResult:
    """Materialize a partition, or a range of them, of the daily `asset` with its checks."""
    checks = dd.schema_checks(
        Orders, asset=asset, partitions_def=DAYS, source=source, keep_failing_rows=True
    )
    return dg.materialize([asset, checks], resources=resources, raise_on_error=False, **keys)


@dg.asset(name="orders", partitions_def=DAYS)
def _orders() -> None:
    """Loaded by another tool; the run only marks the partitions."""


def _range(start: str, end: str) -> dict[str, Any]:
    return {
        "tags": {
            "dagster/asset_partition_range_start": start,
            "dagster/asset_partition_range_end": end,
        }
    }


def test_a_range_run_keeps_each_row_under_its_own_partition(
    warehouse: Warehouse, schema: str
) -> None:
    days = [(1, -1.0, "2024-01-01"), (2, 5.0, "2024-01-01")]
    days += [(3, -2.0, "2024-01-02"), (4, -3.0, "2024-01-02"), (5, -1.0, "2024-01-03")]
    warehouse.orders(f"{schema}.orders", days)
    kept = f"{schema}.orders__dy_failures"
    asset = _orders.with_attributes(
        metadata_by_key={_orders.key: {"dagster/table_name": f"{schema}.orders"}}
    )
    source = warehouse.source(partition_expr="day")
    for day in ("2024-01-01", "2024-01-02", "2024-01-03"):
        _daily_checks(asset, source, warehouse.resources, partition_key=day)

    result = _daily_checks(asset, source, warehouse.resources, **_range("2024-01-01", "2024-01-02"))

    counts = warehouse.run(
        f"SELECT dy_partition_key, dy_run_id = '{result.run_id}', count(*) FROM {kept} "
        "GROUP BY 1, 2 ORDER BY 1"
    )
    assert counts == [("2024-01-01", True, 1), ("2024-01-02", True, 2), ("2024-01-03", False, 1)]
    metadata = evaluations(result)["dy_rule__amount__min"].metadata
    assert metadata["dy_failing_rows_kept"].value == 3
    assert _count(warehouse, metadata["dy_failing_rows"].value) == 3


def test_a_range_run_over_parquet_writes_one_file_per_partition(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    lake.mkdir()
    pl.DataFrame(
        {
            "order_id": [1, 2, 3, 4],
            "amount": [-1.0, 5.0, -2.0, -3.0],
            "day": pl.Series(
                ["2024-01-01", "2024-01-01", "2024-01-02", "2024-01-02"]
            ).str.to_date(),
        }
    ).write_parquet(lake / "orders.parquet")
    source = dd.sources.ParquetSource(str(lake / "*.parquet"), partition_expr="day")
    _daily_checks(_orders, source, {}, partition_key="2024-01-01")

    result = _daily_checks(_orders, source, {}, **_range("2024-01-01", "2024-01-02"))

    kept = tmp_path / "lake__dy_failures"
    assert sorted(p.name for p in kept.iterdir()) == ["2024-01-01.parquet", "2024-01-02.parquet"]
    rows = pl.read_parquet(kept / "*.parquet")
    assert dict(rows.group_by("dy_partition_key").len().iter_rows()) == {
        "2024-01-01": 1,
        "2024-01-02": 2,
    }
    query = evaluations(result)["dy_rule__amount__min"].metadata["dy_failing_rows"].value
    assert eval(query, {"pl": pl}).collect().height == 3  # the query, run as written


@pytest.mark.parametrize("zone", [None, "UTC"])
def test_each_rows_key_is_the_partition_whose_own_selection_holds_it(zone: str | None) -> None:
    from sqlglot import exp

    from dagster_dataframely.sources._partitions import Partition

    hours = dg.HourlyPartitionsDefinition(start_date="2024-03-30-20:00", timezone="Europe/Berlin")
    keys = tuple(
        hours.get_partition_keys_in_range(
            dg.PartitionKeyRange("2024-03-31-00:00", "2024-03-31-13:00")
        )
    )
    windows = [hours.time_window_for_partition_key(key) for key in keys]
    start, end = windows[0].start, windows[-1].end
    dtype = pl.Datetime("us", zone)
    ts = pl.datetime_range(start, end, "7m", eager=True, closed="left")
    frame = pl.DataFrame(
        {"ts": ts.dt.convert_time_zone(zone) if zone else ts.dt.replace_time_zone(None)}
    )
    whole = Partition(keys, (start, end), tuple(w.start for w in windows))
    column = exp.column("ts", quoted=True)

    def own(key: str, window: Any) -> Partition:
        return Partition((key,), (window.start, window.end))

    expected = pl.concat(
        frame.filter(own(k, w).polars("ts", dtype)).with_columns(key=pl.lit(k))
        for k, w in zip(keys, windows, strict=True)
    ).sort("ts")
    in_polars = frame.with_columns(key=whole.key_polars("ts", dtype)).sort("ts")
    with duckdb.connect() as connection:
        connection.register("frame", frame.to_arrow())
        connection.execute("SET TimeZone = 'America/New_York'")
        by_key = [
            (
                k,
                exp.select("ts")
                .from_("frame")
                .where(own(k, w).select(column, dtype, "duckdb"))
                .sql("duckdb"),
            )
            for k, w in zip(keys, windows, strict=True)
        ]
        selected = sorted((t, k) for k, q in by_key for (t,) in connection.sql(q).fetchall())
        key = whole.key_sql(column, dtype, "duckdb")
        assert key is not None
        found = sorted(
            connection.sql(
                exp.select("ts", exp.alias_(key, "key")).from_("frame").sql("duckdb")
            ).fetchall()
        )

    assert len(keys) == 13 and expected.height == frame.height  # 00:00 to 13:00, no 02:00 (DST)
    assert in_polars["key"].to_list() == expected["key"].to_list()
    assert found == selected and len(found) == frame.height


def test_a_range_whose_rows_cannot_be_told_apart_keeps_none_and_says_why(tmp_path: Path) -> None:
    warehouse = _duckdb(tmp_path / "shop.duckdb")
    warehouse.orders("sales.orders", [(1, -1.0, "2024-01-01"), (2, -2.0, "2024-01-02")])
    asset = _orders.with_attributes(
        metadata_by_key={_orders.key: {"dagster/table_name": "sales.orders"}}
    )
    # read into polars, where a SQL expression cannot be evaluated
    source = warehouse.source(partition_expr="CAST(day AS DATE)", pushdown=False)

    result = _daily_checks(asset, source, warehouse.resources, **_range("2024-01-01", "2024-01-02"))

    check = evaluations(result)["dy_rule__amount__min"]
    assert check.metadata["dy_failed_count"].value == 2
    error = check.metadata["dy_failing_rows_error"].value
    assert "checked 2 partitions (2024-01-01 to 2024-01-02)" in error
    assert "give partition_expr as a column" in error and "one partition per run" in error
    assert "dy_failing_rows_kept" not in check.metadata
