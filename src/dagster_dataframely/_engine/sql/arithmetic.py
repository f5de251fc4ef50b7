"""Arithmetic of a custom rule pushed down only where the database computes what polars does.

polars computes `+ - *`, `-x` and `abs` in the dtype its supertype rules give the operands (a
literal takes the column's dtype where it fits: `Int16 + 100` is an `Int16`) and wraps on
overflow. A database widens (rows pass that polars fails) or raises (the step fails). So each
arithmetic node gets the interval its values lie in, from the dtypes of the columns and the
values of the literals, and is pushed down only where that interval fits the result dtype
polars itself reports and a 64-bit integer, which the SQL casts every integer operand to. A
float node is pushed down where the dialect returns infinity on overflow, or where its interval
is finite (its sum cannot overflow); a float product can also underflow, which some databases
raise on, so it falls back there. Anything else raises `NotExact` with the operation in words.

A column's `min`/`max` do not narrow its interval: a custom rule is evaluated on the rows that
break them too.
"""

from __future__ import annotations

import io
import json
import math
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import polars as pl

from .dialects import Dialect
from .exactness import NotExact

#: The interval of a 64-bit signed integer, the SQL type integer operands are cast to.
WIDE = pl.Int64()
#: polars' function names of the unary operations translated here.
UNARY = ("Negate", "Abs")
_SYMBOLS = {"Plus": "+", "Minus": "-", "Multiply": "*"}


@dataclass(frozen=True)
class Interval:
    """The values a subexpression can take (ints exactly, floats as IEEE doubles) and the
    smallest magnitude of its nonzero ones (`inf` when it has none), which says whether a
    product can underflow to zero."""

    low: float
    high: float
    least: float

    def within(self, dtype: pl.DataType) -> bool:
        limits = bounds(dtype)
        return limits.low <= self.low and self.high <= limits.high

    def finite(self) -> bool:
        return math.isfinite(self.low) and math.isfinite(self.high)


@cache
def bounds(dtype: pl.DataType) -> Interval:
    """The values of a numeric `dtype`; for a `Float64` the finite ones (an infinite operand
    never makes a database raise) down to the smallest subnormal."""
    if dtype == pl.Float64:
        return Interval(-sys.float_info.max, sys.float_info.max, _SUBNORMAL)
    if dtype.is_float():
        return Interval(-math.inf, math.inf, 0.0)
    return Interval(*integer_range(dtype), least=1)


_SUBNORMAL = 5e-324


@cache
def integer_range(dtype: pl.DataType) -> tuple[int, int]:
    """The smallest and largest value of an integer dtype, as polars reports them (`Int16`:
    -32768, 32767)."""
    low, high = pl.select(low=dtype.min(), high=dtype.max()).row(0)  # type: ignore[attr-defined]
    return int(low), int(high)


def check(tree: Any, dtypes: Mapping[str, pl.DataType], dialect: Dialect) -> pl.DataType:
    """The polars dtype of the arithmetic node `tree` (a serialized polars expression), or
    `NotExact` where it may wrap in polars, or overflow or raise in `dialect`."""
    return _Prover(dtypes, dialect).operation(tree)[0]


class _Prover:
    def __init__(self, dtypes: Mapping[str, pl.DataType], dialect: Dialect) -> None:
        self.dtypes = dtypes
        self.dialect = dialect

    def operation(self, tree: Any) -> tuple[pl.DataType, Interval]:
        """The dtype and the interval of an arithmetic node proven exact."""
        ((kind, body),) = tree.items()
        dtype = self.dtype(tree)
        operands: tuple[Interval, ...]
        if kind == "BinaryExpr":
            op = body["op"]
            operands = (self.interval(body["left"]), self.interval(body["right"]))
            interval = _combine(op, *operands, integer=dtype.is_integer())
            words = f"{self.label(body['left'])} {_SYMBOLS[op]} {self.label(body['right'])}"
        else:
            function = body["function"]
            (operand,) = body["input"]
            operands = (self.interval(operand),)
            interval = _unary(function, operands[0])
            words = f"{'-' if function == 'Negate' else 'abs '}{self.label(operand)}"
        if kind == "BinaryExpr" and not dtype.is_integer() and self._integers(body):
            # polars 1.x gives UInt64 with Int64 the supertype Float64: it computes in floats
            # what SQL would compute in (overflowing) integers
            raise NotExact(f"integer operands computed as floats by polars: {words}")
        if dtype.is_integer():
            if not all(item.within(dtype) and item.within(WIDE) for item in (*operands, interval)):
                raise NotExact(f"integer arithmetic may wrap: {words}")
        elif self.dialect.float_overflow_raises:
            if not interval.finite():
                raise NotExact(f"float arithmetic may overflow in {self.dialect.name}: {words}")
            if interval.least == 0:
                raise NotExact(f"float product may underflow in {self.dialect.name}: {words}")
        return dtype, interval

    def _integers(self, body: Any) -> bool:
        """Both operands of a binary node are integers (a literal's dtype is its own)."""
        return all(self.dtype(body[side]).is_integer() for side in ("left", "right"))

    def interval(self, tree: Any) -> Interval:
        """The values `tree` can take: a literal's own, an arithmetic node's proven interval,
        else every value of its dtype."""
        ((kind, body),) = tree.items()
        if kind == "Literal" and "Dyn" in body:
            ((_, value),) = body["Dyn"].items()
            return Interval(value, value, abs(value) or math.inf)
        if (kind == "BinaryExpr" and body["op"] in _SYMBOLS) or (
            kind == "Function" and body["function"] in UNARY
        ):
            return self.operation(tree)[1]
        return bounds(self.dtype(tree))

    def label(self, tree: Any) -> str:
        """An operand in words: a literal's value, else its dtype (`Int16 + 100`)."""
        ((kind, body),) = tree.items()
        if kind == "Literal" and "Dyn" in body:
            ((_, value),) = body["Dyn"].items()
            return str(value)
        return str(self.dtype(tree))

    def dtype(self, tree: Any) -> pl.DataType:
        """The dtype polars gives `tree` over columns of `dtypes`: its own supertype rules."""
        return _polars_dtype(json.dumps(tree), tuple(self.dtypes.items()))


@cache
def _polars_dtype(tree: str, dtypes: tuple[tuple[str, pl.DataType], ...]) -> pl.DataType:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # polars deprecates JSON expressions; the reader pins it
        expr = pl.Expr.deserialize(io.StringIO(tree), format="json")
    (dtype,) = pl.LazyFrame(schema=dict(dtypes)).select(expr).collect_schema().dtypes()
    return dtype


def _combine(op: str, left: Interval, right: Interval, *, integer: bool) -> Interval:
    """The interval of `left op right`. A sum's nonzero values are at least 1 apart from zero
    in integers; in floats they can be the smallest subnormal."""
    least = 1 if integer else _SUBNORMAL
    if op == "Plus":
        return Interval(left.low + right.low, left.high + right.high, least)
    if op == "Minus":
        return Interval(left.low - right.high, left.high - right.low, least)
    products = [a * b for a in (left.low, left.high) for b in (right.low, right.high)]
    if any(math.isnan(product) for product in products):  # inf * 0
        return Interval(-math.inf, math.inf, 0.0)
    return Interval(min(products), max(products), left.least * right.least)


def _unary(function: str, operand: Interval) -> Interval:
    if function == "Negate":
        return Interval(-operand.high, -operand.low, operand.least)
    if operand.low >= 0:
        return operand
    if operand.high <= 0:
        return Interval(-operand.high, -operand.low, operand.least)
    return Interval(0, max(-operand.low, operand.high), operand.least)
