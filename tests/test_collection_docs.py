"""docs/collections.md runs as written: its Python blocks in order, in one namespace, the
Definitions it builds materialized for real, with the outcomes the page states."""

# No `from __future__ import annotations`: the page defines a Collection in this namespace.
import io
import re
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import dagster as dg

PAGE = Path(__file__).resolve().parents[1] / "docs" / "collections.md"
_FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.S | re.M)


def test_the_collections_page_runs_and_says_what_happens(tmp_path: Path) -> None:
    namespace: dict[str, Any] = {"__name__": "collections_page"}
    printed = io.StringIO()
    with redirect_stdout(printed):
        for block in _FENCE.findall(PAGE.read_text()):
            exec(compile(block.replace("/tmp/shop", str(tmp_path)), str(PAGE), "exec"), namespace)
    # The output the site renders under the example, built from the same run.
    assert sorted(printed.getvalue().splitlines()) == sorted(
        f"{asset:12} {check:28} {severity.value:5} {rows} row(s)"
        for (asset, check), (rows, severity) in FAILING.items()
    )

    result = (
        namespace["defs"]
        .resolve_implicit_global_asset_job_def()
        .execute_in_process(instance=dg.DagsterInstance.ephemeral(), raise_on_error=False)
    )
    assert _failing(result) == FAILING
    assert "revenue" not in {
        e.asset_key.path[-1] for e in result.get_asset_materialization_events()
    }

    # "Members no IO manager stores": orders from DuckDB, customers from parquet, both
    # external assets, through collection_checks(sources=) and with_schemas(source=).
    everything = dg.AssetSelection.all() | dg.AssetSelection.all_asset_checks()
    job = dg.define_asset_job("shop_checks", selection=everything)
    sourced = dg.Definitions.merge(namespace["sourced_defs"], dg.Definitions(jobs=[job]))
    for defs in (namespace["warehouse_defs"], sourced):
        result = defs.resolve_job_def("shop_checks").execute_in_process(
            instance=dg.DagsterInstance.ephemeral(), raise_on_error=False
        )
        assert _failing(result) == FAILING
        assert {e.asset_key.path[-1] for e in result.get_asset_materialization_events()} == {
            "order_lines"
        }


_ERROR, _WARN = dg.AssetCheckSeverity.ERROR, dg.AssetCheckSeverity.WARN
#: The failing checks the page states, as (asset, check) -> (count, severity).
FAILING = {
    ("orders", "dy_filter__order_has_lines"): (1, _ERROR),
    ("order_lines", "dy_filter__order_has_lines"): (1, _ERROR),
    ("orders", "dy_filter__customer_exists"): (1, _WARN),
    ("order_lines", "dy_filter__customer_exists"): (2, _WARN),
}


def _failing(result: dg.ExecuteInProcessResult) -> dict[tuple[str, str], tuple[Any, Any]]:
    return {
        (e.asset_key.to_user_string(), e.check_name): (
            e.metadata["dy_failed_count"].value,
            e.severity,
        )
        for e in result.get_asset_check_evaluations()
        if not e.passed
    }
