"""Polars expressions of custom rules (`@dy.rule`, `check=`) translated to SQL where exact.

An expression is read from its serialized tree (`Expr.meta.serialize(format="json")`):
columns, literals, comparisons, `+ - *`, `-x`, `abs`, `& | ~`, `is_null`, `is_not_null`,
`is_between`, `is_in` and `str.len_bytes`. Arithmetic is translated where it cannot wrap in
polars nor overflow in the database (`arithmetic.py`), else `NotExact` says why. Anything else
(a division, a window, a cast, a UDF, a node this reader does not know, as a later polars may
write) makes the whole rule fall back to polars, so a rule is translated exactly or not at all.
`tests/test_sql_compile.py` pins the tree.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from typing import Any

import polars as pl
from sqlglot import exp

from . import arithmetic
from .dialects import Dialect
from .literals import literal

_COMPARISONS: dict[str, type[exp.Binary]] = {
    "Eq": exp.EQ,
    "NotEq": exp.NEQ,
    "Lt": exp.LT,
    "LtEq": exp.LTE,
    "Gt": exp.GT,
    "GtEq": exp.GTE,
}
_ARITHMETIC: dict[str, type[exp.Expr]] = {
    "Plus": exp.Add,
    "Minus": exp.Sub,
    "Multiply": exp.Mul,
}
_LOGIC: dict[str, type[exp.Expr]] = {"And": exp.And, "Or": exp.Or}
#: Column dtypes besides numbers that compare alike in polars and SQL.
_PLAIN = (pl.Boolean, pl.String, pl.Date)
_BETWEEN = {"Both": (exp.GTE, exp.LTE), "Left": (exp.GTE, exp.LT), "Right": (exp.GT, exp.LTE)}


class Untranslatable(Exception):
    """The expression has no SQL form this translator is sure of."""


#: A translated node: its SQL and its polars dtype (None for a literal polars types late).
Typed = tuple["exp.Expr", "pl.DataType | None"]


def translate(
    expr: pl.Expr, dtypes: Mapping[str, pl.DataType], dialect: Dialect
) -> exp.Expr | None:
    """The SQL predicate of the boolean `expr` over columns of `dtypes`, or None."""
    try:
        tree = json.loads(expr.meta.serialize(format="json"))
    except pl.exceptions.PolarsError:
        return None
    return translate_tree(tree, dtypes, dialect)


def translate_tree(
    tree: Any, dtypes: Mapping[str, pl.DataType], dialect: Dialect
) -> exp.Expr | None:
    """`translate` of an expression's serialized tree (as a query plan holds it)."""
    try:
        sql, dtype = _Reader(dtypes, dialect).node(tree)
    except (Untranslatable, KeyError, TypeError, ValueError, IndexError, pl.exceptions.PolarsError):
        return None
    return sql if dtype == pl.Boolean else None


