"""An asset's stored table, read through its IO manager as the sidecar reads it.

The frame is loaded in the sidecar's order (a `pl.LazyFrame` first, see `sources._loading`),
and only its schema is read (`collect_schema`): the table is never collected, except by the
one pass of a profile. A partitioned asset is read at the partition the user names, else at
its latest materialized one, so the schema describes a table that exists.
"""

from __future__ import annotations

import logging
from typing import Any

import dagster as dg

from .._checks.asset_keys import AssetKeyLike, closest_keys, parse_asset_key
from ..errors import IOManagerLoadError, TableNotFoundError, UnknownAssetError
from ..sources._loading import load_frame
from ._columns import InferredColumn, InferredTable
from ._profile import profile_frame

_LOG = logging.getLogger(__name__)


def asset_table(
    asset: AssetKeyLike,
    definitions: dg.Definitions,
    *,
    partition: str | None,
    instance: dg.DagsterInstance | None,
    profile: bool,
    is_in_limit: int,
) -> InferredTable:
    """The columns (and, with `profile`, the profiles) of `asset`'s stored table."""
    key = parse_asset_key(asset)
    name = key.to_user_string()
    declared = definitions.resolve_all_asset_keys()
    if key not in declared:
        closest = closest_keys(key, declared)
        hint = f" Closest declared keys: {', '.join(closest)}." if closest else ""
        raise UnknownAssetError(
            f"Cannot infer a schema for asset {name}: the Definitions do not declare it.{hint} "
            "Fix the key (a key with a prefix is written 'prefix/name'), or pass the "
            "Definitions that hold the asset."
        )
    assets_def = definitions.resolve_assets_def(key)
    if not assets_def.is_executable:
        raise TableNotFoundError(
            f"Cannot infer a schema for asset {name}: it is declared as an AssetSpec that "
            "Dagster does not materialize, so no IO manager stores its table. Infer from the "
            "table itself: its name with connection= (--duckdb, --postgres) or its path."
        )
    io_manager_key = assets_def.get_io_manager_key_for_asset_key(key)
    instance = instance or dg.DagsterInstance.ephemeral()
    latest = partition is None and assets_def.partitions_def is not None
    if latest:
        partition = _latest_partition(instance, key)
    with definitions.get_asset_value_loader(instance) as loader:

        def load(python_type: type | None) -> Any:
            return loader.load_asset_value(key, python_type=python_type, partition_key=partition)

        where = {} if partition is None else {"partition_key": partition}
        try:
            _, frame = load_frame(_LOG, load, key, io_manager_key, where)
        except IOManagerLoadError as error:
            if instance.get_latest_materialization_event(key) is None:
                raise _never_materialized(name) from error
            raise
        schema = frame.collect_schema()
        columns = [
            InferredColumn(name=column, dtype=dtype, declared=str(dtype))
            for column, dtype in schema.items()
        ]
        profiles = profile_frame(frame, columns, is_in_limit=is_in_limit) if profile else {}
    described = f"asset {name}"
    if partition is not None:
        described += f" (partition {partition}{', the latest materialized' if latest else ''})"
    return InferredTable(
        name=key.path[-1],
        where=f"{described} through IO manager '{io_manager_key}'",
        columns=columns,
        profiles=profiles,
    )


def _latest_partition(instance: dg.DagsterInstance, key: dg.AssetKey) -> str:
    """The partition of the asset's latest materialization the instance recorded."""
    event = instance.get_latest_materialization_event(key)
    if event is None or event.dagster_event is None:
        raise _never_materialized(key.to_user_string(), partitioned=True)
    partition = event.dagster_event.partition
    if partition is None:
        raise TableNotFoundError(
            f"Cannot infer a schema for asset {key.to_user_string()}: it is partitioned, and "
            "its latest materialization names no partition. Name one with partition= "
            "(--partition on the command line)."
        )
    return partition


def _never_materialized(name: str, *, partitioned: bool = False) -> TableNotFoundError:
    partitions = " (or name a materialized partition with partition=)" if partitioned else ""
    return TableNotFoundError(
        f"Cannot infer a schema for asset {name}: it has never been materialized, so its IO "
        f"manager stores no table to read. Materialize it first (`dagster asset materialize "
        f"--select {name}`, or dg.materialize in Python){partitions}, with DAGSTER_HOME set to "
        "the instance that records it, then infer again."
    )
