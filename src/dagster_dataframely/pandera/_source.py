"""Source text of a plan: the Dataframely schema module `migrate` writes, in the layout of
`_writing.layout`."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .._writing import layout
from .._writing.columns import polars_source
from .._writing.layout import INDENT, call, comment
from .._writing.literals import literal, string
from ..errors import UnsupportedSchemaError
from ._origin import Reference
from ._plan import ColumnPlan, Entry, SchemaPlan, Template, Wrapped

FRAME = "PANDERA_FRAME"


@dataclass
class Module(layout.Module):
    """What the module body needs: imports, and the aliases of the original modules."""

    aliases: dict[str, str] = field(default_factory=dict)  # module -> alias

    def alias(self, module: str, taken: set[str]) -> str:
        if module not in self.aliases:
            last = module.rpartition(".")[2]
            base = last if last.startswith("pandera") else f"pandera_{last}"
            name, number = base, 1
            while name in taken:
                number += 1
                name = f"{base}_{number}"
            taken.add(name)
            self.aliases[module] = name
            self.third_party.add(f"import {module} as {name}")
        return self.aliases[module]


def value(item: Any, module: Module, where: str) -> str:
    """A literal for `item`, its imports noted; refuses a value with no literal form."""
    try:
        found = literal(item)
    except ValueError as error:
        raise UnsupportedSchemaError(
            f"Cannot migrate {where}: {error}. Use a value Python can write as a literal "
            "(numbers, strings, dates, Decimal, lists of these)."
        ) from error
    module.stdlib |= found.imports
    return found.text


def template_text(template: Template, module: Module, where: str) -> str:
    params = {name: value(v, module, where) for name, v in template.params.items()}
    return template.render("col", params)


def frame_constant(schema_plan: SchemaPlan, module: Module) -> list[str]:
    lines = ["# The frame each wrapped Pandera check receives: the schema's columns and dtypes."]
    entries = []
    for name, dtype in schema_plan.frame.items():
        found = polars_source(dtype)
        module.stdlib |= found.imports
        entries.append(f"{string(name)}: {found.text}")
    lines.append(f"{FRAME} = {{")
    lines.extend(f"{INDENT}{entry}," for entry in entries)
    lines.append("}")
    return lines


def wrapped_call(
    wrapped: Wrapped, reference: Reference, module: Module, taken: set[str], indent: str
) -> str:
    """`run_pandera_check(<original>, key, PANDERA_FRAME, ...)`."""
    target = reference.text(module.alias(reference.module, taken))
    args = [target, string(wrapped.key), FRAME]
    if not reference.is_check:
        check = wrapped.check
        if check.element_wise:
            args.append("element_wise=True")
        if not check.ignore_na:
            args.append("ignore_na=False")
        where = f"the arguments of check {wrapped.label}"
        args += [f"{k}={value(v, module, where)}" for k, v in check._check_kwargs.items()]
    return call("run_pandera_check", args, indent, lead=len("return "))


def todo(wrapped: Wrapped, indent: str) -> list[str]:
    return comment(
        f"TODO: port the Pandera check {wrapped.label} to a polars expression. Until "
        "then it runs Pandera's own function, imported from the original module.",
        indent,
    )


def column_lines(
    column: ColumnPlan, checks: dict[str, str], module: Module, notes_for: dict[str, str]
) -> list[str]:
    """`attribute = dy.Kind(...)`; `checks` maps each check= key to its source."""
    where = f"column {column.name!r}"
    options: list[str] = []
    notes: dict[int, str] = {}
    for name, option in column.options.items():
        if name in column.notes:
            notes[len(options)] = column.notes[name]
        options.append(f"{name}={value(option, module, f'{name}= of {where}')}")
    if column.checks:
        options.append("check=" + _check_dict(column.checks, checks, notes_for))
    if column.attribute != column.name:
        options.append(f"alias={string(column.name)}")
    if column.description:
        options.append(f"description={string(column.description)}")
    if column.metadata:
        options.append(f"metadata={value(column.metadata, module, f'metadata of {where}')}")
    func, texts, imports = column.type.source(options)
    module.stdlib |= imports
    offset = len(texts) - len(options)
    notes = {offset + number: text for number, text in notes.items()}
    lead = len(f"{column.attribute} = ")
    return [f"{INDENT}{column.attribute} = " + call(func, texts, INDENT, notes, lead)]


def _check_dict(entries: Iterable[Entry], checks: dict[str, str], notes: dict[str, str]) -> str:
    inner = INDENT * 3
    lines = ["{"]
    for entry in entries:
        lines.extend(comment(notes[entry.name], inner))
        lines.append(f"{inner}{string(entry.name)}: {checks[entry.name]},")
    lines.append(INDENT * 2 + "}")
    return "\n".join(lines)
