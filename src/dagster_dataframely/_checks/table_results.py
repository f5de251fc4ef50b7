"""The table checks' results: `dy_table__row_count` and `dy_table__freshness`,
judged from the figures of the rules' evaluation (its row count and the newest timestamp),
each carried as a number (`dy_row_count`, `dy_age_seconds`) the check's history lists.
The sidecar judges the stored table, the gated asset the rows its function returned; both
measure freshness from the end of the run's time-window partition (`partition_end`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from datetime import datetime, timezone
from typing import Any

import dagster as dg

from .._engine.evaluate import Evaluation
from .._engine.naming import FRESHNESS_CHECK, ROW_COUNT_CHECK
from .._engine.table_checks import ExpectFresh, ExpectRows, TableChecks
from . import figures as f

SEVERITY = {"error": dg.AssetCheckSeverity.ERROR, "warn": dg.AssetCheckSeverity.WARN}


def table_results(
    table: TableChecks,
    evaluation: Evaluation,
    *,
    asset_key: dg.AssetKey,
    reference: datetime | None = None,
    checks: Collection[str] | None = None,
) -> Iterator[dg.AssetCheckResult]:
    """The result of each table check (of `checks`, when given). Freshness is measured from
    `reference` (the partition's end), else from now."""
    if table.rows is not None and (checks is None or ROW_COUNT_CHECK in checks):
        yield _volume(table.rows, evaluation.row_count, asset_key)
    if table.fresh is not None and (checks is None or FRESHNESS_CHECK in checks):
        newest = evaluation.maxima.get(table.fresh.column)
        at = reference or datetime.now(timezone.utc)
        yield _freshness(table.fresh, newest, at, asset_key, evaluation.row_count)


def partition_end(
    context: dg.AssetCheckExecutionContext | dg.AssetExecutionContext | dg.OpExecutionContext,
) -> datetime | None:
    """The end of the run's time-window partition (of the last, for a range): what a
    freshness check measures from. None for an unpartitioned run or other partitions."""
    if not (context.has_partition_key or context.has_partition_key_range):
        return None
    try:
        return context.partition_time_window.end
    except Exception:  # not a time-window partition: Dagster raises its own check error
        return None


def failed_at_error(results: Iterable[dg.AssetCheckResult]) -> list[dg.AssetCheckResult]:
    """The results of `results` that failed at `ERROR`."""
    return [
        result
        for result in results
        if not result.passed and result.severity == dg.AssetCheckSeverity.ERROR
    ]


def skipped_table_results(
    table: TableChecks, *, asset_key: dg.AssetKey, reason: str
) -> Iterator[dg.AssetCheckResult]:
    """A passing result per table check of a run that had no rows to judge (its function
    returned None), with `reason` under `dy_skipped`."""
    declared = {ROW_COUNT_CHECK: table.rows, FRESHNESS_CHECK: table.fresh}
    for name, check in declared.items():
        if check is not None:
            metadata = {f.EXPECTED: dg.MetadataValue.text(str(check)), f.SKIPPED: reason}
            yield _result(name, check, True, metadata, asset_key)


def _volume(rows: ExpectRows, count: int, asset_key: dg.AssetKey) -> dg.AssetCheckResult:
    passed = rows.judge(count)
    metadata: dict[str, Any] = {
        f.ROW_COUNT: dg.MetadataValue.int(count),
        f.EXPECTED: dg.MetadataValue.text(str(rows)),
    }
    if not passed:
        metadata[f.ASSESSMENT] = (
            f"failed at severity {SEVERITY[rows.severity].value}: {count:,} rows, expected {rows}"
        )
    return _result(ROW_COUNT_CHECK, rows, passed, metadata, asset_key)


def _freshness(
    fresh: ExpectFresh, newest: Any, at: datetime, asset_key: dg.AssetKey, rows: int
) -> dg.AssetCheckResult:
    metadata: dict[str, Any] = {
        f.EXPECTED: dg.MetadataValue.text(str(fresh)),
        "dy_within_seconds": dg.MetadataValue.float(fresh.within.total_seconds()),
        "dy_reference": dg.MetadataValue.text(at.astimezone(timezone.utc).isoformat()),
    }
    severity = SEVERITY[fresh.severity].value
    if newest is None:
        passed = False
        metadata[f.ASSESSMENT] = (
            f"failed at severity {severity}: no {fresh.column} value in {rows:,} rows"
        )
    else:
        instant = fresh.instant(newest)
        age = at - instant
        passed = age <= fresh.within
        metadata[f.NEWEST] = dg.MetadataValue.text(instant.isoformat())
        metadata[f.AGE_SECONDS] = dg.MetadataValue.float(age.total_seconds())
        if not passed:
            metadata[f.ASSESSMENT] = (
                f"failed at severity {severity}: the newest {fresh.column} is {age} old at "
                f"{at.isoformat()}, more than {fresh.within}"
            )
    return _result(FRESHNESS_CHECK, fresh, passed, metadata, asset_key)


def _result(
    name: str,
    check: ExpectRows | ExpectFresh,
    passed: bool,
    metadata: dict[str, Any],
    asset_key: dg.AssetKey,
) -> dg.AssetCheckResult:
    """A table check's result, at the check's severity."""
    return dg.AssetCheckResult(
        check_name=name,
        asset_key=asset_key,
        passed=passed,
        severity=SEVERITY[check.severity],
        description=check.description,
        metadata=metadata,
    )
