"""The Dagster-private facts trends rest on (`_checks/history_internals.py`).

Decision resting on them: a trend reads the figures of the last evaluations of one check
(`dy_table__trends`), newest first, completed ones only, of one partition key or of all, in
one query per step, through `DagsterInstance.event_log_storage.get_asset_check_execution_history`
(no public reader of a check's history exists). If that moves or changes its order or
filters, these fail before a trend compares a run with the wrong history.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import dagster as dg

import dagster_dataframely as dd
from dagster_dataframely._checks.history_internals import FIGURES, past_figures

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
