"""`make demo` runs `python -m dagster_dataframely_demo`: real `dagster asset materialize` runs
on a persistent DAGSTER_HOME, then a summary read from that instance."""

from __future__ import annotations

import re

import dagster as dg
import polars as pl
import pytest
from dagster._core.events import DagsterEventType
from dagster_dataframely_demo import payments, payments_migrated
from dagster_dataframely_demo._data import generate
from dagster_dataframely_demo.schema import Orders
from demo_run import DemoRun

from dagster_dataframely.pandera import to_dataframely
from dagster_dataframely.wiring import rules

pytestmark = pytest.mark.xdist_group("demo")


def _summary(run: DemoRun) -> str:
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return run.stdout[run.stdout.index("The demo ran") :]


def _row(summary: str, asset: str) -> list[str]:
    (line,) = [line for line in summary.splitlines() if line.startswith(f"{asset} ")]
    return line[len(asset) :].split()


def test_the_console_gets_progress_and_a_summary_that_fits_on_one_screen(demo: DemoRun) -> None:
    summary = _summary(demo)
    assert "DEBUG" not in demo.stdout and "Resolved" not in demo.stdout
    assert re.search(r"^  done +orders in (?:\d+m)?[\d.]+m?s$", demo.stdout, re.MULTILINE)
    assert "skipped customer_segments: customers__dy_checks failed" in demo.stdout
    assert len(summary.splitlines()) <= 50
    assert max(len(line) for line in summary.splitlines()[2:]) <= 100  # [1] names a folder
    assert "make ui" in summary


def test_the_console_names_every_step_the_instance_recorded_as_ended(demo: DemoRun) -> None:
    """Each run's lines on the console are the steps its event log says succeeded or failed,
    and the steps of its plan that never ran: nothing the instance holds is missing."""
    console = demo.stdout[: demo.stdout.index("The demo ran")]
    sections = re.split(r"^Run .+:$", console, flags=re.MULTILINE)[1:]
    instance = dg.DagsterInstance.from_config(str(demo.home))
    runs = sorted(instance.get_run_records(), key=lambda record: record.create_timestamp)
    assert len(sections) == len(runs) == 3
    ended = {DagsterEventType.STEP_SUCCESS: "done", DagsterEventType.STEP_FAILURE: "FAILED"}
    for record, section in zip(runs, sections, strict=True):
        recorded = {
            (ended[entry.dagster_event.event_type], entry.step_key)  # type: ignore[union-attr]
            for entry in instance.all_logs(record.dagster_run.run_id, of_type=set(ended))
        }
        printed = [tuple(line.split()[:2]) for line in section.splitlines() if line.strip()]
        assert {line for line in printed if line[0] in ended.values()} == recorded
        assert len(printed) == len(set(printed))  # one line per step
    assert ("skipped", "customer_segments:") in [
        tuple(line.split()[:2]) for line in sections[0].splitlines() if line.strip()
    ]


def test_summary_counts_rows_written_and_quarantined_from_the_stored_tables(
    demo: DemoRun,
) -> None:
    summary = _summary(demo)
    written = pl.scan_parquet(demo.lake / "orders.parquet").select(pl.len()).collect().item()
    quarantined = pl.read_parquet(demo.lake / "orders_quarantine.parquet")
    raw = generate().order_lines
    assert written + quarantined.height == raw.height
    rows, held = _row(summary, "orders")[:2]
    assert (rows, held) == (f"{written:,}", f"{quarantined.height:,}")
    assert (
        f"orders is written through its gate: {quarantined.height:,} rows failing an error rule "
        f"went to its quarantine, and its {written:,} valid rows to the table."
    ) in " ".join(summary.split())  # the verdicts are wrapped at 100 characters
    # The quarantine's own line counts what it holds as written, not as quarantined again.
    assert _row(summary, "orders_quarantine")[:2] == [f"{quarantined.height:,}", "-"]
    assert "orders_quarantine is written through its gate" not in summary
    # Every quarantined row fails an "error" rule; the table keeps none.
    errors = {r.name for r in rules(Orders) if r.severity == "error"}
    kept = Orders.filter(pl.read_parquet(demo.lake / "orders.parquet"), cast=False)
    assert not errors & set(kept.failure.counts())


