"""`dd.schema_checks`: a schema's checks beside an asset that already exists.

One `@dg.multi_asset_check` per asset reads the stored table back through the asset's own IO
manager (see `_loading`), or from the `source=` it is given (see `sources`), and reports one
check per rule; nothing about the asset changes.
Specs and results come from `check_specs` and `check_results`, with settings resolved once
here, so the names Dagster matches always agree.
"""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
import hashlib
import json
import logging
import re
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import Any

import dagster as dg

from .._checks.asset_keys import AssetKeyLike, parse_asset_key
from .._checks.graph_internals import guard
from .._checks.observations import observing
from .._checks.results import schema_results
from .._checks.specs import check_specs
from .._checks.table_results import partition_end
from .._checks.trend_history import trend_history
from .._engine.evaluate import as_lazy
from .._engine.naming import COLUMN_SCHEMA_CHECK, TRENDS_CHECK, dagster_name
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

#: Suffix of the step a sidecar runs in: `<asset key parts joined by __>__dy_checks`.
STEP_SUFFIX = "__dy_checks"
# A key part whose join with `__` reads back unambiguously: no `__`, no `_` at either end.
_PLAIN_PART = re.compile(r"^[A-Za-z0-9]+(?:_[A-Za-z0-9]+)*$")


def schema_checks(
    schema: SchemaLike,
    *,
    asset: AssetKeyLike,
    name: str | None = None,
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
) -> dg.AssetChecksDefinition:
    """The checks of `schema` on an existing `asset`, evaluated on its stored table.

    `asset` is the asset's definition (its `@dg.asset`, or the `dg.AssetSpec` of a table
    another tool makes), the spelling a typo cannot break, or its `AssetKey` or user string
    (`"raw/orders"`). A key that the code location does not declare (a typo, for which Dagster
    would add a stub asset that nothing materializes) fails the code location's load, and so
    `dagster definitions validate`, with `UnknownAssetError` and the closest declared keys.

    One step (named `<key parts joined by __>__dy_checks` unless `name` is given, so two assets
    sharing a schema never clash) loads the asset through its IO manager, as a `pl.LazyFrame`
    where the IO manager can provide one, and yields a result for each selected check. A
    failing rule check has its rule's severity; `warn` makes more rules `"warn"` for this
    asset. A check passes within its rules' tolerances (`dd.tolerate` on the schema;
    `tolerate={"rule or column": dd.Tolerance(warn_above=10, error_above="1%")}` overrides them
    for this asset) and otherwise fails at the level it crossed. A check is blocking when it
    can fail at `ERROR`, unless `blocking` says otherwise, and blocks only a failure at
    `ERROR`; the column-schema check is always blocking. With `partitions_def` (the asset's)
    the checks are partitioned and evaluate the partition the run materialized.

    `source` says where the table is read from when not through the asset's IO manager: a
    `dd.sources` source (a DuckDB table, parquet or Delta files) or a function
    `(context) -> frame`. The check requires the source's resource keys, so the run's
    resources (and their run config) read the table.

    `read_dtypes="cast"` casts the dtypes a warehouse or pandas round trip changes (an `Enum`
    read as `String`, `Etc/UTC` for `UTC`, a `Date` read as a `Datetime`, an integer width)
    back to the declared ones, and only those; each cast is reported on `dy_schema__columns`,
    and a value the cast would change or lose fails it. The default, `"strict"`, never casts.

    `keep_failing_rows=True` keeps each run's failing rows (every column of the schema, one
    Boolean per rule named by its check name, the run id and the partition key) where the
    data lives: in a database source's `<table>__dy_failures` table, written inside the
    database, else in one parquet file per partition in `<asset>__dy_failures/` beside the
    table; a string names the schema (database) or directory (files) to keep them in
    instead. At most `max_failing_rows` rows (default 1,000,000) per run;
    the counts stay exact. Each failing check carries the address and a query
    (`dy_failing_rows`). `dd.failures_asset(schema, asset=asset)` declares the kept rows
    as an asset downstream of `asset`, with its Columns tab.

    `expect_rows` (`dd.ExpectRows(min=, max=)`) and `expect_fresh` (`dd.ExpectFresh(column,
    within=)`) replace the schema's `dd.expect_rows` and `dd.expect_fresh` for this asset:
    the checks `dy_table__row_count` and `dy_table__freshness`, of the run's partition for a
    partitioned asset, freshness measured from a time partition's end, else from now.
    `trends` (`dd.Trends(window=20, k=3.0)`) adds `dy_table__trends`: this run's row count and
    each rule's failing fraction against the last evaluations in the Dagster instance (of the
    same partition key, or of any partition for time-window partitions).
    `observe_fractions=True` also yields a `dg.AssetObservation` of every check's
    `dy_failed_fraction` (and the rows checked), which the asset's Plots tab graphs over time.

    Example:
        ```python
        defs = dg.Definitions(
            assets=[orders],
            asset_checks=[dd.schema_checks(Orders, asset=orders, warn=["note"])],
        )
        ```
    """
    dy_schema = as_dataframely(schema)
    key = parse_asset_key(asset)
    reader = as_source(source)
    warn = warn_names(warn)
    tolerate = overrides(dy_schema.__name__, tolerate)
    settings = CheckSettings.resolve(
        check_granularity=check_granularity,
        schema_rules=schema_rules,
        max_failure_samples=max_failure_samples,
    )
    read: ReadDtypes = resolve("read_dtypes", read_dtypes)
    keeping = KeepFailingRows.resolve(keep_failing_rows, max_failing_rows)
    observe = resolve("observe_fractions", observe_fractions)
    table_checks = TableChecks.of(dy_schema, expect_rows=expect_rows, expect_fresh=expect_fresh)
    trend = Trends.of(trends, where=f"asset {key.to_user_string()}")
    specs = check_specs(
        dy_schema,
        asset=key,
        warn=warn,
        tolerate=tolerate,
        check_granularity=settings.check_granularity,
        schema_rules=settings.schema_rules,
        blocking=blocking,
        partitions_def=partitions_def or _partitions_of(asset),
        expect_rows=table_checks.rows,
        expect_fresh=table_checks.fresh,
        trends=trend,
    )

    @dg.multi_asset_check(
        name=name or step_name(key),
        specs=specs,
        can_subset=True,
        required_resource_keys=set(reader.required_resource_keys),
        description=f"Rules of {dy_schema.__name__} on the stored {key.to_user_string()} table.",
    )
    def _checks(context: dg.AssetCheckExecutionContext) -> Iterator[CheckEvent]:
        selected = {k for k in context.selected_asset_check_keys if k.asset_key == key}
        names = {k.name for k in selected}
        reported: list[dg.AssetCheckResult] = []
        source = for_run(reader, context, key)  # a database source names its table
        with reading(key, source), source.open_table(context, key) as table:
            outcome = schema_results(
                dy_schema,
                as_lazy(table.frame, asset=key.to_user_string()),
                key,
                settings,
                warn=warn,
                tolerate=tolerate,
                checks=names,
                read_dtypes=read,
                pushdown=table.pushdown,
                keep=None
                if keeping is None
                else Keeper(keeping, context, key, source, database=table.database),
                table=table_checks,
                reference=partition_end(context),
                trend=trend_history(context, key, trend) if TRENDS_CHECK in names else None,
            )
            # The column-schema check always runs (it reads only the frame's schema), but
            # Dagster accepts results only for the checks the run selected.
            ours = (result for result in outcome if result.check_name in names)
            found = stopping_at_mismatch(ours, selected, context.log)
            for event in observed(found, context) if observe else found:
                if isinstance(event, dg.AssetCheckResult):
                    reported.append(event)
                yield event
        _warn_if_empty(context, key, source, reported)

    return guard(_checks, by="dd.schema_checks(asset={key})")


