"""A collection's filters counted in the database, as `Collection.filter` counts them.

`Collection.filter` splits each member by its schema, hands the valid rows to every filter,
and removes from each member (not `ignored_in_filters`) the valid rows whose common primary
key the filter does not return: an inner join, so a null key is never kept. A member declared
`propagate_row_failures` removes the valid rows elsewhere whose key one of its failing rows
holds (a null key matches none). Here each member's valid rows are a SQL relation (its rules
that failed a row, as predicates, and its repeated keys), a filter's kept keys the translated
plan over those relations (`plans`), and on each member one query counts every filter's
removed rows (a left join to each filter's distinct keys, so a key kept twice still keeps
one row), then bounded queries sample them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import polars as pl
from sqlglot import exp

from ..catalogue import Rule
from ..evaluate import Evaluation, _explaining
from .backend import SQLTable, compile_rules
from .plans import Relation, equal, keys_equal
from .repeated import LISTED_ROWS, held, listed
from .staging import Session

_MEMBER = "__dy_member"
_REPEATED = "__dy_repeated"
_ROW = "__dy_row"
_OTHER = "__dy_other"
_ROWS = "__dy_rows"
_HIT = "__dy_hit"
_LISTED_ROWS = LISTED_ROWS


@dataclass(frozen=True)
class MemberRows:
    """A member's table in SQL and the condition its valid rows meet (None: every row)."""

    table: SQLTable
    dtypes: Mapping[str, pl.DataType]
    condition: exp.Expr | None

    def valid(self) -> Relation:
        """The rows that pass every rule of the member's schema, its columns only."""
        return Relation(self._select(self.condition), self.dtypes)

    def invalid(self) -> Relation:
        """The rows that fail a rule of the member's schema."""
        failing = exp.false() if self.condition is None else exp.not_(exp.paren(self.condition))
        return Relation(self._select(failing), self.dtypes)

    def _select(self, condition: exp.Expr | None) -> exp.Select:
        select = exp.select(*(exp.column(name, table=_MEMBER, quoted=True) for name in self.dtypes))
        select = select.from_(self.table.relation.copy().subquery(_MEMBER))
        return select if condition is None else select.where(condition)


def member_rows(
    table: SQLTable,
    rules: Sequence[Rule],
    failed: Mapping[str, int],
    dtypes: Mapping[str, pl.DataType],
) -> MemberRows | None:
    """The member's rows split by its `rules` that `failed` a row, or None when
    one of those has no exact SQL form (the filters reading the member then run in polars).
    `dtypes`: the schema's columns as the table holds them."""
    if table.facts.declined(None, dtypes, table.dialect.binary_collation) is not None:
        return None  # a column compares otherwise in SQL: keys and joins would too
    failing = [rule for rule in rules if failed.get(rule.name)]
    compiled = compile_rules(failing, dtypes, table.dialect, facts=table.facts).conditions
    if any(rule.name not in compiled for rule in failing):
        return None
    passes: list[exp.Expr] = []
    for rule in failing:
        if rule.distinct_over is None:
            # A rule passes a row where its predicate is null, as in `Schema.filter`.
            passes.append(
                exp.Coalesce(this=exp.paren(compiled[rule.name]), expressions=[exp.true()])
            )
        else:
            passes.append(_unrepeated(table, list(rule.distinct_over), failed[rule.name], dtypes))
    return MemberRows(table, dict(dtypes), exp.and_(*passes) if passes else None)


def _unrepeated(
    table: SQLTable, keys: list[str], failed: int, dtypes: Mapping[str, pl.DataType]
) -> exp.Expr:
    """On a row of the member: its `keys` are not held by another row. A few repeated keys
    (as `failed` rows tell) are listed (`repeated`), so the filters' queries, which read the
    valid rows several times, do not group the table each time; else a subquery."""
    found = table.repeated_keys(keys) if failed <= _LISTED_ROWS else None
    keys_listed = None if found is None else listed(found, keys, dtypes, table.dialect.name)
    if keys_listed is not None:
        columns = [exp.column(name, table=_MEMBER, quoted=True) for name in keys]
        return exp.Coalesce(
            this=exp.not_(exp.paren(held(columns, keys_listed))), expressions=[exp.true()]
        )
    same = keys_equal(_REPEATED, _MEMBER, keys, table.dialect.same)
    repeated = exp.select(exp.Literal.number(1)).from_(table.repeated(keys).subquery(_REPEATED))
    return exp.not_(exp.Exists(this=repeated.where(same)))


