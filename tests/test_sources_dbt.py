"""Checks on dbt models (dagster-dbt, dbt-duckdb) read from the DuckDB file dbt built, in
real runs: the models are not changed, and nothing is read through an IO manager."""

from __future__ import annotations

import io
import os
import re
from contextlib import redirect_stdout
from pathlib import Path

import dagster as dg
import pytest
from dbt_shop import DATABASE, DBT, ShopCustomers, ShopOrders, dbt_models, prepare, resources
from support import failed

import dagster_dataframely as dd
from dagster_dataframely.errors import UnloadableAssetError

ERROR = dg.AssetCheckSeverity.ERROR


@pytest.fixture(scope="module")
def parsed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return prepare(tmp_path_factory.mktemp("dbt"))


@pytest.fixture
def shop(parsed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """The parsed project and a fresh DuckDB file for dbt to build into."""
    database = tmp_path / "shop.duckdb"
    monkeypatch.setenv(DATABASE, str(database))
    return parsed, database


def test_dbt_models_are_checked_in_the_duckdb_file_dbt_built(shop: tuple[Path, Path]) -> None:
    project, database = shop
    defs = dd.with_schemas(
        dg.Definitions(assets=[dbt_models(project)], resources=resources(project, database)),
        {"orders": ShopOrders, "customers": ShopCustomers},
        source=dd.sources.DuckDBTableSource(),
    )
    result = defs.resolve_implicit_global_asset_job_def().execute_in_process(
        instance=dg.DagsterInstance.ephemeral(), raise_on_error=False
    )

    evaluated = {
        (e.asset_key.to_user_string(), e.check_name) for e in result.get_asset_check_evaluations()
    }
    assert ("customers", "dy_rule__primary_key") in evaluated
    assert ("orders", "dy_rule__amount__min") in evaluated
    assert failed(result) == {
        "dy_rule__amount__min": (1, ERROR),
        "dy_rule__status__regex": (1, ERROR),
    }


def test_a_dbt_model_without_a_source_is_refused_at_definition_time(
    shop: tuple[Path, Path],
) -> None:
    project, database = shop
    defs = dg.Definitions(assets=[dbt_models(project)], resources=resources(project, database))

    with pytest.raises(UnloadableAssetError, match=r"asset orders: it has no IO manager.*source="):
        dd.with_schemas(defs, {"orders": ShopOrders})


def test_the_sources_page_checks_its_dbt_models_as_written(
    parsed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/sources.md's example, run as written in a folder of its own: the page's names
    (`MANIFEST`, `PROJECT`, the schemas) are the test project's."""
    page = (Path(__file__).parents[1] / "docs" / "sources.md").read_text()
    block = re.findall(r"^```python\n(.*?)^```", page, re.S | re.M)[0]  # the dbt example
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(DATABASE, str(tmp_path / "shop.duckdb"))
    monkeypatch.setenv("DBT_PROFILES_DIR", str(parsed))
    monkeypatch.setenv("PATH", f"{Path(DBT).parent}{os.pathsep}{os.environ['PATH']}")
    namespace = {
        "MANIFEST": parsed / "target" / "manifest.json",
        "PROJECT": str(parsed),
        "ShopOrders": ShopOrders,
        "ShopCustomers": ShopCustomers,
    }
    exec(compile(block, "docs/sources.md", "exec", dont_inherit=True), namespace)

    result = (
        namespace["defs"]
        .resolve_implicit_global_asset_job_def()
        .execute_in_process(instance=dg.DagsterInstance.ephemeral(), raise_on_error=False)
    )
    assert failed(result) == {
        "dy_rule__amount__min": (1, ERROR),
        "dy_rule__status__regex": (1, ERROR),
    }
    engines = {
        e.check_name: e.metadata["dy_engine"].value
        for e in result.get_asset_check_evaluations()
        if e.check_name != "dy_schema__columns"
    }
    # Every rule has an SQL form, and runs in DuckDB, the keys of these small models too.
    assert engines.pop("dy_rule__primary_key") == "duckdb"
    assert engines and set(engines.values()) == {"duckdb"}


def test_the_sources_page_renders_the_refusal_of_a_model_without_a_source() -> None:
    """The block the site executes at build time prints the error the page promises."""
    page = (Path(__file__).parents[1] / "docs" / "sources.md").read_text()
    (block,) = re.findall(r'^```python exec="on"[^\n]*\n(.*?)^```', page, re.S | re.M)
    printed = io.StringIO()
    with redirect_stdout(printed):
        exec(compile(block, "docs/sources.md", "exec", dont_inherit=True), {"__name__": "page"})
    assert printed.getvalue().startswith(
        "with_schemas cannot read asset orders: it has no IO manager"
    )
    assert "source= (e.g. dd.sources.DuckDBTableSource()" in printed.getvalue()
