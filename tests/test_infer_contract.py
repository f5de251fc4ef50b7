"""`dd.infer.dbt_contract` and `dagster-dataframely dbt-contract`: a schema as a dbt model's
enforced contract, which `dbt build` accepts for the model the schema describes and refuses
for a schema that says otherwise."""

from __future__ import annotations

from pathlib import Path

import dataframely as dy
import pytest
import yaml
from console import dagster_dataframely
from dbt_shop import ShopCustomers, ShopOrders
from infer_dbt import dbt, project_with_tests
from postgres import PostgresResource, PostgresServer
from sqlglot import exp
from test_infer import checked

import dagster_dataframely as dd
from dagster_dataframely.errors import UnsupportedSchemaError


def contracts(**schemas: type[dy.Schema]) -> str:
    """One schema.yml with the contract of each model."""
    models = [
        yaml.safe_load(dd.infer.dbt_contract(schema, model=name))["models"][0]
        for name, schema in schemas.items()
    ]
    return yaml.safe_dump({"version": 2, "models": models}, sort_keys=False)


def test_dbt_builds_the_models_under_the_contract_of_their_schemas(tmp_path: Path) -> None:
    project = project_with_tests(tmp_path, contracts(orders=ShopOrders, customers=ShopCustomers))
    built = dbt("build", project)

    assert built.returncode == 0, built.stdout
    assert "contract" in (project / "models" / "schema.yml").read_text()


class WrongOrders(ShopOrders):
    amount = dy.Int64()  # the model makes it a double


def test_dbt_refuses_a_model_whose_schema_says_otherwise(tmp_path: Path) -> None:
    project = project_with_tests(tmp_path, contracts(orders=WrongOrders))
    built = dbt("build", project)

    assert built.returncode != 0
    assert "contract" in built.stdout.lower() and "amount" in built.stdout


def test_a_dtype_no_warehouse_type_reads_back_as_is_refused() -> None:
    class Moods(dy.Schema):
        mood = dy.Enum(["calm", "busy"])

    with pytest.raises(UnsupportedSchemaError, match=r"'mood' of schema Moods.*read_dtypes"):
        dd.infer.dbt_contract(Moods)


def test_the_cli_prints_the_contract(tmp_path: Path) -> None:
    (tmp_path / "shop_schemas.py").write_text(
        "import dataframely as dy\n\n\nclass Customers(dy.Schema):\n"
        "    customer_id = dy.Int32(primary_key=True)\n    name = dy.String(nullable=True)\n"
    )
    options = ["--dialect", "postgres"]
    result = dagster_dataframely("dbt-contract", "shop_schemas:Customers", *options, cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    (model,) = yaml.safe_load(result.stdout)["models"]
    assert model["name"] == "customers"
    assert model["columns"][0] == {
        "name": "customer_id",
        "data_type": "int",
        "constraints": [{"type": "not_null"}, {"type": "primary_key"}],
    }
    assert model["columns"][1] == {"name": "name", "data_type": "text"}


class Invoices(dy.Schema):
    invoice_id = dy.Int64(primary_key=True)
    total = dy.Float64(nullable=True)
    currency = dy.String(unique=True)
    issued_at = dy.Datetime(time_zone="UTC", nullable=True)
    local_at = dy.Datetime(nullable=True)
    day = dy.Date(nullable=True)
    paid = dy.Bool(nullable=True)


def created(contract: str, table: str, dialect: str) -> str:
    """The `CREATE TABLE` of a contract's columns, as dbt creates an enforced model."""
    (model,) = yaml.safe_load(contract)["models"]
    columns = [
        exp.ColumnDef(
            this=exp.to_identifier(column["name"], quoted=column.get("quote", False)),
            kind=exp.DataType.build(column["data_type"], dialect=dialect),
            constraints=[exp.ColumnConstraint(kind=exp.NotNullColumnConstraint())]
            if {"type": "not_null"} in column.get("constraints", [])
            else [],
        )
        for column in model["columns"]
    ]
    schema = exp.Schema(this=exp.to_table(table, dialect=dialect), expressions=columns)
    return exp.Create(this=schema, kind="TABLE").sql(dialect=dialect)


def test_a_postgres_table_made_by_the_contract_passes_the_schema_s_column_check(
    postgres: PostgresServer,
) -> None:
    with postgres.connect() as connection:
        connection.execute("DROP TABLE IF EXISTS invoices")
        connection.execute(
            created(dd.infer.dbt_contract(Invoices, dialect="postgres"), "invoices", "postgres")
        )
        connection.commit()
    evaluations = checked(
        Invoices,
        dd.sources.SQLTableSource(resource_key="warehouse", dialect="postgres", table="invoices"),
        {"warehouse": PostgresResource(conninfo=postgres.conninfo)},
    )
    assert evaluations["dy_schema__columns"] is True and all(evaluations.values()), evaluations


def test_bigquery_s_data_types_are_its_own_names_of_what_its_client_reads() -> None:
    (model,) = yaml.safe_load(dd.infer.dbt_contract(Invoices, dialect="bigquery"))["models"]
    assert [c["data_type"] for c in model["columns"]] == [
        "int64", "float64", "string", "timestamp", "datetime", "date", "bool",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("dialect", "column", "has"),
    [
        ("bigquery", dy.Int32(), "Int64"),  # INT64 is its only integer type
        ("bigquery", dy.Decimal(12, 2), "Float64"),  # its client describes no precision
        ("snowflake", dy.Int16(), "Int64"),  # every integer is NUMBER(38, 0)
    ],
)
def test_a_dtype_the_warehouse_does_not_read_back_names_the_ones_it_does(
    dialect: str, column: dy.Column, has: str
) -> None:
    schema = type("Lines", (dy.Schema,), {"quantity": column})
    with pytest.raises(UnsupportedSchemaError, match=rf"'quantity' of schema Lines.*\b{has}\b"):
        dd.infer.dbt_contract(schema, dialect=dialect)
