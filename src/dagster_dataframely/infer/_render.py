"""Source text of an inferred schema: one `dy.Schema` class named after the table.

A column's declaration says what the database declares (its type as the sources read it, `NOT
NULL`, the primary key, a float's NaN and infinities), nothing more. What a profile proposes
is written above it as `# proposed` comments, never as rules, unless a person adopts the
proposals (`adopted`): then they are options of the declaration, each marked on its line as
learned from the data on that day. A column with no Dataframely type is a comment naming its
type.
"""

from __future__ import annotations

import datetime
import textwrap
from collections.abc import Sequence

from .._writing.columns import ColumnType, DtypeError, polars_column_type
from .._writing.layout import INDENT, Module, call, comment, docstring, formatted
from .._writing.literals import string
from .._writing.names import attribute_name, identifier
from ._columns import InferredColumn, InferredTable
from ._proposals import Proposal, primary_key, proposals

#: The order of a declaration's options, after its dtype's arguments.
_ORDER = (
    *("primary_key", "nullable", "unique", "min", "max", "min_length", "max_length"),
    *("allow_inf", "allow_nan", "check"),
)


def render(
    table: InferredTable, class_name: str, *, about: str, adopted: datetime.date | None = None
) -> str:
    """The module text: imports, and the class with one declaration per column and one
    method per rule; `about` is the module docstring's paragraph on where it comes from.
    `adopted`: the day the profile's proposals were learned, written as declarations (None:
    as comments)."""
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
        found = [] if profile is None else proposals(column, profile, keyed=keyed)
        keyed = keyed or primary_key(found)
        if adopted is None:
            body += [f"{INDENT}{proposal.comment}" for proposal in found]
            found = []
        body += _declaration(column, kind, module, taken, found, adopted)
    for rule in table.rules:
        module.third_party.add("import polars as pl")
        body += ["", f"{INDENT}@dy.rule()", f"{INDENT}def {rule.name}(cls) -> pl.Expr:"]
        body += [*docstring(rule.doc, INDENT * 2), f"{INDENT * 2}return {rule.returned}"]
    decorators = _decorators(table)
    if decorators:
        module.third_party.add("import dagster_dataframely as dd")
    header = _header(class_name, table, about + _learned(table, adopted))
    lines = [*header, "", module.import_block(), "", "", *decorators]
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
    column: InferredColumn,
    kind: ColumnType,
    module: Module,
    taken: set[str],
    learned: Sequence[Proposal] = (),
    adopted: datetime.date | None = None,
) -> list[str]:
    """`attribute = dy.Kind(...)`, with the `learned` proposals as options, each marked on its
    line as learned from the data on `adopted`."""
    options: dict[str, str] = {}
    marked: set[str] = set()
    typed = kind.kind != "Any"  # `dy.Any` takes no nullable=, primary_key=, unique=
    if typed and column.primary_key:
        options["primary_key"] = "True"
    elif typed and column.nullable:
        options["nullable"] = "True"
    if typed and column.unique:
        options["unique"] = "True"
    if kind.is_float:  # the database admits them: only a person may forbid them
        options |= {"allow_inf": "True", "allow_nan": "True"}
    checks = dict(column.checks)
    for option in (option for proposal in learned for option in proposal.options):
        module.stdlib |= option.value.imports
        if option.entry is None:
            options[option.keyword] = option.value.text
        else:
            checks[option.entry] = option.value.text
        marked.add(option.keyword)
    if "primary_key" in options:  # a key is never null: `nullable=` would contradict it
        options.pop("nullable", None)
    if checks:
        entries = [f"{string(key)}: {text}" for key, text in checks.items()]
        options["check"] = "{" + ", ".join(entries) + "}"
    texts = [f"{key}={options[key]}" for key in _ORDER if key in options]
    attribute = attribute_name(identifier(column.name, "column"), taken)
    if attribute != column.name:
        texts.append(f"alias={string(column.name)}")
    func, args, imports = kind.source(texts)
    module.stdlib |= imports
    first = len(args) - len(texts)  # the dtype's own arguments come first
    trailing = {
        first + index: f"learned from the data, {adopted}"
        for index, key in enumerate(k for k in _ORDER if k in options)
        if key in marked
    }
    lead = len(f"{attribute} = ")
    return [f"{INDENT}{attribute} = " + call(func, args, INDENT, lead=lead, trailing=trailing)]


def _undeclared(column: InferredColumn, reason: str) -> list[str]:
    return comment(
        f"{column.name}: {column.declared} has no Dataframely column type "
        f"({reason}); declare it by hand, or leave it unchecked.",
        INDENT,
    )


def _learned(table: InferredTable, adopted: datetime.date | None) -> str:
    """The header's sentence on what a profile of the table's rows added, if one was made."""
    if not table.profiles:
        return ""
    if adopted is None:
        return (
            " Comments marked `proposed` come from a profile of today's rows: assumptions, "
            "not rules, until a person adopts them."
        )
    rows = next(iter(table.profiles.values())).rows
    return (
        f" Options marked `learned from the data` were adopted from a profile of its {rows:,} "
        f"row{'' if rows == 1 else 's'} on {adopted}: rules of the table from now on, each "
        "for a person to keep or delete."
    )


def _header(class_name: str, table: InferredTable, about: str) -> list[str]:
    return [
        f'"""Dataframely schema `{class_name}`, inferred from {table.where}.',
        "",
        *textwrap.wrap(about, 88, break_on_hyphens=False, break_long_words=False),
        '"""',
    ]
