"""Trends of a collection's members: `dy_table__trends` on each member with its own schema
checks, as `dd.schema_checks(trends=)` has it, judging the member's row count, its rules'
failing fractions and the rows each filter removes from it (a fraction of its rows).

A member's figures are complete or its history would read a figure left out as 0: so a
selected trend has every filter on its member evaluated, reported or not.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence

import dagster as dg

from .._checks.specs import trend_spec
from .._checks.trend_history import trend_history
from .._checks.trend_results import TrendHistory
from .._engine.naming import TRENDS_CHECK
from .._engine.trends import Trends
from .collection_filters import Pair
from .collection_members import CollectionRun, Member


def member_trend_specs(
    trend: Trends | None,
    members: Sequence[Member],
    *,
    blocking: bool | None,
    partitions_def: dg.PartitionsDefinition | None,
) -> list[dg.AssetCheckSpec]:
    """The trend check's spec on each member with its own schema checks (a member checked
    elsewhere takes its trend from there)."""
    if trend is None:
        return []
    return [
        trend_spec(trend, asset=m.key, blocking=blocking, partitions_def=partitions_def)
        for m in members
        if m.own_checks
    ]


def member_histories(
    context: dg.AssetCheckExecutionContext, members: Sequence[Member], trend: Trends | None
) -> dict[str, TrendHistory]:
    """member name -> its trend's history, for the members whose trend the run checks: one
    read of the instance each."""
    selected = context.selected_asset_check_keys
    return {
        m.name: found
        for m in members
        if dg.AssetCheckKey(m.key, TRENDS_CHECK) in selected
        and (found := trend_history(context, m.key, trend)) is not None
    }


def read_by_trends(
    run: CollectionRun, trending: Collection[str], selected: Collection[dg.AssetCheckKey]
) -> list[Pair]:
    """The filter pairs the members' trends read that the run did not select."""
    return [
        (rule, member)
        for rule in run.filters
        for member in run.members
        if member.in_filters
        and member.name in trending
        and dg.AssetCheckKey(member.key, rule.check_name) not in selected
    ]


def noting_removed(
    results: Iterable[dg.AssetCheckResult],
    members: Sequence[Member],
    removed: dict[str, dict[str, int]],
) -> Iterator[dg.AssetCheckResult]:
    """`results` (of filter checks), noting in `removed` (member name -> filter check name
    -> rows) the rows each removed from a member `removed` has."""
    names = {member.key: member.name for member in members}
    for result in results:
        name = names.get(result.asset_key) if result.asset_key is not None else None
        if name in removed and result.check_name is not None:
            count = result.metadata["dy_failed_count"]
            removed[name][result.check_name] = int(
                count.value if isinstance(count, dg.MetadataValue) else count  # type: ignore[arg-type]
            )
        yield result
