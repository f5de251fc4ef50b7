"""One interface for evaluating a collection's filters, with a SQL and a polars implementation.

A `FilterBackend` takes the (filter, member) pairs still to evaluate and returns their check
results, the pairs it leaves to the next backend, and why a database declined a filter.
`collection_results` runs them in order: `SQLFilters` (`collection_pushdown`: the members
whose backend, chosen by `backend_for`, is a database) then `PolarsFilters`
(`collection_evaluate`: every pair left, on the members' rows streamed by polars), so each
pair is evaluated once, in the database where it can be.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import dagster as dg

from .._checks.kept import KeptRows, keeping
from .._checks.results import results
from .._checks.specs import Check
from .._engine.catalogue import Rule
from .._engine.evaluate import Evaluation
from .._engine.failing_rows import Removed
from .collection_members import Member

#: A filter's record (or a propagating member's) and a member it removes rows from.
Pair = tuple[Rule, Member]
#: Keeps a member's rows that its filters removed (`keep_failing_rows=`), by member name.
Removals = Mapping[str, Callable[[Removed], KeptRows]]


@dataclass(frozen=True)
class FilterOutcome:
    """What a filter backend did with the pairs it was handed."""

    #: Its check results, produced as they are read (polars evaluates member by member).
    results: Iterable[dg.AssetCheckResult] = ()
    #: The pairs left to the next backend.
    left: Sequence[Pair] = ()
    #: filter name -> why a database declined it (its `dy_engine` reason).
    declined: Mapping[str, str] = field(default_factory=dict)


def member_results(
    member: Member,
    evaluation: Evaluation,
    removals: Removals,
    removed: Removed,
) -> Iterator[dg.AssetCheckResult]:
    """The results of the filters of `removed` on `member`, which `evaluation` found; where
    the member keeps its failing rows, its removed rows kept first and each failing result
    saying where."""
    checks = [Check(rule.check_name, (rule,)) for rule in removed.filters]
    found = results(checks, evaluation, asset_key=member.key)
    remove = removals.get(member.name)
    if remove is None:
        return found
    return keeping(checks, found, remove(removed), evaluation)


class FilterBackend(Protocol):
    """Where a collection's filters are evaluated on its members."""

    def evaluate_filters(
        self, wanted: Sequence[Pair], declined: Mapping[str, str]
    ) -> FilterOutcome:
        """The results of the `wanted` pairs this backend evaluates, and the pairs it leaves;
        `declined` says why an earlier backend left a filter."""
        ...
