"""The one place that reads Dataframely internals.

Dataframely has no public way to list a schema's rules before validation (its issue #272).
Two facts are read here, each pinned by `tests/test_dataframely_private.py`:

- `Schema._validation_rules(with_cast=False)`: every rule `Schema.filter(cast=False)`
  evaluates, by name, in order. Check names, counts and quarantine columns rest on it.
- A `@dy.rule` function stays on the schema class as a `RuleFactory` whose
  `validation_fn` is the decorated function: rule descriptions come from its docstring.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import dataframely as dy
import polars as pl


def rule_expressions(schema: type[dy.Schema]) -> dict[str, pl.Expr]:
    """Every rule `Schema.filter(df, cast=False)` evaluates: name -> boolean expression."""
    return {name: rule.expr for name, rule in schema._validation_rules(with_cast=False).items()}


def schema_rule_function(schema: type[dy.Schema], name: str) -> Callable[..., Any] | None:
    """The function decorated with `@dy.rule()` that defines the schema-level rule `name`."""
    factory = getattr(schema, name, None)
    function = getattr(factory, "validation_fn", None)
    return function if callable(function) else None


def rule_owner(rule: str, columns: list[str]) -> tuple[str | None, str]:
    """Split a rule name into its column (None for schema-level rules) and its suffix.

    Column rules are named `<column>|<suffix>`; a column name may itself contain `|`, so
    the longest column that prefixes the name wins.
    """
    owners = [c for c in columns if rule.startswith(f"{c}|")]
    if not owners:
        return None, rule
    column = max(owners, key=len)
    return column, rule[len(column) + 1 :]
