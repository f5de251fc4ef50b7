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
is built from the asset's resource definitions (as `context.load_asset_value` does) and
stays open while the frame is evaluated, so a scan that reads through a resource still works.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import dagster as dg
import polars as pl

from ._display import type_name
from ._evaluate import as_lazy
from .errors import UnsupportedFrameError

#: What the IO manager is asked for, in order; None is its own default (an `Any` input).
_ATTEMPTS: tuple[type | None, ...] = (pl.LazyFrame, None, pl.DataFrame)


@contextmanager
def stored_table(
    context: dg.AssetCheckExecutionContext, asset_key: dg.AssetKey
) -> Iterator[pl.LazyFrame]:
    """The stored table of `asset_key` (the run's partition of it, if any) as a LazyFrame.

    Raises the IO manager's own error when no load succeeds, and `UnsupportedFrameError`
    naming the type and the IO manager when the loaded value is not a table.
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
    with dg.AssetValueLoader({asset_key: node.assets_def}, instance=context.instance) as loader:
        value = _load(context, loader, asset_key, io_manager_key, partition)
        try:
            frame = as_lazy(value, asset=asset_key.to_user_string())
        except UnsupportedFrameError:
            raise UnsupportedFrameError(
                f"IO manager '{io_manager_key}' loaded asset {asset_key.to_user_string()} as a "
                f"{type_name(value)}, which is not a table. The checks validate a polars "
                "DataFrame or LazyFrame, a pandas DataFrame or a pyarrow Table: store the asset "
                "as one of those, or give it an IO manager that loads one."
            ) from None
        how = "streaming" if isinstance(value, pl.LazyFrame) else "in memory"
        context.log.info(
            f"Loaded {asset_key.to_user_string()}{_where(partition)} through IO manager "
            f"'{io_manager_key}' as a {type_name(value)}; evaluating {how}."
        )
        yield frame


def _load(
    context: dg.AssetCheckExecutionContext,
    loader: dg.AssetValueLoader,
    asset_key: dg.AssetKey,
    io_manager_key: str,
    partition: dict[str, Any],
) -> Any:
    errors: list[Exception] = []
    for python_type in _ATTEMPTS:
        try:
            return loader.load_asset_value(asset_key, python_type=python_type, **partition)
        except Exception as error:
            asked = python_type.__name__ if python_type else "its default type"
            context.log.debug(
                f"IO manager '{io_manager_key}' could not load {asset_key.to_user_string()} as "
                f"{asked}: {type(error).__name__}: {error}"
            )
            errors.append(error)
    # The default load's error speaks for the IO manager; a lazy refusal is expected.
    raise errors[1] from errors[0]


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
