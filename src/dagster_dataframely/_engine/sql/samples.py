"""The failing rows of several rules fetched in one round trip.

Each failing rule's sample is a bounded `LIMIT` query (`SQLTable.sample`). Where the dialect
unions queries by column name (`Dialect.union_by_name`: a branch's missing columns are
NULL), the samples of up to `BATCH` rules go as one query, each branch tagged with its rule,
and are split apart here: a query per rule costs a round trip, a plan and a result, more
than the few rows it brings back. Elsewhere each sample is a query of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import reduce

import polars as pl
from sqlglot import exp

#: The column that tags each row with its rule's branch.
_BRANCH = "__dy_sample"
#: Rules per query: a bounded union (its width and sqlglot's nesting grow with it).
BATCH = 32


def fetched(
    queries: Mapping[str, tuple[exp.Select, Sequence[str]]],
    run: Callable[[exp.Expr], pl.DataFrame],
    *,
    union_by_name: bool,
) -> dict[str, pl.DataFrame]:
    """Rule name -> its sample, the `shown` columns of its query's rows (`queries`: rule
    name -> query and shown columns); `run` sends a query and returns its rows."""
    named = list(queries.items())
    if not union_by_name:
        return {name: run(query) for name, (query, _) in named}
    samples: dict[str, pl.DataFrame] = {}
    for start in range(0, len(named), BATCH):
        batch = named[start : start + BATCH]
        if len(batch) == 1:
            name, (query, _) = batch[0]
            samples[name] = run(query)
            continue
        branches: list[exp.Query] = [
            query.select(exp.alias_(exp.Literal.number(index), _BRANCH), copy=False)
            for index, (_, (query, _)) in enumerate(batch)
        ]
        found = run(reduce(_union, branches))
        parts = found.partition_by(_BRANCH, as_dict=True)
        for index, (name, (_, shown)) in enumerate(batch):
            samples[name] = parts.get((index,), found.clear()).select(shown)
    return samples


def _union(left: exp.Query, right: exp.Query) -> exp.Query:
    """`left UNION ALL BY NAME (right)`, each query in parentheses (their `LIMIT`s)."""
    return exp.Union(
        this=left if isinstance(left, exp.Union) else left.subquery(copy=False),
        expression=right.subquery(copy=False),
        distinct=False,
        by_name=True,
    )
