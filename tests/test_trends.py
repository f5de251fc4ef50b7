"""Trends across real runs that share one Dagster instance (a persistent DAGSTER_HOME): the
check `dy_table__trends` passes while the history is short, saying how many evaluations it
still needs, then flags a row count or a rule's failing fraction outside the median ± k * MAD
of the last runs, at the severity chosen; per partition key for static partitions; and from
the CLI's multiprocess executor over the same home."""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from support import dg_launch

import dagster_dataframely as dd
from dagster_dataframely.errors import InvalidTableCheckError

TRENDS = "dy_table__trends"
WARN, ERROR = dg.AssetCheckSeverity.WARN, dg.AssetCheckSeverity.ERROR


class Orders(dy.Schema):
    order_id = dy.Int64(primary_key=True)
    amount = dy.Int64(min=0)


def _orders(rows: int, negative: int = 0) -> pl.DataFrame:
    return pl.DataFrame(
        {"order_id": range(rows), "amount": [-1 if i < negative else 5 for i in range(rows)]}
    )


def _checks(frames: dict[str, pl.DataFrame], **settings: Any) -> Any:
    orders = dg.AssetSpec("orders", partitions_def=settings.pop("partitions_def", None))

    def read(context: dg.AssetCheckExecutionContext) -> pl.DataFrame:
        return frames[context.partition_key if context.has_partition_key else "table"]

    checks = dd.schema_checks(Orders, asset=orders, source=read, **settings)
    job = dd.checks_job(checks, name="orders_checks")
    return dg.Definitions(assets=[orders], asset_checks=[checks], jobs=[job]).resolve_job_def(
        "orders_checks"
    )


def _trend(job: Any, instance: dg.DagsterInstance, **run: Any) -> dg.AssetCheckEvaluation:
    result = job.execute_in_process(instance=instance, raise_on_error=False, **run)
    (found,) = [e for e in result.get_asset_check_evaluations() if e.check_name == TRENDS]
    return found


@pytest.fixture
def instance(tmp_path: Path) -> Any:
    with dg.DagsterInstance.local_temp(str(tmp_path)) as found:
        yield found


def test_a_short_history_passes_and_says_how_many_evaluations_it_still_needs(
    instance: dg.DagsterInstance,
) -> None:
    frames = {"table": _orders(100)}
    job = _checks(frames, trends=dd.Trends(min_history=3))

    first, second = (_trend(job, instance) for _ in range(2))

    assert first.passed and second.passed
    assert first.metadata["dy_assessment"].value == (
        "passed: 0 of the 3 evaluations a trend needs are in the history, 3 more needed"
    )
    assert second.metadata["dy_history"].value == 1


def test_a_row_count_outside_the_band_of_the_last_runs_is_flagged(
    instance: dg.DagsterInstance,
) -> None:
    frames: dict[str, pl.DataFrame] = {}
    job = _checks(frames, trends=dd.Trends(window=5, k=3, min_history=5))
    for rows in (100, 104, 98, 101, 99):
        frames["table"] = _orders(rows)
        assert _trend(job, instance).passed

    frames["table"] = _orders(101)  # within 101 ± 3 * 2
    within = _trend(job, instance)
    frames["table"] = _orders(300)
    outside = _trend(job, instance)

    assert within.passed and within.metadata["dy_deviations"].value == 0
    assert (outside.passed, outside.severity) == (False, WARN)
    assert outside.metadata["dy_row_count"].value == 300
    assert outside.metadata["dy_assessment"].value.startswith(
        "failed at severity WARN: 300 rows (band 95 to 107)"
    )  # the last five: 104, 98, 101, 99, 101; median 101, MAD 2


def test_a_rules_failing_fraction_that_jumps_is_flagged_at_the_severity_chosen(
    instance: dg.DagsterInstance,
) -> None:
    frames: dict[str, pl.DataFrame] = {}
    job = _checks(frames, trends={"window": 4, "min_history": 4, "severity": "error"})
    for negative in (1, 2, 1, 1):  # about 1% of 100 rows
        frames["table"] = _orders(100, negative)
        _trend(job, instance)

    frames["table"] = _orders(100, 30)
    jumped = _trend(job, instance)

    assert (jumped.passed, jumped.severity) == (False, ERROR)
    assert "amount|min failing on 30.0000% of rows" in jumped.metadata["dy_assessment"].value
    rows = jumped.metadata["dy_trends"].records  # type: ignore[attr-defined]
    assert [row.data["figure"] for row in rows] == ["amount|min"]


def test_a_static_partition_is_compared_with_its_own_history(
    instance: dg.DagsterInstance,
) -> None:
    regions = dg.StaticPartitionsDefinition(["eu", "us"])
    frames = {"eu": _orders(100), "us": _orders(10_000)}
    job = _checks(frames, trends=dd.Trends(min_history=2), partitions_def=regions)
    for _ in range(2):
        for region in ("eu", "us"):
            _trend(job, instance, partition_key=region)

    eu, us = (_trend(job, instance, partition_key=region) for region in ("eu", "us"))

    assert eu.passed and us.passed  # each like its own past, however unlike the other
    assert (eu.partition, eu.metadata["dy_history"].value) == ("eu", 2)


def test_a_run_of_the_trend_alone_still_judges_every_rule(
    instance: dg.DagsterInstance,
) -> None:
    """A rule left out of the figures would read as 0 against a history of 2%."""
    frames = {"table": _orders(100, negative=2)}
    every = dd.Trends(window=3, min_history=3)
    for _ in range(3):
        _trend(_checks(frames, trends=every), instance)

    orders = dg.Definitions(
        assets=[dg.AssetSpec("orders")],
        asset_checks=[
            dd.schema_checks(Orders, asset="orders", source=lambda _: frames["table"], trends=every)
        ],
        jobs=[
            dg.define_asset_job(
                "trend_alone",
                selection=dg.AssetSelection.checks(dg.AssetCheckKey(dg.AssetKey("orders"), TRENDS)),
            )
        ],
    )
    alone = _trend(orders.resolve_job_def("trend_alone"), instance)

    assert alone.passed, alone.metadata.get("dy_assessment")
    assert alone.metadata["dy_trend_figures"].value["amount|min"] == 0.02


