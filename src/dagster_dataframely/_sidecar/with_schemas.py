"""`dd.with_schemas`: schemas attached to the assets of an existing `dg.Definitions`.

Each named asset's spec gets the Columns tab metadata merged in (its compute function, IO
manager and other metadata stay as they are) and the Definitions get the sidecar checks.
Whether each asset can be read (its IO manager, or a `source=`) is decided here, at
definition time, not when the checks run.
"""

from __future__ import annotations

import warnings
from collections.abc import Container, Mapping, Sequence
from typing import Any

import dagster as dg
import dataframely as dy

from .._checks.asset_keys import closest_keys, listed_keys, parse_asset_key
from .._checks.metadata import schema_metadata
from .._engine.catalogue import Rule, rules
from .._engine.read_dtypes import ReadDtypes
from .._engine.schemas import SchemaLike, as_dataframely
from .._engine.table_checks import ExpectFresh, ExpectRows
from .._engine.tolerance import shared
from .._engine.trends import Trends
from ..errors import UnknownAssetError, UnloadableAssetError
from ..sources import SourceLike, as_source
from .check_plan import CheckPlan
from .check_steps import StepSettings, downstream_of, grouped_checks
from .checks_job import checks_job as dd_checks_job
from .collection_checks import declared_collection_checks
from .failing_rows import KeepFailingRows
from .failures_asset import failures_spec, member_shape

_LISTED_KEYS = 50


