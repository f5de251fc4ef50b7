"""A collection member's schema checks under `dd.collection_checks` include its schema's
table checks (`dd.expect_rows`, `dd.expect_fresh`), as `dd.schema_checks` reports them, and
`tolerate=` overrides a member's tolerances as it does on `dd.schema_checks`: real runs."""

# No `from __future__ import annotations`: Dataframely reads the member annotations.
from datetime import datetime
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest

import dagster_dataframely as dd
from dagster_dataframely.errors import CollectionMemberError, InvalidToleranceError

ERROR, WARN = dg.AssetCheckSeverity.ERROR, dg.AssetCheckSeverity.WARN


@dd.expect_rows(min=100)
@dd.expect_fresh("ordered_at", within="1d", severity="warn")
@dd.tolerate("amount|min", warn_above=5)
class Orders(dy.Schema):
    order_id = dy.Int64(primary_key=True)
    amount = dy.Int64(min=0)
    ordered_at = dy.Datetime()


class Lines(dy.Schema):
    order_id = dy.Int64(primary_key=True)
    line_no = dy.Int64(primary_key=True)


class Shop(dy.Collection):
    orders: dy.LazyFrame[Orders]
    lines: dy.LazyFrame[Lines]

    @dy.filter()
    def order_has_lines(self) -> pl.LazyFrame:
        return self.orders.join(self.lines, on="order_id", how="semi")


MEMBERS = {"orders": "orders", "lines": "order_lines"}


@dg.asset
def orders() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "order_id": [1, 2, 3],
            "amount": [5, -1, 7],
            "ordered_at": [datetime(2020, 1, day) for day in (1, 2, 3)],
        }
    )


@dg.asset
def order_lines() -> pl.DataFrame:
    return pl.DataFrame({"order_id": [1, 2, 3], "line_no": [1, 1, 1]})


def _checks(tmp_path: Path, **settings: Any) -> dict[tuple[str, str], dg.AssetCheckEvaluation]:
    checks = dd.collection_checks(Shop, members=MEMBERS, **settings)
    result = dg.materialize(
        [orders, order_lines, checks],
        resources={"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path))},
        raise_on_error=False,
    )
    return {
        (e.asset_key.to_user_string(), e.check_name): e
        for e in result.get_asset_check_evaluations()
    }


def test_a_members_volume_and_freshness_checks_are_reported(tmp_path: Path) -> None:
    checks = _checks(tmp_path)

    rows = checks[("orders", "dy_table__row_count")]
    fresh = checks[("orders", "dy_table__freshness")]
    assert (rows.passed, rows.severity) == (False, ERROR)
    assert rows.metadata["dy_assessment"].value == (
        "failed at severity ERROR: 3 rows, expected at least 100 rows"
    )
    assert (fresh.passed, fresh.severity) == (False, WARN)
    assert fresh.metadata["dy_newest"].value == "2020-01-03T00:00:00+00:00"
    # Lines declares no table check; the schema's tolerance still holds on orders.
    assert not any(name.startswith("dy_table__") for member, name in checks if member == "lines")
    assert checks[("orders", "dy_rule__amount__min")].passed


def test_the_table_checks_are_declared_blocking_by_their_severity() -> None:
    checks = dd.collection_checks(Shop, members=MEMBERS)
    specs = {(s.asset_key.to_user_string(), s.name): s for s in checks.check_specs}

    assert specs[("orders", "dy_table__row_count")].blocking
    assert not specs[("orders", "dy_table__freshness")].blocking


def test_tolerate_overrides_a_members_tolerance_for_these_checks(tmp_path: Path) -> None:
    strict = {"orders": {"amount|min": dd.Tolerance(warn_above=0, error_above=0)}}
    relaxed = {"orders": {"amount": dd.Tolerance(warn_above="50%")}}

    failed = _checks(tmp_path / "strict", tolerate=strict)[("orders", "dy_rule__amount__min")]
    passed = _checks(tmp_path / "relaxed", tolerate=relaxed)[("orders", "dy_rule__amount__min")]
    declared = dd.collection_checks(Shop, members=MEMBERS, tolerate=strict).check_specs

    assert (failed.passed, failed.severity) == (False, ERROR)
    assert passed.passed
    assert passed.metadata["dy_assessment"].value.startswith("passed within its tolerance")
    assert [s.blocking for s in declared if s.name == "dy_rule__amount__min"] == [True]


def test_tolerate_for_a_member_these_checks_do_not_report_is_refused() -> None:
    tolerance = {"amount|min": dd.Tolerance(warn_above=1)}

    with pytest.raises(
        CollectionMemberError, match="tolerate= names members whose schema"
    ) as not_a_member:
        dd.collection_checks(Shop, members=MEMBERS, tolerate=tolerance)  # not keyed by member
    with pytest.raises(CollectionMemberError, match=r"checks these do not report: orders"):
        dd.collection_checks(
            Shop, members=MEMBERS, tolerate={"orders": tolerance}, skip_schema_checks=["orders"]
        )
    with pytest.raises(InvalidToleranceError, match="Lines"):
        dd.collection_checks(Shop, members=MEMBERS, tolerate={"lines": tolerance})
    assert "tolerate={'<member>': {'<rule or column>'" in str(not_a_member.value)


def test_freshness_of_a_time_partition_is_measured_from_its_end(tmp_path: Path) -> None:
    days = dg.DailyPartitionsDefinition(start_date="2020-01-01")

    @dg.asset(name="orders", partitions_def=days)
    def daily_orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        start = context.partition_time_window.start.replace(tzinfo=None)
        return pl.DataFrame({"order_id": [1], "amount": [5], "ordered_at": [start]})

    @dg.asset(name="order_lines", partitions_def=days)
    def daily_lines() -> pl.DataFrame:
        return pl.DataFrame({"order_id": [1], "line_no": [1]})

    checks = dd.collection_checks(Shop, members=MEMBERS, partitions_def=days)
    result = dg.materialize(
        [daily_orders, daily_lines, checks],
        partition_key="2020-01-02",
        resources={"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path))},
        raise_on_error=False,
    )
    (fresh,) = [e for e in result.get_asset_check_evaluations() if e.check_name.endswith("ness")]

    assert fresh.passed  # a day old at the partition's end, years old now
    assert fresh.metadata["dy_reference"].value == "2020-01-03T00:00:00+00:00"
