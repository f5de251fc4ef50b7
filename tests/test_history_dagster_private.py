"""The Dagster-private facts trends and the report rest on (`_checks/history_internals.py`).

Decisions resting on them: a trend reads the figures of the last evaluations of one check
(`dy_table__trends`), newest first, completed ones only, of one partition key or of all, in
one query per step, through `DagsterInstance.event_log_storage.get_asset_check_execution_history`
(no public reader of a check's history exists). The report reads every check evaluation of a
time window, oldest first, in one query, through the storage's `get_event_records` (the
instance's own is deprecated, and a filter by asset key finds no check evaluation: the event
log stores none on them). If these move or change their order or filters, these tests fail
before a trend compares a run with the wrong history or a report leaves evaluations out.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import dagster as dg

import dagster_dataframely as dd
from dagster_dataframely._checks.history_internals import (
    FIGURES,
    check_evaluations,
    past_figures,
)

KEY = dg.AssetCheckKey(dg.AssetKey("orders"), "dy_table__trends")
REGIONS = dg.StaticPartitionsDefinition(["eu", "us"])


def test_the_storage_reads_one_checks_history_by_status_and_partition() -> None:
    reader = dg.DagsterInstance.event_log_storage.fget  # type: ignore[attr-defined]
    storage = inspect.signature(
        dg.DagsterInstance.ephemeral().event_log_storage.get_asset_check_execution_history
    )

    assert reader is not None
    assert list(storage.parameters) == [
        "check_key",
        "limit",
        "cursor",
        "status",
        "partition_filter",
    ]


def _record(instance: dg.DagsterInstance, rows: int, partition: str | None = None) -> None:
    """One run of a check that records `rows` as its figures, as the trend check does."""

    @dg.asset_check(
        asset="orders", name="dy_table__trends", partitions_def=REGIONS if partition else None
    )
    def trends() -> dg.AssetCheckResult:
        return dg.AssetCheckResult(
            passed=rows < 1000, metadata={FIGURES: dg.MetadataValue.json({":rows": rows})}
        )

    partitions = REGIONS if partition else None
    orders = dg.AssetSpec("orders", partitions_def=partitions)
    job = dg.Definitions(
        assets=[orders], asset_checks=[trends], jobs=[dd.checks_job(trends, name="j")]
    ).resolve_job_def("j")
    job.execute_in_process(instance=instance, partition_key=partition, raise_on_error=False)


def test_the_history_is_newest_first_bounded_and_failed_evaluations_count(tmp_path: Path) -> None:
    with dg.DagsterInstance.local_temp(str(tmp_path)) as instance:
        for rows in (10, 20, 5000, 40):
            _record(instance, rows)

        found = past_figures(instance, KEY, partition=None, limit=3)

    assert [run.figures[":rows"] for run in found] == [40.0, 5000.0, 20.0]


def test_a_partition_key_selects_its_own_evaluations(tmp_path: Path) -> None:
    with dg.DagsterInstance.local_temp(str(tmp_path)) as instance:
        for rows, region in ((1, "eu"), (2, "us"), (3, "eu")):
            _record(instance, rows, region)

        eu = past_figures(instance, KEY, partition="eu", limit=10)
        every = past_figures(instance, KEY, partition=None, limit=10)

    assert [run.figures[":rows"] for run in eu] == [3.0, 1.0]
    assert [run.figures[":rows"] for run in every] == [3.0, 2.0, 1.0]


def test_every_check_evaluation_is_one_query_oldest_first_and_bounded_by_time(
    tmp_path: Path,
) -> None:
    with dg.DagsterInstance.local_temp(str(tmp_path)) as instance:
        for rows in (10, 20):
            _record(instance, rows)
        between = datetime.now(timezone.utc)
        _record(instance, 30, "eu")

        every = check_evaluations(instance, since=None)
        later = check_evaluations(instance, since=between)
        by_asset = instance.event_log_storage.get_event_records(
            dg.EventRecordsFilter(
                event_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION,
                asset_key=dg.AssetKey("orders"),
            )
        )

    def rows(records: Sequence[dg.EventLogRecord]) -> list[Any]:
        events = [record.event_log_entry.dagster_event for record in records]
        data = [event.asset_check_evaluation_data for event in events if event is not None]
        return [(e.metadata[FIGURES].value[":rows"], e.partition) for e in data]  # type: ignore[index]

    assert rows(every) == [(10, None), (20, None), (30, "eu")]
    assert rows(later) == [(30, "eu")]
    # Why the report reads every evaluation and keeps an asset's itself: a filter by asset
    # key finds none.
    assert list(by_asset) == []
