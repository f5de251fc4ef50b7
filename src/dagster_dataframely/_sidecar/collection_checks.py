"""`dd.collection_checks`: a Dataframely Collection's rules across tables, as Dagster checks.

A `dy.Collection` holds member schemas and `@dy.filter`s, rules across tables such as "every
order line belongs to an order". One `@dg.multi_asset_check` reads every member's stored
table (through its IO manager, or the `dd.sources` source given for it) and reports each
member's own schema checks (the names `dd.schema_checks` gives them) and, on each member a
filter can remove rows from, one `dy_filter__<filter>` check (and one per member declared
`propagate_row_failures`). Members, filters, sources and
names are validated here, at definition time; the evaluation is `_collection_evaluate`.
"""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from typing import Any

import dagster as dg
import dataframely as dy

from .._checks.asset_keys import parse_asset_key
from .._checks.graph_internals import guard
from .._checks.specs import check_spec, check_specs
from .._checks.summary import summarized
from .._checks.table_results import partition_end
from .._engine.catalogue import Rule
from .._engine.naming import dagster_name
from .._engine.read_dtypes import ReadDtypes
from .._engine.settings import CheckSettings, resolve
from .._engine.severity import warn_names
from .._engine.table_checks import TableChecks
from .._engine.tolerance import overrides
from .._engine.trends import Trends
from ..errors import (
    CollectionMemberError,
    SourceReadError,
    UnsupportedSchemaError,
)
from ..sources import Source, SourceLike, as_source, reading
from ..sources._base import StoredTable, for_run
from ..sources._loading import read_errors
from .check_plan import CheckEvent, observed, stopping_at_mismatch
from .collection_evaluate import collection_results
from .collection_members import CollectionRun, Member
from .collection_partitions import guard_partitions, member_partitions
from .collection_rules import filter_rules, propagated_member
from .collection_trends import member_histories, member_trend_specs
from .failing_rows import Keeper, KeepFailingRows


