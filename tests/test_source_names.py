"""A table's name is read by the database's own SQL grammar, once: a quoted part keeps its dots,
so `'"orders.v2"'` is the table `orders.v2` and never the table `v2` of a schema `orders`
(which the split on dots used to check instead, silently), in DuckDB and PostgreSQL,
pushdown and streaming alike. A name or `partition_expr` that is not one fails when the
Definitions load, naming the asset or the source, the value and the fix.
"""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import duckdb
import pytest
from dagster_duckdb import DuckDBResource
from postgres import PostgresResource, PostgresServer
from support import logs
from test_pushdown import _outcomes

import dagster_dataframely as dd
from dagster_dataframely.errors import InvalidSourceError
from dagster_dataframely.sources._names import TABLE_NAME


class Orders(dy.Schema):
    order_id = dy.Int64(primary_key=True)
    amount = dy.Float64(min=0)


#: The dotted table holds 2 negative amounts; the table its name would split into holds none.
TABLES = """
CREATE SCHEMA orders;
CREATE TABLE orders.v2 (order_id bigint, amount double precision);
INSERT INTO orders.v2 VALUES (1, 1.0), (2, 2.0), (3, 3.0);
CREATE TABLE "orders.v2" (order_id bigint, amount double precision);
INSERT INTO "orders.v2" VALUES (1, -1.0), (2, -2.0), (3, 3.0), (4, 4.0);
"""


def _checked(source: dd.sources.Source, resources: dict[str, Any], **metadata: str) -> Any:
    spec = dg.AssetSpec("orders", metadata=metadata)
    defs = dd.with_schemas(
        dg.Definitions(assets=[spec], resources=resources), {"orders": Orders}, source=source
    )
    job = dg.define_asset_job("checks", selection=dg.AssetSelection.checks_for_assets("orders"))
    defs = dg.Definitions.merge(defs, dg.Definitions(jobs=[job]))
    return defs.resolve_job_def("checks").execute_in_process(raise_on_error=False)


def _counts(result: Any) -> tuple[set[int], int]:
    outcomes = _outcomes(result)
    assert outcomes, "no rule was reported"
    return {rows for _, rows, _ in outcomes.values()}, outcomes["dy_rule__amount__min"][0]


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    database = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(database)) as connection:
        connection.execute(TABLES)
    return database


@pytest.mark.parametrize("pushdown", [True, False])
@pytest.mark.parametrize("given", ["table", "metadata"])
def test_a_quoted_duckdb_name_with_a_dot_checks_that_table(
    warehouse: Path, pushdown: bool, given: str
) -> None:
    name = '"orders.v2"'
    source = dd.sources.DuckDBTableSource(
        table=name if given == "table" else None, pushdown=pushdown
    )
    metadata = {"dagster/table_name": name} if given == "metadata" else {}

    result = _checked(source, {"duckdb": DuckDBResource(database=str(warehouse))}, **metadata)

    assert _counts(result) == ({4}, 2)


def test_a_quoted_postgres_name_with_a_dot_checks_that_table(postgres: PostgresServer) -> None:
    with postgres.connect() as connection:
        connection.execute('DROP SCHEMA IF EXISTS orders CASCADE; DROP TABLE IF EXISTS "orders.v2"')
        connection.execute(TABLES)
    source = dd.sources.SQLTableSource(resource_key="warehouse", dialect="postgres")

    result = _checked(
        source,
        {"warehouse": PostgresResource(conninfo=postgres.conninfo)},
        **{"dagster/table_name": 'public."orders.v2"'},
    )

    assert _counts(result) == ({4}, 2)


@pytest.mark.parametrize("name", ["a.b.c.d", "orders..v2", "orders v2", "orders)"])
def test_a_table_name_that_is_not_one_fails_when_the_source_is_built(name: str) -> None:
    with pytest.raises(InvalidSourceError) as raised:
        dd.sources.DuckDBTableSource(table=name)

    message = str(raised.value)
    assert f"table={name!r} is not a DuckDB table name" in message
    assert "'schema.table'" in message and '"orders.v2"' in message  # the fix


@pytest.mark.parametrize(
    ("dialect", "title"),
    [("snowflake", "Snowflake"), ("bigquery", "BigQuery"), ("mysql", "mysql")],
)
def test_a_bad_table_name_error_names_the_database(dialect: str, title: str) -> None:
    """As its Dialect calls it; a dialect without one, as sqlglot does."""
    with pytest.raises(InvalidSourceError) as raised:
        dd.sources.SQLTableSource(resource_key="warehouse", dialect=dialect, table="a.b.c.d")

    assert f"is not a {title} table name" in str(raised.value)


