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

import polars as pl
from sqlglot import exp

from ..catalogue import Rule
from ..evaluate import POLARS, Evaluation, _explaining, evaluate
from ..read_dtypes import Cast
from .casts import cast_relation, compile_casts
from .columns import TableFacts, compared
from .dialects import DIALECTS, Dialect
from .exactness import KEYS_IN_POLARS, NO_SQL_FORM, NotExact, fallback_engine
from .maxima import aggregates, agreeing, in_polars, pushable
from .repeated import TABLE, KeyQueries, RepeatedHead, quoted
from .rules import groupable, predicate
from .samples import Sampled, fetched
from .staging import Session

_ROWS = "__dy_rows"


@dataclass(frozen=True)
class SQLTable(KeyQueries):
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
        lf: pl.LazyFrame,
        rules: Sequence[Rule],
        *,
        max_failure_samples: int,
        identify: Sequence[str] = (),
        casts: Sequence[Cast] = (),
        maxima: Sequence[str] = (),
    ) -> Evaluation:
        """`rules` evaluated on this table; `lf` reads the same rows (projected
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
        compiled = compile_rules(rules, dtypes, self.dialect, skip=skip, facts=self.facts)
        streamed_from, rows = self.dialect.keys_streamed_from, self.facts.rows
        if streamed_from is not None and (rows is None or rows >= streamed_from):
            _keys_in_polars(compiled, rules)
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
        sampled: dict[str, Sampled] = {}
        if max_failure_samples:
            for rule in (rule for rule in pushed if failed[rule.name]):
                shown = _explaining(rule, identify, dtypes)
                if rule.name in heads:
                    samples[rule.name] = self.key_sample(
                        rule, heads[rule.name], shown, max_failure_samples, dtypes
                    )
                    continue
                condition = compiled[rule.name]
                query = self.sample(condition, shown, max_failure_samples)
                sampled[rule.name] = Sampled(query, shown, condition, failed[rule.name])
        samples |= fetched(
            sampled,
            self.fetch,
            limit=max_failure_samples,
            union_by_name=self.dialect.union_by_name,
            flagged=self.flagged_sample if self.dialect.shared_samples else None,
            rows=row_count,
        )
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

    def fetch(self, query: exp.Expr) -> pl.DataFrame:
        """The rows of `query`, rendered for the dialect and run."""
        return self.run(self.sql(query))

    def rows(self) -> exp.Subquery:
        """The table's rows as a subquery of its own, once per use (a CTE DuckDB would
        materialize: the whole table)."""
        return self.relation.subquery(quoted(TABLE))  # a copy

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
        return exp.select(*columns, *aggregates(maxima)).from_(self.rows(), copy=False)

    def sample(self, condition: exp.Expr, shown: Sequence[str], limit: int) -> exp.Select:
        """Up to `limit` rows failing a rule's `condition`, its explaining columns."""
        columns = [exp.column(name, table=TABLE, quoted=True) for name in shown]
        failing = exp.not_(exp.paren(condition), copy=False)
        # Built in place (`copy=False`) from fresh nodes: a sample is sent per failing rule.
        query = exp.select(*columns).from_(self.rows(), copy=False).where(failing, copy=False)
        return query.limit(exp.Literal.number(limit), copy=False)

    def flagged_sample(
        self, conditions: Mapping[str, exp.Expr], shown: Sequence[str], limit: int
    ) -> exp.Select:
        """Up to `limit` rows failing any of `conditions` (flag column -> a rule's
        condition): their `shown` columns and, per rule, a flag: TRUE where the row fails
        it as `counts` counts it (`NOT (condition)` true), else FALSE, never NULL."""
        columns: list[exp.Expr] = [exp.column(name, table=TABLE, quoted=True) for name in shown]
        failing = [exp.not_(exp.paren(condition)) for condition in conditions.values()]
        for flag, fails in zip(conditions, failing, strict=True):
            exact = exp.Coalesce(this=fails.copy(), expressions=[exp.false()])
            columns.append(exp.alias_(exact, flag))
        query = exp.select(*columns).from_(self.rows(), copy=False)
        query = query.where(exp.or_(*failing, copy=False), copy=False)
        return query.limit(exp.Literal.number(limit), copy=False)


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
            conditions[rule.name] = _compile(rule, dtypes, dialect, skip, facts)
        except NotExact as declined:
            fallbacks[rule.name] = declined.reason
    return Compiled(conditions, fallbacks)


def _keys_in_polars(compiled: Compiled, rules: Sequence[Rule]) -> None:
    """Each key rule of `compiled` with an SQL form counted in polars instead: beside an
    embedded database a large table's key columns stream for less than the database's
    grouping of every key (`Dialect.keys_streamed_from`). Only the counts move; a
    collection's filters and the kept failing rows still read a key's SQL form
    (`compile_rules`), where the rows stay in the database."""
    for rule in rules:
        if rule.distinct_over is not None and rule.name in compiled.conditions:
            del compiled.conditions[rule.name]
            compiled.fallbacks[rule.name] = KEYS_IN_POLARS


def _compile(
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
    condition = predicate(rule, dtypes, dialect)
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
