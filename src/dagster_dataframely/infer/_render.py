"""Source text of an inferred schema: one `dy.Schema` class named after the table.

A column's declaration says what the database declares (its type as the sources read it, `NOT
NULL`, the primary key, a float's NaN and infinities), nothing more. What a profile suggests
is written above it as `# proposed` comments, never as rules; a column with no Dataframely
type is a comment naming its type.
"""

from __future__ import annotations

import textwrap
from typing import Any

from .._writing.columns import ColumnType, DtypeError, polars_column_type
from .._writing.layout import INDENT, Module, call, comment, docstring, formatted
from .._writing.literals import literal, string
from .._writing.names import attribute_name, identifier
from ._columns import InferredColumn, InferredTable, Profile
from ._profile import FEW_VALUES


def render(table: InferredTable, class_name: str, *, about: str) -> str:
    """The module text: imports, and the class with one declaration per column and one
    method per rule; `about` is the module docstring's paragraph on where it comes from."""
    module = Module(third_party={"import dataframely as dy"})
    taken: set[str] = {rule.name for rule in table.rules}
    keyed = any(column.primary_key for column in table.columns)
    body = [line for note in table.notes for line in comment(note, INDENT)]
    for column in table.columns:
        kind = _column_type(column)
        if isinstance(kind, str):
            body += _undeclared(column, kind)
            continue
        profile = table.profiles.get(column.name)
        if profile is not None:
            body += _proposals(column, profile, keyed)
        body += _declaration(column, kind, module, taken)
    for rule in table.rules:
        module.third_party.add("import polars as pl")
        body += ["", f"{INDENT}@dy.rule()", f"{INDENT}def {rule.name}(cls) -> pl.Expr:"]
        body += [*docstring(rule.doc, INDENT * 2), f"{INDENT * 2}return {rule.returned}"]
    decorators = _decorators(table)
    if decorators:
        module.third_party.add("import dagster_dataframely as dd")
    lines = [*_header(class_name, table, about), "", module.import_block(), "", "", *decorators]
    lines += [f"class {class_name}(dy.Schema):", *(body or [f"{INDENT}pass"])]
    if table.replaces:
        lines += ["", "", "#: The Dagster check that takes over each dbt test of the model."]
        lines += ["DBT_TESTS = {"]
        lines += [f"{INDENT}{string(t)}: {string(c)}," for t, c in table.replaces.items()]
        lines += ["}"]
    return formatted("\n".join(lines) + "\n")


def _decorators(table: InferredTable) -> list[str]:
    """`@dd.warn(...)` for the rules of severity warn, `@dd.tolerate(...)` for each tolerance."""
    lines = ["@" + call("dd.warn", [string(name) for name in table.warn], "")] if table.warn else []
    for tolerated in table.tolerances:
        args = [string(tolerated.rule)]
        if tolerated.warn_above is not None:
            args.append(f"warn_above={tolerated.warn_above}")
        if tolerated.error_above is not None:
            args.append(f"error_above={tolerated.error_above}")
        lines.append("@" + call("dd.tolerate", args, ""))
    return lines


def _column_type(column: InferredColumn) -> ColumnType | str:
    """The column's Dataframely type, or why it has none."""
    if column.unreadable is not None:
        return column.unreadable
    if column.dtype is None:
        return ColumnType("Any")
    try:
        return polars_column_type(column.dtype)
    except DtypeError as error:
        return str(error)


def _declaration(
    column: InferredColumn, kind: ColumnType, module: Module, taken: set[str]
) -> list[str]:
    """`attribute = dy.Kind(...)`."""
    options = []
    typed = kind.kind != "Any"  # `dy.Any` takes no nullable=, primary_key=, unique=
    if typed and column.primary_key:
        options.append("primary_key=True")
    elif typed and column.nullable:
        options.append("nullable=True")
    if typed and column.unique:
        options.append("unique=True")
    if kind.is_float:  # the database admits them: only a person may forbid them
        options += ["allow_inf=True", "allow_nan=True"]
    if column.checks:
        entries = [f"{string(key)}: {text}" for key, text in column.checks.items()]
        options.append("check={" + ", ".join(entries) + "}")
    attribute = attribute_name(identifier(column.name, "column"), taken)
    if attribute != column.name:
        options.append(f"alias={string(column.name)}")
    func, texts, imports = kind.source(options)
    module.stdlib |= imports
    lead = len(f"{attribute} = ")
    return [f"{INDENT}{attribute} = " + call(func, texts, INDENT, lead=lead)]


def _undeclared(column: InferredColumn, reason: str) -> list[str]:
    return comment(
        f"{column.name}: {column.declared} has no Dataframely column type "
        f"({reason}); declare it by hand, or leave it unchecked.",
        INDENT,
    )


def _proposals(column: InferredColumn, profile: Profile, keyed: bool) -> list[str]:
    """`# proposed` comments for what `profile` suggests that the declaration does not say."""
    if profile.rows == 0:
        return []
    found: list[tuple[str, str]] = []
    never_null = profile.nulls == 0
    if never_null and column.nullable and not column.primary_key:
        found.append(("nullable=False", "no nulls"))
    if never_null and not keyed and profile.distinct == profile.rows:
        found.append(("primary_key=True", "unique, never null"))
    declared = "enum" in column.checks  # the database's own list of values, declared
    if profile.values is not None and len(profile.values) <= FEW_VALUES and not declared:
        values = _text(list(profile.values))
        found.append(
            (
                f'check={{"is_in": lambda col: col.is_in({values})}}',
                f"{len(profile.values)} value{'s' if len(profile.values) > 1 else ''}",
            )
        )
    if profile.nans == 0:
        found.append(("allow_nan=False", "no NaN"))
    if profile.infinities == 0:
        found.append(("allow_inf=False", "no infinity"))
    if profile.minimum is not None and profile.minimum >= 0:
        found.append(("min=0", f"values {profile.minimum} to {profile.maximum}"))
        # A separate line: today's largest value is the weaker assumption of the two.
        found.append((f"max={_text(profile.maximum)}", f"largest value {profile.maximum}"))
    rows = f"{profile.rows:,} row{'s' if profile.rows > 1 else ''}"
    # One line each, however long: a proposal is copied into the declaration as it is.
    return [f"{INDENT}# proposed ({rows}, {why}): {option}" for option, why in found]


def _text(value: Any) -> str:
    try:
        return literal(value).text
    except ValueError:
        return repr(value)


def _header(class_name: str, table: InferredTable, about: str) -> list[str]:
    return [
        f'"""Dataframely schema `{class_name}`, inferred from {table.where}.',
        "",
        *textwrap.wrap(about, 88, break_on_hyphens=False, break_long_words=False),
        '"""',
    ]
