"""The split of a validated frame: the rows written to the table, the rows held back.

Written: the valid rows, then the rows failing only `"warn"` rules, in the schema's columns.
Held back (the quarantine's rows): the rows failing an `"error"` rule, with one Boolean column
per failing rule. Only the rules that failed somewhere are looked at again.

An eager frame is split in memory (`split_eagerly`). A `LazyFrame` is split as plans
(`split_lazily`): the two sides stay lazy, for the IO managers to stream with sinks, and the
counts come from one streaming aggregation over the rules' flags, whose state is one row per
combination of failing rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from .._engine.catalogue import Rule
from .._engine.evaluate import rule_columns

_ROWS = "rows"


@dataclass(frozen=True)
class Split:
    #: valid rows, then rows failing only `"warn"` rules; the schema's columns
    written: pl.DataFrame | pl.LazyFrame
    #: rows failing an `"error"` rule, with a Boolean column per failing rule
    invalid: pl.DataFrame | pl.LazyFrame
    written_rows: int
    invalid_rows: int
    #: the flags of the failing rules, one row per combination, its row count in `rows`
    combinations: pl.DataFrame


def split_eagerly(rows: pl.DataFrame, failing: Sequence[Rule]) -> Split:
    """Split `rows` in memory; an all-valid frame is not copied."""
    if not failing:
        return Split(rows, rows.clear(), rows.height, 0, pl.DataFrame({_ROWS: []}))
    flags = rule_columns(rows.lazy(), failing).collect()
    error_free, warn_free = _verdicts(failing)
    columns = rows.columns
    valid = flags.filter(error_free & warn_free).select(columns)
    warned = flags.filter(error_free & ~warn_free).select(columns)
    written = pl.concat([valid, warned]) if warned.height else valid
    invalid = flags.filter(~error_free)
    combinations = invalid.group_by([r.check_name for r in failing]).agg(pl.len().alias(_ROWS))
    return Split(written, invalid, written.height, invalid.height, combinations)


def split_lazily(rows: pl.LazyFrame, row_count: int, failing: Sequence[Rule]) -> Split:
    """Split the plan `rows` (of `row_count` rows) without collecting it: the sides are plans
    over `rows`, each to be run once by a sink; the counts and the combinations of rules come
    from one streaming pass (none when no rule failed)."""
    if not failing:
        return Split(rows, rows.limit(0), row_count, 0, pl.DataFrame({_ROWS: []}))
    flags = rule_columns(rows, failing)
    names = [rule.check_name for rule in failing]
    error_free, warn_free = _verdicts(failing)
    every = flags.group_by(names).agg(pl.len().alias(_ROWS)).collect(engine="streaming")
    held = every.filter(~error_free)
    warned = every.filter(error_free & ~warn_free)[_ROWS].sum()
    columns = rows.collect_schema().names()
    valid = flags.filter(error_free & warn_free).select(columns)
    written = (
        pl.concat([valid, flags.filter(error_free & ~warn_free).select(columns)])
        if warned
        else valid
    )
    invalid_rows = int(held[_ROWS].sum())
    return Split(written, flags.filter(~error_free), row_count - invalid_rows, invalid_rows, held)


def by_rules(combinations: pl.DataFrame, failing: Sequence[Rule]) -> pl.DataFrame:
    """Which rules the invalid rows broke together: one row per combination with its row
    count, biggest first, ties in the order of the rule names."""
    broken = [
        (", ".join(r.name for r in failing if group[r.check_name] is False), group[_ROWS])
        for group in combinations.iter_rows(named=True)
    ]
    frame = pl.DataFrame(broken, schema={"rules": pl.String, "rows": pl.Int64}, orient="row")
    return frame.sort(["rows", "rules"], descending=[True, False])


def _verdicts(failing: Sequence[Rule]) -> tuple[pl.Expr, pl.Expr]:
    """Whether a row passed every failing `"error"` rule, and every failing `"warn"` rule."""
    return (
        _all([r.check_name for r in failing if r.severity == "error"]),
        _all([r.check_name for r in failing if r.severity == "warn"]),
    )


def _all(names: list[str]) -> pl.Expr:
    return pl.all_horizontal(names) if names else pl.lit(True)
