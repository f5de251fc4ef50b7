"""The console's line per step of a `dagster asset materialize`, read from the instance.

The CLI's own console output is a merge of the orchestrating process and each step's process
writing to one pipe, and a line can go missing from it. What the instance records cannot, so
the demo follows the run in the instance's event log (`DAGSTER_HOME`): a line when a step
succeeded (with the duration Dagster recorded), failed or was skipped, and at the end of the
run a line for each step of its plan that never ran, naming the failed step upstream of it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import dagster as dg

_ENDED = {
    dg.DagsterEventType.STEP_SUCCESS,
    dg.DagsterEventType.STEP_FAILURE,
    dg.DagsterEventType.STEP_SKIPPED,
}


class Progress:
    """Follows the first run the instance records that is not in `known` (the run ids that
    existed before the CLI was launched)."""

    def __init__(self, instance: dg.DagsterInstance, *, known: Sequence[str]) -> None:
        self._instance = instance
        self._known = set(known)
        self._run_id: str | None = None
        self._cursor: str | None = None
        self._ended: dict[str, dg.DagsterEventType] = {}

    def poll(self) -> list[str]:
        """A line for each step that ended since the last poll, in the order Dagster recorded."""
        if self._run_id is None:
            self._run_id = next(
                (i for i in self._instance.get_run_ids(limit=5) if i not in self._known), None
            )
            if self._run_id is None:
                return []
        lines = []
        while True:
            found = self._instance.get_records_for_run(
                self._run_id, cursor=self._cursor, of_type=_ENDED
            )
            for record in found.records:
                event = record.event_log_entry.dagster_event
                if event is not None and event.step_key is not None:
                    self._ended[event.step_key] = event.event_type
                    lines.append(_line(event))
            self._cursor = found.cursor
            if not found.has_more:
                return lines

    def finish(self) -> list[str]:
        """The last lines, once the run has ended: the steps that ended since the last poll,
        then each step of the run's plan that never ran and why."""
        lines = self.poll()
        run = self._instance.get_run_by_id(self._run_id) if self._run_id else None
        if run is None or run.execution_plan_snapshot_id is None:
            return lines
        plan = self._instance.get_execution_plan_snapshot(run.execution_plan_snapshot_id)
        upstream = {
            step.key: sorted({key for i in step.inputs for key in i.upstream_step_keys})
            for step in plan.steps
        }
        return lines + list(self._not_run(upstream))

    def _not_run(self, upstream: dict[str, list[str]]) -> Iterator[str]:
        failed = {k for k, e in self._ended.items() if e == dg.DagsterEventType.STEP_FAILURE}
        missing = [key for key in upstream if key not in self._ended]
        for key in missing:
            stopped = [k for k in upstream[key] if k in failed]
            if stopped:
                yield f"  skipped {key}: {', '.join(stopped)} failed"
            else:
                ran_not = [k for k in upstream[key] if k in missing]
                reason = f"{', '.join(ran_not)} did not run" if ran_not else "it did not run"
                yield f"  skipped {key}: {reason}"


def _line(event: dg.DagsterEvent) -> str:
    if event.event_type == dg.DagsterEventType.STEP_SUCCESS:
        took = event.event_specific_data.duration_ms  # type: ignore[union-attr]
        return f"  {'done':<7} {event.step_key} in {_duration(took)}"
    if event.event_type == dg.DagsterEventType.STEP_FAILURE:
        return f"  {'FAILED':<7} {event.step_key}"
    return f"  skipped {event.step_key}: an upstream output was not produced"


def _duration(milliseconds: float) -> str:
    """820ms, 1.82s, 4m52s: as Dagster's own log says it."""
    if milliseconds < 1000:
        return f"{milliseconds:.0f}ms"
    if milliseconds < 60_000:
        return f"{milliseconds / 1000:.2f}s"
    minutes, seconds = divmod(int(milliseconds // 1000), 60)
    return f"{minutes}m{seconds}s"
