"""`dd.infer_schema` on a Snowflake table through the connection a resource gives, executed by
fakesnow: the inferred schema's checks pass on the same table. In a module of its own, with the
fakesnow warehouse of test_sql_snowflake.py (fakesnow refuses a second patch in one process),
so the oldest set, which has no fakesnow, leaves it out as it does the other Snowflake runs."""

from __future__ import annotations

import polars as pl
import yaml
from test_infer import checked, dtypes
from test_infer_contract import Invoices, created
from test_sql_snowflake import SnowflakeWarehouse
from test_sql_snowflake import warehouse as warehouse  # the module's fakesnow warehouse
from written_schema import load

import dagster_dataframely as dd


def test_a_snowflake_table_through_its_resource_becomes_a_schema_its_checks_pass_on(
    warehouse: SnowflakeWarehouse,
) -> None:
    with warehouse.get_connection() as connection:
        cursor = connection.cursor()
        cursor.execute("CREATE SCHEMA IF NOT EXISTS shop.finance")
        cursor.execute(
            "CREATE TABLE finance.invoices (invoice_id NUMBER(38, 0) PRIMARY KEY, "
            "total NUMBER(12, 2) NOT NULL, currency VARCHAR, issued TIMESTAMP_NTZ, "
            "payload VARIANT)"
        )
        cursor.execute("INSERT INTO finance.invoices SELECT 1, 10.5, 'EUR', NULL, NULL")
    source = dd.infer_schema("finance.invoices", connection=warehouse, dialect="snowflake")
    schema = load(source, "Invoices")  # Snowflake's upper-case INVOICES, in CamelCase

    assert dtypes(schema) == {
        "INVOICE_ID": pl.Int64(),  # NUMBER(38, 0), as the source reads it
        "TOTAL": pl.Decimal(12, 2),
        "CURRENCY": pl.String(),
        "ISSUED": pl.Datetime("us"),
    }
    assert schema.columns()["INVOICE_ID"].primary_key
    assert "# PAYLOAD: VARIANT has no Dataframely column type" in source
    outcomes = checked(
        schema,
        dd.sources.SQLTableSource(
            resource_key="warehouse", dialect="snowflake", table="finance.invoices"
        ),
        {"warehouse": warehouse},
    )
    assert outcomes["dy_schema__columns"] is True
    assert all(outcomes.values()), outcomes


def test_a_snowflake_table_made_by_the_contract_passes_the_schema_s_column_check(
    warehouse: SnowflakeWarehouse,
) -> None:
    contract = dd.infer.dbt_contract(Invoices, dialect="snowflake")
    (model,) = yaml.safe_load(contract)["models"]
    # Snowflake stores every integer as NUMBER(38, 0), and an unquoted name in upper case.
    assert model["columns"][0] == {
        "name": "invoice_id",
        "quote": True,
        "data_type": "decimal(38, 0)",
        "constraints": [{"type": "not_null"}, {"type": "primary_key"}],
    }
    with warehouse.get_connection() as connection:
        connection.cursor().execute(created(contract, "finance.contracted", "snowflake"))
    outcomes = checked(
        Invoices,
        dd.sources.SQLTableSource(
            resource_key="warehouse", dialect="snowflake", table="finance.contracted"
        ),
        {"warehouse": warehouse},
    )
    assert outcomes["dy_schema__columns"] is True and all(outcomes.values()), outcomes
