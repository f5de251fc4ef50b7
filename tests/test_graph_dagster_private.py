"""The Dagster-private fact the load-time refusal of a misspelled key rests on
(`_checks/graph_internals.py`).

Decision resting on it: a sidecar on a key no definition declares fails the code location's
load (and `dagster definitions validate`). Dagster lists the stub assets it adds for keys only
a check names in `resolve_stub_assets_defs`, looked up in the module of `AssetGraph` each time
it builds a graph; if that moves, a typo checks nothing again, silently.
"""

from __future__ import annotations

import dagster as dg
from dagster._core.definitions.assets.graph import asset_graph

import dagster_dataframely as dd
from dagster_dataframely.data import OrdersSchema


def test_dagster_lists_the_stub_of_a_checked_key_in_the_function_the_guard_wraps() -> None:
    @dg.asset_check(asset="ordres")
    def probe() -> dg.AssetCheckResult:
        return dg.AssetCheckResult(passed=True)

    stubs = asset_graph.resolve_stub_assets_defs(
        [dg.AssetsDefinition(specs=[dg.AssetSpec("orders")]), probe]
    )

    assert [stub.keys for stub in stubs] == [{dg.AssetKey("ordres")}]
    assert all(stub.is_auto_created_stub for stub in stubs)


def test_the_guard_is_installed_once_and_in_effect_for_every_graph() -> None:
    dd.schema_checks(OrdersSchema, asset="orders")
    installed = asset_graph.resolve_stub_assets_defs
    dd.schema_checks(OrdersSchema, asset="refunds")

    assert asset_graph.resolve_stub_assets_defs is installed
    assert installed.__wrapped__.__module__ == "dagster._core.definitions.resolved_asset_deps"  # type: ignore[attr-defined]
