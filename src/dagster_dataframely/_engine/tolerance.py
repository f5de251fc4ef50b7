"""Tolerances: how many failing rows a rule's check accepts before it fails at `WARN`, and
before it fails at `ERROR`, as a count of rows or a percentage of the rows checked.

A rule without one keeps its severity's zero tolerance: an `"error"` rule fails at `ERROR`
on its first failing row, a `"warn"` rule at `WARN`. The verdict reads only the counts the
evaluator returns (no second pass over the table).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, TypeVar

import dataframely as dy

from ..errors import InvalidToleranceError
from .dataframely_internals import rule_expressions
from .severity import Severity, unknown_names

S = TypeVar("S", bound=type[dy.Schema])
T = TypeVar("T")

_TOLERANCE_ATTR = "__dagster_dataframely_tolerances__"
_LEVELS = ("warn_above", "error_above")
_FIX = (
    "Write the unit: a whole number of rows (10), or a percentage of the rows checked as text "
    '("1%", "0.5%").'
)


@dataclass(frozen=True)
class Limit:
    """A number of failing rows a level tolerates: a count, or a fraction of the rows checked
    (kept exact, so `"29%"` of 100 rows tolerates 29 rows, not 28)."""

    count: int | None = None
    fraction: Fraction | None = None

    def rows(self, row_count: int) -> int:
        """The most failing rows tolerated among `row_count` rows."""
        if self.count is not None:
            return self.count
        assert self.fraction is not None
        return self.fraction.numerator * row_count // self.fraction.denominator

    def __str__(self) -> str:
        if self.count is not None:
            return f"{self.count:,} row{'' if self.count == 1 else 's'}"
        assert self.fraction is not None
        return f"{float(self.fraction * 100):g}%"


def limit(value: Any, *, level: str, where: str) -> Limit:
    """`value` (an `int` count of rows, or a percentage as text, `"1%"`) as a `Limit`.

    The form tells the unit. A bare float has no unit to tell: `0.5` is half the rows to a
    Pointblank user and 0.5% to one who thinks in percentages, as Soda writes them, and `1.0`
    one row or every row. So a float is refused unless every reading agrees (`0.0`). Raises
    `InvalidToleranceError` naming `where` (the rule), the readings and the forms that work.
    """
    problem = None
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        problem = f"is a {type(value).__name__}"
    elif isinstance(value, int):
        if value < 0:
            problem = "is negative"
        else:
            return Limit(count=value)
    elif isinstance(value, float):
        if not math.isfinite(value) or value < 0:
            problem = "is negative" if math.isfinite(value) else "is not a finite number"
        elif value == 0:
            return Limit(count=0)
        else:
            problem = _readings(value)
    else:
        text = value.strip()
        try:
            percent = Fraction(text.removesuffix("%").strip()) if text.endswith("%") else None
        except ValueError:
            percent = None
        if percent is None:
            problem = "is text that is no percentage"
        elif not 0 <= percent <= 100:
            problem = "is a percentage outside 0% to 100%"
        else:
            return Limit(fraction=percent / 100)
    raise InvalidToleranceError(f"{level}={value!r} for {where} {problem}. {_FIX}")


def _readings(value: float) -> str:
    """How a float tolerance reads: `1.0` as one row, as every row (a fraction), or as 1%."""
    readings = [f"{int(value):,} row{'' if value == 1 else 's'}"] if value.is_integer() else []
    if value <= 1:
        readings.append(f"{value * 100:g}% of the rows (a fraction)")
    if value <= 100:
        readings.append(f"{value:g}% (a percentage)")
    if len(readings) > 1:
        return f"is a bare number that reads {len(readings)} ways: as " + ", or as ".join(readings)
    if value <= 100:
        return f'is a bare number: a percentage is text, "{value:g}%"'
    if value.is_integer():
        return f"is a float: a count of rows is an int, {int(value)}"
    return "is a float, neither a count of rows (an int) nor a percentage (at most 100%)"


@dataclass(frozen=True)
class Tolerance:
    """The failing rows a rule's check tolerates: above `warn_above` it fails at `WARN`, above
    `error_above` at `ERROR`. A level left out is never reached.

    Each limit is a count of rows (`10`) or a percentage of the rows checked (`"1%"`); a
    float is refused, as its unit would be a guess (`1.0`: one row, or every row?). Pass it
    per asset as `tolerate={"email|nullability": dd.Tolerance(...)}` on `dd.schema_checks`
    or `dd.with_schemas`; on the schema class, use `dd.tolerate`.

    Example:
        ```python
        dd.Tolerance(warn_above=10, error_above="1%")
        ```
    """

    warn_above: Limit | None
    error_above: Limit | None

    def __init__(
        self,
        *,
        warn_above: int | str | None = None,
        error_above: int | str | None = None,
    ) -> None:
        self._fill(warn_above, error_above, where="dd.Tolerance")

    @classmethod
    def of(cls, value: Any, *, where: str) -> Tolerance:
        """A `Tolerance`, or a mapping of its levels (as YAML gives it), as a `Tolerance`;
        an invalid limit's message names `where` (the rule)."""
        if isinstance(value, Tolerance):
            return value
        if isinstance(value, Mapping) and set(value) <= set(_LEVELS):
            tolerance = cls.__new__(cls)
            tolerance._fill(value.get("warn_above"), value.get("error_above"), where=where)
            return tolerance
        raise InvalidToleranceError(
            f"The tolerance of {where} is {value!r}: pass dd.Tolerance(warn_above=..., "
            "error_above=...) or a mapping with those keys."
        )

    def _fill(self, warn_above: Any, error_above: Any, *, where: str) -> None:
        """Set the limits, refusing any no rule can have."""
        warn, error = (
            None if value is None else limit(value, level=level, where=where)
            for level, value in zip(_LEVELS, (warn_above, error_above), strict=True)
        )
        if warn is None and error is None:
            raise InvalidToleranceError(
                f"The tolerance of {where} tolerates nothing: give warn_above=, error_above= "
                "or both (dd.Tolerance(warn_above=10, error_above='1%'))."
            )
        if warn is not None and error is not None and _above(warn, error):
            raise InvalidToleranceError(
                f"The tolerance of {where} warns above {warn} but errors above {error}, so it "
                "could never warn. Make warn_above= at most error_above=."
            )
        object.__setattr__(self, "warn_above", warn)
        object.__setattr__(self, "error_above", error)

    def judge(
        self, failed: int, row_count: int, *, table_fails: bool = False
    ) -> tuple[Severity | None, int]:
        """The level `failed` of `row_count` rows crosses (`"error"`, `"warn"`, or None within
        the tolerance), and the margin: failing rows to spare before the check fails (>= 0),
        or how many rows it is above the highest limit it crossed (< 0). A verdict on the
        whole (empty) table (`table_fails`) crosses every limit, as no row count measures it."""
        warn = None if self.warn_above is None else self.warn_above.rows(row_count)
        error = None if self.error_above is None else self.error_above.rows(row_count)
        if error is not None and (table_fails or failed > error):
            return "error", error - failed
        if warn is not None and (table_fails or failed > warn):
            return "warn", warn - failed
        return None, min(bound for bound in (warn, error) if bound is not None) - failed

    @property
    def can_error(self) -> bool:
        return self.error_above is not None

    def __str__(self) -> str:
        return ", ".join(
            f"{word} above {bound}"
            for word, bound in (("warn", self.warn_above), ("error", self.error_above))
            if bound is not None
        )


