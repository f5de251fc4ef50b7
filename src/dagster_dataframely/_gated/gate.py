"""`validation_results`: validate a frame before it is written, and decide what is written.

The outcomes, in order of precedence:

- a column missing or of another dtype: the column-schema check fails, `ColumnSchemaError`;
- every row valid: the table is written (schema columns, schema order), checks pass;
- rows failing only `"warn"` rules: written after the valid rows, their checks fail at `WARN`;
- rows failing `"error"` rules, no quarantine writer: nothing is written, every check result
  is yielded, then `ValidationAbortError` with the count per `"error"` rule;
- the same with a writer: the quarantine is written first (a failing writer fails the run
  before the table is written, after every check result is yielded), then the table with the
  other rows, success;
- every row an `"error"` row: the quarantine is written, the table not, `NoValidRowsError`;
- with a writer, an `"error"` rule above its tolerance (`dd.tolerate`, `tolerate=`): the
  quarantine is written, the table not, `ValidationAbortError` (the circuit breaker,
  `breaker`); without a writer such a tolerance is refused before anything runs;
- a table check (`dd.expect_rows`, `dd.expect_fresh`) failing at `ERROR` on the rows
  returned: as an `"error"` rule's abort without a writer, as the breaker with one
  (`table_stop`); one failing at `WARN` writes the table.

With a writer, every run that gets past the column-schema check writes the quarantine, an
empty one when no row failed an `"error"` rule, so what is stored there is never older than
the table; the table's materialization carries its address (`dy_quarantine`) and row count
(`dy_quarantined_rows`).

A failing rule check has its own rule's severity, except when a writer took the error rows
and the table was written: the table those checks guard is clean, so they fail at `WARN`.
Each failing check says what happened to its rows (`dy_failed_rows`: quarantined, written to
the table, or not written), and only those whose rows went to the quarantine carry its
address (`dy_quarantine`).
Counting is the evaluator's one streaming pass; rows are split only when some rule failed, so
an all-valid frame is never copied. A `LazyFrame` that `dd.asset` got in a run is never
collected (`streamed`): the split stays two plans that the IO managers sink, counted first
and written after, so the outcome is decided before anything is written
(`docs/asset.md`, "A LazyFrame at any size").
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeAlias

import dagster as dg
import polars as pl

from .._checks import figures as f
from .._checks.asset_keys import parse_asset_key
from .._checks.metadata import table_schema
from .._checks.results import column_schema_results, results
from .._checks.specs import plan
from .._checks.table_results import failed_at_error, skipped_table_results, table_results
from .._checks.trend_history import RunContext, required_history
from .._checks.trend_results import TrendHistory, skipped_trend_result, trend_results
from .._engine.catalogue import rules
from .._engine.display import table
from .._engine.evaluate import Evaluation, as_lazy, evaluate
from .._engine.schemas import SchemaLike, as_dataframely
from .._engine.settings import CheckSettings, resolve
from .._engine.statistics import aggregations
from .._engine.table_checks import NO_TABLE_CHECKS, ExpectFresh, ExpectRows, TableChecks
from .._engine.trends import Trends
from ..errors import NoValidRowsError, ValidationAbortError
from .breaker import refuse_without_quarantine, trip_message, tripped
from .messages import abort_message, joined, no_valid_rows_message
from .outcome import ABORTED, STOPPED, UNWRITTEN, WRITTEN, Description, Fate
from .quarantine import QuarantineStep, QuarantineWriter, flagged_quarantine, writing
from .split import by_rules, kept_by_flags, split_eagerly, split_lazily, written_statistics
from .table_stop import HALTED, stop_message

#: What an asset body built on `validation_results` yields.
AssetYield: TypeAlias = Iterator[dg.MaterializeResult | dg.AssetCheckResult]

_KEPT = "__dy_kept"  # the flag of the rows a written table keeps, in the counting pass
_WARN = dg.AssetCheckSeverity.WARN


def validation_results(
    schema: SchemaLike,
    frame: Any,
    *,
    valid_key: dg.AssetKey | str | Sequence[str],
    quarantine_writer: QuarantineWriter | None = None,
    warn: str | Sequence[str] = (),
    tolerate: Mapping[str, Any] | None = None,
    check_granularity: str | None = None,
    schema_rules: str | None = None,
    max_failure_samples: int | None = None,
    statistics: bool | None = None,
    row_sample: int | None = None,
    expect_rows: ExpectRows | Mapping[str, Any] | None = None,
    expect_fresh: ExpectFresh | Mapping[str, Any] | None = None,
    reference: datetime | None = None,
    trends: Trends | Mapping[str, Any] | None = None,
    context: RunContext | None = None,
) -> AssetYield:
    """Validate `frame` against `schema`; yield the table's `MaterializeResult` (when it is
    written) and a result for every check, raising on the outcomes that write no table.

    `frame` is a polars DataFrame or LazyFrame (a LazyFrame is collected once, after the
    column-schema check, which reads only its schema), a pandas DataFrame or a pyarrow Table.
    The materialization's `value=` is a `pl.DataFrame` of the written rows. Without
    `quarantine_writer`, any row failing an `"error"` rule raises `ValidationAbortError`.
    With one, the writer is called on every run that passes the column-schema check, before
    the table is written, with an empty quarantine frame when no row failed an `"error"`
    rule, so the stored quarantine is never older than the table.
    Pass the same `warn`, `tolerate`, `check_granularity` and `schema_rules` as to
    `check_specs`. With a writer, an `"error"` rule's tolerance is a circuit breaker (its rows
    are quarantined up to it; above it nothing is written to the table and the run fails);
    without one, a tolerance on an `"error"` rule raises `InvalidToleranceError`.
    The table checks (`dd.expect_rows`, `dd.expect_fresh`, or `expect_rows`, `expect_fresh`,
    as `check_specs` takes them) judge the rows of `frame`, freshness from `reference` (a
    time partition's end) else now; one failing at `ERROR` writes no table and raises
    `ValidationAbortError`. So does the trend check (`trends`, as `check_specs` takes it),
    which judges the rows of `frame` against the history in `context`'s Dagster instance:
    `trends` without `context` raises `InvalidSettingError` here, at the call.
    """
    key = parse_asset_key(valid_key, argument="valid_key")
    trend = Trends.of(trends, where=f"asset {key.to_user_string()}")
    return gated_results(
        schema,
        frame,
        valid_key=valid_key,
        quarantine=None if quarantine_writer is None else writing(quarantine_writer),
        warn=warn,
        tolerate=tolerate,
        check_granularity=check_granularity,
        schema_rules=schema_rules,
        max_failure_samples=max_failure_samples,
        statistics=statistics,
        row_sample=row_sample,
        table_checks=TableChecks.of(
            as_dataframely(schema), expect_rows=expect_rows, expect_fresh=expect_fresh
        ),
        reference=reference,
        trend=required_history(context, key, trend, by="validation_results"),
    )


def gated_results(
    schema: SchemaLike,
    frame: Any,
    *,
    valid_key: dg.AssetKey | str | Sequence[str],
    quarantine: QuarantineStep | None,
    warn: str | Sequence[str] = (),
    tolerate: Mapping[str, Any] | None = None,
    check_granularity: str | None = None,
    schema_rules: str | None = None,
    max_failure_samples: int | None = None,
    statistics: bool | None = None,
    row_sample: int | None = None,
    streamed: bool = False,
    table_takes_lazy: bool = False,
    table_checks: TableChecks = NO_TABLE_CHECKS,
    reference: datetime | None = None,
    trend: TrendHistory | None = None,
) -> AssetYield:
    """`validation_results` with the quarantine written as a step: what it yields (the
    quarantine's own materialization, for `dd.asset`'s declared quarantine) comes first.

    With `streamed`, a `LazyFrame` is never collected: it is evaluated in the evaluator's
    streaming passes, split into plans (`split_lazily`), and the quarantine step gets a plan;
    the table's `value=` is a plan too when `table_takes_lazy` (its IO manager sinks it),
    else the written rows collected (and only those). The `table_checks` are judged from
    the same pass (its row count, the maxima they need), freshness from `reference`, and so
    is the `trend`: a table check too, which stops the write as they do."""
    dy_schema = as_dataframely(schema)
    key = parse_asset_key(valid_key, argument="valid_key")
    catalogue = rules(dy_schema, warn=warn, tolerate=tolerate)
    if quarantine is None:
        refuse_without_quarantine(
            catalogue, dy_schema.__name__, where=f"The gate of asset {key.to_user_string()}"
        )
    settings = CheckSettings.resolve(
        check_granularity=check_granularity,
        schema_rules=schema_rules,
        max_failure_samples=max_failure_samples,
    )
    description = Description(
        table_schema(dy_schema),
        resolve("statistics", statistics),
        resolve("row_sample", row_sample),
        table_takes_lazy,
    )
    lf = as_lazy(frame, asset=key.to_user_string())
    yield from column_schema_results(dy_schema, lf.collect_schema(), key)

    lazily = streamed and isinstance(frame, pl.LazyFrame)
    columns = dy_schema.column_names()
    rows: pl.DataFrame | pl.LazyFrame = (  # the schema's columns: drops extras, copies nothing
        lf.select(columns)
        if lazily
        else (frame if isinstance(frame, pl.DataFrame) else lf.collect(engine="streaming")).select(
            columns
        )
    )
    # The statistics of the rows the table keeps are aggregated in the counting pass, and the
    # table checks' maxima are found there too.
    summary = description.statistics
    evaluation = evaluate(
        rows.lazy(),
        catalogue,
        max_failure_samples=settings.max_failure_samples,
        identify=dy_schema.primary_key(),
        maxima=table_checks.maxima,
        aggregates=aggregations(rows.collect_schema(), where=pl.col(_KEPT)) if summary else None,
        columns={_KEPT: kept_by_flags(catalogue)} if summary else None,
    )
    judged = [
        *table_results(table_checks, evaluation, asset_key=key, reference=reference),
        *trend_results(trend, evaluation, catalogue, asset_key=key),
    ]
    stopped = failed_at_error(judged)
    planned = plan(catalogue, settings, dy_schema.__name__)
    checks = functools.partial(results, planned, evaluation, asset_key=key)
    failing = [rule for rule in catalogue if evaluation.fails(rule.name)]
    described = dataclasses.replace(
        description,
        statistics_of=written_statistics(rows, failing, evaluation, dy_schema.primary_key()),
    )
    blocked = {r.name: evaluation.failed[r.name] for r in failing if r.severity == "error"}

    def told(fate: Fate, severity: dg.AssetCheckSeverity | None = None) -> AssetYield:
        yield from fate.told(checks(severity=severity), planned, evaluation)
        yield from judged

    if (blocked or stopped) and quarantine is None:
        fate = ABORTED if blocked else HALTED
        yield from told(Fate(error=fate, warn=fate))
        aborted = abort_message(dy_schema, key, blocked) if blocked else ""
        raise ValidationAbortError(
            joined(aborted, stop_message(key, stopped, quarantine=None)), counts=blocked
        )
    split = (
        split_eagerly(rows, failing)
        if isinstance(rows, pl.DataFrame)
        else split_lazily(rows, evaluation, failing)
    )
    if quarantine is None:
        yield described.materialization(key, split)
        yield from told(Fate(error=WRITTEN, warn=WRITTEN))
        return

    try:
        address = yield from quarantine(flagged_quarantine(dy_schema, split.invalid, catalogue))
    except Exception:
        # the rules were evaluated: report them before the run fails
        yield from told(Fate(error=UNWRITTEN, warn=UNWRITTEN))
        raise
    quarantined: dict[str, Any] = {
        f.QUARANTINE: address,
        "dy_quarantined_rows": split.invalid_rows,
    }
    held_back = f"quarantined: held back in {address}"
    broken = tripped(catalogue, evaluation)
    if broken or stopped:  # the circuit breaker, a table check: no part of the table is written
        why = "rules above their tolerance" if broken else "a table check failed at ERROR"
        words = f"{held_back}; the table was not written ({why})"
        yield from told(Fate(error=words, warn=STOPPED if broken else HALTED, quarantine=address))
        count = evaluation.row_count
        trip = trip_message(dy_schema.__name__, key, broken, catalogue, count, address)
        raise ValidationAbortError(
            joined(trip if broken else "", stop_message(key, stopped, quarantine=address)),
            counts=blocked,
            quarantine=address,
        )
    if not split.invalid_rows:
        yield described.materialization(key, split, quarantined)
        yield from told(Fate(error=WRITTEN, warn=WRITTEN))
        return
    quarantined["invalid_by_rules"] = table(by_rules(split.combinations, failing))
    if not split.written_rows:
        # every row broke an "error" rule, so the rows of the "warn" rules are held back too
        everything = f"{held_back}; the table was not written (no valid rows)"
        yield from told(Fate(error=everything, warn=everything, quarantine=address, all=True))
        raise NoValidRowsError(
            no_valid_rows_message(dy_schema, key, split.invalid_rows, blocked, address),
            counts=blocked,
            quarantine=address,
        )
    yield described.materialization(key, split, quarantined)
    # the error rows went to the quarantine and the table is clean: their checks warn
    yield from told(Fate(error=held_back, warn=WRITTEN, quarantine=address), severity=_WARN)


def skipped_results(
    schema: SchemaLike,
    *,
    asset_key: dg.AssetKey,
    reason: str,
    warn: str | Sequence[str] = (),
    tolerate: Mapping[str, Any] | None = None,
    check_granularity: str | None = None,
    schema_rules: str | None = None,
    table_checks: TableChecks = NO_TABLE_CHECKS,
    trends: Trends | None = None,
) -> Iterator[dg.AssetCheckResult]:
    """Passing results for every check of a run that had no rows to validate.

    Dagster requires a result for each check spec of an `@asset`, even when the step yields
    no materialization (dagster-io/dagster#27399), so a skip reports every check as passed
    on zero rows, with `reason` under `dy_skipped`.
    """
    dy_schema = as_dataframely(schema)
    settings = CheckSettings.resolve(check_granularity=check_granularity, schema_rules=schema_rules)
    catalogue = rules(dy_schema, warn=warn, tolerate=tolerate)
    own_dtypes = {name: column.dtype for name, column in dy_schema.columns().items()}
    nothing = Evaluation(
        row_count=0, failed=dict.fromkeys((r.name for r in catalogue), 0), samples={}
    )
    for result in (
        *column_schema_results(dy_schema, own_dtypes, asset_key),
        *results(plan(catalogue, settings, dy_schema.__name__), nothing, asset_key=asset_key),
    ):
        yield result.with_metadata({**result.metadata, f.SKIPPED: reason})
    yield from skipped_table_results(table_checks, asset_key=asset_key, reason=reason)
    yield from skipped_trend_result(trends, asset_key=asset_key, reason=reason)
