"""A gated asset's table checks, in real runs: `dd.expect_rows` and `dd.expect_fresh` judge the
rows the function returned (a `pl.DataFrame`, or a `pl.LazyFrame` scan the gate streams), as
checks of the asset with the sidecar's metadata and severities. One failing at `ERROR` stops
the write as a failing `"error"` rule does (`ValidationAbortError`, the table keeps its
previous rows, a quarantine is written as on every gated run); one failing at `WARN` writes the
table. The figures come from the rules' one pass over the frame; a time partition's freshness
is measured from its end; a run without rows reports them skipped; a hand-wired asset gets them
from `validation_results`."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from polars.io.plugins import register_io_source
from support import evaluations, materialization, materialized, step_error

import dagster_dataframely as dd
from dagster_dataframely.errors import InvalidTableCheckError, ValidationAbortError
from dagster_dataframely.wiring import check_specs, validation_results

ERROR, WARN = dg.AssetCheckSeverity.ERROR, dg.AssetCheckSeverity.WARN
ROWS, FRESH = "dy_table__row_count", "dy_table__freshness"
UTC = dt.timezone.utc
NOW = dt.datetime.now(UTC).replace(tzinfo=None, microsecond=0)


@dd.expect_rows(min=3, max=1_000)
@dd.expect_fresh("ordered_at", within="1d")
class Orders(dy.Schema):
    id = dy.Int64(primary_key=True)
    amount = dy.Int64(min=0)
    ordered_at = dy.Datetime(nullable=True)


def orders(rows: int = 5, *, newest: dt.datetime = NOW, negative: int = 0) -> pl.DataFrame:
    """`rows` orders an hour apart, the newest at `newest` (naive UTC), the first `negative`
    of them with a negative amount."""
    return pl.DataFrame(
        {
            "id": range(rows),
            "amount": [-1 if i < negative else 10 for i in range(rows)],
            "ordered_at": [newest - dt.timedelta(hours=rows - 1 - i) for i in range(rows)],
        },
        schema={"id": pl.Int64, "amount": pl.Int64, "ordered_at": pl.Datetime("us")},
    )


@dg.asset(deps=["orders"])
def downstream() -> None:
    """Reads the gated table; runs only when it was written and no blocking check failed."""


def run(
    tmp_path: Path, frame: pl.DataFrame, kind: str, **settings: Any
) -> dg.ExecuteInProcessResult:
    """One run of the gated `orders` returning `frame` (or a scan of it), and `downstream`."""
    source = tmp_path / f"source-{len(list(tmp_path.glob('source-*')))}.parquet"
    frame.write_parquet(source)

    @dd.asset(Orders, name="orders", **settings)
    def gated() -> pl.DataFrame | pl.LazyFrame:
        return pl.scan_parquet(source) if kind == "lazy" else frame

    return dg.materialize(
        [gated, downstream],
        resources={"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path / "store"))},
        raise_on_error=False,
    )


def stored(tmp_path: Path) -> pl.DataFrame:
    return pl.read_parquet(tmp_path / "store" / "orders.parquet")


KINDS = pytest.mark.parametrize("kind", ["eager", "lazy"])


@KINDS
def test_the_rows_returned_are_judged_with_the_sidecars_figures(tmp_path: Path, kind: str) -> None:
    started = dt.datetime.now(UTC).replace(tzinfo=None, microsecond=0)
    newest = started - dt.timedelta(hours=2)

    result = run(tmp_path, orders(5, newest=newest), kind)
    took = (dt.datetime.now(UTC).replace(tzinfo=None) - started).total_seconds()

    assert result.success and materialized(result) == {"orders", "downstream"}
    checked = evaluations(result)
    assert checked[ROWS].passed and checked[FRESH].passed
    assert checked[ROWS].metadata["dy_row_count"] == dg.MetadataValue.int(5)
    assert checked[ROWS].metadata["dy_expected"].value == "between 3 and 1,000 rows"
    assert checked[FRESH].metadata["dy_newest"].value == newest.replace(tzinfo=UTC).isoformat()
    age = checked[FRESH].metadata["dy_age_seconds"].value
    assert 7200 <= age <= 7200 + took + 1  # two hours, and the time the run took


@KINDS
@pytest.mark.parametrize("quarantine", [False, True])
def test_a_volume_failing_at_error_writes_no_table_and_fails_the_run(
    tmp_path: Path, kind: str, quarantine: bool
) -> None:
    first = run(tmp_path, orders(5), kind, quarantine=quarantine)
    assert first.success

    result = run(tmp_path, orders(2), kind, quarantine=quarantine)

    assert not result.success
    assert "downstream" not in materialized(result) and "orders" not in materialized(result)
    assert stored(tmp_path).height == 5  # the previous table, untouched
    checked = evaluations(result)[ROWS]
    assert (checked.passed, checked.severity) == (False, ERROR)
    assert checked.metadata["dy_row_count"].value == 2
    name, message = step_error(result)
    assert name == "ValidationAbortError"
    assert "dy_table__row_count: 2 rows, expected between 3 and 1,000 rows" in message
    assert "severity='warn'" in message  # the fix
    if quarantine:  # written first, as on every gated run: empty here, no row failed a rule
        assert "orders_quarantine" in materialized(result)
        assert pl.read_parquet(tmp_path / "store" / "orders_quarantine.parquet").height == 0


@KINDS
def test_stale_data_failing_at_error_stops_the_write_and_says_how_old(
    tmp_path: Path, kind: str
) -> None:
    result = run(tmp_path, orders(5, newest=NOW - dt.timedelta(days=3)), kind)

    assert not result.success and "orders" not in materialized(result)
    checked = evaluations(result)[FRESH]
    assert (checked.passed, checked.severity) == (False, ERROR)
    _, message = step_error(result)
    assert "dy_table__freshness: the newest ordered_at is 3 days" in message


@KINDS
def test_a_check_failing_at_warn_writes_the_table_and_flags_it(tmp_path: Path, kind: str) -> None:
    result = run(
        tmp_path,
        orders(2, newest=NOW - dt.timedelta(days=3)),
        kind,
        expect_rows=dd.ExpectRows(min=3, severity="warn"),
        expect_fresh={"column": "ordered_at", "within": "1d", "severity": "warn"},
    )

    assert result.success and materialized(result) == {"orders", "downstream"}
    assert stored(tmp_path).height == 2
    checked = evaluations(result)
    assert (checked[ROWS].passed, checked[ROWS].severity) == (False, WARN)
    assert (checked[FRESH].passed, checked[FRESH].severity) == (False, WARN)


def test_failing_rules_and_a_failing_volume_are_both_named(tmp_path: Path) -> None:
    result = run(tmp_path, orders(2, negative=1), "eager")

    _, message = step_error(result)
    assert "amount|min: 1 row(s)" in message and "dy_table__row_count: 2 rows" in message
    checked = evaluations(result)
    assert (
        checked["dy_rule__amount__min"].metadata["dy_failed_rows"].value.startswith("not written")
    )


def test_with_a_quarantine_the_volume_counts_every_row_returned(tmp_path: Path) -> None:
    """3 rows returned, 2 of them quarantined: the table holds 1, the volume judged is 3."""
    result = run(tmp_path, orders(3, negative=2), "lazy", quarantine=True)

    assert result.success
    assert stored(tmp_path).height == 1
    assert materialization(result, "orders")["dy_quarantined_rows"] == 2
    assert evaluations(result)[ROWS].metadata["dy_row_count"].value == 3


def counting_scan(frame: pl.DataFrame, reads: list[int]) -> pl.LazyFrame:
    """A scan of `frame` that notes each pass over it in `reads`."""

    def source(
        with_columns: list[str] | None,
        predicate: pl.Expr | None,
        n_rows: int | None,
        batch_size: int | None,
    ) -> Iterator[pl.DataFrame]:
        reads.append(1)
        found = frame if with_columns is None else frame.select(with_columns)
        yield found if predicate is None else found.filter(predicate)

    return register_io_source(source, schema=frame.schema)


def test_the_figures_come_from_the_rules_pass_with_no_pass_of_their_own(tmp_path: Path) -> None:
    class Plain(dy.Schema):
        id = dy.Int64(primary_key=True)
        amount = dy.Int64(min=0)
        ordered_at = dy.Datetime(nullable=True)

    passes: dict[str, int] = {}
    for schema in (Plain, Orders):
        reads: list[int] = []

        @dd.asset(schema, name="orders")
        def gated() -> pl.LazyFrame:
            return counting_scan(orders(5), reads)  # noqa: B023

        result = dg.materialize(
            [gated], resources={"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path))}
        )
        assert result.success
        passes[schema.__name__] = len(reads)

    assert passes["Orders"] == passes["Plain"] > 0, passes


def test_a_time_partition_is_judged_from_its_end(tmp_path: Path) -> None:
    days = dg.DailyPartitionsDefinition(start_date="2024-01-01", timezone="Europe/Berlin")

    @dd.asset(Orders, name="orders", partitions_def=days)
    def gated(context) -> pl.DataFrame:  # type: ignore[no-untyped-def]
        # Berlin's 2 January ends at 23:00 UTC; its newest order, 21:00 UTC, is 2 hours old
        return orders(4, newest=dt.datetime(2024, 1, 2, 21))

    result = dg.materialize(
        [gated],
        resources={"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path))},
        partition_key="2024-01-02",
    )

    checked = evaluations(result)
    assert checked[FRESH].passed and checked[ROWS].passed
    assert checked[FRESH].metadata["dy_age_seconds"].value == 2 * 3600
    assert checked[FRESH].metadata["dy_reference"].value == "2024-01-02T23:00:00+00:00"


def test_a_run_without_rows_reports_the_table_checks_skipped(tmp_path: Path) -> None:
    @dd.asset(Orders, name="orders")
    def gated() -> None:
        return None

    result = dg.materialize(
        [gated], resources={"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path))}
    )

    checked = evaluations(result)
    assert result.success and checked[ROWS].passed and checked[FRESH].passed
    assert "returned None" in checked[ROWS].metadata["dy_skipped"].value


def test_a_hand_wired_asset_gets_the_table_checks_its_specs_declare(tmp_path: Path) -> None:
    @dg.asset(name="orders", check_specs=check_specs(Orders, asset="orders"))
    def hand_wired() -> Iterator[Any]:
        yield from validation_results(Orders, orders(2), valid_key="orders")

    result = dg.materialize(
        [hand_wired],
        resources={"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path))},
        raise_on_error=False,
    )

    assert step_error(result)[0] == "ValidationAbortError"
    assert evaluations(result)[ROWS].severity == ERROR


def test_changing_a_table_check_changes_the_code_version() -> None:
    def version(**settings: Any) -> str | None:
        built = dd.asset(Orders, name="orders", **settings)(lambda: orders())
        return built.code_versions_by_key[dg.AssetKey("orders")]

    assert version() != version(expect_rows=dd.ExpectRows(min=4))
    assert version() == version()


def test_a_misspelled_freshness_column_is_refused_when_the_asset_is_defined() -> None:
    with pytest.raises(InvalidTableCheckError, match=r"names column 'ordred_at'.*ordered_at"):
        dd.asset(Orders, expect_fresh={"column": "ordred_at", "within": "1h"})(lambda: orders())


@settings(max_examples=30, deadline=None)
@given(
    rows=st.integers(0, 40),
    low=st.none() | st.integers(0, 40),
    high=st.none() | st.integers(0, 40),
    severity=st.sampled_from(["error", "warn"]),
)
def test_the_gate_writes_exactly_when_no_volume_check_fails_at_error(
    rows: int, low: int | None, high: int | None, severity: str
) -> None:
    assume(
        (low is not None or high is not None) and (low or 0) <= (high if high is not None else 40)
    )
    bounds = dd.ExpectRows(min=low, max=high, severity=severity)  # type: ignore[arg-type]
    within = (low is None or rows >= low) and (high is None or rows <= high)
    events: list[Any] = []
    try:
        for event in validation_results(
            Orders, orders(rows), valid_key="orders", expect_rows=bounds, expect_fresh=None
        ):
            events.append(event)
        aborted = False
    except ValidationAbortError:
        aborted = True

    (volume,) = [e for e in events if isinstance(e, dg.AssetCheckResult) and e.check_name == ROWS]
    assert volume.passed == within
    assert volume.metadata["dy_row_count"].value == rows
    written = any(isinstance(e, dg.MaterializeResult) for e in events)
    # the schema's freshness check fails an empty table, at ERROR: it stops the write too
    assert aborted == (not written) == ((not within and severity == "error") or rows == 0)