def _above(warn: Limit, error: Limit) -> bool:
    """Whether `warn` is above `error` whatever the row count (comparable only in one unit)."""
    if warn.count is not None and error.count is not None:
        return warn.count > error.count
    if warn.fraction is not None and error.fraction is not None:
        return warn.fraction > error.fraction
    return False


#: The zero tolerance of a rule without one, by its severity.
ZERO = {"error": Tolerance(error_above=0), "warn": Tolerance(warn_above=0)}


def tolerate(
    *rules: str,
    warn_above: int | str | None = None,
    error_above: int | str | None = None,
) -> Callable[[S], S]:
    """Declare on a schema how many failing rows its `rules` tolerate: above `warn_above`
    their checks fail at `WARN`, above `error_above` at `ERROR`; a level left out is never
    reached. A limit is a count of rows (`10`) or a percentage of the rows checked (`"1%"`);
    a float is refused (its unit would be a guess).

    A name is a Dataframely rule name (`"email|nullability"`) or a column name (every rule of
    that column); a rule name wins over its column's. Decorators stack. `tolerate=` on
    `dd.schema_checks` and `dd.with_schemas` overrides them for one asset. Unknown names and
    invalid limits raise `InvalidToleranceError` when the class is decorated.

    Example:
        ```python
        @dd.tolerate("email|nullability", warn_above=10, error_above="1%")
        class Customers(dy.Schema): ...
        ```
    """

    def decorate(schema: S) -> S:
        if not (isinstance(schema, type) and issubclass(schema, dy.Schema)):
            raise InvalidToleranceError(
                f"dd.tolerate decorates a dy.Schema class, not {schema!r}. (Tolerances of a "
                "collection's filters are not supported yet.)"
            )
        where = f"{', '.join(map(repr, rules))} of schema {schema.__name__}"
        levels = {"warn_above": warn_above, "error_above": error_above}
        tolerance = Tolerance.of(levels, where=where)
        _guard_names(schema, rules, where="dd.tolerate")
        setattr(schema, _TOLERANCE_ATTR, declared(schema) | dict.fromkeys(rules, tolerance))
        return schema

    return decorate


