"""Check results: the column-schema check, then one result per planned check."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import dagster as dg
import dataframely as dy
import polars as pl

from .._engine.backends import POLARS_BACKEND, Backend, backend_for
from .._engine.catalogue import Rule, rules
from .._engine.display import share, shorten, table
from .._engine.evaluate import POLARS, Evaluation, as_lazy, column_mismatches
from .._engine.naming import COLUMN_SCHEMA_CHECK, TRENDS_CHECK
from .._engine.read_dtypes import NO_CASTS, Casts, ReadDtypes, remedy
from .._engine.schemas import SchemaLike, as_dataframely
from .._engine.settings import CheckSettings
from .._engine.table_checks import NO_TABLE_CHECKS, ExpectFresh, ExpectRows, TableChecks
from .._engine.trends import Trends
from ..errors import ColumnSchemaError
from . import figures as f
from .asset_keys import parse_asset_key
from .kept import Keeper, keeping
from .specs import Check, plan
from .table_results import SEVERITY as _SEVERITY
from .table_results import table_results
from .trend_history import RunContext, required_history
from .trend_results import TrendHistory, trend_results
from .verdicts import Verdict

if TYPE_CHECKING:  # sqlglot is imported only when a pushdown runs
    from .._engine.sql.backend import SQLTable

_LISTED_MISMATCHES = 50


def check_results(
    schema: SchemaLike,
    frame: Any,
    *,
    asset_key: dg.AssetKey | str | Sequence[str],
    severity: dg.AssetCheckSeverity | None = None,
    warn: str | Sequence[str] = (),
    tolerate: Mapping[str, Any] | None = None,
    check_granularity: str | None = None,
    schema_rules: str | None = None,
    max_failure_samples: int | None = None,
    checks: Collection[str] | None = None,
    expect_rows: ExpectRows | Mapping[str, Any] | None = None,
    expect_fresh: ExpectFresh | Mapping[str, Any] | None = None,
    reference: datetime | None = None,
    trends: Trends | Mapping[str, Any] | None = None,
    context: RunContext | None = None,
) -> Iterator[dg.AssetCheckResult]:
    """Evaluate `schema` on `frame` and yield a result for each check; write nothing.

    `frame` is a polars DataFrame or LazyFrame (a LazyFrame is streamed, never collected
    whole), a pandas DataFrame or a pyarrow Table. The column-schema check comes first and
    reads only the frame's schema: on a mismatch its failed result is yielded, then
    `ColumnSchemaError` is raised and no rule is evaluated. Each rule check fails with its
    rule's severity unless `severity` overrides it; within its tolerance (`dd.tolerate`,
    `tolerate`) it passes. The table checks (`dd.expect_rows`, `dd.expect_fresh`, or
    `expect_rows`, `expect_fresh`) come last; freshness is measured from `reference` (give a
    time partition's end), else from now. `trends` (`dd.Trends(...)`, as `check_specs`
    takes it) adds the trend check last, judged against the history in `context`'s Dagster
    instance (of its partition): `trends` without `context` raises `InvalidSettingError`
    here, at the call. `checks` limits the results to those check names (the column-schema
    check is always evaluated).
    """
    dy_schema = as_dataframely(schema)
    key = parse_asset_key(asset_key, argument="asset_key")
    settings = CheckSettings.resolve(
        check_granularity=check_granularity,
        schema_rules=schema_rules,
        max_failure_samples=max_failure_samples,
    )
    lf = as_lazy(frame, asset=key.to_user_string())
    trend = Trends.of(trends, where=f"asset {key.to_user_string()}")
    if checks is not None and TRENDS_CHECK not in checks:
        trend = None
    return schema_results(
        dy_schema,
        lf,
        key,
        settings,
        warn=warn,
        tolerate=tolerate,
        checks=checks,
        severity=severity,
        table=TableChecks.of(dy_schema, expect_rows=expect_rows, expect_fresh=expect_fresh),
        reference=reference,
        trend=required_history(context, key, trend, by="check_results"),
    )


def schema_results(
    schema: type[dy.Schema],
    lf: pl.LazyFrame,
    asset_key: dg.AssetKey,
    settings: CheckSettings,
    *,
    warn: str | Sequence[str] = (),
    tolerate: Mapping[str, Any] | None = None,
    checks: Collection[str] | None = None,
    severity: dg.AssetCheckSeverity | None = None,
    read_dtypes: ReadDtypes | None = None,
    pushdown: SQLTable | None = None,
    keep: Keeper | None = None,
    table: TableChecks = NO_TABLE_CHECKS,
    reference: datetime | None = None,
    trend: TrendHistory | None = None,
    resolved: tuple[Sequence[Rule], Sequence[Check]] | None = None,
) -> Iterator[dg.AssetCheckResult]:
    """`check_results` on a LazyFrame, settings resolved. `read_dtypes` is the sidecar's
    (None elsewhere): its column-schema message names the sidecar's remedy, and `"cast"`
    casts the drifts `_read_dtypes` lists, their failures counted with the rules. With
    `pushdown` (the same rows in a database), the rules are evaluated there. `keep` keeps
    the failing rows and says where on each failing check. The `table` checks (volume,
    freshness from `reference`) and the `trend` are judged from the same evaluation.
    `resolved` is the catalogue of `schema` with `warn` and `tolerate`, and its checks, when
    the caller resolved them once for many runs."""
    actual = lf.collect_schema()
    casts = Casts.plan(schema, actual, read_dtypes)
    yield from column_schema_results(
        schema, actual, asset_key, read_dtypes=read_dtypes, casts=casts
    )
    if resolved is None:
        every: Sequence[Rule] = rules(schema, warn=warn, tolerate=tolerate)
        planned: Sequence[Check] = plan(every, settings, schema.__name__)
    else:
        every, planned = resolved
    if checks is not None:
        planned = [check for check in planned if check.name in checks]
    # a trend reads every rule's figure, selected or not: one left out would read as 0
    catalogue = every if trend is not None else [r for check in planned for r in check.rules]
    evaluation = evaluate_schema(
        schema,
        lf,
        catalogue,
        settings,
        casts=casts,
        backend=backend_for(pushdown),
        maxima=table.maxima,
    )
    if casts.casts:
        result, error = casts.result(schema, asset_key, evaluation, schema.primary_key())
        yield result
        if error is not None:
            raise error
    found = results(planned, evaluation, asset_key=asset_key, severity=severity)
    if keep is None:
        yield from found
    else:
        kept = keep(
            schema,
            casts.frame(lf, schema.column_names()),
            every,
            evaluation,
            None if casts.casts else pushdown,
        )
        yield from keeping(planned, found, kept, evaluation)
    yield from table_results(
        table, evaluation, asset_key=asset_key, reference=reference, checks=checks
    )
    yield from trend_results(trend, evaluation, catalogue, asset_key=asset_key, checks=checks)


def evaluate_schema(
    schema: type[dy.Schema],
    frame: pl.LazyFrame,
    catalogue: Sequence[Rule],
    settings: CheckSettings,
    *,
    casts: Casts = NO_CASTS,
    backend: Backend = POLARS_BACKEND,
    maxima: Sequence[str] = (),
) -> Evaluation:
    """`catalogue` (rules of `schema`) evaluated on the schema's columns of `frame`, failing
    rows identified by the primary key and sampled as `settings` say; with `casts`, on the
    cast columns, each cast's failures counted in the same pass. By `backend`: polars, or a
    database (`backend_for`), casts included (rules and casts without an exact SQL form on
    `frame`, by polars). The largest value of each column of `maxima` is found in the same
    pass."""
    return backend.evaluate(
        casts.frame(frame, schema.column_names()),
        [*catalogue, *casts.rules],
        max_failure_samples=settings.max_failure_samples,
        identify=schema.primary_key(),
        casts=casts.casts,
        maxima=maxima,
    )


def column_schema_results(
    schema: type[dy.Schema],
    actual: Mapping[str, pl.DataType],
    asset_key: dg.AssetKey,
    *,
    read_dtypes: ReadDtypes | None = None,
    casts: Casts = NO_CASTS,
) -> Iterator[dg.AssetCheckResult]:
    """The `dy_schema__columns` result; on a mismatch, yield it failed and raise. Columns
    `casts` will cast are no mismatch: when there are any, their evaluation reports the
    result (`Casts.result`) and nothing is yielded here."""
    mismatches = {
        name: mismatch
        for name, mismatch in column_mismatches(schema, actual).items()
        if name not in casts.columns
    }
    if casts.casts and not mismatches:
        return
    listed = list(mismatches.items())[:_LISTED_MISMATCHES]
    metadata: dict[str, Any] = {"dy_mismatched_columns": len(mismatches)}
    if mismatches:
        metadata["dy_mismatches"] = table(
            pl.DataFrame(
                [(name, expected, actual or "(missing)") for name, (expected, actual) in listed],
                schema=["column", "expected", "actual"],
                orient="row",
            )
        )
    yield dg.AssetCheckResult(
        check_name=COLUMN_SCHEMA_CHECK,
        asset_key=asset_key,
        passed=not mismatches,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata=metadata,
    )
    if mismatches:
        fix = (
            f"The package never casts. Produce the declared dtypes, or call "
            f"`{schema.__name__}.cast(frame)` in the asset to cast."
            if read_dtypes is None
            else remedy(schema, actual, mismatches, read_dtypes)
        )
        raise ColumnSchemaError(_mismatch_message(schema, mismatches, fix), mismatches=mismatches)


def results(
    checks: Sequence[Check],
    evaluation: Evaluation,
    *,
    asset_key: dg.AssetKey,
    severity: dg.AssetCheckSeverity | None = None,
) -> Iterator[dg.AssetCheckResult]:
    """One `AssetCheckResult` per check, from an evaluation of its rules.

    Each rule's tolerance decides from its count alone whether it crossed a level; the check
    fails at the worst level its rules crossed. A failing check's metadata reads top down as
    the UI lists it, which is by key (Dagster stores metadata with sorted keys): the outcome
    in words first (`dy_assessment`: severity, and how many rows failed of how many), the
    rule's readable constraint, then its polars expression, counts and failing rows (nulls
    shown as `null`).
    """
    for check in checks:
        verdict = Verdict.of(check, evaluation)
        failing = verdict.failing
        level = severity or _SEVERITY[verdict.level]
        failed = sum(evaluation.failed[rule.name] for rule in check.rules)
        metadata: dict[str, Any] = {}
        if failing:
            metadata[f.ASSESSMENT] = _outcome(level, check, failing, evaluation)
        elif verdict.tolerated:
            metadata[f.ASSESSMENT] = f"passed within its tolerance: {verdict.tolerated}"
        if len(check.rules) == 1:
            rule = check.rules[0]
            if failing:
                metadata[f.CONSTRAINT] = dg.MetadataValue.text(shorten(rule.description))
                metadata[f.EXPRESSION] = dg.MetadataValue.text(rule.expression)
        metadata |= {f.FAILED_COUNT: failed, f.ROW_COUNT: evaluation.row_count}
        metadata |= verdict.metadata()
        metadata[f.ENGINE] = _engine(check, evaluation)
        if len(check.rules) == 1:
            metadata[f.RULE] = check.rules[0].name
        else:
            metadata[f.RULES] = table(_per_rule(check, evaluation, verdict), max_rows=50)
        sample = _sample(check, evaluation)
        if sample is not None:
            metadata[f.FAILED_SAMPLE] = table(sample, null="null")
        yield dg.AssetCheckResult(
            check_name=check.name,
            asset_key=asset_key,
            passed=not failing,
            severity=level,
            description=shorten(check.description, 1000),
            metadata=metadata,
        )


def _engine(check: Check, evaluation: Evaluation) -> str:
    """Where the check's rules ran: `duckdb`, `polars`, or both (`duckdb, polars`)."""
    engines = (evaluation.engines.get(rule.name, POLARS) for rule in check.rules)
    return ", ".join(sorted(set(engines)))