def with_schemas(
    defs: dg.Definitions,
    schemas: Mapping[str | dg.AssetKey | type[dy.Collection], SchemaLike],
    *,
    warn: str | Sequence[str] = (),
    tolerate: Mapping[str, Any] | None = None,
    blocking: bool | None = None,
    check_granularity: str | None = None,
    schema_rules: str | None = None,
    max_failure_samples: int | None = None,
    partitions_def: dg.PartitionsDefinition | None = None,
    source: SourceLike | Mapping[str | dg.AssetKey, SourceLike] | None = None,
    read_dtypes: ReadDtypes | None = None,
    checks_job: str | None = None,
    checks_job_executor: dg.ExecutorDefinition | None = None,
    checks_per_step: int | None = None,
    check_concurrency: int | None = None,
    keep_failing_rows: bool | str | None = None,
    max_failing_rows: int | None = None,
    expect_rows: ExpectRows | Mapping[str, Any] | None = None,
    expect_fresh: ExpectFresh | Mapping[str, Any] | None = None,
    trends: Trends | Mapping[str, Any] | None = None,
    observe_fractions: bool | None = None,
) -> dg.Definitions:
    """`defs` with a schema attached to each asset `schemas` names.

    A key is an `AssetKey` or its user string (`"raw/orders"` for `["raw", "orders"]`). Every
    named asset shows its schema in the Columns tab and gets `dd.schema_checks` with the given
    settings (`warn` and `tolerate` name rules or columns of every schema named here); a
    partitioned asset's checks take its `partitions_def` unless one is given. `expect_rows`
    and `expect_fresh` replace the table checks of every schema named here (a schema
    declares its own with `dd.expect_rows`, `dd.expect_fresh`); `trends` adds each asset's
    trend check (`dd.schema_checks` says what it compares), and `observe_fractions=True` an
    observation of every check's failing fraction per run, which the Plots tab graphs.
    A key the Definitions do not declare raises `UnknownAssetError` listing the keys they do.
    An entry `{Collection: {member: asset key}}` adds `dd.collection_checks` over those
    assets; a member with a schema entry of its own keeps that entry's checks.

    Each asset is read through its own IO manager (the run's resource under the asset's
    `io_manager_key`) unless `source` says otherwise: one source for every named asset (a
    `dd.sources.DuckDBTableSource()` reads each asset's `dagster/table_name`), or a mapping
    `{key: source}`; a collection's members are read the same way, by their asset keys. An
    asset with no IO manager (a dbt model, an external `AssetSpec`) and no source raises
    `UnloadableAssetError`. `read_dtypes="cast"` casts the dtype drifts of a warehouse round trip
    on read, as `dd.schema_checks` documents, for schema entries and collection members alike.

    `keep_failing_rows=True` keeps each run's failing rows beside each checked table, as
    `dd.schema_checks` documents (and a collection's members the rows its filters remove, as
    `dd.collection_checks` does), and declares them as an asset downstream of it
    (`<name>__dy_failures`, with its Columns tab); at most `max_failing_rows` per run.

    The checks of many assets run in a few steps, each a `@dg.multi_asset_check` over up to
    `checks_per_step` assets (default 50) that read through the same resources, with the
    same partitions and, for blocking checks, the same downstream assets; a step checks
    `check_concurrency` of its assets at once (default 4). A table that cannot be read fails
    its own checks, never another's, and then its step.

    `checks_job="name"` adds a job that runs every check of this call and nothing else
    (`dd.checks_job`), for `dg launch --job name` (with `--partition` for partitioned assets),
    on `checks_job_executor` when given (`dg.in_process_executor` for many small tables).

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
    specs, io_managers = _declared(defs)
    members = [
        parse_asset_key(key, argument="with_schemas key")
        for entry in collections.values()
        for key in entry.values()
    ]
    unknown = list(dict.fromkeys(key for key in [*by_key, *members] if key not in specs))
    if unknown:
        raise UnknownAssetError(_unknown_message(unknown, list(specs)))
    sources = _sources(source, [*by_key, *members], io_managers, specs)
    collection_checks, by_collection = [], set[dg.AssetKey]()
    for collection, entry in collections.items():
        built, member_schemas = declared_collection_checks(
            collection,
            entry,
            specs=specs,
            checked=set(by_key),
            sources={
                member: sources[parse_asset_key(key, argument="with_schemas key")]
                for member, key in entry.items()
            },
            blocking=blocking,
            check_granularity=check_granularity,
            schema_rules=schema_rules,
            max_failure_samples=max_failure_samples,
            read_dtypes=read_dtypes,
            trends=trends,
            observe_fractions=observe_fractions,
            keep_failing_rows=keep_failing_rows,
            max_failing_rows=max_failing_rows,
        )
        collection_checks.append(built)
        by_collection |= set(member_schemas) - set(by_key)
        by_key = {**member_schemas, **by_key}

    def attach(spec: dg.AssetSpec) -> dg.AssetSpec:
        schema = by_key.get(spec.key)
        return spec if schema is None else spec.merge_attributes(metadata=schema_metadata(schema))

    checked = shared(CheckPlan.of, tolerate, by="dd.with_schemas")
    plans = [
        checked(
            schema,
            asset=key,
            warn=warn,
            tolerate=tolerate,
            blocking=blocking,
            check_granularity=check_granularity,
            schema_rules=schema_rules,
            max_failure_samples=max_failure_samples,
            partitions_def=partitions_def or specs[key].partitions_def,
            source=sources[key],
            read_dtypes=read_dtypes,
            keep_failing_rows=keep_failing_rows,
            max_failing_rows=max_failing_rows,
            expect_rows=expect_rows,
            expect_fresh=expect_fresh,
            trends=trends,
            observe_fractions=observe_fractions,
        )
        for key, schema in by_key.items()
        if key not in by_collection
    ]
    checks = grouped_checks(
        plans,
        StepSettings.resolve(checks_per_step=checks_per_step, check_concurrency=check_concurrency),
        downstream=downstream_of(list(specs.values())),
        by="dd.with_schemas",
    )
    kept = (
        []
        if KeepFailingRows.resolve(keep_failing_rows, max_failing_rows) is None
        else [
            failures_spec(
                key,
                schema,
                [*rules(schema), *_filters(collections, key)],
                partitions_def or specs[key].partitions_def,
            )
            for key, schema in by_key.items()
        ]
    )
    with warnings.catch_warnings():
        # `Definitions.map_asset_specs` is marked preview; this is the use it was made for.
        warnings.simplefilter("ignore", dg.PreviewWarning)
        mapped = defs.map_asset_specs(func=attach)
    every = [*checks, *collection_checks]
    jobs = (
        []
        if checks_job is None
        else [dd_checks_job(*every, name=checks_job, executor_def=checks_job_executor)]
    )
    return dg.Definitions.merge(mapped, dg.Definitions(assets=kept, asset_checks=every, jobs=jobs))


def _filters(
    collections: Mapping[type[dy.Collection], Mapping[str, str | dg.AssetKey]],
    key: dg.AssetKey,
) -> list[Rule]:
    """The filters of `collections` that remove rows from the asset `key` (a member)."""
    return [
        rule
        for collection, entry in collections.items()
        for member, asset in entry.items()
        if parse_asset_key(asset, argument="with_schemas key") == key
        for rule in member_shape(collection, member, key)[1]
    ]


def _declared(
    defs: dg.Definitions,
) -> tuple[dict[dg.AssetKey, dg.AssetSpec], dict[dg.AssetKey, str | None]]:
    """The spec of every asset `defs` declares directly, and the key of the IO manager that
    stores it (None when nothing stores it: an external spec, a dbt model), by key."""
    return declared_assets(defs, checked=None, by="with_schemas")


def declared_assets(
    defs: dg.Definitions, *, checked: Container[dg.AssetKey] | None, by: str
) -> tuple[dict[dg.AssetKey, dg.AssetSpec], dict[dg.AssetKey, str | None]]:
    """`_declared`, refusing a `SourceAsset` only among `checked` (every one when None): `by`
    names what attaches the schema, for the error."""
    specs: dict[dg.AssetKey, dg.AssetSpec] = {}
    io_managers: dict[dg.AssetKey, str | None] = {}
    for item in defs.assets or []:
        if isinstance(item, dg.AssetSpec):
            specs[item.key] = item
            io_managers[item.key] = None
        elif isinstance(item, dg.SourceAsset):
            if checked is None or item.key in checked:
                raise UnloadableAssetError(
                    f"{by} cannot attach a schema to asset {item.key.to_user_string()}: it is a "
                    "SourceAsset, which Dagster lets no one add metadata to. Declare it as "
                    f"dg.AssetSpec({item.key.to_user_string()!r}) and give the checks a source= "
                    "(dd.sources) that reads its table, or check it with "
                    "dd.schema_checks(schema, asset=..., source=...) beside it."
                )
        elif isinstance(item, dg.AssetsDefinition):
            for spec in item.specs:
                specs[spec.key] = spec
                io_managers[spec.key] = _io_manager_key(item, spec.key)
    return specs, io_managers


def _io_manager_key(assets_def: dg.AssetsDefinition, key: dg.AssetKey) -> str | None:
    if not assets_def.is_executable:
        return None
    output = assets_def.node_def.output_def_named(assets_def.get_output_name_for_asset_key(key))
    return None if output.dagster_type.is_nothing else output.io_manager_key


def _sources(
    source: SourceLike | Mapping[str | dg.AssetKey, SourceLike] | None,
    keys: Sequence[dg.AssetKey],
    io_managers: Mapping[dg.AssetKey, str | None],
    specs: Mapping[dg.AssetKey, dg.AssetSpec],
) -> dict[dg.AssetKey, SourceLike]:
    """The source of each checked asset (schema entries and collection members), bound to
    the asset (a database source reads its `dagster/table_name` now, so a bad one fails as
    the Definitions load); its IO manager where `source` names none."""
    given = (
        {parse_asset_key(key, argument="source key"): value for key, value in source.items()}
        if isinstance(source, Mapping)
        else dict.fromkeys(keys, source)
    )
    stray = [key.to_user_string() for key in given if key not in keys]
    if stray:
        raise UnknownAssetError(
            f"with_schemas(source={{...}}) names asset(s) without a schema: {', '.join(stray)}. "
            "Give each of them a schema (or make it a collection's member), or remove them "
            "from source=."
        )
    chosen: dict[dg.AssetKey, SourceLike] = {}
    for key in keys:
        value = given.get(key)
        if value is None and io_managers[key] is None:
            raise UnloadableAssetError(
                f"with_schemas cannot read asset {key.to_user_string()}: it has no IO manager "
                "(a dbt model, an external AssetSpec or an asset whose output is Nothing), so "
                "there is no stored table to load. Say where its table is with source= (e.g. "
                "dd.sources.DuckDBTableSource(), reading its dagster/table_name)."
            )
        chosen[key] = as_source(value, io_manager_key=io_managers[key]).for_asset(
            key, specs[key].metadata
        )
    return chosen


def _unknown_message(unknown: list[dg.AssetKey], known: list[dg.AssetKey]) -> str:
    missing = ", ".join(key.to_user_string() for key in unknown)
    closest = "".join(
        f" Closest to {key.to_user_string()}: {', '.join(names)}."
        for key in unknown
        if (names := closest_keys(key, known))
    )
    return (
        f"with_schemas names asset(s) these Definitions do not declare: {missing}. The "
        f"Definitions declare: {listed_keys(known, limit=_LISTED_KEYS)}.{closest} Fix the key "
        "(a key with a prefix is written 'prefix/name'), or add the asset to the Definitions."
    )