def collection_checks(
    collection: type[dy.Collection],
    *,
    members: Mapping[str, dg.AssetKey | str | Sequence[str]],
    sources: Mapping[str, SourceLike] | None = None,
    name: str | None = None,
    warn: str | Sequence[str] = (),
    tolerate: Mapping[str, Mapping[str, Any]] | None = None,
    blocking: bool | None = None,
    skip_schema_checks: Sequence[str] = (),
    check_granularity: str | None = None,
    schema_rules: str | None = None,
    max_failure_samples: int | None = None,
    partitions_def: dg.PartitionsDefinition | None = None,
    read_dtypes: ReadDtypes | None = None,
    keep_failing_rows: bool | str | None = None,
    max_failing_rows: int | None = None,
    trends: Trends | Mapping[str, Any] | None = None,
    observe_fractions: bool | None = None,
) -> dg.AssetChecksDefinition:
    """The checks of `collection` on the stored tables of existing assets.

    `members` maps each member name to its asset (`"prefix/name"` or an `AssetKey`); every
    required member must be there, optional ones may be left out. The one step reports:

    - each member's schema checks, named as `dd.schema_checks` names them, except for the
      members in `skip_schema_checks` (already checked by `dd.asset` or `dd.schema_checks`;
      their columns are still verified before any filter runs);
    - per `@dy.filter`, a check `dy_filter__<filter>` on every member the filter can remove
      rows from (each member not `ignored_in_filters`): the rows removed, a sample of them
      and the filter's docstring. Filters run on the rows that pass their member's schema,
      as `Collection.filter` runs them;
    - per member declared `dy.CollectionMember(propagate_row_failures=True)`, a check
      `dy_filter__<member>__failure_propagation` on the same members: the rows whose key a
      failing row of that member holds, which `Collection.filter` removes too.

    A member's schema checks include its table checks (`dd.expect_rows`, `dd.expect_fresh`
    on its schema) and honour its schema's tolerances (`dd.tolerate`);
    `tolerate={"<member>": {"<rule or column>": dd.Tolerance(warn_above=10)}}` overrides
    them for these checks, as `tolerate=` does on `dd.schema_checks`. A filter check is
    `"error"` unless `@dd.warn("<filter>")` on the collection or `warn` names it; it is
    blocking when `"error"`, unless `blocking` says otherwise. With `partitions_def` (every
    member's) the checks evaluate the partition the run materialized.

    Each member is read through its asset's IO manager unless `sources` maps it (by member
    name) to a source, any that `dd.schema_checks(source=)` takes: a `dd.sources` source (a
    DuckDB table, parquet or Delta files) or a function `(context) -> frame`. `sources` is a
    mapping beside `members` rather than a richer `members` value so that `members` stays the
    plain member -> asset map that YAML and `dd.with_schemas` write, and a source is added
    or dropped without touching it. The check requires every source's resource keys, and
    each source reads the run's partition as it does for the sidecar. `read_dtypes="cast"`
    casts each member's warehouse dtype drifts on read, as `dd.schema_checks` documents; the
    filters then run on the cast members. `keep_failing_rows=` keeps each member's rows that
    fail its schema's rules, as `dd.schema_checks` documents, and in the same table (or
    folder, as `<partition>@filters.parquet`) the rows its filters remove, with one Boolean
    per filter named by its check name; `dd.failures_asset(collection, asset=..,
    member=..)` declares that table in the graph. `trends` (`dd.Trends(window=20, k=3.0)`)
    adds `dy_table__trends` on each member with its own schema checks: its row count, its
    rules' failing fractions and each filter's removed rows (as a fraction of its rows)
    against its last evaluations, as `dd.schema_checks` documents. `observe_fractions=True`
    yields, per member, an observation of its checks' failing fractions, as
    `dd.schema_checks` documents.

    Example:
        ```python
        checks = dd.collection_checks(
            Shop,
            members={"orders": "orders", "lines": "order_lines"},
            sources={"orders": dd.sources.DuckDBTableSource()},  # a dbt model
        )
        ```
    """
    sources = dict(sources or {})
    run = collection_run(
        collection,
        members=members,
        warn=warn,
        tolerate=tolerate,
        skip_schema_checks=skip_schema_checks,
        sourced=list(sources),
        settings=CheckSettings.resolve(
            check_granularity=check_granularity,
            schema_rules=schema_rules,
            max_failure_samples=max_failure_samples,
        ),
        read_dtypes=resolve("read_dtypes", read_dtypes),
    )
    resolved = run.members
    readers = {member.name: as_source(sources.get(member.name)) for member in resolved}
    keeping = KeepFailingRows.resolve(keep_failing_rows, max_failing_rows)
    trend = Trends.of(trends, where=f"collection {collection.__name__}")
    observe = resolve("observe_fractions", observe_fractions)
    specs = _specs(resolved, run.filters, run.settings, blocking, partitions_def)
    specs += member_trend_specs(trend, resolved, blocking=blocking, partitions_def=partitions_def)

    @dg.multi_asset_check(
        name=name or f"{dagster_name(collection.__name__)}__dy_collection_checks",
        specs=specs,
        can_subset=True,
        required_resource_keys=set().union(*(r.required_resource_keys for r in readers.values())),
        description=f"Members and filters of collection {collection.__name__} on their stored "
        "tables.",
    )
    def _checks(context: dg.AssetCheckExecutionContext) -> Iterator[CheckEvent]:
        guard_partitions(context, resolved, partitions_def)
        # Each source bound to its member's asset: a database source names its table.
        bound = {m.name: for_run(readers[m.name], context, m.key) for m in resolved}
        with ExitStack() as stack:
            tables = {
                member.name: _opened(stack, context, member, bound[member.name])
                for member in resolved
            }
            selected = set(context.selected_asset_check_keys)
            frames = {name: table.frame for name, table in tables.items()}
            pushdowns = {name: table.pushdown for name, table in tables.items()}
            keep = {
                m.name: Keeper(
                    keeping,
                    context,
                    m.key,
                    bound[m.name],
                    run.filters if m.in_filters else (),
                    database=tables[m.name].database,
                )
                for m in resolved
                if keeping is not None
            }
            histories = member_histories(context, resolved, trend)
            with _reading_members(collection, resolved, bound):
                # A member of the wrong shape stops every check not yet reported: one log says so.
                outcome = collection_results(
                    run,
                    frames,
                    selected,
                    pushdowns=pushdowns,
                    keep=keep,
                    trends=histories,
                    reference=partition_end(context),
                )
                found = stopping_at_mismatch(
                    outcome,
                    selected,
                    context.log,
                    consequence=f"no check of collection {collection.__name__} is reported",
                )
                yield from summarized(observed(found, context) if observe else found, context.log)

    return guard(
        _checks, by=f"dd.collection_checks({collection.__name__}, members={{{{...: {{key}}}}}})"
    )


