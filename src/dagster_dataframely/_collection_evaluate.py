"""Evaluating a collection on its members' stored tables, streaming.

`Collection.filter` first filters each member by its schema, then hands the valid rows to
every `@dy.filter`, and removes from each member the rows whose common primary key a filter
does not return. Here the same happens lazily:

1. each member's rules are evaluated by the one evaluator (`evaluate_schema`): streaming
   counts, the member's own check results from them;
2. a member's valid rows are a lazy plan: a row filter on the rules that failed any row and
   an anti join on the keys a failed `unique`/primary-key rule repeats (a valid table, the
   usual case, is read as it is);
3. each filter's kept keys are collected (memory in the number of keys, like a `unique`
   rule), and a filter's removed rows on a member are an anti join of its valid rows on
   them: a count and a bounded sample, never the whole member.

A row is counted once per filter that removes it. A filter that returns a key twice makes
`Collection.filter` duplicate the member's row (Dataframely's docs warn against it); here
it stays one row.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl

from ._catalogue import Rule, rules
from ._dataframely import collection_filters, collection_instance
from ._evaluate import Evaluation, rule_columns
from ._naming import COLUMN_SCHEMA_CHECK
from ._results import column_schema_results, evaluate_schema, results
from ._settings import CheckSettings
from ._specs import Check, plan
from .errors import ColumnSchemaError

_ROWS = "__dy_rows"
_SAMPLE_COLUMNS = 8


@dataclass(frozen=True)
class Member:
    """A collection member and the asset that stores it."""

    name: str
    key: dg.AssetKey
    schema: type[dy.Schema]
    #: Whether these checks report the member's own schema checks.
    own_checks: bool
    #: Whether filters remove rows from it (not `ignored_in_filters`).
    in_filters: bool


@dataclass(frozen=True)
class CollectionRun:
    """What a collection's checks evaluate, resolved at definition time."""

    collection: type[dy.Collection]
    members: Sequence[Member]
    filters: Sequence[Rule]
    settings: CheckSettings


def collection_results(
    run: CollectionRun,
    frames: Mapping[str, pl.LazyFrame],
    selected: Collection[dg.AssetCheckKey],
) -> Iterator[dg.AssetCheckResult]:
    """The results of the `selected` checks on the members' `frames`.

    Every member's columns are verified first; a mismatch yields the failed column-schema
    results (of members with their own checks) and raises `ColumnSchemaError`: filters
    cannot run on a member of the wrong shape.
    """
    mismatches: list[ColumnSchemaError] = []
    for member in run.members:
        result, error = _columns(member, frames[member.name])
        if member.own_checks and _selected(selected, member, COLUMN_SCHEMA_CHECK):
            yield result
        if error is not None:
            mismatches.append(error)
    if mismatches:
        raise mismatches[0] if len(mismatches) == 1 else _combined(mismatches)

    wanted = [
        (rule, member)
        for rule in run.filters
        for member in run.members
        if member.in_filters and _selected(selected, member, rule.check_name)
    ]
    valid: dict[str, pl.LazyFrame] = {}
    row_counts: dict[str, int] = {}
    for member in run.members:
        catalogue = rules(member.schema)
        planned = [
            check
            for check in plan(catalogue, run.settings, member.schema.__name__)
            if member.own_checks and _selected(selected, member, check.name)
        ]
        if not planned and not wanted:
            continue
        lf = frames[member.name].select(member.schema.column_names())
        samples = run.settings.max_failure_samples if planned else 0
        evaluation = evaluate_schema(
            member.schema, lf, catalogue, replace(run.settings, max_failure_samples=samples)
        )
        yield from results(planned, evaluation, asset_key=member.key)
        valid[member.name] = valid_rows(lf, catalogue, evaluation.failed)
        row_counts[member.name] = evaluation.row_count
    if wanted:
        yield from _filter_results(run, valid, row_counts, wanted)


