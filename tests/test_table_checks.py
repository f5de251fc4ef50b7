"""Table checks in real runs: the volume (`dy_table__row_count`) and the freshness of the data
(`dy_table__freshness`) of a table, or of the run's partition, each a check of its own that
fails at the severity declared, blocks downstream only at `ERROR`, and carries its figure as
a number each evaluation records; on a parquet table through the IO manager and on a DuckDB
table read through the resource (the newest timestamp found in the rules' one aggregate
query)."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from dagster.components.testing import DefsFolderSandbox
from hypothesis import given, settings
from hypothesis import strategies as st
from support import (
    evaluations,
    load_error,
    logs,
    materialize_project,
    materialized,
    scaffold_checks,
    stored_table,
)

import dagster_dataframely as dd
from dagster_dataframely.errors import InvalidTableCheckError

ERROR, WARN = dg.AssetCheckSeverity.ERROR, dg.AssetCheckSeverity.WARN
ROWS, FRESH = "dy_table__row_count", "dy_table__freshness"
UTC = dt.timezone.utc


@dd.expect_rows(min=3, max=1_000)
@dd.expect_fresh("ordered_at", within="1d")
class Orders(dy.Schema):
    id = dy.Int64(primary_key=True)
    amount = dy.Int64(min=0)
    ordered_at = dy.Datetime(nullable=True)


def _orders(rows: int = 5, *, newest: dt.datetime | None = None) -> pl.DataFrame:
    """`rows` valid orders, an hour apart, the newest at `newest` (naive UTC; default now)."""
    last = newest or dt.datetime.now(UTC).replace(tzinfo=None)
    return pl.DataFrame(
        {
            "id": range(rows),
            "amount": [10] * rows,
            "ordered_at": [last - dt.timedelta(hours=rows - 1 - i) for i in range(rows)],
        },
        schema={"id": pl.Int64, "amount": pl.Int64, "ordered_at": pl.Datetime("us")},
    )


@dg.asset(deps=["orders"])
def downstream() -> None:
    """Reads the checked table; runs only when no blocking check failed at ERROR."""


def _run(tmp_path: Path, source: str, frame: pl.DataFrame, **checks: Any) -> Any:
    """Materialize `orders` (parquet through the IO manager, or a DuckDB table the asset
    writes itself), its checks with `checks` settings, and `downstream`."""
    stored, resources, reader = stored_table(tmp_path, source, "orders", frame)
    built = dd.schema_checks(Orders, asset=stored, **reader, **checks)
    instance = dg.DagsterInstance.ephemeral()
    result = dg.materialize(
        [stored, built, downstream], resources=resources, raise_on_error=False, instance=instance
    )
    return instance, result


SOURCES = pytest.mark.parametrize("source", ["parquet", "duckdb"])


@SOURCES
def test_volume_and_freshness_are_checks_of_their_own_with_their_figures_as_numbers(
    tmp_path: Path, source: str
) -> None:
    newest = dt.datetime.now(UTC).replace(tzinfo=None, microsecond=0) - dt.timedelta(hours=2)

    _, result = _run(tmp_path, source, _orders(5, newest=newest))

    checked = evaluations(result)
    assert checked[ROWS].passed and checked[FRESH].passed
    assert checked[ROWS].metadata["dy_row_count"] == dg.MetadataValue.int(5)
    assert checked[ROWS].metadata["dy_expected"].value == "between 3 and 1,000 rows"
    age = checked[FRESH].metadata["dy_age_seconds"]
    assert isinstance(age, dg.FloatMetadataValue)
    assert 7200 <= age.value < 7200 + 600  # two hours, and the time the run took
    assert checked[FRESH].metadata["dy_newest"].value == newest.replace(tzinfo=UTC).isoformat()
    assert "downstream" in materialized(result)


@SOURCES
def test_the_newest_value_is_found_in_the_rules_pass(tmp_path: Path, source: str) -> None:
    instance, result = _run(tmp_path, source, _orders(5))

    assert evaluations(result)[FRESH].passed
    if source == "duckdb":  # one aggregate query: the counts and the newest timestamp
        sent = [line for line in logs(instance, result) if "Pushed down to DuckDB" in line]
        assert any('MAX("ordered_at")' in line and "COUNT(*)" in line for line in sent), sent


@SOURCES
@pytest.mark.parametrize(
    ("severity", "level", "blocked"), [("error", ERROR, True), ("warn", WARN, False)]
)
def test_a_table_outside_its_bounds_fails_at_the_severity_chosen(
    tmp_path: Path, source: str, severity: str, level: dg.AssetCheckSeverity, blocked: bool
) -> None:
    rows = dd.ExpectRows(min=10, severity=severity)  # type: ignore[arg-type]

    _, result = _run(tmp_path, source, _orders(5), expect_rows=rows)

    checked = evaluations(result)[ROWS]
    assert (checked.passed, checked.severity) == (False, level)
    assert checked.metadata["dy_assessment"].value == (
        f"failed at severity {level.value}: 5 rows, expected at least 10 rows"
    )
    assert ("downstream" not in materialized(result)) == blocked


@SOURCES
def test_stale_data_fails_freshness_and_blocks(tmp_path: Path, source: str) -> None:
    old = dt.datetime.now(UTC).replace(tzinfo=None) - dt.timedelta(days=3)

    _, result = _run(tmp_path, source, _orders(5, newest=old))

    checked = evaluations(result)[FRESH]
    assert (checked.passed, checked.severity) == (False, ERROR)
    assert checked.metadata["dy_age_seconds"].value > 3 * 86400
    assert "the newest ordered_at is 3 days old at " in checked.metadata["dy_assessment"].value
    assert checked.metadata["dy_assessment"].value.endswith(", more than 1 day")
    assert "downstream" not in materialized(result)


@SOURCES
def test_an_empty_table_fails_volume_and_freshness(tmp_path: Path, source: str) -> None:
    _, result = _run(tmp_path, source, _orders(0))

    checked = evaluations(result)
    assert not checked[ROWS].passed
    assert not checked[FRESH].passed
    assert checked[FRESH].metadata["dy_assessment"].value == (
        "failed at severity ERROR: no ordered_at value in 0 rows"
    )
    assert "dy_age_seconds" not in checked[FRESH].metadata


def test_per_asset_settings_replace_the_schemas(tmp_path: Path) -> None:
    old = dt.datetime.now(UTC).replace(tzinfo=None) - dt.timedelta(days=3)
    fresh = {"column": "ordered_at", "within": "4d", "severity": "warn"}

    _, result = _run(
        tmp_path, "parquet", _orders(2, newest=old), expect_rows={"max": 2}, expect_fresh=fresh
    )

    checked = evaluations(result)
    assert checked[ROWS].passed and checked[FRESH].passed
    assert checked[ROWS].metadata["dy_expected"].value == "at most 2 rows"


def test_with_schemas_gives_every_named_asset_the_table_checks(tmp_path: Path) -> None:
    @dg.asset
    def orders() -> pl.DataFrame:
        return _orders(5)

    defs = dd.with_schemas(
        dg.Definitions(
            assets=[orders], resources={"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path))}
        ),
        {"orders": Orders},
        expect_rows=dd.ExpectRows(max=4, severity="warn"),
        trends=dd.Trends(),
    )

    result = dg.materialize([orders, *(defs.asset_checks or [])], resources=defs.resources)

    checked = evaluations(result)
    assert (checked[ROWS].passed, checked[ROWS].severity) == (False, WARN)
    assert checked[FRESH].passed  # the schema's own, kept
    assert checked["dy_table__trends"].passed  # no history yet


def test_a_schema_without_table_checks_has_none() -> None:
    class Plain(dy.Schema):
        id = dy.Int64()

    names = {spec.name for spec in dd.wiring.check_specs(Plain, asset="plain")}

    assert names == {"dy_schema__columns", "dy_rule__id__nullability"}


def test_table_checks_block_only_at_error() -> None:
    specs = dd.wiring.check_specs(
        Orders,
        asset="orders",
        expect_fresh=dd.ExpectFresh("ordered_at", within=60, severity="warn"),
    )

    blocking = {spec.name: spec.blocking for spec in specs}
    assert (blocking[ROWS], blocking[FRESH]) == (True, False)


# ---------------------------------------- time zones -------------------------------------- #

NOON = dt.datetime(2024, 3, 1, 12, 0)


def _freshness(
    schema: type[dy.Schema], frame: pl.DataFrame, **settings: Any
) -> dg.AssetCheckResult:
    (result,) = [
        r
        for r in dd.wiring.check_results(schema, frame, asset_key="orders", **settings)
        if r.check_name == FRESH
    ]
    return result


@pytest.mark.parametrize(
    ("age", "within", "words"),
    [
        (dt.timedelta(days=4722, hours=20, minutes=31, seconds=26.571913), "30d", "4,722 days"),
        (dt.timedelta(hours=3, minutes=20, seconds=5), "2h30m", "3 h 20 min"),
        (dt.timedelta(minutes=95), "90m", "1 h 35 min"),
        (dt.timedelta(seconds=42.5), 30, "42 s"),
    ],
)
def test_freshness_states_ages_and_limits_as_people_write_them(
    age: dt.timedelta, within: Any, words: str
) -> None:
    at = dt.datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
    fresh = dd.ExpectFresh("ordered_at", within=within)
    newest = at.replace(tzinfo=None) - age

    result = _freshness(Orders, _orders(1, newest=newest), expect_fresh=fresh, reference=at)

    limit = {"30d": "30 days", "2h30m": "2 h 30 min", "90m": "1 h 30 min", 30: "30 s"}[within]
    assert result.metadata["dy_assessment"].value == (
        f"failed at severity ERROR: the newest ordered_at is {words} old at "
        f"{at.isoformat()}, more than {limit}"
    )
    assert result.metadata["dy_expected"].value == f"newest ordered_at within {limit}"
    assert result.metadata["dy_age_seconds"].value == age.total_seconds()


def test_a_naive_column_is_read_in_utc_unless_a_time_zone_is_given() -> None:
    frame = _orders(1, newest=NOON)  # 12:00 on the wall clock
    at = dt.datetime(2024, 3, 1, 18, 0, tzinfo=UTC)
    in_utc = dd.ExpectFresh("ordered_at", within="2h")
    in_new_york = dd.ExpectFresh("ordered_at", within="2h", time_zone="America/New_York")

    utc = _freshness(Orders, frame, expect_fresh=in_utc, reference=at)
    new_york = _freshness(Orders, frame, expect_fresh=in_new_york, reference=at)

    assert not utc.passed and utc.metadata["dy_age_seconds"].value == 6 * 3600
    assert new_york.passed and new_york.metadata["dy_age_seconds"].value == 3600  # 17:00 UTC
    assert new_york.metadata["dy_newest"].value == "2024-03-01T17:00:00+00:00"


def test_a_zoned_column_is_compared_by_the_instant() -> None:
    class Zoned(dy.Schema):
        ordered_at = dy.Datetime(time_zone="Asia/Tokyo")

    frame = pl.DataFrame({"ordered_at": [NOON]}).with_columns(
        pl.col("ordered_at").dt.replace_time_zone("Asia/Tokyo")
    )
    at = dt.datetime(2024, 3, 1, 4, 0, tzinfo=UTC)  # 13:00 in Tokyo

    result = _freshness(
        Zoned, frame, expect_fresh={"column": "ordered_at", "within": "1h"}, reference=at
    )

    assert result.passed and result.metadata["dy_age_seconds"].value == 3600


def test_a_date_column_counts_from_the_start_of_its_day() -> None:
    class Daily(dy.Schema):
        day = dy.Date()

    frame = pl.DataFrame({"day": [dt.date(2024, 3, 1)]})
    at = dt.datetime(2024, 3, 2, 0, 0, tzinfo=UTC)

    result = _freshness(Daily, frame, expect_fresh=dd.ExpectFresh("day", within="1d"), reference=at)

    assert result.passed and result.metadata["dy_age_seconds"].value == 86400


# ------------------------------------- partitions ----------------------------------------- #

BERLIN_DAYS = dg.DailyPartitionsDefinition(start_date="2024-01-01", timezone="Europe/Berlin")


def _berlin_orders(context: dg.AssetCheckExecutionContext) -> pl.DataFrame:
    """2024-01-01: two orders; 2024-01-02: five, the last at 23:30 Berlin wall-clock time."""
    if context.partition_key == "2024-01-01":
        return _orders(2, newest=dt.datetime(2024, 1, 1, 12, 0))
    return _orders(5, newest=dt.datetime(2024, 1, 2, 23, 30))


def test_a_partition_has_its_own_volume_and_freshness_from_its_end() -> None:
    orders = dg.AssetSpec("orders", partitions_def=BERLIN_DAYS)
    checks = dd.schema_checks(
        Orders,
        asset=orders,
        source=_berlin_orders,
        expect_fresh=dd.ExpectFresh("ordered_at", within="1h", time_zone="Europe/Berlin"),
    )

    job = dd.checks_job(checks, name="orders_checks")
    defs = dg.Definitions(assets=[orders], asset_checks=[checks], jobs=[job])
    runs = {
        day: defs.resolve_job_def("orders_checks").execute_in_process(
            partition_key=day, raise_on_error=False
        )
        for day in ("2024-01-01", "2024-01-02")
    }

    first, second = (evaluations(runs[day]) for day in ("2024-01-01", "2024-01-02"))
    assert {e.partition for e in (first[ROWS], second[FRESH])} == {"2024-01-01", "2024-01-02"}
    assert not first[ROWS].passed and second[ROWS].passed  # 2 rows < 3 <= 5 rows
    # Berlin's 2024-01-02 ends at 23:00 UTC; its newest order, 23:30 Berlin, is 22:30 UTC.
    assert second[FRESH].metadata["dy_reference"].value == "2024-01-02T23:00:00+00:00"
    assert second[FRESH].metadata["dy_age_seconds"].value == 30 * 60
    assert second[FRESH].passed
    assert not first[FRESH].passed  # 12:00 on 2024-01-01, the window ends 12 hours later


# ------------------------------------ definition time ------------------------------------- #


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"expect_rows": {"min": -1}}, r"a bound is a whole number of rows, 0 or more, not -1"),
        ({"expect_rows": {"min": 5, "max": 2}}, r"min is above max, so every table would fail"),
        ({"expect_rows": {}}, r"bounds nothing: give min=, max= or both"),
        ({"expect_rows": {"min": 1, "severity": "fatal"}}, r"severity='fatal': give 'error'"),
        ({"expect_rows": {"minimum": 1}}, r"pass dd.ExpectRows\(min=..., max=...\)"),
        (
            {"expect_fresh": {"column": "ordered", "within": "1h"}},
            r"column 'ordered', which .*"
            r"does not have. Its columns are 'id', 'amount', 'ordered_at'",
        ),
        (
            {"expect_fresh": {"column": "amount", "within": "1h"}},
            r"column 'amount' of dtype "
            r"Int64: freshness reads a dy.Datetime or dy.Date column",
        ),
        (
            {"expect_fresh": {"column": "ordered_at", "within": "soon"}},
            r"within='soon': give a "
            r"positive age",
        ),
        ({"expect_fresh": {"column": "ordered_at", "within": -5}}, r"within=-5: give a positive"),
        (
            {"expect_fresh": {"column": "ordered_at", "within": "1h", "time_zone": "Mars/Base"}},
            r"time_zone='Mars/Base', which is no IANA time zone",
        ),
    ],
)
def test_a_table_check_no_table_can_meet_is_refused_with_the_fix(
    settings: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidTableCheckError, match=message):
        dd.schema_checks(Orders, asset="orders", **settings)


def test_a_time_zone_for_a_zoned_column_is_refused() -> None:
    class Zoned(dy.Schema):
        at = dy.Datetime(time_zone="UTC")

    with pytest.raises(InvalidTableCheckError, match=r"is zoned \(UTC\) and holds instants"):
        dd.expect_fresh("at", within="1h", time_zone="Europe/Berlin")(Zoned)


def test_the_decorators_check_the_schema_when_it_is_decorated() -> None:
    with pytest.raises(InvalidTableCheckError, match=r"names column 'when'"):
        dd.expect_fresh("when", within="1h")(Orders)
    with pytest.raises(InvalidTableCheckError, match=r"decorates a dy.Schema class"):
        dd.expect_rows(min=1)(object)  # type: ignore[type-var]


# -------------------------------------- the Component ------------------------------------- #

ORDERS_ASSET = """\
import datetime as dt

