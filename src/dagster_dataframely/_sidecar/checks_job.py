"""`dd.checks_job`: a job that runs only checks, so every sidecar has a CLI path.

`dagster asset materialize --select events` refuses a table that nothing in the code location
materializes (an external `dg.AssetSpec`), and a job that selects only checks gets no
partitions: Dagster infers a job's partitions from the assets it materializes, and refuses a
partition key without them. The job here takes the checks' partitions through its config
instead (a `dg.PartitionedConfig` that adds no run config), so
`dg launch --job <name> --partition <key>` and `dg.build_schedule_from_partitioned_job` work
for the checks of a partitioned table another tool writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import dagster as dg

from ..errors import ChecksJobError

if TYPE_CHECKING:  # what `dg.define_asset_job` returns; Dagster exports no name for it
    from dagster._core.definitions.unresolved_asset_job_definition import (
        UnresolvedAssetJobDefinition,
    )


def checks_job(
    *checks: dg.AssetChecksDefinition,
    name: str,
    description: str | None = None,
    tags: Mapping[str, str] | None = None,
    executor_def: dg.ExecutorDefinition | None = None,
) -> UnresolvedAssetJobDefinition:
    """A job that runs `checks` (what `dd.schema_checks`, `dd.collection_checks` return)
    and nothing else.

    When the checks are partitioned, the job is partitioned the same way, also for an external
    `dg.AssetSpec`, and a run checks the partition it is launched for:
    `dg launch --job <name> --partition 2024-01-02`, or a schedule from
    `dg.build_schedule_from_partitioned_job(job)`. Checks partitioned differently are refused
    (`ChecksJobError`): give each partitions definition a job of its own.

    Example:
        ```python
        events = dg.AssetSpec("events", partitions_def=daily)
        events_checks = dd.schema_checks(Events, asset=events, source=read_events)
        defs = dg.Definitions(
            assets=[events],
            asset_checks=[events_checks],
            jobs=[dd.checks_job(events_checks, name="events_checks")],
        )
        ```
    """
    if not checks:
        raise ChecksJobError(
            f"dd.checks_job(name={name!r}) was given no checks. Pass what dd.schema_checks or "
            "dd.collection_checks return: dd.checks_job(orders_checks, name=...)."
        )
    stray = [repr(item) for item in checks if not isinstance(item, dg.AssetChecksDefinition)]
    if stray:
        raise ChecksJobError(
            f"dd.checks_job(name={name!r}) takes asset checks (what dd.schema_checks returns), "
            f"not {', '.join(stray)[:300]}. To run assets and their checks, use "
            "dg.define_asset_job."
        )
    return dg.define_asset_job(
        name,
        selection=dg.AssetSelection.checks(*checks),
        config=_partitioned(checks, name),
        description=description or _description(checks),
        tags=tags,
        executor_def=executor_def,
    )


def _partitioned(
    checks: tuple[dg.AssetChecksDefinition, ...], name: str
) -> dg.PartitionedConfig[Any] | None:
    """The job's partitions as config, or None when no check is partitioned."""
    by_partitions: dict[dg.PartitionsDefinition | None, list[str]] = {}
    for item in checks:
        for spec in item.check_specs:
            shown = f"{spec.asset_key.to_user_string()}:{spec.name}"
            by_partitions.setdefault(spec.partitions_def, []).append(shown)
    if len(by_partitions) > 1:
        listed = "; ".join(
            f"{'unpartitioned' if partitions is None else partitions}: {keys[0]}"
            + (f" and {len(keys) - 1} more" if len(keys) > 1 else "")
            for partitions, keys in by_partitions.items()
        )
        raise ChecksJobError(
            f"dd.checks_job(name={name!r}) was given checks partitioned differently ({listed}), "
            "but one run checks one partition. Make one dd.checks_job per partitions definition."
        )
    (partitions_def,) = by_partitions
    if partitions_def is None:
        return None
    return dg.PartitionedConfig(
        partitions_def=partitions_def, run_config_for_partition_key_fn=_no_run_config
    )


def _no_run_config(_partition_key: str) -> dict[str, Any]:
    """The checks need no run config: a run's partition key alone says what they read."""
    return {}


def _description(checks: tuple[dg.AssetChecksDefinition, ...]) -> str:
    keys = sorted({spec.asset_key.to_user_string() for c in checks for spec in c.check_specs})
    shown = ", ".join(keys[:10]) + (f" and {len(keys) - 10} more" if len(keys) > 10 else "")
    return f"The dagster-dataframely checks of {shown}, without materializing anything."
