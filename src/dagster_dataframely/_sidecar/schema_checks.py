"""`dd.schema_checks`: a schema's checks beside an asset that already exists.

One `@dg.multi_asset_check` per asset reads the stored table back through the asset's own IO
manager (see `_loading`), or from the `source=` it is given (see `sources`), and reports one
check per rule; nothing about the asset changes.
The asset's `CheckPlan` holds its specs and everything its results need, resolved once here,
so the names Dagster matches always agree.
"""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
import hashlib
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import dagster as dg

from .._checks.asset_keys import AssetKeyLike
from .._checks.graph_internals import guard
from .._checks.summary import summarized
from .._engine.naming import dagster_name
from .._engine.read_dtypes import ReadDtypes
from .._engine.schemas import SchemaLike
from .._engine.table_checks import ExpectFresh, ExpectRows
from .._engine.trends import Trends
from ..sources import SourceLike
from .check_plan import CheckEvent, CheckPlan

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
    checks = CheckPlan.of(
        schema,
        asset=asset,
        warn=warn,
        tolerate=tolerate,
        blocking=blocking,
        check_granularity=check_granularity,
        schema_rules=schema_rules,
        max_failure_samples=max_failure_samples,
        partitions_def=partitions_def,
        source=source,
        read_dtypes=read_dtypes,
        keep_failing_rows=keep_failing_rows,
        max_failing_rows=max_failing_rows,
        expect_rows=expect_rows,
        expect_fresh=expect_fresh,
        trends=trends,
        observe_fractions=observe_fractions,
    )
    return one_step(checks, name or step_name(checks.key))


def one_step(checks: CheckPlan, name: str) -> dg.AssetChecksDefinition:
    """The checks of one asset's plan as a step of their own, named `name`."""

    @dg.multi_asset_check(
        name=name,
        specs=checks.specs,
        can_subset=True,
        required_resource_keys=set(checks.source.required_resource_keys),
        description=checks.description,
    )
    def _checks(context: dg.AssetCheckExecutionContext) -> Iterator[CheckEvent]:
        yield from summarized(checks.run(context, context.selected_asset_check_keys), context.log)

    return guard(_checks, by="dd.schema_checks(asset={key})")


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
