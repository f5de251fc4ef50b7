"""The trend check's result, `dy_table__trends`: this run's figures (its row count, each
rule's failing fraction) against the history the sidecar read before evaluating, and the
figures recorded for the runs after it (`dy_trend_figures`, `dy_trend_rules`). The row count
is judged against every past evaluation, the rules' fractions against those that judged the
same rules (`Recorded`)."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import dagster as dg
import polars as pl

from .._engine.catalogue import Rule
from .._engine.display import table
from .._engine.evaluate import Evaluation
from .._engine.naming import TRENDS_CHECK
from .._engine.trends import ROWS, Deviation, Recorded, Trends, deviations, recorded
from . import figures as f
from .history_internals import FIGURES, RULES
from .table_results import SEVERITY

_LISTED = 50


@dataclass(frozen=True)
class TrendHistory:
    """An asset's trend settings and the figures of its last evaluations, newest first."""

    trends: Trends
    history: Sequence[Recorded]


def trend_results(
    trend: TrendHistory | None,
    evaluation: Evaluation,
    rules: Sequence[Rule],
    *,
    asset_key: dg.AssetKey,
    checks: Collection[str] | None = None,
    removed: Mapping[str, int] | None = None,
) -> Iterator[dg.AssetCheckResult]:
    """The trend check's result, when the asset has trends (and `checks` selects it). A
    collection member's `removed` (filter check name -> rows it removed) are figures too,
    as fractions of the member's rows."""
    if trend is None or (checks is not None and TRENDS_CHECK not in checks):
        return
    trends, history = trend.trends, trend.history
    counts = {rule.name: evaluation.failed[rule.name] for rule in rules} | dict(removed or {})
    current = recorded(evaluation.row_count, counts)
    level = SEVERITY[trends.severity]
    metadata: dict[str, Any] = {
        FIGURES: dg.MetadataValue.json(current.figures),
        "dy_history": dg.MetadataValue.int(len(history)),
        f.ROW_COUNT: dg.MetadataValue.int(evaluation.row_count),
    }
    if current.rules is not None:
        metadata[RULES] = current.rules
    needed = trends.min_history - len(history)
    if needed > 0:
        metadata[f.ASSESSMENT] = (
            f"passed: {len(history)} of the {trends.min_history} evaluations a trend needs are "
            f"in the history, {needed} more needed"
        )
        yield _result(asset_key, True, level, trends, metadata)
        return
    found = deviations(trends, current.figures, [run.figures for run in history], [ROWS])
    # A rule absent from a run's figures failed no row there only if that run judged it.
    same = [run.figures for run in history if current.rules and run.rules == current.rules]
    unjudged = _unjudged(trends, current, len(same))
    if not unjudged:
        found += deviations(trends, current.figures, same, list(counts))
    metadata["dy_deviations"] = dg.MetadataValue.int(len(found))
    if found:
        listed = ", ".join(_words(d) for d in found[:3])
        more = f" and {len(found) - 3} more" if len(found) > 3 else ""
        metadata[f.ASSESSMENT] = (
            f"failed at severity {level.value}: {listed}{more}, outside the median ± "
            f"{trends.k:g} * MAD of the last {len(history)} evaluations"
            + (f"; {unjudged}" if unjudged else "")
        )
        metadata["dy_trends"] = table(_table(found), max_rows=_LISTED)
    elif unjudged:
        metadata[f.ASSESSMENT] = f"passed: the row count within its band; {unjudged}"
    yield _result(asset_key, not found, level, trends, metadata)


def skipped_trend_result(
    trends: Trends | None, *, asset_key: dg.AssetKey, reason: str
) -> Iterator[dg.AssetCheckResult]:
    """A passing trend result for a run that had no rows to judge, with `reason` under
    `dy_skipped`; it records no figures, so the runs after it do not count it as history."""
    if trends is not None:
        level = SEVERITY[trends.severity]
        yield _result(asset_key, True, level, trends, {f.SKIPPED: reason})


def _result(
    asset_key: dg.AssetKey,
    passed: bool,
    level: dg.AssetCheckSeverity,
    trends: Trends,
    metadata: Mapping[str, Any],
) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        check_name=TRENDS_CHECK,
        asset_key=asset_key,
        passed=passed,
        severity=level,
        description=trends.description,
        metadata=dict(metadata),
    )


def _unjudged(trends: Trends, current: Recorded, same: int) -> str:
    """Why the rules' fractions are not judged, in words ("" when they are): a run without
    rows has none, and a history with fewer than `min_history` evaluations of the same
    rules (`same`) is not enough (a rule renamed or added has no past fraction, not 0)."""
    if current.rules is None:
        return "no rule's failing fraction in 0 rows"
    if same < trends.min_history:
        return (
            f"not enough history for the rules' failing fractions: {same} of the "
            f"{trends.min_history} evaluations a trend needs judged the same rules, "
            f"{trends.min_history - same} more needed"
        )
    return ""


def _words(deviation: Deviation) -> str:
    if deviation.figure == ROWS:
        return f"{int(deviation.value):,} rows (band {deviation.low:,.0f} to {deviation.high:,.0f})"
    return (
        f"{deviation.figure} failing on {deviation.value:.4%} of rows (band "
        f"{max(deviation.low, 0):.4%} to {deviation.high:.4%})"
    )


def _table(found: Sequence[Deviation]) -> pl.DataFrame:
    return pl.DataFrame(
        [
            ("rows" if d.figure == ROWS else d.figure, d.value, d.median, d.mad, d.low, d.high)
            for d in found
        ],
        schema=["figure", "value", "median", "mad", "low", "high"],
        orient="row",
    )