@pytest.mark.parametrize(
    ("trends", "message"),
    [
        ({"window": 1}, r"window is a whole number of runs, 2 or more"),
        ({"k": 0}, r"k, the band's width in MADs, is a positive number"),
        ({"min_history": 30}, r"min_history is a whole number of runs from 1 to window"),
        ({"severity": "loud"}, r"severity='loud': give 'warn'"),
        ({"span": 3}, r"trends= for asset orders is \{'span': 3\}: pass dd.Trends"),
    ],
)
def test_trends_no_history_can_judge_are_refused(trends: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidTableCheckError, match=message):
        dd.schema_checks(Orders, asset="orders", trends=trends)


LOCATION = """\
from pathlib import Path

import dagster as dg
import dataframely as dy
import polars as pl

import dagster_dataframely as dd

orders = dg.AssetSpec("orders")


class Orders(dy.Schema):
    order_id = dy.Int64(primary_key=True)


def read(context: dg.AssetCheckExecutionContext) -> pl.DataFrame:
    rows = int((Path(__file__).parent / "rows.txt").read_text())
    return pl.DataFrame({"order_id": range(rows)})


checks = dd.schema_checks(Orders, asset=orders, source=read, trends=dd.Trends(min_history=3))
defs = dg.Definitions(
    assets=[orders], asset_checks=[checks], jobs=[dd.checks_job(checks, name="orders_checks")]
)
"""


def test_the_cli_reads_the_history_its_home_holds(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "location.py").write_text(LOCATION)
    location: dict[str, Any] = {"__file__": str(tmp_path / "location.py")}
    exec(compile(LOCATION, "location.py", "exec"), location)
    with dg.DagsterInstance.from_config(str(home)) as instance:
        for rows in (50, 52, 51):
            (tmp_path / "rows.txt").write_text(str(rows))
            location["defs"].resolve_job_def("orders_checks").execute_in_process(instance=instance)

    (tmp_path / "rows.txt").write_text("5000")
    launched, _ = dg_launch(tmp_path, "orders_checks")

    assert launched.returncode == 0, (launched.stdout + launched.stderr)[-3000:]
    with dg.DagsterInstance.from_config(str(home)) as instance:
        latest = instance.get_runs(limit=1)[0]
        logged = instance.all_logs(latest.run_id)
    found = [
        e for e in logged if e.dagster_event_type == dg.DagsterEventType.ASSET_CHECK_EVALUATION
    ]
    # The step ran in a process of its own, which read the history from the home's storage.
    assert any("multiprocess executor" in e.message for e in logged)
    (trend,) = [
        e.dagster_event.event_specific_data  # type: ignore[union-attr]
        for e in found
        if e.dagster_event.event_specific_data.check_name == TRENDS  # type: ignore[union-attr]
    ]
    assert (trend.passed, trend.severity) == (False, WARN)
    assert trend.metadata["dy_history"].value == 3
    assert trend.metadata["dy_assessment"].value.startswith("failed at severity WARN: 5,000 rows")


def _rule_named(name: str) -> type[dy.Schema]:
    """`Orders` with one schema-level rule, `name`: the amount is not negative."""

    def rule(cls: Any) -> pl.Expr:
        return pl.col("amount") >= 0

    rule.__name__ = name
    return type(
        "Orders",
        (dy.Schema,),
        {"order_id": dy.Int64(primary_key=True), "amount": dy.Int64(), name: dy.rule()(rule)},
    )


def _run_with(
    schema: type[dy.Schema], frame: pl.DataFrame, instance: dg.DagsterInstance
) -> dg.AssetCheckEvaluation:
    checks = dd.schema_checks(
        schema,
        asset="orders",
        source=lambda _: frame,
        trends=dd.Trends(window=3, min_history=3),
    )
    defs = dg.Definitions(
        assets=[dg.AssetSpec("orders")],
        asset_checks=[checks],
        jobs=[dd.checks_job(checks, name="orders_checks")],
    )
    return _trend(defs.resolve_job_def("orders_checks"), instance)


def test_a_renamed_rule_has_not_enough_history_rather_than_a_history_of_zeros(
    instance: dg.DagsterInstance,
) -> None:
    """Three runs with `positive` failing on 10% of rows; the same rule renamed has no past
    fraction, not a past of 0%, so it raises no alarm. Runs that judged it, failing no row,
    are its history of zeros."""
    tenth, clean = _orders(100, negative=10), _orders(100)
    for _ in range(3):
        assert _run_with(_rule_named("positive"), tenth, instance).passed

    renamed = _run_with(_rule_named("not_negative"), tenth, instance)
    for _ in range(3):
        _run_with(_rule_named("not_negative"), clean, instance)
    jumped = _run_with(_rule_named("not_negative"), tenth, instance)

    assert renamed.passed, renamed.metadata["dy_assessment"].value
    assert renamed.metadata["dy_assessment"].value == (
        "passed: the row count within its band; not enough history for the rules' failing "
        "fractions: 0 of the 3 evaluations a trend needs judged the same rules, 3 more needed"
    )
    assert (jumped.passed, jumped.severity) == (False, WARN)
    assert jumped.metadata["dy_assessment"].value.startswith(
        "failed at severity WARN: not_negative failing on 10.0000% of rows "
        "(band 0.0000% to 0.0000%)"
    )
