"""The history a trend is judged against, read once per step from the run's Dagster
instance: the sidecar, the gated asset and the hand-wired calls all read it here.

Which history: the last `window` evaluations of the asset's `dy_table__trends` of the run's
partition key, or of every partition for an unpartitioned run or a time window (each
evaluation one window's figures: yesterday's volume against the days before).
"""

from __future__ import annotations

import dagster as dg

from .._engine.naming import TRENDS_CHECK
from .._engine.trends import Trends
from ..errors import InvalidSettingError
from .history_internals import past_figures
from .table_results import partition_end
from .trend_results import TrendHistory

#: A context that holds the run's instance and partition.
RunContext = dg.AssetExecutionContext | dg.OpExecutionContext | dg.AssetCheckExecutionContext


def trend_history(
    context: RunContext, key: dg.AssetKey, trends: Trends | None
) -> TrendHistory | None:
    """The past figures of `key`'s trend check, one read of the instance (None without
    `trends`)."""
    if trends is None:
        return None
    found = past_figures(
        context.instance,
        dg.AssetCheckKey(key, TRENDS_CHECK),
        partition=history_partition(context),
        limit=trends.window,
    )
    return TrendHistory(trends, found)


def history_partition(context: RunContext) -> str | None:
    """The partition key whose evaluations a trend compares with: the run's (its first, for
    a range of keys); None, every partition, for an unpartitioned run or a time window."""
    if not (context.has_partition_key or context.has_partition_key_range):
        return None
    if partition_end(context) is not None:
        return None
    return context.partition_keys[0]


def required_history(
    context: RunContext | None, key: dg.AssetKey, trends: Trends | None, *, by: str
) -> TrendHistory | None:
    """`trend_history`, for a call (`by`) that was given `trends`: without a context to read
    the history from, an error that names the fix."""
    if trends is None:
        return None
    if context is None:
        raise InvalidSettingError(
            f"{by} for asset {key.to_user_string()} got trends= but no context: a trend "
            "judges this run against the check's past evaluations, which only the run's "
            "Dagster instance holds. Pass the run's context (context=context in the asset "
            "or check that makes the call); under direct invocation, call the asset with "
            "dg.build_asset_context(instance=...)."
        )
    if not isinstance(context, RunContext):
        raise InvalidSettingError(
            f"{by} for asset {key.to_user_string()} got context={type(context).__name__}: it "
            "reads the trend's history from the instance and partition of the run, so it takes "
            "the context of the asset or check that makes the call (context=context), not "
            "an instance or another value."
        )
    return trend_history(context, key, trends)