@dataclass(frozen=True)
class KeyMatch:
    """A filter's condition on a member's rows: its key among the key columns of `keys`
    keeps the row (a filter's kept keys, `kept`) or removes it (a propagating member's
    failing rows, `kept=False`). `staged`: `keys` is a temporary table holding each non-null
    key once, read by a membership test (hashed on the keys, not on the member's rows);
    else the member's rows are left-joined to the keys' distinct values."""

    keys: exp.Select
    kept: bool
    staged: bool = False

    def joined(self, key: Sequence[str], alias: str) -> exp.Subquery | None:
        """The distinct keys, each marked `__dy_hit`, to left-join a member's rows on (None:
        staged keys are tested, not joined)."""
        if self.staged:
            return None
        columns = [exp.column(name, table=_OTHER, quoted=True) for name in key]
        select = exp.select(*columns, exp.alias_(exp.true(), _HIT)).distinct()
        return select.from_(self.keys.copy().subquery(_OTHER)).subquery(alias)

    def staged_in(self, key: Sequence[str], session: Session) -> KeyMatch:
        """This condition with its distinct non-null `key` columns worked out once, as a
        temporary table of `session` (itself where the database refuses one). A key with a
        null part matches no row (an inner join's equality), so it is left out."""
        columns = [exp.column(name, table=_OTHER, quoted=True) for name in key]
        select = exp.select(*columns).distinct().from_(self.keys.copy().subquery(_OTHER))
        select = select.where(
            exp.and_(*(exp.not_(exp.Is(this=c, expression=exp.Null())) for c in columns))
        )
        staged = session.stage(select)
        return self if staged is select else KeyMatch(staged, self.kept, staged=True)

    def removes(self, key: Sequence[str], alias: str) -> exp.Expr:
        """On the member's (joined) row: the filter removes it."""
        if self.staged:
            row = [exp.column(name, table=_ROW, quoted=True) for name in key]
            columns = [exp.column(name, quoted=True) for name in key]
            test = exp.In(
                this=row[0] if len(row) == 1 else exp.Tuple(expressions=row),
                query=exp.select(*columns).from_(self.keys.copy().subquery(alias)).subquery(),
            )
            # A key with a null part is in no set: the test is null, the key not held.
            held: exp.Expr = exp.Coalesce(this=test, expressions=[exp.false()])
        else:
            held = exp.not_(exp.Is(this=exp.column(_HIT, table=alias), expression=exp.Null()))
        return exp.not_(held) if self.kept else held


def kept(relation: Relation) -> KeyMatch:
    """A filter whose kept keys are `relation`."""
    return KeyMatch(relation.select, kept=True)


def not_dropped(failing: MemberRows) -> KeyMatch:
    """A propagating member `failing`: its failing rows remove their key elsewhere."""
    return KeyMatch(failing.invalid().select, kept=False)


