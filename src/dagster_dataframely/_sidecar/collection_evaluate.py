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
   evaluator counts every filter in one streaming pass and samples the removed rows. A
   member declared `propagate_row_failures` contributes the keys of its failing rows: on
   each member, the rule "the row's key is not among them".

With `read_dtypes="cast"`, each member is cast on read as the sidecar casts a table, in the
same pass as its rules; the filters then run on the cast members, and a value that does not
convert stops them as a column mismatch does.

A member read from a database source evaluates its rules there (pushdown: the backend
`backend_for` chose), and the filters whose members share that database run there too
(`SQLFilters`); steps 2 and 3 (`PolarsFilters`) are then only for the filters left to
polars. Both are `FilterBackend`s (`collection_filters`).

A row is counted once per filter that removes it. A filter that returns a key twice makes
`Collection.filter` duplicate the member's row (Dataframely's docs warn against it); here
it stays one row.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any

import dagster as dg
import polars as pl

from .._checks.kept import Keeper, KeptRows, keeping
from .._checks.results import column_schema_results, evaluate_schema, results
from .._checks.specs import plan
from .._checks.table_results import table_results
from .._checks.trend_results import TrendHistory, trend_results
from .._engine.backends import Backend, backend_for
from .._engine.catalogue import Rule, rules
from .._engine.evaluate import (
    Evaluation,
    evaluate,
    rule_columns,
)
from .._engine.failing_rows import Removed, repeated_keys
from .._engine.naming import COLUMN_SCHEMA_CHECK, FRESHNESS_CHECK, ROW_COUNT_CHECK
from .._engine.read_dtypes import Casts, ReadDtypes
from ..errors import ColumnSchemaError
from .collection_filters import FilterBackend, FilterOutcome, Pair, Removals, member_results
from .collection_members import CollectionRun, Member
from .collection_membership import (
    dropped_keys,
    filter_membership,
    kept_keys,
    propagation_membership,
)
from .collection_pushdown import SQLFilters
from .collection_trends import noting_removed, read_by_trends

if TYPE_CHECKING:  # sqlglot is imported only when a member is pushed down
    from .._engine.sql.backend import SQLTable

_ROWS = "__dy_rows"


