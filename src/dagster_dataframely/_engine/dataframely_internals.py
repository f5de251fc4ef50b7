"""The one place that reads Dataframely internals.

Dataframely has no public way to list a schema's rules before validation (its issue #272).
Two facts are read here, each pinned by `tests/test_dataframely_private.py`:

- `Schema._validation_rules(with_cast=False)`: every rule `Schema.filter(cast=False)`
  evaluates, by name, in order. Check names, counts and quarantine columns rest on it.
- A `@dy.rule` function stays on the schema class as a `RuleFactory` whose
  `validation_fn` is the decorated function: rule descriptions come from its docstring.
- `Collection._filters()`: every `@dy.filter` of a collection by name, each a `Filter` whose
  `logic` is the decorated function (collection filter checks and their descriptions).
- `Collection._init(frames)`: the collection instance `Collection.filter` hands its filters,
  built from member frames without validating them (filters run on the valid rows).
"""

from __future__ import annotations

from collections.abc import Callable, Container
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


def rule_owner(rule: str, columns: Container[str]) -> tuple[str | None, str]:
    """Split a rule name into its column (None for schema-level rules) and its suffix.

    Column rules are named `<column>|<suffix>`; a column name may itself contain `|`, so
    the longest column that prefixes the name wins. Only the prefixes ending before a `|` of
    the name are looked up, so a schema's rules map to columns in one pass, however wide.
    """
    cut = rule.rfind("|")
    while cut > 0:
        if rule[:cut] in columns:
            return rule[:cut], rule[cut + 1 :]
        cut = rule.rfind("|", 0, cut)
    return None, rule


def collection_filters(collection: type[dy.Collection]) -> dict[str, Callable[[Any], pl.LazyFrame]]:
    """Every `@dy.filter` of `collection`: name -> the decorated function, in definition order."""
    return {name: f.logic for name, f in collection._filters().items()}


def collection_instance(collection: type[dy.Collection], frames: dict[str, pl.LazyFrame]) -> Any:
    """The collection instance a filter receives, over `frames` (absent optional members are
    None), as `Collection.filter` builds it: no validation, no copy."""
    return collection._init(frames)
