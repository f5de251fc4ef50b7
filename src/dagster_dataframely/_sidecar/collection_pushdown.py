"""A collection's filters evaluated in the database its members live in.

A filter runs in SQL on a member when that member and every member the filter reads are
tables of one database (`SQLTable.database`: the same kind of source through the same
resource), each member's failing rules have an exact SQL form (its valid rows are then a
relation: `Backend.filter_rows` of the backend `backend_for` chose for the member), and the
filter's plan translates (`_engine.sql.plans`). A propagating member's failures run in SQL
on the members of its database. Every other (filter, member) pair is
left to the polars evaluation, which counts the same rows; each check's `dy_engine` says
where it ran. Each filter's kept keys (and each propagating member's failing keys) are
worked out once per database, staged as a temporary table where the database allows one
(`_engine.sql.staging`), and read by every member's count and sample queries.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

import dagster as dg
import dataframely as dy
import polars as pl

from .._engine.backends import Backend
from .._engine.catalogue import Rule
from .._engine.dataframely_internals import collection_filters, collection_instance
from .._engine.evaluate import Evaluation
from .._engine.failing_rows import Removed
from .collection_filters import FilterOutcome, Pair, Removals, member_results
from .collection_rules import propagated_member

if TYPE_CHECKING:  # sqlglot is imported only when a member is pushed down
    from .._engine.sql.filters import KeyMatch, MemberRows
    from .._engine.sql.staging import Session
    from .collection_members import CollectionRun, Member


@dataclass(frozen=True)
class SQLFilters:
    """The `FilterBackend` of the members whose own backend is a database: `backends` (of
    each evaluated member's rules), `catalogues` and `evaluations` (its rules and what they
    found), `dtypes` (every present member's schema columns, as read)."""

    run: CollectionRun
    backends: Mapping[str, Backend]
    catalogues: Mapping[str, Sequence[Rule]]
    evaluations: Mapping[str, Evaluation]
    dtypes: Mapping[str, Mapping[str, pl.DataType]]
    removals: Removals = field(default_factory=dict)

    def evaluate_filters(
        self, wanted: Sequence[Pair], declined: Mapping[str, str]
    ) -> FilterOutcome:
        """The results of the `wanted` (filter, member) pairs that run in SQL, the pairs left
        to polars, and why a database declined a filter (by rule name)."""
        rows: dict[str, MemberRows] = {}
        for name, backend in self.backends.items():
            failed = self.evaluations[name].failed
            split = backend.filter_rows(self.catalogues[name], failed, self.dtypes[name])
            if split is not None:
                rows[name] = split
        done: list[dg.AssetCheckResult] = []
        rest = list(wanted)
        reasons = dict(declined)
        for members in _by_database(rows).values():
            pushed, rest = _database_results(
                self.run, members, rows, self.dtypes, rest, reasons, self.removals
            )
            done += pushed
        return FilterOutcome(done, rest, reasons)


def _by_database(rows: Mapping[str, MemberRows]) -> dict[Hashable, list[str]]:
    grouped: dict[Hashable, list[str]] = {}
    for name, split in rows.items():
        grouped.setdefault(split.table.database, []).append(name)
    return grouped


def _database_results(
    run: CollectionRun,
    members: Sequence[str],
    rows: Mapping[str, MemberRows],
    dtypes: Mapping[str, Mapping[str, pl.DataType]],
    wanted: Sequence[tuple[Rule, Member]],
    reasons: dict[str, str],
    removals: Removals,
) -> tuple[list[dg.AssetCheckResult], list[tuple[Rule, Member]]]:
    """The results of the wanted pairs on `members` (tables of one database) that run there,
    and the pairs left; a filter declined here is logged and its reason added to `reasons`."""
    from .._engine.sql.exactness import NotExact
    from .._engine.sql.filters import kept, not_dropped
    from .._engine.sql.plans import compile_plan

    key = run.collection.common_primary_key()
    dialect = rows[members[0]].table.dialect
    relations = {name: rows[name].valid() for name in members}
    logic = collection_filters(run.collection)
    matches: dict[str, KeyMatch] = {}
    for rule in {rule.name: rule for rule, member in wanted if member.name in members}.values():
        propagating = propagated_member(rule)
        if propagating is not None:
            if propagating in members:
                matches[rule.name] = not_dropped(rows[propagating])
            continue
        try:
            plan = compile_plan(
                partial(_filtered, run.collection, logic[rule.name]),
                dtypes,
                relations,
                key,
                dialect,
            )
        except NotExact as declined:
            reasons[rule.name] = declined.reason
            rows[members[0]].table.log(
                f"Filter {rule.name!r} runs in polars, not {dialect.name}: {declined.reason}."
            )
            continue
        matches[rule.name] = kept(plan.relation)
    pushed = [(r, m) for r, m in wanted if m.name in members and r.name in matches]
    left = [(r, m) for r, m in wanted if not (m.name in members and r.name in matches)]
    pushed, left = _kept_whole(pushed, left, members, removals, reasons)
    opens = rows[members[0]].table.session
    with opens() if opens is not None and pushed else nullcontext() as session:
        if session is None:
            return list(_evaluated(run, rows, pushed, matches, key, removals)), left
        staged = {name: match.staged_in(key, session) for name, match in matches.items()}
        return list(_evaluated(run, rows, pushed, staged, key, removals, session)), left


def _kept_whole(
    pushed: Sequence[Pair],
    left: Sequence[Pair],
    members: Sequence[str],
    removals: Removals,
    reasons: dict[str, str],
) -> tuple[list[Pair], list[Pair]]:
    """`pushed` and `left`, with every filter on a member of `members` that keeps its removed
    rows left to polars when one of them is: a row two filters remove is then kept once,
    flagged by both (rows kept by two engines would hold it twice). Each moved filter says
    why."""
    split = {m.name for _, m in left if m.name in members and m.name in removals}
    if not split:
        return list(pushed), list(left)
    moved = [(r, m) for r, m in pushed if m.name in split]
    others = ", ".join(sorted({r.name for r, m in left if m.name in split}))
    for rule, _ in moved:
        reasons.setdefault(
            rule.name,
            f"keep_failing_rows: {others} runs in polars on the members this filter removes "
            "rows from, so their removed rows are selected there, with every filter's flag",
        )
    return [(r, m) for r, m in pushed if m.name not in split], [*left, *moved]


def _filtered(
    collection: type[dy.Collection],
    logic: Callable[[Any], pl.LazyFrame],
    frames: Mapping[str, pl.LazyFrame],
) -> pl.LazyFrame:
    """The keys the filter `logic` matches, on the members `frames`."""
    return logic(collection_instance(collection, dict(frames)))


def _evaluated(
    run: CollectionRun,
    rows: Mapping[str, MemberRows],
    pushed: Sequence[tuple[Rule, Member]],
    matches: Mapping[str, KeyMatch],
    key: Sequence[str],
    removals: Removals,
    session: Session | None = None,
) -> Iterator[dg.AssetCheckResult]:
    from .._engine.sql.filters import evaluate_filters

    for member in run.members:
        mine = [rule for rule, m in pushed if m is member]
        if not mine:
            continue
        mine_matches = {rule.name: matches[rule.name] for rule in mine}
        evaluation = evaluate_filters(
            rows[member.name],
            mine,
            mine_matches,
            max_failure_samples=run.settings.max_failure_samples,
            identify=member.schema.primary_key(),
            key=key,
            run=None if session is None else session.run,
        )
        removed = Removed(
            mine, evaluation, rows=rows[member.name], matches=mine_matches, key=key, session=session
        )
        yield from member_results(member, evaluation, removals, removed)