def evaluate_filters(
    target: MemberRows,
    rules: Sequence[Rule],
    matches: Mapping[str, KeyMatch],
    *,
    max_failure_samples: int,
    identify: Sequence[str],
    key: Sequence[str],
    run: Callable[[str], pl.DataFrame] | None = None,
) -> Evaluation:
    """Each of `rules` (a filter's record, its condition `matches[rule.name]`) counted on
    the valid rows of `target` in one query, each tested against every filter's staged keys
    or joined to their distinct values (so no row is repeated); the removed rows of each
    failing one sampled. `run`:
    the session that staged `matches` (default: the table's own queries)."""
    table = target.table
    run = run or table.run
    aliases = [f"__dy_keys_{index}" for index in range(len(rules))]

    def joined(select: exp.Select, pairs: Sequence[tuple[Rule, str]]) -> exp.Select:
        return _joined(select, target, matches, key, pairs)

    shown = {
        rule.name: _explaining(replace(rule, expr=pl.struct(list(key))), identify, target.dtypes)
        for rule in rules
    }
    # Where the database has a bounded "n smallest" aggregate, the samples ride along.
    along = {
        rule.name: table.dialect.smallest(
            exp.Struct(
                expressions=[
                    exp.PropertyEQ(
                        this=exp.to_identifier(name, quoted=True),
                        expression=exp.column(name, table=_ROW, quoted=True),
                    )
                    for name in shown[rule.name]
                ]
            ),
            max_failure_samples,
        )
        for rule in rules
        if max_failure_samples
    }
    sampled = [
        (rule, alias, along[rule.name])
        for rule, alias in zip(rules, aliases, strict=True)
        if along.get(rule.name) is not None
    ]
    counts = joined(
        exp.select(
            exp.alias_(exp.Count(this=exp.Star()), _ROWS),
            *(
                exp.alias_(table.dialect.count_where(matches[rule.name].removes(key, alias)), alias)
                for rule, alias in zip(rules, aliases, strict=True)
            ),
            *(
                exp.alias_(
                    exp.Filter(
                        this=smallest,
                        expression=exp.Where(this=matches[rule.name].removes(key, alias)),
                    ),
                    f"{alias}_sample",
                )
                for rule, alias, smallest in sampled
            ),
        ),
        list(zip(rules, aliases, strict=True)),
    )
    result = run(table.sql(counts))
    found = result.row(0)
    failed = {
        rule.name: int(n or 0) for rule, n in zip(rules, found[1 : 1 + len(rules)], strict=True)
    }
    samples: dict[str, pl.DataFrame] = {}
    for rule, alias, _ in sampled:
        if failed[rule.name]:
            samples[rule.name] = result[f"{alias}_sample"].explode().struct.unnest()
    for rule, alias in zip(rules, aliases, strict=True):
        if not (max_failure_samples and failed[rule.name]) or rule.name in samples:
            continue
        query = joined(
            exp.select(*(exp.column(name, table=_ROW, quoted=True) for name in shown[rule.name])),
            [(rule, alias)],
        )
        query = query.where(matches[rule.name].removes(key, alias)).limit(max_failure_samples)
        samples[rule.name] = run(table.sql(query))
    return Evaluation(
        row_count=int(found[0]),
        failed=failed,
        samples=samples,
        engines=dict.fromkeys(failed, table.dialect.name),
    )


def removed_rows(
    target: MemberRows, rules: Sequence[Rule], matches: Mapping[str, KeyMatch], key: Sequence[str]
) -> exp.Select:
    """The valid rows of `target`, each with one Boolean per rule of `rules` (a filter's
    record, its condition `matches[rule.name]`) named by its check name: true where that
    filter removes the row. The failing rows a collection keeps, before their shape."""
    aliases = [f"__dy_keys_{index}" for index in range(len(rules))]
    select = exp.select(
        *(exp.column(name, table=_ROW, quoted=True) for name in target.dtypes),
        *(
            exp.alias_(matches[rule.name].removes(key, alias), rule.check_name, quoted=True)
            for rule, alias in zip(rules, aliases, strict=True)
        ),
    )
    return _joined(select, target, matches, key, list(zip(rules, aliases, strict=True)))


def _joined(
    select: exp.Select,
    target: MemberRows,
    matches: Mapping[str, KeyMatch],
    key: Sequence[str],
    pairs: Sequence[tuple[Rule, str]],
) -> exp.Select:
    """`select` from the valid rows of `target`, left-joined to the keys of each filter of
    `pairs` (rule, alias) whose keys are not staged."""
    select = select.from_(target.valid().select.subquery(_ROW))
    for rule, alias in pairs:
        keys = matches[rule.name].joined(key, alias)
        if keys is not None:
            on = keys_equal(alias, _ROW, key, equal)
            select = select.join(keys, on=on, join_type="left")
    return select
