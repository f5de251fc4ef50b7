"""dbt models checked by the Component through the real `dagster` CLI: a code location with
`@dbt_assets` and a `defs.yaml` whose entries read the models from DuckDB (`source:`), run by
`dagster asset materialize` with a DAGSTER_HOME (each step in its own process)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import dagster as dg
import pytest
from dbt_shop import DATABASE, DBT, prepare

VENV = Path(sys.executable).parent.parent

DEFINITIONS = """\
import os
from pathlib import Path

import dagster as dg
from dagster_dbt import DbtCliResource, DbtProject, dbt_assets
from dagster_duckdb import DuckDBResource

PROJECT = Path(os.environ["SHOP_DBT_PROJECT"])


@dbt_assets(manifest=DbtProject(project_dir=PROJECT, profiles_dir=PROJECT).manifest_path)
def shop(context: dg.AssetExecutionContext, dbt: DbtCliResource):
    yield from dbt.cli(["build"], context=context).stream()


@dg.definitions
def defs() -> dg.Definitions:
    return dg.Definitions.merge(
        dg.Definitions(
            assets=[shop],
            resources={
                "dbt": DbtCliResource(
                    project_dir=str(PROJECT), profiles_dir=str(PROJECT),
                    dbt_executable=os.environ["SHOP_DBT"],
                ),
                "duckdb": DuckDBResource(database=os.environ["SHOP_DUCKDB_PATH"]),
            },
        ),
        dg.load_from_defs_folder(path_within_project=Path(__file__).parent),
    )
"""

PYPROJECT = """\
[project]
name = "shop-location"
version = "0.1.0"

[tool.dg]
directory_type = "project"

[tool.dg.project]
root_module = "shop_location"
"""

COMPONENT = """\
type: dagster_dataframely.SchemaChecksComponent

attributes:
  assets_outside_defs: true  # the dbt models are defined in definitions.py
  checks:
    - asset: orders
      schema: shop_schemas:ShopOrders
      source: {kind: duckdb_table, resource_key: duckdb}
    - asset: customers
      schema: shop_schemas:ShopCustomers
      source: {kind: duckdb_table, resource_key: duckdb}
"""


@pytest.fixture
def location(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    project = prepare(tmp_path)
    package = tmp_path / "src" / "shop_location"
    (package / "defs" / "quality").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "definitions.py").write_text(DEFINITIONS)
    (package / "defs" / "__init__.py").write_text("")
    (package / "defs" / "quality" / "defs.yaml").write_text(COMPONENT)
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    home = tmp_path / "dagster_home"
    home.mkdir()
    tests = Path(__file__).parent
    (tmp_path / "src" / "shop_schemas.py").write_text(
        textwrap.dedent(
            """\
            from dbt_shop import ShopCustomers, ShopOrders

            __all__ = ["ShopCustomers", "ShopOrders"]
            """
        )
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path / "src"), str(tests)]),
        "SHOP_DBT_PROJECT": str(project),
        "SHOP_DBT": DBT,
        DATABASE: str(tmp_path / "shop.duckdb"),
        "DAGSTER_HOME": str(home),
        "NO_COLOR": "1",
        "SHOP_ROOT": str(tmp_path),
    }
    return home, env


def test_dagster_cli_runs_the_components_checks_on_dbt_models(
    location: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    home, env = location
    ran = subprocess.run(
        [
            str(VENV / "bin" / "dagster"),
            "asset",
            "materialize",
            "-m",
            "shop_location.definitions",
            "--select",
            "*",
        ],
        env=env,
        cwd=env["SHOP_ROOT"],
        capture_output=True,
        text=True,
        timeout=600,
    )

    monkeypatch.setenv("DAGSTER_HOME", str(home))
    with dg.DagsterInstance.get() as instance:
        runs = instance.get_runs(limit=1)
        assert runs, ran.stdout[-3000:] + ran.stderr[-3000:]
        run = runs[0]
        logs = list(instance.all_logs(run.run_id))
    evaluations = {
        (data.asset_key.to_user_string(), data.check_name): data
        for entry in logs
        if entry.dagster_event is not None
        and entry.dagster_event.event_type == dg.DagsterEventType.ASSET_CHECK_EVALUATION
        for data in [entry.dagster_event.event_specific_data]
    }
    assert evaluations, ran.stdout[-3000:] + ran.stderr[-3000:]
    failing = {
        key: data.metadata["dy_failed_count"].value
        for key, data in evaluations.items()
        if not data.passed
    }
    assert failing == {
        ("orders", "dy_rule__amount__min"): 1,
        ("orders", "dy_rule__status__regex"): 1,
    }
    assert evaluations[("customers", "dy_rule__primary_key")].passed
