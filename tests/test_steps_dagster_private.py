"""The Dagster-private fact a step of many assets rests on (`_checks/step_internals.py`).

Decision resting on it: a step that checks many assets reads their latest materializations in
one read of the instance (`fetch_latest_materializations`), where Dagster would read them one
asset at a time while recording each check's evaluation. If this breaks, a step's evaluations
would record other materializations than Dagster's own, or the step would read asset by asset
again.
"""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
from typing import Any

import dagster as dg
import pytest

from dagster_dataframely._checks.step_internals import fetch_latest_materializations

KEYS = [dg.AssetKey(name) for name in ("made", "also_made", "never_made")]


def _targets(instance: dg.DagsterInstance, prefetch: bool) -> tuple[dict[dg.AssetKey, Any], int]:
    """Each asset's evaluated target materialization, and how many asset-record reads the
    check step made."""

    @dg.multi_asset_check(
        specs=[dg.AssetCheckSpec("probe", asset=key) for key in KEYS], can_subset=True
    )
    def probes(context: dg.AssetCheckExecutionContext):
        if prefetch:
            fetch_latest_materializations(context, KEYS)
        for key in KEYS:
            yield dg.AssetCheckResult(asset_key=key, check_name="probe", passed=True)

    reads = []
    reading = dg.DagsterInstance.get_asset_records

    def counted(self: dg.DagsterInstance, keys: Any = None) -> Any:
        reads.append(keys)
        return reading(self, keys)

    defs = dg.Definitions(
        assets=[dg.AssetSpec(key) for key in KEYS],
        asset_checks=[probes],
        jobs=[dg.define_asset_job("probes", selection=dg.AssetSelection.checks(probes))],
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(dg.DagsterInstance, "get_asset_records", counted)
        result = defs.resolve_job_def("probes").execute_in_process(instance=instance)
    targets = {
        e.asset_key: e.target_materialization_data for e in result.get_asset_check_evaluations()
    }
    return targets, len(reads)


def test_a_steps_latest_materializations_are_read_at_once_and_recorded_the_same() -> None:
    with dg.instance_for_test() as instance:
        for key in KEYS[:2]:
            instance.report_runless_asset_event(dg.AssetMaterialization(asset_key=key))
        one_by_one, reads_one_by_one = _targets(instance, prefetch=False)
        at_once, reads_at_once = _targets(instance, prefetch=True)

    assert reads_one_by_one == len(KEYS) and reads_at_once == 1
    assert at_once == one_by_one
    assert at_once[KEYS[0]] is not None and at_once[KEYS[0]].storage_id is not None
    assert at_once[KEYS[2]] is None
