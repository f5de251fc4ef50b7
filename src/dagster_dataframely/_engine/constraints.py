"""Plain-text renderings of Dataframely column constraints, such as `amount >= 0`.

One rendering serves the Columns tab (beside the column) and the rule descriptions of checks.
"""

from __future__ import annotations

import datetime as dt
import inspect
import re
from collections.abc import Callable, Sequence
from typing import Any

import dataframely as dy
import polars as pl

_MAX_LISTED = 8
_COMPARISONS = {"min": ">=", "min_exclusive": ">", "max": "<=", "max_exclusive": "<"}


def value_text(value: Any) -> str:
    """A constraint value as a reader would write it."""
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    return str(value)


def listing(values: Sequence[Any]) -> str:
    """Up to a few values, then how many more there are, so a long `is_in` stays short."""
    shown = ", ".join(value_text(v) for v in values[:_MAX_LISTED])
    rest = len(values) - _MAX_LISTED
    return "{" + shown + (f", … {rest} more" if rest > 0 else "") + "}"


def docstring_summary(function: Callable[..., Any]) -> str | None:
    """The first paragraph of a function's docstring, on one line."""
    doc = inspect.getdoc(function)
    if not doc:
        return None
    return " ".join(doc.split("\n\n", 1)[0].split())


def column_checks(column: dy.Column, rule_names: Sequence[str]) -> dict[str, Callable[..., Any]]:
    """Map a column's `check__*` rule suffixes to the callables behind them.

    `rule_names` are the column's rule suffixes in Dataframely's order, which follows the
    order of the callables in `check=`.
    """
    check = column.check
    if check is None:
        return {}
    if isinstance(check, dict):
        return {f"check__{name}": fn for name, fn in check.items()}
    callables: list[Any] = list(check) if isinstance(check, Sequence) else [check]
    names = [name for name in rule_names if name == "check" or name.startswith("check__")]
    return dict(zip(names, callables, strict=True))


def render(
    name: str, column: dy.Column, suffix: str, *, expression: str | None = None
) -> str | None:
    """Render the rule `suffix` of `column` (called `name`), or None if it is not known.

    A custom check is described by its docstring, else by what its `expression` (rendered by
    `expression_text`) tests, else by its name.
    """
    if suffix == "nullability":
        return f"{name} is not null"
    if suffix == "unique":
        return f"{name} is unique"
    if suffix in _COMPARISONS:
        return f"{name} {_COMPARISONS[suffix]} {value_text(getattr(column, suffix))}"
    if suffix in ("min_length", "max_length"):
        unit = "byte length" if isinstance(column, dy.String) else "length"
        op = ">=" if suffix == "min_length" else "<="
        return f"{unit} of {name} {op} {getattr(column, suffix)}"
    if suffix == "regex":
        return f"{name} matches /{column.regex}/"  # type: ignore[attr-defined]
    if suffix == "is_in":
        return f"{name} in {listing(list(column.is_in))}"  # type: ignore[attr-defined]
    if suffix == "inf":
        return f"{name} is not infinite"
    if suffix == "nan":
        return f"{name} is not NaN"
    if suffix == "resolution":
        return f"{name} is a multiple of {column.resolution}"  # type: ignore[attr-defined]
    if suffix == "primary_key":
        return f"elements of {name} are unique by their primary key"
    if suffix == "check" or suffix.startswith("check__"):
        fn = column_checks(column, list(column.validation_rules(pl.col(name)))).get(suffix)
        custom = docstring_summary(fn) if fn is not None else None
        tested = None if expression is None else plain_expression(expression)
        label = suffix.removeprefix("check__")
        return custom or tested or f"{name} passes the custom check {label!r}"
    if suffix.startswith("inner_"):
        return _render_inner(name, column, suffix.removeprefix("inner_"))
    return None


def _render_inner(name: str, column: dy.Column, suffix: str) -> str | None:
    inner = getattr(column, "inner", None)
    if isinstance(inner, dict):  # a struct: `inner_<field>_<rule>`
        for field, field_column in inner.items():
            if suffix.startswith(f"{field}_"):
                text = render(f"{name}.{field}", field_column, suffix[len(field) + 1 :])
                if text is not None:
                    return text
        return None
    if isinstance(inner, dy.Column):  # a list or an array: every element
        text = render("element", inner, suffix)
        return None if text is None else f"every element of {name}: {text}"
    return None


