"""The `dd.asset(quarantine=True)` definition: one op, two declared assets, the table and its
quarantine.

The quarantine is an asset of its own (`<last key part>_quarantine`, same prefix) so that the
catalog and the lineage show it, and every run records its materialization. It is a sibling of
the table, not downstream of it: both are split from the same frame, computed from the same
upstream assets.

The multi-asset is subsettable, because users select the table by its name (`"orders"`,
`"orders*"`, a job, `dagster asset materialize --select orders`), and the quarantine is
written on every run that writes the table all the same: the body writes it through the IO
manager itself (`declared_quarantine`), then records it as the quarantine's output when the
run selected it (a `MaterializeResult` without a value, which Dagster records without calling
the IO manager again) and as a logged `AssetMaterialization` of its key otherwise. Dagster's
public API offers no other way to keep a second asset's write out of a selection:
`can_subset=False` refuses the table alone, and an output the run did not select cannot be
yielded. Writing in the body also makes a failed write an exception the body catches, so every
rule result is reported before the run fails. A run that selects the quarantine without the
table runs the pair (`pair_of_quarantine`), the table logged the same way: its rows only exist
as the table's rejects, and a refused run would mark the quarantine failed in the catalog.

Every `@dg.asset` keyword goes where it applies (see `_TO_THE_OP`, `_TO_THE_TABLE`,
`_TO_BOTH`); a keyword `@dg.asset` does not take is a `TypeError`, as it would be there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeAlias

import dagster as dg
import dataframely as dy

from .._checks import step_internals
from .._checks.metadata import COLUMN_SCHEMA_KEY, table_schema
from .._engine.catalogue import rules
from ..errors import QuarantineSelectionError
from .gate import AssetYield
from .quarantine import quarantine_output

#: What the body of a quarantined asset yields: a run of the quarantine alone logs the table.
BodyYield: TypeAlias = Iterator[
    dg.MaterializeResult | dg.AssetCheckResult | dg.AssetMaterialization | dg.AssetCheckEvaluation
]

#: The table's output keeps the name `@dg.asset` gives its one output.
TABLE_OUTPUT = "result"

# The op's settings: one op computes both assets.
_TO_THE_OP = frozenset(
    {
        "ins",
        "deps",
        "config_schema",
        "required_resource_keys",
        "resource_defs",
        "hooks",
        "partitions_def",
        "op_tags",
        "backfill_policy",
        "retry_policy",
        "check_specs",
        "pool",
        "non_argument_deps",
        "compute_kind",
    }
)
# What describes the table only.
_TO_THE_TABLE = frozenset(
    {"metadata", "description", "dagster_type", "freshness_policy", "legacy_freshness_policy"}
)
# What both share: stored alike, selected alike (a selection by group, owner, tag or kind
# takes both, as one run writes both), versioned alike, run alike.
_TO_BOTH = frozenset(
    {
        "io_manager_key",
        "group_name",
        "code_version",
        "automation_condition",
        "auto_materialize_policy",
        "owners",
        "tags",
        "kinds",
        "is_virtual",
    }
)
_NAMING = frozenset({"name", "key_prefix", "key", "io_manager_def"})


def quarantined_asset(
    *,
    schema: type[dy.Schema],
    key: dg.AssetKey,
    quarantine: dg.AssetKey,
    quarantine_io_manager_key: str | None = None,
    asset_kwargs: Mapping[str, Any],
    body: Callable[..., Any],
) -> dg.AssetsDefinition:
    """A `@dg.multi_asset` of the table `key` and its quarantine `quarantine` (stored by
    `quarantine_io_manager_key`, default the table's IO manager), computed by `body`.

    `asset_kwargs` are `@dg.asset` keywords as `dd.asset` completed them (metadata with the
    Columns tab, check specs, code version). Both outputs are optional: a run that writes no
    table yields no table output, a skipped run yields neither, and a run that selected the
    table alone yields no quarantine output (it logs the quarantine's materialization).
    """
    unknown = set(asset_kwargs) - _TO_THE_OP - _TO_THE_TABLE - _TO_BOTH - _NAMING
    if unknown:
        named = ", ".join(sorted(unknown))
        raise TypeError(f"dd.asset got keyword argument(s) @dg.asset does not take: {named}.")
    op_settings = {k: v for k, v in asset_kwargs.items() if k in _TO_THE_OP}
    shared = {k: v for k, v in asset_kwargs.items() if k in _TO_BOTH}
    table = {k: v for k, v in asset_kwargs.items() if k in _TO_THE_TABLE}
    io_manager_def = asset_kwargs.get("io_manager_def")
    if io_manager_def is not None:
        # as `@dg.asset` does: the definition becomes a resource of the asset
        io_key = shared.get("io_manager_key") or key.to_python_identifier("io_manager")
        shared["io_manager_key"] = io_key
        op_settings["resource_defs"] = {
            **(op_settings.get("resource_defs") or {}),
            io_key: io_manager_def,
        }
    held_by = {"io_manager_key": quarantine_io_manager_key} if quarantine_io_manager_key else {}
    outs = {
        TABLE_OUTPUT: dg.AssetOut(key=key, is_required=False, **shared, **table),
        quarantine_output(quarantine): dg.AssetOut(
            key=quarantine,
            is_required=False,
            description=_description(schema, key),
            metadata=quarantine_metadata(schema, table.get("metadata")),
            **{**shared, **held_by},
        ),
    }
    return dg.multi_asset(
        outs=outs,
        name=key.to_python_identifier(),  # the op (and step) name `@dg.asset` would give it
        description=table.get("description"),
        can_subset=True,
        **op_settings,
    )(body)


def refuse_checks_alone(
    context: dg.AssetExecutionContext | dg.OpExecutionContext,
    table_key: dg.AssetKey,
    quarantine: dg.AssetKey,
) -> None:
    """Raise `QuarantineSelectionError` when the run selected the table's checks without the
    table or its quarantine: the checks judge the frame a run of the table computes, and a
    run that writes neither has no frame to judge."""
    if table_key in context.selected_asset_keys or quarantine in context.selected_asset_keys:
        return
    table = table_key.to_user_string()
    raise QuarantineSelectionError(
        f"The run selected checks of {table} without the asset {table}: its checks judge "
        f"what a run of {table} computes, and a run that writes neither {table} nor its "
        f"quarantine {quarantine.to_user_string()} computes nothing. Select the table instead "
        f'(selection=["{table}"], dg launch --assets {table}); its checks run with it.'
    )


def pair_of_quarantine(
    context: step_internals.Context, table_key: dg.AssetKey, events: AssetYield
) -> BodyYield:
    """`events` of a run that selected the quarantine without its table, as the run of the
    pair: the quarantine's rows exist only as the table's rejects, so the table is written
    too, through its own IO manager, and recorded as a logged materialization, and its check
    results are yielded as evaluations (the run did not select its outputs or its checks, so
    Dagster takes neither as such). The quarantine's status stays true: its run succeeds."""
    for event in events:
        if isinstance(event, dg.MaterializeResult) and event.asset_key == table_key:
            logged = step_internals.write_as(
                context, table_key, event.value, output_name=TABLE_OUTPUT
            )
            yield dg.AssetMaterialization(
                asset_key=table_key,
                partition=context.partition_key if context.has_partition_key else None,
                metadata={**(event.metadata or {}), **logged},
                tags=event.tags,
            )
        elif isinstance(event, dg.AssetCheckResult) and event.asset_key in (None, table_key):
            yield step_internals.check_evaluation(context, event)
        else:
            yield event


def quarantine_metadata(
    schema: type[dy.Schema], table_metadata: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The quarantine's definition metadata: the table's own entries (an IO manager reads
    storage settings such as `schema` or `partition_expr` there, and must store both alike),
    without Dagster's `dagster/` entries, which describe the table (its columns, name,
    address), and with the quarantine's Columns tab."""
    kept = {k: v for k, v in (table_metadata or {}).items() if not k.startswith("dagster/")}
    return {**kept, COLUMN_SCHEMA_KEY: quarantine_table_schema(schema)}


def quarantine_table_schema(schema: type[dy.Schema]) -> dg.TableSchema:
    """The quarantine's columns: the table's, without their constraints (its rows are the
    ones that break them), then one `String` column per rule."""
    columns = [
        dg.TableColumn(name=c.name, type=c.type, description=c.description, tags=c.tags)
        for c in table_schema(schema).columns
    ]
    columns += [
        dg.TableColumn(
            name=rule.check_name,
            type="String",
            description=f'"valid", "invalid" or "unknown": whether the row passed '
            f"{rule.name} ({rule.description})",
        )
        for rule in rules(schema)
    ]
    return dg.TableSchema(columns=columns)


def _description(schema: type[dy.Schema], key: dg.AssetKey) -> str:
    return (
        f'Rows of {key.to_user_string()} that failed an "error" rule of {schema.__name__} in '
        "its latest run, written before the table (empty when none failed): the table's "
        'columns, then one column per rule saying "valid", "invalid" or "unknown".'
    )
