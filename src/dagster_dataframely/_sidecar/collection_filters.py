"""One interface for evaluating a collection's filters, with a SQL and a polars implementation.

A `FilterBackend` takes the (filter, member) pairs still to evaluate and returns their check
results, the pairs it leaves to the next backend, and why a database declined a filter.
`collection_results` runs them in order: `SQLFilters` (`collection_pushdown`: the members
whose backend, chosen by `backend_for`, is a database) then `PolarsFilters`
(`collection_evaluate`: every pair left, on the members' rows streamed by polars), so each
pair is evaluated once, in the database where it can be.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import dagster as dg

from .._engine.catalogue import Rule
from .collection_members import Member

#: A filter's record (or a propagating member's) and a member it removes rows from.
Pair = tuple[Rule, Member]


@dataclass(frozen=True)
class FilterOutcome:
    """What a filter backend did with the pairs it was handed."""

    #: Its check results, produced as they are read (polars evaluates member by member).
    results: Iterable[dg.AssetCheckResult] = ()
    #: The pairs left to the next backend.
    left: Sequence[Pair] = ()
    #: filter name -> why a database declined it (its `dy_engine` reason).
    declined: Mapping[str, str] = field(default_factory=dict)


class FilterBackend(Protocol):
    """Where a collection's filters are evaluated on its members."""

    def evaluate_filters(
        self, wanted: Sequence[Pair], declined: Mapping[str, str]
    ) -> FilterOutcome:
        """The results of the `wanted` pairs this backend evaluates, and the pairs it leaves;
        `declined` says why an earlier backend left a filter."""
        ...