def valid_rows(
    lf: pl.LazyFrame, catalogue: Sequence[Rule], failed: Mapping[str, int]
) -> pl.LazyFrame:
    """The rows of `lf` that pass every rule of `catalogue`, as `Schema.filter` keeps them,
    given each rule's failure count: rules that failed no row cost nothing."""
    failing = [rule for rule in catalogue if failed[rule.name]]
    row_wise = [rule for rule in failing if rule.distinct_over is None]
    # Row-wise rules (windows and aggregates too) are evaluated on the whole table, then
    # rows holding a key a `unique` or primary-key rule found repeated are dropped.
    kept = (
        rule_columns(lf, row_wise)
        .filter(pl.all_horizontal(rule.check_name for rule in row_wise))
        .drop(rule.check_name for rule in row_wise)
        if row_wise
        else lf
    )
    for rule in failing:
        if rule.distinct_over is not None:
            keys = list(rule.distinct_over)
            repeated = (
                lf.group_by(keys).agg(pl.len().alias(_ROWS)).filter(pl.col(_ROWS) > 1).drop(_ROWS)
            )
            kept = kept.join(repeated, on=keys, how="anti", nulls_equal=True)
    return kept


def removed_rows(
    collection: type[dy.Collection], valid: Mapping[str, pl.LazyFrame]
) -> dict[tuple[str, str], pl.LazyFrame]:
    """(filter, member) -> the valid rows of the member that the filter removes, for every
    filter and every member not ignored in filters. The filters' kept keys are collected."""
    key = collection.common_primary_key()
    instance = collection_instance(collection, dict(valid))
    logic = collection_filters(collection)
    kept = dict(
        zip(
            logic,
            pl.collect_all(
                [f(instance).lazy().select(key) for f in logic.values()], engine="streaming"
            ),
            strict=True,
        )
    )
    ignored = collection.ignored_members()
    return {
        (name, member): frame.join(kept[name].lazy(), on=key, how="anti")
        for name in logic
        for member, frame in valid.items()
        if member not in ignored
    }


def _filter_results(
    run: CollectionRun,
    valid: Mapping[str, pl.LazyFrame],
    row_counts: Mapping[str, int],
    wanted: Sequence[tuple[Rule, Member]],
) -> Iterator[dg.AssetCheckResult]:
    removed = removed_rows(run.collection, valid)
    limit = run.settings.max_failure_samples
    pairs = [(rule, member, removed[rule.name, member.name]) for rule, member in wanted]
    collected = pl.collect_all(
        [
            query
            for _, member, rows in pairs
            for query in (rows.select(pl.len().alias(_ROWS)), _sample(rows, member, limit))
        ],
        engine="streaming",
    )
    for index, (rule, member, _) in enumerate(pairs):
        count = int(collected[2 * index][_ROWS][0])
        evaluation = Evaluation(
            row_count=row_counts[member.name],
            failed={rule.name: count},
            samples={rule.name: collected[2 * index + 1]} if count and limit else {},
        )
        yield from results([Check(rule.check_name, (rule,))], evaluation, asset_key=member.key)


def _sample(rows: pl.LazyFrame, member: Member, limit: int) -> pl.LazyFrame:
    """Up to `limit` rows, the member's primary key first, a few columns."""
    columns = list(dict.fromkeys([*member.schema.primary_key(), *member.schema.column_names()]))
    return rows.select(columns[:_SAMPLE_COLUMNS]).head(limit)


def _columns(
    member: Member, lf: pl.LazyFrame
) -> tuple[dg.AssetCheckResult, ColumnSchemaError | None]:
    """The member's column-schema result, and the error its mismatch raises (if any)."""
    outcome = column_schema_results(member.schema, lf.collect_schema(), member.key)
    result = next(outcome)
    try:
        next(outcome, None)
    except ColumnSchemaError as error:
        where = f"Member {member.name!r} (asset {member.key.to_user_string()})"
        return result, ColumnSchemaError(f"{where}: {error}", mismatches=error.mismatches)
    return result, None


def _combined(errors: Sequence[ColumnSchemaError]) -> ColumnSchemaError:
    mismatches: dict[str, Any] = {}
    for error in errors:
        mismatches.update(error.mismatches)
    # One error for every member, so no mismatch waits for the next run to be reported.
    return ColumnSchemaError("\n\n".join(str(error) for error in errors), mismatches=mismatches)


def _selected(selected: Collection[dg.AssetCheckKey], member: Member, check: str) -> bool:
    return dg.AssetCheckKey(member.key, check) in selected
