"""The split of a validated frame: the rows written to the table, the rows held back.

Written: the valid rows, then the rows failing only `"warn"` rules, in the schema's columns.
Held back (the quarantine's rows): the rows failing an `"error"` rule, with one Boolean column
per failing rule. Only the rules that failed somewhere are looked at again.

An eager frame is split in memory (`split_eagerly`). A `LazyFrame` is split as plans
(`split_lazily`): the two sides stay lazy, for the IO managers to stream with sinks. Their
counts follow from the evaluator's per-rule counts when no `"error"` rule failed or one rule
failed alone; otherwise from one streaming aggregation over the failing rules' flags, whose
state is one row per combination of them. When they show no row failing an `"error"` rule,
the quarantine is an empty plan of its own, so its sink runs no part of the frame's plan
again. The statistics of the written rows come from the
counting pass, masked to the rows the table keeps (`written_statistics`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import polars as pl

from .._engine.catalogue import Rule
from .._engine.evaluate import Evaluation, rule_columns
from .._engine.statistics import described, statistics

_ROWS = "rows"
_PREFIX = 10_000  # rows of a plan a row sample is looked for in first


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
    #: a plan's valid rows, the first ones written, as the frame's rows and their predicate
    valid: tuple[pl.LazyFrame, pl.Expr] | None = None

    def head(self, n: int) -> pl.DataFrame:
        """The first `n` written rows. Of a plan, looked for first among the valid rows of a
        prefix of the frame, which are the first rows written when there are `n` of them: a
        head of the filtered plan costs polars' streaming engine several row groups (0.04 s
        of a 10M-row scan), a prefix one."""
        if isinstance(self.written, pl.DataFrame):
            return self.written.head(n)
        if self.valid is not None:
            rows, passed = self.valid
            found = rows.head(max(n, _PREFIX)).filter(passed).head(n).collect(engine="streaming")
            if found.height == n:
                return found
        return self.written.head(n).collect(engine="streaming")


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


def split_lazily(rows: pl.LazyFrame, evaluation: Evaluation, failing: Sequence[Rule]) -> Split:
    """Split the plan `rows`, which `evaluation` counted, without collecting it: the sides
    are plans over `rows`, each to be run once by a sink."""
    names = [rule.check_name for rule in failing]
    errors = [rule for rule in failing if rule.severity == "error"]
    if errors and len(failing) > 1:  # rows may break several rules: count the combinations
        flags = rule_columns(rows, failing)
        every = flags.group_by(names).agg(pl.len().alias(_ROWS)).collect(engine="streaming")
        error_free, warn_free = _verdicts(failing)
        held = every.filter(~error_free)
        warned = bool(every.filter(error_free & ~warn_free).height)
    else:  # none of the rows is held back, or those failing the one rule are
        held = pl.DataFrame(
            {**{name: [False] for name in names}, _ROWS: [evaluation.failed[errors[0].name]]}
            if errors
            else {**{name: [] for name in names}, _ROWS: []},
            schema={**dict.fromkeys(names, pl.Boolean), _ROWS: pl.UInt32},
        ).filter(pl.col(_ROWS) > 0)
        warned = not errors and any(evaluation.failed[rule.name] for rule in failing)
    invalid_rows = int(held[_ROWS].sum())
    written_rows = evaluation.row_count - invalid_rows
    # Held back nothing: a filter that keeps no row still runs a plan polars cannot prune
    # through (a running total on polars 1.x: a whole pass), an empty frame runs nothing.
    nothing = pl.LazyFrame(schema=rows.collect_schema())
    if not failing:
        return Split(rows, nothing, written_rows, 0, held)
    # The written rows are filtered by the rules' own expressions, not by flag columns: polars
    # pushes such a predicate into the scan, and the table's sink then costs about what a
    # plain sink of the scan does (flag columns cost the table's pass ~10% CPU and ~90 MB).
    error_passed, warn_passed = _passes(failing)
    valid = rows.filter(error_passed & warn_passed)
    written = pl.concat([valid, rows.filter(error_passed & ~warn_passed)]) if warned else valid
    # The quarantine's flags are computed before its filter: a rule over several rows (a key,
    # a group) must see every row, not only the held-back ones. The filter reads the rules'
    # expressions, not the flags: where every flag is row-wise, polars then pushes it into the
    # scan (0.05 s less CPU at 10M rows); a flag over several rows keeps it above them.
    invalid = rule_columns(rows, failing).filter(~error_passed) if invalid_rows else nothing
    return Split(
        written, invalid, written_rows, invalid_rows, held, (rows, error_passed & warn_passed)
    )


def kept_by_flags(catalogue: Sequence[Rule]) -> pl.Expr:
    """Over the evaluator's flag columns (`rule_columns` of the row-wise rules): whether a row
    passes every row-wise `"error"` rule, as the rows a written table keeps do. A `unique` or
    primary-key rule has no flag there, so the rows failing one are not told apart."""
    row_wise = [r for r in catalogue if r.distinct_over is None]
    return _all([r.check_name for r in row_wise if r.severity == "error"])


def kept_by_rules(failing: Sequence[Rule]) -> pl.Expr:
    """Over the rows themselves: whether a row passes every failing `"error"` rule (the
    rules' own expressions, a key's included), as the rows a written table keeps do."""
    return _passes(failing)[0]


def written_statistics(
    rows: pl.DataFrame | pl.LazyFrame,
    failing: Sequence[Rule],
    evaluation: Evaluation,
    identifiers: Sequence[str] = (),
) -> Callable[[], pl.DataFrame]:
    """The statistics of the rows the table is written with: those the counting pass found
    over `rows` masked to the rows passing every row-wise `"error"` rule (`kept_by_flags`),
    unless a `unique` or primary-key `"error"` rule failed, whose rows that pass does not
    tell apart; then a pass of their own over `rows`, masked by the failing rules' own
    expressions (`kept_by_rules`). Both read every row, the held-back ones masked.
    `identifiers` (the primary key) show no mean."""
    if evaluation.aggregated is not None and not any(
        rule.distinct_over is not None and rule.severity == "error" for rule in failing
    ):
        counted = described(rows.collect_schema(), evaluation.aggregated, identifiers)
        return lambda: counted
    return lambda: statistics(rows, where=kept_by_rules(failing), identifiers=identifiers)


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


def _passes(failing: Sequence[Rule]) -> tuple[pl.Expr, pl.Expr]:
    """Whether a row passes every failing `"error"` rule, and every failing `"warn"` rule, as
    predicates over the rules' expressions (`null` passes, as in `rule_columns`)."""
    return tuple(  # type: ignore[return-value]
        pl.all_horizontal([r.expr.fill_null(True) for r in failing if r.severity == severity])
        if any(r.severity == severity for r in failing)
        else pl.lit(True)
        for severity in ("error", "warn")
    )


def _all(names: list[str]) -> pl.Expr:
    return pl.all_horizontal(names) if names else pl.lit(True)
