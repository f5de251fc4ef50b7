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
from .._writing.layout import INDENT, Module, call, comment, formatted
from .._writing.literals import literal, string
from .._writing.names import attribute_name, identifier
from ._columns import InferredColumn, InferredTable, Profile
from ._profile import FEW_VALUES


def render(table: InferredTable, class_name: str, *, command: str) -> str:
    """The module text: imports, and the class with one declaration per column."""
    module = Module(third_party={"import dataframely as dy"})
    taken: set[str] = set()
    keyed = any(column.primary_key for column in table.columns)
    body: list[str] = []
    for column in table.columns:
        kind = _column_type(column)
        if isinstance(kind, str):
            body += _undeclared(column, kind)
            continue
        profile = table.profiles.get(column.name)
        if profile is not None:
            body += _proposals(column, profile, keyed)
        body += _declaration(column, kind, module, taken)
    notes = [f"# {note}" for note in table.notes]
    header = _header(class_name, table, command)
    lines = [*header, "", module.import_block(), *notes, "", ""]
    lines += [f"class {class_name}(dy.Schema):", *(body or [f"{INDENT}pass"])]
    return formatted("\n".join(lines) + "\n")


def _column_type(column: InferredColumn) -> ColumnType | str:
    """The column's Dataframely type, or why it has none."""
    if column.dtype is None or column.unreadable is not None:
        return column.unreadable or "polars cannot read it"
    try:
        return polars_column_type(column.dtype)
    except DtypeError as error:
        return str(error)


def _declaration(
    column: InferredColumn, kind: ColumnType, module: Module, taken: set[str]
) -> list[str]:
    """`attribute = dy.Kind(...)`."""
    options = []
    if column.primary_key:
        options.append("primary_key=True")
    elif column.nullable:
        options.append("nullable=True")
    if kind.is_float:  # the database admits them: only a person may forbid them
        options += ["allow_inf=True", "allow_nan=True"]
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
    if profile.values is not None and len(profile.values) <= FEW_VALUES:
        values = _text(list(profile.values))
        found.append(
            (
                f'check={{"is_in": lambda col: col.is_in({values})}}',
                f"{len(profile.values)} value{'s' if len(profile.values) > 1 else ''}",
            )
        )
    if profile.minimum is not None and profile.minimum >= 0:
        found.append(("min=0", f"values {profile.minimum} to {profile.maximum}"))
    rows = f"{profile.rows:,} row{'s' if profile.rows > 1 else ''}"
    # One line each, however long: a proposal is copied into the declaration as it is.
    return [f"{INDENT}# proposed ({rows}, {why}): {option}" for option, why in found]


def _text(value: Any) -> str:
    try:
        return literal(value).text
    except ValueError:
        return repr(value)


def _header(class_name: str, table: InferredTable, command: str) -> list[str]:
    text = (
        f"Written by `{command}`: each column's type is the one dagster-dataframely's "
        "sources read it with, and NOT NULL and primary-key constraints are declared. "
        "Comments marked `proposed` come from a profile of today's rows: assumptions, not "
        "rules, until a person adopts them."
    )
    return [
        f'"""Dataframely schema `{class_name}`, inferred from {table.where}.',
        "",
        *textwrap.wrap(text, 88, break_on_hyphens=False, break_long_words=False),
        '"""',
    ]
