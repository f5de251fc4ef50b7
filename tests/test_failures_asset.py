"""`dd.failures_asset`: the failing rows `dd.schema_checks` or `dd.collection_checks` keep,
declared in the graph downstream of the checked asset; its Columns tab names exactly the
columns a real run writes."""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
from pathlib import Path

import dagster as dg
import duckdb
import pytest
from dagster_duckdb import DuckDBResource
from shop import MEMBERS, Shop, shop_frames
from test_collection_pushdown import EVERYTHING, _duckdb_file
from test_failing_rows_collections import in_duckdb
from test_sources import DAYS

import dagster_dataframely as dd
from dagster_dataframely.errors import CollectionMemberError

COLUMN_SCHEMA = "dagster/column_schema"


def _columns(spec: dg.AssetSpec) -> list[str]:
    return [column.name for column in spec.metadata[COLUMN_SCHEMA].columns]


def _table_columns(database: Path, table: str) -> list[str]:
    with duckdb.connect(str(database), read_only=True) as connection:
        return [row[0] for row in connection.sql(f'describe "{table}"').fetchall()]


def _specs(defs: dg.Definitions) -> dict[dg.AssetKey, dg.AssetSpec]:
    return {spec.key: spec for spec in defs.resolve_all_asset_specs()}


def test_schema_checks_rows_are_an_asset_whose_columns_the_run_writes(tmp_path: Path) -> None:
    database = _duckdb_file(tmp_path / "shop.duckdb", shop_frames(), MEMBERS)
    orders = dg.AssetSpec("orders", metadata={"dagster/table_name": "orders"})
    schema = Shop.member_schemas()["orders"]
    checks = dd.schema_checks(
        schema, asset=orders, source=dd.sources.DuckDBTableSource(), keep_failing_rows=True
    )
    defs = dg.Definitions(
        assets=[orders, dd.failures_asset(schema, asset=orders)],
        asset_checks=[checks],
        resources={"duckdb": DuckDBResource(database=str(database))},
    )

    failures = _specs(defs)[dg.AssetKey("orders__dy_failures")]
    dg.materialize(
        [orders, checks], resources=defs.resources, selection=EVERYTHING, raise_on_error=False
    )

    assert [dep.asset_key for dep in failures.deps] == [dg.AssetKey("orders")]
    assert _columns(failures) == _table_columns(database, "orders__dy_failures")
    assert "dy_rule__amount__min" in _columns(failures)


def test_a_collection_members_rows_have_a_column_per_filter(tmp_path: Path) -> None:
    database = _duckdb_file(tmp_path / "shop.duckdb", shop_frames(), MEMBERS)
    failures = {
        member: dd.failures_asset(Shop, asset=asset, member=member)
        for member, asset in MEMBERS.items()
    }

    checks, _ = in_duckdb(Shop, MEMBERS, database)

    defs = dg.Definitions(
        assets=[*(dg.AssetSpec(key) for key in MEMBERS.values()), *failures.values()],
        asset_checks=[checks],
        resources={"duckdb": DuckDBResource(database=str(database))},
    )
    assert set(_specs(defs)) >= {spec.key for spec in failures.values()}
    for member, asset in MEMBERS.items():
        assert _columns(failures[member]) == _table_columns(database, f"{asset}__dy_failures")
    assert "dy_filter__customer_exists" in _columns(failures["lines"])
    assert "or removed by a filter of its collection" in (failures["lines"].description or "")
    # customers are never filtered: no filter columns.
    assert not any(c.startswith("dy_filter__") for c in _columns(failures["customers"]))


def test_with_schemas_declares_a_collection_members_rows_with_its_filters() -> None:
    defs = dd.with_schemas(
        dg.Definitions(
            assets=[dg.AssetSpec(key) for key in MEMBERS.values()],
            resources={"duckdb": DuckDBResource(database=":memory:")},
        ),
        {Shop: MEMBERS},
        source=dd.sources.DuckDBTableSource(),
        keep_failing_rows=True,
    )

    specs = _specs(defs)

    lines = _columns(specs[dg.AssetKey("order_lines__dy_failures")])
    assert "dy_rule__primary_key" in lines and "dy_filter__order_has_lines" in lines


def test_the_rows_take_the_partitions_of_the_checked_asset() -> None:
    @dg.asset(partitions_def=DAYS)
    def daily() -> None: ...

    assert dd.failures_asset(Shop, asset=daily, member="orders").partitions_def == DAYS


def test_a_member_that_is_not_one_names_the_collections_members() -> None:
    with pytest.raises(CollectionMemberError, match="one of customers, orders, lines"):
        dd.failures_asset(Shop, asset="order_lines", member="order_lines")
    with pytest.raises(CollectionMemberError, match="not one"):
        dd.failures_asset(Shop.member_schemas()["orders"], asset="orders", member="orders")
