"""The summary each check step logs at its end, read back from real runs' logs: a gated asset's
(with its quarantine, and when the gate stops the run), a collection's and one asset's sidecar
(with kept rows and a tolerance); every figure in it equals the check evaluations' metadata.
(`tests/test_many_tables.py` reads it as `dagster job execute` prints it, cut at 20 rows.)"""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
import re
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest
from conftest import Storage
from defective import DEFECTIVE_COUNTS, WARN_RULES
from shop import MEMBERS, Shop, shop_frames
from support import PrintedSummary, printed_summaries
from test_collection_checks import _shop_assets
from test_failing_rows import _on_duckdb
from test_sources import _check, _warehouse

import dagster_dataframely as dd
from dagster_dataframely._checks.figures import Figures
from dagster_dataframely.data import OrdersSchema, defective_orders
from dagster_dataframely.io import ParquetIOManager


def _logged(instance: dg.DagsterInstance, result: dg.ExecuteInProcessResult) -> str:
    """The run's one summary, as its log entry holds it."""
    (entry,) = [
        entry.user_message
        for entry in instance.all_logs(result.run_id)
        if entry.user_message.startswith("dagster-dataframely: ")
    ]
    return entry


def _summary(instance: dg.DagsterInstance, result: dg.ExecuteInProcessResult) -> PrintedSummary:
    """The run's one summary, read cell by cell."""
    (summary,) = printed_summaries(_logged(instance, result))
    return summary


def _agrees(summary: PrintedSummary, result: dg.ExecuteInProcessResult) -> None:
    """Each row's figures are those of its check's evaluation; the counts add up."""
    checked = [Figures.of(e) for e in result.get_asset_check_evaluations()]
    by_rule = {(f.asset, f.rule or f.check): f for f in checked}
    flagged = [f for f in checked if f.verdict in ("failed", "warned")]
    assert [(row["asset"], row["rule"]) for row in summary.rows] == [
        (f.asset, f.rule or f.check)
        for f in sorted(flagged, key=lambda f: f.verdict == "warned")  # failed first
    ]
    for row in summary.rows:
        shown = by_rule[(row["asset"], row["rule"])]
        assert row["verdict"] == shown.verdict
        if shown.failed_count is not None:
            assert row["failing rows"] == f"{shown.failed_count:,} of {shown.row_count:,}"
            assert shown.failed_fraction is not None
            assert float(row["fraction"].removesuffix("%")) == round(100 * shown.failed_fraction, 1)
            assert row["tolerance"] == shown.tolerance
            assert row["engine"] == shown.engine
    passed = sum(1 for f in checked if f.passed)
    assert summary.headline.endswith(
        f"{sum(1 for f in checked if f.verdict == 'failed')} failed, "
        f"{sum(1 for f in checked if f.verdict == 'warned')} warned, {passed} passed."
    )
    assert summary.passed.startswith(f"Passed: {passed} check")


def test_a_gated_asset_logs_its_summary_with_the_quarantine_as_where_rows_went(
    tmp_path: Path,
) -> None:
    @dd.asset(OrdersSchema, quarantine=True)
    def orders() -> pl.DataFrame:
        return defective_orders()

    instance = dg.DagsterInstance.ephemeral()
    result = Storage("filesystem", tmp_path).materialize([orders], instance=instance)

    summary = _summary(instance, result)
    _agrees(summary, result)
    assert summary.headline.startswith("22 checks of 1 asset: ")
    (quarantine,) = {
        e.metadata["dy_quarantine"].value
        for e in result.get_asset_check_evaluations()
        if "dy_quarantine" in e.metadata
    }
    # The quarantine took the rows: no check fails at ERROR, the table was written.
    rows = {row["rule"]: row for row in summary.rows}
    assert set(rows) == set(DEFECTIVE_COUNTS)
    assert {row["verdict"] for row in rows.values()} == {"warned"}
    for rule, row in rows.items():
        kept = row["failing rows kept in"]
        if rule in WARN_RULES:
            assert kept == "written to the table"
        else:  # a long address is cut at its start: its end names the table
            assert kept.endswith("/storage/orders_quarantine")
            assert quarantine.endswith(kept.removeprefix("…"))


