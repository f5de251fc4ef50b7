"""`migrate`: a Pandera polars model as Dataframely source code, formatted with ruff."""

from __future__ import annotations

import re
import sys
import textwrap
from typing import Any

from .._writing.layout import INDENT, call, comment, docstring, formatted
from ..errors import UnsupportedSchemaError
from ._origin import Reference, check_reference, function_reference, origin
from ._plan import Entry, SchemaPlan, Template, Wrapped, plan, unique_name
from ._source import (
    FRAME,
    Module,
    column_lines,
    frame_constant,
    template_text,
    todo,
    wrapped_call,
)


def migrate(model: Any, *, import_path: str | None = None) -> str:
    """Dataframely source for a Pandera polars model: one importable module, as text.

    The source declares one `dy.Schema` class whose rules have exactly the names (so
    dagster-dataframely check names) and verdicts of `to_dataframely(model)`: native
    Dataframely options where they mean the same, commented `check=` lambdas and `@dy.rule`
    functions where not. Custom checks are wrapped, not rewritten: each carries a `# TODO`
    naming the original function, which it calls through an import of the model's module.

    Args:
        model: A `pandera.polars.DataFrameModel` subclass or `DataFrameSchema`.
        import_path: Where the model lives, as `package.module:name`. Needed only for a
            `DataFrameSchema` whose custom checks are lambdas (reached through the schema
            object); the module of a model class is known.

    Raises:
        UnsupportedSchemaError: The model cannot be translated, or a value or custom check
            cannot be written as source (the message says which, and what to change).
    """
    schema_plan = plan(model)
    return formatted(render(schema_plan, _location(model, import_path, schema_plan)))


def render(schema_plan: SchemaPlan, location: tuple[str, str] | None) -> str:
    """The module text for a plan (unformatted, already in ruff's layout)."""
    module = Module(third_party={"import dataframely as dy"})
    taken = {schema_plan.class_name, FRAME, "dy", "pl", "dd", "run_pandera_check"}
    taken |= {"datetime", "zoneinfo", "Decimal"}
    functions: list[list[str]] = []
    columns: list[str] = []
    for column in schema_plan.columns:
        checks, notes = {}, {}
        for entry in column.checks:
            notes[entry.name] = entry.why
            where = f"check {entry.name!r} of column {column.name!r}"
            if isinstance(entry.body, Template):
                checks[entry.name] = "lambda col: " + template_text(entry.body, module, where)
                continue
            name = unique_name(f"{column.attribute}__{entry.name}", taken)
            reference = _reference(entry.body, location, schema_plan)
            returned = wrapped_call(entry.body, reference, module, taken, INDENT)
            functions.append(_function(f"def {name}(_: pl.Expr) -> pl.Expr:", entry, returned))
            checks[entry.name] = name
            notes[entry.name] += f" in `{name}` above"
        columns.extend(column_lines(column, checks, module, notes))
    rules = [_rule(rule, schema_plan, location, module, taken) for rule in schema_plan.rules]

    lines = []
    if schema_plan.table_verdicts:
        # Pandera fails an empty table on a check whose one verdict is False (`pl.len() > 0`).
        verdicts = [f'"{n}"' for n in schema_plan.table_verdicts]
        lines.append("@" + call("table_verdicts", verdicts, ""))
    if schema_plan.warn:
        module.third_party.add("import dagster_dataframely as dd")
        lines.append("@" + call("dd.warn", [f'"{n}"' for n in schema_plan.warn], ""))
    lines.append(f"class {schema_plan.class_name}(dy.Schema):")
    if schema_plan.doc:
        lines += [*docstring(schema_plan.doc, INDENT), ""]
    lines += columns
    for rule in rules:
        lines += ["", *rule]
    body = [*(line for f in functions for line in ["", "", *f]), "", "", *lines]
    helpers = ["run_pandera_check"] if schema_plan.wrapped else []
    helpers += ["table_verdicts"] if schema_plan.table_verdicts else []
    if helpers:
        module.third_party.add(f"from dagster_dataframely.pandera import {', '.join(helpers)}")
    if schema_plan.wrapped:
        body = ["", "", *frame_constant(schema_plan, module), *body]
    text = "\n".join(body)
    if re.search(r"\bpl\.", text):
        module.third_party.add("import polars as pl")
    return "\n".join([*_header(schema_plan, location), "", module.import_block(), text]) + "\n"


