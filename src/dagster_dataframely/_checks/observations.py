"""The failing fractions where Dagster plots them (opt in: `observe_fractions=True`).

Dagster plots the numeric metadata of an asset's materializations and observations over time
(the asset's **Plots** tab), not that of its check results, which the check's execution
history only lists. So a check step that observes its fractions also yields one
`dg.AssetObservation` per asset it checked: `dy_failed_fraction/<check name>` for each check
result that carries one, and `dy_row_count`, the rows checked. It is one event per asset and
step, a few dozen bytes per check, and opt in because it adds an entry to the asset's event
history on every check run.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import dagster as dg

from . import figures as f

#: The metadata key of a check's failing fraction, on its result and (prefixed) observed.
FRACTION = f.FAILED_FRACTION


def observing(
    results: Iterable[dg.AssetCheckResult], *, partition: str | None
) -> Iterator[dg.AssetCheckResult | dg.AssetObservation]:
    """`results`, then one observation per asset among them of its checks' failing fractions
    (of `partition`, the run's partition key)."""
    by_asset: dict[dg.AssetKey, dict[str, dg.MetadataValue]] = {}
    for result in results:
        yield result
        fraction = result.metadata.get(FRACTION)
        if result.asset_key is None or fraction is None:
            continue
        observed = by_asset.setdefault(result.asset_key, {})
        observed[f"{FRACTION}/{result.check_name}"] = fraction
        rows = result.metadata.get(f.ROW_COUNT)
        if rows is not None:
            observed[f.ROW_COUNT] = rows
    for key, metadata in by_asset.items():
        yield dg.AssetObservation(
            asset_key=key,
            partition=partition,
            description="The failing fraction of each check of this run, to plot over time.",
            metadata=dict(sorted(metadata.items())),
        )