def _opened(
    stack: ExitStack, context: dg.AssetCheckExecutionContext, member: Member, reader: Source
) -> StoredTable:
    """The member's table from `reader` (and for a database source, the table as SQL), open
    until `stack` closes. Its schema is read now, so a missing file or table fails naming
    this member, not later amid the joins."""
    with reading(member.key, reader, member=member.name):
        table = stack.enter_context(reader.open_table(context, member.key))
        table.frame.collect_schema()
    return table


@contextmanager
def _reading_members(
    collection: type[dy.Collection], members: Sequence[Member], readers: Mapping[str, Source]
) -> Iterator[None]:
    """Re-raise a read failure during the evaluation (a file truncated mid-read), which a
    join may meet in any member, as `SourceReadError` naming every member and its reader."""
    try:
        yield
    except read_errors() as error:
        read = "; ".join(
            f"{m.name} (asset {m.key.to_user_string()}) from {readers[m.name].describe()}"
            for m in members
        )
        raise SourceReadError(
            f"Could not read the members of collection {collection.__name__}: {read}: "
            f"{type(error).__name__}: {error}. Check that each member was materialized (for "
            "this partition) and that its stored table is complete."
        ) from error


def declared_collection_checks(
    collection: type[dy.Collection],
    members: Mapping[str, dg.AssetKey | str | Sequence[str]],
    *,
    specs: Mapping[dg.AssetKey, dg.AssetSpec],
    checked: Collection[dg.AssetKey],
    sources: Mapping[str, SourceLike] | None = None,
    **settings: Any,
) -> tuple[dg.AssetChecksDefinition, dict[dg.AssetKey, type[dy.Schema]]]:
    """`collection_checks` for members that Definitions declare (`specs`), as `with_schemas`
    builds them: members in `checked` (which have checks of their own) keep them, the
    members' partitions come from their specs and must agree. Also returns the schema of each
    other member, for its Columns tab."""
    keys = {
        member: parse_asset_key(asset, argument=f"members[{member!r}]")
        for member, asset in members.items()
    }
    checks = collection_checks(
        collection,
        members=members,
        sources=sources,
        skip_schema_checks=[member for member, key in keys.items() if key in checked],
        partitions_def=member_partitions(collection, keys.values(), specs),
        **settings,
    )
    schemas = collection.member_schemas()
    return checks, {key: schemas[m] for m, key in keys.items() if key not in checked}


