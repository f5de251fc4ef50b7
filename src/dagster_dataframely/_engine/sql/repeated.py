"""A table's repeated keys: one grouping query counts them and brings the first few back.

A `unique` or primary-key rule is counted by grouping the table by its keys once
(`KeyQueries.repeated_head`, which `SQLTable` inherits; with the counts in one round trip,
`counted`): the query returns the rows of every repeated key (`__dy_failed`), and the first
repeated keys in key order with their rows (`__dy_count`), at most `LISTED_ROWS` of them (or
the sample size, if larger). The rule's sample is built from those keys, and where they are
all of them, a collection's filters list them as literals instead of grouping the table
again (`listed`, `held`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import polars as pl
from sqlglot import exp

from ..catalogue import Rule
from .literals import literal
from .plans import keys_equal

if TYPE_CHECKING:
    from .dialects import Dialect

#: Up to this many rows failing a `unique` or primary-key rule, its repeated keys are listed.
LISTED_ROWS = 1_000
#: The columns of a repeated key's rows, and of the rows of all repeated keys.
COUNT = "__dy_count"
FAILED = "__dy_failed"
#: The aliases of the table's rows, of the keys found by grouping again and of the head.
TABLE = "__dy_table"
_KEYS = "__dy_keys"
_HEAD = "__dy_head"
_REPEATED = "__dy_repeated"
_TOTAL = "__dy_total"
_FIRST = "__dy_first"


@dataclass(frozen=True)
class RepeatedHead:
    """The first repeated keys of a table in key order (`found`: the key columns, `COUNT`
    and `FAILED`), fetched with a bound of `bound` rows: all of them where fewer came back."""

    found: pl.DataFrame
    bound: int

    @classmethod
    def of(cls, found: pl.DataFrame, bound: int) -> RepeatedHead:
        """The head of `head_query`'s rows: a row without a key's rows is the one a join
        gives where no key repeats."""
        return cls(found.filter(pl.col(COUNT).is_not_null()), bound)

    @property
    def failed(self) -> int:
        """The rows of all repeated keys: those a `unique` or primary-key rule fails."""
        return int(self.found[FAILED][0] or 0) if self.found.height else 0

    @property
    def complete(self) -> bool:
        return self.found.height < self.bound

    def rows(self, columns: Sequence[str], limit: int) -> pl.DataFrame:
        """The first `limit` rows of the first repeated keys, in key order, of `columns` (key
        columns): each key as many times as it occurs."""
        first = self.found.head(limit)
        index = first.select(
            pl.int_range(pl.len(), dtype=pl.UInt32)
            .repeat_by(pl.col(COUNT).cast(pl.Int64))
            .explode()
        ).to_series()
        return first.select(list(columns))[index].head(limit)

    def keys(self, keys: Sequence[str]) -> pl.DataFrame:
        """The repeated keys with how often each occurs (`COUNT`)."""
        return self.found.select(*keys, COUNT)


def listed(
    found: pl.DataFrame, keys: Sequence[str], dtypes: Mapping[str, pl.DataType], dialect: str
) -> list[list[exp.Expr]] | None:
    """The `found` rows' `keys`, each as literals of its columns' types in `dialect`, or None
    where there are none, or a key part is null or has no literal of its column's type."""
    rows: list[list[exp.Expr]] = []
    for row in found.select(list(keys)).iter_rows():
        values = [
            None if v is None else literal(v, dtypes[k], dialect)
            for k, v in zip(keys, row, strict=True)
        ]
        if any(value is None for value in values):
            return None
        rows.append([value for value in values if value is not None])
    return rows or None


def held(columns: Sequence[exp.Expr], keys: Sequence[Sequence[exp.Expr]]) -> exp.Expr:
    """On a row: its `columns` equal one of the listed `keys`. One column: `IN`; several: an
    `OR` of equalities, which DuckDB evaluates far faster than a row value `IN`. A null
    column matches none of the (null-free) listed keys: the result is then null."""
    if len(columns) == 1:
        return exp.In(this=columns[0], expressions=[values[0] for values in keys])
    return exp.or_(
        *(
            exp.and_(*(exp.EQ(this=c, expression=v) for c, v in zip(columns, values, strict=True)))
            for values in keys
        )
    )


