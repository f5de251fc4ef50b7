"""The Dagster-private facts the sidecar rests on (`_checks/step_internals.py`).

Decisions resting on them: the sidecar loads through the run's own IO manager resource and
hands it the config the run resolved (`context.resource_config`), as Dagster does for a step's
own inputs; if this breaks, database IO managers (dagster-duckdb) fail to load with a KeyError.
"""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
import dagster as dg

from dagster_dataframely._checks.step_internals import resource_config


class Store(dg.ConfigurableResource):
    root: str
    depth: int = 2


def test_a_check_step_reads_the_resolved_config_of_a_resource_it_requires() -> None:
    seen = {}

    @dg.asset_check(asset="orders", required_resource_keys={"store"})
    def probe(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckResult:
        seen.update(resource_config(context, "store"))
        return dg.AssetCheckResult(passed=True)

    defs = dg.Definitions(
        assets=[dg.AssetSpec("orders")],
        asset_checks=[probe],
        resources={"store": Store.configure_at_launch()},
        jobs=[dg.define_asset_job("probe", selection=dg.AssetSelection.checks(probe))],
    )
    defs.resolve_job_def("probe").execute_in_process(
        run_config={"resources": {"store": {"config": {"root": "/lake"}}}}
    )

    assert seen == {"root": "/lake", "depth": 2}