def collection_run(
    collection: type[dy.Collection],
    *,
    members: Mapping[str, dg.AssetKey | str | Sequence[str]],
    warn: str | Sequence[str] = (),
    tolerate: Mapping[str, Mapping[str, Any]] | None = None,
    skip_schema_checks: Sequence[str] = (),
    sourced: Sequence[str] = (),
    settings: CheckSettings,
    read_dtypes: ReadDtypes = "strict",
) -> CollectionRun:
    """What the checks of `collection` evaluate; raises the definition-time errors (`sourced`:
    the members `sources=` names; `tolerate`: member -> its rules' tolerances)."""
    if not (isinstance(collection, type) and issubclass(collection, dy.Collection)):
        raise UnsupportedSchemaError(
            f"dd.collection_checks takes a dataframely.Collection subclass, got {collection!r}. "
            "For one table's schema use dd.schema_checks."
        )
    resolved = _members(collection, members, skip_schema_checks, sourced, tolerate or {})
    present = {member.name for member in resolved}
    return CollectionRun(
        collection=collection,
        members=resolved,
        # A propagating member left out (an optional one) has no failures to propagate.
        filters=[
            rule
            for rule in filter_rules(collection, warn=warn_names(warn))
            if propagated_member(rule) in present | {None}
        ],
        settings=settings,
        read_dtypes=read_dtypes,
    )


def _members(
    collection: type[dy.Collection],
    members: Mapping[str, dg.AssetKey | str | Sequence[str]],
    skip_schema_checks: Sequence[str],
    sourced: Sequence[str],
    tolerate: Mapping[str, Mapping[str, Any]],
) -> list[Member]:
    known = collection.members()
    unknown = sorted(set(members) - set(known))
    missing = sorted(collection.required_members() - set(members))
    unskippable = sorted(set(skip_schema_checks) - set(members))
    unsourced = sorted(set(sourced) - set(members))
    # A skipped member's checks, and so its tolerances, are another step's.
    untolerated = sorted(set(tolerate) - (set(members) - set(skip_schema_checks)))
    if unknown or missing or unskippable or unsourced or untolerated:
        problems = [
            f"{label}: {', '.join(names)}"
            for label, names in (
                ("not members of the collection", unknown),
                ("required members missing", missing),
                ("skip_schema_checks names members not in members=", unskippable),
                ("sources= names members not in members=", unsourced),
                ("tolerate= names members whose schema checks these do not report", untolerated),
            )
            if names
        ]
        optional = sorted(collection.optional_members())
        raise CollectionMemberError(
            f"dd.collection_checks({collection.__name__}, members=...): {'; '.join(problems)}. "
            f"The collection's members are {', '.join(known)}"
            + (f" (optional: {', '.join(optional)})" if optional else "")
            + ". Map every required member to the asset that stores it: "
            "members={'<member>': '<asset key>', ...}"
            + (
                "; key sources= by the member names in members=: "
                "sources={'<member>': dd.sources.<Source>(...)}."
                if unsourced
                else "."
            )
            + (
                " tolerate= is keyed by the members whose checks these report (in members=, "
                "not in skip_schema_checks): tolerate={'<member>': {'<rule or column>': "
                "dd.Tolerance(warn_above=10)}}."
                if untolerated
                else ""
            )
        )
    return [
        Member(
            name=member,
            key=parse_asset_key(asset, argument="members"),
            schema=known[member].schema,
            own_checks=member not in skip_schema_checks,
            in_filters=not known[member].ignored_in_filters,
            table=TableChecks.of(known[member].schema),
            tolerate=overrides(known[member].schema.__name__, tolerate.get(member)),
        )
        for member, asset in members.items()
    ]


def _specs(
    members: Sequence[Member],
    filters: Sequence[Rule],
    settings: CheckSettings,
    blocking: bool | None,
    partitions_def: dg.PartitionsDefinition | None,
) -> list[dg.AssetCheckSpec]:
    specs: list[dg.AssetCheckSpec] = []
    for member in members:
        if member.own_checks:
            specs += check_specs(
                member.schema,
                asset=member.key,
                tolerate=member.tolerate,
                check_granularity=settings.check_granularity,
                schema_rules=settings.schema_rules,
                blocking=blocking,
                partitions_def=partitions_def,
            )
    specs += [
        check_spec(
            rule.check_name,
            asset=member.key,
            description=rule.description,
            blocking=rule.severity == "error" if blocking is None else blocking,
            partitions_def=partitions_def,
        )
        for rule in filters
        for member in members
        if member.in_filters
    ]
    return specs
