"""docs/infer.md, run whole: the blocks the site executes at build time, in their session, and
the dbt examples with the suite's dbt project standing in for the reader's."""

from __future__ import annotations

import io
import os
import re
import sys
from contextlib import redirect_stdout
from importlib import import_module
from pathlib import Path

import dagster as dg
import duckdb
import polars as pl
import pytest
from infer_dbt import dbt, project_with_tests

PAGE = Path(__file__).parents[1] / "docs" / "infer.md"
#: Tests the shop's data passes, so dbt's build succeeds and the checks beside it run.
PASSING = """
version: 2
models:
  - name: customers
    columns:
      - name: customer_id
        data_tests: [unique, not_null]
  - name: orders
    columns:
      - name: order_id
        data_tests: [not_null, unique]
      - name: status
        data_tests:
          - accepted_values:
              arguments: {values: [open, paid, shipped]}
              config: {severity: warn}
"""
WARN = dg.AssetCheckSeverity.WARN
_FENCE = re.compile(r"^```python([^\n]*)\n(.*?)^```", re.S | re.M)


def blocks(*, executed: bool) -> list[str]:
    """The page's Python blocks the build executes (shown ones only), or the others."""
    found = _FENCE.findall(PAGE.read_text())
    if executed:
        return [code for options, code in found if 'exec="on"' in options and "source=" in options]
    return [code for options, code in found if 'exec="on"' not in options]


def test_the_executed_blocks_print_what_the_page_describes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "page"}
    printed = io.StringIO()
    with redirect_stdout(printed):
        for code in blocks(executed=True):
            exec(compile(code, str(PAGE), "exec", dont_inherit=True), namespace)
    text = printed.getvalue()

    assert "class Orders(dy.Schema):" in text
    assert "    order_id = dy.Int32(primary_key=True)\n" in text
    assert '    placed_at = dy.Datetime(time_unit="us", time_zone="UTC", nullable=True)' in text
    if hasattr(pl, "Map"):  # polars 2 reads a DuckDB MAP as its Map dtype: none in Dataframely
        assert "    # extras: MAP(VARCHAR, INTEGER) has no Dataframely column type" in text
    else:  # polars 1 reads it as a list of key and value structs, which Dataframely has
        assert "    extras = dy.List(\n        dy.Struct(" in text
    assert (
        '    # proposed (3 rows, values 0.00 to 25.00): min=Decimal("0.00"), max=Decimal("25.00")'
        in text
    )
    outcomes = re.findall(r"^(dy_\w+) +(passed|failed)$", text, re.M)
    assert len(outcomes) == 4 and {outcome for _, outcome in outcomes} == {"passed"}
    assert 'Cannot infer a schema for DuckDB table "order"' in text
    # Adopted: a CREATE TABLE AS table's rules, marked, pass; the changed row fails one.
    assert "        min=1,  # learned from the data, " in text
    assert '"C15",' in text  # 16 carriers, listed at is_in_limit=16
    before, after = text.split("after month = 13 in one row:")
    flights = re.findall(r"^flights: (dy_\w+) +(passed|failed, \d+ row)$", before, re.M)
    assert len(flights) == 10 and {outcome for _, outcome in flights} == {"passed"}
    changed = re.findall(r"^flights: (dy_\w+) +(passed|failed, \d+ row)$", after, re.M)
    assert [c for c in changed if c[1] != "passed"] == [("dy_rule__month__max", "failed, 1 row")]
    assert "inferred from asset payments through IO manager 'io_manager'" in text
    assert "    payment_id = dy.Int64(nullable=True)" in text
    assert "    # proposed (3 rows, unique, never null): primary_key=True" in text
    checked = re.findall(r"^payments: (dy_\w+) (passed|failed)$", text, re.M)
    assert checked and {outcome for _, outcome in checked} == {"passed"}
    assert "Closest declared keys: payments" in text
    assert "    - type: primary_key" in text and "data_type: int" in text


def test_the_dbt_examples_write_the_schemas_and_attach_them_to_the_dbt_assets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = project_with_tests(tmp_path, PASSING)
    dbt("build", project)  # the warehouse the first example reads
    manifest = project / "target" / "manifest.json"
    monkeypatch.chdir(tmp_path)  # shop.duckdb, as the examples name it
    monkeypatch.setenv("SHOP_DUCKDB_PATH", str(tmp_path / "shop.duckdb"))
    monkeypatch.setenv("DBT_PROFILES_DIR", str(project))
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    infer, attach = blocks(executed=False)

    namespace: dict[str, object] = {"__name__": "page", "MANIFEST": manifest}
    with redirect_stdout(io.StringIO()) as printed:
        exec(compile(infer, str(PAGE), "exec", dont_inherit=True), namespace)
    assert "class Orders(dy.Schema):" in printed.getvalue()

    # The reader's package of schemas, written as `infer-dbt --output-dir shop/schemas` does.
    from dagster_dataframely.infer import dbt_schemas
    from dagster_dataframely.infer._dbt import write_modules

    package = tmp_path / "shop" / "schemas"
    with duckdb.connect("shop.duckdb", read_only=True) as connection:
        write_modules(dbt_schemas(manifest, connection=connection), package)
    (package.parent / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    # The suite's own `tests/shop.py` may be imported as `shop` already (another test in this
    # worker): the page's package of that name must be the one imported here.
    for name in [m for m in sys.modules if m == "shop" or m.startswith("shop.")]:
        monkeypatch.delitem(sys.modules, name)
    namespace = {"__name__": "page", "MANIFEST": manifest, "PROJECT": str(project)}
    exec(compile(attach, str(PAGE), "exec", dont_inherit=True), namespace)
    defs = namespace["defs"]
    assert isinstance(defs, dg.Definitions)
    result = defs.resolve_implicit_global_asset_job_def().execute_in_process(
        instance=dg.DagsterInstance.ephemeral(), raise_on_error=False
    )

    # dagster-dbt reports each dbt test as a check of the same run: each check that takes one
    # over has its verdict (dbt warns of the unknown status; so does its check).
    outcome = {
        (e.asset_key.to_user_string(), e.check_name): (e.passed, e.passed or e.severity)
        for e in result.get_asset_check_evaluations()
    }
    compared = []
    for model in ("orders", "customers"):
        for test, check in import_module(f"shop.schemas.{model}").DBT_TESTS.items():
            assert outcome[model, check] == outcome[model, test], (test, check)
            compared.append(outcome[model, check])
    assert sorted(compared, key=str) == [(False, WARN)] + [(True, True)] * 4