def collection_results(
    run: CollectionRun,
    frames: Mapping[str, pl.LazyFrame],
    selected: Collection[dg.AssetCheckKey],
    *,
    pushdowns: Mapping[str, SQLTable | None] | None = None,
    keep: Mapping[str, Keeper] | None = None,
    trends: Mapping[str, TrendHistory] | None = None,
    reference: datetime | None = None,
) -> Iterator[dg.AssetCheckResult]:
    """The results of the `selected` checks on the members' `frames`.

    Every member's columns are verified first; a mismatch yields the failed column-schema
    results (of members with their own checks) and raises `ColumnSchemaError`: filters
    cannot run on a member of the wrong shape. So does a value that `read_dtypes="cast"`
    cannot convert, found while the member's rules are counted. A member in `pushdowns` (a
    database table) has its rules, and the filters on it, evaluated in its database where
    they have an exact SQL form (`collection_pushdown`). A member in `keep` keeps the rows
    failing its schema's rules and the rows its filters remove (`keep_failing_rows=`). A
    member in `trends` (whose trend check is selected) gets its trend last: its rows, its
    rules' and every filter's failing fraction on it, so those are evaluated whether or not
    their checks are selected. A member's table checks (`Member.table`) follow its rules'
    results, judged from the same evaluation, freshness measured from `reference` (a time
    partition's end), else from now.
    """
    trends = trends or {}
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
    pairs = wanted + read_by_trends(run, trends, selected)
    # Each member's rows and what its rules found, split into valid and invalid rows only
    # when a filter is left to polars (a failed key rule's repeated keys are collected).
    unsplit: dict[str, tuple[pl.LazyFrame, list[Rule], Mapping[str, int]]] = {}
    # Members evaluated in their database: a member cast on read is evaluated in polars.
    tables = {
        name: table
        for name, table in (pushdowns or {}).items()
        if table is not None and not casts[name].casts
    }
    backends = {member.name: backend_for(tables.get(member.name)) for member in run.members}
    catalogues: dict[str, list[Rule]] = {}
    evaluations: dict[str, Evaluation] = {}
    for member in run.members:
        cast = casts[member.name]
        reports_casts = bool(cast.casts) and member.own_checks
        catalogue = rules(member.schema, tolerate=member.tolerate)
        planned = [
            check
            for check in plan(catalogue, run.settings, member.schema.__name__)
            if member.own_checks and _selected(selected, member, check.name)
        ]
        tabled = [
            name
            for name in (ROW_COUNT_CHECK, FRESHNESS_CHECK)
            if member.own_checks and _selected(selected, member, name)
        ]
        if not (planned or pairs or reports_casts or tabled or member.name in trends):
            continue
        lf = frames[member.name]
        samples = run.settings.max_failure_samples if planned or reports_casts else 0
        evaluation = evaluate_schema(
            member.schema,
            lf,
            catalogue,
            replace(run.settings, max_failure_samples=samples),
            casts=cast,
            backend=backends[member.name],
            maxima=member.table.maxima,
        )
        catalogues[member.name], evaluations[member.name] = catalogue, evaluation
        if cast.casts:
            result, error = cast.result(
                member.schema, member.key, evaluation, member.schema.primary_key()
            )
            if member.own_checks and _selected(selected, member, COLUMN_SCHEMA_CHECK):
                yield result
            if error is not None:
                mismatches.append(_located(member, error))
                continue
        columns = member.schema.column_names()
        found = results(planned, evaluation, asset_key=member.key)
        keeper = (keep or {}).get(member.name)
        if keeper is not None and planned:
            pushdown = tables.get(member.name)
            kept = keeper(member.schema, cast.frame(lf, columns), catalogue, evaluation, pushdown)
            found = keeping(planned, found, kept, evaluation)
        yield from found
        yield from table_results(
            member.table, evaluation, asset_key=member.key, reference=reference, checks=tabled
        )
        unsplit[member.name] = (
            cast.frame(lf, columns).select(columns),
            catalogue,
            evaluation.failed,
        )
    if mismatches:
        raise _combined(mismatches)
    removed: dict[str, dict[str, int]] = {name: {} for name in trends}
    if pairs:
        # Each member keeping its failing rows keeps those its filters remove too.
        removals: dict[str, Callable[[Removed], KeptRows]] = {
            member.name: partial(
                keeper.removed,
                member.schema,
                rules(member.schema),
                pushdown=tables.get(member.name),
            )
            for member in run.members
            if (keeper := (keep or {}).get(member.name)) is not None
        }
        filtered = _filtered(
            run, pairs, unsplit, catalogues, evaluations, backends, actual, removals
        )
        for result in noting_removed(filtered, run.members, removed):
            key = dg.AssetCheckKey(result.asset_key, result.check_name or "")  # type: ignore[arg-type]
            if key in selected:
                yield result
    for member in run.members:
        if member.name in trends:
            yield from trend_results(
                trends[member.name],
                evaluations[member.name],
                catalogues[member.name],
                asset_key=member.key,
                removed=removed[member.name],
            )


def _filtered(
    run: CollectionRun,
    pairs: Sequence[Pair],
    unsplit: Mapping[str, tuple[pl.LazyFrame, list[Rule], Mapping[str, int]]],
    catalogues: Mapping[str, list[Rule]],
    evaluations: Mapping[str, Evaluation],
    backends: Mapping[str, Backend],
    actual: Mapping[str, Mapping[str, pl.DataType]],
    removals: Removals,
) -> Iterator[dg.AssetCheckResult]:
    """The results of the filter `pairs`: in the members' database where they share one,
    the rest by polars, keeping the rows they remove for the members in `removals`."""
    read = {
        m.name: {name: actual[m.name][name] for name in m.schema.column_names()}
        for m in run.members
    }
    evaluated = {name: backends[name] for name in catalogues}
    # Each filter backend in turn takes the pairs the one before left: SQL, then polars.
    chain: tuple[FilterBackend, ...] = (
        SQLFilters(run, evaluated, catalogues, evaluations, read, removals),
        PolarsFilters(run, unsplit, removals),
    )
    outcome = FilterOutcome(left=list(pairs))
    for filters in chain:
        if outcome.left:
            outcome = filters.evaluate_filters(outcome.left, outcome.declined)
            yield from outcome.results


