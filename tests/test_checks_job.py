"""`dd.checks_job`: the checks of a table, partitioned external `dg.AssetSpec`s included, run
from the real CLI (`dg launch --job ... --partition ...` with a DAGSTER_HOME), by a schedule
over the partitions, and from `dd.with_schemas(checks_job=...)`."""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
from datetime import datetime, timezone
from pathlib import Path

import dagster as dg
import polars as pl
import pytest
from support import dg_launch

import dagster_dataframely as dd
from dagster_dataframely.data import OrdersSchema, defective_orders, storefront_orders
from dagster_dataframely.errors import ChecksJobError

DAILY = dg.DailyPartitionsDefinition(start_date="2024-01-01")

LOCATION = """\
import dagster as dg
import polars as pl

import dagster_dataframely as dd
from dagster_dataframely.data import OrdersSchema, defective_orders, storefront_orders

daily = dg.DailyPartitionsDefinition(start_date="2024-01-01")
# A table another tool writes, one partition a day: nothing here materializes it.
events = dg.AssetSpec("events", partitions_def=daily)


def read_events(context: dg.AssetCheckExecutionContext) -> pl.DataFrame:
    context.log.info(f"reading events of {context.partition_key}")
    return defective_orders() if context.partition_key == "2024-01-02" else storefront_orders()


events_checks = dd.schema_checks(OrdersSchema, asset=events, source=read_events)
job = dd.checks_job(events_checks, name="events_checks")
defs = dg.Definitions(
    assets=[events],
    asset_checks=[events_checks],
    jobs=[job],
    schedules=[dg.build_schedule_from_partitioned_job(job)],
)
"""


def _read(context: dg.AssetCheckExecutionContext) -> pl.DataFrame:
    return defective_orders() if context.partition_key == "2024-01-02" else storefront_orders()


def _evaluations(instance: dg.DagsterInstance, run_id: str) -> list[dg.AssetCheckEvaluation]:
    return [
        entry.dagster_event.event_specific_data  # type: ignore[union-attr,misc]
        for entry in instance.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION)
    ]


def test_dg_launch_checks_one_partition_of_an_external_table(tmp_path: Path) -> None:
    (tmp_path / "location.py").write_text(LOCATION)

    launched, home = dg_launch(tmp_path, "events_checks", partition="2024-01-02")

    output = launched.stdout + launched.stderr
    assert "reading events of 2024-01-02" in output
    with dg.DagsterInstance.from_config(str(home)) as instance:
        (run,) = instance.get_runs()
        evaluations = _evaluations(instance, run.run_id)
    assert run.job_name == "events_checks"
    assert run.tags["dagster/partition"] == "2024-01-02"
    assert {e.partition for e in evaluations} == {"2024-01-02"}
    assert {e.asset_key for e in evaluations} == {dg.AssetKey("events")}
    by_name = {e.check_name: e for e in evaluations}
    assert len(by_name) == len(dd.wiring.rules(OrdersSchema)) + 1
    assert by_name["dy_rule__primary_key"].metadata["dy_failed_count"].value == 2
    # The defective partition fails its blocking checks, and so the run: as a run of the
    # checks beside a materialization would.
    assert run.status == dg.DagsterRunStatus.FAILURE, output[-3000:]
    assert launched.returncode != 0


def test_a_schedule_checks_the_partition_of_the_day_before() -> None:
    location: dict[str, object] = {}
    exec(compile(LOCATION, "location.py", "exec"), location)
    defs = location["defs"]
    assert isinstance(defs, dg.Definitions)
    dg.Definitions.validate_loadable(defs)
    schedule = defs.resolve_schedule_def("events_checks_schedule")

    with dg.build_schedule_context(
        scheduled_execution_time=datetime(2024, 1, 4, tzinfo=timezone.utc)
    ) as context:
        (request,) = schedule.evaluate_tick(context).run_requests or []
    result = defs.resolve_job_def("events_checks").execute_in_process(
        partition_key=request.partition_key
    )

    assert request.partition_key == "2024-01-03"
    assert result.success
    evaluated = result.get_asset_check_evaluations()
    assert {e.partition for e in evaluated} == {"2024-01-03"}
    assert all(e.passed for e in evaluated)


def test_with_schemas_adds_a_job_of_its_checks_alone(tmp_path: Path) -> None:
    @dg.asset
    def orders() -> pl.DataFrame:
        return defective_orders()

    @dg.asset(deps=[orders])
    def revenue() -> None:
        raise AssertionError("a checks job materializes nothing")

    io_manager = dd.ParquetIOManager(base_dir=str(tmp_path))
    dg.materialize([orders], resources={"io_manager": io_manager})
    defs = dd.with_schemas(
        dg.Definitions(assets=[orders, revenue], resources={"io_manager": io_manager}),
        {"orders": OrdersSchema},
        checks_job="orders_checks",
    )

    result = defs.resolve_job_def("orders_checks").execute_in_process(raise_on_error=False)

    assert result.get_asset_materialization_events() == []
    evaluated = result.get_asset_check_evaluations()
    assert {e.asset_key for e in evaluated} == {dg.AssetKey("orders")}
    assert not {e.check_name: e for e in evaluated}["dy_rule__primary_key"].passed


def test_checks_partitioned_differently_are_refused_with_one_job_each_as_the_fix() -> None:
    partitioned = dd.schema_checks(
        OrdersSchema, asset=dg.AssetSpec("events", partitions_def=DAILY), source=_read
    )
    unpartitioned = dd.schema_checks(OrdersSchema, asset="orders")

    with pytest.raises(ChecksJobError) as refused:
        dd.checks_job(partitioned, unpartitioned, name="both")

    message = str(refused.value)
    assert "dd.checks_job(name='both') was given checks partitioned differently" in message
    assert "unpartitioned: orders:dy_schema__columns and" in message
    assert "Make one dd.checks_job per partitions definition" in message


def test_anything_but_checks_is_refused() -> None:
    @dg.asset
    def orders() -> None: ...

    with pytest.raises(ChecksJobError, match="takes asset checks"):
        dd.checks_job(orders, name="orders_checks")  # type: ignore[arg-type]
    with pytest.raises(ChecksJobError, match="was given no checks"):
        dd.checks_job(name="nothing")
