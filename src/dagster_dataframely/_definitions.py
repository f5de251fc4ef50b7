"""`dd.with_schemas`: schemas attached to the assets of an existing `dg.Definitions`.

Each named asset's spec gets the Columns tab metadata merged in (its compute function, IO
manager and other metadata stay as they are) and the Definitions get the sidecar checks.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

import dagster as dg
import dataframely as dy

from ._asset_keys import parse_asset_key
from ._collection import declared_collection_checks
from ._metadata import schema_metadata
from ._schemas import SchemaLike, as_dataframely
from ._sidecar import schema_checks
from .errors import UnknownAssetError

_LISTED_KEYS = 50


def with_schemas(
    defs: dg.Definitions,
    schemas: Mapping[str | dg.AssetKey | type[dy.Collection], SchemaLike],
    *,
    warn: str | Sequence[str] = (),
    blocking: bool | None = None,
    check_granularity: str | None = None,
    schema_rules: str | None = None,
    max_failure_samples: int | None = None,
    partitions_def: dg.PartitionsDefinition | None = None,
) -> dg.Definitions:
    """`defs` with a schema attached to each asset `schemas` names.

    A key is an `AssetKey` or its user string (`"raw/orders"` for `["raw", "orders"]`). Every
    named asset shows its schema in the Columns tab and gets `dd.schema_checks` with the given
    settings; a partitioned asset's checks take its `partitions_def` unless one is given.
    A key the Definitions do not declare raises `UnknownAssetError` listing the keys they do.
    An entry `{Collection: {member: asset key}}` adds `dd.collection_checks` over those
    assets; a member with a schema entry of its own keeps that entry's checks.

    Example:
        ```python
        defs = dd.with_schemas(dg.Definitions(assets=[orders]), {"orders": Orders})
        ```
    """
    collections: dict[type[dy.Collection], Mapping[str, str | dg.AssetKey]] = {}
    by_key: dict[dg.AssetKey, type[dy.Schema]] = {}
    for key, value in schemas.items():
        if isinstance(key, type) and issubclass(key, dy.Collection):
            collections[key] = value  # type: ignore[assignment]  # a collection entry
        else:
            by_key[parse_asset_key(key, argument="with_schemas key")] = as_dataframely(value)
    specs = _declared_specs(defs)
    members = [
        parse_asset_key(key, argument="with_schemas key")
        for entry in collections.values()
        for key in entry.values()
    ]
    unknown = list(dict.fromkeys(key for key in [*by_key, *members] if key not in specs))
    if unknown:
        raise UnknownAssetError(_unknown_message(unknown, list(specs)))
    collection_checks, by_collection = [], set[dg.AssetKey]()
    for collection, entry in collections.items():
        built, member_schemas = declared_collection_checks(
            collection,
            entry,
            specs=specs,
            checked=set(by_key),
            blocking=blocking,
            check_granularity=check_granularity,
            schema_rules=schema_rules,
            max_failure_samples=max_failure_samples,
        )
        collection_checks.append(built)
        by_collection |= set(member_schemas) - set(by_key)
        by_key = {**member_schemas, **by_key}

    def attach(spec: dg.AssetSpec) -> dg.AssetSpec:
        schema = by_key.get(spec.key)
        return spec if schema is None else spec.merge_attributes(metadata=schema_metadata(schema))

    checks = [
        schema_checks(
            schema,
            asset=key,
            warn=warn,
            blocking=blocking,
            check_granularity=check_granularity,
            schema_rules=schema_rules,
            max_failure_samples=max_failure_samples,
            partitions_def=partitions_def or specs[key].partitions_def,
        )
        for key, schema in by_key.items()
        if key not in by_collection
    ]
    with warnings.catch_warnings():
        # `Definitions.map_asset_specs` is marked preview; this is the use it was made for.
        warnings.simplefilter("ignore", dg.PreviewWarning)
        mapped = defs.map_asset_specs(func=attach)
    return dg.Definitions.merge(mapped, dg.Definitions(asset_checks=[*checks, *collection_checks]))


def _declared_specs(defs: dg.Definitions) -> dict[dg.AssetKey, dg.AssetSpec]:
    """The spec of every asset `defs` declares directly, by key."""
    specs: dict[dg.AssetKey, dg.AssetSpec] = {}
    for item in defs.assets or []:
        if isinstance(item, dg.AssetSpec):
            specs[item.key] = item
        elif isinstance(item, dg.AssetsDefinition):
            specs.update((spec.key, spec) for spec in item.specs)
    return specs


def _unknown_message(unknown: list[dg.AssetKey], known: list[dg.AssetKey]) -> str:
    names = sorted(key.to_user_string() for key in known)
    listed = ", ".join(names[:_LISTED_KEYS]) or "(none)"
    if len(names) > _LISTED_KEYS:
        listed += f", … and {len(names) - _LISTED_KEYS} more"
    missing = ", ".join(key.to_user_string() for key in unknown)
    return (
        f"with_schemas names asset(s) these Definitions do not declare: {missing}. The "
        f"Definitions declare: {listed}. Fix the key (a key with a prefix is written "
        "'prefix/name'), or add the asset to the Definitions."
    )
