"""Failing rows kept: the shape of a run's failing rows, and how polars selects them.

A kept row is a row of the checked table that fails at least one rule: the schema's columns,
then one Boolean column per rule of the schema named by its check name (`dy_rule__amount__min`,
as in the quarantine; `true` where the row fails the rule, `false` where it passes, `null`
for a rule the run did not evaluate), then the checked asset's key, the run id and the row's
partition key. Every rule has its column, failing or not, so every run writes the same shape to
the same table or files. The asset key marks the rows as the package's and as that asset's:
a run replaces only its own asset's rows of the partitions it checked (`ownership` tells a
table the package made from one it must leave alone).
The SQL backend selects the same rows inside the database (`sql.failing_rows`); this module
selects them in polars, for files and for rules that fell back to polars.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import polars as pl

from .catalogue import Rule
from .evaluate import Evaluation
from .key_hashes import hashable, repeated_hashes, with_hashes
from .naming import RESERVED_PREFIX

if TYPE_CHECKING:  # sqlglot is imported only when a member is pushed down
    from sqlglot import exp

    from .sql.filters import KeyMatch, MemberRows
    from .sql.staging import Session

#: The column holding the key of the checked asset (`a/orders`): whose rows these are.
ASSET_KEY = "dy_asset_key"
#: The column holding the Dagster run id of the run that kept the row.
RUN_ID = "dy_run_id"
#: The column holding the row's partition key (null: an unpartitioned asset).
PARTITION_KEY = "dy_partition_key"
#: How the flag columns' names start: a rule's check name, a collection filter's.
FLAG_PREFIXES = ("dy_rule__", "dy_filter__")
_REPEATED = "__dy_repeated"
_ROWS = "__dy_rows"
#: A cap polars' `head` cannot take (its row index is 32 bits): as many rows as a frame holds.
_NO_CAP = (1 << 32) - 1


class UntoldPartitions(ValueError):
    """A run over several partitions cannot tell each failing row's: `Stamp.untold` says why."""


@dataclass(frozen=True)
class RowKey:
    """Each row's own partition key, for a run over several partitions: in polars and in
    SQL (None where that side cannot tell it, e.g. a SQL `partition_expr` in polars)."""

    polars: pl.Expr | None
    sql: exp.Expr | None


@dataclass(frozen=True)
class Stamp:
    """What identifies one run's rows: the checked asset, the run, and the partitions it
    checked (none: an unpartitioned asset); over several, `row_key` gives each row's."""

    asset_key: str
    run_id: str
    partitions: tuple[str, ...] = ()
    row_key: RowKey | None = None

    @property
    def partition_key(self) -> str | None:
        """The one partition the run checked (None: unpartitioned, or several)."""
        return self.partitions[0] if len(self.partitions) == 1 else None

    def polars_key(self) -> pl.Expr:
        """The rows' partition key in polars; `ValueError` where a range's cannot be told."""
        if len(self.partitions) < 2:
            return pl.lit(self.partition_key, dtype=pl.String)
        if self.row_key is None or self.row_key.polars is None:
            raise UntoldPartitions(self.untold)
        return self.row_key.polars

    @property
    def untold(self) -> str:
        """Why a run over several partitions cannot keep its rows, and the fix."""
        return (
            f"the run checked {len(self.partitions)} partitions ({self.partitions[0]} to "
            f"{self.partitions[-1]}) and cannot tell which of them each failing row belongs "
            "to: give partition_expr as a column of the table, or check one partition per run"
        )


@dataclass(frozen=True)
class Removed:
    """A collection member's valid rows that its filters removed, to keep: `filters` (the
    records that ran on it; in polars, each with the expression the evaluator counts, true
    where the row is kept), `evaluation` (what they found), and the rows: `valid` (polars),
    or in the database the member's `rows` with each filter's condition `matches` on the
    common primary `key`, read through the `session` that staged them."""

    filters: Sequence[Rule]
    evaluation: Evaluation
    valid: pl.LazyFrame | None = None
    rows: MemberRows | None = None
    matches: Mapping[str, KeyMatch] = field(default_factory=dict)
    key: Sequence[str] = ()
    session: Session | None = None

    def passed(self, catalogue: Sequence[Rule]) -> Evaluation:
        """`evaluation` as the kept rows see it: they pass every rule of `catalogue` that is
        not one of `filters` (the member's rules: the rows are valid)."""
        ran = {rule.name for rule in self.filters}
        failed = {name: n for name, n in self.evaluation.failed.items() if name in ran}
        rules = {rule.name: 0 for rule in catalogue if rule.name not in ran}
        return Evaluation(self.evaluation.row_count, {**rules, **failed}, {})


