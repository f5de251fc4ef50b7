"""Source text of a plan: the Dataframely schema module `migrate` writes.

The layout is the one ruff gives (88 columns, one argument per line once a call is too long
or carries a comment, trailing commas), so the text is PEP 8-clean also without ruff.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..errors import UnsupportedSchemaError
from ._dtypes import polars_source
from ._literals import literal, string
from ._origin import Reference
from ._plan import ColumnPlan, Entry, SchemaPlan, Template, Wrapped

WIDTH = 88
INDENT = "    "
FRAME = "PANDERA_FRAME"


@dataclass
class Module:
    """What the module body needs: imports, and the aliases of the original modules."""

    stdlib: set[str] = field(default_factory=set)
    third_party: set[str] = field(default_factory=set)
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

    def import_block(self) -> str:
        blocks = [_sorted_imports(self.stdlib), _sorted_imports(self.third_party)]
        return "\n\n".join(block for block in blocks if block)


def call(
    func: str, args: list[str], indent: str, notes: dict[int, str] | None = None, lead: int = 0
) -> str:
    """`func(args)` on one line if it fits and has no notes, else one argument per line.

    `lead` is the length of what precedes the call on its line after `indent`.
    """
    notes = notes or {}
    line = f"{func}({', '.join(args)})"
    if not notes and len(indent) + lead + len(line) <= WIDTH and "\n" not in line:
        return line
    inner = indent + INDENT
    lines = [f"{func}("]
    for number, arg in enumerate(args):
        if number in notes:
            lines.extend(comment(notes[number], inner))
        lines.append(f"{inner}{arg},")
    lines.append(f"{indent})")
    return "\n".join(lines)


def comment(text: str, indent: str) -> list[str]:
    """`# text`, wrapped to the width."""
    width = max(WIDTH - len(indent) - 2, 30)
    return [
        f"{indent}# {line}"
        for line in textwrap.wrap(text, width, break_on_hyphens=False, break_long_words=False)
    ]


def docstring(text: str, indent: str) -> list[str]:
    """A docstring, one line if it fits, else its summary line wrapped."""
    text = " ".join(text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"').split())
    if text.endswith('"'):
        text += " "
    if len(indent) + len(text) + 6 <= WIDTH:
        return [f'{indent}"""{text}"""']
    lines = textwrap.wrap(
        text,
        WIDTH,
        initial_indent=f'{indent}"""',
        subsequent_indent=indent,
        break_on_hyphens=False,
        break_long_words=False,
    )
    return [*lines, f'{indent}"""']


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


def _sorted_imports(lines: set[str]) -> str:
    plain = sorted((line for line in lines if line.startswith("import ")), key=_module_key)
    from_ = sorted((line for line in lines if line.startswith("from ")), key=_module_key)
    return "\n".join(plain + from_)


def _module_key(line: str) -> str:
    return line.split()[1].lower()
