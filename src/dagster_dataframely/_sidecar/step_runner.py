"""The runner of a step that checks many assets: their plans evaluated concurrently, each
asset's results yielded as it finishes, one asset's failure kept to its own checks.

Each plan runs in a thread of a bounded pool. A pushed-down query waits on the database and
a streamed evaluation runs on polars' own threads, so a few threads keep both busy without
oversubscribing the cores. The threads never touch Dagster's event stream: each keeps its
asset's results and log lines, and the step's own thread writes them, asset by asset, with
a progress line. So the UI fills while the step runs, and a step holds at most one asset's
samples per thread.

A table that cannot be read, or whose rules cannot be evaluated, fails its own checks (a
failed result carrying the error, `dy_error`) and no other's. At the end the step logs its
summary (`Summary`), with every blocking check that failed, in one entry; then it fails,
naming every table it could not check.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Collection, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any

import dagster as dg

from .._checks import figures as f
from .._checks import step_internals
from .._checks.summary import Summary
from .._engine.display import shorten
from .._engine.severity import listed
from ..errors import ColumnSchemaError, TablesNotCheckedError
from .check_plan import CheckEvent, CheckPlan

#: How many failing checks and unreadable tables the step's failure lists by name.
_LISTED = 20
#: The longest error text a failed result carries, and the step's failure per table.
_ERROR_TEXT = 2000
_LISTED_ERROR = 400


def run_plans(
    context: dg.AssetCheckExecutionContext,
    plans: Sequence[CheckPlan],
    *,
    concurrency: int,
) -> Iterator[CheckEvent]:
    """The results of the checks the run selected, of every asset of `plans`, at most
    `concurrency` assets at a time; raises `dg.Failure` at the end when a table could not be
    checked or a blocking check failed."""
    selected = context.selected_asset_check_keys
    chosen = [plan for plan in plans if any(key.asset_key == plan.key for key in selected)]
    concurrent = all(plan.source.concurrent(context) for plan in chosen)
    workers = max(1, min(concurrency if concurrent else 1, len(chosen)))
    context.log.info(
        f"Checking {len(chosen)} table(s), {workers} at a time"
        + ("" if concurrent or len(chosen) < 2 else " (a source reads one table at a time)")
        + "."
    )
    step_internals.fetch_latest_materializations(context, [plan.key for plan in chosen])
    tally = _Tally(total=len(chosen))
    remaining = iter(chosen)
    with (
        _held_open(context, chosen),
        ThreadPoolExecutor(workers, thread_name_prefix="dy_checks") as pool,
    ):
        pending: set[Future[_Outcome]] = set()

        def submit() -> None:
            plan = next(remaining, None)
            if plan is not None:
                pending.add(pool.submit(_evaluate, plan, context, selected))

        for _ in range(workers):
            submit()
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    submit()
                    yield from tally.report(future.result(), context, selected)
        finally:
            for future in pending:
                future.cancel()
    tally.conclude(context)


@contextmanager
def _held_open(
    context: dg.AssetCheckExecutionContext, plans: Sequence[CheckPlan]
) -> Iterator[None]:
    """What the plans' sources hold open for the step (a DuckDB file read-only), once for
    each kind of source and the resources it reads through."""
    kinds = {(type(plan.source), plan.source.required_resource_keys): plan.source for plan in plans}
    with ExitStack() as stack:
        for source in kinds.values():
            stack.enter_context(source.held_open(context))
        yield


@dataclass
class _Outcome:
    """One asset's evaluation: what it yielded, logged and, if it stopped, why."""

    plan: CheckPlan
    events: list[CheckEvent]
    logged: list[tuple[int, str]]
    error: Exception | None


def _evaluate(
    plan: CheckPlan,
    context: dg.AssetCheckExecutionContext,
    selected: Collection[dg.AssetCheckKey],
) -> _Outcome:
    """`plan.run`, kept whole: its events, its log lines and the error it stopped at."""
    log = _KeptLog()
    events: list[CheckEvent] = []
    try:
        for event in plan.run(_AssetContext(context, log), selected):  # type: ignore[arg-type]
            events.append(event)
    except Exception as error:  # one table's failure is its own: the others go on
        return _Outcome(plan, events, log.lines, error)
    return _Outcome(plan, events, log.lines, None)


