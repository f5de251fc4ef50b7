"""Trends on a gated asset and on the hand-wired calls, in real runs over one persistent
Dagster instance: `dd.asset(trends=)` judges the row count and each rule's failing fraction of
the rows its function returned against the last evaluations of `dy_table__trends`, passing
while the history is short. A jump flagged at `WARN` writes the table and flags it; one at
`ERROR` stops the write as a failing table check does (`ValidationAbortError` naming the check
and the fix, the quarantine written first, the table keeping its previous rows). A partitioned
asset compares a partition key with its own history; `validation_results` and `check_results`
read the history from the context they are given, and without one refuse `trends=` at the call;
a `dg launch` run (the multiprocess executor) reads the history its DAGSTER_HOME holds."""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from support import dg_launch, evaluations, materialized, step_error

import dagster_dataframely as dd
from dagster_dataframely.errors import InvalidSettingError, InvalidTableCheckError

TRENDS = "dy_table__trends"
ERROR, WARN = dg.AssetCheckSeverity.ERROR, dg.AssetCheckSeverity.WARN
REGIONS = dg.StaticPartitionsDefinition(["eu", "us"])


class Orders(dy.Schema):
    id = dy.Int64(primary_key=True)
    amount = dy.Int64(min=0)


def orders(rows: int, *, negative: int = 0) -> pl.DataFrame:
    """`rows` orders, the last `negative` of them with a negative amount."""
    return pl.DataFrame(
        {"id": range(rows), "amount": [-1 if i >= rows - negative else 10 for i in range(rows)]},
        schema={"id": pl.Int64, "amount": pl.Int64},
    )


@pytest.fixture
def instance(tmp_path: Path) -> Iterator[dg.DagsterInstance]:
    (tmp_path / "home").mkdir()
    with dg.DagsterInstance.local_temp(str(tmp_path / "home")) as found:
        yield found


def gated(frames: dict[str, pl.DataFrame | None], **settings: Any) -> dg.AssetsDefinition:
    """A gated `orders` returning `frames["orders"]`, which a test changes between runs."""

    @dd.asset(Orders, name="orders", **settings)
    def orders_asset() -> pl.DataFrame | None:
        return frames["orders"]

    return orders_asset


def run(
    asset: dg.AssetsDefinition, instance: dg.DagsterInstance, tmp_path: Path, **run: Any
) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [asset],
        instance=instance,
        resources={"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path / "store"))},
        raise_on_error=False,
        **run,
    )


