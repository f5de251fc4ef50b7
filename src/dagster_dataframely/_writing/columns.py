"""Polars dtypes as Dataframely column types that accept exactly that dtype, as source text.

A column type pins the dtype down (time unit, time zone, precision and scale, categories,
inner types); a dtype Dataframely cannot pin down raises `DtypeError`. Every schema this
package writes (a migrated Pandera model, a schema inferred from a table or a dbt model)
declares its columns through here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import dataframely as dy
import polars as pl

from .literals import Literal, literal, string

_SIMPLE = {
    pl.Int8: "Int8",
    pl.Int16: "Int16",
    pl.Int32: "Int32",
    pl.Int64: "Int64",
    pl.UInt8: "UInt8",
    pl.UInt16: "UInt16",
    pl.UInt32: "UInt32",
    pl.UInt64: "UInt64",
    pl.Float32: "Float32",
    pl.Float64: "Float64",
    pl.String: "String",
    pl.Boolean: "Bool",
    pl.Binary: "Binary",
    pl.Date: "Date",
    pl.Time: "Time",
    pl.Categorical: "Categorical",
    pl.Object: "Object",
}
_FLOATS = ("Float32", "Float64")
#: The options of a nested (list element, array element, struct field) column: Pandera
#: checks only the nested dtype, never nulls or NaN inside.
_NESTED = {"nullable": True}
_NESTED_FLOAT = {"nullable": True, "allow_nan": True, "allow_inf": True}


class DtypeError(ValueError):
    """A Pandera dtype with no exact Dataframely column; the message says why."""


@dataclass(frozen=True)
class ColumnType:
    """A Dataframely column class and the arguments that fix its dtype."""

    kind: str  # the `dy` class name
    args: tuple[Any, ...] = ()  # positional: inner column types, shape, categories
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    @property
    def is_float(self) -> bool:
        return self.kind in _FLOATS

    def build(self, **options: Any) -> dy.Column:
        """The Dataframely column, with `options` (nullable, min, check, ...) added."""
        cls = getattr(dy, self.kind)
        column: dy.Column = cls(*(_build(a) for a in self.args), **{**self.kwargs, **options})
        return column

    def source(self, options: list[str]) -> tuple[str, list[str], frozenset[str]]:
        """`dy.<kind>`, its argument texts (dtype arguments first, then `options`) and imports."""
        texts: list[str] = []
        imports: set[str] = set()
        for arg in self.args:
            text, needed = _source(arg)
            texts.append(text)
            imports |= needed
        for name, value in self.kwargs.items():
            text, needed = _source(value)
            texts.append(f"{name}={text}")
            imports |= needed
        return f"dy.{self.kind}", texts + options, frozenset(imports)


def nested_options(column: ColumnType) -> dict[str, Any]:
    """Options that give a nested column no rules of its own."""
    return dict(_NESTED_FLOAT if column.is_float else _NESTED)


def polars_source(dtype: Any) -> Literal:
    """Source text of a polars dtype, such as `pl.Datetime("us", "UTC")`."""
    if isinstance(dtype, pl.Datetime):
        zone = f", {string(dtype.time_zone)}" if dtype.time_zone else ""
        return Literal(f'pl.Datetime("{dtype.time_unit}"{zone})', frozenset())
    if isinstance(dtype, pl.Duration):
        return Literal(f'pl.Duration("{dtype.time_unit}")', frozenset())
    if isinstance(dtype, pl.Decimal):
        return Literal(f"pl.Decimal({dtype.precision}, {dtype.scale})", frozenset())
    if isinstance(dtype, pl.Enum):
        return Literal(f"pl.Enum({literal(dtype.categories.to_list()).text})", frozenset())
    if isinstance(dtype, pl.List):
        inner = polars_source(dtype.inner)
        return Literal(f"pl.List({inner.text})", inner.imports)
    if isinstance(dtype, pl.Array):
        inner = polars_source(_innermost(dtype))
        return Literal(f"pl.Array({inner.text}, {dtype.shape!r})", inner.imports)
    if isinstance(dtype, pl.Struct):
        parts = [(f.name, polars_source(f.dtype)) for f in dtype.fields]
        text = ", ".join(f"{string(name)}: {lit.text}" for name, lit in parts)
        return Literal(f"pl.Struct({{{text}}})", frozenset().union(*(p.imports for _, p in parts)))
    return Literal(f"pl.{dtype.base_type().__name__}()", frozenset())


def polars_column_type(dtype: Any) -> ColumnType:
    """The Dataframely column type of a polars dtype (a class or an instance)."""
    if isinstance(dtype, type):  # a dtype class without parameters
        if dtype is pl.List:
            return ColumnType("List", (ColumnType("Any"),))
        if dtype in _SIMPLE:
            return ColumnType(_SIMPLE[dtype])
        if dtype not in (pl.Struct, pl.Array, pl.Enum, pl.Decimal, pl.Datetime, pl.Duration):
            raise DtypeError(f"Dataframely has no column type for {dtype.__name__}")
        raise DtypeError(
            f"pl.{dtype.__name__} without parameters accepts many dtypes; declare its "
            "parameters (fields, categories, shape)"
        )
    base = dtype.base_type()
    if base in _SIMPLE:
        return ColumnType(_SIMPLE[base])
    if isinstance(dtype, pl.Datetime):
        kwargs: dict[str, Any] = {"time_unit": dtype.time_unit}
        if dtype.time_zone is not None:
            kwargs["time_zone"] = dtype.time_zone
        return ColumnType("Datetime", (), kwargs)
    if isinstance(dtype, pl.Duration):
        return ColumnType("Duration", (), {"time_unit": dtype.time_unit})
    if isinstance(dtype, pl.Decimal):
        return ColumnType("Decimal", (), {"precision": dtype.precision, "scale": dtype.scale})
    if isinstance(dtype, pl.Enum):
        return ColumnType("Enum", (dtype.categories.to_list(),))
    if isinstance(dtype, pl.List):
        return ColumnType("List", (_nested(dtype.inner),))
    if isinstance(dtype, pl.Array):
        if isinstance(dtype.inner, pl.Array):
            raise DtypeError(
                "Pandera compares only the last dimension of a multi-dimensional pl.Array "
                "(it reads shape (2, 3) as (3, 3)); Dataframely compares the whole shape. "
                "Use a one-dimensional pl.Array, or pl.List"
            )
        return ColumnType("Array", (_nested(dtype.inner), tuple(dtype.shape)))
    if isinstance(dtype, pl.Struct):
        return ColumnType("Struct", ({f.name: _nested(f.dtype) for f in dtype.fields},))
    raise DtypeError(f"Dataframely has no column type for {dtype}")


def _nested(dtype: Any) -> ColumnType:
    inner = polars_column_type(dtype)
    return ColumnType(inner.kind, inner.args, {**inner.kwargs, **nested_options(inner)})


def _innermost(dtype: pl.Array) -> Any:
    inner = dtype.inner
    while isinstance(inner, pl.Array):
        inner = inner.inner
    return inner


def _build(arg: Any) -> Any:
    if isinstance(arg, ColumnType):
        return arg.build()
    if isinstance(arg, dict):
        return {name: _build(value) for name, value in arg.items()}
    return arg


def _source(arg: Any) -> tuple[str, frozenset[str]]:
    if isinstance(arg, ColumnType):
        func, texts, imports = arg.source([])
        return f"{func}({', '.join(texts)})", imports
    if isinstance(arg, dict):
        parts = [(string(name), _source(value)) for name, value in arg.items()]
        text = "{" + ", ".join(f"{name}: {value[0]}" for name, value in parts) + "}"
        return text, frozenset().union(*(value[1] for _, value in parts))
    lit = literal(arg)
    return lit.text, lit.imports
