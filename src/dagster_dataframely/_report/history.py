"""The checks' history a report shows, read from a Dagster instance.

Every check evaluation in one query (`history_internals.check_evaluations`), each read back as
the package's typed `Figures`; then the asset records of the assets reported, in one query
(the public `get_asset_records`), for the columns a gated asset records on its latest
materialization (`dagster/column_schema`), or else the definitions' (`--defs`). Nothing is
read per evaluation or per asset: 10,000 evaluations of 100 assets are two queries.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

import dagster as dg

from .._checks.figures import Figures
from .._checks.history_internals import check_evaluations
from .._checks.metadata import COLUMN_SCHEMA_KEY
from ..errors import NoCheckHistoryError


@dataclass(frozen=True)
class Evaluation:
    """One stored evaluation of a check: its run, when, of which partition, its figures and
    its description (the rules it evaluates, in words)."""

    run_id: str
    timestamp: float
    partition: str | None
    figures: Figures
    description: str | None


@dataclass(frozen=True)
class AssetHistory:
    """An asset's check evaluations, oldest first, and its schema's columns where known."""

    key: dg.AssetKey
    evaluations: tuple[Evaluation, ...]
    columns: dg.TableSchema | None


def read_history(
    instance: dg.DagsterInstance,
    *,
    select: Callable[[set[dg.AssetKey]], set[dg.AssetKey]],
    since: datetime | None = None,
    partition: str | None = None,
    definitions: dg.Definitions | None = None,
    where: str = "the instance",
) -> tuple[AssetHistory, ...]:
    """The history of the assets `select` keeps of those with check evaluations (since
    `since`, of `partition` when given). `where` names the instance in errors."""
    by_asset: dict[dg.AssetKey, list[Evaluation]] = defaultdict(list)
    for record in check_evaluations(instance, since=since):
        event = record.event_log_entry.dagster_event
        if event is None:
            continue
        evaluation = event.asset_check_evaluation_data
        if partition is not None and evaluation.partition != partition:
            continue
        by_asset[evaluation.asset_key].append(
            Evaluation(
                record.run_id,
                record.timestamp,
                evaluation.partition,
                Figures.of(evaluation),
                evaluation.description,
            )
        )
    if not by_asset:
        window = "" if since is None else f" since {since.isoformat(timespec='minutes')}"
        of = "" if partition is None else f" of partition {partition!r}"
        raise NoCheckHistoryError(
            f"{where} holds no check evaluation{window}{of}: run the assets' checks into this "
            "instance first (DAGSTER_HOME set to it when running `dagster job execute`, "
            "`dg launch` or `dagster dev`), or widen --since/--partition."
        )
    keys = sorted(select(set(by_asset)), key=lambda key: key.to_user_string())
    columns = {
        **({} if definitions is None else _declared_columns(definitions)),
        **_stored_columns(instance, keys),
    }
    return tuple(AssetHistory(key, tuple(by_asset[key]), columns.get(key)) for key in keys)


def _stored_columns(
    instance: dg.DagsterInstance, keys: Sequence[dg.AssetKey]
) -> dict[dg.AssetKey, dg.TableSchema]:
    """The columns the latest materialization of each of `keys` recorded (a gated asset's)."""
    found: dict[dg.AssetKey, dg.TableSchema] = {}
    for record in instance.get_asset_records(keys):
        entry = record.asset_entry.last_materialization
        materialization = None if entry is None else entry.asset_materialization
        value = None if materialization is None else materialization.metadata.get(COLUMN_SCHEMA_KEY)
        if isinstance(value, dg.TableSchemaMetadataValue):
            found[record.asset_entry.asset_key] = value.schema
    return found


def _declared_columns(definitions: dg.Definitions) -> dict[dg.AssetKey, dg.TableSchema]:
    """The columns each asset of `definitions` declares (`dagster/column_schema`)."""
    found: dict[dg.AssetKey, dg.TableSchema] = {}
    for node in definitions.resolve_asset_graph().asset_nodes:
        value = node.metadata.get(COLUMN_SCHEMA_KEY)
        if isinstance(value, dg.TableSchemaMetadataValue):
            found[node.key] = value.schema
        elif isinstance(value, dg.TableSchema):
            found[node.key] = value
    return found