def _outcome(
    level: dg.AssetCheckSeverity, check: Check, failing: Sequence[Rule], evaluation: Evaluation
) -> str:
    """`failed at severity ERROR: 2 of 25 rows, 8%`; for a check of several rules, how many
    failed and the share of the worst (a row failing two rules would count twice in a sum)."""
    worst = max(evaluation.failed[rule.name] for rule in failing)
    rows = share(worst, evaluation.row_count)
    if not worst:  # a verdict on the whole (empty) table, no row to carry it
        rows = "the table fails it (0 rows)"
    tolerances = {str(rule.tolerance) for rule in failing if rule.tolerance is not None}
    tolerated = f" (tolerance: {'; '.join(sorted(tolerances))})" if tolerances else ""
    if len(check.rules) == 1:
        return f"failed at severity {level.value}: {rows}{tolerated}"
    return (
        f"failed at severity {level.value}: {len(failing)} of {len(check.rules)} rules, "
        f"the worst on {rows}{tolerated}"
    )


def _per_rule(check: Check, evaluation: Evaluation, verdict: Verdict) -> pl.DataFrame:
    frame = pl.DataFrame(
        [
            (
                r.name,
                r.severity,
                evaluation.failed[r.name],
                str(r.limits),
                verdict.margins[r.name],
                r.description,
            )
            for r in check.rules
        ],
        schema={
            "rule": pl.String,
            "severity": pl.String,
            "failed": pl.Int64,
            "tolerance": pl.String,
            "margin": pl.Int64,
            "constraint": pl.String,
        },
        orient="row",
    )
    return frame.sort("failed", descending=True, maintain_order=True)