def test_summary_counts_quarantined_checks_apart_from_rows_written(demo: DemoRun) -> None:
    summary = _summary(demo)
    severity = {rule.name: rule.severity for rule in rules(Orders)}
    counts = Orders.filter(generate().order_lines, cast=False).failure.counts()
    held_back = sum(1 for name in counts if severity[name] == "error")
    assert (
        f"{held_back} checks of error rules failed at WARN because their rows were quarantined"
        in summary
    )
    written = re.search(r"(\d+) checks failed at WARN on rows written to their tables", summary)
    assert written is not None
    warned = re.findall(r"^  \S.*  WARN   dy_", summary, re.MULTILINE)
    assert held_back + int(written.group(1)) == len(warned)


def test_summary_lists_each_failing_check_with_severity_and_share_of_rows(demo: DemoRun) -> None:
    summary = _summary(demo)
    counts = Orders.filter(generate().order_lines, cast=False).failure.counts()
    rows = generate().order_lines.height
    for name, failed in counts.items():
        check = "dy_rule__" + name.replace("|", "__")
        (line,) = [x for x in summary.splitlines() if x.split()[:1] == ["orders"] and check in x]
        assert f"{failed:,} of {rows:,} ({failed / rows:.1%})" in line
    assert re.search(r"customers +ERROR +dy_rule__country__regex +2 of 400 \(0\.5%\)", summary)
    assert _row(summary, "products")[-1] == "-"  # every check passed
    assert _row(summary, "customers")[-2:] == ["1", "error"]


def test_a_failing_blocking_check_stops_the_downstream_asset_and_says_why(demo: DemoRun) -> None:
    summary = _summary(demo)
    assert re.search(r"^customer_segments +not materialized", summary, re.MULTILINE)
    explanation = " ".join(summary.split())
    assert "failed, as the demo intends: the blocking check customers dy_rule__country__regex" in (
        explanation
    )


def test_the_instance_keeps_the_runs_for_the_ui(demo: DemoRun) -> None:
    instance = dg.DagsterInstance.from_config(str(demo.home))
    runs = {
        run.tags.get("dagster/partition"): run for run in instance.get_runs() if run.asset_selection
    }
    assert runs[None].status == dg.DagsterRunStatus.FAILURE  # the blocking check, as intended
    assert runs["2024-05-01"].status == runs["2024-05-02"].status == dg.DagsterRunStatus.SUCCESS
    # daily_sales' checks are partitioned: each run checked its own day.
    verdicts = {}
    for day in ("2024-05-01", "2024-05-02"):
        for entry in instance.all_logs(
            runs[day].run_id, of_type=DagsterEventType.ASSET_CHECK_EVALUATION
        ):
            evaluation = entry.dagster_event.event_specific_data  # type: ignore[union-attr]
            if evaluation.check_name == "dy_rule__within_catalogue_prices":
                verdicts[day] = (evaluation.passed, evaluation.partition)
    assert verdicts == {"2024-05-01": (False, "2024-05-01"), "2024-05-02": (True, "2024-05-02")}


def test_the_pandera_model_and_its_migrated_twin_have_the_same_checks() -> None:
    def catalogue(schema: object) -> list[tuple[str, str, str]]:
        return [(r.name, r.check_name, r.severity) for r in rules(schema)]  # type: ignore[arg-type]

    translated = catalogue(to_dataframely(payments.Payments))
    assert translated == catalogue(payments_migrated.Payments)
    assert ("order_id|regex", "dy_rule__order_id__regex", "warn") in translated
