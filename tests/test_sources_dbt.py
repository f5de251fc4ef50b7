"""Checks on dbt models (dagster-dbt, dbt-duckdb) read from the DuckDB file dbt built, in
real runs: the models are not changed, and nothing is read through an IO manager."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest
from dbt_shop import DATABASE, ShopCustomers, ShopOrders, dbt_models, prepare, resources
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
