"""Reading a stored asset back for the sidecar: lazily where its IO manager can, else eagerly.

An input's Dagster type is fixed when the check is defined, but the IO manager is only known
when the run starts, and IO managers disagree on what they can load: `dd.ParquetIOManager`
hands a `pl.scan_parquet` scan to an input typed `pl.LazyFrame`, while a `DbIOManager` (such
as dagster-duckdb-polars) refuses any type it has no handler for. So the sidecar declares the
asset as a plain dependency (Dagster orders the steps but loads nothing) and asks the asset's
own IO manager itself, in order:

1. for a `pl.LazyFrame` (streaming, memory bounded by the evaluator, not the table);
2. for the IO manager's own default type (its `Any` load);
3. for a `pl.DataFrame` (a `DbIOManager` with several handlers and no default).

The first load that succeeds wins; pandas and pyarrow values are converted. The IO manager
is the run's resource when the check requires its key (so run config and resources bound
under another key reach it), else it is built from the asset's resource definitions (as
`context.load_asset_value` does); it stays open while the frame is evaluated, so a scan that
reads through a resource still works. A failed load names the asset and the IO manager.
"""

from __future__ import annotations

import sys
import typing
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import dagster as dg
import polars as pl

from .._checks.step_internals import resource_config
from .._engine.display import type_name
from .._engine.evaluate import as_lazy
from ..errors import IOManagerLoadError, UnsupportedFrameError


def read_errors() -> tuple[type[Exception], ...]:
    """The exceptions of reading a table (a missing or truncated file, a refused query), as
    opposed to a rule whose expression is wrong: re-raised naming the asset and the reader.

    Called in an `except` clause, so only once something was raised: a DuckDB error can only
    come from a duckdb that is already imported, and importing it here (32 MB, every step
    process) just to name its class would cost the processes that never read DuckDB.
    """
    duckdb = sys.modules.get("duckdb")
    found: tuple[type[Exception], ...] = (OSError, pl.exceptions.ComputeError)
    return found if duckdb is None else (*found, duckdb.Error)


#: What the IO manager is asked for, in order; None is its own default (an `Any` input).
_ATTEMPTS: tuple[type | None, ...] = (pl.LazyFrame, None, pl.DataFrame)


@contextmanager
def stored_table(
    context: dg.AssetCheckExecutionContext, asset_key: dg.AssetKey
) -> Iterator[pl.LazyFrame]:
    """The stored table of `asset_key` (the run's partition of it, if any) as a LazyFrame.

    Raises `IOManagerLoadError` naming the asset and the IO manager when no load succeeds,
    and `UnsupportedFrameError` naming the type and the IO manager when the loaded value is
    not a table.
    """
    layer = context.job_def.asset_layer
    if not layer.has(asset_key):
        raise dg.DagsterInvariantViolationError(
            f"The checks of asset {asset_key.to_user_string()} cannot load it: the asset is not "
            "in these Definitions. Add the asset (or an AssetSpec for it) to the Definitions."
        )
    node = layer.get(asset_key)
    io_manager_key = node.io_manager_key
    partition = _partition(context)
    with ExitStack() as stack:
        load = _run_loader(context, node.assets_def, asset_key, io_manager_key, partition)
        if load is None:
            loader = stack.enter_context(
                dg.AssetValueLoader({asset_key: node.assets_def}, instance=context.instance)
            )

            def load(python_type: type | None) -> Any:
                return loader.load_asset_value(asset_key, python_type=python_type, **partition)

        value, frame = load_frame(context.log, load, asset_key, io_manager_key, partition)
        how = "streaming" if isinstance(value, pl.LazyFrame) else "in memory"
        context.log.info(
            f"Loaded {asset_key.to_user_string()}{_where(partition)} through IO manager "
            f"'{io_manager_key}' as a {type_name(value)}; evaluating {how}."
        )
        try:
            yield frame
        except read_errors() as error:  # a lazy load fails when read: a truncated file
            raise _load_error(asset_key, io_manager_key, partition, error) from error