class _Reader:
    def __init__(self, dtypes: Mapping[str, pl.DataType], dialect: Dialect) -> None:
        self.dtypes = dtypes
        self.dialect = dialect

    def node(self, tree: Any) -> Typed:
        if not isinstance(tree, dict) or len(tree) != 1:
            raise Untranslatable(tree)
        ((kind, body),) = tree.items()
        if kind == "Column":
            return self.column(body)
        if kind == "Literal":
            return self.literal(body)
        if kind == "BinaryExpr" and body["op"] in _ARITHMETIC:
            return self.arithmetic(tree, self.node(body["left"]), self.node(body["right"]))
        if kind == "BinaryExpr":
            return self.binary(body["op"], self.node(body["left"]), self.node(body["right"]))
        if kind == "Function":
            return self.function(body["function"], body["input"])
        raise Untranslatable(kind)

    def column(self, name: str) -> Typed:
        dtype = self.dtypes[name]
        plain = (dtype.is_numeric() and not dtype.is_decimal()) or dtype in _PLAIN
        if not plain:
            raise Untranslatable(name)  # decimals, temporal values with units and zones, nested
        if dtype.is_float() and not self.dialect.nan_is_largest:
            raise Untranslatable(name)  # comparisons with NaN differ from polars'
        return exp.column(name, quoted=True), dtype

    def literal(self, body: Mapping[str, Any]) -> Typed:
        if "Dyn" in body:
            ((kind, value),) = body["Dyn"].items()
            if kind == "Int":
                return exp.Literal.number(int(value)), None
            if kind == "Float" and isinstance(value, float):
                return literal(value, pl.Float64(), self.dialect.name) or _refuse(value), None
            raise Untranslatable(kind)
        ((kind, value),) = body["Scalar"].items()
        if kind == "String":
            return exp.Literal.string(str(value)), pl.String()
        if kind == "Boolean":
            return exp.Boolean(this=bool(value)), pl.Boolean()
        raise Untranslatable(kind)

    def binary(self, op: str, left: Typed, right: Typed) -> Typed:
        lsql, ltype = self.aligned(left, right)
        rsql, rtype = self.aligned(right, left)
        if op in _LOGIC:
            if ltype != pl.Boolean or rtype != pl.Boolean:
                raise Untranslatable(op)
            return _LOGIC[op](this=exp.paren(lsql), expression=exp.paren(rsql)), pl.Boolean()
        if op in _COMPARISONS:
            ordered = op not in ("Eq", "NotEq")
            if ordered and pl.String in (ltype, rtype) and not self.dialect.binary_string_order:
                raise Untranslatable(op)
            return _COMPARISONS[op](this=lsql, expression=rsql), pl.Boolean()
        raise Untranslatable(op)

    def arithmetic(self, tree: Any, *operands: Typed) -> Typed:
        """An arithmetic node over its translated `operands`, in the dtype polars gives it;
        integer operands are cast to `BIGINT`, which the proven interval fits."""
        # Float32 arithmetic rounds per step in polars; the database may widen first.
        if not all(t is None or (t.is_numeric() and t != pl.Float32) for _, t in operands):
            raise Untranslatable(tree)
        dtype = arithmetic.check(tree, self.dtypes, self.dialect)
        if dtype == pl.Float32:
            raise Untranslatable(tree)
        sqls = [_widened(sql) if dtype.is_integer() else sql for sql, _ in operands]
        ((kind, body),) = tree.items()
        if kind == "BinaryExpr":
            return exp.paren(_ARITHMETIC[body["op"]](this=sqls[0], expression=sqls[1])), dtype
        if body["function"] == "Negate":
            return exp.paren(exp.Neg(this=sqls[0])), dtype
        return exp.Abs(this=sqls[0]), dtype

    def aligned(self, typed: Typed, other: Typed | None = None) -> Typed:
        """A literal compared with a float32 column is a float32, as polars casts it."""
        sql, dtype = typed
        if dtype is None and other is not None and other[1] == pl.Float32:
            return exp.cast(sql, exp.DataType.build("FLOAT")), pl.Float32()
        return typed

    def function(self, function: Any, inputs: list[Any]) -> Typed:
        if function == {"StringExpr": "LenBytes"}:
            ((value, dtype),) = (self.node(item) for item in inputs)
            length = self.dialect.byte_length(value) if dtype == pl.String else None
            return length or _refuse(function), pl.UInt32()  # as polars types it
        if function in arithmetic.UNARY:
            return self.arithmetic(
                {"Function": {"input": inputs, "function": function}},
                *(self.node(item) for item in inputs),
            )
        boolean = function.get("Boolean") if isinstance(function, dict) else None
        if boolean in ("IsNull", "IsNotNull", "Not"):
            ((value, dtype),) = (self.operand(item, nullness=boolean != "Not") for item in inputs)
            if boolean == "Not":
                if dtype != pl.Boolean:
                    raise Untranslatable(boolean)
                return exp.Not(this=exp.paren(value)), pl.Boolean()
            null = exp.Is(this=value, expression=exp.Null())
            return (null if boolean == "IsNull" else exp.Not(this=null)), pl.Boolean()
        if isinstance(boolean, dict) and "IsBetween" in boolean:
            subject, low, high = (self.node(item) for item in inputs)
            above, below = _BETWEEN[boolean["IsBetween"]["closed"]]
            return self.binary(
                "And", self.compare(above, subject, low), self.compare(below, subject, high)
            )
        if isinstance(boolean, dict) and boolean.get("IsIn") == {"nulls_equal": False}:
            value, listed = inputs
            sql, dtype = self.node(value)
            values = _listed(listed)
            if dtype is None or not values:
                raise Untranslatable("is_in")
            items = [literal(v, dtype, self.dialect.name) for v in values]
            if any(item is None for item in items):
                raise Untranslatable("is_in")
            return exp.In(this=sql, expressions=items), pl.Boolean()
        raise Untranslatable(function)

    def operand(self, tree: Any, *, nullness: bool) -> Typed:
        """`tree` translated; for a null test, a column of any dtype (nulls are nulls)."""
        if nullness and isinstance(tree, dict) and set(tree) == {"Column"}:
            name = tree["Column"]
            return exp.column(name, quoted=True), self.dtypes[name]
        return self.node(tree)

    def compare(self, op: type[exp.Binary], left: Typed, right: Typed) -> Typed:
        name = next(key for key, value in _COMPARISONS.items() if value is op)
        return self.binary(name, left, right)


def _listed(tree: Any) -> list[Any]:
    """The values of an `is_in` list literal (an Arrow IPC stream of one column)."""
    data = bytes(tree["Literal"]["Scalar"]["List"])
    series = pl.read_ipc_stream(io.BytesIO(data)).to_series()
    if series.null_count():
        raise Untranslatable("is_in with null")
    return series.to_list()


def _widened(sql: exp.Expr) -> exp.Expr:
    """An integer operand as a `BIGINT`: a narrower column type would overflow (PostgreSQL's
    `smallint + smallint`, DuckDB's `INT16` sum) where polars' wider result does not."""
    if (
        sql.is_number
        or isinstance(sql, exp.Abs)
        or (isinstance(sql, exp.Paren) and isinstance(sql.this, (*_ARITHMETIC.values(), exp.Neg)))
    ):
        return sql  # a literal, or already computed in BIGINT
    return exp.cast(sql, exp.DataType.build("BIGINT"))


def _refuse(what: Any) -> exp.Expr:
    raise Untranslatable(what)
