"""`observe_fractions=True` in real runs over one Dagster instance: each check step also yields
one observation per asset it checked, carrying every check's `dy_failed_fraction` (the number
its result carries) and the rows checked, which the asset's Plots tab graphs over time; of the
run's partition for a partitioned asset, per member for a collection; off by default, on from
the environment variable."""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from dagster.components.testing import DefsFolderSandbox
from shop import Shop, shop_frames
from support import materialize_project, scaffold_checks

import dagster_dataframely as dd

MIN = "dy_failed_fraction/dy_rule__amount__min"


class Orders(dy.Schema):
    order_id = dy.Int64(primary_key=True)
    amount = dy.Int64(min=0)


def orders(rows: int, negative: int) -> pl.DataFrame:
    return pl.DataFrame(
        {"order_id": range(rows), "amount": [-1 if i < negative else 5 for i in range(rows)]}
    )


def run_checks(checks: Any, instance: dg.DagsterInstance, **run: Any) -> dg.ExecuteInProcessResult:
    keys = {key.asset_key for key in checks.check_keys}
    defs = dg.Definitions(
        assets=[dg.AssetSpec(key, partitions_def=run.pop("partitions_def", None)) for key in keys],
        asset_checks=[checks],
        jobs=[dd.checks_job(checks, name="checks")],
    )
    return defs.resolve_job_def("checks").execute_in_process(
        instance=instance, raise_on_error=False, **run
    )


def observed(instance: dg.DagsterInstance, key: str) -> list[dict[str, Any]]:
    """The observations of asset `key`, oldest first, as metadata values."""
    records = instance.fetch_observations(dg.AssetKey(key), limit=100).records
    return [
        {name: value.value for name, value in record.asset_observation.metadata.items()}
        | {"partition": record.asset_observation.partition}
        for record in reversed(records)
        if record.asset_observation is not None
    ]


def test_each_run_observes_the_fraction_its_check_reports(tmp_path: Any) -> None:
    frames: dict[str, pl.DataFrame] = {}
    checks = dd.schema_checks(
        Orders, asset="orders", source=lambda _: frames["orders"], observe_fractions=True
    )
    reported = []
    with dg.DagsterInstance.local_temp(str(tmp_path)) as instance:
        for negative in (1, 3, 40):
            frames["orders"] = orders(200, negative)
            result = run_checks(checks, instance)
            (check,) = [
                e
                for e in result.get_asset_check_evaluations()
                if e.check_name == "dy_rule__amount__min"
            ]
            reported.append(check.metadata["dy_failed_fraction"].value)
        found = observed(instance, "orders")

    assert reported == [0.005, 0.015, 0.2]
    assert [o[MIN] for o in found] == reported
    assert all(o["dy_row_count"] == 200 for o in found)
    assert all(o["dy_failed_fraction/dy_rule__primary_key"] == 0 for o in found)
    assert "dy_failed_fraction/dy_schema__columns" not in found[0]  # a column check: no fraction


def test_nothing_is_observed_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    instance = dg.DagsterInstance.ephemeral()
    frame = orders(10, 1)

    run_checks(dd.schema_checks(Orders, asset="orders", source=lambda _: frame), instance)
    assert observed(instance, "orders") == []

    monkeypatch.setenv("DAGSTER_DATAFRAMELY_OBSERVE_FRACTIONS", "true")
    run_checks(dd.schema_checks(Orders, asset="orders", source=lambda _: frame), instance)
    assert [o[MIN] for o in observed(instance, "orders")] == [0.1]


def test_a_partition_is_observed_as_that_partition() -> None:
    regions = dg.StaticPartitionsDefinition(["eu", "us"])
    frames = {"eu": orders(10, 1), "us": orders(10, 5)}
    checks = dd.schema_checks(
        Orders,
        asset="orders",
        source=lambda context: frames[context.partition_key],
        partitions_def=regions,
        observe_fractions=True,
    )
    instance = dg.DagsterInstance.ephemeral()

    for region in ("eu", "us"):
        run_checks(checks, instance, partitions_def=regions, partition_key=region)

    assert [(o["partition"], o[MIN]) for o in observed(instance, "orders")] == [
        ("eu", 0.1),
        ("us", 0.5),
    ]


def test_a_collection_observes_each_member_with_its_filters() -> None:
    frames = shop_frames()
    members = {"customers": "customers", "orders": "orders", "lines": "order_lines"}
    checks = dd.collection_checks(
        Shop,
        members=members,
        sources={m: (lambda _, m=m: frames[m]) for m in members},
        observe_fractions=True,
    )
    instance = dg.DagsterInstance.ephemeral()

    run_checks(checks, instance)

    (orders_seen,) = observed(instance, "orders")
    assert orders_seen["dy_failed_fraction/dy_rule__amount__min"] == pytest.approx(1 / 6)
    assert orders_seen["dy_failed_fraction/dy_filter__order_has_lines"] > 0
    assert len(observed(instance, "order_lines")) == 1 and len(observed(instance, "customers")) == 1


def test_the_pictures_location_observes_a_quiet_week_and_the_day_the_form_broke(
    tmp_path: Path,
) -> None:
    """`dagster_dataframely_demo.plotted`, which `make screenshots` plots: the picture shows
    what these runs observe."""
    from dagster_dataframely_demo.plotted import BAD_EMAILS, ROWS, materialize_days

    instance = dg.DagsterInstance.ephemeral()
    materialize_days(instance, str(tmp_path))

    found = [o["dy_failed_fraction/dy_rule__email__regex"] for o in observed(instance, "payments")]
    assert found == [bad / ROWS for bad in BAD_EMAILS]
    assert max(found) > 0.1 > sorted(found)[-2]  # one day above the error tolerance


ORDERS_ASSET = """\
import dagster as dg
import polars as pl


@dg.asset
def orders() -> pl.DataFrame:
    return pl.DataFrame({"order_id": [1, 2, 3, 4], "amount": [5, -1, 5, 5]})
"""


def test_the_component_observes_when_its_yaml_says_so(
    sandbox: DefsFolderSandbox, tmp_path: Path
) -> None:
    (sandbox.defs_folder_path / "assets.py").write_text(ORDERS_ASSET)
    entry = {"asset": "orders", "schema": "test_observe_fractions:Orders"}
    scaffold_checks(sandbox, {"checks": [entry], "observe_fractions": True})

    result = materialize_project(sandbox, tmp_path)

    (observation,) = [
        e.event_specific_data.asset_observation  # type: ignore[union-attr]
        for e in result.all_events
        if e.event_type == dg.DagsterEventType.ASSET_OBSERVATION
    ]
    assert observation.metadata[MIN].value == 0.25