def _run_loader(
    context: dg.AssetCheckExecutionContext,
    assets_def: dg.AssetsDefinition,
    asset_key: dg.AssetKey,
    io_manager_key: str,
    partition: dict[str, Any],
) -> Any:
    """A load through the run's own IO manager resource, or None when the check does not
    require `io_manager_key` (then the IO manager is built from the asset's definition)."""
    if io_manager_key not in context.op_def.required_resource_keys:
        return None
    io_manager = getattr(context.resources, io_manager_key)
    config = resource_config(context, io_manager_key)
    spec = assets_def.specs_by_key[asset_key]
    output_name = (
        assets_def.get_output_name_for_asset_key(asset_key) if assets_def.is_executable else None
    )
    key_range = partition.get("partition_key_range")
    if "partition_key" in partition:
        key_range = dg.PartitionKeyRange(partition["partition_key"], partition["partition_key"])

    def load(python_type: type | None) -> Any:
        # Both contexts are entered and left, so the resources (and ephemeral instance) each
        # builds are closed now, not by the garbage collector after their database is gone.
        with (
            dg.build_output_context(
                name=output_name, definition_metadata=dict(spec.metadata), asset_key=asset_key
            ) as upstream,
            dg.build_input_context(
                asset_key=asset_key,
                dagster_type=_dagster_type(python_type),
                upstream_output=upstream,
                partition_key=partition.get("partition_key"),
                asset_partition_key_range=key_range,
                asset_partitions_def=assets_def.partitions_def,
                resource_config=config,
                instance=context.instance,
            ) as input_context,
        ):
            return io_manager.load_input(input_context)

    return load


def _dagster_type(python_type: type | None) -> dg.DagsterType:
    """The input type an IO manager reads `context.dagster_type.typing_type` from."""
    return dg.DagsterType(
        type_check_fn=lambda _context, _value: True,
        name=python_type.__name__ if python_type else "Any",
        typing_type=python_type or typing.Any,
    )


def load_frame(
    log: Any,
    load: Any,
    asset_key: dg.AssetKey,
    io_manager_key: str,
    partition: dict[str, Any],
) -> tuple[Any, pl.LazyFrame]:
    """The value `load(python_type)` gives for the first type of `_ATTEMPTS` it can load,
    and that value as a LazyFrame; each refusal is a debug line of `log`.

    Raises `IOManagerLoadError` when no load succeeds and `UnsupportedFrameError` when the
    value is not a table, both naming the asset and the IO manager.
    """
    value = _first_load(log, load, asset_key, io_manager_key, partition)
    try:
        return value, as_lazy(value, asset=asset_key.to_user_string())
    except UnsupportedFrameError:
        raise UnsupportedFrameError(
            f"IO manager '{io_manager_key}' loaded asset {asset_key.to_user_string()} as a "
            f"{type_name(value)}, which is not a table. The checks validate a polars "
            "DataFrame or LazyFrame, a pandas DataFrame or a pyarrow Table: store the asset "
            "as one of those, or give it an IO manager that loads one."
        ) from None


def _first_load(
    log: Any,
    load: Any,
    asset_key: dg.AssetKey,
    io_manager_key: str,
    partition: dict[str, Any],
) -> Any:
    errors: list[Exception] = []
    for python_type in _ATTEMPTS:
        try:
            return load(python_type)
        except Exception as error:
            asked = python_type.__name__ if python_type else "its default type"
            log.debug(
                f"IO manager '{io_manager_key}' could not load {asset_key.to_user_string()} as "
                f"{asked}: {type(error).__name__}: {error}"
            )
            errors.append(error)
    # The default load's error speaks for the IO manager; a lazy refusal is expected.
    raise _load_error(asset_key, io_manager_key, partition, errors[1]) from errors[1]


def _load_error(
    asset_key: dg.AssetKey, io_manager_key: str, partition: dict[str, Any], error: Exception
) -> IOManagerLoadError:
    return IOManagerLoadError(
        f"IO manager '{io_manager_key}' could not load asset {asset_key.to_user_string()}"
        f"{_where(partition)}: {type(error).__name__}: {error}. Check that the asset was "
        "materialized (for this partition) through this IO manager and its stored table is "
        "complete; for a table the IO manager does not store (dbt, a warehouse table), give "
        "the checks a source= (see dd.sources)."
    )


def _partition(context: dg.AssetCheckExecutionContext) -> dict[str, Any]:
    """The partition the run materialized, as `load_asset_value` keywords."""
    if context.has_partition_key:
        return {"partition_key": context.partition_key}
    if context.has_partition_key_range:
        return {"partition_key_range": context.partition_key_range}
    return {}


def _where(partition: dict[str, Any]) -> str:
    if "partition_key" in partition:
        return f" (partition {partition['partition_key']})"
    if "partition_key_range" in partition:
        key_range = partition["partition_key_range"]
        return f" (partitions {key_range.start}…{key_range.end})"
    return ""
