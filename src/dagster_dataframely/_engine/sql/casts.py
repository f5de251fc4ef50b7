"""`read_dtypes="cast"` in SQL: each cast with an exact form in a dialect is made in the
database, with the same "value unchanged" guarantee as the polars cast.

A cast's SQL is a guarded expression over the column as read: the converted value where it
converts, `NULL` where polars' non-strict cast gives `null` (a category outside the `Enum`,
an integer out of range, a float that is not an integer, a number past the `Decimal`'s
precision). Guards, not `TRY_CAST`: Snowflake's takes only strings, PostgreSQL has none, and
DuckDB's raises on a timestamp out of range. The cast's rule is then the polars one, read
back: a value fails where it is not null and its conversion is null or reads back otherwise.

A cast without an exact form here falls back: polars casts the column, and the cast's rule
and every rule that reads the column run there. Knows nothing of Dagster.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import polars as pl
from sqlglot import exp

from ..read_dtypes import Cast
from .arithmetic import integer_range
from .dialects import Dialect
from .literals import literal

_TABLE = "__dy_read"
#: Significant digits a float of the width reads back unchanged through decimal text (DBL_DIG,
#: FLT_DIG). Within them DuckDB and PostgreSQL round a float to a `Decimal` as polars does
#: (`tests/test_read_dtypes_parity.py`); past them DuckDB's multiplication by a power of ten
#: and PostgreSQL's 15-digit text of a float disagree with polars' exact value.
_FLOAT_DIGITS: dict[type[pl.DataType], int] = {pl.Float64: 15, pl.Float32: 6}
_EPOCH = dt.datetime(1970, 1, 1)
_PER_SECOND = {"ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


@dataclass(frozen=True)
class SQLCast:
    """A cast made in SQL: `converted` over the column as read (`NULL` where polars' cast
    gives `null`), `back` its value cast back to the read type (None where a converted value
    is the value read)."""

    cast: Cast
    converted: exp.Expr
    back: exp.DataType | None = None

    def unchanged(self) -> exp.Expr:
        """The cast's rule over the cast relation: the value read is null, or it converted
        and reads back unchanged."""
        read = exp.column(self.cast.original, quoted=True)
        value = exp.column(self.cast.column, quoted=True)
        converted: exp.Expr = exp.not_(exp.Is(this=value, expression=exp.Null()))
        if self.back is not None:
            back = exp.EQ(this=exp.cast(value.copy(), self.back), expression=read.copy())
            converted = exp.and_(converted, back)
        return exp.or_(exp.Is(this=read, expression=exp.Null()), exp.paren(converted))


def compile_casts(casts: Sequence[Cast], dialect: Dialect) -> dict[str, SQLCast]:
    """Column -> its cast in SQL, for each of `casts` with an exact form in `dialect`."""
    compiled = {}
    for cast in casts:
        found = _compile(cast, exp.column(cast.column, table=_TABLE, quoted=True), dialect)
        if found is not None:
            compiled[cast.column] = found
    return compiled


def cast_relation(
    relation: exp.Select,
    dtypes: Mapping[str, pl.DataType],
    casts: Sequence[Cast],
    compiled: Mapping[str, SQLCast],
) -> exp.Select:
    """The rows of `relation` as the polars cast frame has them (`dtypes`): each cast column
    converted where `compiled` has it (else as read, for polars to cast), and each value as
    read beside it, under the cast's `original` name."""
    originals = {cast.original: cast.column for cast in casts}
    columns: list[exp.Expr] = []
    for name in dtypes:
        read = exp.column(originals.get(name, name), table=_TABLE, quoted=True)
        if name in compiled:
            columns.append(exp.alias_(compiled[name].converted, name, quoted=True))
        else:
            columns.append(exp.alias_(read, name, quoted=True))
    return exp.select(*columns).from_(relation.copy().subquery(_TABLE))


def _compile(cast: Cast, value: exp.Expr, dialect: Dialect) -> SQLCast | None:
    read, declared = cast.read, cast.declared
    if isinstance(declared, (pl.Enum, pl.Categorical)):
        text = exp.cast(value, exp.DataType.build("TEXT"))
        if isinstance(declared, pl.Categorical):
            return SQLCast(cast, text)
        categories = [exp.Literal.string(c) for c in declared.categories.to_list()]
        if not categories:
            return None
        return SQLCast(cast, _when(exp.In(this=text, expressions=categories), text.copy()))
    if declared.is_integer():
        low, high = integer_range(declared)
        if read.is_integer():  # bounds within the read type's, so each is a literal of it
            read_low, read_high = integer_range(read)
            within = exp.Between(
                this=value,
                low=exp.Literal.number(max(low, read_low)),
                high=exp.Literal.number(min(high, read_high)),
            )
            return SQLCast(cast, _when(within, value.copy()))
        return _float_to_integer(cast, value, low, high, dialect)
    if isinstance(declared, pl.Decimal):
        return _to_decimal(cast, value, dialect)
    if isinstance(declared, pl.Date) and isinstance(read, pl.Datetime):
        back = dialect.naive_timestamp(read.time_unit)
        if back is None:
            return None
        return SQLCast(cast, exp.cast(value, exp.DataType.build("DATE")), back)
    if isinstance(declared, pl.Datetime) and isinstance(read, pl.Datetime):
        if declared.time_unit == read.time_unit:
            return SQLCast(cast, value)  # a zone's alias: the same instants
        return _to_unit(cast, value, dialect)
    return None


