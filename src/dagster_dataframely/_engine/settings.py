"""Settings: argument > environment variable `DAGSTER_DATAFRAMELY_<NAME>` > default.

Resolved once, at definition time, so a run never changes behaviour because an
environment variable changed after the code location loaded.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, cast

from ..errors import InvalidSettingError

Granularity = Literal["rule", "column", "schema"]
SchemaRules = Literal["collapsed", "per_rule"]

T = TypeVar("T")

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _choice(*options: str) -> Callable[[Any], str]:
    def parse(value: Any) -> str:
        if value not in options:
            raise ValueError(f"expected one of {', '.join(map(repr, options))}")
        return str(value)

    return parse


def _flag(value: Any) -> bool:
    """The one rule of every boolean setting, argument or environment variable: a bool, the
    integers 1 and 0, or one of the words in `_TRUE` and `_FALSE` in any case."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise ValueError("expected true or false: True/False, 1/0, true/false, yes/no or on/off")


def _count(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError("expected a whole number >= 0")
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValueError("expected a whole number >= 0") from None
    if number < 0 or (isinstance(value, float) and not value.is_integer()):
        raise ValueError("expected a whole number >= 0")
    return number


def _positive(value: Any) -> int:
    try:
        number = _count(value)
    except ValueError:
        number = 0
    if number < 1:
        raise ValueError("expected a whole number >= 1")
    return number


def _keep(value: Any) -> bool | str:
    """True or False as `_flag` reads them, else a non-empty name of where to keep."""
    try:
        return _flag(value)
    except ValueError:
        return _text(value)


def _text(value: Any) -> str:
    if not isinstance(value, (str, os.PathLike)) or not str(value):
        raise ValueError("expected a non-empty path")
    return str(value)


#: name -> (parser, default)
_SETTINGS: dict[str, tuple[Callable[[Any], Any], Any]] = {
    "check_granularity": (_choice("rule", "column", "schema"), "rule"),
    "schema_rules": (_choice("collapsed", "per_rule"), "collapsed"),
    "quarantine": (_flag, False),
    "statistics": (_flag, True),
    "row_sample": (_count, 5),
    "max_failure_samples": (_count, 5),
    "quarantine_dir": (_text, "quarantine"),
    "read_dtypes": (_choice("strict", "cast"), "strict"),
    "keep_failing_rows": (_keep, False),
    "max_failing_rows": (_count, 1_000_000),
    "observe_fractions": (_flag, False),
    "checks_per_step": (_positive, 50),
    "check_concurrency": (_positive, 4),
}


def env_var(name: str) -> str:
    """The environment variable that sets `name`."""
    return f"DAGSTER_DATAFRAMELY_{name.upper()}"


def resolve(name: str, argument: Any = None) -> Any:
    """The value of setting `name`: `argument` unless None, else its environment variable,
    else the default. Raises `InvalidSettingError` naming the tier the bad value came from.
    """
    parse, default = _SETTINGS[name]
    if argument is not None:
        value, tier = argument, f"argument {name}="
    elif (from_env := os.environ.get(env_var(name))) is not None:
        value, tier = from_env, f"environment variable {env_var(name)}="
    else:
        return default
    try:
        return parse(value)
    except ValueError as error:
        raise InvalidSettingError(
            f"Invalid setting from {tier}{value!r}: {error}. Fix the {tier.split()[0]} "
            f"or unset it to use the default {default!r}."
        ) from None


@dataclass(frozen=True)
class CheckSettings:
    """The settings that decide check names and what a check result carries."""

    check_granularity: Granularity = "rule"
    schema_rules: SchemaRules = "collapsed"
    max_failure_samples: int = 5

    @classmethod
    def resolve(
        cls,
        *,
        check_granularity: str | None = None,
        schema_rules: str | None = None,
        max_failure_samples: int | None = None,
    ) -> CheckSettings:
        return cls(
            check_granularity=cast(Granularity, resolve("check_granularity", check_granularity)),
            schema_rules=cast(SchemaRules, resolve("schema_rules", schema_rules)),
            max_failure_samples=resolve("max_failure_samples", max_failure_samples),
        )
