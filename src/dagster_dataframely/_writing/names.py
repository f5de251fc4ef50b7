"""Python names in a written schema module: identifiers, and attributes no name shadows."""

from __future__ import annotations

import keyword
import re

import dataframely as dy

#: Names a column attribute of a `dy.Schema` subclass must not take.
RESERVED = frozenset(dir(dy.Schema)) | {"primary_key"}


def identifier(name: str | None, fallback: str = "check") -> str:
    """`name` as a Python identifier that is also a valid part of a Dagster check name."""
    if name == "<lambda>":
        return fallback
    text = re.sub(r"[^0-9A-Za-z_]+", "_", name or "").strip("_") or fallback
    if text[0].isdigit():
        text = f"{fallback}_{text}"
    return f"{text}_" if keyword.iskeyword(text) else text


def unique_name(base: str, taken: set[str]) -> str:
    """`base`, or `base_2`, `base_3`, ... : the first one not taken (which it then is)."""
    name, number = base, 1
    while name in taken:
        number += 1
        name = f"{base}_{number}"
    taken.add(name)
    return name


def attribute_name(base: str, taken: set[str]) -> str:
    """`base` (an identifier) as a schema attribute: not reserved, not taken (which it then is)."""
    return unique_name(f"{base}_" if base in RESERVED else base, taken)


def class_name(name: str, fallback: str = "Schema") -> str:
    """`name` in CamelCase as a class name (`order_lines` -> `OrderLines`)."""
    text = identifier(name, fallback)
    if text[0].isupper():
        return text
    return "".join(part[:1].upper() + part[1:] for part in text.split("_")) or fallback
