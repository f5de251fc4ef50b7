"""The rule catalogue: every rule of a schema, known before any data is seen.

Every surface of the package (Columns tab, check specs, evaluation, quarantine) reads the
same `Rule` records, so a rule has one name, one check name and one severity everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import dataframely as dy
import polars as pl

from .constraints import docstring_summary, expression_text, render
from .dataframely_internals import rule_expressions, rule_owner, schema_rule_function
from .naming import check_name, guard_check_names, guard_columns
from .schemas import SchemaLike, as_dataframely
from .severity import Severity, warn_names, warned_rules
from .table_verdicts import judges_table
from .tolerance import ZERO, Tolerance, overrides, resolve

_MAX_EXPRESSION = 400


@dataclass(frozen=True)
class Rule:
    """One Dataframely rule, as Dagster reports it.

    Attributes:
        name: The Dataframely rule name: `amount|min`, `primary_key`,
            `paid_orders_have_amount`.
        column: The column the rule belongs to; None for schema-level rules.
        check_name: The rule's own check name, also its column name in the quarantine frame.
        severity: `"error"` or `"warn"`.
        description: The rule's docstring, else its rendered constraint (`amount >= 0`), else
            its name.
        expression: The polars expression as a user writes it, `pl.col("amount") >= 0`
            (shortened when long).
        expr: The boolean expression Dataframely evaluates; `False` marks a failing row.
        distinct_over: For `unique` and primary-key rules: the columns whose combined values
            must be distinct. Such rules are counted by a grouped count instead of a window
            expression.
        judges_table: A verdict of one value for the whole table (`pl.len() > 0`) fails even
            an empty table, which has no row to carry it: so Pandera's checks, which the
            translation marks. Dataframely counts rows, so its own rules pass an empty table.
        tolerance: The failing rows its check tolerates (`dd.tolerate`, `tolerate=`); None
            for its severity's zero tolerance.
        kind: What the rule checks, so no backend parses its name again: a column rule's
            Dataframely suffix (`min`, `max_exclusive`, `regex`, `nullability`, `is_in`,
            `min_length`, `unique`, `check`, `check__<name>`, `inner_...`), `primary_key`,
            `rule` for a `@dy.rule`, `cast` for a cast's rule, `filter` and
            `failure_propagation` for a collection's.
        value: The constraint's value where its kind has one: the bound, the pattern, the
            `is_in` values (a tuple), the length, the resolution; a propagating member's
            name; else None.
    """

    name: str
    column: str | None
    check_name: str
    severity: Severity
    description: str
    expression: str
    expr: pl.Expr = field(repr=False, compare=False)
    distinct_over: tuple[str, ...] | None = None
    judges_table: bool = False
    tolerance: Tolerance | None = None
    kind: str = "rule"
    value: Any = field(default=None, compare=False)

    @property
    def limits(self) -> Tolerance:
        """The tolerance its check applies: its own, else its severity's zero tolerance."""
        return self.tolerance or ZERO[self.severity]


def rules(
    schema: SchemaLike,
    *,
    warn: str | Iterable[str] = (),
    tolerate: Mapping[str, Any] | None = None,
) -> list[Rule]:
    """Every rule of `schema`, in Dataframely's order, with `warn` (one name or several)
    added to its `"warn"` rules, and the tolerances of `dd.tolerate` with `tolerate`
    (`{rule or column name: dd.Tolerance}`) overriding them.

    Raises the naming errors (`ReservedColumnError`, `CheckNameCollisionError`),
    `InvalidSeverityError` and `InvalidToleranceError` here, at definition time.
    """
    dy_schema = as_dataframely(schema)
    override = overrides(dy_schema.__name__, tolerate)
    return list(_rules(dy_schema, frozenset(warn_names(warn)), frozenset(override.items())))


@lru_cache(maxsize=256)
def _rules(
    schema: type[dy.Schema],
    warn: frozenset[str],
    tolerate: frozenset[tuple[str, Tolerance]] = frozenset(),
) -> tuple[Rule, ...]:
    columns = schema.columns()
    guard_columns(schema.__name__, columns)
    expressions = rule_expressions(schema)
    guard_check_names(schema.__name__, {rule: check_name(rule) for rule in expressions})
    owned = {name: rule_owner(name, columns) for name in expressions}
    warned = warned_rules(schema, warn, owners={name: o[0] for name, o in owned.items()})
    judging = judges_table(schema)
    severities: dict[str, Severity] = {
        name: "warn" if name in warned else "error" for name in expressions
    }
    owners = {name: o[0] for name, o in owned.items()}
    tolerances = resolve(schema, owners, severities, dict(tolerate))
    catalogue = []
    for name, expr in expressions.items():
        column, suffix = owned[name]
        text = expression_text(expr)
        if column is None:
            description = _schema_rule_description(schema, name)
        else:
            description = render(column, columns[column], suffix, expression=text) or name
        catalogue.append(
            Rule(
                name=name,
                column=column,
                check_name=check_name(name),
                severity=severities[name],
                description=description,
                expression=text if len(text) <= _MAX_EXPRESSION else text[:_MAX_EXPRESSION] + "…",
                expr=expr,
                distinct_over=_distinct_over(schema, column, suffix),
                judges_table=name in judging,
                tolerance=tolerances.get(name),
                kind=suffix if column is not None or suffix == "primary_key" else "rule",
                value=None if column is None else _value(columns[column], suffix),
            )
        )
    return tuple(catalogue)


#: The kinds whose constraint value is the column setting of the same name.
_VALUED = frozenset(
    ("min", "min_exclusive", "max", "max_exclusive", "min_length", "max_length", "regex")
) | {"resolution"}


def _value(column: dy.Column, kind: str) -> Any:
    """The constraint value of a column rule of `kind`, read once from the column's settings."""
    if kind == "is_in":
        return tuple(column.is_in)  # type: ignore[attr-defined]
    return getattr(column, kind, None) if kind in _VALUED else None


def _schema_rule_description(schema: type[dy.Schema], name: str) -> str:
    if name == "primary_key":
        return f"primary key ({', '.join(schema.primary_key())}) is unique"
    function = schema_rule_function(schema, name)
    return (docstring_summary(function) if function else None) or name


def _distinct_over(
    schema: type[dy.Schema], column: str | None, suffix: str
) -> tuple[str, ...] | None:
    if column is None and suffix == "primary_key":
        keys = tuple(schema.primary_key())
    elif column is not None and suffix == "unique":
        keys = (column,)
    else:
        return None
    # A grouped count agrees with `is_unique` except for struct columns, where polars'
    # `is_unique` equates a null struct with a struct of nulls and `group_by` does not.
    columns = schema.columns()
    if any(isinstance(columns[key].dtype, pl.Struct) for key in keys):
        return None
    return keys