def test_a_short_history_passes_and_says_how_many_evaluations_it_needs(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    frames: dict[str, pl.DataFrame | None] = {"orders": orders(100)}
    asset = gated(frames, trends=dd.Trends(min_history=3))
    spec = next(s for s in asset.check_specs if s.name == TRENDS)
    assert not spec.blocking  # severity "warn" by default

    first = evaluations(run(asset, instance, tmp_path))[TRENDS]
    frames["orders"] = None  # no source data: the trend is skipped and records no figures
    skipped = evaluations(run(asset, instance, tmp_path))[TRENDS]
    frames["orders"] = orders(100)
    third = evaluations(run(asset, instance, tmp_path))[TRENDS]

    assert first.passed and skipped.passed and third.passed
    assert first.metadata["dy_assessment"].value == (
        "passed: 0 of the 3 evaluations a trend needs are in the history, 3 more needed"
    )
    assert first.metadata["dy_trend_figures"].value == {":rows": 100.0}
    assert "returned None" in skipped.metadata["dy_skipped"].value
    assert "dy_trend_figures" not in skipped.metadata
    assert third.metadata["dy_history"].value == 1  # the skipped run is no history
    assert third.metadata["dy_assessment"].value.endswith("2 more needed")


def test_a_row_count_jump_at_warn_writes_the_table_and_flags_it(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    frames: dict[str, pl.DataFrame | None] = {}
    asset = gated(frames, trends=dd.Trends(window=3, min_history=3))
    for rows in (100, 104, 98):
        frames["orders"] = orders(rows)
        assert evaluations(run(asset, instance, tmp_path))[TRENDS].passed

    frames["orders"] = orders(400)
    result = run(asset, instance, tmp_path)

    assert result.success and materialized(result) == {"orders"}
    assert pl.read_parquet(tmp_path / "store" / "orders.parquet").height == 400
    judged = evaluations(result)[TRENDS]
    assert (judged.passed, judged.severity) == (False, WARN)
    assert judged.metadata["dy_assessment"].value == (
        "failed at severity WARN: 400 rows (band 94 to 106), outside the median ± 3 * MAD of "
        "the last 3 evaluations"
    )


def test_a_rule_fraction_jump_at_error_stops_the_write_after_the_quarantine(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    frames: dict[str, pl.DataFrame | None] = {}
    trends = dd.Trends(window=4, min_history=4, severity="error")
    asset = gated(frames, quarantine=True, trends=trends)
    assert next(s for s in asset.check_specs if s.name == TRENDS).blocking
    for negative in (1, 2, 1, 2):  # 1-2% of the rows quarantined on every run
        frames["orders"] = orders(100, negative=negative)
        assert run(asset, instance, tmp_path).success

    frames["orders"] = orders(100, negative=30)
    result = run(asset, instance, tmp_path)

    assert not result.success
    assert materialized(result) == {"orders_quarantine"}  # written first, as on every run
    store = tmp_path / "store"
    assert pl.read_parquet(store / "orders_quarantine.parquet").height == 30
    assert pl.read_parquet(store / "orders.parquet").height == 98  # the previous table
    judged = evaluations(result)[TRENDS]
    assert (judged.passed, judged.severity) == (False, ERROR)
    assert judged.metadata["dy_trend_figures"].value == {":rows": 100.0, "amount|min": 0.3}
    name, message = step_error(result)
    assert name == "ValidationAbortError"
    assert "Asset orders was not written: 1 table check(s) failed at ERROR" in message
    assert "dy_table__trends: amount|min failing on 30.0000% of rows" in message
    assert "orders_quarantine" in message
    assert "widen the trend's band (dd.Trends(k=...) on trends=)" in message


def test_each_partition_key_is_judged_against_its_own_history(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    frames: dict[str, pl.DataFrame | None] = {}
    asset = gated(frames, trends=dd.Trends(window=3, min_history=3), partitions_def=REGIONS)
    assert next(s for s in asset.check_specs if s.name == TRENDS).partitions_def == REGIONS
    for _ in range(3):  # eu holds about 100 orders, us about 1,000
        for region, rows in (("eu", 100), ("us", 1_000)):
            frames["orders"] = orders(rows)
            run(asset, instance, tmp_path, partition_key=region)

    frames["orders"] = orders(1_000)
    eu = evaluations(run(asset, instance, tmp_path, partition_key="eu"))[TRENDS]
    us = evaluations(run(asset, instance, tmp_path, partition_key="us"))[TRENDS]

    assert (eu.passed, eu.severity) == (False, WARN)
    assert eu.metadata["dy_history"].value == 3
    assert "1,000 rows (band 100 to 100)" in eu.metadata["dy_assessment"].value
    assert us.passed and us.metadata["dy_history"].value == 3


def test_a_time_window_is_judged_against_the_windows_before_it(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    days = dg.DailyPartitionsDefinition(start_date="2024-01-01")
    frames: dict[str, pl.DataFrame | None] = {}
    asset = gated(frames, trends=dd.Trends(window=3, min_history=3), partitions_def=days)
    for day, rows in (("2024-01-01", 100), ("2024-01-02", 104), ("2024-01-03", 98)):
        frames["orders"] = orders(rows)
        run(asset, instance, tmp_path, partition_key=day)

    frames["orders"] = orders(30)
    judged = evaluations(run(asset, instance, tmp_path, partition_key="2024-01-04"))[TRENDS]

    assert (judged.passed, judged.severity) == (False, WARN)
    assert judged.metadata["dy_history"].value == 3  # yesterday's volume against the days before


def wired(
    trends: dd.Trends, frames: dict[str, pl.DataFrame]
) -> tuple[dg.AssetsDefinition, dg.AssetChecksDefinition]:
    """A hand-wired gate of `orders` (its trend from `validation_results`) and a check step
    of its own on `stored_orders` (its trend from `check_results`), returning and reading
    `frames["orders"]` and `frames["stored"]`, which a test changes between runs."""

    @dg.asset(
        name="orders",
        check_specs=dd.wiring.check_specs(Orders, asset="orders", trends=trends),
        output_required=False,
    )
    def orders_asset(context: dg.AssetExecutionContext) -> dd.wiring.AssetYield:
        yield from dd.wiring.validation_results(
            Orders, frames["orders"], valid_key=context.asset_key, trends=trends, context=context
        )

    key = dg.AssetKey("stored_orders")

    @dg.multi_asset_check(specs=dd.wiring.check_specs(Orders, asset=key, trends=trends))
    def stored_checks(context: dg.AssetCheckExecutionContext) -> Iterator[dg.AssetCheckResult]:
        yield from dd.wiring.check_results(
            Orders, frames["stored"], asset_key=key, trends=trends, context=context
        )

    return orders_asset, stored_checks


def test_the_hand_wired_calls_judge_trends_from_the_context_they_are_given(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    frames: dict[str, pl.DataFrame] = {}
    gate, checks = wired(dd.Trends(window=3, min_history=3, severity="error"), frames)
    both = dg.AssetSelection.assets(gate) | dg.AssetSelection.checks(checks)
    job = dg.Definitions(
        assets=[gate, dg.AssetSpec("stored_orders")],
        asset_checks=[checks],
        jobs=[dg.define_asset_job("both", selection=both)],
        resources={"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path / "store"))},
    ).resolve_job_def("both")

    def materialize() -> dg.ExecuteInProcessResult:
        return job.execute_in_process(instance=instance, raise_on_error=False)

    for negative in (1, 2, 1):
        frames.update(orders=orders(100), stored=orders(100, negative=negative))
        trended = [e for e in materialize().get_asset_check_evaluations() if e.check_name == TRENDS]
        assert len(trended) == 2 and all(e.passed for e in trended)

    frames.update(orders=orders(20), stored=orders(100, negative=40))
    result = materialize()

    judged = {
        e.asset_key.to_user_string(): e
        for e in result.get_asset_check_evaluations()
        if e.check_name == TRENDS
    }
    assert (judged["orders"].passed, judged["orders"].severity) == (False, ERROR)
    assert judged["orders"].metadata["dy_row_count"].value == 20
    assert (judged["stored_orders"].passed, judged["stored_orders"].severity) == (False, ERROR)
    assert "amount|min failing on 40.0000% of rows" in (
        judged["stored_orders"].metadata["dy_assessment"].value
    )
    assert "orders" not in materialized(result)  # the gate's trend at ERROR stopped the write
    assert pl.read_parquet(tmp_path / "store" / "orders.parquet").height == 100


def test_trends_without_a_context_are_refused_at_the_call_with_the_fix() -> None:
    trends = dd.Trends()

    with pytest.raises(InvalidSettingError) as checked:
        dd.wiring.check_results(Orders, orders(5), asset_key="orders", trends=trends)
    with pytest.raises(InvalidSettingError) as validated:
        dd.wiring.validation_results(Orders, orders(5), valid_key="orders", trends=trends)

    assert str(checked.value).startswith(
        "check_results for asset orders got trends= but no context"
    )
    assert "Pass the run's context (context=context" in str(validated.value)
    with dg.instance_for_test() as instance, pytest.raises(InvalidSettingError) as wrong:
        dd.wiring.check_results(
            Orders,
            orders(5),
            asset_key="orders",
            trends=trends,
            context=instance,  # type: ignore[arg-type]
        )
    assert "got context=DagsterInstance" in str(wrong.value)
    assert "(context=context)" in str(wrong.value)
    # a call whose selection leaves the trend out needs no history
    found = dd.wiring.check_results(
        Orders, orders(5), asset_key="orders", trends=trends, checks=["dy_rule__amount__min"]
    )
    assert [r.check_name for r in found] == ["dy_schema__columns", "dy_rule__amount__min"]


def test_a_gated_asset_invoked_directly_needs_a_context_for_its_trend() -> None:
    without = gated({"orders": orders(5)}, trends=dd.Trends())

    @dd.asset(Orders, trends=dd.Trends())
    def with_context(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return orders(5)

    with pytest.raises(InvalidSettingError, match=r"dg\.build_asset_context"):
        list(without())
    with dg.instance_for_test() as instance:
        events = list(with_context(dg.build_asset_context(instance=instance)))
    (trend,) = [e for e in events if isinstance(e, dg.AssetCheckResult) and e.check_name == TRENDS]
    assert trend.passed and trend.metadata["dy_history"].value == 0


def test_a_trend_that_is_not_a_trends_value_fails_at_definition() -> None:
    with pytest.raises(InvalidTableCheckError, match=r"pass dd\.Trends"):
        gated({}, trends={"window": 5, "band": 3})


LOCATION = """\
from pathlib import Path

import dagster as dg
import dataframely as dy
import polars as pl

import dagster_dataframely as dd

HERE = Path(__file__).parent


class Orders(dy.Schema):
    id = dy.Int64(primary_key=True)
    amount = dy.Int64(min=0)


@dd.asset(Orders, name="orders", trends=dd.Trends(window=3, min_history=3))
def orders() -> pl.DataFrame:
    return pl.read_parquet(HERE / "orders.parquet")


defs = dg.Definitions(
    assets=[orders],
    jobs=[dg.define_asset_job("orders_job", selection=[orders])],
    resources={"io_manager": dd.ParquetIOManager(base_dir=str(HERE / "store"))},
)
"""


def test_the_cli_judges_a_gated_asset_from_the_history_its_home_holds(tmp_path: Path) -> None:
    """Three runs in process, then one from `dg launch` (the multiprocess executor) with a
    jump, over the same DAGSTER_HOME: the step's own process reads the history."""
    (tmp_path / "location.py").write_text(LOCATION)
    home = tmp_path / "home"
    home.mkdir()
    frames: dict[str, pl.DataFrame | None] = {}
    asset = gated(frames, trends=dd.Trends(window=3, min_history=3))
    with dg.DagsterInstance.from_config(str(home)) as instance:
        for rows in (100, 104, 98):
            frames["orders"] = orders(rows)
            assert run(asset, instance, tmp_path).success
    orders(400).write_parquet(tmp_path / "orders.parquet")

    launched, _ = dg_launch(tmp_path, "orders_job")

    assert launched.returncode == 0, launched.stderr[-2000:]

    with dg.DagsterInstance.from_config(str(home)) as instance:
        latest = instance.get_runs(limit=1)[0]
        logged = instance.all_logs(latest.run_id)
    assert any("multiprocess executor" in e.message for e in logged)
    (judged,) = [
        e.dagster_event.event_specific_data  # type: ignore[union-attr]
        for e in logged
        if e.dagster_event_type == dg.DagsterEventType.ASSET_CHECK_EVALUATION
        and e.dagster_event.event_specific_data.check_name == TRENDS  # type: ignore[union-attr]
    ]
    assert judged.metadata["dy_history"].value == 3
    assert (judged.passed, judged.severity) == (False, WARN)
    assert judged.metadata["dy_row_count"].value == 400
    assert pl.read_parquet(tmp_path / "store" / "orders.parquet").height == 400  # written
