"""`to_dataframely`: a Pandera polars model as a Dataframely schema class, built once."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

import dataframely as dy
import polars as pl

from .._engine.severity import warn
from ._custom import run_pandera_check
from ._plan import Entry, SchemaPlan, Template, plan

_CACHE: dict[int, tuple[Any, type[dy.Schema]]] = {}
_LOCK = threading.Lock()


def to_dataframely(model: Any) -> type[dy.Schema]:
    """The Dataframely schema with the same verdicts, row by row, as a Pandera polars model.

    `model` is a `pandera.polars.DataFrameModel` subclass or a `pandera.polars.DataFrameSchema`.
    The translation happens once per model: the same model gives the same class.

    Raises:
        UnsupportedSchemaError: The model uses a feature Dataframely cannot honour; the
            message names each one, its column, and the way out.
    """
    with _LOCK:
        cached = _CACHE.get(id(model))
        if cached is None:
            cached = (model, build(plan(model)))  # the model is kept, so its id stays its own
            _CACHE[id(model)] = cached
    return cached[1]


def build(schema_plan: SchemaPlan) -> type[dy.Schema]:
    """The schema class a plan describes."""
    frame = schema_plan.frame if schema_plan.wrapped else {}
    namespace: dict[str, Any] = {
        "__module__": __name__.rpartition(".")[0],
        "__qualname__": schema_plan.class_name,
        "__doc__": schema_plan.doc,
    }
    for column in schema_plan.columns:
        extra: dict[str, Any] = {}
        if column.checks:
            extra["check"] = {e.name: _column_check(e, frame) for e in column.checks}
        if column.attribute != column.name:
            extra["alias"] = column.name
        if column.description:
            extra["description"] = column.description
        if column.metadata:
            extra["metadata"] = column.metadata
        namespace[column.attribute] = column.build(**extra)
    for rule in schema_plan.rules:
        namespace[rule.name] = dy.rule()(_rule(rule, frame))
    schema: type[dy.Schema] = type(schema_plan.class_name, (dy.Schema,), namespace)
    return warn(*schema_plan.warn)(schema) if schema_plan.warn else schema


def _column_check(entry: Entry, frame: Mapping[str, pl.DataType]) -> Callable[[pl.Expr], pl.Expr]:
    if isinstance(entry.body, Template):
        return _evaluate(entry.body, "lambda col: ")
    expr = run_pandera_check(entry.body.check, entry.body.key, frame)

    def check(_: pl.Expr) -> pl.Expr:
        return expr

    return _named(check, entry)


def _rule(entry: Entry, frame: Mapping[str, pl.DataType]) -> Callable[[Any], pl.Expr]:
    if isinstance(entry.body, Template):
        expr: pl.Expr = _evaluate(entry.body, "")
    else:
        expr = run_pandera_check(entry.body.check, entry.body.key, frame)

    def rule(_: Any) -> pl.Expr:
        return expr

    return _named(rule, entry)


def _evaluate(template: Template, prefix: str) -> Any:
    """Evaluate a template's text, the text the migrated source contains.

    The arguments are bound as names, never pasted into the text, so any value works.
    """
    names = {param: f"_{param}" for param in template.params}
    namespace = {"pl": pl, **{names[p]: value for p, value in template.params.items()}}
    return eval(prefix + template.render("col", names), namespace)


def _named(function: Any, entry: Entry) -> Any:
    function.__name__ = function.__qualname__ = entry.name
    function.__doc__ = entry.description
    return function