def plain_expression(text: str) -> str | None:
    """What an expression from `expression_text` tests, as a reader says it: `pl.col("kind")
    .is_in(["a", "b"])` -> `kind in ["a", "b"]`, `pl.col("amount") >= 0` -> `amount >= 0`.
    None for an expression `expression_text` could not render, or that reads no column."""
    if not text.startswith("pl."):
        return None
    plain = _COLUMN.sub(lambda m: m[1], text)
    if plain == text:
        return None
    return _IS_IN.sub(r"\1 in \2", plain)


_COLUMN = re.compile(r'pl\.col\("([A-Za-z_][A-Za-z0-9_]*)"\)')
_IS_IN = re.compile(r"^([A-Za-z_][A-Za-z0-9_.]*)\.is_in\((\[[^\[\]]*\])\)$")
_PAIRS = {"(": ")", "[": "]"}
_LITERAL = re.compile(r"\bdyn (?:int|float|str|bool): ")
_SPECIAL = re.compile(r'[\[("]')
_NAMESPACE = re.compile(r"(?<![\w.])(col|lit|as_struct)\(")
_STRUCT_METHOD = re.compile(r'(pl\.col\("(?:[^"\\]|\\.)*"\))\.as_struct\((\))?')


def expression_text(expr: pl.Expr) -> str:
    """A polars expression as a user writes it: `pl.col("amount") >= 0`, not polars' own
    display `[(col("amount")) >= (dyn int: 0)]`. Falls back to that display when it holds a
    form this does not know."""
    text = str(expr)
    try:
        python = _python(text)
    except ValueError:
        return text
    python = _NAMESPACE.sub(
        lambda m: "pl.struct(" if m[1] == "as_struct" else f"pl.{m[1]}(", python
    ).replace(".not()", ".not_()")
    # polars before 2 shows a struct as a method of its first field: col("a").as_struct([...])
    return _STRUCT_METHOD.sub(lambda m: f"pl.struct({m[1]}" + (")" if m[2] else ", "), python)


def _python(text: str, *, outer: bool = True) -> str:
    """Rewrite polars' display: `[(left) op (right)]` -> `left op right` (parenthesized when
    nested), a call's argument list `f([a, b])` -> `f(a, b)` (`f([(a) > (b)])` is one binary
    argument), literals without `dyn int: `."""
    out: list[str] = []
    i = 0
    while i < len(text):
        if text.startswith("[(", i):
            end = _closing(text, i)
            left_end = _closing(text, i + 1)
            operator, rest = text[left_end + 1 : end].split(" (", 1)
            if not rest.endswith(")"):
                raise ValueError(text)
            left = _python(text[i + 2 : left_end], outer=False)
            right = _python(rest[:-1], outer=False)
            binary = f"{left}{operator} {right}"
            argument = bool(out) and out[-1] == "(" and text[end + 1 : end + 2] == ")"
            nested = not argument and (not outer or end + 1 < len(text) or bool(out))
            out.append(f"({binary})" if nested else binary)
            i = end + 1
        elif text.startswith("([", i) and not text.startswith("([(", i):
            end = _closing(text, i + 1)
            if text[end + 1 : end + 2] != ")":
                raise ValueError(text)
            out.append(f"({_python(text[i + 2 : end], outer=False)})")
            i = end + 2
        elif text[i] == '"':
            end = _string_end(text, i)
            out.append(_string_literal(text[i + 1 : end]))
            i = end + 1
        else:  # up to the next bracket or string: the only places a rewrite starts
            found = _SPECIAL.search(text, i + 1)
            stop = found.start() if found else len(text)
            out.append(text[i:stop])
            i = stop
    return _LITERAL.sub("", "".join(out))


def _string_literal(content: str) -> str:
    """A string polars displays unescaped, as Python source that means it: raw when it holds
    a backslash (a regex such as `\\d`), so pasting it raises no SyntaxWarning."""
    if "\\" in content and not content.endswith("\\") and "\n" not in content:
        return f'r"{content}"'
    return '"' + content.replace("\\", "\\\\").replace("\n", "\\n") + '"'


def _closing(text: str, start: int) -> int:
    """The index of the bracket that closes the one at `start`, skipping string literals."""
    depth, i = 0, start
    while i < len(text):
        char = text[i]
        if char == '"':
            i = _string_end(text, i)
        elif char in _PAIRS:
            depth += 1
        elif char in _PAIRS.values():
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ValueError(text)


def _string_end(text: str, start: int) -> int:
    end = text.find('"', start + 1)
    while end > 0 and text[end - 1] == "\\" and text[end - 2 : end] != "\\\\":
        end = text.find('"', end + 1)
    if end < 0:
        raise ValueError(text)
    return end