import dagster as dg
import polars as pl


@dg.asset
def orders() -> pl.DataFrame:
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    return pl.DataFrame({"id": [1, 2], "amount": [3, 4], "ordered_at": [now, now]})
"""
SCHEMA = "test_table_checks:Orders"


def test_the_component_takes_table_checks_per_entry(
    sandbox: DefsFolderSandbox, tmp_path: Path
) -> None:
    (sandbox.defs_folder_path / "assets.py").write_text(ORDERS_ASSET)
    entry = {
        "asset": "orders",
        "schema": SCHEMA,
        "expect_rows": {"min": 3, "severity": "warn"},
        "expect_fresh": {"column": "ordered_at", "within": "10m"},
    }
    scaffold_checks(sandbox, {"checks": [entry]})

    result = materialize_project(sandbox, tmp_path)

    checked = evaluations(result)
    assert (checked[ROWS].passed, checked[ROWS].severity) == (False, WARN)
    assert checked[FRESH].passed


def test_the_component_takes_trends_per_entry(sandbox: DefsFolderSandbox) -> None:
    (sandbox.defs_folder_path / "assets.py").write_text(ORDERS_ASSET)
    trends = {"window": 10, "k": 4, "severity": "error"}
    scaffold_checks(sandbox, {"checks": [{"asset": "orders", "schema": SCHEMA, "trends": trends}]})

    with sandbox.build_component_tree() as tree:
        defs = tree.build_defs()

    specs = {spec.name: spec for checks in defs.asset_checks or [] for spec in checks.check_specs}
    assert specs["dy_table__trends"].blocking
    assert "median ± 4 * MAD of the last 10 evaluations" in (
        specs["dy_table__trends"].description or ""
    )


def test_a_bad_table_check_in_yaml_names_the_file_and_the_entry(sandbox: DefsFolderSandbox) -> None:
    (sandbox.defs_folder_path / "assets.py").write_text(ORDERS_ASSET)
    entry = {"asset": "orders", "schema": SCHEMA, "expect_fresh": {"column": "id", "within": "1h"}}
    path = scaffold_checks(sandbox, {"checks": [entry]})

    error = load_error(sandbox, path)

    assert isinstance(error, InvalidTableCheckError)
    assert str(error).startswith(
        f"{path / 'defs.yaml'}: checks[0] (asset orders, schema Orders): The freshness check of "
        "schema Orders names column 'id' of dtype Int64"
    )


# ------------------------------------- the property --------------------------------------- #


@settings(max_examples=40, deadline=None)
@given(
    rows=st.integers(0, 40),
    low=st.none() | st.integers(0, 40),
    high=st.none() | st.integers(0, 40),
    severity=st.sampled_from(["error", "warn"]),
)
def test_each_volume_verdict_follows_from_the_row_count(
    rows: int, low: int | None, high: int | None, severity: str
) -> None:
    if low is None and high is None:
        high = 20
    if low is not None and high is not None and low > high:
        low, high = high, low
    bounds = dd.ExpectRows(min=low, max=high, severity=severity)  # type: ignore[arg-type]
    frame = _orders(rows)

    (result,) = [
        r
        for r in dd.wiring.check_results(Orders, frame, asset_key="orders", expect_rows=bounds)
        if r.check_name == ROWS
    ]

    counted = frame.height
    within = (low is None or counted >= low) and (high is None or counted <= high)
    assert result.passed is within
    assert result.severity == {"error": ERROR, "warn": WARN}[severity]
    assert result.metadata["dy_row_count"].value == counted


@pytest.mark.parametrize(
    "within", [math.nan, math.inf, -math.inf, 10**20, "99999999999d", "1000000000d"]
)
def test_an_age_timedelta_cannot_hold_is_refused_naming_within(within: Any) -> None:
    """Not a raw ValueError or OverflowError from `timedelta`: the value, and the ages that
    work."""
    with pytest.raises(InvalidTableCheckError) as raised:
        dd.ExpectFresh("ordered_at", within=within)

    message = str(raised.value)
    assert f"dd.ExpectFresh('ordered_at') has within={within!r}: give a positive age" in message
    assert "of at most 999,999,999 days" in message and '"1d12h"' in message
