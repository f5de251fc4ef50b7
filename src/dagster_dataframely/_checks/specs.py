"""Which checks a schema has, and their `dg.AssetCheckSpec`s.

The granularity decides how rules map to checks; the same plan names the specs and the
results, so the two always agree.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import dagster as dg

from .._engine.catalogue import Rule, rules
from .._engine.naming import (
    COLUMN_SCHEMA_CHECK,
    FRESHNESS_CHECK,
    ROW_COUNT_CHECK,
    SCHEMA_RULES_CHECK,
    TRENDS_CHECK,
    column_check_name,
    guard_check_names,
)
from .._engine.schemas import SchemaLike, as_dataframely
from .._engine.settings import CheckSettings
from .._engine.table_checks import ExpectFresh, ExpectRows, TableChecks
from .._engine.trends import Trends
from ..errors import InvalidSettingError
from .asset_keys import parse_asset_key

_MAX_DESCRIPTION = 600


@dataclass(frozen=True)
class Check:
    """One asset check and the rules it reports."""

    name: str
    rules: tuple[Rule, ...]

    @property
    def has_error_rule(self) -> bool:
        """Whether a rule of the check can fail it at `ERROR` (within its tolerance)."""
        return any(rule.limits.can_error for rule in self.rules)

    @property
    def description(self) -> str:
        if len(self.rules) == 1:
            return self.rules[0].description
        text = "; ".join(
            rule.description + (" (warn)" if rule.severity == "warn" else "") for rule in self.rules
        )
        return text if len(text) <= _MAX_DESCRIPTION else text[: _MAX_DESCRIPTION - 1] + "…"


def plan(catalogue: Sequence[Rule], settings: CheckSettings, schema_name: str) -> list[Check]:
    """Group the catalogue into checks, by `check_granularity` and `schema_rules`.

    Raises `CheckNameCollisionError` when two columns map to one `dy_col__` check name.
    """
    if settings.check_granularity == "schema":
        return [Check(SCHEMA_RULES_CHECK, tuple(catalogue))] if catalogue else []
    if settings.check_granularity == "rule":
        return [Check(rule.check_name, (rule,)) for rule in catalogue]
    by_column: dict[str, list[Rule]] = {}
    for rule in catalogue:
        if rule.column is not None:
            by_column.setdefault(rule.column, []).append(rule)
    names = {column: column_check_name(column) for column in by_column}
    guard_check_names(schema_name, names)
    checks = [Check(names[column], tuple(r)) for column, r in by_column.items()]
    unowned = [rule for rule in catalogue if rule.column is None]
    if settings.schema_rules == "per_rule":
        checks += [Check(rule.check_name, (rule,)) for rule in unowned]
    elif unowned:
        checks.append(Check(SCHEMA_RULES_CHECK, tuple(unowned)))
    return checks


def check_specs(
    schema: SchemaLike,
    *,
    asset: dg.AssetKey | str | Sequence[str],
    warn: str | Sequence[str] = (),
    tolerate: Mapping[str, Any] | None = None,
    check_granularity: str | None = None,
    schema_rules: str | None = None,
    quarantine: bool = False,
    blocking: bool | None = None,
    partitions_def: dg.PartitionsDefinition | None = None,
    expect_rows: ExpectRows | Mapping[str, Any] | None = None,
    expect_fresh: ExpectFresh | Mapping[str, Any] | None = None,
    trends: Trends | Mapping[str, Any] | None = None,
) -> list[dg.AssetCheckSpec]:
    """A spec for every check `schema` defines on `asset`, the column-schema check first,
    the table checks (`dd.expect_rows`, `dd.expect_fresh`, or `expect_rows`, `expect_fresh`
    for this asset) last, and with `trends` (`dd.Trends(...)`) the trend check after them.

    `dy_schema__columns` is always blocking. A rule check is blocking when it reports an
    `"error"` rule (one its tolerance lets fail at `ERROR`) and the asset does not
    quarantine; `blocking` overrides that. Dagster blocks only on a failure at `ERROR`.
    Pass the same `warn`, `tolerate`, `check_granularity`, `schema_rules`, `expect_rows`,
    `expect_fresh` and `trends` to the call that yields results.
    """
    dy_schema = as_dataframely(schema)
    settings = CheckSettings.resolve(check_granularity=check_granularity, schema_rules=schema_rules)
    key = parse_asset_key(asset)
    specs = [
        check_spec(
            COLUMN_SCHEMA_CHECK,
            asset=key,
            description=f"Every column of {dy_schema.__name__} is present with its dtype "
            "(never cast).",
            blocking=True,
            partitions_def=partitions_def,
        )
    ]
    catalogue = rules(dy_schema, warn=warn, tolerate=tolerate)
    for check in plan(catalogue, settings, dy_schema.__name__):
        specs.append(
            check_spec(
                check.name,
                asset=key,
                description=check.description,
                blocking=(check.has_error_rule and not quarantine)
                if blocking is None
                else blocking,
                partitions_def=partitions_def,
            )
        )
    table = TableChecks.of(dy_schema, expect_rows=expect_rows, expect_fresh=expect_fresh)
    specs += table_specs(table, asset=key, blocking=blocking, partitions_def=partitions_def)
    trend = Trends.of(trends, where=f"asset {key.to_user_string()}")
    if trend is not None:
        specs.append(trend_spec(trend, asset=key, blocking=blocking, partitions_def=partitions_def))
    return specs


def trend_spec(
    trends: Trends,
    *,
    asset: dg.AssetKey,
    blocking: bool | None,
    partitions_def: dg.PartitionsDefinition | None,
) -> dg.AssetCheckSpec:
    """The spec of the trend check; blocking when it fails at `ERROR`, unless `blocking`
    says."""
    return check_spec(
        TRENDS_CHECK,
        asset=asset,
        description=trends.description,
        blocking=trends.severity == "error" if blocking is None else blocking,
        partitions_def=partitions_def,
    )


def table_specs(
    table: TableChecks,
    *,
    asset: dg.AssetKey,
    blocking: bool | None,
    partitions_def: dg.PartitionsDefinition | None,
) -> list[dg.AssetCheckSpec]:
    """A spec per table check; blocking when it fails at `ERROR`, unless `blocking` says."""
    declared: list[tuple[str, ExpectRows | ExpectFresh]] = []
    if table.rows is not None:
        declared.append((ROW_COUNT_CHECK, table.rows))
    if table.fresh is not None:
        declared.append((FRESHNESS_CHECK, table.fresh))
    return [
        check_spec(
            name,
            asset=asset,
            description=check.description,
            blocking=check.severity == "error" if blocking is None else blocking,
            partitions_def=partitions_def,
        )
        for name, check in declared
    ]


def check_spec(
    name: str,
    *,
    asset: dg.AssetKey,
    description: str,
    blocking: bool,
    partitions_def: dg.PartitionsDefinition | None,
) -> dg.AssetCheckSpec:
    """A `dg.AssetCheckSpec`. The checks of a partitioned asset must be partitioned like it,
    which Dagster marks a preview feature with a `PreviewWarning` per spec: the package, not
    the user, makes that choice (docs/sidecar.md), so the warning is not passed on."""
    if not isinstance(blocking, bool):  # Dagster's own check names neither asset nor fix
        raise InvalidSettingError(
            f"Invalid setting from argument blocking={blocking!r} (the checks of asset "
            f"{asset.to_user_string()}): expected true or false. Fix the argument, or unset "
            "it so that each check blocks when it fails at ERROR."
        )
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore",
            message="Specifying a partitions_def on an AssetCheckSpec",
            category=dg.PreviewWarning,
        )
        return dg.AssetCheckSpec(
            name,
            asset=asset,
            description=description,
            blocking=blocking,
            partitions_def=partitions_def,
        )
