"""Python values as source text, for the migrated schema.

A Pandera check's arguments (bounds, allowed values, patterns) become literals in the
migrated source. Each rendering is checked by evaluating it back: a value that would not
come back equal cannot be migrated, and the caller says so.
"""

from __future__ import annotations

import datetime
import decimal
import math
import re
import zoneinfo
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_IMPORTS = {
    "datetime.": "import datetime",
    "zoneinfo.": "import zoneinfo",
    "Decimal(": "from decimal import Decimal",
}
_NAMESPACE = {"datetime": datetime, "zoneinfo": zoneinfo, "Decimal": decimal.Decimal}


@dataclass(frozen=True)
class Literal:
    """Source text of a value and the imports it needs."""

    text: str
    imports: frozenset[str]


def literal(value: Any) -> Literal:
    """The source text of `value`; raises `ValueError` when no literal gives it back."""
    text = _text(value)
    imports = frozenset(line for marker, line in _IMPORTS.items() if marker in text)
    if not _same(eval(text, dict(_NAMESPACE)), value):  # our own rendering, read back
        raise ValueError(f"{value!r} cannot be written as a Python literal")
    return Literal(text, imports)


def string(value: str) -> str:
    """A string literal, in double quotes where that needs no escaping (as ruff writes it)."""
    text = repr(value)
    if text.startswith("'") and '"' not in value:
        text = '"' + text[1:-1].replace("\\'", "'") + '"'
    return text


def _text(value: Any) -> str:
    if value is None or isinstance(value, (bool, int)):
        return repr(value)
    if isinstance(value, float):
        if math.isnan(value):
            return 'float("nan")'
        if math.isinf(value):
            return 'float("inf")' if value > 0 else '-float("inf")'
        return repr(value)
    if isinstance(value, str):
        return string(value)
    if isinstance(value, bytes):
        return "b" + string(value.decode("latin-1")) if value.isascii() else repr(value)
    if isinstance(value, (decimal.Decimal, datetime.date, datetime.time, datetime.timedelta)):
        # `Decimal('1.5')`, `datetime.date(2024, 1, 31)`, `zoneinfo.ZoneInfo(key='UTC')`:
        # their inner strings in double quotes, as ruff writes them
        return re.sub(r"'([^'\"\\]*)'", r'"\1"', repr(value))
    if isinstance(value, (list, tuple)):
        items = ", ".join(_text(v) for v in value)
        if isinstance(value, tuple):
            return f"({items},)" if len(value) == 1 else f"({items})"
        return f"[{items}]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_text(k)}: {_text(v)}" for k, v in value.items()) + "}"
    item = getattr(value, "item", None)  # numpy scalars
    if callable(item):
        return _text(item())
    raise ValueError(f"{value!r} ({type(value).__name__}) has no literal form")


def _same(left: Any, right: Any) -> bool:
    if isinstance(right, float) and math.isnan(right):
        return isinstance(left, float) and math.isnan(left)
    if isinstance(right, (list, tuple)):
        return (
            type(left) is type(right)
            and len(left) == len(right)
            and all(_same(a, b) for a, b in zip(left, right, strict=True))
        )
    item = getattr(right, "item", None)
    if callable(item) and not isinstance(right, (datetime.date, decimal.Decimal)):
        right = item()
    return bool(type(left) is type(right) and left == right)
