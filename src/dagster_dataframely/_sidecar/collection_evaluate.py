"""Evaluating a collection on its members' stored tables, streaming.

`Collection.filter` first filters each member by its schema, then hands the valid rows to
every `@dy.filter`, and removes from each member the rows whose common primary key a filter
does not return. Here the same happens lazily:

1. each member's rules are evaluated by the one evaluator (`evaluate_schema`): streaming
   counts, the member's own check results from them;
2. a member's valid rows are a lazy plan: a row filter on the rules that failed any row and
   an anti join on the keys a failed `unique`/primary-key rule repeats, found through the
   evaluator's key hashes (a valid table, the usual case, is read as it is);
3. each filter's kept keys are collected (memory in the number of keys, like a `unique`
   rule); on each member, a filter is then a rule "the row's key is kept", and the
   evaluator counts every filter in one streaming pass and samples the removed rows.

With `read_dtypes="cast"`, each member is cast on read as the sidecar casts a table, in the
same pass as its rules; the filters then run on the cast members, and a value that does not
convert stops them as a column mismatch does.

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

from .._checks.results import column_schema_results, evaluate_schema, results
from .._checks.specs import Check, plan
from .._engine.catalogue import Rule, rules
from .._engine.dataframely_internals import collection_filters, collection_instance
from .._engine.evaluate import _hashable, _repeated_hashes, _with_hashes, evaluate, rule_columns
from .._engine.naming import COLUMN_SCHEMA_CHECK
from .._engine.read_dtypes import Casts, ReadDtypes
from .._engine.settings import CheckSettings
from ..errors import ColumnSchemaError

_ROWS = "__dy_rows"


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
    read_dtypes: ReadDtypes = "strict"


def collection_results(
    run: CollectionRun,
    frames: Mapping[str, pl.LazyFrame],
    selected: Collection[dg.AssetCheckKey],
) -> Iterator[dg.AssetCheckResult]:
    """The results of the `selected` checks on the members' `frames`.

    Every member's columns are verified first; a mismatch yields the failed column-schema
    results (of members with their own checks) and raises `ColumnSchemaError`: filters
    cannot run on a member of the wrong shape. So does a value that `read_dtypes="cast"`
    cannot convert, found while the member's rules are counted.
    """
    actual = {member.name: frames[member.name].collect_schema() for member in run.members}
    casts = {
        member.name: Casts.plan(member.schema, actual[member.name], run.read_dtypes)
        for member in run.members
    }
    mismatches: list[ColumnSchemaError] = []
    for member in run.members:
        result, error = _columns(member, actual[member.name], casts[member.name], run.read_dtypes)
        if (
            result is not None
            and member.own_checks
            and _selected(selected, member, COLUMN_SCHEMA_CHECK)
        ):
            yield result
        if error is not None:
            mismatches.append(error)
    if mismatches:
        raise _combined(mismatches)

    wanted = [
        (rule, member)
        for rule in run.filters
        for member in run.members
        if member.in_filters and _selected(selected, member, rule.check_name)
    ]
    valid: dict[str, pl.LazyFrame] = {}
    for member in run.members:
        cast = casts[member.name]
        reports_casts = bool(cast.casts) and member.own_checks
        catalogue = rules(member.schema)
        planned = [
            check
            for check in plan(catalogue, run.settings, member.schema.__name__)
            if member.own_checks and _selected(selected, member, check.name)
        ]
        if not planned and not wanted and not reports_casts:
            continue
        lf = frames[member.name]
        samples = run.settings.max_failure_samples if planned or reports_casts else 0
        evaluation = evaluate_schema(
            member.schema,
            lf,
            catalogue,
            replace(run.settings, max_failure_samples=samples),
            casts=cast,
        )
        if cast.casts:
            result, error = cast.result(
                member.schema, member.key, evaluation, member.schema.primary_key()
            )
            if member.own_checks and _selected(selected, member, COLUMN_SCHEMA_CHECK):
                yield result
            if error is not None:
                mismatches.append(_located(member, error))
                continue
        yield from results(planned, evaluation, asset_key=member.key)
        columns = member.schema.column_names()
        valid[member.name] = valid_rows(
            cast.frame(lf, columns).select(columns), catalogue, evaluation.failed
        )
    if mismatches:
        raise _combined(mismatches)
    if wanted:
        yield from _filter_results(run, valid, wanted)


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
            kept = kept.join(_repeated_keys(lf, rule), on=keys, how="anti", nulls_equal=True)
    return kept


def _repeated_keys(lf: pl.LazyFrame, rule: Rule) -> pl.LazyFrame:
    """The keys of a failed `unique`/primary-key rule that more than one row holds. As the
    evaluator counts them: only rows whose key hash repeats are grouped, so memory grows
    with the rows (8 bytes each), not with the distinct keys."""
    keys = rule.distinct_over or ()
    if _hashable(lf.collect_schema(), keys):
        hashes = _repeated_hashes(lf, keys).collect(engine="streaming")
        lf = _with_hashes(lf, rule, hashes)
    repeated = lf.group_by(list(keys)).agg(pl.len().alias(_ROWS)).filter(pl.col(_ROWS) > 1)
    return repeated.drop(_ROWS).collect(engine="streaming").lazy()


def kept_keys(
    collection: type[dy.Collection], valid: Mapping[str, pl.LazyFrame]
) -> dict[str, pl.Series]:
    """filter name -> the common primary keys it keeps (a struct Series for a composite
    key), the filters run on the members' valid rows; collected, one row per kept row."""
    key = collection.common_primary_key()
    instance = collection_instance(collection, dict(valid))
    logic = collection_filters(collection)
    kept = pl.collect_all(
        [
            f(instance).lazy().select(pl.struct(key) if len(key) > 1 else key)
            for f in logic.values()
        ],
        engine="streaming",
    )
    return {name: frame.to_series() for name, frame in zip(logic, kept, strict=True)}


