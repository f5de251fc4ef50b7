"""Check names, the reserved `dy_` namespace, and the guards that keep names unique.

Check names are derived, never configured: `dy_rule__` + the Dataframely rule name with `|`
replaced by `__`. The quarantine frame uses the same names for its rule columns, so data
columns must stay out of the `dy_` namespace.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from .errors import CheckNameCollisionError, InvalidCheckNameError, ReservedColumnError

RESERVED_PREFIX = "dy_"
COLUMN_SCHEMA_CHECK = "dy_schema__columns"
SCHEMA_RULES_CHECK = "dy_schema__rules"

_DAGSTER_NAME = re.compile(r"^[A-Za-z0-9_]+$")


def check_name(rule: str) -> str:
    """The check name of a Dataframely rule: `amount|min` -> `dy_rule__amount__min`."""
    return "dy_rule__" + rule.replace("|", "__")


def column_check_name(column: str) -> str:
    """The check name that collects every rule of `column` (column granularity)."""
    return f"dy_col__{column}"


def guard_columns(schema_name: str, columns: Iterable[str]) -> None:
    """Refuse data columns in the reserved namespace, which quarantine rule columns use."""
    reserved = sorted(c for c in columns if c.startswith(RESERVED_PREFIX))
    if reserved:
        raise ReservedColumnError(
            f"Schema {schema_name} has columns in the reserved `{RESERVED_PREFIX}` namespace: "
            f"{', '.join(map(repr, reserved))}. dagster-dataframely names checks and quarantine "
            f"rule columns `{RESERVED_PREFIX}…`; rename these columns (`dy.Column(alias=...)` "
            "keeps the attribute name)."
        )


def guard_check_names(schema_name: str, names: Mapping[str, str]) -> None:
    """Refuse check names Dagster rejects, and two rules that share one check name.

    `names` maps each rule (or column) to the check name derived from it.
    """
    invalid = {rule: name for rule, name in names.items() if not _DAGSTER_NAME.match(name)}
    if invalid:
        listed = ", ".join(f"{rule!r} -> {name!r}" for rule, name in invalid.items())
        raise InvalidCheckNameError(
            f"Schema {schema_name} has rules whose check names Dagster cannot carry (only "
            f"letters, digits and `_` are allowed): {listed}. Rename the column or rule, or use "
            "check_granularity='schema', which reports every rule in one check."
        )
    owners: dict[str, list[str]] = {}
    for rule, name in names.items():
        owners.setdefault(name, []).append(rule)
    clashes = {name: rules for name, rules in owners.items() if len(rules) > 1}
    if clashes:
        listed = "; ".join(f"{name!r} <- {', '.join(map(repr, r))}" for name, r in clashes.items())
        raise CheckNameCollisionError(
            f"Schema {schema_name} has rules that map to the same check name: {listed}. "
            "Rename one of them so each rule keeps a check of its own."
        )
