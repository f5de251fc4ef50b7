"""`to_dataframely`: a Pandera polars model as a Dataframely schema class, built once."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

import dataframely as dy
import polars as pl
from pandera.api.checks import Check
from pandera.api.polars.components import Column
from pandera.api.polars.container import DataFrameSchema
from pandera.api.polars.model import DataFrameModel

from .._engine.severity import warn
from ._custom import run_pandera_check, table_verdicts
from ._plan import Entry, SchemaPlan, Template, plan

#: id(model) -> (model, its content's fingerprint, the objects the fingerprint names by id,
#: the translation). Model and objects are kept so that no id is reused while cached.
_CACHE: dict[int, tuple[Any, Any, list[Any], type[dy.Schema]]] = {}
_LOCK = threading.Lock()


def to_dataframely(model: Any) -> type[dy.Schema]:
    """The Dataframely schema with the same verdicts, row by row, as a Pandera polars model.

    `model` is a `pandera.polars.DataFrameModel` subclass or a `pandera.polars.DataFrameSchema`.
    The translation happens once per model and content: the same model gives the same class
    until it is changed in place (`schema.strict = True`, a check appended to a column),
    which gives a new translation.

    Raises:
        UnsupportedSchemaError: The model uses a feature Dataframely cannot honour; the
            message names each one, its column, and the way out.
    """
    kept: list[Any] = []
    content = _fingerprint(_content(model), kept)
    with _LOCK:
        cached = _CACHE.get(id(model))
        if cached is not None and cached[1] == content:
            return cached[3]
        schema = build(plan(model))
        _CACHE[id(model)] = (model, content, kept, schema)
    return schema


def _content(model: Any) -> Any:
    """The Pandera schema a translation of `model` reads: `model` itself, or the one behind
    a model class (None where `plan` will refuse it)."""
    if isinstance(model, DataFrameSchema):
        return model
    if isinstance(model, type) and issubclass(model, DataFrameModel):
        try:
            return model.to_schema()
        except Exception:  # a model Pandera cannot build: `plan` says why
            return None
    return None


def _fingerprint(value: Any, kept: list[Any]) -> Any:
    """`value` as nested tuples that compare equal while it is unchanged: a schema, column or
    check by its attributes, containers by their items, anything else (functions, dtypes,
    Series) by identity, kept alive in `kept`. Pandera's own `==` can raise on a Series."""
    if value is None or isinstance(value, (str, int, bool)):
        return value
    if isinstance(value, float):
        return repr(value)  # NaN equals itself
    if isinstance(value, (list, tuple, set, frozenset)):
        return type(value).__name__, tuple(_fingerprint(item, kept) for item in value)
    if isinstance(value, dict):
        return "dict", tuple((repr(k), _fingerprint(v, kept)) for k, v in value.items())
    if isinstance(value, (DataFrameSchema, Column, Check)):
        return type(value).__qualname__, _fingerprint(vars(value), kept)
    kept.append(value)
    return type(value).__qualname__, id(value)


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
    # Pandera fails an empty table on a check whose verdict is one False (`pl.len() > 0`).
    if schema_plan.table_verdicts:
        schema = table_verdicts(*schema_plan.table_verdicts)(schema)
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
