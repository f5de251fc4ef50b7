"""The SQL backend: a table's rules counted by one aggregate query (each `unique` or
primary-key rule by one grouping query that also brings back the keys its sample shows; the
first key's grouping joined to the counts, one round trip), failures sampled by bounded
`LIMIT` queries, every rule without an exact SQL form evaluated by the polars evaluator over
only the columns it reads. With `read_dtypes="cast"`, the casts with an exact SQL form are
made in the query (`casts`), and the rules read the cast columns. It returns the polars
backend's `Evaluation`, with `engines` saying where each rule ran.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from typing import Any

import dataframely as dy
import polars as pl
from sqlglot import exp

from ..catalogue import Rule
from ..evaluate import POLARS, Evaluation, _explaining, evaluate
from ..read_dtypes import Cast
from .casts import cast_relation, compile_casts
from .columns import TableFacts, compared
from .dialects import DIALECTS, Dialect
from .exactness import NO_SQL_FORM, NotExact, fallback_engine
from .maxima import aggregates, agreeing, in_polars, pushable
from .repeated import COUNT, FAILED, LISTED_ROWS, RepeatedHead, held, listed
from .rules import groupable, predicate
from .staging import Session

_ROWS = "__dy_rows"
_TABLE = "__dy_table"
_KEYS = "__dy_keys"
_HEAD = "__dy_head"


@dataclass(frozen=True)
class SQLTable:
    """A table, or the run's partition of it, in a database that runs the rules' SQL.

    `relation` selects the table's rows (`SELECT * FROM t WHERE <partition>`); `run` sends
    one SQL text (rendered for `dialect`) and returns its result as a frame. Tables with
    equal `database` (the source's kind and resource; None: unknown) are in one database:
    a query may join them (a collection's filters). `session` opens one connection to the
    database that may stage relations as temporary tables (None: queries only).
    """

    relation: exp.Select
    dialect: Dialect
    run: Callable[[str], pl.DataFrame]
    database: Hashable | None = None
    session: Callable[[], AbstractContextManager[Session]] | None = None
    #: Where the backend says why a rule falls back to polars (the step log).
    log: Callable[[str], None] = field(default=lambda _: None, compare=False, repr=False)
    #: What the database's catalog says of the table's columns (`catalog.read_facts`).
    facts: TableFacts = field(default_factory=TableFacts, compare=False, repr=False)
    _repeated: dict[tuple[str, ...], RepeatedHead] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )

    @classmethod
    def of(
        cls,
        relation: exp.Select,
        *,
        dialect: str,
        run: Callable[[str], pl.DataFrame],
        database: Hashable | None = None,
        session: Callable[[], AbstractContextManager[Session]] | None = None,
        log: Callable[[str], None] | None = None,
        facts: TableFacts | None = None,
    ) -> SQLTable:
        """With `facts`, the table's collated columns are read under the dialect's binary
        collation, so that every query over `relation` compares as polars does."""
        known = facts or TableFacts()
        return cls(
            relation=known.collated(relation, DIALECTS[dialect].binary_collation),
            dialect=DIALECTS[dialect],
            run=run,
            database=database,
            session=session,
            log=log or (lambda _: None),
            facts=known,
        )

    def evaluate(
        self,
        schema: type[dy.Schema],
        lf: pl.LazyFrame,
        rules: Sequence[Rule],
        *,
        max_failure_samples: int,
        identify: Sequence[str] = (),
        casts: Sequence[Cast] = (),
        maxima: Sequence[str] = (),
    ) -> Evaluation:
        """`rules` of `schema` evaluated on this table; `lf` reads the same rows (projected
        into SQL) for the rules that fall back to polars. With `casts`, `lf` is the polars
        cast frame (`Casts.frame`) and `rules` hold the casts' rules: each cast with an exact
        SQL form is made in the database; the others, and the rules that read their columns,
        fall back. The largest value of each column of `maxima` is found with the counts."""
        dtypes = lf.collect_schema()
        binary = self.dialect.binary_collation
        # A cast compares values too (an `Enum` cast is an `IN`): the column's facts decide.
        declined = {c.column: self.facts.declined([c.column], dtypes, binary) for c in casts}
        in_sql = {
            column: cast
            for column, cast in compile_casts(casts, self.dialect).items()
            if declined[column] is None
        }
        skip = {c.column for c in casts} - set(in_sql)
        compiled = compile_rules(schema, rules, dtypes, self.dialect, skip=skip, facts=self.facts)
        for cast in casts:
            if cast.column in in_sql:
                compiled.conditions[cast.rule.name] = in_sql[cast.column].unchanged()
                compiled.fallbacks.pop(cast.rule.name, None)
            else:
                reason = declined[cast.column] or "the cast has no exact SQL form"
                compiled.fallbacks[cast.rule.name] = reason
        table = (
            replace(self, relation=cast_relation(self.relation, dtypes, casts, in_sql))
            if casts
            else self
        )
        evaluation = table._evaluate(
            lf,
            dtypes,
            rules,
            compiled,
            max_failure_samples,
            identify,
            pushable(maxima, dtypes, skip),
        )
        missing = [column for column in maxima if column not in evaluation.maxima]
        return replace(evaluation, maxima={**evaluation.maxima, **in_polars(lf, missing)})

    def _evaluate(
        self,
        lf: pl.LazyFrame,
        dtypes: pl.Schema,
        rules: Sequence[Rule],
        plan: Compiled,
        max_failure_samples: int,
        identify: Sequence[str],
        maxima: Sequence[str] = (),
    ) -> Evaluation:
        compiled = plan.conditions
        for name, reason in plan.fallbacks.items():
            self.log(f"Rule {name!r} runs in polars, not {self.dialect.name}: {reason}.")
        pushed = [rule for rule in rules if rule.name in compiled]
        by_row = [rule for rule in pushed if rule.distinct_over is None]
        keys = next((rule.distinct_over for rule in pushed if rule.distinct_over), None)
        counts = self.counted(self.counts(by_row, compiled, maxima), keys, max_failure_samples)
        row_count = int(counts[0])
        found = dict(zip(maxima, counts[1 + len(by_row) :], strict=True))
        largest = agreeing(found, dtypes, self.log)
        # A key rule: one grouping counts its rows and brings back the keys its sample shows.
        heads = {
            rule.name: self.repeated_head(rule.distinct_over, max_failure_samples)
            for rule in pushed
            if rule.distinct_over is not None
        }
        counted = {
            rule.name: int(count or 0)
            for rule, count in zip(by_row, counts[1 : 1 + len(by_row)], strict=True)
        }
        counted |= {name: head.failed for name, head in heads.items()}
        failed = {rule.name: counted[rule.name] for rule in pushed}  # in rule order
        samples: dict[str, pl.DataFrame] = {}
        if max_failure_samples:
            for rule in (rule for rule in pushed if failed[rule.name]):
                shown = _explaining(rule, identify, dtypes)
                if rule.name in heads:
                    samples[rule.name] = self.key_sample(
                        rule, heads[rule.name], shown, max_failure_samples, dtypes
                    )
                    continue
                query = self.sample(compiled[rule.name], shown, max_failure_samples)
                samples[rule.name] = self.run(self.sql(query))
        engines = plan.engines(self.dialect)
        rest = [rule for rule in rules if rule.name not in compiled]
        if not rest:
            return Evaluation(row_count, failed, samples, engines=engines, maxima=largest)
        fallback = evaluate(
            _projected(lf, rest, identify),
            rest,
            max_failure_samples=max_failure_samples,
            identify=identify,
        )
        return Evaluation(
            row_count=row_count,
            failed={**failed, **fallback.failed},
            samples={**samples, **fallback.samples},
            engines={**dict.fromkeys(fallback.failed, POLARS), **engines},
            failed_table=fallback.failed_table,
            maxima=largest,
        )

    def sql(self, query: exp.Expr) -> str:
        return query.sql(dialect=self.dialect.name)

    def rows(self) -> exp.Subquery:
        """The table's rows as a subquery of its own, once per use (a CTE DuckDB would
        materialize: the whole table)."""
        return self.relation.copy().subquery(_quoted(_TABLE))

    def counts(
        self, rules: Sequence[Rule], compiled: Mapping[str, exp.Expr], maxima: Sequence[str] = ()
    ) -> exp.Select:
        """One scan: the row count, per rule (a row predicate) its failing rows, then the
        largest value of each column of `maxima`."""
        columns: list[exp.Expr] = [exp.alias_(exp.Count(this=exp.Star()), _ROWS)]
        for index, rule in enumerate(rules):
            if rule.distinct_over is not None:  # its condition is TRUE: it would count 0
                raise ValueError(f"Rule {rule.name!r} is counted by `repeated_head`.")
            failing = exp.not_(exp.paren(compiled[rule.name]))
            columns.append(exp.alias_(self.dialect.count_where(failing), f"__dy_r{index}"))
        return exp.select(*columns, *aggregates(maxima)).from_(self.rows())

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
        rows = found.select(found.columns[width:]).filter(pl.col(COUNT).is_not_null())
        self._repeated[tuple(keys)] = RepeatedHead(rows, bound)
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
        (`__dy_count`) and the rows of all repeated keys (`__dy_failed`, a window over every
        repeated key, summed before the limit)."""
        key_columns = [exp.column(key, quoted=True) for key in keys]
        total = exp.Window(this=exp.Sum(this=exp.column(COUNT, quoted=True)))
        return (
            exp.select(
                *key_columns,
                exp.column(COUNT, quoted=True),
                exp.alias_(total, FAILED, quoted=True),
            )
            .from_(self.repeated(keys).subquery("repeated"))
            .order_by(*(exp.column(key, quoted=True) for key in keys))
            .limit(bound)
        )

    def counts_with_head(self, counts: exp.Select, keys: Sequence[str], bound: int) -> exp.Select:
        """`counts`' row joined to each row of `head_query(keys, bound)`, in key order."""
        head = self.head_query(keys, bound).subquery(_quoted(_HEAD))
        return (
            exp.select(exp.Star())
            .from_(counts.subquery(_quoted("__dy_counts")))
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
            self._repeated[tuple(keys)] = RepeatedHead(found, bound)
        return self._repeated[tuple(keys)]

    def repeated_keys(self, keys: Sequence[str]) -> pl.DataFrame:
        """Every repeated key with how often it occurs (`__dy_count`): `repeated_head`'s
        where it holds them all, else the rows of `repeated(keys)`."""
        head = self.repeated_head(keys)
        if head.complete:
            return head.keys(keys)
        return self.run(self.sql(self.repeated(keys)))

    def sample(self, condition: exp.Expr, shown: Sequence[str], limit: int) -> exp.Select:
        """Up to `limit` rows failing a rule's `condition`, its explaining columns."""
        columns = [exp.column(name, table=_TABLE, quoted=True) for name in shown]
        failing = exp.not_(exp.paren(condition))
        return exp.select(*columns).from_(self.rows()).where(failing).limit(limit)

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
        columns = [exp.column(name, table=_TABLE, quoted=True) for name in shown]
        order = [exp.column(key, table=_TABLE, quoted=True) for key in keys]
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
        same_key = exp.and_(
            *(
                exp.NullSafeEQ(
                    this=exp.column(key, table=_TABLE, quoted=True),
                    expression=exp.column(key, table=_KEYS, quoted=True),
                )
                for key in keys
            )
        )
        return (
            exp.select(*columns)
            .from_(self.rows())
            .join(smallest.subquery(_quoted(_KEYS)), on=same_key)
            .order_by(*order)
            .limit(limit)
        )


def _bound(shown: int) -> int:
    """How many repeated keys a head fetches: enough to show `shown` rows, and one more
    than `LISTED_ROWS`, so that fewer coming back says they are all of them."""
    return max(LISTED_ROWS, shown) + 1


def _quoted(alias: str) -> exp.Identifier:
    """A table alias the queries name quoted, so a database that folds unquoted names
    (Snowflake to upper case) finds `"__dy_table"."id"` under the alias it was given."""
    return exp.to_identifier(alias, quoted=True)


@dataclass(frozen=True)
class Compiled:
    """A set of rules compiled for one table: the SQL condition of each rule with an exact
    SQL form, and why each other rule falls back to polars."""

    conditions: dict[str, exp.Expr]
    fallbacks: dict[str, str]

    def engines(self, dialect: Dialect) -> dict[str, str]:
        """Rule name -> where it runs: the dialect, or `polars (reason)`."""
        return dict.fromkeys(self.conditions, dialect.name) | {
            name: fallback_engine(reason) for name, reason in self.fallbacks.items()
        }


def compile_rules(
    schema: type[dy.Schema],
    rules: Sequence[Rule],
    dtypes: Mapping[str, pl.DataType],
    dialect: Dialect,
    *,
    skip: Collection[str] = (),
    facts: TableFacts | None = None,
) -> Compiled:
    """Each rule of `rules` compiled for `dialect`: a row predicate, or for a
    `unique`/primary-key rule `TRUE` (counted by grouping), where its SQL provably means its
    polars expression; else its reason to fall back to polars, as for every rule that reads
    a column of `skip` (one the database does not hold as polars does) or one whose `facts`
    (type, collation) make its SQL compare otherwise."""
    conditions: dict[str, exp.Expr] = {}
    fallbacks: dict[str, str] = {}
    for rule in rules:
        try:
            conditions[rule.name] = _compile(schema, rule, dtypes, dialect, skip, facts)
        except NotExact as declined:
            fallbacks[rule.name] = declined.reason
    return Compiled(conditions, fallbacks)


def _compile(
    schema: type[dy.Schema],
    rule: Rule,
    dtypes: Mapping[str, pl.DataType],
    dialect: Dialect,
    skip: Collection[str],
    facts: TableFacts | None,
) -> exp.Expr:
    if skip:
        read = _reads(rule)
        if read is None or any(name in skip for name in read):
            raise NotExact("reads a column cast in polars")
    known = facts or TableFacts()
    if rule.distinct_over is not None:
        if not groupable(rule, dtypes):
            raise NotExact("key dtype groups differently in SQL")
        known.prove(rule.distinct_over, dtypes, dialect.binary_collation)
        return exp.true()
    condition = predicate(schema, rule, dtypes, dialect)
    if condition is None:
        raise NotExact(NO_SQL_FORM)
    known.prove(compared(condition), dtypes, dialect.binary_collation)
    return condition


def _projected(lf: pl.LazyFrame, rules: Sequence[Rule], identify: Sequence[str]) -> pl.LazyFrame:
    """`lf` with only the columns `rules` read and `identify` (pushed into the source's SQL),
    or all of it when a rule's columns cannot be read off its expression."""
    wanted: list[str] = [*identify]
    for rule in rules:
        read = _reads(rule)
        if read is None:
            return lf
        wanted += read
    return lf.select(list(dict.fromkeys(wanted)))


def _reads(rule: Rule) -> list[str] | None:
    """The columns `rule` reads; None when they cannot be read off its expression."""
    try:
        read = rule.expr.meta.root_names()
    except pl.exceptions.PolarsError:
        return None
    return [*read, *(rule.distinct_over or ()), *([rule.column] if rule.column else [])]
