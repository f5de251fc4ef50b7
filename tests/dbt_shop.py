"""The dbt project in `tests/dbt_project` (two models on a local DuckDB file), copied to a
temporary folder and parsed there, so no `target/` or `logs/` is ever written to the repo."""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
from dagster_dbt import DbtCliResource, DbtProject, dbt_assets
from dagster_duckdb import DuckDBResource

PROJECT = Path(__file__).parent / "dbt_project"
DATABASE = "SHOP_DUCKDB_PATH"
#: The environment's dbt (the test process may not have the environment's bin on PATH).
DBT = str(Path(sys.executable).parent / "dbt")


class ShopOrders(dy.Schema):
    """The `orders` model as DuckDB hands it to polars."""

    order_id = dy.Int32(primary_key=True)
    customer_id = dy.Int32()
    status = dy.String(regex="^(open|paid|shipped)$")
    amount = dy.Float64(min=0)
    order_date = dy.Date()


class ShopCustomers(dy.Schema):
    customer_id = dy.Int32(primary_key=True)
    name = dy.String()


def prepare(folder: Path) -> Path:
    """Copy the dbt project to `folder` and parse it. The manifest names tables
    `shop.main.<model>` (the catalog is the file's stem): every run uses a `shop.duckdb`."""
    project = folder / "dbt_project"
    shutil.copytree(PROJECT, project)
    env = {**os.environ, DATABASE: str(folder / "shop.duckdb")}
    subprocess.run(
        [DBT, "parse", "--project-dir", str(project), "--profiles-dir", str(project)],
        check=True,
        env=env,
        capture_output=True,
    )
    return project


def dbt_models(project: Path, **kwargs: Any) -> dg.AssetsDefinition:
    """`@dbt_assets` over the parsed project, building every model."""
    dbt_project = DbtProject(project_dir=project, profiles_dir=project)

    @dbt_assets(manifest=dbt_project.manifest_path, **kwargs)
    def shop(context: dg.AssetExecutionContext, dbt: DbtCliResource) -> Any:
        yield from dbt.cli(["build"], context=context).stream()

    return shop


def resources(project: Path, database: Path) -> dict[str, Any]:
    return {
        "dbt": DbtCliResource(
            project_dir=str(project), profiles_dir=str(project), dbt_executable=DBT
        ),
        "duckdb": DuckDBResource(database=str(database)),
    }
