"""The failing rows of several rules fetched in few round trips.

Each failing rule's sample is a bounded `LIMIT` query (`SQLTable.sample`). Two strategies
fetch many at once, chosen by the dialect:

- `Dialect.shared_samples`: one bounded query keeps the rows failing any rule, each with a
  flag per rule (`SQLTable.flagged_sample`), split here: each rule's first flagged rows. A
  rule whose rows the bound crowded out (fewer than `min(limit, failed)`) gets its own
  query, so no sample is short. One scan for all rules, where the database runs each query
  as a job of its own (Spark: a `UNION ALL`'s branches are stages of their own too).
- `Dialect.union_by_name` (a branch's missing columns are NULL): the samples of up to
  `BATCH` rules go as one query, each branch tagged with its rule, split here.

Elsewhere each sample is a query of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import reduce

import polars as pl
from sqlglot import exp

#: The column that tags each row with its rule's branch.
_BRANCH = "__dy_sample"
#: The prefix of the column flagging the rows that fail a rule (`__dy_fails0`, ...).
_FLAG = "__dy_fails"
#: Rules per query: a bounded union (its width and sqlglot's nesting grow with it).
BATCH = 32
#: The shared query's rows, at most: one Arrow batch of Spark's (`maxRecordsPerBatch`).
SHARED_ROWS = 10_000
#: The table rows the shared query may read past what its samples need: as many failing
#: rows as that many table rows hold at the table's own rate of failing rows.
SHARED_SCAN = 100_000


@dataclass(frozen=True)
class Sampled:
    """A failing rule's sample to fetch: its own bounded query, the columns it shows, the
    SQL condition its rows fail, and how many rows fail it (the count query's)."""

    query: exp.Select
    shown: Sequence[str]
    condition: exp.Expr
    failed: int


#: Builds the shared query: flag column -> a rule's condition, the shown columns, a bound.
#: (`exp.Expr` quoted: an alias is evaluated at import, and older sqlglot has no `exp.Expr`.)
Flagged = Callable[[Mapping[str, "exp.Expr"], Sequence[str], int], exp.Select]


def fetched(
    sampled: Mapping[str, Sampled],
    run: Callable[[exp.Expr], pl.DataFrame],
    *,
    limit: int,
    union_by_name: bool,
    flagged: Flagged | None = None,
    rows: int = 0,
) -> dict[str, pl.DataFrame]:
    """Rule name -> its sample, up to `limit` rows of its `shown` columns; `run` sends a
    query and returns its rows. With `flagged` (the dialect's `shared_samples`), the rules'
    samples come from one shared query first, bounded by the table's `rows` too."""
    samples: dict[str, pl.DataFrame] = {}
    rest = dict(sampled)
    if flagged is not None and len(sampled) > 1:
        rest = {}
        named = list(sampled.items())
        for start in range(0, len(named), BATCH):
            batch = dict(named[start : start + BATCH])
            found, short = _shared(batch, run, flagged, _bound(batch, limit, rows), limit)
            samples |= found
            rest |= short
    return samples | _own(rest, run, union_by_name=union_by_name)


def _bound(sampled: Mapping[str, Sampled], limit: int, rows: int) -> int:
    """The shared query's `LIMIT`: the rows the samples need if no row failed two rules
    (`sum(min(limit, failed))`), raised to what the table's first `SHARED_SCAN` rows hold at
    its rate of failing rows (at most `SHARED_ROWS`, and no more than fail). A rule whose
    rows start later than the others' (a range of values) is then still in it, where the
    table fails densely, while a table failing thinly is not read further for it."""
    needed = sum(min(limit, one.failed) for one in sampled.values())
    failing = sum(one.failed for one in sampled.values())  # a row failing two counts twice
    if rows <= 0:
        return needed
    nearby = min(SHARED_ROWS, failing, -(-failing * SHARED_SCAN // rows))
    return max(needed, nearby)


def _shared(
    sampled: Mapping[str, Sampled],
    run: Callable[[exp.Expr], pl.DataFrame],
    flagged: Flagged,
    bound: int,
    limit: int,
) -> tuple[dict[str, pl.DataFrame], dict[str, Sampled]]:
    """The samples the shared query fills (at most `bound` rows), and the rules it leaves
    short."""
    flags = {name: f"{_FLAG}{index}" for index, name in enumerate(sampled)}
    shown = list(dict.fromkeys(column for one in sampled.values() for column in one.shown))
    conditions = {flags[name]: one.condition for name, one in sampled.items()}
    found = run(flagged(conditions, shown, bound))
    samples: dict[str, pl.DataFrame] = {}
    short: dict[str, Sampled] = {}
    for name, one in sampled.items():
        rows = found.filter(pl.col(flags[name])).head(limit).select(one.shown)
        if rows.height < min(limit, one.failed):
            short[name] = one
        else:
            samples[name] = rows
    return samples, short


def _own(
    sampled: Mapping[str, Sampled],
    run: Callable[[exp.Expr], pl.DataFrame],
    *,
    union_by_name: bool,
) -> dict[str, pl.DataFrame]:
    """Each rule's own sample query, unioned by name in batches where the dialect can."""
    named = list(sampled.items())
    if not union_by_name:
        return {name: run(one.query) for name, one in named}
    samples: dict[str, pl.DataFrame] = {}
    for start in range(0, len(named), BATCH):
        batch = named[start : start + BATCH]
        if len(batch) == 1:
            name, one = batch[0]
            samples[name] = run(one.query)
            continue
        branches: list[exp.Query] = [
            one.query.select(exp.alias_(exp.Literal.number(index), _BRANCH), copy=False)
            for index, (_, one) in enumerate(batch)
        ]
        found = run(reduce(_union, branches))
        parts = found.partition_by(_BRANCH, as_dict=True)
        for index, (name, one) in enumerate(batch):
            samples[name] = parts.get((index,), found.clear()).select(one.shown)
    return samples


def _union(left: exp.Query, right: exp.Query) -> exp.Query:
    """`left UNION ALL BY NAME (right)`, each query in parentheses (their `LIMIT`s)."""
    return exp.Union(
        this=left if isinstance(left, exp.Union) else left.subquery(copy=False),
        expression=right.subquery(copy=False),
        distinct=False,
        by_name=True,
    )
