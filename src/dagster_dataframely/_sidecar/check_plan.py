"""One checked asset's plan: everything its checks need, resolved once at definition time.

`dd.schema_checks` builds one plan and one step around it; `dd.with_schemas` and the Component
build a plan per asset and run many plans in one step (`check_steps`). Either way a run only
adds what is new to it: the partition, the connection and the rows. The schema is converted,
its rules catalogued and grouped into checks, its tolerances and table checks resolved here,
once, not in every step of every run.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import dagster as dg
import dataframely as dy

from .._checks.asset_keys import AssetKeyLike, parse_asset_key
from .._checks.observations import observing
from .._checks.results import schema_results
from .._checks.specs import Check, check_specs, plan
from .._checks.table_results import partition_end
from .._checks.trend_history import trend_history
from .._engine.catalogue import Rule, rules
from .._engine.evaluate import as_lazy
from .._engine.naming import COLUMN_SCHEMA_CHECK, TRENDS_CHECK
from .._engine.read_dtypes import ReadDtypes
from .._engine.schemas import SchemaLike, as_dataframely
from .._engine.settings import CheckSettings, resolve
from .._engine.severity import warn_names
from .._engine.table_checks import ExpectFresh, ExpectRows, TableChecks
from .._engine.tolerance import overrides
from .._engine.trends import Trends
from ..errors import ColumnSchemaError
from ..sources import Source, SourceLike, as_source, reading
from ..sources._base import for_run
from .failing_rows import Keeper, KeepFailingRows

#: What a check step yields: its results, and the observation of their fractions (opt in).
CheckEvent = dg.AssetCheckResult | dg.AssetObservation


@dataclass(frozen=True)
class CheckPlan:
    """The checks of one schema on one asset, with every setting resolved."""

    key: dg.AssetKey
    schema: type[dy.Schema]
    source: Source
    settings: CheckSettings
    warn: tuple[str, ...]
    tolerate: Mapping[str, Any] | None
    read_dtypes: ReadDtypes
    keeping: KeepFailingRows | None
    observe: bool
    table_checks: TableChecks
    trend: Trends | None
    specs: tuple[dg.AssetCheckSpec, ...]
    #: The schema's rules with this asset's severities and tolerances, and the checks they
    #: make, as every run reads them.
    catalogue: tuple[Rule, ...]
    checks: tuple[Check, ...]

    @classmethod
    def of(
        cls,
        schema: SchemaLike,
        *,
        asset: AssetKeyLike,
        warn: str | Sequence[str] = (),
        tolerate: Mapping[str, Any] | None = None,
        blocking: bool | None = None,
        check_granularity: str | None = None,
        schema_rules: str | None = None,
        max_failure_samples: int | None = None,
        partitions_def: dg.PartitionsDefinition | None = None,
        source: SourceLike | None = None,
        read_dtypes: ReadDtypes | None = None,
        keep_failing_rows: bool | str | None = None,
        max_failing_rows: int | None = None,
        expect_rows: ExpectRows | Mapping[str, Any] | None = None,
        expect_fresh: ExpectFresh | Mapping[str, Any] | None = None,
        trends: Trends | Mapping[str, Any] | None = None,
        observe_fractions: bool | None = None,
    ) -> CheckPlan:
        """The plan of `dd.schema_checks` with these arguments (it documents them)."""
        dy_schema = as_dataframely(schema)
        key = parse_asset_key(asset)
        warned = tuple(warn_names(warn))
        tolerated = overrides(dy_schema.__name__, tolerate)
        settings = CheckSettings.resolve(
            check_granularity=check_granularity,
            schema_rules=schema_rules,
            max_failure_samples=max_failure_samples,
        )
        keeping = KeepFailingRows.resolve(keep_failing_rows, max_failing_rows)
        table_checks = TableChecks.of(dy_schema, expect_rows=expect_rows, expect_fresh=expect_fresh)
        trend = Trends.of(trends, where=f"asset {key.to_user_string()}")
        specs = check_specs(
            dy_schema,
            asset=key,
            warn=warned,
            tolerate=tolerated,
            check_granularity=settings.check_granularity,
            schema_rules=settings.schema_rules,
            blocking=blocking,
            partitions_def=partitions_def or _partitions_of(asset),
            expect_rows=table_checks.rows,
            expect_fresh=table_checks.fresh,
            trends=trend,
        )
        catalogue = rules(dy_schema, warn=warned, tolerate=tolerated)
        return cls(
            key=key,
            schema=dy_schema,
            source=as_source(source).for_checks(writes=keeping is not None),
            settings=settings,
            warn=warned,
            tolerate=tolerated,
            read_dtypes=resolve("read_dtypes", read_dtypes),
            keeping=keeping,
            observe=resolve("observe_fractions", observe_fractions),
            table_checks=table_checks,
            trend=trend,
            specs=tuple(specs),
            catalogue=tuple(catalogue),
            checks=tuple(plan(catalogue, settings, dy_schema.__name__)),
        )

    @property
    def partitions_def(self) -> dg.PartitionsDefinition | None:
        return self.specs[0].partitions_def if self.specs else None

    @property
    def blocking(self) -> bool:
        """Whether a failure of one of these checks can stop what runs downstream."""
        return any(spec.blocking for spec in self.specs)

    @property
    def description(self) -> str:
        return f"Rules of {self.schema.__name__} on the stored {self.key.to_user_string()} table."

    def run(
        self, context: dg.AssetCheckExecutionContext, selected: Collection[dg.AssetCheckKey]
    ) -> Iterator[CheckEvent]:
        """The results of the `selected` checks of this asset on the run's partition, and
        their observation when the plan observes fractions.

        Raises what reading the table raises (`SourceReadError`, `SourceConnectionError`,
        `RuleEvaluationError`), and `ColumnSchemaError` after the failing column check.
        """
        names = {k.name for k in selected if k.asset_key == self.key}
        reported: list[dg.AssetCheckResult] = []
        source = for_run(self.source, context, self.key)  # a database source names its table
        with reading(self.key, source), source.open_table(context, self.key) as table:
            outcome = schema_results(
                self.schema,
                as_lazy(table.frame, asset=self.key.to_user_string()),
                self.key,
                self.settings,
                warn=self.warn,
                tolerate=self.tolerate,
                checks=names,
                read_dtypes=self.read_dtypes,
                pushdown=table.pushdown,
                keep=None
                if self.keeping is None
                else Keeper(self.keeping, context, self.key, source, database=table.database),
                table=self.table_checks,
                reference=partition_end(context),
                trend=(
                    trend_history(context, self.key, self.trend) if TRENDS_CHECK in names else None
                ),
                resolved=(self.catalogue, self.checks),
            )
            # The column-schema check always runs (it reads only the frame's schema), but
            # Dagster accepts results only for the checks the run selected.
            ours = (result for result in outcome if result.check_name in names)
            wanted = [k for k in selected if k.asset_key == self.key]
            found = stopping_at_mismatch(ours, wanted, context.log)
            for event in observed(found, context) if self.observe else found:
                if isinstance(event, dg.AssetCheckResult):
                    reported.append(event)
                yield event
        _warn_if_empty(context, self.key, source, reported)


def _partitions_of(asset: AssetKeyLike) -> dg.PartitionsDefinition | None:
    """The partitions of the asset when `asset` is its definition (the checks take them, as
    `dd.with_schemas` gives each asset's to its checks)."""
    if isinstance(asset, (dg.AssetSpec, dg.AssetsDefinition)):
        return asset.partitions_def
    return None


def observed(
    results: Iterable[dg.AssetCheckResult], context: dg.AssetCheckExecutionContext
) -> Iterator[CheckEvent]:
    """`results`, then the observation of their failing fractions, of the run's partition."""
    partition = context.partition_key if context.has_partition_key else None
    return observing(results, partition=partition)


def stopping_at_mismatch(
    results: Iterable[dg.AssetCheckResult],
    selected: Collection[dg.AssetCheckKey],
    log: logging.Logger | dg.DagsterLogManager,
    *,
    consequence: str = "no rule is reported on this table",
) -> Iterator[dg.AssetCheckResult]:
    """`results`; when they stop at a column mismatch (`ColumnSchemaError`), one warning that
    names the checks of `selected` not reported, and the error again.

    One problem, one failure: the failing, blocking `dy_schema__columns` is what stops the run,
    and the checks it left unevaluated get no result, as in a gated asset's run (Dagster shows
    them as not executed), rather than one more failure each.
    """
    reported: set[tuple[dg.AssetKey | None, str | None]] = set()
    try:
        for result in results:
            reported.add((result.asset_key, result.check_name))
            yield result
    except ColumnSchemaError as error:
        skipped = sorted(
            key.to_user_string() for key in selected if (key.asset_key, key.name) not in reported
        )
        if skipped:
            columns = ", ".join(list(error.mismatches)[:10])
            shown = ", ".join(skipped[:20]) + (" and more" if len(skipped) > 20 else "")
            log.warning(
                f"{len(skipped)} check(s) not evaluated: {COLUMN_SCHEMA_CHECK} failed "
                f"({len(error.mismatches)} column(s) missing, of another dtype or with values not "
                f"cast: {columns}), so {consequence}. Not evaluated: {shown}."
            )
        raise


def _warn_if_empty(
    context: dg.AssetCheckExecutionContext,
    asset_key: dg.AssetKey,
    reader: Source,
    reported: Sequence[dg.AssetCheckResult],
) -> None:
    """A table that loaded no rows passes every rule: say so, so that a wrong partition
    expression or an empty load is visible."""
    rows = [r.metadata["dy_row_count"] for r in reported if "dy_row_count" in r.metadata]
    if rows and all(getattr(row, "value", row) == 0 for row in rows):
        context.log.warning(
            f"Asset {asset_key.to_user_string()} loaded 0 rows from {reader.describe()}"
            f"{_partition_note(context)}: every rule passes on an empty table. Check that the "
            "asset was materialized and, for a partition, the source's partition_expr."
        )


def _partition_note(context: dg.AssetCheckExecutionContext) -> str:
    if context.has_partition_key or context.has_partition_key_range:
        return f" for partition(s) {', '.join(context.partition_keys)}"
    return ""
