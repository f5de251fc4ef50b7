"""The demo's summary, read from the Dagster instance: what each run wrote and found.

Per asset (and partition): rows written, rows quarantined, checks passed and failed by
severity; then every failing check with the share of rows it failed; then why each run that
failed did, and how to browse it all in the UI.
"""

from __future__ import annotations

import datetime as dt
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
from dagster._core.definitions.asset_checks.asset_check_evaluation import AssetCheckEvaluation
from dagster._core.events import DagsterEventType

_WIDTH = 100


@dataclass
class Outcome:
    """One asset (or partition) in one run."""

    label: str
    materialized: bool = False
    rows: int | None = None
    quarantined: int | None = None
    checks: list[AssetCheckEvaluation] = field(default_factory=list)

    def failed(self, severity: dg.AssetCheckSeverity) -> int:
        return sum(1 for e in self.checks if not e.passed and e.severity == severity)


@dataclass
class Run:
    """One run: its label, status, outcomes and the blocking checks that failed in it."""

    name: str
    succeeded: bool
    outcomes: list[Outcome]
    not_materialized: list[str]
    blocking_failures: list[str]


def summary(started: dt.datetime, *, seconds: float, folder: Path) -> tuple[str, bool]:
    """The summary of the runs created since `started`, and whether each run ended as the
    demo intends (succeeded, or failed only because a blocking check failed)."""
    instance = dg.DagsterInstance.get()
    records = instance.get_run_records(dg.RunsFilter(created_after=started), ascending=True)
    runs = [_run(instance, record.dagster_run) for record in records]
    lines = [
        f"The demo ran {len(runs)} run{'s' if len(runs) != 1 else ''} in {seconds:.0f} s.",
        f"Its tables, Dagster instance (DAGSTER_HOME) and logs are in {folder}",
        "",
        f"{'asset':<26}{'rows written':>13}{'quarantined':>13}{'checks':>8}{'passed':>8}   failed",
    ]
    lines += [_row(outcome) for run in runs for outcome in run.outcomes]
    lines += [
        f"{name:<26} not materialized: a blocking check upstream failed"
        for run in runs
        for name in run.not_materialized
    ]
    failing = [
        (o, e)
        for run in runs
        for o in run.outcomes
        for e in sorted(o.checks, key=_gravity)
        if not e.passed
    ]
    if failing:
        lines += ["", "Failing checks (rows that failed, of the rows checked):"]
        lines += list(_failing(failing))
    lines.append("")
    for verdict in _verdicts(runs):
        lines += textwrap.wrap(verdict, _WIDTH, initial_indent="- ", subsequent_indent="  ")
    lines += ["", "Browse the runs, assets and checks: make ui, then open http://127.0.0.1:3000"]
    intended = all(run.succeeded or run.blocking_failures for run in runs)
    return "\n".join(lines), intended


def _run(instance: dg.DagsterInstance, run: dg.DagsterRun) -> Run:
    partition = run.tags.get("dagster/partition")
    outcomes: dict[dg.AssetKey, Outcome] = {}

    def outcome(key: dg.AssetKey) -> Outcome:
        label = key.to_user_string() + (f" [{partition}]" if partition else "")
        return outcomes.setdefault(key, Outcome(label))

    wanted = {DagsterEventType.ASSET_MATERIALIZATION, DagsterEventType.ASSET_CHECK_EVALUATION}
    for entry in instance.all_logs(run.run_id, of_type=wanted):
        event = entry.dagster_event
        if event is None:
            continue
        if event.event_type == DagsterEventType.ASSET_MATERIALIZATION:
            materialization = event.step_materialization_data.materialization
            metadata = materialization.metadata
            found = outcome(materialization.asset_key)
            found.materialized = True
            # Dagster's own key, or the one DuckDB's IO managers write.
            found.rows = _value(metadata.get("dagster/row_count", metadata.get("row_count")))
            if "dy_quarantine" in metadata:
                found.quarantined = _rows_at(str(_value(metadata["dy_quarantine"])))
        else:
            evaluation = event.event_specific_data
            assert isinstance(evaluation, AssetCheckEvaluation)
            outcome(evaluation.asset_key).checks.append(evaluation)
    for key, found in outcomes.items():
        # A quarantine's own materialization carries the address too: the rows it holds are
        # counted on its table's line, as quarantined, not a second time here.
        table = dg.AssetKey([*key.path[:-1], key.path[-1].removesuffix("_quarantine")])
        if table != key and table in outcomes:
            found.quarantined = None
    written = {key for key, found in outcomes.items() if found.materialized}
    blocking = [
        f"{e.asset_key.to_user_string()} {e.check_name}"
        for found in outcomes.values()
        for e in found.checks
        if e.blocking and not e.passed and e.severity == dg.AssetCheckSeverity.ERROR
    ]
    return Run(
        name=_run_name(run),
        succeeded=run.status == dg.DagsterRunStatus.SUCCESS,
        outcomes=list(outcomes.values()),
        not_materialized=sorted(
            key.to_user_string() for key in (run.asset_selection or set()) - written
        ),
        blocking_failures=blocking,
    )