#: What a check step yields: its results, and the observation of their fractions (opt in).
CheckEvent = dg.AssetCheckResult | dg.AssetObservation


def observed(
    results: Iterable[dg.AssetCheckResult], context: dg.AssetCheckExecutionContext
) -> Iterator[CheckEvent]:
    """`results`, then the observation of their failing fractions, of the run's partition."""
    partition = context.partition_key if context.has_partition_key else None
    return observing(results, partition=partition)


def _partitions_of(asset: AssetKeyLike) -> dg.PartitionsDefinition | None:
    """The partitions of the asset when `asset` is its definition (the checks take them, as
    `dd.with_schemas` gives each asset's to its checks)."""
    if isinstance(asset, (dg.AssetSpec, dg.AssetsDefinition)):
        return asset.partitions_def
    return None


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


def step_name(asset_key: dg.AssetKey) -> str:
    """The default step name of the sidecar on `asset_key`: unique per asset, the same in
    every process.

    Key parts of letters and digits joined by single `_` give `raw__orders__dy_checks`. Any
    other key (`sales-eu/orders`, `größe`, `a__b`) is spelled as a Dagster name and followed
    by `___` and a digest of its parts, so `sales-eu/orders` and `sales_eu/orders` get steps
    of their own; no key of the first kind contains `___`.
    """
    if all(_PLAIN_PART.match(part) for part in asset_key.path):
        return "__".join(asset_key.path) + STEP_SUFFIX
    spelled = "__".join(dagster_name(part) for part in asset_key.path)
    digest = hashlib.blake2b(json.dumps(asset_key.path).encode(), digest_size=4).hexdigest()
    return f"{spelled}___{digest}{STEP_SUFFIX}"
