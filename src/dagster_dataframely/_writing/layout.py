"""Python source text as ruff lays it out: calls, comments, docstrings and import blocks.

The schema modules this package writes (`migrate`, `infer_schema`, `schema_from_dbt`) share
this layout (88 columns, one argument per line once a call is too long or carries a comment,
trailing commas), so their text is PEP 8-clean also without ruff, and `formatted` runs ruff
when it is installed.
"""

from __future__ import annotations

import shutil
import subprocess
import textwrap
from dataclasses import dataclass, field

WIDTH = 88
INDENT = "    "


@dataclass
class Module:
    """The imports a module body needs, standard library and third party."""

    stdlib: set[str] = field(default_factory=set)
    third_party: set[str] = field(default_factory=set)

    def import_block(self) -> str:
        blocks = [_sorted_imports(self.stdlib), _sorted_imports(self.third_party)]
        return "\n\n".join(block for block in blocks if block)


def call(
    func: str,
    args: list[str],
    indent: str,
    notes: dict[int, str] | None = None,
    lead: int = 0,
    trailing: dict[int, str] | None = None,
) -> str:
    """`func(args)` on one line if it fits and has no notes, else one argument per line.

    `notes` are comments above arguments, `trailing` comments at the end of their line (one
    line however long: it belongs to that argument). `lead` is the length of what precedes
    the call on its line after `indent`.
    """
    notes = notes or {}
    trailing = trailing or {}
    line = f"{func}({', '.join(args)})"
    if not (notes or trailing) and len(indent) + lead + len(line) <= WIDTH and "\n" not in line:
        return line
    inner = indent + INDENT
    lines = [f"{func}("]
    for number, arg in enumerate(args):
        if number in notes:
            lines.extend(comment(notes[number], inner))
        end = f"  # {trailing[number]}" if number in trailing else ""
        lines.append(f"{inner}{arg},{end}")
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


def formatted(text: str) -> str:
    """`text` formatted by ruff (default settings) when ruff is installed, else as is."""
    ruff = _ruff()
    if ruff is None:
        return text
    try:
        result = subprocess.run(
            [ruff, "format", "--isolated", "-"],
            input=text,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return text
    return result.stdout if result.returncode == 0 and result.stdout else text


def _ruff() -> str | None:
    try:
        from ruff.__main__ import find_ruff_bin  # the ruff package ships its binary

        return str(find_ruff_bin())
    except Exception:
        return shutil.which("ruff")


def _sorted_imports(lines: set[str]) -> str:
    plain = sorted((line for line in lines if line.startswith("import ")), key=_module_key)
    from_ = sorted((line for line in lines if line.startswith("from ")), key=_module_key)
    return "\n".join(plain + from_)


def _module_key(line: str) -> str:
    return line.split()[1].lower()