def _run_name(run: dg.DagsterRun) -> str:
    keys = sorted(key.to_user_string() for key in run.asset_selection or ())
    name = keys[0] if len(keys) == 1 else "of the storefront"
    partition = run.tags.get("dagster/partition")
    return f"{name} [{partition}]" if partition else name


def _value(entry: Any) -> Any:
    return getattr(entry, "value", entry)


def _rows_at(address: str) -> int | None:
    """The row count of the quarantine at `address`, when it is a parquet file here."""
    path = Path(address)
    if path.suffix != ".parquet" or not path.exists():
        return None
    return int(pl.scan_parquet(path).select(pl.len()).collect().item())


def _row(outcome: Outcome) -> str:
    errors = outcome.failed(dg.AssetCheckSeverity.ERROR)
    warnings = outcome.failed(dg.AssetCheckSeverity.WARN)
    failed = ", ".join(
        f"{count} {word}" for count, word in ((errors, "error"), (warnings, "warn")) if count
    )
    checks = len(outcome.checks)
    return (
        f"{outcome.label:<26}{_number(outcome.rows):>13}{_number(outcome.quarantined):>13}"
        f"{_number(checks or None):>8}{_number(checks - errors - warnings if checks else None):>8}"
        f"   {failed or '-'}"
    )


def _number(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _gravity(evaluation: AssetCheckEvaluation) -> tuple[int, int]:
    """ERROR before WARN, then the most failed rows first."""
    failed = _value(evaluation.metadata.get("dy_failed_count")) or 0
    return (evaluation.severity != dg.AssetCheckSeverity.ERROR, -failed)


def _failing(failing: list[tuple[Outcome, AssetCheckEvaluation]]) -> Iterator[str]:
    """One aligned line per failing check: asset, severity, check, rows failed."""
    label = max(len(outcome.label) for outcome, _ in failing)
    name = max(len(evaluation.check_name) for _, evaluation in failing)
    for outcome, evaluation in failing:
        failed = _value(evaluation.metadata.get("dy_failed_count"))
        checked = _value(evaluation.metadata.get("dy_row_count"))
        if failed is None:  # the column-schema check: no row was evaluated
            share = "the column schema does not match"
        elif checked:
            share = f"{failed:,} of {checked:,} ({failed / checked:.1%})"
        else:
            share = f"{failed:,} rows"
        yield (
            f"  {outcome.label:<{label}}  {evaluation.severity.value:<5}  "
            f"{evaluation.check_name:<{name}}  {share}"
        )


def _verdicts(runs: list[Run]) -> Iterator[str]:
    """Why each run ended as it did, and what the gate and the warn rules did."""
    for run in runs:
        if run.blocking_failures:
            stopped = ", ".join(run.not_materialized) or "nothing downstream"
            yield (
                f"Run {run.name} failed, as the demo intends: the blocking check "
                f"{'; '.join(run.blocking_failures)} failed at ERROR, so Dagster did not "
                f"materialize {stopped}."
            )
        elif not run.succeeded:
            yield f"Run {run.name} failed unexpectedly: its log is under .demo/logs."
    succeeded = [run.name for run in runs if run.succeeded]
    if succeeded:
        yield f"Run {', '.join(succeeded)} succeeded."
    for outcome in (o for run in runs for o in run.outcomes if o.quarantined):
        yield (
            f"{outcome.label} is written through its gate: {outcome.quarantined:,} rows failing "
            f"an error rule went to its quarantine, and its {_number(outcome.rows)} valid rows "
            "to the table."
        )
    warned = [
        e
        for run in runs
        for o in run.outcomes
        for e in o.checks
        if not e.passed and e.severity == dg.AssetCheckSeverity.WARN
    ]
    held_back = sum(1 for e in warned if "dy_quarantine" in e.metadata)
    if held_back:
        yield (
            f"{held_back} checks of error rules failed at WARN because their rows were "
            "quarantined: the tables they guard are clean."
        )
    if len(warned) > held_back:
        yield (
            f"{len(warned) - held_back} checks failed at WARN on rows written to their tables: "
            "rows worth a look, never blocking."
        )