def test_a_gate_that_stops_the_run_still_logs_its_summary_first() -> None:
    @dd.asset(OrdersSchema)
    def orders() -> pl.DataFrame:
        return defective_orders()

    instance = dg.DagsterInstance.ephemeral()
    result = dg.materialize([orders], instance=instance, raise_on_error=False)

    assert not result.success
    summary = _summary(instance, result)
    _agrees(summary, result)
    assert len(summary.rows) == len(DEFECTIVE_COUNTS)


def test_a_collection_logs_one_summary_of_its_members_and_filters(tmp_path: Path) -> None:
    checks = dd.collection_checks(Shop, members=MEMBERS)
    instance = dg.DagsterInstance.ephemeral()
    result = dg.materialize(
        [*_shop_assets(shop_frames()), checks],
        resources={"io_manager": ParquetIOManager(base_dir=str(tmp_path))},
        instance=instance,
        raise_on_error=False,
    )

    summary = _summary(instance, result)
    _agrees(summary, result)
    assert summary.headline.startswith(f"{len(result.get_asset_check_evaluations())} checks of 3 ")
    assert {row["asset"] for row in summary.rows} == {"orders", "order_lines"}
    assert {row["rule"] for row in summary.rows} >= {"order_has_lines", "customer_exists"}


def test_a_sidecar_summary_names_kept_rows_and_counts_tolerated_checks(tmp_path: Path) -> None:
    database = _warehouse(tmp_path / "shop.duckdb", defective_orders())
    instance = dg.DagsterInstance.ephemeral()
    tolerated = dd.Tolerance(warn_above="10%")
    result = _check(_on_duckdb(database, tolerate={"amount|max": tolerated}), instance=instance)

    summary = _summary(instance, result)
    _agrees(summary, result)
    rows = {row["rule"]: row for row in summary.rows}
    assert "amount|max" not in rows
    assert rows["amount|min"]["failing rows kept in"] == '"sales"."orders__dy_failures"'
    assert rows["amount|min"]["tolerance"] == "error above 0 rows"
    assert summary.passed.endswith(" (1 with failing rows within its tolerance).")


def test_the_readme_shows_the_summary_its_first_example_prints(tmp_path: Path) -> None:
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    setup, example = re.findall(r"^```python\n(.*?)^```", readme, re.S | re.M)[:2]
    shown = re.search(r"^```text\n(dagster-dataframely: .*?)\n^```", readme, re.S | re.M)
    assert shown is not None
    defined: dict[str, Any] = {}
    exec(setup + example, defined)
    instance = dg.DagsterInstance.ephemeral()

    result = dg.materialize(
        [defined["orders"], defined["orders_checks"]],
        resources={"io_manager": ParquetIOManager(base_dir=str(tmp_path))},
        instance=instance,
        raise_on_error=False,
    )

    assert _logged(instance, result) == shown.group(1)


def test_a_summary_is_logged_at_the_end_or_at_an_error_never_where_the_step_stopped_reading() -> (
    None
):
    """A step that stops reading the events (its IO manager failed to store an output) has
    ended: the generator is closed whenever it is collected, perhaps after the run and its
    instance are gone, and then logs nothing (it once wrote a one-check summary into a
    torn-down instance's storage)."""
    from dagster_dataframely._checks.summary import summarized

    def results() -> Any:
        for check in ("a", "b"):
            yield dg.AssetCheckResult(asset_key="orders", check_name=check, passed=True)

    def failing() -> Any:
        yield from results()
        raise RuntimeError("the gate stopped the run")

    logged: list[str] = []

    class Log:
        def info(self, text: str) -> None:
            logged.append(text)

    assert len(list(summarized(results(), Log()))) == 2
    assert len(logged) == 1 and logged[0].startswith("dagster-dataframely: 2 checks")
    events = summarized(failing(), Log())
    with pytest.raises(RuntimeError):
        list(events)
    assert len(logged) == 2
    abandoned = summarized(results(), Log())
    next(abandoned)
    abandoned.close()
    assert len(logged) == 2
