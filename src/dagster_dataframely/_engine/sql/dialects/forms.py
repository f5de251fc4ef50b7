"""SQL forms more than one dialect writes the same way."""

from __future__ import annotations

from sqlglot import exp


def count_case(condition: exp.Expr) -> exp.Expr:
    """`COUNT(CASE WHEN condition THEN 1 END)`: `count_where` in every SQL dialect."""
    return exp.Count(this=exp.Case(ifs=[exp.If(this=condition, true=exp.Literal.number(1))]))


def equal_or_both_null(left: exp.Expr, right: exp.Expr) -> exp.Expr:
    """`left = right OR (left IS NULL AND right IS NULL)`: `IS NOT DISTINCT FROM` in SQL
    that may lack it."""
    both_null = exp.and_(
        exp.Is(this=left, expression=exp.Null()), exp.Is(this=right.copy(), expression=exp.Null())
    )
    return exp.paren(exp.or_(exp.EQ(this=left.copy(), expression=right), exp.paren(both_null)))


def float_literal(text: str) -> exp.Expr:
    """A `DOUBLE` from its text (`'NaN'`, `'inf'`), which no dialect writes as a number."""
    return exp.cast(exp.Literal.string(text), exp.DataType.build("DOUBLE"))


def equals_nan(value: exp.Expr) -> exp.Expr:
    """`value` is NaN, where NaN equals itself (PostgreSQL, Snowflake): NULL for NULL."""
    return exp.EQ(this=value, expression=float_literal("NaN"))


def infinite(value: exp.Expr) -> exp.Expr:
    """`value` is +inf or -inf, where `IN` compares floats by value (NaN is neither, NULL
    is NULL): PostgreSQL and Snowflake, which have no `isinf`, and BigQuery."""
    return exp.In(this=value, expressions=[float_literal("inf"), float_literal("-inf")])