def declared(schema: type[dy.Schema]) -> dict[str, Tolerance]:
    """The tolerances a schema declares through `dd.tolerate`, by the names written."""
    return dict(getattr(schema, _TOLERANCE_ATTR, {}))


def overrides(schema_name: str, tolerate: Mapping[str, Any] | None) -> dict[str, Tolerance]:
    """A `tolerate=` argument as `{name: Tolerance}`, values checked (names are checked with
    the schema's rules, by `resolve`)."""
    if tolerate is None:
        return {}
    if not isinstance(tolerate, Mapping):
        raise InvalidToleranceError(
            f"tolerate= takes a mapping of rule or column names to tolerances, got "
            f"{type(tolerate).__name__}: pass {{'email|nullability': dd.Tolerance(warn_above=10)}}."
        )
    return {
        name: Tolerance.of(value, where=f"{name!r} of schema {schema_name}")
        for name, value in tolerate.items()
    }


def shared(
    build: Callable[..., T], tolerate: Mapping[str, Any] | None, *, by: str
) -> Callable[..., T]:
    """`build` (`dd.schema_checks`) for a `tolerate=` that `by` (`dd.with_schemas`) applies
    to every schema it checks: a tolerance error of one asset also says that, and how to
    scope the tolerance to that asset."""

    def built(schema: Any, *, asset: Any, **settings: Any) -> T:
        try:
            return build(schema, asset=asset, **settings)
        except InvalidToleranceError as error:
            if not tolerate:
                raise
            key = asset if isinstance(asset, str) else asset.to_user_string()
            raise InvalidToleranceError(
                f"{error} (asset {key}: {by}'s tolerate= applies to every schema of the "
                "call. To tolerate this on one asset only, declare it on that asset's schema "
                f"with @dd.tolerate(...), or check {key} with its own "
                f"dd.schema_checks(schema, asset={key!r}, tolerate=...) and leave it out of "
                "the call.)"
            ) from None

    return built


def resolve(
    schema: type[dy.Schema],
    owners: Mapping[str, str | None],
    severities: Mapping[str, Severity],
    override: Mapping[str, Tolerance],
) -> dict[str, Tolerance]:
    """Each rule's tolerance (absent: its severity's zero tolerance): `override` by rule, by
    column, then the schema's by rule, by column. A `"warn"` rule cannot fail at `ERROR`."""
    _guard_names(schema, override, where="tolerate=", owners=owners)
    mine = declared(schema)
    chosen: dict[str, Tolerance] = {}
    for rule, column in owners.items():
        for source in (override, mine):
            found = source.get(rule) or (source.get(column) if column is not None else None)
            if found is not None:
                chosen[rule] = found
                break
        if rule in chosen and severities[rule] == "warn" and chosen[rule].can_error:
            raise InvalidToleranceError(
                f"Rule {rule!r} of schema {schema.__name__} is 'warn' (dd.warn or warn=), so it "
                f"never fails at ERROR, but its tolerance says error above "
                f"{chosen[rule].error_above}. Drop error_above= or the 'warn'."
            )
    return chosen


def _guard_names(
    schema: type[dy.Schema],
    names: Iterable[str],
    *,
    where: str,
    owners: Mapping[str, str | None] | None = None,
) -> None:
    rules = owners if owners is not None else rule_expressions(schema)
    unknown, known = unknown_names(schema, names, rules)
    if unknown:
        raise InvalidToleranceError(
            f"{where} names {', '.join(map(repr, unknown))}, neither a rule nor a column of "
            f"schema {schema.__name__}.{known}"
        )
