"""Importing the package loads no optional reader: every Dagster step process pays the import,
and duckdb alone adds 32 MB to it. Each optional dependency is imported where it is used, and
the paths that use one still work when it arrives only then. Fresh interpreters, so what the
test session has imported does not count."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

#: Imported by a reader, a writer or the Pandera layer when used; never by the import.
OPTIONAL = ("duckdb", "deltalake", "pandas", "pyarrow", "pandera", "fsspec")


def _run(code: str, cwd: Path) -> str:
    found = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, cwd=cwd
    )
    assert found.returncode == 0, found.stderr[-3000:]
    return found.stdout.strip()


def test_dagster_itself_loads_none_of_the_optional_dependencies(tmp_path: Path) -> None:
    # Otherwise the next test would prove nothing about them.
    loaded = _run(
        f"""
        import sys
        import dagster, dataframely, polars
        print(sorted(name for name in {OPTIONAL!r} if name in sys.modules))
        """,
        tmp_path,
    )
    assert loaded == "[]"


def test_importing_the_package_and_its_sources_loads_no_optional_dependency(
    tmp_path: Path,
) -> None:
    loaded = _run(
        f"""
        import sys
        import dagster_dataframely, dagster_dataframely.sources
        print(sorted(name for name in {OPTIONAL!r} if name in sys.modules))
        """,
        tmp_path,
    )
    assert loaded == "[]"


def test_a_duckdb_error_is_caught_when_duckdb_arrives_after_the_package(tmp_path: Path) -> None:
    # The table is missing: DuckDB raises its own CatalogException, which the source must
    # still re-raise as SourceReadError naming the asset and the source. The file exists: the
    # checks open it read-only, and a file that does not exist is a connection error.
    import duckdb

    duckdb.connect(str(tmp_path / "shop.duckdb")).close()
    found = _run(
        f"""
        import json
        import sys
        import dagster as dg
        import dataframely as dy
        import dagster_dataframely as dd

        assert "duckdb" not in sys.modules
        from dagster_duckdb import DuckDBResource

        class Orders(dy.Schema):
            order_id = dy.Int64(primary_key=True)

        defs = dd.with_schemas(
            dg.Definitions(
                assets=[dg.AssetSpec("orders", metadata={{"dagster/table_name": "main.orders"}})],
                resources={{"duckdb": DuckDBResource(database={str(tmp_path / "shop.duckdb")!r})}},
            ),
            {{"orders": Orders}},
            source=dd.sources.DuckDBTableSource(),
        )
        job = dg.define_asset_job("checks", selection=dg.AssetSelection.checks_for_assets("orders"))
        result = dg.Definitions.merge(defs, dg.Definitions(jobs=[job])).resolve_job_def(
            "checks"
        ).execute_in_process(instance=dg.DagsterInstance.ephemeral(), raise_on_error=False)
        (failure,) = result.get_step_failure_events()
        cause = failure.step_failure_data.error.cause
        print(json.dumps([cause.cls_name, cause.message]))
        """,
        tmp_path,
    )
    cls_name, message = json.loads(found.splitlines()[-1])
    assert cls_name == "SourceReadError"
    assert "asset orders" in message and "resource 'duckdb'" in message
