"""A collection's removed rows kept in Snowflake (fakesnow: Snowflake's connector over
DuckDB): members as tables of one Snowflake schema, the filters and the kept rows' `INSERT
... SELECT` in Snowflake's SQL, each kept row and flag as `Collection.filter` reports it."""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
from collections.abc import Iterator

import dagster as dg
import fakesnow
import polars as pl
import pytest
from shop import MEMBERS, Shop, shop_frames
from test_collection_pushdown import EVERYTHING
from test_failing_rows_collections import _assert_kept_as_dataframely
from test_sql_snowflake import SnowflakeWarehouse, _literal

import dagster_dataframely as dd

_TYPES = {pl.Int64: "INT", pl.Float64: "FLOAT", pl.String: "VARCHAR"}


@pytest.fixture(scope="module")
def shop() -> Iterator[SnowflakeWarehouse]:
    with fakesnow.patch():
        resource = SnowflakeWarehouse(database="retail")
        with resource.get_connection() as connection:
            cursor = connection.cursor()
            cursor.execute("CREATE SCHEMA IF NOT EXISTS retail.finance")
            for member, frame in shop_frames().items():
                columns = ", ".join(f'"{n}" {_TYPES[t]}' for n, t in frame.schema.items())  # type: ignore[index]
                cursor.execute(f"CREATE TABLE finance.{MEMBERS[member]} ({columns})")
                rows = ", ".join(f"({', '.join(map(_literal, r))})" for r in frame.iter_rows())
                cursor.execute(f"INSERT INTO finance.{MEMBERS[member]} VALUES {rows}")
        yield resource


def test_snowflake_members_keep_the_removed_rows_inside_snowflake(
    shop: SnowflakeWarehouse,
) -> None:
    sources = {
        member: dd.sources.SQLTableSource(
            resource_key="warehouse", dialect="snowflake", table=f"finance.{asset}"
        )
        for member, asset in MEMBERS.items()
    }
    checks = dd.collection_checks(Shop, members=MEMBERS, sources=sources, keep_failing_rows=True)

    result = dg.materialize(
        [*(dg.AssetSpec(key) for key in MEMBERS.values()), checks],
        resources={"warehouse": shop},
        selection=EVERYTHING,
        raise_on_error=False,
    )

    engines = {
        e.metadata["dy_engine"].value
        for e in result.get_asset_check_evaluations()
        if e.check_name.startswith("dy_filter__")
    }
    assert engines == {"snowflake"}
    with shop.get_connection() as connection:
        cursor = connection.cursor()
        for member, asset in MEMBERS.items():
            cursor.execute(f"SELECT * FROM finance.{asset}__dy_failures")
            names = [column[0] for column in cursor.description]
            kept = pl.DataFrame(cursor.fetchall(), schema=names, orient="row")
            _assert_kept_as_dataframely(Shop, shop_frames(), member, kept)