def test_a_bad_dagster_table_name_fails_when_the_definitions_load() -> None:
    spec = dg.AssetSpec("orders", metadata={"dagster/table_name": "shop.main.orders.v2"})

    with pytest.raises(InvalidSourceError) as raised:
        dd.with_schemas(
            dg.Definitions(assets=[spec]),
            {"orders": Orders},
            source=dd.sources.SQLTableSource(resource_key="warehouse", dialect="postgres"),
        )

    message = str(raised.value)
    assert "asset orders's dagster/table_name='shop.main.orders.v2'" in message
    assert "is not a PostgreSQL table name" in message


def test_a_bad_partition_expr_in_yaml_fails_when_the_component_loads() -> None:
    with pytest.raises(InvalidSourceError, match=r"partition_expr='order_date \+' is not a"):
        dd.sources.source_from_config(
            "sql", {"resource_key": "w", "dialect": "postgres", "partition_expr": "order_date +"}
        )


def test_an_empty_table_read_by_its_metadata_name_is_named_in_the_warning(
    warehouse: Path,
) -> None:
    with duckdb.connect(str(warehouse)) as connection:
        connection.execute('CREATE TABLE "empty orders" (order_id bigint, amount double)')
    spec = dg.AssetSpec("orders", metadata={"dagster/table_name": '"empty orders"'})
    checks = dd.schema_checks(Orders, asset="orders", source=dd.sources.DuckDBTableSource())
    job = dg.define_asset_job("checks", selection=dg.AssetSelection.checks_for_assets("orders"))
    defs = dg.Definitions(
        assets=[spec],
        asset_checks=[checks],
        jobs=[job],
        resources={"duckdb": DuckDBResource(database=str(warehouse))},
    )
    instance = dg.DagsterInstance.ephemeral()

    result = defs.resolve_job_def("checks").execute_in_process(instance=instance)

    read = logs(instance, result)
    assert any(
        "Asset orders loaded 0 rows from DuckDB table '\"empty orders\"' via resource" in line
        for line in read
    )
    assert not [line for line in read if "(dagster/table_name)" in line or "<table>" in line]


#: A schema and a table whose names hold a semicolon, a space, capitals and an apostrophe.
HOSTILE = """
CREATE SCHEMA "Sales; Data";
CREATE TABLE "Sales; Data"."Ord'ers" (order_id bigint, amount double precision);
INSERT INTO "Sales; Data"."Ord'ers" VALUES (1, -1.0), (2, 2.0), (3, 3.0);
"""
QUOTED = '"Sales; Data"."Ord\'ers"'


@pytest.mark.parametrize("pushdown", [True, False])
def test_a_quoted_duckdb_name_with_an_apostrophe_checks_that_table(
    tmp_path: Path, pushdown: bool
) -> None:
    database = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(database)) as connection:
        connection.execute(HOSTILE)
    source = dd.sources.DuckDBTableSource(pushdown=pushdown)

    result = _checked(
        source, {"duckdb": DuckDBResource(database=str(database))}, **{TABLE_NAME: QUOTED}
    )

    assert _counts(result) == ({3}, 1)


def test_a_quoted_postgres_name_with_an_apostrophe_checks_that_table(
    postgres: PostgresServer,
) -> None:
    with postgres.connect() as connection:
        connection.execute('DROP SCHEMA IF EXISTS "Sales; Data" CASCADE')
        connection.execute(HOSTILE)
    source = dd.sources.SQLTableSource(resource_key="warehouse", dialect="postgres", table=QUOTED)

    result = _checked(source, {"warehouse": PostgresResource(conninfo=postgres.conninfo)})

    assert _counts(result) == ({3}, 1)


@pytest.mark.parametrize(("dialect", "title"), [("duckdb", "DuckDB"), ("postgres", "PostgreSQL")])
def test_an_unquoted_apostrophe_in_a_table_name_names_its_quoted_spelling(
    dialect: str, title: str
) -> None:
    """Not sqlglot's TokenError: where the name was given, the database, and the name with
    its parts quoted, which reads the table the dots meant (as it did before names were SQL)."""
    spec = dg.AssetSpec("orders", metadata={TABLE_NAME: "Sales; Data.Ord'ers"})

    with pytest.raises(InvalidSourceError) as raised:
        dd.with_schemas(
            dg.Definitions(assets=[spec]),
            {"orders": Orders},
            source=dd.sources.SQLTableSource(resource_key="warehouse", dialect=dialect),
        )

    message = str(raised.value)
    assert f"asset orders's {TABLE_NAME}=\"Sales; Data.Ord'ers\" is not a {title}" in message
    assert "double quotes around a part that holds a dot, a space, a quote" in message
    assert f"for the parts 'Sales; Data', \"Ord'ers\": {QUOTED}." in message


def test_an_unterminated_string_in_partition_expr_is_a_source_error() -> None:
    with pytest.raises(InvalidSourceError, match=r"partition_expr=\"order_date = '2024\" is not"):
        dd.sources.source_from_config(
            "sql",
            {"resource_key": "w", "dialect": "postgres", "partition_expr": "order_date = '2024"},
        )
