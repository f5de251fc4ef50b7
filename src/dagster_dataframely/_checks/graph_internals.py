"""The one place that hooks into how Dagster builds a code location's asset graph (private).

A check on a key no definition declares (`dd.schema_checks(Orders, asset="web_order")` for
`web_orders`) is no error to Dagster: while it builds the asset graph it adds a stub asset for
the key (`resolve_stub_assets_defs`, called by `AssetGraph.normalize_assets`), the code
location loads, and the checks sit on a stub nothing materializes. Dagster calls nothing
public with the resolved graph while a code location loads, and `dagster definitions validate`
only loads it, so no public hook can refuse the typo where teams look.

`guard(checks)` marks a sidecar's op and wraps that one function, once: after Dagster has
listed the stubs, a stub that a marked op checks raises `UnknownAssetError` naming the closest
declared keys. Checks of other libraries and stubs of plain dependencies are left alone.
Pinned by `tests/test_graph_dagster_private.py`; if Dagster moves the function, `guard` raises
at once rather than letting a typo pass again.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Sequence

import dagster as dg
from dagster._core.definitions.assets.graph import asset_graph as _asset_graph

from ..errors import UnknownAssetError
from .asset_keys import undeclared_message

_Resolve = Callable[[list[dg.AssetsDefinition]], list[dg.AssetsDefinition]]

#: The ops of this package's checks (the op survives Dagster's copies of a definition), each
#: with the call that made them, `{key}` where the key goes.
_GUARDED: weakref.WeakKeyDictionary[object, str] = weakref.WeakKeyDictionary()
_MARK = "__dagster_dataframely_guard__"


def guard(checks: dg.AssetChecksDefinition, *, by: str) -> dg.AssetChecksDefinition:
    """`checks`, refused at code-location load when a key they check is not declared; `by`
    is the call that made them, for the error (`"dd.schema_checks(asset={key})"`)."""
    _install()
    _GUARDED[checks.node_def] = by
    return checks


def _install() -> None:
    current: _Resolve = _asset_graph.resolve_stub_assets_defs
    if getattr(current, _MARK, False):
        return

    @functools.wraps(current)
    def resolve_stub_assets_defs(
        assets_defs: list[dg.AssetsDefinition],
    ) -> list[dg.AssetsDefinition]:
        stubs = current(assets_defs)
        if stubs:
            _refuse(assets_defs, {key for stub in stubs for key in stub.keys})
        return stubs

    setattr(resolve_stub_assets_defs, _MARK, True)
    _asset_graph.resolve_stub_assets_defs = resolve_stub_assets_defs


def _refuse(assets_defs: Sequence[dg.AssetsDefinition], stubs: set[dg.AssetKey]) -> None:
    """Raise for the first guarded check whose key is one of `stubs`."""
    for assets_def in assets_defs:
        by = _GUARDED.get(assets_def.node_def) if assets_def.is_executable else None
        for spec in assets_def.check_specs:
            if by is not None and spec.asset_key in stubs:
                declared = {key for item in assets_defs for key in item.keys}
                raise UnknownAssetError(undeclared_message(spec.asset_key, declared, by=by))
