"""A schema's code version: a stable hash of everything that decides what it accepts.

`dd.asset` combines it with the user's `code_version`, so changing a schema (a column, a
dtype, a rule or its expression, a severity) marks the asset changed in Dagster's UI. The
hash is built from text only (sha256 over JSON), never from `hash()` or reprs carrying
memory addresses, so every process and Python run computes the same value.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

import dataframely as dy
import polars as pl

from .catalogue import Rule, rules
from .dataframely_internals import rule_expressions
from .table_checks import NO_TABLE_CHECKS, TableChecks

_DIGITS = 12
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def schema_version(
    schema: type[dy.Schema],
    *,
    warn: tuple[str, ...] = (),
    tolerate: Mapping[str, Any] | None = None,
    table: TableChecks = NO_TABLE_CHECKS,
) -> str:
    """The first hex digits of the sha256 of `schema`'s columns, rules, severities,
    tolerances (the asset's `tolerate` over the schema's) and table checks: each decides
    what a gated asset writes. A rule without a tolerance, and a schema without table
    checks, hash as they did before either existed."""
    catalogue = {rule.name: rule for rule in rules(schema, warn=warn, tolerate=tolerate)}
    document = {
        "columns": [
            [name, str(column.dtype), column.nullable, column.primary_key]
            for name, column in schema.columns().items()
        ],
        "rules": [
            [name, _expression(expr), catalogue[name].severity, *_tolerance(catalogue[name])]
            for name, expr in rule_expressions(schema).items()
        ],
    }
    if table != NO_TABLE_CHECKS:
        document["table"] = repr(table)  # dataclasses of text, numbers and timedeltas
    text = json.dumps(document, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:_DIGITS]


def code_version(
    schema: type[dy.Schema],
    *,
    warn: tuple[str, ...] = (),
    tolerate: Mapping[str, Any] | None = None,
    table: TableChecks = NO_TABLE_CHECKS,
    user: str | None = None,
) -> str:
    """The asset's code version: the user's (if any), then `schema.<hash>`."""
    version = f"schema.{schema_version(schema, warn=warn, tolerate=tolerate, table=table)}"
    return version if user is None else f"{user}+{version}"


def _tolerance(rule: Rule) -> list[str]:
    return [] if rule.tolerance is None else [str(rule.tolerance)]


def _expression(expr: pl.Expr) -> str:
    """The whole expression: its JSON plan (every literal, where `str()` cuts long lists),
    else, for Python functions polars cannot serialize, its text without addresses."""
    try:
        return expr.meta.serialize(format="json")
    except pl.exceptions.PolarsError:
        return _ADDRESS.sub("", str(expr))