@dataclass(frozen=True)
class PolarsFilters:
    """The `FilterBackend` of every pair left: on each member's rows, split into valid and
    invalid rows by what its rules found (`unsplit`: its rows, rules and their counts)."""

    run: CollectionRun
    unsplit: Mapping[str, tuple[pl.LazyFrame, list[Rule], Mapping[str, int]]]
    removals: Removals = field(default_factory=dict)

    def evaluate_filters(
        self, wanted: Sequence[Pair], declined: Mapping[str, str]
    ) -> FilterOutcome:
        """The results of every `wanted` pair; a filter a database `declined` says why in
        `dy_engine`."""
        split = {name: split_rows(*parts) for name, parts in self.unsplit.items()}
        valid = {name: rows for name, (rows, _) in split.items()}
        invalid = {name: rows for name, (_, rows) in split.items()}
        found = _filter_results(self.run, valid, invalid, wanted, declined, self.removals)
        return FilterOutcome(found, (), declined)


def split_rows(
    lf: pl.LazyFrame, catalogue: Sequence[Rule], failed: Mapping[str, int]
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """The rows of `lf` that pass every rule of `catalogue` (as `Schema.filter` keeps them)
    and the rows that fail one, given each rule's failure count: rules that failed no row
    cost nothing."""
    failing = [rule for rule in catalogue if failed[rule.name]]
    if not failing:
        return lf, lf.clear()
    row_wise = [rule for rule in failing if rule.distinct_over is None]
    # Row-wise rules (windows and aggregates too) are evaluated on the whole table; a row
    # holding a key that a failed `unique` or primary-key rule found repeated fails too.
    flagged = rule_columns(lf, row_wise)
    flags = [rule.check_name for rule in row_wise]
    passes = pl.all_horizontal(flags) if flags else pl.lit(True)
    for index, rule in enumerate(r for r in failing if r.distinct_over is not None):
        repeated = f"{_ROWS}_repeated_{index}"
        flagged = flagged.join(
            repeated_keys(lf, rule).with_columns(pl.lit(True).alias(repeated)),
            on=list(rule.distinct_over or ()),
            how="left",
            nulls_equal=True,
            maintain_order="left",
        ).with_columns(pl.col(repeated).fill_null(False))
        flags.append(repeated)
        passes = passes & ~pl.col(repeated)
    return flagged.filter(passes).drop(flags), flagged.filter(~passes).drop(flags)


def _filter_results(
    run: CollectionRun,
    valid: Mapping[str, pl.LazyFrame],
    invalid: Mapping[str, pl.LazyFrame],
    wanted: Sequence[tuple[Rule, Member]],
    declined: Mapping[str, str],
    removals: Removals,
) -> Iterator[dg.AssetCheckResult]:
    """Each filter, and each propagating member's failures, is a rule on a member's valid
    rows, evaluated by the one evaluator: one streaming pass per member counts them all,
    then the removed rows are sampled (and kept, for the members in `removals`). A filter a
    database `declined` says why in `dy_engine`."""
    from .._engine.sql.exactness import fallback_engine

    kept = kept_keys(run.collection, valid, {rule.name for rule, _ in wanted})
    dropped = dropped_keys(run, invalid, list({rule.name: rule for rule, _ in wanted}.values()))
    key = run.collection.common_primary_key()
    for member in run.members:
        mine = [rule for rule, m in wanted if m is member]
        if not mine:
            continue
        membership = [
            propagation_membership(rule, key, dropped[rule.name])
            if rule.name in dropped
            else filter_membership(rule, key, kept[rule.name])
            for rule in mine
        ]
        evaluation = evaluate(
            valid[member.name],
            membership,
            max_failure_samples=run.settings.max_failure_samples,
            identify=member.schema.primary_key(),
        )
        reasons = {r.name: fallback_engine(declined[r.name]) for r in mine if r.name in declined}
        evaluation = replace(evaluation, engines={**evaluation.engines, **reasons})
        removed = Removed(membership, evaluation, valid=valid[member.name])
        yield from member_results(member, evaluation, removals, removed)


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
