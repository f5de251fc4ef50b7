"""Dataframely's column rules compiled to SQL predicates, from the catalogue `Rule` alone.

A predicate is what the rule's polars expression computes, row by row: `TRUE` passes, `FALSE`
fails, `NULL` passes (as `Schema.filter` has it). A rule with no exact form here (a zoned
datetime bound, a decimal, `resolution`, a list element's rule, a custom rule the
translator refuses) compiles to None and is left to polars; a regex the database's engine
reads otherwise raises `NotExact` naming the construct.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl
from sqlglot import exp

from ..catalogue import Rule
from .dialects import Dialect
from .expressions import translate
from .literals import literal

_BOUNDS: dict[str, type[exp.Expr]] = {
    "min": exp.GTE,
    "min_exclusive": exp.GT,
    "max": exp.LTE,
    "max_exclusive": exp.LT,
}
#: Key dtypes whose SQL grouping equals polars' (`is_unique` on them): not floats, whose
#: `-0.0`/`0.0` and NaN payloads engines group differently, nor nested or zoned values.
_GROUPABLE = (pl.Boolean, pl.String, pl.Date)


def predicate(rule: Rule, dtypes: Mapping[str, pl.DataType], dialect: Dialect) -> exp.Expr | None:
    """The SQL predicate of the row-wise `rule`, from its kind and constraint value (a custom
    rule's from its expression), or None to evaluate it in polars."""
    column, suffix = rule.column, rule.kind
    if column is None or suffix in ("check", "cast") or suffix.startswith("check__"):
        return translate(rule.expr, dtypes, dialect)
    dtype = dtypes[column]
    value = exp.column(column, quoted=True)
    if suffix == "nullability":
        return exp.Not(this=exp.Is(this=value, expression=exp.Null()))
    if suffix in _BOUNDS:
        bound = literal(rule.value, dtype, dialect.name)
        if bound is None:
            return None
        compared = _BOUNDS[suffix](this=value, expression=bound)
        if not dtype.is_float() or dialect.nan_is_largest:
            return compared
        # Where NaN compares false, give it polars' verdict: above every bound.
        nan = dialect.is_nan(value)
        return (
            exp.or_(nan, compared)
            if suffix.startswith("min")
            else exp.and_(exp.not_(nan), compared)
        )
    if suffix == "nan" and dtype.is_float():
        return exp.Not(this=dialect.is_nan(value))
    if suffix == "inf" and dtype.is_float():
        return exp.Not(this=dialect.is_infinite(value))
    if suffix in ("min_length", "max_length") and dtype == pl.String:
        length = dialect.byte_length(value)
        compare = exp.GTE if suffix == "min_length" else exp.LTE
        limit = rule.value
        return (
            None if length is None else compare(this=length, expression=exp.Literal.number(limit))
        )
    if suffix == "regex" and dtype == pl.String:
        return dialect.contains(value, rule.value)
    if suffix == "is_in":
        return _is_in(value, list(rule.value), dtype, dialect.name)
    return None


def _is_in(
    value: exp.Expr, values: list[object], dtype: pl.DataType, dialect: str
) -> exp.Expr | None:
    if not values or not (dtype == pl.String or dtype.is_integer()):
        return None  # an Enum or Categorical compares by category, an empty list has no SQL
    items = [literal(item, dtype, dialect) for item in values]
    if any(item is None for item in items):
        return None
    return exp.In(this=value, expressions=items)


def groupable(rule: Rule, dtypes: Mapping[str, pl.DataType]) -> bool:
    """Whether a `unique` or primary-key rule can be counted by SQL grouping exactly."""
    keys = rule.distinct_over
    return keys is not None and all(_groupable(dtypes[key]) for key in keys)


def _groupable(dtype: pl.DataType) -> bool:
    if isinstance(dtype, pl.Datetime):
        return dtype.time_zone is None
    return dtype.is_integer() or dtype in _GROUPABLE
