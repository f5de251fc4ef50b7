"""The evaluator: how every entry point evaluates rules on a frame.

A rule fails a row where its expression is `False`; `null` passes, as in
`Schema.filter(cast=False)`. Counts are streaming aggregations over the lazy plan, so memory
does not grow with the table. `unique` and primary-key rules sort key hashes (32 bits, 64
beyond `_NARROW_ROWS` rows) to find the keys that may repeat, then count exactly among those
rows: memory grows with the number of rows (4 bytes each), not with the width of the keys.
Samples come from one bounded head of the frame, so their cost grows with the number of
failing rules, not with rules times width; beyond the counts, only that head and the sampled
rows are ever materialized.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import dataframely as dy
import polars as pl

from ..errors import FrameConversionError, UnsupportedFrameError
from .catalogue import Rule
from .display import type_name
from .key_hashes import hashable, repeated_hashes, with_hashes
from .table_verdicts import asking_empty_table

_ROWS = "__dy_rows"
_KEYS = "__dy_keys"
_INDEX = "__dy_index"
_RULE = "__dy_rule"
_PASSED = "__dy_passed"
_MAX = "__dy_max"
_SAMPLE_COLUMNS = 8
_PASS = pl.lit(True)  # built once: a literal per rule costs more than the rest of its flag
#: The most cells (rows x columns) the head of a frame that samples are taken from may hold.
_HEAD_CELLS = 1 << 20
#: The prefilter of `unique` and primary-key rules hashes keys to `_NARROW_BITS` bits up to
#: this many rows, to 64 beyond. Two distinct keys share a 32-bit hash with probability 2^-32,
#: so n rows make about n^2 / 2^32 false candidates, which the exact count settles: up to 2^28
#: rows, at most one row in 16 (half the memory of 64-bit hashes buys that). The row-wise
#: counts, collected first, give the row count that chooses the width.
_NARROW_ROWS = 1 << 28
_NARROW_BITS = 32
#: The engine name of this evaluator, in `Evaluation.engines` and a check's `dy_engine`.
POLARS = "polars"
#: Queries collected together each read the frame themselves. Shared (polars' common
#: subplan elimination), the frame's plan is one cache feeding every query, which holds the
#: rows a fast query (the key sort) has read and a slow one (a regex rule) has not yet: with a
#: `unique` key on 10M rows, 256 MB above the imports instead of 165, 500 in a bad run.
_APART = pl.QueryOptFlags(comm_subplan_elim=False)


@dataclass(frozen=True)
class Evaluation:
    """What evaluating a set of rules on a frame found."""

    row_count: int
    #: rule name -> number of failing rows, for every evaluated rule (0 included)
    failed: Mapping[str, int]
    #: rule name -> up to `max_failure_samples` failing rows, for failing rules only
    samples: Mapping[str, pl.DataFrame]
    #: rules whose whole-table verdict failed an empty table (`Rule.judges_table`): they
    #: fail with 0 rows failed
    failed_table: frozenset[str] = frozenset()
    #: rule name -> the engine that evaluated it (`duckdb` for SQL pushed down); a rule not
    #: listed was evaluated here, by polars
    engines: Mapping[str, str] = field(default_factory=dict)
    #: column -> its largest value (None: no value), for the columns `maxima` asked for
    maxima: Mapping[str, Any] = field(default_factory=dict)
    #: the one row of the `aggregates` the counting pass computed besides (None: none asked)
    aggregated: pl.DataFrame | None = None

    def fails(self, rule: str) -> bool:
        """Whether `rule` failed: on some rows, or as a verdict on the (empty) table."""
        return bool(self.failed[rule]) or rule in self.failed_table


def as_lazy(frame: Any, *, asset: str | None = None) -> pl.LazyFrame:
    """A `pl.LazyFrame` over `frame`: polars frames as they are, pandas and pyarrow converted.

    A pandas column polars cannot convert raises `FrameConversionError` naming `asset` (a
    user string), the column and the types it mixes.
    """
    if isinstance(frame, pl.LazyFrame):
        return frame
    if isinstance(frame, pl.DataFrame):
        return frame.lazy()
    module = type(frame).__module__.split(".")[0]
    if module == "pandas":
        try:
            return pl.from_pandas(frame).lazy()
        except (TypeError, ValueError, NotImplementedError, pl.exceptions.PolarsError) as error:
            raise _conversion_error(frame, error, asset) from None
    if module == "pyarrow":
        converted = pl.from_arrow(frame)
        if isinstance(converted, pl.DataFrame):
            return converted.lazy()
    raise UnsupportedFrameError(
        f"Cannot validate a {type_name(frame)}: expected a "
        "polars DataFrame or LazyFrame, a pandas DataFrame or a pyarrow Table. Make the asset "
        "(or its IO manager) produce one of those."
    )


def _conversion_error(frame: Any, error: Exception, asset: str | None) -> FrameConversionError:
    """Which column of a pandas `frame` polars refused, found by converting one at a time."""
    where = f"asset {asset}" if asset else "the frame"
    for name in frame.columns:
        try:
            pl.from_pandas(frame[name])
        except (TypeError, ValueError, NotImplementedError, pl.exceptions.PolarsError):
            types = sorted({type_name(value) for value in frame[name].dropna()})
            held = (
                f"mixes values of types {', '.join(types)}, and a polars column holds one type"
                if len(types) > 1
                else f"holds {', '.join(types) or 'no'} values polars cannot convert"
            )
            return FrameConversionError(
                f"Cannot convert {where} from pandas to polars: column {str(name)!r} {held} "
                f"({error}). Give the column one type where the frame is made, e.g. "
                f"frame[{str(name)!r}] = frame[{str(name)!r}].astype(str), then materialize "
                "the asset again.",
                column=str(name),
            )
    return FrameConversionError(
        f"Cannot convert {where} from pandas to polars: {error}. Make the frame convertible "
        "(pl.from_pandas(frame) must succeed), then materialize the asset again.",
        column=None,
    )


def column_mismatches(
    schema: type[dy.Schema], actual: Mapping[str, pl.DataType]
) -> dict[str, tuple[str, str | None]]:
    """Columns of `schema` that `actual` lacks or holds with another dtype:
    column -> (expected dtype, actual dtype or None when missing). Reads no data."""
    mismatches: dict[str, tuple[str, str | None]] = {}
    for name, column in schema.columns().items():
        dtype = actual.get(name)
        if dtype is None or not column.validate_dtype(dtype):
            mismatches[name] = (str(column.dtype), None if dtype is None else str(dtype))
    return mismatches


def rule_columns(lf: pl.LazyFrame, rules: Sequence[Rule]) -> pl.LazyFrame:
    """`lf` with one Boolean column per rule, named by its check name: `False` fails the row.

    The row-level definition of a rule, as `Schema.filter` has it: a `null` result passes.
    """
    return lf.with_columns(rule.expr.fill_null(_PASS).alias(rule.check_name) for rule in rules)


def evaluate(
    lf: pl.LazyFrame,
    rules: Sequence[Rule],
    *,
    max_failure_samples: int,
    identify: Sequence[str] = (),
    maxima: Sequence[str] = (),
    aggregates: Mapping[str, pl.Expr] | None = None,
    columns: Mapping[str, pl.Expr] | None = None,
) -> Evaluation:
    """Count each rule's failing rows on `lf` and sample up to `max_failure_samples` of them.

    `lf` must hold the schema's columns with the schema's dtypes. Samples show the columns
    that explain a failure, after the `identify` columns (the primary key) that locate it.
    The largest value of each column of `maxima` (a table check's) is found in the same pass,
    and so are `aggregates` (output name -> aggregation over `lf` with the row-wise rules'
    flag columns, as `rule_columns` names them, and `columns`: name -> an expression over
    those, computed once per row for the aggregates to share), as `Evaluation.aggregated`.
    """
    row_wise = [rule for rule in rules if rule.distinct_over is None]
    largest = {f"{_MAX}{index}": column for index, column in enumerate(maxima)}
    besides = dict(aggregates or {})
    flagged = rule_columns(lf, row_wise).with_columns(
        expr.alias(name) for name, expr in (columns or {}).items()
    )
    counts = flagged.select(
        pl.len().alias(_ROWS),
        *((~pl.col(rule.check_name)).sum().alias(rule.name) for rule in row_wise),
        *(pl.col(column).max().alias(alias) for alias, column in largest.items()),
        *(expr.alias(name) for name, expr in besides.items()),
    )
    # `unique` and primary-key rules: first the keys whose hash repeats (a cheap sort of
    # narrow hashes), then an exact grouped count over the rows with those hashes only. A
    # valid table never reaches the second step; a hash collision only costs a candidate.
    # The row-wise counts run alone first: in one `collect_all` with the hash sort, polars
    # caches their shared scan and buffers it for the slower of the two (about 1.5x the
    # memory at 10M rows), and the row count they give sets the hash width.
    collected = counts.collect(engine="streaming")
    # Taken apart before `row`: an aggregate may hold a date Python cannot (`python_values`).
    aggregated = collected.select(list(besides)) if besides else None
    counted = collected.drop(list(besides)).row(0, named=True)
    found_maxima = {column: counted.pop(alias) for alias, column in largest.items()}
    failed: dict[str, int] = {name: int(value or 0) for name, value in counted.items()}
    distinct = [rule for rule in rules if rule.distinct_over is not None]
    schema = lf.collect_schema()
    hashed = [r for r in distinct if hashable(schema, r.distinct_over or ())]
    bits = _NARROW_BITS if failed[_ROWS] <= _NARROW_ROWS else 64
    found = _collect_all([repeated_hashes(lf, r.distinct_over or (), bits) for r in hashed])
    hashes = dict(zip([r.name for r in hashed], found, strict=True))
    exact = {
        rule.name: _repeats(
            lf if rule.name not in hashes else with_hashes(lf, rule, hashes[rule.name], bits),
            rule.distinct_over or (),
            max_failure_samples,
        )
        for rule in distinct
        if rule.name not in hashes or hashes[rule.name].height
    }
    failed |= {rule.name: 0 for rule in distinct if rule.name not in exact}
    repeated: dict[str, pl.DataFrame] = {}
    for name, frame in zip(exact, _collect_all(list(exact.values())), strict=True):
        failed[name] = int(frame[_ROWS][0] or 0)
        repeated[name] = frame.select(pl.col(_KEYS).explode()).unnest(_KEYS)
    row_count = failed.pop(_ROWS)
    failing = [rule for rule in rules if failed[rule.name]]
    samples = (
        _samples(lf, schema, failing, failed, max_failure_samples, identify, repeated)
        if max_failure_samples
        else {}
    )
    return Evaluation(
        row_count=row_count,
        failed=failed,
        samples=samples,
        failed_table=_failed_on_empty(lf, rules) if row_count == 0 else frozenset(),
        maxima=found_maxima,
        aggregated=aggregated,
    )


def _collect_all(queries: Sequence[pl.LazyFrame]) -> list[pl.DataFrame]:
    """`queries` collected by the streaming engine, each reading its own rows (`_APART`)."""
    if not queries:
        return []
    return pl.collect_all(queries, engine="streaming", optimizations=_APART)


def _failed_on_empty(lf: pl.LazyFrame, rules: Sequence[Rule]) -> frozenset[str]:
    """The `judges_table` rules whose expression, on the empty `lf`, is one `False`: a
    verdict for the table (`pl.len() > 0`) rather than for rows, of which there are none."""
    judging = [rule for rule in rules if rule.judges_table]
    if not judging:
        return frozenset()
    with asking_empty_table():
        verdicts = pl.collect_all([lf.select(rule.expr.alias(_ROWS)) for rule in judging])
    return frozenset(
        rule.name
        for rule, verdict in zip(judging, verdicts, strict=True)
        if verdict.height == 1 and verdict[_ROWS][0] is False
    )


def _duplicates(lf: pl.LazyFrame, keys: tuple[str, ...]) -> pl.LazyFrame:
    """How many rows share each key: one row per distinct key, count in `__dy_rows`."""
    return lf.group_by(list(keys)).agg(pl.len().alias(_ROWS))


def _repeats(lf: pl.LazyFrame, keys: tuple[str, ...], limit: int) -> pl.LazyFrame:
    """One row: how many rows of `lf` share their key with another (`__dy_rows`), and the
    `limit` smallest such keys (`__dy_keys`, a list of structs)."""
    return (
        _duplicates(lf, keys)
        .filter(pl.col(_ROWS) > 1)
        .select(
            pl.col(_ROWS).sum(),
            pl.struct(keys).sort_by(keys).head(limit).implode().alias(_KEYS),
        )
    )


def _samples(
    lf: pl.LazyFrame,
    available: Mapping[str, pl.DataType],
    rules: Sequence[Rule],
    failed: Mapping[str, int],
    limit: int,
    identify: Sequence[str],
    repeated: Mapping[str, pl.DataFrame],
) -> dict[str, pl.DataFrame]:
    """Up to `limit` failing rows per rule, the first in frame order, with the columns that
    explain the failure. One bounded head of the frame serves every row-wise rule that fails
    often enough in it; each other rule gets a query of its own."""
    explaining = {rule.name: _explaining(rule, identify, available) for rule in rules}
    samples = _from_head(
        lf, [rule for rule in rules if rule.distinct_over is None], explaining, failed, limit
    )
    rest = [rule for rule in rules if rule.name not in samples]
    queries = [
        _failing(lf, rule, repeated).select(explaining[rule.name]).head(limit) for rule in rest
    ]
    collected = _collect_all(queries) if queries else []
    samples |= {rule.name: frame for rule, frame in zip(rest, collected, strict=True)}
    return {rule.name: samples[rule.name] for rule in rules}


def _from_head(
    lf: pl.LazyFrame,
    rules: Sequence[Rule],
    explaining: Mapping[str, list[str]],
    failed: Mapping[str, int],
    limit: int,
) -> dict[str, pl.DataFrame]:
    """The samples of `rules` that the first rows of `lf` hold: those of each rule whose
    first `limit` failing rows (or all of them) lie there. The head is read once, with the
    rules' flags and the columns their samples show, at most `_HEAD_CELLS` cells of them."""
    if not rules:
        return {}
    shown = list(dict.fromkeys(name for rule in rules for name in explaining[rule.name]))
    flags = [rule.check_name for rule in rules]
    rows = max(limit, _HEAD_CELLS // (len(shown) + len(flags)))
    head = rule_columns(lf, rules).select(*shown, *flags).head(rows).collect(engine="streaming")
    firsts = (
        head.select(flags)
        .with_row_index(_INDEX)
        .unpivot(flags, index=_INDEX, variable_name=_RULE, value_name=_PASSED)
        .filter(~pl.col(_PASSED))
        .group_by(_RULE)
        .agg(pl.col(_INDEX).head(limit))
    )
    found: dict[str, list[int]] = dict(
        zip(firsts[_RULE].to_list(), firsts[_INDEX].to_list(), strict=True)
    )
    # Rules failing on the same first rows share one gather of those rows: with every rule
    # failing, thousands of rules fail on a few sets of rows.
    sharing: dict[tuple[int, ...], list[Rule]] = {}
    for rule in rules:
        first = found.get(rule.check_name, [])
        if len(first) == min(limit, failed[rule.name]):
            sharing.setdefault(tuple(first), []).append(rule)
    # Columns taken by name, not through the wide head, so each sample costs its own width.
    columns = dict(zip(head.columns, head.get_columns(), strict=True))
    samples: dict[str, pl.DataFrame] = {}
    for shared, sharers in sharing.items():
        needed = dict.fromkeys(name for rule in sharers for name in explaining[rule.name])
        gathered = pl.DataFrame([columns[name] for name in needed])[list(shared)]
        if len(sharers) == 1:
            samples[sharers[0].name] = gathered
            continue
        taken = dict(zip(gathered.columns, gathered.get_columns(), strict=True))
        for rule in sharers:
            samples[rule.name] = pl.DataFrame([taken[name] for name in explaining[rule.name]])
    return samples


def _failing(lf: pl.LazyFrame, rule: Rule, repeated: Mapping[str, pl.DataFrame]) -> pl.LazyFrame:
    """Rows of `lf` failing `rule`; for a `unique`/primary-key rule, the rows holding the
    repeated keys its count found (`repeated`), so sampling needs no second grouping."""
    if rule.distinct_over is not None:
        keys = list(rule.distinct_over)
        return lf.join(repeated[rule.name].lazy(), on=keys, how="semi", nulls_equal=True)
    return rule_columns(lf, [rule]).filter(~pl.col(rule.check_name)).drop(rule.check_name)


def _explaining(
    rule: Rule, identify: Sequence[str], available: Mapping[str, pl.DataType]
) -> list[str]:
    """The identifying columns, then the columns the rule reads, at most a few, among the
    `available` columns."""
    try:
        read = rule.expr.meta.root_names()
    except pl.exceptions.PolarsError:  # some nested expressions cannot be inspected
        read = []
    wanted = [
        *identify,
        *(rule.distinct_over or ()),
        *([rule.column] if rule.column else []),
        *read,
    ]
    ordered = list(dict.fromkeys(name for name in wanted if name in available))
    return (ordered or list(available))[:_SAMPLE_COLUMNS]