def flag_columns(catalogue: Sequence[Rule]) -> list[str]:
    """The Boolean columns of a kept row, in catalogue order."""
    return list(dict.fromkeys(rule.check_name for rule in catalogue))


def kept_columns(columns: Sequence[str], catalogue: Sequence[Rule]) -> dict[str, pl.DataType]:
    """The columns a kept row adds to the checked row's `columns`, with their dtypes."""
    added: dict[str, pl.DataType] = dict.fromkeys(flag_columns(catalogue), pl.Boolean())
    return added | {ASSET_KEY: pl.String(), RUN_ID: pl.String(), PARTITION_KEY: pl.String()}


def ownership(columns: Collection[str]) -> Literal["kept", "unmarked"] | None:
    """Whose table has `columns`: the package's ("kept"), the package's from before the rows
    carried their asset key ("unmarked": the same layout without `ASSET_KEY`), or not the
    package's (None), which it never changes. The package made it if it has the run id and
    partition key columns and every other `dy_` column is a flag: schemas may not have
    `dy_` columns, so a table of the user's cannot look so."""
    names = set(columns)
    if not {RUN_ID, PARTITION_KEY} <= names:
        return None
    stamps = {ASSET_KEY, RUN_ID, PARTITION_KEY}
    if any(
        name.startswith(RESERVED_PREFIX)
        and name not in stamps
        and not name.startswith(FLAG_PREFIXES)
        for name in names
    ):
        return None
    return "kept" if ASSET_KEY in names else "unmarked"


def failing_rules(rules: Sequence[Rule], evaluation: Evaluation) -> list[Rule]:
    """The rules of `rules` that failed on at least one row."""
    return [rule for rule in rules if evaluation.failed.get(rule.name)]


def failing_frame(
    lf: pl.LazyFrame,
    columns: Sequence[str],
    catalogue: Sequence[Rule],
    evaluation: Evaluation,
    stamp: Stamp,
    cap: int,
) -> pl.LazyFrame:
    """The first `cap` rows of `lf` failing a rule of `evaluation`, in the kept shape.

    A row rule's flag is its expression (null passes, as `Schema.filter` has it); a `unique`
    or primary-key rule flags the rows whose key repeats (`repeated_keys`: memory in the
    rows, as its count). The frame is lazy: a sink streams it.
    """
    failing = failing_rules(catalogue, evaluation)
    frame = lf
    flags: dict[str, pl.Expr] = {}
    for rule in failing:
        if rule.distinct_over is None:
            flags[rule.check_name] = ~rule.expr.fill_null(True)
            continue
        marker = f"{_REPEATED}_{len(flags)}"
        repeated = repeated_keys(lf, rule).with_columns(pl.lit(True).alias(marker))
        frame = frame.join(repeated, on=list(rule.distinct_over), how="left", nulls_equal=True)
        flags[rule.check_name] = pl.col(marker).fill_null(False)
    selected: list[pl.Expr] = [pl.col(name) for name in columns]
    for rule in catalogue:
        if rule.check_name in flags:
            expr = flags[rule.check_name]
        elif rule.name in evaluation.failed:
            expr = pl.lit(False)
        else:
            expr = pl.lit(None, dtype=pl.Boolean)
        selected.append(expr.alias(rule.check_name))
    key = stamp.polars_key() if failing else pl.lit(None, dtype=pl.String)
    selected += [
        pl.lit(stamp.asset_key, dtype=pl.String).alias(ASSET_KEY),
        pl.lit(stamp.run_id, dtype=pl.String).alias(RUN_ID),
        key.alias(PARTITION_KEY),
    ]
    shaped = frame.select(list({e.meta.output_name(): e for e in selected}.values()))
    if not failing:
        return shaped.head(0)
    kept = shaped.filter(pl.any_horizontal(*(pl.col(r.check_name) for r in failing)))
    return kept if cap >= _NO_CAP else kept.head(cap)


def repeated_keys(lf: pl.LazyFrame, rule: Rule) -> pl.LazyFrame:
    """The keys of a failed `unique`/primary-key rule that more than one row holds, collected.
    As the evaluator counts them: only rows whose key hash repeats are grouped, so memory
    grows with the rows (8 bytes each), not with the distinct keys."""
    keys = rule.distinct_over or ()
    if hashable(lf.collect_schema(), keys):
        hashes = repeated_hashes(lf, keys).collect(engine="streaming")
        lf = with_hashes(lf, rule, hashes)
    repeated = lf.group_by(list(keys)).agg(pl.len().alias(_ROWS)).filter(pl.col(_ROWS) > 1)
    return repeated.drop(_ROWS).collect(engine="streaming").lazy()