def filter_membership(rule: Rule, key: Sequence[str], kept: pl.Series) -> Rule:
    """`rule` (a filter's record) with the expression the evaluator counts: `False` where a
    row's key is not among the kept keys. A null key is never kept, as in Dataframely's join."""
    column = pl.struct(key) if len(key) > 1 else pl.col(key[0])
    return replace(rule, expr=column.is_in(kept.implode()).fill_null(False))


def _filter_results(
    run: CollectionRun,
    valid: Mapping[str, pl.LazyFrame],
    wanted: Sequence[tuple[Rule, Member]],
) -> Iterator[dg.AssetCheckResult]:
    """Each filter is a rule on a member's valid rows, evaluated by the one evaluator: one
    streaming pass per member counts every filter, then the removed rows are sampled."""
    kept = kept_keys(run.collection, valid)
    key = run.collection.common_primary_key()
    for member in run.members:
        mine = [rule for rule, m in wanted if m is member]
        if not mine:
            continue
        evaluation = evaluate(
            valid[member.name],
            [filter_membership(rule, key, kept[rule.name]) for rule in mine],
            max_failure_samples=run.settings.max_failure_samples,
            identify=member.schema.primary_key(),
        )
        yield from results(
            [Check(rule.check_name, (rule,)) for rule in mine], evaluation, asset_key=member.key
        )


def _columns(
    member: Member, actual: Mapping[str, pl.DataType], casts: Casts, read_dtypes: ReadDtypes
) -> tuple[dg.AssetCheckResult | None, ColumnSchemaError | None]:
    """The member's column-schema result (from `actual`, its columns as read), and the error
    its mismatch raises (if any). None when `casts` cover every mismatch: the result then
    comes with the member's evaluation."""
    outcome = column_schema_results(
        member.schema, actual, member.key, read_dtypes=read_dtypes, casts=casts
    )
    result = next(outcome, None)
    try:
        next(outcome, None)
    except ColumnSchemaError as error:
        return result, _located(member, error)
    return result, None


def _located(member: Member, error: ColumnSchemaError) -> ColumnSchemaError:
    where = f"Member {member.name!r} (asset {member.key.to_user_string()})"
    return ColumnSchemaError(f"{where}: {error}", mismatches=error.mismatches)


def _combined(errors: Sequence[ColumnSchemaError]) -> ColumnSchemaError:
    if len(errors) == 1:
        return errors[0]
    mismatches: dict[str, Any] = {}
    for error in errors:
        mismatches.update(error.mismatches)
    # One error for every member, so no mismatch waits for the next run to be reported.
    return ColumnSchemaError("\n\n".join(str(error) for error in errors), mismatches=mismatches)


def _selected(selected: Collection[dg.AssetCheckKey], member: Member, check: str) -> bool:
    return dg.AssetCheckKey(member.key, check) in selected