class KeyQueries:
    """The count-and-head query of a table's repeated keys and the samples built from it,
    for `SQLTable`, which supplies its rows (`rows`), how it renders and runs SQL (`sql`,
    `run`) and the heads it fetched (`_repeated`, one per key)."""

    dialect: Dialect
    run: Callable[[str], pl.DataFrame]
    _repeated: dict[tuple[str, ...], RepeatedHead]

    if TYPE_CHECKING:

        def rows(self) -> exp.Subquery: ...

        def sql(self, query: exp.Expr) -> str: ...

    def counted(
        self, counts: exp.Select, keys: Sequence[str] | None, shown: int
    ) -> tuple[Any, ...]:
        """`counts`' row; with `keys`, fetched in one round trip with `repeated_head(keys,
        shown)`'s rows, which it keeps (`counts_with_head`: a `LEFT JOIN ... ON TRUE`, so the
        counts come back where no key repeats)."""
        if keys is None or tuple(keys) in self._repeated:
            return self.run(self.sql(counts)).row(0)
        bound = _bound(shown)
        found = self.run(self.sql(self.counts_with_head(counts, keys, bound)))
        width = len(counts.expressions)
        self._repeated[tuple(keys)] = RepeatedHead.of(found.select(found.columns[width:]), bound)
        return found.row(0)[:width]

    def repeated(self, keys: Sequence[str]) -> exp.Select:
        """The keys that occur more than once, with how often (`__dy_count`); nulls are one
        key, as polars' `is_unique` has them."""
        key_columns = [exp.column(key, quoted=True) for key in keys]
        return (
            exp.select(*key_columns, exp.alias_(exp.Count(this=exp.Star()), COUNT, quoted=True))
            .from_(self.rows())
            .group_by(*key_columns)
            .having(exp.GT(this=exp.Count(this=exp.Star()), expression=exp.Literal.number(1)))
        )

    def head_query(self, keys: Sequence[str], bound: int) -> exp.Select:
        """One grouping: the first `bound` repeated keys in key order, each with its rows
        (`__dy_count`), and the rows of all repeated keys (`__dy_failed`, summed before the
        limit). Where the dialect computes a CTE once (`materialized_cte`), the grouping is
        a CTE that one aggregate sums and a `LIMIT` heads; else a window sums it."""
        if not self.dialect.materialized_cte:
            return self._windowed_head(keys, bound)
        grouped = exp.Table(this=quoted(_REPEATED))
        total = exp.select(exp.alias_(exp.Sum(this=_counted()), FAILED, quoted=True))
        first = exp.select(*_keys(keys), _counted()).from_(grouped.copy())
        query = (
            exp.select(
                *_keys(keys, _FIRST),
                _counted(_FIRST),
                exp.column(FAILED, table=_TOTAL, quoted=True),
            )
            .from_(total.from_(grouped).subquery(quoted(_TOTAL)))
            .join(
                first.order_by(*_keys(keys)).limit(bound).subquery(quoted(_FIRST)),
                on=exp.true(),
                join_type="left",
            )
            .order_by(*_keys(keys, _FIRST))
            .with_(quoted(_REPEATED), as_=self.repeated(keys))
        )
        query.ctes[0].set("materialized", True)  # computed once, though read twice
        return query

    def _windowed_head(self, keys: Sequence[str], bound: int) -> exp.Select:
        """`head_query` in one SELECT: the total is a window over every repeated key."""
        total = exp.Window(this=exp.Sum(this=_counted()))
        return (
            exp.select(*_keys(keys), _counted(), exp.alias_(total, FAILED, quoted=True))
            .from_(self.repeated(keys).subquery("repeated"))
            .order_by(*_keys(keys))
            .limit(bound)
        )

    def counts_with_head(self, counts: exp.Select, keys: Sequence[str], bound: int) -> exp.Select:
        """`counts`' row joined to each row of `head_query(keys, bound)`, in key order."""
        head = self.head_query(keys, bound).subquery(quoted(_HEAD))
        return (
            exp.select(exp.Star())
            .from_(counts.subquery(quoted("__dy_counts")))
            .join(head, on=exp.true(), join_type="left")
            .order_by(*(exp.column(key, table=_HEAD, quoted=True) for key in keys))
        )

    def repeated_head(self, keys: Sequence[str], shown: int = 0) -> RepeatedHead:
        """`head_query`'s rows, fetched once per table, bound to show `shown` rows and to
        hold every repeated key where `LISTED_ROWS` rows fail: a rule's count and sample and
        a collection's filters all read them."""
        if tuple(keys) not in self._repeated:
            bound = _bound(shown)
            found = self.run(self.sql(self.head_query(keys, bound)))
            self._repeated[tuple(keys)] = RepeatedHead.of(found, bound)
        return self._repeated[tuple(keys)]

    def repeated_keys(self, keys: Sequence[str]) -> pl.DataFrame:
        """Every repeated key with how often it occurs (`__dy_count`): `repeated_head`'s
        where it holds them all, else the rows of `repeated(keys)`."""
        head = self.repeated_head(keys)
        if head.complete:
            return head.keys(keys)
        return self.run(self.sql(self.repeated(keys)))

    def key_sample(
        self,
        rule: Rule,
        head: RepeatedHead,
        shown: Sequence[str],
        limit: int,
        dtypes: Mapping[str, pl.DataType],
    ) -> pl.DataFrame:
        """Up to `limit` rows of a `unique` or primary-key rule's smallest repeated keys:
        built from `head` where `shown` are key columns, else read by `key_rows`."""
        keys = list(rule.distinct_over or ())
        if set(shown) <= set(keys):
            return head.rows(shown, limit)
        return self.run(self.sql(self.key_rows(keys, head, shown, limit, dtypes)))

    def key_rows(
        self,
        keys: Sequence[str],
        head: RepeatedHead,
        shown: Sequence[str],
        limit: int,
        dtypes: Mapping[str, pl.DataType],
    ) -> exp.Select:
        """The `shown` columns of the rows of the `limit` smallest repeated `keys`: those of
        `head` listed as literals, else found by grouping again (a null key part, a type
        without literals)."""
        columns = [exp.column(name, table=TABLE, quoted=True) for name in shown]
        order = [exp.column(key, table=TABLE, quoted=True) for key in keys]
        few = listed(head.found.head(limit), keys, dtypes, self.dialect.name)
        if few is not None:
            return (
                exp.select(*columns)
                .from_(self.rows())
                .where(held(order, few))
                .order_by(*order)
                .limit(limit)
            )
        smallest = (
            exp.select(*(exp.column(key, quoted=True) for key in keys))
            .from_(self.repeated(keys).subquery("repeated"))
            .order_by(*(exp.column(key, quoted=True) for key in keys))
            .limit(limit)
        )
        same_key = keys_equal(TABLE, _KEYS, keys, self.dialect.same)
        return (
            exp.select(*columns)
            .from_(self.rows())
            .join(smallest.subquery(quoted(_KEYS)), on=same_key)
            .order_by(*order)
            .limit(limit)
        )


def _bound(shown: int) -> int:
    """How many repeated keys a head fetches: enough to show `shown` rows, and one more
    than `LISTED_ROWS`, so that fewer coming back says they are all of them."""
    return max(LISTED_ROWS, shown) + 1


def _keys(keys: Sequence[str], table: str | None = None) -> list[exp.Column]:
    return [exp.column(key, table=table, quoted=True) for key in keys]


def _counted(table: str | None = None) -> exp.Column:
    return exp.column(COUNT, table=table, quoted=True)


def quoted(alias: str) -> exp.Identifier:
    """A table alias the queries name quoted, so a database that folds unquoted names
    (Snowflake to upper case) finds `"__dy_table"."id"` under the alias it was given."""
    return exp.to_identifier(alias, quoted=True)