@dataclass
class _Tally:
    """What the step reported so far, for its progress lines and its verdict."""

    total: int
    checked: int = 0
    unreadable: list[tuple[dg.AssetKey, Exception]] = field(default_factory=list)
    blocking: list[str] = field(default_factory=list)
    summary: Summary = field(default_factory=Summary)

    def report(
        self,
        outcome: _Outcome,
        context: dg.AssetCheckExecutionContext,
        selected: Collection[dg.AssetCheckKey],
    ) -> Iterator[CheckEvent]:
        """`outcome`'s events, failed results for the checks a failure left without one, and
        one log entry: the progress line, then the table's own log lines under it.

        One entry a table, not one a line: every entry is an event the instance stores (in
        SQLite, synced to disk), and a step of many tables would write several per table."""
        plan = outcome.plan
        lines = list(outcome.logged)
        reported = {e.check_name for e in outcome.events if isinstance(e, dg.AssetCheckResult)}
        yield from self.noted(outcome.events)
        # A column mismatch was reported by its own failing check; any other error left
        # the table unchecked.
        error = None if isinstance(outcome.error, ColumnSchemaError) else outcome.error
        if error is not None:
            self.unreadable.append((plan.key, error))
            text = shorten(f"{type(error).__name__}: {error}", _ERROR_TEXT)
            lines.append(
                (logging.ERROR, f"Could not check asset {plan.key.to_user_string()}: {text}")
            )
            for key in selected:
                if key.asset_key == plan.key and key.name not in reported:
                    yield from self.noted(
                        [
                            dg.AssetCheckResult(
                                asset_key=plan.key,
                                check_name=key.name,
                                passed=False,
                                severity=dg.AssetCheckSeverity.ERROR,
                                metadata={f.ERROR: dg.MetadataValue.text(text)},
                            )
                        ]
                    )
        blocking = {spec.name for spec in plan.specs if spec.blocking}
        failed = [
            e
            for e in outcome.events
            if isinstance(e, dg.AssetCheckResult)
            and not e.passed
            and e.severity == dg.AssetCheckSeverity.ERROR
        ]
        named = plan.key.to_user_string()
        self.blocking.extend(f"{named}:{e.check_name}" for e in failed if e.check_name in blocking)
        self.checked += 1
        state = (
            "could not be checked"
            if error is not None
            else f"{len(failed)} check(s) failing at ERROR"
            if failed
            else "passed"
        )
        progress = (
            f"{self.checked}/{self.total} tables checked ({plan.key.to_user_string()}: {state})."
        )
        level = max([logging.INFO, *(level for level, _ in lines)])
        context.log.log(level, "\n".join([progress, *(f"  {line}" for _, line in lines)]))

    def noted(self, events: Sequence[CheckEvent]) -> Sequence[CheckEvent]:
        """`events`, their check results noted for the summary."""
        for event in events:
            self.summary.add(event)
        return events

    def conclude(self, context: dg.AssetCheckExecutionContext) -> None:
        """Log the summary and name the blocking checks that failed (Dagster then fails the
        step for them), one entry; raise when a table could not be checked: its own error
        when it is the only one, else `TablesNotCheckedError` with every table's."""
        summary = self.summary.text()
        if self.blocking:
            context.log.error(
                f"{summary}\n{len(self.blocking)} blocking check(s) failed at ERROR: "
                f"{listed(self.blocking, _LISTED)}."
            )
        elif self.summary.checked:
            context.log.info(summary)
        if len(self.unreadable) == 1:
            raise self.unreadable[0][1]
        if self.unreadable:
            errors = [
                f"{key.to_user_string()}: "
                + shorten(f"{type(error).__name__}: {error}", _LISTED_ERROR)
                for key, error in self.unreadable
            ]
            raise TablesNotCheckedError(
                f"{len(errors)} of {self.total} tables could not be checked; the other tables' "
                f"results were reported, and each of these tables' checks failed with its "
                f"error in dy_error. {listed(errors, _LISTED, separator=' | ')}"
            )


class _KeptLog:
    """A step log for one asset's thread: its lines are kept, for the step's thread to write
    (Dagster's log manager belongs to the step's thread)."""

    def __init__(self) -> None:
        self.lines: list[tuple[int, str]] = []
        self._lock = threading.Lock()

    def log(self, level: int, message: Any, *args: Any, **kwargs: Any) -> None:
        with self._lock:
            self.lines.append((level, str(message)))

    def debug(self, message: Any, *args: Any, **kwargs: Any) -> None:
        self.log(logging.DEBUG, message)

    def info(self, message: Any, *args: Any, **kwargs: Any) -> None:
        self.log(logging.INFO, message)

    def warning(self, message: Any, *args: Any, **kwargs: Any) -> None:
        self.log(logging.WARNING, message)

    def error(self, message: Any, *args: Any, **kwargs: Any) -> None:
        self.log(logging.ERROR, message)

    def exception(self, message: Any, *args: Any, **kwargs: Any) -> None:
        self.log(logging.ERROR, message)

    def critical(self, message: Any, *args: Any, **kwargs: Any) -> None:
        self.log(logging.CRITICAL, message)


class _AssetContext:
    """The step's context as one asset's thread sees it: the same run, partition and
    resources, with a log of its own."""

    def __init__(self, context: dg.AssetCheckExecutionContext, log: _KeptLog) -> None:
        self._context = context
        self.log = log

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)
