"""`dd.infer.dbt_schemas` and `dagster-dataframely infer-dbt`: a dbt project's tests and
contracts as Dataframely schemas, whose checks (by pushdown, in the DuckDB file dbt built)
give the verdicts `dbt build` gave its tests on the same data."""

from __future__ import annotations

import json
from importlib import import_module
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import duckdb
import polars as pl
import pytest
from console import dagster_dataframely
from dagster_duckdb import DuckDBResource
from infer_dbt import dbt, project_with_tests

import dagster_dataframely as dd
from dagster_dataframely.errors import UnknownModelError, UnsupportedManifestError
from dagster_dataframely.infer._dbt import write_modules

#: dbt's test status -> the check outcome that means the same: (passed, severity if failed).
SAME = {"pass": (True, None), "warn": (False, "WARN"), "fail": (False, "ERROR")}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The project, built and tested by `dbt build`; each test's status by its name."""
    project = project_with_tests(tmp_path_factory.mktemp("dbt"))
    dbt("build", project)  # some tests fail by design: the exit code says so
    results = json.loads((project / "target" / "run_results.json").read_text())
    statuses = {
        r["unique_id"].split(".")[2]: r["status"]
        for r in results["results"]
        if r["unique_id"].startswith("test.")
    }
    return project, statuses


