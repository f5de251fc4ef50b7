"""The one place that reads Dagster internals: what a running step exposes to its asset body.

Dagster has no public way for an asset body to write a second value through its own IO
manager, nor to tell a run from a direct invocation. These facts are read here, each pinned by
`tests/test_quarantine_dagster_private.py`, which names the decision resting on it:

- `context.get_step_execution_context()` returns the step in a run and raises
  `DagsterInvalidPropertyError` under direct invocation: that is how a run is told apart
  (and why `delegating_writer` raises that error under direct invocation).
- `StepExecutionContext.get_io_manager(handle)` and `.get_output_context(handle)` return the
  asset output's IO manager and a fresh `OutputContext`, built exactly as Dagster builds it
  to store the output (resources, definition metadata, partitions). A hand-wired asset's
  quarantine (an undeclared key) is written with the table's context after replacing its
  `_asset_key` (and the key of its `_asset_spec`). `dd.asset` declares the quarantine as an
  output of its own and writes it through that output, by its name: a run that selected the
  table alone still has that output's IO manager and context (its own IO manager key and
  definition metadata), though the subsetted `context.assets_def` names no output of it.
  A run that selected the quarantine alone writes the table through the table's output
  the same way, and hands its check results to `AssetCheckResult.to_asset_check_evaluation`
  (the evaluation Dagster itself would record) to yield them as evaluations.
- `StepExecutionContext.resolved_run_config.resources[key].config` is a resource's config
  as the run resolved it (defaults, run config): the sidecar hands it to the IO manager it
  loads with, as Dagster does for a step's own inputs (pinned by
  `tests/test_sources_dagster_private.py`).
- Each check's evaluation records the latest materialization of its asset, which Dagster
  reads from the instance one asset at a time, through the step's `_data_version_cache`
  (`AssetCheckResult.to_asset_check_evaluation`), unless the step is partitioned.
  `_fetch_input_asset_version_info(keys)` fills that cache for many assets with one read
  of the asset records; the evaluations then record the same materializations (pinned by
  `tests/test_steps_dagster_private.py`).
- `StepExecutionContext.repository_def` is set only in a deployed code location; elsewhere
  (`materialize`, `execute_in_process` of a job) the job's asset graph is a subset of the
  code location's, and its `source_asset_graph` is the whole graph of the Definitions.
- Every IO manager that stores assets as database tables (dagster-duckdb, -snowflake,
  -gcp) is a `DbIOManager`: it deletes the stored rows (of the partition) and then inserts,
  so a frame with other columns fails only after the delete. Its `_get_table_slice` and
  `_db_client.get_table_name` give the table's name; its `load_input`, given an input
  context of Dagster's `Any` type, reads the table as its default load type.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import dagster as dg
from dagster._check import CheckError
from dagster._core.errors import DagsterInvalidPropertyError
from dagster._core.execution.plan.outputs import StepOutputHandle
from dagster._core.storage.db_io_manager import DbIOManager
from dagster._core.types.dagster_type import resolve_dagster_type

Context = dg.AssetExecutionContext | dg.OpExecutionContext

__all__ = [
    "DagsterInvalidPropertyError",
    "StoredTable",
    "asset_graph",
    "fetch_latest_materializations",
    "in_run",
    "output_io_manager",
    "resource_config",
    "stored_table",
    "write_as",
]


def in_run(context: Context) -> bool:
    """Whether `context` belongs to a step of a run (False under direct invocation)."""
    try:
        context.get_step_execution_context()
    except DagsterInvalidPropertyError:
        return False
    return True


def write_as(
    context: Context,
    asset_key: dg.AssetKey,
    value: Any,
    *,
    table_key: dg.AssetKey | None = None,
    output_name: str | None = None,
    fit: Callable[[Any, Any], Any] | None = None,
) -> dict[str, Any]:
    """Hand `value` (as `fit(io_manager, value)` makes it, when given) to the IO manager of
    the step's output `output_name` (which the op declares for `asset_key`, selected or
    not), or of `asset_key` when the run selected it, else to that of `table_key` (default:
    the step's one asset) as if it were `asset_key`.

    The IO manager gets the output context Dagster would give it for that output, with only
    the asset key changed, so database IO managers keep their connection settings and the
    run's partition passes through. Returns the metadata the IO manager logged (the caller
    records the write as a materialization of `asset_key`).
    Raises `DagsterInvalidPropertyError` under direct invocation.
    """
    io_manager, output_context = _output_as(
        context, asset_key, table_key or context.asset_key, output_name
    )
    metadata: dict[str, Any] = {}
    if fit is not None:
        value = fit(io_manager, value)
    returned = io_manager.handle_output(output_context, value)
    if inspect.isgenerator(returned):
        for item in returned:
            if isinstance(item, dict):
                metadata.update(item)
    output_context.consume_events()  # the caller logs the one materialization of the write
    metadata.update(output_context.consume_logged_metadata())
    return metadata


@dataclass(frozen=True)
class StoredTable:
    """A database table an IO manager holds for an asset key."""

    #: the fully qualified name the IO manager reports (`dagster/table_name`)
    address: str
    #: `schema.table`, as SQL on the IO manager's database names it
    relation: str
    columns: tuple[str, ...]


def stored_table(
    context: Context,
    asset_key: dg.AssetKey,
    *,
    table_key: dg.AssetKey | None = None,
    output_name: str | None = None,
) -> StoredTable | None:
    """The table the step's IO manager stores for `asset_key` (the run's partition of it),
    when that IO manager is a database one and the table exists; else None.

    `asset_key` is read through its own output (`output_name`, or the selected output of
    `asset_key`), else through the output of `table_key` (default: the step's one asset)
    under `asset_key`.

    Reads the stored rows through the IO manager's own `load_input` (one read of that
    partition). Any failure to read means there is nothing to compare with: the write that
    follows reports a real fault itself.
    """
    io_manager, output_context = _output_as(
        context, asset_key, table_key or context.asset_key, output_name
    )
    if not isinstance(io_manager, DbIOManager):
        return None  # file IO managers replace the stored object whole, whatever its columns
    table_slice = io_manager._get_table_slice(output_context, output_context)
    address = io_manager._db_client.get_table_name(table_slice)
    relation = f"{table_slice.schema}.{table_slice.table}"
    partitioned = output_context.has_asset_partitions
    loading = dg.build_input_context(
        dagster_type=resolve_dagster_type(Any),  # the IO manager's default load type
        asset_key=asset_key,
        upstream_output=output_context,
        definition_metadata=output_context.definition_metadata,
        resource_config=output_context.resource_config,
        partition_key=output_context.asset_partition_key if partitioned else None,
        asset_partitions_def=output_context.asset_partitions_def if partitioned else None,
    )
    try:
        stored = io_manager.load_input(loading)
    except Exception:
        return None
    columns = getattr(stored, "columns", None)
    return (
        None if columns is None else StoredTable(address, relation, tuple(str(c) for c in columns))
    )


def asset_graph(context: Context) -> Any | None:
    """The asset graph of the whole code location running `context` (None under direct
    invocation), not only the assets the run selected: the guard against a quarantine
    overwriting another asset must see every asset that other code declares.
    """
    if not in_run(context):
        return None
    try:
        return context.repository_def.asset_graph
    except CheckError:  # "No repository definition was set on the step context"
        return context.job_def.asset_layer.asset_graph.source_asset_graph


def _output_as(
    context: Context, asset_key: dg.AssetKey, table_key: dg.AssetKey, output_name: str | None
) -> tuple[Any, dg.OutputContext]:
    """The IO manager and output context of the step's output `output_name`, or of the output
    of `asset_key` when the run selected it (a subsetted `assets_def` names no output of the
    others); else those of the output of `table_key`, with the key replaced."""
    step = context.get_step_execution_context()
    declared = output_name is not None or asset_key in context.selected_asset_keys
    if output_name is None:
        output_name = context.assets_def.get_output_name_for_asset_key(
            asset_key if declared else table_key
        )
    handle = StepOutputHandle(step.step.key, output_name)
    output_context = step.get_output_context(handle)
    if not declared:
        output_context._asset_key = asset_key
        if output_context._asset_spec is not None:
            output_context._asset_spec = output_context._asset_spec.replace_attributes(
                key=asset_key
            )
    return step.get_io_manager(handle), output_context


def check_evaluation(context: Context, result: dg.AssetCheckResult) -> dg.AssetCheckEvaluation:
    """`result` as the evaluation Dagster records for it (its check's blocking, the run's
    partition, the materialization it targets), for a check the run did not select: the
    step's own checks are yielded as results, which Dagster takes only for selected ones."""
    return result.to_asset_check_evaluation(context.get_step_execution_context())


def output_io_manager(context: Context, output_name: str) -> Any:
    """The IO manager that stores the step's output `output_name`."""
    step = context.get_step_execution_context()
    return step.get_io_manager(StepOutputHandle(step.step.key, output_name))


def fetch_latest_materializations(
    context: dg.AssetCheckExecutionContext, keys: Sequence[dg.AssetKey]
) -> None:
    """Read the latest materialization of each asset of `keys` in one read of the instance,
    for the evaluations of their checks in this step, which would otherwise read it asset by
    asset: 22 ms an asset on a DAGSTER_HOME's SQLite storage. Nothing in a partitioned step,
    whose evaluations read their partition's materialization each."""
    step = context.get_step_execution_context()
    if step.has_partition_key:
        return
    cache = step._data_version_cache
    missing = [key for key in keys if key not in cache.input_asset_version_info]
    if missing:
        cache._fetch_input_asset_version_info(missing)


def resource_config(context: Context | dg.AssetCheckExecutionContext, key: str) -> Any:
    """The config the run resolved for resource `key` (what its IO manager reads as
    `context.resource_config`)."""
    return context.get_step_execution_context().resolved_run_config.resources[key].config
