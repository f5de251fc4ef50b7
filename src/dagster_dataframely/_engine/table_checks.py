"""Table checks: the volume (row-count bounds) and the freshness of the data (the newest value
of a timestamp column lies within an age) of a table or of the run's partition.

Declared on the schema (`dd.expect_rows`, `dd.expect_fresh`, like `dd.warn` and
`dd.tolerate`) or per asset (`expect_rows=`, `expect_fresh=`, which replace the schema's).
Their figures come from the same pass as the rules' counts: the row count the evaluator
always computes, and one `MAX(column)` beside it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from typing import Any, TypeVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import dataframely as dy
import polars as pl

from ..errors import InvalidTableCheckError
from .display import duration_words
from .severity import Severity

S = TypeVar("S", bound=type[dy.Schema])

_ROWS_ATTR = "__dagster_dataframely_expect_rows__"
_FRESH_ATTR = "__dagster_dataframely_expect_fresh__"
_SEVERITIES = ("error", "warn")
_UNITS = {"d": "days", "h": "hours", "m": "minutes", "s": "seconds"}
_DURATION = re.compile(r"^(?:\s*\d+(?:\.\d+)?\s*[dhms])+\s*$")
_PART = re.compile(r"(\d+(?:\.\d+)?)\s*([dhms])")


def _severity(value: Any, where: str) -> Severity:
    if value not in _SEVERITIES:
        raise InvalidTableCheckError(
            f"{where} has severity={value!r}: give 'error' (fails at ERROR, blocks downstream) "
            "or 'warn' (fails at WARN)."
        )
    return value


@dataclass(frozen=True)
class ExpectRows:
    """The rows a table (or the run's partition) must hold: at least `min`, at most `max`
    (a bound left out is not checked). Fails at `severity` (`"error"` or `"warn"`).

    Example:
        ```python
        dd.ExpectRows(min=1_000, max=10_000_000, severity="warn")
        ```
    """

    min: int | None = None
    max: int | None = None
    severity: Severity = "error"

    def __post_init__(self) -> None:
        where = f"dd.ExpectRows(min={self.min!r}, max={self.max!r})"
        for bound in (self.min, self.max):
            if bound is not None and (
                isinstance(bound, bool) or not isinstance(bound, int) or bound < 0
            ):
                raise InvalidTableCheckError(
                    f"{where}: a bound is a whole number of rows, 0 or more, not {bound!r}. "
                    "Give min=1 (the table is not empty) or max=10_000_000."
                )
        if self.min is None and self.max is None:
            raise InvalidTableCheckError(
                f"{where} bounds nothing: give min=, max= or both (dd.ExpectRows(min=1))."
            )
        if self.min is not None and self.max is not None and self.min > self.max:
            raise InvalidTableCheckError(
                f"{where}: min is above max, so every table would fail. Swap them."
            )
        _severity(self.severity, where)

    def judge(self, rows: int) -> bool:
        """Whether `rows` lies within the bounds."""
        return (self.min is None or rows >= self.min) and (self.max is None or rows <= self.max)

    @property
    def description(self) -> str:
        """The check's description, on its spec and its results."""
        return f"The table holds {self}."

    def __str__(self) -> str:
        if self.max is None:
            return f"at least {self.min:,} rows"
        if self.min is None:
            return f"at most {self.max:,} rows"
        return f"between {self.min:,} and {self.max:,} rows"


def duration(value: Any, *, where: str) -> timedelta:
    """`value` (a `timedelta`, seconds as a number, or text such as `"6h"`, `"1d12h"`,
    `"90m"`) as a positive `timedelta`."""
    try:
        found = _timedelta(value)
    except (ValueError, OverflowError):  # NaN, infinity, or past timedelta's largest
        found = None
    if found is None or found <= timedelta(0):
        raise InvalidTableCheckError(
            f"{where} has within={value!r}: give a positive age of at most "
            f"{timedelta.max.days:,} days, a datetime.timedelta, a number of seconds or text "
            'of days, hours, minutes and seconds ("6h", "1d12h", "90m").'
        )
    return found


def _timedelta(value: Any) -> timedelta | None:
    """`value` as a `timedelta`, None for a value of no form `duration` reads."""
    if isinstance(value, timedelta):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return timedelta(seconds=value)
    if isinstance(value, str) and _DURATION.match(value):
        return timedelta(
            **{
                _UNITS[unit]: sum(float(n) for n, u in _PART.findall(value) if u == unit)
                for unit in {u for _, u in _PART.findall(value)}
            }
        )
    return None


@dataclass(frozen=True)
class ExpectFresh:
    """The newest value of the timestamp `column` lies within `within` of the reference time:
    the end of the run's partition for a time-window partition, else the time the check runs.
    Fails at `severity` (`"error"` or `"warn"`); an empty table (or only nulls) fails.

    A zoned column (`dy.Datetime(time_zone=...)`) holds instants. A naive column holds
    wall-clock times, read in `time_zone` (default UTC); a `dy.Date` is the start of its day
    there. `within` is a `timedelta`, a number of seconds or text (`"6h"`, `"1d12h"`).

    Example:
        ```python
        dd.ExpectFresh("ordered_at", within="6h", time_zone="Europe/Berlin")
        ```
    """

    column: str
    within: timedelta
    severity: Severity = "error"
    time_zone: str | None = None

    def __init__(
        self,
        column: str,
        *,
        within: timedelta | int | float | str,
        severity: Severity = "error",
        time_zone: str | None = None,
    ) -> None:
        where = f"dd.ExpectFresh({column!r})"
        if not isinstance(column, str):
            raise InvalidTableCheckError(f"{where}: the column is a name (a string).")
        if time_zone is not None:
            try:
                ZoneInfo(time_zone)
            except (ZoneInfoNotFoundError, ValueError):
                raise InvalidTableCheckError(
                    f"{where} has time_zone={time_zone!r}, which is no IANA time zone: give "
                    "one such as 'UTC' or 'Europe/Berlin'."
                ) from None
        object.__setattr__(self, "column", column)
        object.__setattr__(self, "within", duration(within, where=where))
        object.__setattr__(self, "severity", _severity(severity, where))
        object.__setattr__(self, "time_zone", time_zone)

    def instant(self, value: datetime | date) -> datetime:
        """A column value as an aware UTC instant: naive values (and dates, at their start)
        read in `time_zone`, UTC unless given."""
        if not isinstance(value, datetime):
            value = datetime(value.year, value.month, value.day)
        if value.tzinfo is None:
            value = value.replace(tzinfo=ZoneInfo(self.time_zone or "UTC"))
        return value.astimezone(timezone.utc)

    @property
    def description(self) -> str:
        """The check's description, on its spec and its results."""
        return f"The {self}."

    def __str__(self) -> str:
        zone = f" (naive values in {self.time_zone})" if self.time_zone else ""
        return f"newest {self.column} within {duration_words(self.within, exact=True)}{zone}"


def expect_rows(
    *, min: int | None = None, max: int | None = None, severity: Severity = "error"
) -> Callable[[S], S]:
    """Declare on a schema the rows its table (or each partition) must hold: at least `min`,
    at most `max`. Reported as the check `dy_table__row_count`, failing at `severity`.
    `expect_rows=` on `dd.schema_checks`/`dd.with_schemas` replaces it for one asset.

    Example:
        ```python
        @dd.expect_rows(min=1_000)
        class Orders(dy.Schema): ...
        ```
    """
    declared = ExpectRows(min=min, max=max, severity=severity)

    def decorate(schema: S) -> S:
        _schema_class(schema, "dd.expect_rows")
        setattr(schema, _ROWS_ATTR, declared)
        return schema

    return decorate


def expect_fresh(
    column: str,
    *,
    within: timedelta | int | float | str,
    severity: Severity = "error",
    time_zone: str | None = None,
) -> Callable[[S], S]:
    """Declare on a schema that the newest value of its timestamp `column` lies within
    `within` of the partition's end (a time-window partition) or of the time the check runs.
    Reported as the check `dy_table__freshness`, failing at `severity`. Naive values are read
    in `time_zone` (UTC unless given). `expect_fresh=` on `dd.schema_checks` replaces it.

    Example:
        ```python
        @dd.expect_fresh("ordered_at", within="6h")
        class Orders(dy.Schema): ...
        ```
    """
    declared = ExpectFresh(column, within=within, severity=severity, time_zone=time_zone)

    def decorate(schema: S) -> S:
        _schema_class(schema, "dd.expect_fresh")
        _guard_column(schema, declared)
        setattr(schema, _FRESH_ATTR, declared)
        return schema

    return decorate


def _schema_class(schema: Any, where: str) -> None:
    if not (isinstance(schema, type) and issubclass(schema, dy.Schema)):
        raise InvalidTableCheckError(f"{where} decorates a dy.Schema class, not {schema!r}.")


def _guard_column(schema: type[dy.Schema], fresh: ExpectFresh) -> None:
    """Refuse a freshness column the schema lacks, that is no timestamp, or a `time_zone`
    for a zoned column (whose values are instants already)."""
    columns = schema.columns()
    where = f"The freshness check of schema {schema.__name__}"
    column = columns.get(fresh.column)
    if column is None:
        raise InvalidTableCheckError(
            f"{where} names column {fresh.column!r}, which the schema does not have. Its "
            f"columns are {', '.join(map(repr, columns))}."
        )
    dtype = column.dtype
    if not isinstance(dtype, (pl.Datetime, pl.Date)):
        raise InvalidTableCheckError(
            f"{where} names column {fresh.column!r} of dtype {dtype}: freshness reads a "
            "dy.Datetime or dy.Date column. Name the column that holds when a row happened."
        )
    if fresh.time_zone is not None and isinstance(dtype, pl.Datetime) and dtype.time_zone:
        raise InvalidTableCheckError(
            f"{where} gives time_zone={fresh.time_zone!r} for column {fresh.column!r}, which "
            f"is zoned ({dtype.time_zone}) and holds instants. Drop time_zone=."
        )


@dataclass(frozen=True)
class TableChecks:
    """The table checks of one asset, resolved: its volume and its freshness, each optional."""

    rows: ExpectRows | None = None
    fresh: ExpectFresh | None = None

    @classmethod
    def of(
        cls,
        schema: type[dy.Schema],
        *,
        expect_rows: ExpectRows | Mapping[str, Any] | None = None,
        expect_fresh: ExpectFresh | Mapping[str, Any] | None = None,
    ) -> TableChecks:
        """The schema's table checks, each replaced by the per-asset one given (a mapping is
        the YAML form: `{min: 1}`, `{column: ordered_at, within: 6h}`)."""
        rows = _rows_of(expect_rows, schema.__name__) or getattr(schema, _ROWS_ATTR, None)
        fresh = _fresh_of(expect_fresh, schema.__name__) or getattr(schema, _FRESH_ATTR, None)
        if fresh is not None:
            _guard_column(schema, fresh)
        return cls(rows=rows, fresh=fresh)

    @property
    def maxima(self) -> tuple[str, ...]:
        """The columns whose maximum the evaluation computes beside the counts."""
        return () if self.fresh is None else (self.fresh.column,)


def _rows_of(value: Any, schema: str) -> ExpectRows | None:
    if value is None or isinstance(value, ExpectRows):
        return value
    if isinstance(value, Mapping) and set(value) <= {"min", "max", "severity"}:
        return ExpectRows(**value)
    refuse_bare_bound(value, where=f"expect_rows= for schema {schema}")
    raise InvalidTableCheckError(
        f"expect_rows= for schema {schema} is {value!r}: pass dd.ExpectRows(min=..., max=...) "
        "or a mapping with keys min, max, severity."
    )


def refuse_bare_bound(value: Any, *, where: str, yaml: bool = False) -> None:
    """Refuse a bare number as `expect_rows` (`where`): it says no bound, neither at least
    nor at most; the message shows both, as YAML writes them or as Python does."""
    if isinstance(value, int) and not isinstance(value, bool):
        least, most = (
            (f"{{{bound}: {value}}}" if yaml else f"dd.ExpectRows({bound}={value})")
            for bound in ("min", "max")
        )
        raise InvalidTableCheckError(
            f"{where} is the number {value}, which says no bound: write {least} for at least "
            f"{value:,} rows, {most} for at most, or both."
        )


def _fresh_of(value: Any, schema: str) -> ExpectFresh | None:
    if value is None or isinstance(value, ExpectFresh):
        return value
    keys = {"column", "within", "severity", "time_zone"}
    if isinstance(value, Mapping) and {"column", "within"} <= set(value) <= keys:
        return ExpectFresh(value["column"], **{k: v for k, v in value.items() if k != "column"})
    raise InvalidTableCheckError(
        f"expect_fresh= for schema {schema} is {value!r}: pass dd.ExpectFresh(column, "
        "within=...) or a mapping with keys column, within (and severity, time_zone)."
    )


#: An asset without table checks.
NO_TABLE_CHECKS = TableChecks()