def _sample(check: Check, evaluation: Evaluation) -> pl.DataFrame | None:
    """The failing rows of a check; for a collapsed check, as many rows as one rule's sample,
    taken rule by rule and labelled with the rule they fail."""
    samples = [evaluation.samples[r.name] for r in check.rules if r.name in evaluation.samples]
    if not samples:
        return None
    if len(check.rules) == 1:
        return samples[0]
    limit, labelled, taken = max(s.height for s in samples), [], 0
    for rule in check.rules:
        if taken >= limit or rule.name not in evaluation.samples:
            continue
        rows = evaluation.samples[rule.name].head(limit - taken)
        labelled.append(rows.select(pl.lit(rule.name).alias("dy_rule"), pl.all()))
        taken += rows.height
    return pl.concat(labelled, how="diagonal")


def _mismatch_message(
    schema: type[dy.Schema], mismatches: Mapping[str, tuple[str, str | None]], fix: str
) -> str:
    lines = [
        f"  - {name}: missing (expected {expected})"
        if actual is None
        else f"  - {name}: {actual}, expected {expected}"
        for name, (expected, actual) in list(mismatches.items())[:_LISTED_MISMATCHES]
    ]
    if len(mismatches) > _LISTED_MISMATCHES:
        lines.append(f"  … and {len(mismatches) - _LISTED_MISMATCHES} more")
    return (
        f"The frame does not match {schema.__name__}: {len(mismatches)} column(s) missing or "
        "of another dtype:\n" + "\n".join(lines) + "\n" + fix
    )
