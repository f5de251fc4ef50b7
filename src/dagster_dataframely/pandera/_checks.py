"""Pandera's built-in polars checks, as Dataframely options or polars expressions.

Every built-in check of Pandera's polars backend (`pandera/backends/polars/builtin_checks.py`)
has an entry here. Where a Dataframely column option evaluates the very same expression, the
check becomes that option (`ge` -> `min`, `str_matches` -> an anchored `regex`). Otherwise it
becomes an expression *template*: the text of the polars expression Pandera evaluates, with
`{col}` for the column and `{<argument>}` for each argument. The same template is the
`check=` lambda of the migrated source and, evaluated, the rule of the translated schema,
so the two cannot drift apart.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib.metadata import version
from typing import Any

from pandera.api.checks import Check
from pandera.api.function_dispatch import Dispatcher

#: Pandera before 0.35 counts a null among a column's distinct values in `unique_values_eq`
#: (`[None, "a"]` fails `unique_values_eq(["a"])`); 0.35 drops nulls first.
_NULL_IS_A_VALUE = tuple(int(part) for part in version("pandera").split(".")[:2]) < (0, 35)

#: The built-in check names the polars backend registers.
POLARS_BUILTINS = frozenset(
    {
        "equal_to",
        "not_equal_to",
        "greater_than",
        "greater_than_or_equal_to",
        "less_than",
        "less_than_or_equal_to",
        "in_range",
        "isin",
        "notin",
        "str_matches",
        "str_contains",
        "str_startswith",
        "str_endswith",
        "str_length",
        "unique_values_eq",
    }
)

_COMPARISONS = {
    "greater_than": (">", "min_value", "min_exclusive"),
    "greater_than_or_equal_to": (">=", "min_value", "min"),
    "less_than": ("<", "max_value", "max_exclusive"),
    "less_than_or_equal_to": ("<=", "max_value", "max"),
}
#: Checks with no Dataframely option: the expression template and its one argument.
_EXPRESSIONS = {
    "equal_to": ("{col}.eq({value})", "value"),
    "not_equal_to": ("{col}.ne({value})", "value"),
    "str_startswith": ("{col}.str.starts_with({string})", "string"),
    "str_endswith": ("{col}.str.ends_with({string})", "string"),
}
#: Dataframely column kinds whose ordinal options (`min`, `max`, ...) compare with `>=` etc.,
#: and the Python types a bound must have to be written as that option.
_ORDINAL = {
    **dict.fromkeys(
        ["Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64"], ("int",)
    ),
    "Float32": ("int", "float"),
    "Float64": ("int", "float"),
    "Date": ("date",),
    "Datetime": ("datetime",),
    "Time": ("time",),
    "Duration": ("timedelta",),
}
_INTEGERS = frozenset(k for k, v in _ORDINAL.items() if v == ("int",))


@dataclass(frozen=True)
class Builtin:
    """How one built-in Pandera check is expressed in Dataframely."""

    #: Dataframely options with identical semantics (`{"min": 0}`), when there are.
    native: dict[str, Any] = field(default_factory=dict)
    #: The polars expression Pandera evaluates, as a template; always set.
    template: str = ""
    #: The template's arguments.
    params: dict[str, Any] = field(default_factory=dict)
    #: Why the check is an expression, not an option (a comment in the migrated source).
    why: str = ""
    #: Whether the verdict is one for the whole table (every row gets it).
    whole_table: bool = False


def builtin_name(check: Check) -> str | None:
    """The built-in check behind `check` (also when renamed with `name=`), else None."""
    # Built-ins dispatch through a `Dispatcher` (a model's schema holds copies of it).
    function = check._check_fn
    if isinstance(function, Dispatcher) and Check.is_builtin_check(function.__name__):
        return function.__name__
    return None


def translate(name: str, check: Check, kind: str) -> Builtin:
    """The Dataframely form of the built-in check `name` on a column of Dataframely `kind`."""
    kwargs = dict(check._check_kwargs)
    written = check.statistics or {}
    if name in _COMPARISONS:
        op, arg, option = _COMPARISONS[name]
        value = kwargs[arg]
        return Builtin(
            native={option: value} if _ordinal(kind, value) else {},
            template=f"{{col}} {op} {{{arg}}}",
            params={arg: value},
            why=f"no Dataframely `{option}` for this column type or bound",
        )
    if name == "in_range":
        low, high = kwargs["min_value"], kwargs["max_value"]
        low_op, low_option = (">=", "min") if kwargs["include_min"] else (">", "min_exclusive")
        high_op, high_option = ("<=", "max") if kwargs["include_max"] else ("<", "max_exclusive")
        ordinal = _ordinal(kind, low) and _ordinal(kind, high)
        return Builtin(
            native={low_option: low, high_option: high} if ordinal else {},
            template=f"({{col}} {low_op} {{min_value}}) & ({{col}} {high_op} {{max_value}})",
            params={"min_value": low, "max_value": high},
            why="no Dataframely bounds for this column type or these bounds",
        )
    if name in _EXPRESSIONS:
        template, arg = _EXPRESSIONS[name]
        return Builtin(
            template=template, params={arg: kwargs[arg]}, why=f"Dataframely has no `{name}` option"
        )
    if name == "isin":
        values = _values(written.get("allowed_values"), kwargs["allowed_values"])
        integers = kind in _INTEGERS and all(type(v) is int for v in values)
        return Builtin(
            native={"is_in": values} if integers else {},
            template="{col}.is_in({allowed_values})",
            params={"allowed_values": values},
            why="Dataframely has `is_in` only for integer columns",
        )
    if name == "notin":
        values = _values(written.get("forbidden_values"), kwargs["forbidden_values"])
        return Builtin(
            template="~{col}.is_in({forbidden_values})",
            params={"forbidden_values": values},
            why="Dataframely has no `notin` option",
        )
    if name in ("str_matches", "str_contains"):
        pattern = _pattern(kwargs["pattern"])
        if name == "str_matches" and not pattern.startswith("^"):
            pattern = f"^{pattern}"  # Pandera anchors the match at the start of the string
        return Builtin(
            native={"regex": pattern} if kind == "String" else {},
            template="{col}.str.contains({pattern})",
            params={"pattern": pattern},
            why="one `regex` per Dataframely column; this is a further pattern",
        )
    if name == "str_length":
        return _str_length(kwargs)
    if name == "unique_values_eq":
        values = _values(written.get("values"), kwargs["values"])
        template = (
            "{col}.drop_nulls().is_in({values}).all() & ({col}.drop_nulls().n_unique() == {count})"
        )
        if _NULL_IS_A_VALUE:  # a null is one more distinct value, never among `values`
            template += " & ({col}.null_count() == 0)"
        return Builtin(
            template=template,
            params={"values": values, "count": len(values)},
            why="a whole-table check: every row fails when the distinct values differ",
            whole_table=True,
        )
    raise KeyError(name)


def _str_length(kwargs: dict[str, Any]) -> Builtin:
    why = "Pandera counts characters; Dataframely's min_length/max_length count bytes"
    exact, low, high = kwargs.get("exact_value"), kwargs.get("min_value"), kwargs.get("max_value")
    if exact is not None:
        template, params = "{col}.str.len_chars() == {exact_value}", {"exact_value": exact}
    elif low is not None and high is not None:
        template = "{col}.str.len_chars().is_between({min_value}, {max_value})"
        params = {"min_value": low, "max_value": high}
    elif low is not None:
        template, params = "{col}.str.len_chars() >= {min_value}", {"min_value": low}
    else:
        template, params = "{col}.str.len_chars() <= {max_value}", {"max_value": high}
    return Builtin(template=template, params=params, why=why)


def _ordinal(kind: str, value: Any) -> bool:
    """Whether `value` can be a bound option of a `kind` column (exact types only)."""
    return type(value).__name__ in _ORDINAL.get(kind, ())


def _pattern(pattern: str | re.Pattern[str]) -> str:
    return pattern.pattern if isinstance(pattern, re.Pattern) else pattern


def _values(written: Any, values: Iterable[Any]) -> list[Any]:
    """The values of a set-like check, in the order the user wrote them where known.

    Pandera keeps them as a frozenset, whose order changes between runs for strings; the
    order matters only for stable source text and expression text.
    """
    distinct = frozenset(values)
    if isinstance(written, (list, tuple)) and frozenset(written) == distinct:
        return list(dict.fromkeys(written))
    try:
        return sorted(distinct)
    except TypeError:
        return sorted(distinct, key=repr)
