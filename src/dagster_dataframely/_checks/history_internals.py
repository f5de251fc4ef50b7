"""The one place that reads checks' past evaluations from the Dagster instance (private).

A trend compares this run's figures with those of the last evaluations of the asset's
`dy_table__trends` check; the report reads every check's. Dagster has no public reader of a
check's history: the instance's event-log storage has one (`get_asset_check_execution_history`,
what the UI's check history shows), newest first, filtered by status and partition, and its
`get_event_records` reads every check evaluation of a time window in one query (the
instance's own `get_event_records` is deprecated; it is the storage's, and the event log
stores no asset key on a check evaluation, so a filter by asset finds none). Both are reached
through `DagsterInstance.event_log_storage`. Pinned by `tests/test_history_dagster_private.py`:
if Dagster moves or reshapes them, that test names the decision resting on them (trends read
one check's history in one query per step; the report reads all checks' in one query).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import dagster as dg
from dagster._core.event_api import PartitionKeyFilter
from dagster._core.storage.asset_check_execution_record import (
    COMPLETED_ASSET_CHECK_EXECUTION_RECORD_STATUSES,
)

from .._engine.trends import Recorded

#: The metadata keys of the figures a trend check records for the runs after it, and of the
#: digest of the rules it judged (`Recorded`).
FIGURES = "dy_trend_figures"
RULES = "dy_trend_rules"


def past_figures(
    instance: dg.DagsterInstance,
    check: dg.AssetCheckKey,
    *,
    partition: str | None,
    limit: int,
) -> list[Recorded]:
    """The figures the last `limit` completed evaluations of `check` recorded, newest first:
    of `partition` only when one is given (else of every partition). One query."""
    records = instance.event_log_storage.get_asset_check_execution_history(
        check,
        limit=limit,
        status=set(COMPLETED_ASSET_CHECK_EXECUTION_RECORD_STATUSES),
        partition_filter=None if partition is None else PartitionKeyFilter(key=partition),
    )
    found: list[Recorded] = []
    for record in records:
        recorded = _recorded(record.event)
        if recorded is not None:
            found.append(recorded)
    return found


def check_evaluations(
    instance: dg.DagsterInstance, *, since: datetime | None
) -> Sequence[dg.EventLogRecord]:
    """Every check evaluation the instance stores (since `since`, when given), oldest first.
    One query, whatever the number of assets and checks."""
    return instance.event_log_storage.get_event_records(
        dg.EventRecordsFilter(
            event_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION,
            after_timestamp=None if since is None else since.timestamp(),
        ),
        limit=None,
        ascending=True,
    )


def _recorded(event: Any) -> Recorded | None:
    """The figures an evaluation event carries; None for an evaluation that recorded none (an
    error before any figure, or a result written by an older version)."""
    data = getattr(getattr(event, "dagster_event", None), "event_specific_data", None)
    metadata = getattr(data, "metadata", {})
    figures = getattr(metadata.get(FIGURES), "data", None)
    if not isinstance(figures, Mapping):
        return None
    rules = getattr(metadata.get(RULES), "text", None)
    return Recorded(
        {str(name): float(number) for name, number in figures.items()},
        rules if isinstance(rules, str) else None,
    )