def load(source: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    exec(compile(source, "schema.py", "exec"), namespace)
    return namespace


def schema_of(namespace: dict[str, Any]) -> type[dy.Schema]:
    return next(
        v
        for v in namespace.values()
        if isinstance(v, type) and issubclass(v, dy.Schema) and v is not dy.Schema
    )


def test_the_checks_of_the_generated_schemas_give_dbts_verdicts(
    built: tuple[Path, dict[str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, statuses = built
    database = project.parent / "shop.duckdb"
    with duckdb.connect(str(database), read_only=True) as connection:
        sources = dd.infer.dbt_schemas(project / "target" / "manifest.json", connection=connection)
    write_modules(sources, tmp_path / "shop_schemas")  # as `infer-dbt --output-dir` writes
    monkeypatch.syspath_prepend(str(tmp_path))
    modules = {name: import_module(f"shop_schemas.{name}") for name in sources}
    relationships = modules.pop("relationships")

    def source(name: str) -> dd.sources.DuckDBTableSource:
        return dd.sources.DuckDBTableSource(table=f"main.{name}")

    checks = [
        dd.schema_checks(schema_of(vars(module)), asset=name, source=source(name))
        for name, module in modules.items()
    ]
    checks.append(
        dd.collection_checks(
            relationships.OrdersRelationships,
            members={"orders": "orders", "customers": "customers"},
            sources={"orders": source("orders"), "customers": source("customers")},
            skip_schema_checks=["orders", "customers"],
        )
    )
    result = _run([dg.AssetSpec(name) for name in modules], checks, database)
    evaluations = {(e.asset_key.to_user_string(), e.check_name): e for e in result}

    taken_over = {
        test: (name, check)
        for name, module in modules.items()
        for test, check in module.DBT_TESTS.items()
    }
    # The relationships test is the filter its name (without the trailing `_`) names.
    (relationship,) = [test for test in statuses if test.startswith("relationships_")]
    taken_over[relationship] = ("orders", f"dy_filter__{relationship.rstrip('_')}")
    for test, (name, check) in taken_over.items():
        evaluation = evaluations[name, check]
        severity = None if evaluation.passed else evaluation.severity.value
        assert (evaluation.passed, severity) == SAME[statuses[test]], (name, test, check)
    assert len(taken_over) == len(statuses) - 1  # every test but `recency`
    assert {s for s in statuses.values()} == {"pass", "warn", "fail"}
    engines = {
        e.metadata["dy_engine"].value for e in result if e.check_name.endswith("nullability")
    }
    assert engines == {"duckdb"}  # read by pushdown
    assert "dbt test `dbt_utils_recency_orders" in sources["orders"]  # listed, not dropped
    # `quote: false`: the values are SQL numbers, so polars compares numbers.
    assert 'check={"accepted_values": lambda col: col.is_in([1, 2])}' in sources["orders"]
    # The unique combination of two never-null columns is the composite primary key.
    assert [
        n for n, c in schema_of(vars(modules["orders"])).columns().items() if c.primary_key
    ] == [
        "order_id",
        "customer_id",
    ]


def _run(
    assets: list[dg.AssetSpec], checks: list[dg.AssetChecksDefinition], database: Path
) -> list[dg.AssetCheckEvaluation]:
    """The checks' evaluations in one run of the checks alone (dbt built the tables)."""
    defs = dg.Definitions(
        assets=assets,
        asset_checks=checks,
        resources={"duckdb": DuckDBResource(database=str(database))},
    )
    job = dg.define_asset_job("checks", selection=dg.AssetSelection.all_asset_checks())
    resolved = dg.Definitions.merge(defs, dg.Definitions(jobs=[job])).resolve_job_def("checks")
    outcome = resolved.execute_in_process(
        instance=dg.DagsterInstance.ephemeral(), raise_on_error=False
    )
    return outcome.get_asset_check_evaluations()


def test_without_a_warehouse_the_contract_gives_the_types(
    built: tuple[Path, dict[str, str]],
) -> None:
    project, _ = built
    manifest = project / "target" / "manifest.json"
    sources = dd.infer.dbt_schemas(manifest, select=["cust*"])

    assert list(sources) == ["customers"]
    assert dd.infer.dbt_schemas(manifest, select=["tag:core"]) == sources  # dbt's selector
    columns = schema_of(load(sources["customers"])).columns()
    assert columns["customer_id"].dtype == pl.Int32() and not columns["customer_id"].nullable
    assert columns["name"].dtype == pl.String() and columns["name"].nullable
    # No contract: the columns are `dy.Any`, the tests still hold (`unique` as a check).
    orders = schema_of(load(dd.infer.dbt_schemas(manifest, select=["orders"])["orders"]))
    assert type(orders.columns()["order_id"]) is dy.Any
    assert "order_id|check__unique" in [r.name for r in dd.wiring.rules(orders)]


def test_a_model_not_in_the_manifest_names_the_closest(built: tuple[Path, dict[str, str]]) -> None:
    project, _ = built
    with pytest.raises(UnknownModelError, match=r"no model 'order'\. Did you mean orders\?"):
        dd.infer.dbt_schemas(project / "target" / "manifest.json", select=["order"])
    with pytest.raises(UnknownModelError, match=r"no model 'ordrs'\. Did you mean orders\?"):
        dd.infer.dbt_schemas(project / "target" / "manifest.json", select=["+ordrs"])


@pytest.mark.parametrize(
    ("select", "models"),
    [
        (["+orders"], ["customers", "orders"]),  # orders selects from customers
        (["customers+"], ["customers", "orders"]),
        (["orders+"], ["orders"]),
        (["path:models/orders.sql"], ["orders"]),
        (["path:models"], ["customers", "orders"]),
        (["tag:core+,orders"], ["orders"]),  # a comma: the models both select
        (["orders customers"], ["orders", "customers"]),  # a space: either
    ],
)
def test_models_are_selected_in_dbt_s_selector_syntax(
    built: tuple[Path, dict[str, str]], select: list[str], models: list[str]
) -> None:
    project, _ = built
    sources = dd.infer.dbt_schemas(project / "target" / "manifest.json", select=select)
    assert sorted(sources) == sorted(models)


def test_a_manifest_of_an_old_dbt_is_refused_with_the_fix(tmp_path: Path) -> None:
    old = tmp_path / "manifest.json"
    schema = "https://schemas.getdbt.com/dbt/manifest/v8.json"
    old.write_text(json.dumps({"metadata": {"dbt_schema_version": schema}, "nodes": {}}))
    with pytest.raises(UnsupportedManifestError, match=r"v8\.json.*v9 to v12.*dbt parse"):
        dd.infer.dbt_schemas(old)


def test_the_cli_writes_one_module_per_selected_model(
    built: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    project, _ = built
    manifest = str(project / "target" / "manifest.json")
    options = ["--select", "orders", "--duckdb", str(project.parent / "shop.duckdb")]
    output = ["--output-dir", str(tmp_path / "schemas")]
    result = dagster_dataframely("infer-dbt", manifest, *options, *output, cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (tmp_path / "schemas").iterdir()) == ["__init__.py", "orders.py"]
    module = load((tmp_path / "schemas" / "orders.py").read_text())
    assert module["DBT_TESTS"]["not_null_orders_order_id"] == "dy_rule__order_id__nullability"

    typo = dagster_dataframely("infer-dbt", manifest, "--select", "+ordrs", *output, cwd=tmp_path)
    assert typo.returncode == 1 and "Traceback" not in typo.stderr, typo.stderr
    assert "no model 'ordrs'. Did you mean orders?" in typo.stderr
    down = ["--postgres", "host=127.0.0.1 port=1 dbname=shop connect_timeout=5"]
    refused = dagster_dataframely("infer-dbt", manifest, *down, *output, cwd=tmp_path)
    assert refused.returncode == 1 and "Traceback" not in refused.stderr, refused.stderr
    assert "Cannot open the PostgreSQL server of --postgres" in refused.stderr


@pytest.mark.parametrize(
    ("adapter", "types", "dtypes"),
    [
        (
            "snowflake",
            ["int", "number(12, 2)", "timestamp_ntz", "float"],
            [pl.Int64(), pl.Decimal(12, 2), pl.Datetime("us"), pl.Float64()],
        ),
        (  # BigQuery's client describes a NUMERIC without its precision: read as a float
            "bigquery",
            ["int64", "numeric(12, 2)", "timestamp", "datetime"],
            [pl.Int64(), pl.Float64(), pl.Datetime("us", "UTC"), pl.Datetime("us")],
        ),
    ],
)
def test_a_contract_s_data_types_are_the_dtypes_the_warehouse_s_source_reads(
    tmp_path: Path, adapter: str, types: list[str], dtypes: list[pl.DataType]
) -> None:
    columns = {
        f"c{i}": {"name": f"c{i}", "data_type": t, "constraints": []} for i, t in enumerate(types)
    }
    node = {"unique_id": "model.shop.lines", "resource_type": "model", "name": "lines"}
    node |= {"schema": "finance", "columns": columns, "contract": {"enforced": True}}
    metadata = {
        "dbt_schema_version": "https://schemas.getdbt.com/dbt/manifest/v12.json",
        "adapter_type": adapter,
    }
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"metadata": metadata, "nodes": {node["unique_id"]: node}}))

    schema = schema_of(load(dd.infer.dbt_schemas(manifest)["lines"]))
    assert [column.dtype for column in schema.columns().values()] == dtypes


def test_adopted_the_models_tables_rules_are_their_tests_and_what_their_rows_hold(
    built: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    project, _ = built
    manifest = str(project / "target" / "manifest.json")
    database = str(project.parent / "shop.duckdb")
    output = ["--output-dir", str(tmp_path / "schemas")]
    options = ["--select", "orders", "customers", "--duckdb", database, "--adopt"]
    adopted = dagster_dataframely("infer-dbt", manifest, *options, *output, cwd=tmp_path)
    alone = dagster_dataframely("infer-dbt", manifest, "--adopt", *output, cwd=tmp_path)

    assert adopted.returncode == 0, adopted.stderr
    orders = (tmp_path / "schemas" / "orders.py").read_text()
    customers = (tmp_path / "schemas" / "customers.py").read_text()
    assert "# learned from the data, " in orders and "# learned from the data, " in customers
    # A dbt test's list of values is the model's declaration: no second one is learned.
    assert orders.count("is_in") == 2  # customer_id's and status's accepted_values
    schema = schema_of(load(customers))
    learned = {rule.name for rule in dd.wiring.rules(schema)} - {
        "primary_key",
        "customer_id|nullability",
        "customer_id|unique",
    }
    assert {"customer_id|min", "customer_id|max"} <= learned
    result = dg.materialize(
        [
            dg.AssetSpec("customers"),
            dd.schema_checks(
                schema, asset="customers", source=dd.sources.DuckDBTableSource(table="customers")
            ),
        ],
        resources={"duckdb": DuckDBResource(database=database)},
        selection=dg.AssetSelection.all_asset_checks(),
        instance=dg.DagsterInstance.ephemeral(),
    )
    outcomes = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    assert outcomes and all(outcomes.values()), outcomes
    assert alone.returncode == 1 and "Traceback" not in alone.stderr, alone.stderr
    assert "give its connection= (--duckdb FILE or --postgres CONNINFO)" in alone.stderr
