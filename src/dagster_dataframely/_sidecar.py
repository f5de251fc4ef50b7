"""`dd.schema_checks`: a schema's checks beside an asset that already exists.

One `@dg.multi_asset_check` per asset reads the stored table back through the asset's own IO
manager (see `_loading`), or from the `source=` it is given (see `sources`), and reports one
check per rule; nothing about the asset changes.
Specs and results come from `check_specs` and `check_results`, with settings resolved once
here, so the names Dagster matches always agree.
"""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
import re
from collections.abc import Iterator, Sequence

import dagster as dg

from ._results import check_results
from ._schemas import SchemaLike, as_dataframely
from ._settings import CheckSettings
from ._specs import check_specs
from .sources import SourceLike, as_source, reading

#: Suffix of the step a sidecar runs in: `<asset key parts joined by __>__dy_checks`.
STEP_SUFFIX = "__dy_checks"


def schema_checks(
    schema: SchemaLike,
    *,
    asset: dg.AssetKey | str | Sequence[str],
    name: str | None = None,
    warn: Sequence[str] = (),
    blocking: bool | None = None,
    check_granularity: str | None = None,
    schema_rules: str | None = None,
    max_failure_samples: int | None = None,
    partitions_def: dg.PartitionsDefinition | None = None,
    source: SourceLike | None = None,
) -> dg.AssetChecksDefinition:
    """The checks of `schema` on an existing `asset`, evaluated on its stored table.

    One step (named `<key parts joined by __>__dy_checks` unless `name` is given, so two assets
    sharing a schema never clash) loads the asset through its IO manager, as a `pl.LazyFrame`
    where the IO manager can provide one, and yields a result for each selected check. A
    failing rule check has its rule's severity; `warn` makes more rules `"warn"` for this
    asset. A check is blocking when it reports an `"error"` rule, unless `blocking` says
    otherwise; the column-schema check is always blocking. With `partitions_def` (the asset's)
    the checks are partitioned and evaluate the partition the run materialized.

    `source` says where the table is read from when not through the asset's IO manager: a
    `dd.sources` source (a DuckDB table, parquet or Delta files) or a function
    `(context) -> frame`. The check requires the source's resource keys, so the run's
    resources (and their run config) read the table.

    Example:
        ```python
        defs = dg.Definitions(
            assets=[orders],
            asset_checks=[dd.schema_checks(Orders, asset="orders", warn=["note"])],
        )
        ```
    """
    dy_schema = as_dataframely(schema)
    key = dg.AssetKey.from_coercible(asset)
    reader = as_source(source)
    warn = tuple(warn)
    settings = CheckSettings.resolve(
        check_granularity=check_granularity,
        schema_rules=schema_rules,
        max_failure_samples=max_failure_samples,
    )
    specs = check_specs(
        dy_schema,
        asset=key,
        warn=warn,
        check_granularity=settings.check_granularity,
        schema_rules=settings.schema_rules,
        blocking=blocking,
        partitions_def=partitions_def,
    )

    @dg.multi_asset_check(
        name=name or step_name(key),
        specs=specs,
        can_subset=True,
        required_resource_keys=set(reader.required_resource_keys),
        description=f"Rules of {dy_schema.__name__} on the stored {key.to_user_string()} table.",
    )
    def _checks(context: dg.AssetCheckExecutionContext) -> Iterator[dg.AssetCheckResult]:
        selected = {k.name for k in context.selected_asset_check_keys if k.asset_key == key}
        with reading(key, reader), reader.open(context, key) as frame:
            for result in check_results(
                dy_schema,
                frame,
                asset_key=key,
                warn=warn,
                check_granularity=settings.check_granularity,
                schema_rules=settings.schema_rules,
                max_failure_samples=settings.max_failure_samples,
                checks=selected,
            ):
                # The column-schema check always runs (it reads only the frame's schema),
                # but Dagster accepts results only for the checks the run selected.
                if result.check_name in selected:
                    yield result

    return _checks


def step_name(asset_key: dg.AssetKey) -> str:
    """The default step name of the sidecar on `asset_key`: unique per asset."""
    parts = [re.sub(r"\W", "_", part) for part in asset_key.path]
    return "__".join(parts) + STEP_SUFFIX