def _header(schema_plan: SchemaPlan, location: tuple[str, str] | None) -> list[str]:
    source = f"`{location[0]}:{location[1]}`" if location else f"`{schema_plan.source.name}`"
    lines = [
        f'"""Dataframely schema `{schema_plan.class_name}`, migrated from a Pandera model.',
        "",
        *_wrap(
            f"Migrated from {source} by `dagster-dataframely migrate-pandera`. Each rule "
            "keeps the name dagster-dataframely gave the Pandera check, so Dagster check "
            "names (and their history) stay the same."
        ),
    ]
    if schema_plan.wrapped:
        lines += [
            "",
            *_wrap(
                "Checks marked TODO still run Pandera's own functions through "
                "`run_pandera_check`; port them to polars expressions, then drop the "
                "Pandera imports."
            ),
        ]
    return [*lines, '"""']


def _wrap(text: str) -> list[str]:
    return textwrap.wrap(text, 88, break_on_hyphens=False, break_long_words=False)


def _function(signature: str, entry: Entry, returned: str, indent: str = "") -> list[str]:
    inner = indent + INDENT
    lines = [indent + signature]
    if entry.description:
        lines += docstring(entry.description, inner)
    if isinstance(entry.body, Wrapped):
        lines += todo(entry.body, inner)
    else:
        lines += comment(entry.why, inner)
    return [*lines, f"{inner}return {returned}"]


def _rule(
    entry: Entry,
    schema_plan: SchemaPlan,
    location: tuple[str, str] | None,
    module: Module,
    taken: set[str],
) -> list[str]:
    if isinstance(entry.body, Template):
        returned = template_text(entry.body, module, f"rule {entry.name!r}")
    else:
        reference = _reference(entry.body, location, schema_plan)
        returned = wrapped_call(entry.body, reference, module, taken, INDENT * 2)
    signature = f"def {entry.name}(cls) -> pl.Expr:"
    return [f"{INDENT}@dy.rule()", *_function(signature, entry, returned, INDENT)]


def _reference(
    wrapped: Wrapped, location: tuple[str, str] | None, schema_plan: SchemaPlan
) -> Reference:
    reference = function_reference(origin(wrapped.check))
    if reference is None and schema_plan.source.model is None:
        column = None if wrapped.key == "*" else wrapped.key
        reference = check_reference(location, column, wrapped.index, wrapped.check)
    if reference is None:
        where = "the schema" if wrapped.key == "*" else f"column {wrapped.key!r}"
        raise UnsupportedSchemaError(
            f"Cannot migrate the custom check {wrapped.label} on {where}: migrated source "
            "calls it through an import, and it cannot be imported (a lambda, a local "
            "function, or a model defined in __main__). Define it at module level in an "
            "importable module (or pass import_path='package.module:schema' for a "
            "DataFrameSchema that holds it)."
        )
    return reference


def _location(
    model: Any, import_path: str | None, schema_plan: SchemaPlan
) -> tuple[str, str] | None:
    if import_path:
        module, _, name = import_path.partition(":")
        return module, name
    if isinstance(model, type):
        return model.__module__, model.__qualname__
    for wrapped in schema_plan.wrapped:  # a schema object: in the module of its checks?
        found = sys.modules.get(getattr(origin(wrapped.check).function, "__module__", ""))
        for name, candidate in vars(found or object()).items():
            if candidate is model:
                return found.__name__, name  # type: ignore[union-attr]
    return None