def _float_to_integer(
    cast: Cast, value: exp.Expr, low: int, high: int, dialect: Dialect
) -> SQLCast | None:
    """A float that is an integer in the declared range, as `BIGINT`; NaN and inf are
    neither. The bounds (0 or a power of two) are exact in the float's own type."""
    bounds = (
        literal(float(low), cast.read, dialect.name),
        literal(float(high + 1), cast.read, dialect.name),
    )
    if high >= 2**63 or bounds[0] is None or bounds[1] is None:
        return None  # a UInt64 past BIGINT, a float of no SQL type
    within = exp.and_(
        exp.GTE(this=value, expression=bounds[0]),
        exp.LT(this=value.copy(), expression=bounds[1]),
        exp.EQ(this=value.copy(), expression=exp.Floor(this=value.copy())),
    )
    return SQLCast(cast, _when(within, exp.cast(value.copy(), exp.DataType.build("BIGINT"))))


def _to_decimal(cast: Cast, value: exp.Expr, dialect: Dialect) -> SQLCast | None:
    """A number that fits the `Decimal`. A decimal fits when it has no digits past the scale;
    a float is rounded to the scale through a `Decimal` one digit wider (999999.995 rounds
    to 1000000.00, past `Decimal(8, 2)`), then must read back as the same float."""
    declared = cast.declared
    assert isinstance(declared, pl.Decimal)
    precision, scale = declared.precision, declared.scale
    limit = exp.Literal.number(10 ** (precision - declared.scale))
    target = exp.DataType.build(f"DECIMAL({precision}, {scale})")
    if isinstance(cast.read, pl.Decimal):
        fits = exp.and_(
            exp.EQ(
                this=value,
                expression=exp.Round(this=value.copy(), decimals=exp.Literal.number(scale)),
            ),
            exp.LT(this=exp.Abs(this=value.copy()), expression=limit),
        )
        return SQLCast(cast, _when(fits, exp.cast(value.copy(), target)))
    digits = _FLOAT_DIGITS.get(type(cast.read))
    back = dialect.sql_type(cast.read)
    if not dialect.float_to_decimal or digits is None or precision > digits or back is None:
        return None
    wider = exp.DataType.build(f"DECIMAL({precision + 1}, {scale})")
    rounded = _when(
        exp.LT(this=exp.Abs(this=value), expression=limit), exp.cast(value.copy(), wider)
    )
    fits = exp.LT(this=exp.Abs(this=rounded), expression=limit.copy())
    return SQLCast(cast, _when(fits, exp.cast(rounded.copy(), target)), back)


def _to_unit(cast: Cast, value: exp.Expr, dialect: Dialect) -> SQLCast | None:
    """A wall-clock timestamp in another unit: a finer unit holds a shorter range of
    instants, so a value outside it converts to `NULL`; a coarser one reads back otherwise
    where digits are lost."""
    read, declared = cast.read, cast.declared
    assert isinstance(read, pl.Datetime) and isinstance(declared, pl.Datetime)
    if read.time_zone is not None or declared.time_zone is not None:
        return None
    target = dialect.naive_timestamp(declared.time_unit)
    back = dialect.naive_timestamp(read.time_unit)
    if target is None or back is None:
        return None
    converted: exp.Expr = exp.cast(value, target)
    if _PER_SECOND[declared.time_unit] > _PER_SECOND[read.time_unit]:
        bounds = _unit_range(declared.time_unit, read.time_unit)
        if bounds is None:
            return None
        low, high = (exp.cast(exp.Literal.string(b.isoformat(sep=" ")), back) for b in bounds)
        converted = _when(exp.Between(this=value.copy(), low=low, high=high), converted)
    return SQLCast(cast, converted, back)


def _unit_range(unit: str, read: str) -> tuple[dt.datetime, dt.datetime] | None:
    """The first and last instant of the coarser unit `read` (`ms`, `us`) that 64 bits of
    `unit` since the epoch hold, where a Python datetime holds them too."""
    step = _PER_SECOND[unit] // _PER_SECOND[read]
    low, high = -((2**63) // step), (2**63 - 1) // step
    microseconds = 1_000_000 // _PER_SECOND[read]
    try:
        return (
            _EPOCH + dt.timedelta(microseconds=low * microseconds),
            _EPOCH + dt.timedelta(microseconds=high * microseconds),
        )
    except OverflowError:
        return None


def _when(condition: exp.Expr, then: exp.Expr) -> exp.Expr:
    """`CASE WHEN condition THEN then END`: `NULL` where the condition is not true."""
    return exp.Case(ifs=[exp.If(this=condition, true=then)])
