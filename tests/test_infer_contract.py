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
