"""The one place that reads Dagster internals: what a running step exposes to its asset body.

Dagster has no public way for an asset body to write a second value through its own IO
manager, nor to tell a run from a direct invocation. Four facts are read here, each pinned by
`tests/test_quarantine_dagster_private.py`, which names the decision resting on it:

- `context.get_step_execution_context()` returns the step in a run and raises
  `DagsterInvalidPropertyError` under direct invocation: that is how a run is told apart
  (and why `delegating_writer` raises that error under direct invocation).
- `StepExecutionContext.get_io_manager(handle)` and `.get_output_context(handle)` return the
  asset output's IO manager and a fresh `OutputContext`, built exactly as Dagster builds it
  to store the output (resources, definition metadata, partitions). The quarantine is written
  with that context after replacing its `_asset_key` (and the key of its `_asset_spec`).
- `StepExecutionContext.resolved_run_config.resources[key].config` is a resource's config
  as the run resolved it (defaults, run config): the sidecar hands it to the IO manager it
  loads with, as Dagster does for a step's own inputs (pinned by
  `tests/test_sources_dagster_private.py`).
- `StepExecutionContext.repository_def` is set only in a deployed code location; under
  `materialize` / `execute_in_process` the job's asset graph stands in for it.
"""

from __future__ import annotations

import inspect
from typing import Any

import dagster as dg
from dagster._check import CheckError
from dagster._core.errors import DagsterInvalidPropertyError
from dagster._core.execution.plan.outputs import StepOutputHandle

Context = dg.AssetExecutionContext | dg.OpExecutionContext

__all__ = ["DagsterInvalidPropertyError", "asset_graph", "in_run", "resource_config", "write_as"]


def in_run(context: Context) -> bool:
    """Whether `context` belongs to a step of a run (False under direct invocation)."""
    try:
        context.get_step_execution_context()
    except DagsterInvalidPropertyError:
        return False
    return True


def write_as(context: Context, asset_key: dg.AssetKey, value: Any) -> dict[str, Any]:
    """Hand `value` to the IO manager of the step's asset output, as if it were `asset_key`.

    The IO manager gets the output context Dagster would give it for the asset itself, with
    only the asset key changed, so database IO managers keep their connection settings and
    the run's partition passes through. Returns the metadata the IO manager logged.
    Raises `DagsterInvalidPropertyError` under direct invocation.
    """
    step = context.get_step_execution_context()
    output_name = context.assets_def.get_output_name_for_asset_key(context.asset_key)
    handle = StepOutputHandle(step.step.key, output_name)
    io_manager = step.get_io_manager(handle)
    output_context = step.get_output_context(handle)
    output_context._asset_key = asset_key
    if output_context._asset_spec is not None:
        output_context._asset_spec = output_context._asset_spec.replace_attributes(key=asset_key)
    metadata: dict[str, Any] = {}
    returned = io_manager.handle_output(output_context, value)
    if inspect.isgenerator(returned):
        for item in returned:
            if isinstance(item, dict):
                metadata.update(item)
    output_context.consume_events()  # the quarantine is not an asset: record no events
    metadata.update(output_context.consume_logged_metadata())
    return metadata


def asset_graph(context: Context) -> Any | None:
    """The asset graph of the code location running `context` (None under direct invocation).

    A deployed code location gives the whole repository; `materialize` and
    `execute_in_process` give no repository, so the job's asset graph is used.
    """
    if not in_run(context):
        return None
    try:
        return context.repository_def.asset_graph
    except CheckError:  # "No repository definition was set on the step context"
        return context.job_def.asset_layer.asset_graph


def resource_config(context: Context | dg.AssetCheckExecutionContext, key: str) -> Any:
    """The config the run resolved for resource `key` (what its IO manager reads as
    `context.resource_config`)."""
    return context.get_step_execution_context().resolved_run_config.resources[key].config
