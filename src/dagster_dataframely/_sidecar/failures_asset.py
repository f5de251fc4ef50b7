"""The failing rows a sidecar keeps (`keep_failing_rows=`), declared as an asset.

The rows are written by the checks, so the asset is declared (an `AssetSpec` downstream of
the checked asset), never materialized: it puts the table in the graph, with its Columns
tab. `dd.with_schemas` and the Component declare it themselves; `dd.schema_checks` and
`dd.collection_checks` return checks, which cannot declare an asset, so their users add
`dd.failures_asset(...)` to the Definitions beside them.
"""

from __future__ import annotations

from collections.abc import Sequence

import dagster as dg
import dataframely as dy

from .._checks.asset_keys import AssetKeyLike, parse_asset_key
from .._engine.catalogue import Rule, rules
from .._engine.failing_rows import ASSET_KEY, PARTITION_KEY, RUN_ID
from .._engine.schemas import SchemaLike, as_dataframely
from ..errors import CollectionMemberError
from .collection_rules import filter_rules
from .failing_rows import failures_key


def failures_asset(
    schema: SchemaLike | type[dy.Collection],
    *,
    asset: AssetKeyLike,
    member: str | None = None,
    partitions_def: dg.PartitionsDefinition | None = None,
) -> dg.AssetSpec:
    """The failing rows that `dd.schema_checks(schema, asset=asset, keep_failing_rows=...)`
    keeps, as an asset to add to the Definitions: `<asset>__dy_failures`, downstream of
    `asset`, with its Columns tab (the schema's columns, one Boolean per rule, the run id
    and the partition key).

    For `dd.collection_checks`, pass the collection and the `member` the asset stores: its
    columns then also hold one Boolean per filter that removes rows from it. The asset takes
    the partitions of `asset` (its definition or spec) unless `partitions_def` is given.

    Example:
        ```python
        checks = dd.schema_checks(Orders, asset=orders, keep_failing_rows=True)
        defs = dg.Definitions(
            assets=[orders, dd.failures_asset(Orders, asset=orders)], asset_checks=[checks]
        )
        ```
    """
    key = parse_asset_key(asset)
    if partitions_def is None and isinstance(asset, (dg.AssetSpec, dg.AssetsDefinition)):
        partitions_def = asset.partitions_def
    if isinstance(schema, type) and issubclass(schema, dy.Collection):
        checked, filters = member_shape(schema, member, key)
    elif member is not None:
        raise CollectionMemberError(
            f"dd.failures_asset(..., asset={key.to_user_string()!r}, member={member!r}): "
            "member= names a member of a dy.Collection, but the schema given is not one. Pass "
            "the collection (dd.failures_asset(MyCollection, asset=..., member=...)), or "
            "leave member= out for a schema."
        )
    else:
        checked, filters = as_dataframely(schema), []
    return failures_spec(key, checked, [*rules(checked), *filters], partitions_def)


def member_shape(
    collection: type[dy.Collection], member: str | None, key: dg.AssetKey
) -> tuple[type[dy.Schema], list[Rule]]:
    """The schema of `member` of `collection` and the filters that remove its rows."""
    known = collection.members()
    if member not in known:
        raise CollectionMemberError(
            f"dd.failures_asset({collection.__name__}, asset={key.to_user_string()!r}, "
            f"member={member!r}): name the member of {collection.__name__} that the asset "
            f"stores, one of {', '.join(known)}."
        )
    filters = [] if known[member].ignored_in_filters else filter_rules(collection)
    return known[member].schema, filters


def failures_spec(
    asset_key: dg.AssetKey,
    schema: type[dy.Schema],
    catalogue: Sequence[Rule],
    partitions_def: dg.PartitionsDefinition | None,
) -> dg.AssetSpec:
    """The failing rows of `asset_key` as an asset downstream of it, with its Columns tab:
    the schema's columns, a flag per rule (and filter) of `catalogue` and the run's stamp."""
    from .._checks.metadata import COLUMN_SCHEMA_KEY, table_schema

    checked = table_schema(schema)
    added = [
        dg.TableColumn(rule.check_name, "Boolean", description=_flag(rule))
        for rule in {rule.check_name: rule for rule in catalogue}.values()
    ]
    added += [
        dg.TableColumn(ASSET_KEY, "String", description="The checked asset the row is of"),
        dg.TableColumn(RUN_ID, "String", description="The run that kept the row"),
        dg.TableColumn(PARTITION_KEY, "String", description="The partition the row is in"),
    ]
    return dg.AssetSpec(
        failures_key(asset_key),
        deps=[asset_key],
        partitions_def=partitions_def,
        description=(
            f"The rows of {asset_key.to_user_string()} failing a rule of {schema.__name__}"
            + (" or removed by a filter of its collection" if _filters(catalogue) else "")
            + ", kept by its checks (keep_failing_rows=): one Boolean per rule"
            + (" and filter" if _filters(catalogue) else "")
            + ", true where the row fails it."
        ),
        metadata={COLUMN_SCHEMA_KEY: dg.TableSchema(columns=[*checked.columns, *added])},
    )


def _filters(catalogue: Sequence[Rule]) -> list[Rule]:
    return [rule for rule in catalogue if rule.kind in ("filter", "failure_propagation")]


def _flag(rule: Rule) -> str:
    if _filters([rule]):
        return f"Removed by the collection's {rule.name}"
    return f"Fails {rule.name}"
