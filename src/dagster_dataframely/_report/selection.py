"""Which assets a report shows: Dagster's asset selection syntax, resolved against the asset
graph of the definitions when given, else against the keys the instance has evaluations of.

The instance knows keys, not the graph: without definitions, a selection may name keys
(`orders`, `key:sales/*`) and combine them (`and`, `or`, `not`); lineage (`+orders`), groups,
tags, kinds and owners need the definitions, and are refused with that fix rather than
silently matching nothing.
"""

from __future__ import annotations

import difflib
import re
import warnings
from collections.abc import Callable

import dagster as dg

from ..errors import UnmatchedSelectionError

#: A selection that needs the graph: lineage (`+`, `roots(`, `sinks(`) or an attribute other
#: than `key:`.
_NEEDS_GRAPH = re.compile(r"\+|\b(?:roots|sinks)\s*\(|\b(?!key:)[a-z_]+:")


def selector(
    selection: str | None, definitions: dg.Definitions | None
) -> Callable[[set[dg.AssetKey]], set[dg.AssetKey]]:
    """A function from the keys with evaluations to those `selection` keeps (all without
    one); it raises `UnmatchedSelectionError` for a selection that keeps none."""

    def select(keys: set[dg.AssetKey]) -> set[dg.AssetKey]:
        if selection is None:
            return keys
        if definitions is None and _NEEDS_GRAPH.search(selection):
            raise UnmatchedSelectionError(
                f"The asset selection {selection!r} needs the asset graph (lineage, groups, "
                "tags, kinds and owners are in the definitions, not the instance): pass the "
                "code location's definitions (--defs package.module:defs, or definitions= in "
                "Python), or select by key: 'orders', 'key:sales/*', 'a or b', 'not c'."
            )
        # The keys alone are a graph of external assets: `not`, which selects from all
        # assets, must count them (include_sources, a beta parameter: the package, not the
        # user, chose it, so its warning is not the user's to read).
        graph = (
            definitions
            if definitions is not None
            else dg.Definitions(assets=[dg.AssetSpec(key) for key in keys])
        ).resolve_asset_graph()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", dg.BetaWarning)
                parsed = dg.AssetSelection.from_string(selection, include_sources=True)
                chosen = set(parsed.resolve(graph)) & keys
        except dg.DagsterInvalidSubsetError:  # a key the graph does not have
            chosen = set()
        except dg.DagsterError as error:
            raise UnmatchedSelectionError(
                f"The asset selection {selection!r} is not in Dagster's selection syntax: "
                f"{error}. Write keys as 'orders' or 'key:sales/orders', combined with "
                "'and', 'or', 'not'."
            ) from error
        if not chosen:
            names = sorted(key.to_user_string() for key in keys)
            close = difflib.get_close_matches(selection.removeprefix("key:"), names, n=3)
            near = ", ".join(close) if close else ", ".join(names[:5])
            raise UnmatchedSelectionError(
                f"The asset selection {selection!r} matches no asset with check evaluations "
                f"in the instance; {'closest' if close else 'some of the'} keys it has: {near}."
            )
        return chosen

    return select
